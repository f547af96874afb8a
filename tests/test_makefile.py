"""The Makefile's system packages: graphviz is required, chromium is optional.

A stub ``apt-get`` that fails (as with a held dpkg lock) stands in for Debian's; the command
names are pointed at programs that do not exist, so the install is attempted here too.
"""

import fnmatch
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
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


def _dry_run(target: str) -> str:
    """The commands ``make TARGET`` would run (``-B``: as on a machine with no .venv yet)."""
    done = subprocess.run(["make", "--no-print-directory", "-n", "-B", "-C", str(ROOT), target],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.replace("\\\n", " ")


def _installs(dry: str) -> list[str]:
    return [x for x in dry.splitlines() if "pip install" in x and "--upgrade pip" not in x]


def test_make_lessons_installs_the_lessons_extra_alone():
    """A student's first command once installed every extra (pytest, ruff, mkdocs, onnx,
    PyTorch: 156 packages, 1.6 GB, and CUDA PyTorch from a stock pip)."""
    installs = _installs(_dry_run("lessons"))
    assert installs == ['.venv/bin/python -m pip install -q -e ".[lessons]"'], installs


def test_make_test_still_installs_everything_the_suite_needs():
    installs = _installs(_dry_run("test"))
    assert len(installs) == 1, installs
    extras = set(re.search(r'"\.\[(.*)\]"', installs[0]).group(1).split(","))
    assert {"dev", "viz", "notebooks", "docs", "compare", "onnx", "fuse"} <= extras


def test_make_pytorch_takes_the_cpu_build():
    installs = _installs(_dry_run("pytorch"))
    assert len(installs) == 1 and "torch" in installs[0], installs
    assert "--index-url https://download.pytorch.org/whl/cpu" in installs[0]


def _jupyter_lab_args() -> list[str]:
    """The options `make lessons` gives JupyterLab."""
    line = next(x for x in _dry_run("lessons").splitlines() if "jupyter lab" in x)
    return [a for a in shlex.split(line.split("jupyter lab", 1)[1]) if a != "--allow-root"]


def test_make_lessons_hides_only_the_lessons_jupytext_twins():
    """Each lesson was listed twice (NN_name.ipynb and its jupytext twin NN_name.py); the
    assignments' .py files must stay listed, for the student opens them to write the tasks."""
    globs = next(a for a in _jupyter_lab_args() if a.startswith("--ContentsManager.hide_globs="))
    globs = json.loads(globs.split("=", 1)[1])
    hidden = lambda name: any(fnmatch.fnmatch(name, g) for g in globs)  # noqa: E731
    assert all(hidden(p.name) for p in (ROOT / "notebooks").glob("*.py"))
    assert not any(hidden(p.name) for p in (ROOT / "notebooks").glob("*.ipynb"))
    for folder in ("tinygrad_edu", "tinygrad_course", "tests"):
        shown = [p for p in (ROOT / folder).rglob("*.py") if hidden(p.name)]
        assert not shown, f"hidden from the student: {shown[:3]}"


def _listing(url: str) -> list[str]:
    """The names a Jupyter server lists in a folder (it prints its address a moment before
    it accepts connections: a refused one is tried again)."""
    for attempt in range(60):
        try:
            with urllib.request.urlopen(url, timeout=60) as reply:
                return sorted(item["name"] for item in json.load(reply)["content"])
        except urllib.error.URLError:
            if attempt == 59:
                raise
            time.sleep(0.5)
    return []


@pytest.mark.slow
def test_make_lessons_prints_the_address_of_lesson_0(tmp_path):
    """JupyterLab as `make lessons` starts it: the address it prints opens lesson 0 (it once
    opened the file browser), and its listing of notebooks/ holds each lesson once."""
    pytest.importorskip("jupyterlab")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = [sys.executable, "-m", "jupyterlab", *_jupyter_lab_args(), "--no-browser",
            f"--port={port}", "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=t0k3n",
            "--ServerApp.open_browser=False"]  # fmt: skip
    if os.getuid() == 0:
        args.append("--allow-root")
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path), JUPYTER_DATA_DIR=str(tmp_path))
    server = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)  # fmt: skip
    try:
        printed = ""
        for line in server.stdout:
            printed += line
            if f":{port}/" in line:
                break
        assert f"http://127.0.0.1:{port}/lab/tree/notebooks/00_setup.ipynb?token=" in printed, (
            printed[-3000:])
        names = _listing(f"http://127.0.0.1:{port}/api/contents/notebooks?token=t0k3n")
        lessons = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
        assert [n for n in names if n[:2].isdigit()] == lessons
    finally:
        server.terminate()
        server.wait(timeout=30)
