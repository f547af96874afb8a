"""The sandbox: children that run probes, with limits, timeouts, and (as root) another user."""

import contextlib
import os
import shutil
import socket
import stat
import tempfile
from pathlib import Path

import pytest

from tinygrad_course.grading.sandbox import (
    Limits,
    ProbeFailed,
    ProbeTimeout,
    Sandbox,
    SandboxDied,
    runtime_files,
    sandbox_config,
)

PROBES = '''
import os, socket, subprocess, sys, time

import numpy as np

STATE = []


def ok(x):
    STATE.append(x)
    return {"double": np.asarray(x) * 2, "uid": os.getuid(), "calls": len(STATE),
            "env": dict(os.environ), "cwd": os.getcwd(), "path": sys.path[0]}


def boom():
    def inner():
        raise ValueError("bad " * 1000)
    inner()


def spin():
    while True:
        pass


def leave():
    os._exit(7)


def write(path, size):
    with open(path, "wb") as f:
        f.write(b"x" * size)
    return "written"


def read(path):
    return open(path).read()


def allocate(n):
    return len(bytearray(n))


def escape(marker):
    subprocess.Popen(["setsid", "sleep", "300"])
    open(marker, "w").write("left behind")
    return "started"


def garbage():
    os.write(int(sys.argv[3]), b"\\x05" + b"\\x00" * 7 + b"junk!")
    time.sleep(5)


def hostile():
    """What a clever submission tries against the grader: every answer is what it got."""
    import signal
    out = {}
    parent = os.getppid()
    for what in ("environ", "cmdline", "fd/0", "mem"):
        try:
            with open(f"/proc/{parent}/{what}", "rb") as f:
                out[what] = len(f.read(100))
        except OSError as e:
            out[what] = type(e).__name__
    try:
        os.kill(parent, signal.SIGTERM)
        out["kill"] = "sent"
    except OSError as e:
        out["kill"] = type(e).__name__
    pids = []
    try:
        for _ in range(500):  # a fork bomb, capped
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            pids.append(pid)
        out["fork"] = "unlimited"
    except OSError as e:
        out["fork"] = type(e).__name__
    out["forked"] = len(pids)
    out["env"] = sorted(os.environ)
    return out


def flood(n):
    os.write(1, b"x" * n)
    return "flooded"


def connect(port):
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect(("127.0.0.1", port))
        return "connected"
    except OSError as e:
        return type(e).__name__
'''


@pytest.fixture
def box(sandbox_setup):
    """A working copy with the probes above, readable by the sandbox user."""
    root = Path(tempfile.mkdtemp(prefix="tgedu-sandbox-test-"))
    os.chmod(root, 0o755)
    work, runtime = root / "work", root / "runtime"
    (work / "probes").mkdir(parents=True)
    (work / "probes" / "__init__.py").write_text("")
    (work / "probes" / "p.py").write_text(PROBES)
    runtime.mkdir()
    for name, data in runtime_files().items():
        (runtime / name).write_bytes(data)
    for folder, _dirs, files in os.walk(root):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)

    def make(**limits):
        user = sandbox_setup.users[0] if sandbox_setup.privileged else None
        mode = "user" if user else "rlimits"
        lim = Limits(**limits) if limits else None
        config = sandbox_config(sandbox_setup.python, user, mode, limits=lim, timeout=30)
        return Sandbox(config, work, runtime, root / "scratch", log=root / "child.log")

    yield make, root
    shutil.rmtree(root, ignore_errors=True)


def test_a_call_returns_plain_data_from_a_clean_environment(box, sandbox_setup):
    make, root = box
    with make() as sb:
        got = sb.call("probes.p", "ok", {"x": [1.0, 2.0]})
        again = sb.call("probes.p", "ok", {"x": [3.0]})
    assert got["double"].tolist() == [2.0, 4.0] and again["calls"] == 2  # one child, kept
    env = got["env"]
    assert env["PATH"] == "/usr/local/bin:/usr/bin:/bin" and env["OMP_NUM_THREADS"] == "1"
    assert not [k for k in env if k.startswith(("PYTHON", "AUTOGRADER", "PYTEST"))
                and k not in ("PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING")]
    assert env["HOME"] == got["cwd"] and got["cwd"].startswith(str(root / "scratch"))
    assert got["path"] == str(root / "work")
    if sandbox_setup.privileged:
        assert got["uid"] != 0 and got["uid"] != os.getuid()


def test_an_exception_is_data_and_the_child_survives(box):
    make, _ = box
    with make() as sb:
        with pytest.raises(ProbeFailed) as info:
            sb.call("probes.p", "boom", {})
        assert sb.call("probes.p", "ok", {"x": 1})["calls"] == 1
    error = info.value.error
    assert error["type"] == "ValueError" and len(error["message"]) <= 2000
    assert [f[2] for f in error["frames"]] == ["boom", "inner"]
    assert error["frames"][0][0] == "probes/p.py"


def test_a_timeout_kills_the_child_and_the_next_call_starts_afresh(box):
    make, _ = box
    with make() as sb:
        sb.call("probes.p", "ok", {"x": 1})
        with pytest.raises(ProbeTimeout, match="1.5 s"):
            sb.call("probes.p", "spin", {}, timeout=1.5)
        assert sb.call("probes.p", "ok", {"x": 1})["calls"] == 1  # a fresh child


def test_a_child_that_exits_is_reported(box):
    make, _ = box
    with make() as sb, pytest.raises(SandboxDied, match="exited with status 7"):
        sb.call("probes.p", "leave", {})


def test_a_child_that_answers_garbage_is_dropped(box):
    make, _ = box
    with make() as sb, pytest.raises(SandboxDied, match="bad answer"):
        sb.call("probes.p", "garbage", {}, timeout=10)


def test_limits_on_file_size_memory_and_cpu(box):
    make, root = box
    with make(file_bytes=1 << 16, memory_bytes=1 << 30, cpu_seconds=1) as sb:
        with pytest.raises((SandboxDied, ProbeFailed)) as info:  # in its own scratch folder
            sb.call("probes.p", "write", {"path": "big", "size": 1 << 20})
        assert "SIGXFSZ" in str(info.value) or "File too large" in str(info.value)
        with pytest.raises(ProbeFailed, match="MemoryError"):
            sb.call("probes.p", "allocate", {"n": 2 << 30})
        with pytest.raises(SandboxDied, match="SIGXCPU|SIGKILL"):
            sb.call("probes.p", "spin", {}, timeout=60)


def test_the_sandbox_user_cannot_read_or_write_the_graders_files(box, sandbox_setup):
    if not sandbox_setup.privileged:
        pytest.skip(f"no privilege drop here: {sandbox_setup.reason}")
    make, root = box
    # 0700, like /autograder/source; in the working copy, which the child sees even when its
    # temporary folders are its own (a folder elsewhere in /tmp is not even there for it)
    private = Path(tempfile.mkdtemp(prefix="tgedu-private-", dir=root / "work"))
    (private / "hidden_tests.py").write_text("def test_hidden(): pass\n")
    try:
        with make() as sb:
            with pytest.raises(ProbeFailed, match="PermissionError"):
                sb.call("probes.p", "read", {"path": str(private / "hidden_tests.py")})
            with pytest.raises(ProbeFailed, match="PermissionError"):
                sb.call("probes.p", "write", {"path": str(root / "work" / "x.py"), "size": 1})
    finally:
        shutil.rmtree(private)


def test_the_child_cannot_signal_or_inspect_the_grader_and_forks_are_capped(box, sandbox_setup):
    if not sandbox_setup.privileged:
        pytest.skip(f"no privilege drop here: {sandbox_setup.reason}")
    make, _ = box
    with make(processes=16) as sb:
        got = sb.call("probes.p", "hostile", {})
        uid, hidden = sb.config.uid, "--mount" in sb.config.unshare
    assert got["kill"] == "PermissionError", got  # and this process is still here
    # with a /proc of its own (hidepid=2) the grader's entries are not even there
    denied = ("PermissionError", "FileNotFoundError") if hidden else ("PermissionError",)
    assert all(got[k] in denied for k in ("environ", "fd/0", "mem")), got
    assert got["fork"] == "BlockingIOError" and got["forked"] < 16, got
    assert not [k for k in got["env"] if k.startswith(("AUTOGRADER", "PYTEST", "SUDO"))]
    assert not _processes_of(uid), "the forked processes outlived the child"


def test_a_flood_of_output_ends_at_the_file_size_limit(box):
    make, root = box
    with make(file_bytes=1 << 16) as sb:
        with contextlib.suppress(ProbeFailed, SandboxDied):  # EFBIG, or SIGXFSZ
            sb.call("probes.p", "flood", {"n": 1 << 22})
        assert sb.call("probes.p", "ok", {"x": 1})["calls"] >= 1  # the grader goes on
    assert (root / "child.log").stat().st_size <= 1 << 16


def test_a_working_copy_is_for_its_own_sandbox_user_only(box, sandbox_setup):
    if len(sandbox_setup.users) < 2:
        pytest.skip(f"needs two sandbox users: {sandbox_setup.reason or 'not root'}")
    from tinygrad_course.grading.autograder import _tree_modes  # noqa: PLC0415

    make, root = box
    copy = root / "work" / "copy-of-a"  # a working copy of the submission graded as user a
    (copy / "pkg").mkdir(parents=True)
    (copy / "pkg" / "solution.pyc").write_bytes(b"student a's code")
    with make() as sb:
        _tree_modes(copy, sb.config.gid)
        assert sb.call("probes.p", "read", {"path": str(copy / "pkg" / "solution.pyc")})
    other = sandbox_config(sandbox_setup.python, sandbox_setup.users[1], "user", timeout=30)
    with Sandbox(other, root / "work", root / "runtime", root / "scratch") as sb:
        with pytest.raises(ProbeFailed, match="PermissionError"):
            sb.call("probes.p", "read", {"path": str(copy / "pkg" / "solution.pyc")})


def _processes_of(uid):
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                st = os.stat(f"/proc/{pid}")
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            if st.st_uid == uid and "State:\tZ" not in status:
                out.append(pid)
    return out


def test_nothing_the_child_started_or_wrote_survives_it(box, sandbox_setup):
    if not sandbox_setup.privileged:
        pytest.skip(f"no privilege drop here: {sandbox_setup.reason}")
    make, _ = box
    marker = Path(tempfile.gettempdir()) / f"tgedu-left-{os.getpid()}"
    with make() as sb:
        assert sb.call("probes.p", "escape", {"marker": str(marker)}) == "started"
        uid, private = sb.config.uid, "--mount" in sb.config.unshare
        # a /tmp of its own (a mount namespace) keeps the file from the grader's /tmp at all
        assert marker.exists() != private
        if not private:
            assert stat.S_IMODE(marker.stat().st_mode) & 0o077 == 0  # umask
    assert not _processes_of(uid), "a process of the sandbox user outlived its child"
    assert not marker.exists(), "a file the sandbox user left in /tmp survived the sweep"


def test_a_file_left_in_any_world_writable_folder_is_swept(box, sandbox_setup):
    if not sandbox_setup.privileged or not os.path.isdir("/run"):
        pytest.skip(f"no privilege drop here: {sandbox_setup.reason}")
    make, _ = box
    stash = Path(tempfile.mkdtemp(prefix="tgedu-stash-", dir="/run"))  # like /var/crash
    os.chmod(stash, 0o1777)
    try:
        with make() as sb:
            assert str(stash) in sb.config.writable
            assert sb.call("probes.p", "write", {"path": str(stash / "for-later"), "size": 9})
            # with private temporary folders the child wrote into a tmpfs of its own
            assert (stash / "for-later").exists() != ("--mount" in sb.config.unshare)
        assert not (stash / "for-later").exists(), "a later child could read what it left"
    finally:
        shutil.rmtree(stash, ignore_errors=True)


def test_no_network_when_it_can_be_isolated(box, sandbox_setup):
    make, _ = box
    with make() as sb:
        if sb.config.network != "isolated":
            pytest.skip("this machine cannot give children their own network namespace")
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen()
        try:
            got = sb.call("probes.p", "connect", {"port": server.getsockname()[1]})
        finally:
            server.close()
    assert got != "connected"


def test_remove_tree_takes_any_depth_and_never_follows_links(tmp_path):
    """shutil.rmtree raised RecursionError on a 3000-level tree (and its paths pass
    PATH_MAX), which failed the sweep and every later submission graded in that slot."""
    from tinygrad_course.grading.sandbox_sweep import remove_tree

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("the grader's")
    top = tmp_path / "deep"
    top.mkdir()
    here = os.open(top, os.O_RDONLY)
    for _ in range(3000):
        os.mkdir("d", dir_fd=here)
        os.symlink(outside, "link", dir_fd=here)
        below = os.open("d", os.O_RDONLY, dir_fd=here)
        os.close(here)
        here = below
    os.close(here)
    with pytest.raises(RecursionError):
        shutil.rmtree(top, ignore_errors=True)
    assert remove_tree(top) and not top.exists()
    assert (outside / "keep").read_text() == "the grader's"
    assert remove_tree(top)  # already gone


def test_a_failing_sweep_step_is_reported_never_raised(monkeypatch, capsys):
    from tinygrad_course.grading import sandbox_sweep
    from tinygrad_course.grading.sandbox_config import SandboxConfig

    if os.geteuid() != 0:
        pytest.skip("the sweep runs as root only")

    def broken(*args):
        raise RecursionError("maximum recursion depth exceeded")

    called = []
    monkeypatch.setattr(sandbox_sweep, "_kill_user", broken)
    monkeypatch.setattr(sandbox_sweep, "_remove_ipc", lambda uid: called.append("ipc"))
    monkeypatch.setattr(sandbox_sweep, "_remove_files", lambda uid, w: called.append("files"))
    sandbox_sweep.sweep(SandboxConfig("python", "nobody", uid=65534, gid=65534))
    assert called == ["ipc", "files"]  # the other steps still ran
    assert "failed: RecursionError" in capsys.readouterr().err
