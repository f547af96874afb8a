"""How sandboxed children are started: resource limits, the user, the network, the folders
a child may write to, the files it runs and its environment
(see :mod:`tinygrad_course.grading.sandbox`)."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from . import kernel_state
from .sandbox_users import DEFAULT_USER, SandboxError, ensure_user

__all__ = ["Limits", "SandboxConfig", "sandbox_config", "writable_folders", "runtime_files"]

_PATH = "/usr/local/bin:/usr/bin:/bin"
_PASS_ENV = ("CUDA_VISIBLE_DEVICES", "CUDA_PATH", "CUDA_HOME", "LD_LIBRARY_PATH")
_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/var/lock", "/dev/mqueue")
_SCAN = ("/var", "/run", "/dev", "/srv", "/opt", "/home", "/mnt", "/media", "/usr/local")
_SCAN_DEPTH = 3  # levels below each of _SCAN where a world-writable folder is looked for



@dataclass(frozen=True)
class Limits:
    """Resource limits of one child (each a ``setrlimit`` value; None leaves it alone)."""

    cpu_seconds: int | None = 120
    memory_bytes: int | None = 4 << 30
    processes: int | None = 64  # per user: counts every process of the sandbox user
    file_bytes: int | None = 32 << 20
    open_files: int | None = 256

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class SandboxConfig:
    """How children are started.

    Attributes:
        python: the interpreter the children run (it must be readable by the sandbox user).
        user: the sandbox user (None: run as this process's user, limits only).
        limits: resource limits of each child.
        timeout: seconds a call may take, by default.
        network: ``"isolated"`` when children get an empty network namespace.
        writable: folders the sandbox user can write to, cleaned by :func:`sweep`.
    """

    python: str
    user: str | None = None
    limits: Limits = field(default_factory=Limits)
    timeout: float = 30.0
    network: str = "shared"
    writable: tuple = _WRITABLE
    uid: int | None = None
    gid: int | None = None
    unshare: tuple = ()  # options of ``unshare`` for each child (kernel_state.namespaces)

    @property
    def mode(self) -> str:
        return "user" if self.user else "rlimits"

    def describe(self) -> str:
        if self.user:
            who = f"as user {self.user} (uid {self.uid}), network {self.network}"
            who += ", IPC " + ("isolated" if "--ipc" in self.unshare else "shared")
            private = "--mount" in self.unshare
            who += ", other processes " + ("hidden" if private else "visible")
            who += ", temporary folders " + ("private" if private else "shared")
        else:
            who = (
                "as the grader's own user: limits and timeouts only, no file isolation "
                "(run as root to drop privileges)"
            )
        lim = ", ".join(f"{k}={v}" for k, v in self.limits.as_dict().items() if v is not None)
        return (
            f"sandbox: {self.python} {who}; limits {lim}; {self.timeout:g} s per call; "
            "keyrings and message queues blocked (seccomp)"
        )


def sandbox_config(python: str, user: str | None = DEFAULT_USER, mode: str = "auto",
                   limits: Limits | None = None, timeout: float = 30.0,
                   writable=None) -> SandboxConfig:  # fmt: skip
    """A :class:`SandboxConfig` for this machine.

    Args:
        python: the children's interpreter.
        user: the sandbox user (created when missing and we are root).
        mode: ``"auto"`` (a separate user when root, limits only otherwise), ``"user"``
            (require the separate user) or ``"rlimits"`` (limits only, even as root).
        limits: resource limits (defaults: :class:`Limits`).
        timeout: seconds per call.
        writable: folders the sandbox user may write to, which the sweep clears (default:
            :func:`writable_folders`).
    """
    if mode not in ("auto", "user", "rlimits"):
        raise ValueError(f"sandbox mode must be auto, user or rlimits, not {mode!r}")
    root = os.geteuid() == 0
    if mode == "user" and not root:
        raise SandboxError("dropping to a sandbox user needs root")
    limits = limits or Limits()
    writable = tuple(writable) if writable is not None else writable_folders()
    if mode == "rlimits" or not root or not user:
        # NOTE: a per-user process limit would count the grader's own processes here
        limits = Limits(**{**limits.as_dict(), "processes": None})
        return SandboxConfig(python, None, limits, timeout, "shared", writable)
    uid, gid = ensure_user(user)
    flags = tuple(kernel_state.namespaces())
    network = "isolated" if "--net" in flags else "shared"
    return SandboxConfig(python, user, limits, timeout, network, writable, uid, gid, flags)


def writable_folders() -> tuple[str, ...]:
    """Folders any user may write to: the usual temporary ones, and every world-writable
    folder up to three levels below the system's top folders (``/var/crash`` and the like).

    A submission could leave a file there for a later child (another task's) to find; the
    sweep clears these."""
    found = list(_WRITABLE)
    for top in _SCAN:
        base = top.count(os.sep)
        for folder, dirs, _files in os.walk(top):  # never follows links
            if folder.count(os.sep) - base >= _SCAN_DEPTH:
                dirs[:] = []
            with contextlib.suppress(OSError):
                if os.lstat(folder).st_mode & 0o002 and folder not in found:
                    found.append(folder)
                    dirs[:] = []  # the sweep walks into it
    return tuple(found)


def runtime_files() -> dict[str, bytes]:
    """The files the child runs (``child.py`` and the modules it imports), by name."""
    here = Path(__file__).resolve().parent
    names = ("child.py", "wire.py", "seccomp.py", "kernel_state.py")
    return {name: (here / name).read_bytes() for name in names}


def _env(scratch: Path, private_tmp: bool = False) -> dict:
    """The child's environment. ``private_tmp``: its /tmp is a tmpfs of its own (a mount
    namespace, :data:`kernel_state.HIDE_PROCESSES`), so temporary files go there; else into
    its scratch folder, which no other user can enter."""
    env = {k: os.environ[k] for k in _PASS_ENV if k in os.environ}
    one = "1"
    tmp = "/tmp" if private_tmp else str(scratch)
    env.update(
        PATH=_PATH, HOME=str(scratch), TMPDIR=tmp, LANG="C.UTF-8", LC_ALL="C.UTF-8",
        OMP_NUM_THREADS=one, OPENBLAS_NUM_THREADS=one, MKL_NUM_THREADS=one,
        NUMEXPR_NUM_THREADS=one, PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE=one,
        PYTHONIOENCODING="utf-8", MPLBACKEND="Agg",
    )  # fmt: skip
    return env
