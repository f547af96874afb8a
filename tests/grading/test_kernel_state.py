"""Kernel state as a channel between sandboxed children (issue #26).

Every child of a submission runs as the same sandbox user, and so does every submission a
``grade-batch`` slot grades. For each kind of kernel object a user can leave behind
(:data:`tinygrad_course.grading.kernel_state.OBJECTS`), one child tries to leave one holding a
token, and later children look for it: one for another task of the same submission (same
working copy) and one for the next submission in the same slot (another working copy). None
may find it. Before the seccomp filter and the fresh keyrings, the keyring case found the
token (a key in the user keyring outlives its process).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tinygrad_course.grading import kernel_state, seccomp
from tinygrad_course.grading import sandbox_memory as memory
from tinygrad_course.grading.sandbox import (
    Limits,
    Sandbox,
    SandboxDied,
    runtime_files,
    sandbox_config,
)

PROBES = r'''
import ctypes, fcntl, os, signal, socket, time

LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long
NAME = b"tgedu-leak"
KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
RINGS = (-3, -4, -5)  # session, user, user session
IPC_KEY = 0x7E57AB1E
CGROUPS = "/sys/fs/cgroup"


def _errno():
    return os.strerror(ctypes.get_errno())


def _daemon(body):
    """Run body() in a process that leaves the child's process group and session."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            try:
                body()
            finally:
                os._exit(0)
        os._exit(0)
    os.wait()


def leave(kind, token):
    data = token.encode()
    if kind == "keyrings":
        out = []
        for ring in RINGS:
            r = LIBC.syscall(ctypes.c_long(KEYCTL[0]), b"user", NAME, data,
                             ctypes.c_size_t(len(data)), ctypes.c_long(ring))
            out.append(r if r >= 0 else _errno())
        return out
    if kind == "sysv":
        LIBC.shmat.restype = ctypes.c_void_p
        shmid = LIBC.shmget(IPC_KEY, 4096, 0o1000 | 0o666)  # IPC_CREAT
        if shmid < 0:
            return _errno()
        ctypes.memmove(LIBC.shmat(shmid, None, 0), data, len(data))
        return shmid
    if kind == "mqueue":
        LIBC.mq_open.restype = ctypes.c_int
        q = LIBC.mq_open(b"/tgedu-leak", os.O_CREAT | os.O_RDWR, 0o666, None)
        return q if q >= 0 else _errno()
    if kind == "files":
        for folder in ("/dev/shm", "/tmp", "/var/tmp"):
            with open(os.path.join(folder, "tgedu-leak"), "w") as f:
                f.write(token)
        return "written"
    if kind == "abstract socket":
        def serve():
            s = socket.socket(socket.AF_UNIX)
            s.bind(b"\0tgedu-leak")
            s.listen()
            while True:
                c, _ = s.accept()
                c.sendall(data)
                c.close()
        _daemon(serve)
        time.sleep(0.3)
        return "serving"
    if kind == "signals":
        def pester():
            while True:
                os.kill(-1, signal.SIGUSR1)  # every process this user may signal
                time.sleep(0.01)
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)  # this child is pestered too
        _daemon(pester)
        return "pestering"
    if kind == "timers":
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        signal.setitimer(signal.ITIMER_REAL, 1000.0)
        signal.alarm(1000)
        return "armed"
    if kind == "inotify":
        def watch():
            fd = LIBC.inotify_init()
            LIBC.inotify_add_watch(fd, b"/tmp", 0xFFF)
            time.sleep(600)
        _daemon(watch)
        time.sleep(0.3)
        return "watching"
    if kind == "cgroups":
        out = []
        for sub in ("", "unified", "memory", "pids"):
            try:
                os.mkdir(os.path.join(CGROUPS, sub, "tgedu-leak"))
                out.append("made")
            except OSError as e:
                out.append(type(e).__name__)
        return out
    if kind == "deep folder":  # deeper than shutil.rmtree can recurse, longer than PATH_MAX
        top = os.path.join("/tmp", "tgedu-leak-deep")
        os.mkdir(top)
        here = os.open(top, os.O_RDONLY)
        for _ in range(3000):
            os.mkdir("d", dir_fd=here)
            below = os.open("d", os.O_RDONLY, dir_fd=here)
            os.close(here)
            here = below
        with open(os.open("token", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=here), "w") as f:
            f.write(token)
        os.close(here)
        return "made"
    if kind == "odd names":  # names that are not UTF-8, with a newline, in a locked folder
        top = b"/tmp/tgedu-leak-\xff\nodd"
        os.mkdir(top)
        with open(top + b"/\xfe token", "w") as f:
            f.write(token)
        os.mkdir(top + b"/locked")
        with open(top + b"/locked/inside", "w") as f:
            f.write(token)
        os.chmod(top + b"/locked", 0)
        return "made"
    if kind == "memory cgroup":  # leave its own cgroup for the parent (no limit, shared)
        out = []
        for line in open("/proc/self/cgroup"):
            _, controllers, path = line.strip().split(":", 2)
            if "memory" in controllers.split(","):
                parent = os.path.dirname(os.path.join(CGROUPS, "memory", path.lstrip("/")))
                try:
                    with open(os.path.join(parent, "cgroup.procs"), "w") as f:
                        f.write(str(os.getpid()))
                    out.append("moved")
                except OSError as e:
                    out.append(type(e).__name__)
        return out
    if kind == "page cache":  # read code the next child also reads: its pages stay cached
        with open(os.path.join(os.path.dirname(__file__), "big.bin"), "rb") as f:
            return len(f.read())
    if kind == "sparse log":  # the stray-output file: bits as holes and data far past its end
        flags = fcntl.fcntl(1, fcntl.F_GETFL)
        fcntl.fcntl(1, fcntl.F_SETFL, flags & ~os.O_APPEND)
        for k, bit in enumerate(format(len(token), "08b")):
            if bit == "1":
                os.pwrite(1, b"1", (1 << 20) + (k << 16))
        return "written"
    raise ValueError(kind)


def _mine():
    """Other live processes of this user (not this one), by pid."""
    me, out = os.getpid(), []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != me:
            try:
                if os.stat("/proc/" + pid).st_uid == os.getuid():
                    if "State:\tZ" not in open(f"/proc/{pid}/status").read():
                        out.append(int(pid))
            except OSError:
                pass
    return out


def find(kind):
    """The token an earlier child left, or None."""
    if kind == "keyrings":
        buf = ctypes.create_string_buffer(256)
        for ring in RINGS:
            key = LIBC.syscall(ctypes.c_long(KEYCTL[1]), ctypes.c_long(10), ctypes.c_long(ring),
                               b"user", NAME, ctypes.c_long(0))  # KEYCTL_SEARCH
            if key >= 0:
                n = LIBC.syscall(ctypes.c_long(KEYCTL[1]), ctypes.c_long(11), ctypes.c_long(key),
                                 buf, ctypes.c_long(256))  # KEYCTL_READ
                return buf.raw[:n].decode() if n > 0 else "a key"
        with open("/proc/keys") as f:
            return "listed" if "tgedu-leak" in f.read() else None
    if kind == "sysv":
        LIBC.shmat.restype = ctypes.c_void_p
        shmid = LIBC.shmget(IPC_KEY, 0, 0)
        if shmid < 0:
            return None
        return ctypes.string_at(LIBC.shmat(shmid, None, 0), 32).rstrip(b"\0").decode()
    if kind == "mqueue":
        LIBC.mq_open.restype = ctypes.c_int
        return "opened" if LIBC.mq_open(b"/tgedu-leak", os.O_RDONLY) >= 0 else None
    if kind == "files":
        for folder in ("/dev/shm", "/tmp", "/var/tmp"):
            try:
                return open(os.path.join(folder, "tgedu-leak")).read()
            except OSError:
                pass
        return None
    if kind == "abstract socket":
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(b"\0tgedu-leak")
            return s.recv(64).decode()
        except OSError:
            return None
    if kind == "signals":
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
        time.sleep(0.5)
        return "signalled" if signal.SIGUSR1 in signal.sigpending() else None
    if kind == "timers":
        left = signal.getitimer(signal.ITIMER_REAL)[0] + signal.alarm(0)
        return f"{left} s left" if left else None
    if kind == "inotify":
        for pid in _mine():
            try:
                for fd in os.listdir(f"/proc/{pid}/fd"):
                    if "inotify" in os.readlink(f"/proc/{pid}/fd/{fd}"):
                        return f"pid {pid} watches"
            except OSError:
                pass
        return None
    if kind == "cgroups":
        for sub in ("", "unified", "memory", "pids"):
            if os.path.isdir(os.path.join(CGROUPS, sub, "tgedu-leak")):
                return "a cgroup"
        return None
    if kind == "deep folder":
        return "a folder" if os.path.lexists("/tmp/tgedu-leak-deep") else None
    if kind == "odd names":
        return "a folder" if [n for n in os.listdir(b"/tmp") if n.startswith(b"tgedu-leak-")] \
            else None  # fmt: skip
    if kind == "memory cgroup":
        return None  # what counts is what leave() could do: the test checks its answer
    if kind == "page cache":  # which pages are cached, without reading any that are not
        fd = os.open(os.path.join(os.path.dirname(__file__), "big.bin"), os.O_RDONLY)
        cached = 0
        for offset in range(0, 4 << 20, 1 << 16):
            try:
                cached += os.preadv(fd, [bytearray(4096)], offset, os.RWF_NOWAIT) > 0
            except BlockingIOError:
                pass
        os.close(fd)
        return f"{cached} of 64 probes cached" if cached else None
    if kind == "sparse log":
        try:
            return f"data at {os.lseek(1, 1 << 20, os.SEEK_DATA)}"
        except OSError:
            return None
    raise ValueError(kind)


def plant(target):
    top = "/tmp/tgedu-leak-links"
    os.mkdir(top)
    os.symlink(target, os.path.join(top, "a-folder"))
    here = top
    for _ in range(5):
        here = os.path.join(here, "d")
        os.mkdir(here)
    os.symlink(target, os.path.join(here, "deeper"))
    return "planted"


def oom():
    """Lower this process's OOM score (to push the killer onto someone else)."""
    out = {"score": int(open("/proc/self/oom_score_adj").read())}
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("0")
        out["lower"] = "lowered"
    except OSError as e:
        out["lower"] = type(e).__name__
    out["now"] = int(open("/proc/self/oom_score_adj").read())
    return out


def hold(n, each):
    """Start n processes that each touch `each` bytes and wait; their exit statuses."""
    pids = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            try:
                block = bytearray(each)
                for i in range(0, each, 4096):
                    block[i] = 1
                time.sleep(3)
                os._exit(0)
            except MemoryError:
                os._exit(3)  # refused by its own address-space limit, not killed
            finally:
                os._exit(1)
        pids.append(pid)
    return [os.waitpid(pid, 0)[1] for pid in pids]


def processes():
    return _mine()


CHANNELS = ("/tmp/tgedu-chan", "/dev/shm/tgedu-chan", "/var/tmp/tgedu-chan")


def offer(token):
    """Leave a token where a child of another user, running at the same time, could read
    it: world-readable files in the shared temporary folders (umask 0, chmod)."""
    done = []
    for path in CHANNELS:
        try:
            os.umask(0)
        except OSError as e:
            done.append(f"umask: {e.strerror}")
        try:
            fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
            os.write(fd, token.encode())
            os.close(fd)
            os.chmod(path, 0o644)
            done.append(path)
        except OSError as e:
            done.append(f"{path}: {e.strerror}")
    return done


def take():
    """What another child offered (see offer), if this one can read it."""
    found = []
    for path in CHANNELS:
        try:
            with open(path) as f:
                found.append(f.read())
        except OSError:
            pass
    return found


def strike(pid):
    """Try to end, stop, trace or read the memory of process ``pid`` (another slot's child)."""
    out = {}
    for name, sig in (("kill", signal.SIGKILL), ("stop", signal.SIGSTOP)):
        try:
            os.kill(pid, sig)
            out[name] = "sent"
        except OSError as e:
            out[name] = type(e).__name__
    LIBC.ptrace.restype = ctypes.c_long
    r = LIBC.ptrace(ctypes.c_long(16), ctypes.c_long(pid), None, None)  # PTRACE_ATTACH
    out["ptrace"] = "attached" if r == 0 else _errno()
    try:
        with open(f"/proc/{pid}/mem", "rb") as f:
            f.read(1)
        out["mem"] = "read"
    except OSError as e:
        out["mem"] = type(e).__name__
    try:
        out["pidfd"] = "opened" if os.pidfd_open(pid) >= 0 else "no"
    except OSError as e:
        out["pidfd"] = type(e).__name__
    return out


def snoop(pids):
    """What this child can learn about processes it does not own: the grader's and the other
    slot's child (``pids``) and whatever else /proc lists."""
    seen = sorted(int(n) for n in os.listdir("/proc") if n.isdigit())
    others = []
    for pid in seen:
        try:
            if os.stat(f"/proc/{pid}").st_uid != os.getuid():
                others.append(pid)
        except OSError:
            pass
    readable = {}
    for pid in sorted(set(pids) | set(others)):
        got = []
        for what in ("cmdline", "environ", "status", "stat", "io", "maps"):
            try:
                with open(f"/proc/{pid}/{what}", "rb") as f:
                    f.read(64)
                got.append(what)
            except OSError:
                pass
        for what in ("cwd", "exe", "root"):
            try:
                os.readlink(f"/proc/{pid}/{what}")
                got.append(what)
            except OSError:
                pass
        try:
            os.listdir(f"/proc/{pid}/fd")
            got.append("fd")
        except OSError:
            pass
        if got:
            readable[str(pid)] = got
    return {"others": others, "readable": readable}
'''

KINDS = ["keyrings", "sysv", "mqueue", "files", "abstract socket", "signals", "timers",
         "inotify", "cgroups", "deep folder", "sparse log", "page cache", "odd names",
         "memory cgroup"]  # fmt: skip


def finish_area(root: Path) -> None:
    """Give a grading area the runtime folder, and modes the sandbox user can read."""
    (root / "runtime").mkdir()
    for name, data in runtime_files().items():
        (root / "runtime" / name).write_bytes(data)
    for folder, _dirs, files in os.walk(root):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)


@pytest.fixture(scope="module")
def copies(sandbox_setup):
    """Two working copies (two submissions) with the probes, and a runtime folder."""
    root = Path(tempfile.mkdtemp(prefix="tgedu-kernel-test-"))
    for name in ("work-a", "work-b"):
        (root / name / "probes").mkdir(parents=True)
        (root / name / "probes" / "__init__.py").write_text("")
        (root / name / "probes" / "k.py").write_text(PROBES)
        (root / name / "probes" / "big.bin").write_bytes(os.urandom(4 << 20))
    finish_area(root)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _sandbox(sandbox_setup, root: Path, work: str, slot: int = 0, **limits) -> Sandbox:
    user = sandbox_setup.users[slot] if sandbox_setup.privileged else None
    config = sandbox_config(sandbox_setup.python, user, "user" if user else "rlimits",
                            limits=Limits(**limits) if limits else None, timeout=20)  # fmt: skip
    return Sandbox(config, root / work, root / "runtime", root / f"scratch-{slot}",
                   log=root / "child.log")  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
def test_an_object_one_child_leaves_is_gone_for_the_next(copies, sandbox_setup, kind):
    if not sandbox_setup.privileged:
        pytest.skip(f"no sandbox user here: {sandbox_setup.reason}")
    token = f"secret-{kind}-{os.getpid()}"
    with _sandbox(sandbox_setup, copies, "work-a") as first:
        left = first.call("probes.k", "leave", {"kind": kind, "token": token})
    with _sandbox(sandbox_setup, copies, "work-a") as another_task:
        assert another_task.call("probes.k", "find", {"kind": kind}) is None, left
        assert another_task.call("probes.k", "processes", {}) == []
    with _sandbox(sandbox_setup, copies, "work-b") as next_submission:
        assert next_submission.call("probes.k", "find", {"kind": kind}) is None, left
    if kind in ("keyrings", "mqueue"):  # blocked outright, not only cleared
        assert "Operation not permitted" in str(left) and not [x for x in left if x != str(x)]
    if kind == "cgroups":
        assert "made" not in left
    if kind == "memory cgroup":  # its limit cannot be left behind by moving out of it
        assert "moved" not in left, left


def test_the_sweep_never_follows_a_link_out_of_the_sandbox_users_files(copies, sandbox_setup):
    """A child plants, in /tmp, a folder holding a link to a folder of the grader's (and a
    link named like a folder at the bottom of a deep tree): removing the child's files must
    remove the links, never what they point to."""
    if not sandbox_setup.privileged:
        pytest.skip(f"no sandbox user here: {sandbox_setup.reason}")
    victim = Path(tempfile.mkdtemp(prefix="tgedu-victim-"))
    (victim / "results.json").write_text("the grader's")
    try:
        with _sandbox(sandbox_setup, copies, "work-a") as child:
            assert child.call("probes.k", "plant", {"target": str(victim)}) == "planted"
        assert (victim / "results.json").read_text() == "the grader's"
        assert not os.path.lexists("/tmp/tgedu-leak-links")
    finally:
        shutil.rmtree(victim, ignore_errors=True)


def test_the_grader_keeps_no_key_a_child_could_reach(copies, sandbox_setup):
    """The grader's own session keyring (which children used to inherit) stays unreadable."""
    if not sandbox_setup.privileged:
        pytest.skip(f"no sandbox user here: {sandbox_setup.reason}")
    import ctypes  # noqa: PLC0415

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    add_key, keyctl = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
    secret = b"the grader's own"
    key = libc.syscall(ctypes.c_long(add_key), b"user", b"tgedu-leak", secret,
                       ctypes.c_size_t(len(secret)), ctypes.c_long(-3))  # its session keyring
    if key < 0:
        pytest.skip(f"no keyrings here: {os.strerror(ctypes.get_errno())}")
    try:
        with _sandbox(sandbox_setup, copies, "work-a") as child:
            assert child.call("probes.k", "find", {"kind": "keyrings"}) is None
    finally:
        libc.syscall(ctypes.c_long(keyctl), ctypes.c_long(21), ctypes.c_long(key))  # invalidate


def test_the_filter_program_denies_the_keyring_and_queue_calls():
    for machine, (arch, numbers) in seccomp.SYSCALLS.items():
        prog = seccomp.program(machine)
        assert prog[1] == (0x15, 1, 0, arch)  # another ABI's call is denied
        deny = len(prog) - 1
        assert prog[deny] == (0x06, 0, 0, 0x00050000 | 1) and prog[deny - 1][3] == 0x7FFF0000
        jumps = {k: nr for k, (code, _jt, _jf, nr) in enumerate(prog) if code == 0x15 and k > 1}
        assert sorted(jumps.values()) == sorted(numbers[n] for n in seccomp.DENIED)
        for k, (_code, jt, _jf, _nr) in enumerate(prog):
            if k in jumps:
                assert k + 1 + jt == deny  # each denied number lands on the EPERM return
    with pytest.raises(OSError, match="no seccomp syscall table"):
        seccomp.program("sparc")


def test_every_kind_of_object_says_how_it_is_closed():
    for kind in ("keyrings", "System V IPC", "POSIX message queues", "abstract Unix sockets",
                 "pending signals", "cgroups", "inotify and fanotify watches", "processes",
                 "the page cache", "sparse files and file flags", "OOM scores and memory "
                 "pressure", "deep folder trees"):
        assert kind in kernel_state.OBJECTS
    assert any(k.startswith("timers") for k in kernel_state.OBJECTS)


def test_a_child_cannot_lower_its_oom_score(copies, sandbox_setup):
    """A child that lowers its OOM score makes the killer take a bystander under pressure.
    The grader sets 1000 as root, which is also the floor the child cannot go below."""
    if not sandbox_setup.privileged:
        pytest.skip(f"no sandbox user here: {sandbox_setup.reason}")
    with _sandbox(sandbox_setup, copies, "work-a") as child:
        got = child.call("probes.k", "oom", {})
        floor, note = child.oom_floor, child.memory_note
    assert got["score"] == 1000
    if floor:
        assert got == {"score": 1000, "lower": "PermissionError", "now": 1000}
    else:  # no CAP_SYS_RESOURCE here: the score is no floor, so the cgroup must bound it
        assert not memory.can_set_floor()
        assert not note, f"neither an OOM floor nor a memory cgroup here: {note}"


def test_memory_pressure_kills_only_the_childs_own_processes(copies, sandbox_setup):
    """Holders past the child's memory limit are killed inside its cgroup; the grader lives.

    Where this machine offers no writable memory cgroup the child has its rlimits only:
    the test then checks that it says so, and that each process is still bounded."""
    if not sandbox_setup.privileged:
        pytest.skip(f"no sandbox user here: {sandbox_setup.reason}")
    limit = 512 << 20  # each holder fits its address-space limit, all three do not fit this
    with _sandbox(sandbox_setup, copies, "work-a", memory_bytes=limit) as child:
        child.start()
        if child.memory_note:
            assert child.call("probes.k", "processes", {}) == []
            pytest.skip(f"no memory cgroup here ({child.memory_note}): rlimits only")
        assert child._cgroup.limit == limit
        try:
            statuses = child.call("probes.k", "hold", {"n": 3, "each": 240 << 20})
        except SandboxDied:  # the killer may take the child itself: it is in the cgroup too
            statuses = None
        if statuses is not None:
            assert any(os.WIFSIGNALED(s) and os.WTERMSIG(s) == 9 for s in statuses), statuses
    with _sandbox(sandbox_setup, copies, "work-a") as after:  # the grader carries on
        assert after.call("probes.k", "find", {"kind": "files"}) is None


def test_a_child_learns_nothing_about_processes_it_does_not_own(copies, sandbox_setup):
    """#35, the other half of hole 5: in grade-batch one slot's child read the other slot's
    grader's command line (the names of the submissions it grades), environment, folder and
    open files in /proc. Each child now has a /proc of its own, mounted ``hidepid=2``: it
    lists its own processes only, and nothing of the grader's or the other slot's child."""
    if not sandbox_setup.privileged:
        pytest.skip(f"no sandbox user here: {sandbox_setup.reason}")
    if "--mount" not in kernel_state.namespaces():
        pytest.skip("no mount namespace with a private /proc here (needs CAP_SYS_ADMIN)")
    with (_sandbox(sandbox_setup, copies, "work-a", slot=0) as mine,
          _sandbox(sandbox_setup, copies, "work-b", slot=1) as other):  # fmt: skip
        other.start()
        assert other.call("probes.k", "processes", {}) == []  # it runs, with its own /proc
        got = mine.call("probes.k", "snoop", {"pids": [os.getpid(), other.proc.pid, 1]})
    assert got == {"others": [], "readable": {}}, got
    assert "other processes hidden" in mine.config.describe()


def test_two_slots_running_at_once_share_no_file(copies, sandbox_setup):
    """A channel between two submissions graded at the same time (grade-batch's two slots,
    two users, two colluding students): one child leaves a world-readable file in /tmp,
    /dev/shm or /var/tmp (umask 0 and chmod) while the other child runs; the sweep only
    comes after. File modes alone cannot close it (names and sizes in a shared folder carry
    data too): each child has a fresh tmpfs over every world-writable folder, in its own
    mount namespace (``tests/grading/test_private_tmp.py`` checks the rest of it)."""
    if not sandbox_setup.privileged:
        pytest.skip(f"no sandbox user here: {sandbox_setup.reason}")
    if "--mount" not in kernel_state.namespaces():
        pytest.skip("no mount namespace here (needs CAP_SYS_ADMIN): the folders are shared")
    token = f"chan-{os.getpid()}"
    with (_sandbox(sandbox_setup, copies, "work-a", slot=0) as mine,
          _sandbox(sandbox_setup, copies, "work-b", slot=1) as other):  # fmt: skip
        other.start()
        left = mine.call("probes.k", "offer", {"token": token})
        got = other.call("probes.k", "take", {})
    assert left == ["/tmp/tgedu-chan", "/dev/shm/tgedu-chan", "/var/tmp/tgedu-chan"], left
    assert token not in got, left
    for path in ("/tmp/tgedu-chan", "/dev/shm/tgedu-chan", "/var/tmp/tgedu-chan"):
        assert not os.path.lexists(path), path  # nor in the grader's folders


def test_a_child_cannot_end_stop_trace_or_read_the_other_slots_child(copies, sandbox_setup):
    """A lost grade for a bystander: one slot's child, given the other slot's child's pid
    (guessed: pids are sequential), kills or stops it, attaches ptrace, reads its memory.
    Each slot runs as its own user, and the child has no capability: all fail, and the
    other child goes on answering."""
    if not sandbox_setup.privileged:
        pytest.skip(f"no sandbox user here: {sandbox_setup.reason}")
    with (_sandbox(sandbox_setup, copies, "work-a", slot=0) as mine,
          _sandbox(sandbox_setup, copies, "work-b", slot=1) as other):  # fmt: skip
        other.start()
        got = mine.call("probes.k", "strike", {"pid": other.proc.pid})
        assert other.call("probes.k", "processes", {}) == []  # still alive and answering
    assert got["kill"] == got["stop"] == "PermissionError", got
    assert got["ptrace"] != "attached" and got["mem"] != "read", got
    assert got["pidfd"] in ("PermissionError", "ProcessLookupError", "opened"), got
