"""Kernel state a sandbox user can leave behind, and how each kind is closed between children.

A sandboxed child runs as the sandbox user; every child of a submission (one per set of
tasks), and every submission a ``grade-batch`` slot grades, runs as the same user. Whatever
the kernel keeps for that user beyond the life of one process is a channel from one child to
the next: a child that holds another task's reference code could hand it to the child that
grades that task, or one student's code to the next student's. :data:`OBJECTS` lists every
kind, and how it is closed; ``tests/grading/test_kernel_state.py`` has one child leave each
kind and a later child look for it.

This file is also copied next to ``child.py`` and imported there before any submitted code:
it imports nothing from the package.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import shutil
import subprocess

__all__ = ["OBJECTS", "reset_keyrings", "namespaces", "HIDE_PROCESSES", "private_folders",
           "TEMP_BYTES"]  # fmt: skip

# kind -> how it is closed (the instructor guide's threat model repeats this table)
OBJECTS = {
    "keyrings": "blocked: add_key, keyctl and request_key fail with EPERM (seccomp); and each "
    "child, before it imports anything, joins a fresh session keyring and clears the user's "
    "keyrings (user, user-session, persistent)",
    "System V IPC": "a private IPC namespace per child where the kernel allows it (it dies with "
    "the child); and the sweep removes every segment, queue and semaphore set of the user",
    "POSIX message queues": "blocked: mq_open fails with EPERM (seccomp); a private IPC "
    "namespace where the kernel allows it",
    "POSIX shared memory and semaphores": "files in /dev/shm: a tmpfs of the child's own where "
    "the kernel allows a mount namespace (it dies with the child); the sweep deletes them",
    "files in world-writable folders": "each child gets a fresh tmpfs over /tmp, /var/tmp, "
    "/dev/shm and every other world-writable folder in its mount namespace, where the kernel "
    "allows one: a child of another slot, running at the same time, has its own; and the sweep "
    "deletes what the user owns in those folders and every world-writable folder found below "
    "the system's top folders",
    "processes": "the sweep kills every process of the user after each child; a process "
    "started with setsid or double-forked is found by its uid",
    "other processes' /proc entries (command lines, environments, folders, open files of the "
    "grader and of other slots' children)": "each child gets a mount namespace with its own "
    "/proc mounted hidepid=2: it sees its own processes only",
    "pending signals": "belong to a process: they die with it (the sweep), and a child "
    "cannot signal processes of other users (the grader's)",
    "timers (alarm, setitimer, POSIX timers, timerfd)": "belong to a process: die with it",
    "inotify and fanotify watches": "belong to an open file: die with the process (fanotify "
    "needs CAP_SYS_ADMIN, which the child never has)",
    "abstract Unix sockets": "belong to an open socket: die with the process; in a private "
    "network namespace where the kernel allows it",
    "network ports": "die with the process; a private network namespace where allowed",
    "cgroups": "the user cannot create or write any (cgroupfs is root's); the child's "
    "no_new_privs keeps it from gaining that through a setuid program",
    "file locks and leases, memfd, eventfd, pidfd": "belong to open files: die with the process",
    "at and cron jobs": "need the setuid/setgid crontab or at, which no_new_privs makes "
    "powerless (and the user has no home or shell)",
    "the page cache": "before each child the grader drops the cached pages of the code the "
    "child reads (interpreter, standard library, numpy, working copy): page_cache.evict",
    "sparse files and file flags": "each child writes its stray output to a nameless file of "
    "its own (O_TMPFILE), never to a file another child shares",
    "deep folder trees": "the sweep removes any tree one open folder at a time "
    "(sandbox_sweep.remove_tree), however deep or long its paths",
    "OOM scores and memory pressure": "the grader sets each child's oom_score_adj to 1000 (a "
    "floor with CAP_SYS_RESOURCE) and gives each child its own memory cgroup where it can",
}

_KEYCTL = {"x86_64": 250, "aarch64": 219}
_JOIN_SESSION_KEYRING, _CLEAR, _GET_PERSISTENT = 1, 7, 22
_SESSION, _USER, _USER_SESSION = -3, -4, -5


def reset_keyrings() -> list[str]:
    """Give this process a fresh session keyring and empty its user's keyrings.

    Run by each child as the sandbox user, before the seccomp filter takes ``keyctl`` away:
    whatever an earlier process of the user stored (the filter blocks that, but a process
    started before the filter existed, or another program run as the user, could) is gone.
    Returns the steps that failed (a kernel or container without keyrings: nothing to
    clear)."""
    number = _KEYCTL.get(platform.machine())
    if number is None:
        return ["keyctl: unknown architecture"]
    libc = ctypes.CDLL(None, use_errno=True)
    keyctl = libc.syscall
    keyctl.restype = ctypes.c_long
    failed = []

    def call(name, *args):
        r = keyctl(ctypes.c_long(number), *(ctypes.c_long(a) for a in args))
        if r < 0:
            failed.append(f"{name}: {os.strerror(ctypes.get_errno())}")
        return r

    call("join session keyring", _JOIN_SESSION_KEYRING, 0)
    call("clear user keyring", _CLEAR, _USER)
    call("clear user session keyring", _CLEAR, _USER_SESSION)
    persistent = keyctl(ctypes.c_long(number), ctypes.c_long(_GET_PERSISTENT), ctypes.c_long(-1),
                        ctypes.c_long(_SESSION))  # fmt: skip
    if persistent > 0:  # kernels without persistent keyrings say EOPNOTSUPP: nothing to clear
        call("clear persistent keyring", _CLEAR, persistent)
    return failed


_UNSHARE: dict[str, bool] = {}
# Run (by ``sh -c``) inside the child's own mount namespace, as root, before the drop to the
# sandbox user: a /proc of its own that shows a user only its own processes, then a fresh
# tmpfs over each world-writable folder, then the child. Arguments: the tmpfs size, a staging
# folder (empty, root's), then groups "+FOLDER PATH...": a tmpfs is mounted on the staging
# folder, each PATH (a folder below FOLDER the child needs: its working copy, its scratch
# folder, the interpreter's environment) is bound into it at the same place, and the whole is
# moved onto FOLDER; "--" ends the groups and the child's command follows. The staging folder
# lies in at most one FOLDER, which comes last (see :func:`private_folders`).
# If a mount fails the child does not start (a /proc showing the grader's command line, or a
# /tmp shared with the other slot's child, is a leak, not a fallback).
HIDE_PROCESSES = r"""mount -t proc -o hidepid=2,nosuid,nodev,noexec proc /proc || exit 126
size=$1 stage=$2 dest=
shift 2
umask 022
place() {
  if [ -n "$dest" ]; then mount --move "$stage" "$dest" || exit 126; fi
}
while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
  case $1 in
    +*) place
        dest=${1#+}
        mount -t tmpfs -o "size=$size,nr_inodes=65536,mode=1777,nosuid,nodev" tgedu-tmp \
          "$stage" || exit 126 ;;
    *) mkdir -p "$stage${1#"$dest"}" && mount --bind "$1" "$stage${1#"$dest"}" || exit 126 ;;
  esac
  shift
done
place
shift
cd "$(pwd -P)" || exit 126  # the folder it was started in, as the new mounts show it
umask 077
exec "$@"
"""
TEMP_BYTES = 256 << 20  # the size of each private tmpfs (its pages count as the child's memory)


def private_folders(folders, needed, stage) -> list[str]:
    """The arguments of :data:`HIDE_PROCESSES` that give a child a fresh tmpfs over each of
    ``folders`` that is a real folder here, with each of ``needed`` that lies below one
    bound back at the same place (the grader's working area may live in /tmp).

    Links (``/var/lock`` to ``/run/lock``) and folders below another of ``folders`` are
    covered once; the folder holding ``stage`` goes last, while the stage is still reachable.
    """
    real = []
    for folder in folders:
        if os.path.isdir(folder) and not os.path.islink(folder):
            path = os.path.realpath(folder)
            if path not in real:
                real.append(path)
    real = [f for f in real if not any(_below(f, other) for other in real if other != f)]
    stage = os.path.realpath(stage)
    real.sort(key=lambda f: _below(stage, f))
    paths = sorted({os.path.realpath(p) for p in needed if os.path.isdir(p)})
    paths = [p for p in paths if not any(_below(p, q) for q in paths if q != p)]
    args = [str(TEMP_BYTES), stage]
    for folder in real:
        args += ["+" + folder, *(p for p in paths if _below(p, folder))]
    return [*args, "--"]


def _below(path: str, folder: str) -> bool:
    return path != folder and path.startswith(folder.rstrip("/") + "/")


def _per_mount_proc_options() -> bool:
    """Whether each mount of /proc has options of its own (Linux 5.8): on older kernels a
    second mount shares the first one's options, so hidepid would change the host's /proc."""
    try:
        major, minor = (int(p) for p in platform.release().split(".")[:2])
    except ValueError:
        return False
    return (major, minor) >= (5, 8)


def namespaces() -> list[str]:
    """The ``unshare`` options that work here for a child: ``--net`` (network ports, abstract
    Unix sockets), ``--ipc`` (System V IPC, POSIX message queues) and ``--mount`` (a /proc
    mounted with ``hidepid=2`` and private temporary folders, :data:`HIDE_PROCESSES`). Root
    with CAP_SYS_ADMIN only (Docker's default capabilities lack it)."""
    unshare, sh = shutil.which("unshare"), shutil.which("sh")
    if not unshare or os.geteuid() != 0:
        return []
    trials = {"--net": ["true"], "--ipc": ["true"]}
    if sh and shutil.which("mount") and _per_mount_proc_options():
        trials["--mount"] = [sh, "-c", HIDE_PROCESSES, "sh"]
    import tempfile  # noqa: PLC0415 - not at the top: the child imports this file first thing

    out = []
    for flag, argv in trials.items():
        if flag not in _UNSHARE:
            ok = False
            with contextlib.suppress(OSError, subprocess.SubprocessError), \
                    tempfile.TemporaryDirectory(prefix="tgedu-ns-") as base:  # fmt: skip
                if flag == "--mount":  # the whole of it: /proc, a tmpfs, a bind, a move
                    for name in ("stage", "folder/kept"):
                        os.makedirs(os.path.join(base, name))
                    argv = [*argv, *private_folders([os.path.join(base, "folder")],
                            [os.path.join(base, "folder/kept")], os.path.join(base, "stage")),
                            "test", "-d", os.path.join(base, "folder/kept")]  # fmt: skip
                done = subprocess.run([unshare, flag, "--", *argv], capture_output=True,
                                      timeout=20)  # fmt: skip
                ok = done.returncode == 0
            _UNSHARE[flag] = ok
        if _UNSHARE[flag]:
            out.append(flag)
    return out
