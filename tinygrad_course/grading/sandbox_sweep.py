"""Cleaning up after a child: end every process of the sandbox user, remove its System V IPC
objects and the files it left where it can write (see :mod:`tinygrad_course.grading.sandbox`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from .sandbox_config import SandboxConfig

__all__ = ["sweep", "kill_descendants"]


def _processes_of(uid: int) -> list[int]:
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError):
                if os.stat(f"/proc/{name}").st_uid == uid:
                    pids.append(int(name))
    return pids


def _kill_user(uid: int) -> None:
    for _ in range(50):  # a fork loop may spawn while we kill: repeat until none is left
        pids = _processes_of(uid)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def _remove_ipc(uid: int) -> None:
    ipcrm = shutil.which("ipcrm")
    for kind, flag in (("shm", "-m"), ("msg", "-q"), ("sem", "-s")):
        path = Path(f"/proc/sysvipc/{kind}")
        if not ipcrm or not path.is_file():
            continue
        lines = path.read_text().splitlines()
        if not lines:
            continue
        header = lines[0].split()
        if "uid" not in header:
            continue
        col, idcol = header.index("uid"), header.index("shmid" if kind == "shm" else (
            "msqid" if kind == "msg" else "semid"))  # fmt: skip
        for line in lines[1:]:
            cells = line.split()
            if len(cells) > max(col, idcol) and cells[col] == str(uid):
                subprocess.run([ipcrm, flag, cells[idcol]], capture_output=True, timeout=10)


def _remove_files(uid: int, folders) -> None:
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if st.st_uid == uid:
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)
            elif entry.is_dir(follow_symlinks=False) and st.st_mode & 0o002:
                _remove_files(uid, [entry.path])  # someone else's world-writable folder


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process (from /proc)."""
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            # the command name may hold spaces and parentheses: the fields follow the last ")"
            out[int(name)] = int(stat[stat.rindex(")") + 2 :].split()[1])
    return out


def kill_descendants() -> None:
    """Kill every process below this one, and reap them.

    The autograder makes itself a subreaper, so a process that a child started and left
    behind (a daemon that means to rewrite the results later) is re-parented here and ends
    now, without root too."""
    me = os.getpid()
    for _ in range(50):
        parents = _parents()
        below, frontier = set(), {me}
        while frontier:
            frontier = {pid for pid, parent in parents.items() if parent in frontier} - below
            below |= frontier
        if not below:
            return
        for pid in below:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
        for pid in below:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)


def sweep(config: SandboxConfig) -> None:
    """End every process of the sandbox user and delete what it left behind (root only)."""
    if not config.user or config.uid is None or os.geteuid() != 0:
        return
    _kill_user(config.uid)
    _remove_ipc(config.uid)
    _remove_files(config.uid, config.writable)
