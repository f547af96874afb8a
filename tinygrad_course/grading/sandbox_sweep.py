"""Cleaning up after a child: end every process of the sandbox user, remove its System V IPC
objects and the files it left where it can write (see :mod:`tinygrad_course.grading.sandbox`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from .sandbox_config import SandboxConfig

__all__ = ["sweep", "kill_descendants", "remove_tree"]


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
                    remove_tree(entry.path)
                else:
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)
            elif entry.is_dir(follow_symlinks=False) and st.st_mode & 0o002:
                _remove_files(uid, [entry.path])  # someone else's world-writable folder


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def remove_tree(path) -> bool:
    """Delete the folder ``path`` and everything below it, however deep; never raise.

    ``shutil.rmtree`` recurses once per level (a RecursionError past about 1000 levels, which
    ``ignore_errors`` does not catch) and a full path past 4096 bytes cannot even be named.
    This walks down and back up holding one open folder at a time, naming each entry
    relative to it, so neither the depth nor the length of the path matters. Links are
    never followed. Call it when no process can still change the tree (after the sweep
    killed the sandbox user's). Returns whether ``path`` is gone."""
    path = os.fspath(path)
    try:
        fd = os.open(path, _DIR_FLAGS)
    except FileNotFoundError:
        return True
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(path)  # a link or a file where a folder was expected
        return not os.path.lexists(path)
    names: list[str] = []  # the folders between ``path`` and ``fd``
    ids = [_ident(fd)]  # (device, inode) of each of them, to check the way back up
    try:
        while True:
            below = None
            with os.scandir(fd) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        below = entry.name
                        break
                    with contextlib.suppress(OSError):
                        os.unlink(entry.name, dir_fd=fd)
            if below is not None:
                try:
                    child = os.open(below, _DIR_FLAGS, dir_fd=fd)
                except OSError:  # not a folder to walk into: remove it as it is, or give up
                    try:
                        os.rmdir(below, dir_fd=fd)
                    except OSError:
                        return False
                    continue
                os.close(fd)
                fd = child
                names.append(below)
                ids.append(_ident(fd))
                continue
            if not names:
                break
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            ids.pop()
            if _ident(fd) != ids[-1]:  # the tree moved under us: stop rather than stray
                return False
            try:
                os.rmdir(names.pop(), dir_fd=fd)
            except OSError:
                return False  # not empty after all (a file we could not remove)
    except OSError:
        return False
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.rmdir(path)
    return not os.path.lexists(path)


def _ident(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


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
    # each step on its own: whatever one of them meets (a tree it cannot remove, a tool that
    # hangs) must not keep the others from running, nor fail the next submission graded
    for step, args in ((_kill_user, ()), (_remove_ipc, ()), (_remove_files, (config.writable,))):
        try:
            step(config.uid, *args)
        except Exception as e:  # noqa: BLE001 - reported, never raised into a bystander's grade
            print(f"tgedu sweep: {step.__name__} failed: {type(e).__name__}: {e}",
                  file=sys.stderr)  # fmt: skip
