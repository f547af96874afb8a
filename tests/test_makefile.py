"""The Makefile's system packages: graphviz is required, chromium is optional.

A stub ``apt-get`` that fails (as with a held dpkg lock) stands in for Debian's; the command
names are pointed at programs that do not exist, so the install is attempted here too.
"""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _make(tmp_path, target: str, **variables) -> subprocess.CompletedProcess:
    stub = tmp_path / "bin"
    stub.mkdir(exist_ok=True)
    apt = stub / "apt-get"
    apt.write_text("#!/bin/sh\necho 'E: Could not get lock /var/lib/dpkg/lock-frontend' >&2\n"
                   "exit 100\n")  # fmt: skip
    apt.chmod(0o755)
    env = {"PATH": f"{stub}:/usr/bin:/bin"}
    args = [f"{k}={v}" for k, v in variables.items()]
    return subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), target, *args],
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip


def test_a_failed_chromium_install_does_not_stop_make(tmp_path):
    done = _make(tmp_path, "chromium", CHROMIUM="no-such-browser-here")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "docs page check will be skipped" in done.stdout


def test_a_failed_graphviz_install_stops_make(tmp_path):
    done = _make(tmp_path, "graphviz", DOT="no-such-dot-here")
    assert done.returncode != 0
    assert "graphviz" in done.stdout + done.stderr
