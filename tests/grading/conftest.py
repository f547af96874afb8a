"""Sandboxes for the grading tests: a user to drop to, and a Python that user can run.

As root (CI, and this machine), each test session creates its own sandbox users (removed at
the end) and finds an interpreter with numpy that an unprivileged user can read: this one,
or else a system Python of the same version with this environment's numpy linked in (a
virtual environment under ``/root`` is out of an unprivileged user's reach). Without root,
or when no such interpreter exists, the sandbox runs with limits only, and the tests that
check the privilege drop itself are skipped with that reason; every scoring check still runs.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest


@dataclass
class SandboxSetup:
    """How this machine sandboxes: environment for ``run_autograder`` and its limits."""

    python: str
    users: list = field(default_factory=list)  # one per parallel slot (empty: no drop)
    reason: str = ""  # why there is no privilege drop

    @property
    def privileged(self) -> bool:
        return bool(self.users)

    def env(self, slot: int = 0) -> dict:
        env = {"AUTOGRADER_PYTHON": sys.executable, "AUTOGRADER_SANDBOX_PYTHON": self.python}
        if self.users:
            env.update(AUTOGRADER_SANDBOX="user", AUTOGRADER_SANDBOX_USER=self.users[slot])
        else:
            env["AUTOGRADER_SANDBOX"] = "rlimits"
        return env


def _runs_as(python: str, user: str) -> bool:
    setpriv = shutil.which("setpriv")
    if not setpriv:
        return False
    cmd = [setpriv, f"--reuid={user}", f"--regid={user}", "--clear-groups", "--", python,
           "-I", "-c", "import numpy"]  # fmt: skip
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        return subprocess.run(cmd, capture_output=True, timeout=60, cwd="/").returncode == 0
    return False


def _link_tree(src: Path, dst: Path) -> None:
    for folder, _dirs, files in os.walk(src):
        target = dst / Path(folder).relative_to(src)
        target.mkdir(parents=True, exist_ok=True)
        os.chmod(target, 0o755)
        for name in files:
            try:
                os.link(Path(folder) / name, target / name)
            except OSError:
                shutil.copy2(Path(folder) / name, target / name)


def _portable_python(base: Path, user: str) -> tuple[str | None, str]:
    """A Python with numpy that ``user`` can run (None and the reason when there is none)."""
    if _runs_as(sys.executable, user):
        return sys.executable, ""
    import numpy  # noqa: PLC0415

    version = "{}.{}".format(*sys.version_info[:2])
    site = Path(numpy.__file__).resolve().parents[1]
    for candidate in (f"/usr/bin/python{version}", "/usr/bin/python3", "/usr/local/bin/python3"):
        if not os.access(candidate, os.X_OK):
            continue
        code = "import sys; print('{}.{}'.format(*sys.version_info[:2]))"
        done = subprocess.run([candidate, "-c", code], capture_output=True, text=True)
        if done.stdout.strip() != version:
            continue
        venv = base / "venv"
        made = subprocess.run([candidate, "-m", "venv", "--without-pip", str(venv)],
                              capture_output=True, text=True)  # fmt: skip
        if made.returncode != 0:
            continue
        target = venv / "lib" / f"python{version}" / "site-packages"
        for name in os.listdir(site):
            if name == "numpy" or name.startswith(("numpy.libs", "numpy-")):
                _link_tree(site / name, target / name)
        for folder, _dirs, _files in os.walk(venv):
            os.chmod(folder, 0o755)
        python = str(venv / "bin" / "python")
        if _runs_as(python, user):
            return python, ""
    return None, (
        f"no Python {version} with numpy is readable by an unprivileged user here "
        f"({sys.executable} is not, and no system python{version} could borrow numpy)"
    )


@pytest.fixture(scope="session")
def sandbox_setup():
    """The session's sandbox: two users (two parallel slots) when root, else limits only."""
    if os.geteuid() != 0:
        yield SandboxSetup(sys.executable, reason="not root, so no user to drop to")
        return
    from tinygrad_course.grading.sandbox import ensure_user  # noqa: PLC0415

    tag = f"tgt{os.getpid() % 100000}"
    users = [f"{tag}a", f"{tag}b"]
    base = Path(tempfile.mkdtemp(prefix="tgedu-sbx-"))
    os.chmod(base, 0o755)
    try:
        for user in users:
            ensure_user(user)
        python, reason = _portable_python(base, users[0])
        if python is None:
            yield SandboxSetup(sys.executable, reason=reason)
        else:
            yield SandboxSetup(python, users)
    finally:
        for user in users:
            subprocess.run(["pkill", "-KILL", "-u", user], capture_output=True)
            # as the library finds useradd: a PATH without /usr/sbin still cleans up
            userdel = shutil.which("userdel") or "/usr/sbin/userdel"
            subprocess.run([userdel, user], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)
