"""Private temporary folders per child (#35, the channel between grade-batch's slots).

Where the kernel allows a mount namespace, each child gets a fresh tmpfs over /tmp, /var/tmp,
/dev/shm and every other world-writable folder, with the grader's working area (its working
copy, its scratch folder) bound back at the same place. ``test_kernel_state.py`` checks that
two slots running at once find nothing of each other's; here: the child's temporary files
work (``tempfile``, numpy, a subprocess), never reach the grader's folders, and vanish with
the child, whatever it left running.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tinygrad_course.grading import kernel_state
from tinygrad_course.grading.sandbox import Sandbox, sandbox_config
from tinygrad_course.grading.sandbox_config import _env

from .test_kernel_state import finish_area

PROBES = r'''
import os, subprocess, tempfile, time


def write(name, token):
    """Write token to name in the temporary folder; report what the child sees of it."""
    fd, path = tempfile.mkstemp(prefix=name)
    os.write(fd, token.encode())
    os.close(fd)
    shm = "/dev/shm/" + name
    with open(shm, "w") as f:
        f.write(token)
    import numpy
    numpy.save(os.path.join(tempfile.gettempdir(), name + ".npy"), numpy.arange(3))
    back = numpy.load(os.path.join(tempfile.gettempdir(), name + ".npy")).tolist()
    run = subprocess.run(["python3", "-I", "-c", "import tempfile; "
                          "print(tempfile.gettempdir())"], capture_output=True, text=True)
    return {"path": path, "tmpdir": os.environ.get("TMPDIR"), "gettempdir":
            tempfile.gettempdir(), "numpy": back, "subprocess": run.stdout.strip(),
            "files": sorted(os.listdir("/tmp")), "shm": open(shm).read(),
            "cwd": os.getcwd(), "ns": os.readlink("/proc/self/ns/mnt")}


def linger(name):
    """Leave a process that holds a file of this child's /tmp open, in its own session."""
    fd, path = tempfile.mkstemp(prefix=name)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.chdir(tempfile.gettempdir())
            time.sleep(600)
        os._exit(0)
    os.wait()
    return {"path": path, "ns": os.readlink("/proc/self/ns/mnt")}
'''


@pytest.fixture(scope="module")
def area(sandbox_setup):
    """The grader's working area, in the host's /tmp (as the autograder makes it)."""
    root = Path(tempfile.mkdtemp(prefix="tgedu-private-tmp-"))
    os.chmod(root, 0o711)
    (root / "work" / "probes").mkdir(parents=True)
    (root / "work" / "probes" / "__init__.py").write_text("")
    (root / "work" / "probes" / "t.py").write_text(PROBES)
    finish_area(root)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _private(sandbox_setup, root: Path) -> Sandbox:
    if not sandbox_setup.privileged:
        pytest.skip(f"no sandbox user here: {sandbox_setup.reason}")
    if "--mount" not in kernel_state.namespaces():
        pytest.skip("no mount namespace here (needs CAP_SYS_ADMIN): the folders are shared")
    config = sandbox_config(sandbox_setup.python, sandbox_setup.users[0], "user", timeout=60)
    assert "temporary folders private" in config.describe()
    return Sandbox(config, root / "work", root / "runtime", root / "scratch",
                   log=root / "child.log")  # fmt: skip


def _in_namespace(ns: str) -> list[int]:
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.readlink(f"/proc/{name}/ns/mnt") == ns:
                    pids.append(int(name))
            except OSError:
                pass
    return pids


def test_a_childs_temporary_files_work_and_stay_its_own(sandbox_setup, area):
    token = f"tok-{os.getpid()}"
    name = f"tgedu-own-{os.getpid()}-"
    with _private(sandbox_setup, area) as child:
        got = child.call("probes.t", "write", {"name": name, "token": token})
        assert str(child.workdir).startswith("/tmp/")  # the working copy is bound back
        scratch = child._scratch
        # while the child runs: nothing it wrote is in the grader's folders
        assert not os.path.lexists(got["path"])
        assert not os.path.lexists(f"/dev/shm/{name}")
        assert not [n for n in os.listdir("/tmp") if n.startswith(name)]
    assert got["tmpdir"] == got["gettempdir"] == got["subprocess"] == "/tmp", got
    assert got["path"].startswith("/tmp/" + name) and got["numpy"] == [0, 1, 2]
    assert got["shm"] == token
    # its /tmp holds its own files and the grader's area bound back, nothing else of the host
    # (but the interpreter's environment, where that lives in /tmp: a portable copy of Python
    # made for the sandbox user, as on a machine whose venv the user cannot read)
    bound = {area.name}
    python = Path(os.path.abspath(sandbox_setup.python))  # (not resolved: a venv's link)
    if python.parts[:2] == ("/", "tmp"):
        bound.add(python.parts[2])
    assert set(got["files"]) == bound | {os.path.basename(got["path"]), name + ".npy"}, got
    assert got["cwd"] == str(scratch)
    assert got["ns"] != os.readlink("/proc/self/ns/mnt")


def test_the_childs_folders_vanish_with_it_whatever_it_left_running(sandbox_setup, area):
    """A daemon the child leaves (its own session, its folder and an open file in the
    private /tmp) would keep the namespace, and its tmpfs, alive: the sweep kills it by uid,
    and no process is left in the namespace."""
    with _private(sandbox_setup, area) as child:
        got = child.call("probes.t", "linger", {"name": "tgedu-linger-"})
        assert len(_in_namespace(got["ns"])) >= 2  # the child and its daemon
        stage = child._stage
        assert stage is not None and stage.is_dir() and not os.listdir(stage)
    assert _in_namespace(got["ns"]) == []
    assert not os.path.lexists(stage)
    assert not os.path.lexists(got["path"])


def test_the_mount_arguments_cover_each_folder_once_binding_the_area_back(tmp_path):
    for name in ("tmp/area/work", "tmp/area/scratch/mnt-x", "tmp/area/scratch/s-1", "shm",
                 "lock", "venv/bin"):  # fmt: skip
        (tmp_path / name).mkdir(parents=True)
    (tmp_path / "var-lock").symlink_to(tmp_path / "lock")
    (tmp_path / "tmp" / "nested").mkdir()
    t = str(tmp_path)
    args = kernel_state.private_folders(
        [f"{t}/tmp", f"{t}/shm", f"{t}/var-lock", f"{t}/lock", f"{t}/tmp/nested", f"{t}/gone"],
        [f"{t}/tmp/area/work", f"{t}/tmp/area/work", f"{t}/tmp/area/scratch/s-1",
         f"{t}/venv", f"{t}/tmp/area/work/probes"],
        f"{t}/tmp/area/scratch/mnt-x")  # fmt: skip
    # one tmpfs for each real folder (a link and a folder below another one are covered);
    # the folder holding the stage last; the paths below a folder bound back, once each
    assert args == [str(kernel_state.TEMP_BYTES), f"{t}/tmp/area/scratch/mnt-x",
                    f"+{t}/shm", f"+{t}/lock", f"+{t}/tmp", f"{t}/tmp/area/scratch/s-1",
                    f"{t}/tmp/area/work", "--"]  # fmt: skip


def test_without_a_mount_namespace_temporary_files_go_to_the_scratch_folder(tmp_path):
    """The fallback (no namespace: not root, or no CAP_SYS_ADMIN) is what it was: TMPDIR is
    the child's scratch folder, and the shared folders are only swept after it."""
    assert _env(tmp_path)["TMPDIR"] == str(tmp_path) == _env(tmp_path)["HOME"]
    assert _env(tmp_path, private_tmp=True)["TMPDIR"] == "/tmp"
    config = sandbox_config("python3", None, "rlimits")
    assert not config.unshare and "temporary folders private" not in config.describe()
