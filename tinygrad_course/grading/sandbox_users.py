"""The sandbox user: the unprivileged account children run as when the grader is root
(see :mod:`tinygrad_course.grading.sandbox`)."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess

__all__ = ["DEFAULT_USER", "SandboxError", "ensure_user"]

DEFAULT_USER = "tgsandbox"


class SandboxError(RuntimeError):
    """The sandbox cannot be set up (say, no sandbox user while running as root)."""


def ensure_user(name: str = DEFAULT_USER) -> tuple[int, int]:
    """Create the sandbox user if it does not exist (root only); return (uid, gid).

    A system user with its own group, no home folder and no login shell."""
    try:
        entry = pwd.getpwnam(name)
        return entry.pw_uid, entry.pw_gid
    except KeyError:
        pass
    if os.geteuid() != 0:
        raise SandboxError(f"there is no user {name!r}, and only root can create it")
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    done = subprocess.run(
        [useradd, "--system", "--no-create-home", "--home-dir", "/nonexistent",
         "--shell", "/usr/sbin/nologin", "--user-group", name],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    if done.returncode not in (0, 9):  # 9: it exists (made meanwhile by another grader)
        raise SandboxError(f"could not create the sandbox user {name!r}: {done.stderr.strip()}")
    entry = pwd.getpwnam(name)
    return entry.pw_uid, entry.pw_gid
