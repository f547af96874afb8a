"""Sandboxed children: where submitted code runs, apart from the process that grades it.

A :class:`Sandbox` is one child process for one working copy (the library as the task under
test should see it, plus the probe modules). The grader sends it requests ("call this probe
with these arguments"), it answers with plain data (:mod:`tinygrad_course.grading.wire`). The
child (:mod:`tinygrad_course.grading.child`) runs

- as an **unprivileged user** when the grader is root (``setpriv`` or ``Popen(user=...)``;
  a private network namespace when ``unshare --net`` works), so it cannot read the grader's
  files (hidden tests, the reference solutions, results), write results, or signal the grader;
- with **resource limits** it sets on itself before importing anything submitted: CPU time,
  address space, processes (per user), file size, open files, no core dumps;
- with a **clean environment** (``python -I``, a fixed ``PATH``, one thread per numeric
  library, ``HOME`` in a private scratch folder, ``TMPDIR`` there too or, where the kernel
  allows a mount namespace, in a /tmp of the child's own);
- with **temporary folders of its own** where it has a mount namespace: a fresh tmpfs over
  /tmp, /var/tmp, /dev/shm and every other world-writable folder, with the working copy and
  its scratch folder bound back in (:data:`~tinygrad_course.grading.kernel_state.HIDE_PROCESSES`),
  so a child of another ``grade-batch`` slot, running at the same time, finds nothing there;
- under a **timeout per call**: past it the child's process group is killed;
- with its **own memory**: as root the grader sets the child's OOM score to 1000 and, where
  a memory cgroup can be made, moves it into one of its own
  (:mod:`~tinygrad_course.grading.sandbox_memory`), so memory pressure kills its processes
  and no bystander's;
- with its **own output file** (nameless, shared with no other child) and, as root, the
  page cache of the code it reads emptied first
  (:mod:`~tinygrad_course.grading.page_cache`): nothing an earlier child wrote or read is
  there for it to find.

Without root there is no other user to become: the child runs as the grader's own user, with
the limits and timeouts only (:attr:`SandboxConfig.mode` is ``"rlimits"``). That keeps a
submission from hanging or crashing the run but not from reading files the grader can read;
grade for real as root (Gradescope runs the autograder as root).

After each child, :func:`sweep` ends every process of the sandbox user and deletes what it
left in the places it can write (temporary folders, shared memory, System V IPC), so nothing
carries over from one task's child to the next.

This module is the pipe to the child (:class:`Sandbox`: start it, send requests, read answers,
end it); the rest lives beside it, and every name is importable from here too:
:mod:`~tinygrad_course.grading.sandbox_users` (the sandbox user),
:mod:`~tinygrad_course.grading.sandbox_config` (limits, :class:`SandboxConfig`, the child's
files and environment) and :mod:`~tinygrad_course.grading.sandbox_sweep` (the cleanup).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import struct
import subprocess
import tempfile
import time
from pathlib import Path

from . import kernel_state, page_cache, wire
from .sandbox_config import (
    Limits,
    SandboxConfig,
    _env,
    runtime_files,
    sandbox_config,
    writable_folders,
)
from .sandbox_memory import MemoryCgroup, confine, set_oom_score
from .sandbox_sweep import kill_descendants, remove_tree, sweep
from .sandbox_users import DEFAULT_USER, SandboxError, ensure_user

__all__ = [
    "Limits",
    "SandboxConfig",
    "SandboxError",
    "ProbeFailed",
    "ProbeTimeout",
    "SandboxDied",
    "Sandbox",
    "sandbox_config",
    "ensure_user",
    "sweep",
    "kill_descendants",
    "runtime_files",
    "writable_folders",
    "DEFAULT_USER",
]

class ProbeFailed(Exception):
    """The probe raised inside the child: ``error`` holds its type, message and frames."""

    def __init__(self, error: dict, output: str = ""):
        super().__init__(f"{error.get('type')}: {error.get('message')}")
        self.error, self.output = error, output


class ProbeTimeout(Exception):
    """The child did not answer in time (it was killed)."""


class SandboxDied(Exception):
    """The child ended, or answered with something that is not a valid answer."""

    def __init__(self, message: str, log: str = ""):
        super().__init__(message)
        self.log = log


class Sandbox:
    """One child process serving probe calls for one working copy.

    Args:
        config: how to start it.
        workdir: the working copy (readable by the sandbox user; the child cannot write it).
        runtime: a folder holding :func:`runtime_files`.
        scratch_root: where each child gets its private, writable scratch folder.
        log: a file for the child's stray output (only the grader reads it).
    """

    def __init__(self, config: SandboxConfig, workdir, runtime, scratch_root, log=None):
        self.config = config
        self.workdir, self.runtime = Path(workdir), Path(runtime)
        self.scratch_root = Path(scratch_root)
        self.log = Path(log) if log else None
        self.proc: subprocess.Popen | None = None
        self._req = self._resp = None
        self._scratch: Path | None = None
        self._stage: Path | None = None  # the mount point the child's tmpfs is made on
        self._out: int | None = None  # the running child's output file (the grader's fd)
        self._cgroup: MemoryCgroup | None = None
        self.memory_note = ""  # why the running child has no memory cgroup, if it has none
        self.oom_floor = False  # whether the child cannot lower its OOM score below 1000
        self._count = 0

    # -- lifecycle ------------------------------------------------------------------------
    def _command(self, argv: list[str]):
        c = self.config
        if not c.user:
            return argv, {}
        setpriv = shutil.which("setpriv")
        if setpriv:
            prefix = [shutil.which("unshare"), *c.unshare, "--"] if c.unshare else []
            if self._stage is not None:  # c.unshare has --mount
                # its own /proc, showing it only its own processes, and its own temporary
                # folders, shared with no other child (another slot's runs at the same time)
                python = Path(c.python)
                needed = (self.workdir, self.runtime, self._scratch, python.parent.parent,
                          python.resolve().parent.parent)  # fmt: skip
                mounts = kernel_state.private_folders(c.writable, needed, self._stage)
                prefix += [shutil.which("sh"), "-c", kernel_state.HIDE_PROCESSES, "sh", *mounts]
            prefix += [setpriv, f"--reuid={c.uid}", f"--regid={c.gid}", "--clear-groups",
                       "--no-new-privs", "--inh-caps=-all", "--"]  # fmt: skip
            return prefix + argv, {}
        return argv, {"user": c.uid, "group": c.gid, "extra_groups": []}

    def start(self) -> None:
        """Start a fresh child (a no-op when one is running)."""
        if self.proc is not None and self.proc.poll() is None:
            return
        self._cleanup()
        self._keep_output()  # a child that ended on its own
        c = self.config
        self.scratch_root.mkdir(parents=True, exist_ok=True)
        self._scratch = Path(tempfile.mkdtemp(prefix="scratch-", dir=self.scratch_root))
        if c.user:
            os.chown(self._scratch, c.uid, c.gid)
        os.chmod(self._scratch, 0o700)
        if c.user and "--mount" in c.unshare and shutil.which("setpriv"):  # see _command
            # root's, empty: where the child's tmpfs is put together before it is moved in
            self._stage = Path(tempfile.mkdtemp(prefix="mnt-", dir=self.scratch_root))
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        limits = json.dumps(c.limits.as_dict())
        argv = [c.python, "-I", "-B", str(self.runtime / "child.py"), str(self.workdir),
                str(req_r), str(resp_w), limits]  # fmt: skip
        cmd, kwargs = self._command(argv)
        if c.user:  # no page an earlier child warmed tells this one what that child ran
            page_cache.evict((*page_cache.code_paths(c.python), str(self.workdir),
                              str(self.runtime)))  # fmt: skip
        # Each child writes its stray output to a file of its own, with no name (nobody can
        # open it) and shared with no other child: a file all children append to is a
        # channel (one clears O_APPEND and writes sparse bytes, the next finds them with
        # SEEK_DATA). The grader copies its tail into the log when the child has ended.
        self._out = _private_file(self.log.parent) if self.log else None
        out = self._out if self._out is not None else subprocess.DEVNULL
        try:
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out, cwd=self._scratch,
                env=_env(self._scratch, private_tmp=self._stage is not None),
                pass_fds=(req_r, resp_w), start_new_session=True, umask=0o077, close_fds=True,
                **kwargs,
            )  # fmt: skip
        finally:
            os.close(req_r)
            os.close(resp_w)
        if c.user:
            # before the first request, so before any submitted code runs
            self.oom_floor = set_oom_score(self.proc.pid)
            name = f"tgedu-{os.getpid()}-{self.proc.pid}"
            self._cgroup, self.memory_note = confine(self.proc.pid, c.limits.memory_bytes, name)
        self._req, self._resp = req_w, resp_r
        os.set_blocking(self._req, False)
        os.set_blocking(self._resp, False)

    def close(self) -> None:
        """Kill the child and everything it started; remove its scratch folder."""
        self._kill()
        self._cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _kill(self) -> None:
        proc = self.proc
        if proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
        for fd in (self._req, self._resp):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._req = self._resp = None
        self.proc = None
        if self.config.user:
            sweep(self.config)
        if self._cgroup is not None:
            self._cgroup.remove()
            self._cgroup = None
        self._keep_output()

    def _keep_output(self) -> None:
        """Append the tail of the ended child's output file to the log; close the file."""
        fd, self._out = self._out, None
        if fd is None:
            return
        try:
            size = os.fstat(fd).st_size
            tail = os.pread(fd, _LOG_TAIL, max(0, size - _LOG_TAIL))
            if tail and self.log:
                with open(os.open(self.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600),
                          "ab") as log:  # fmt: skip
                    log.write(tail.replace(b"\0", b""))
        except OSError:
            pass
        finally:
            os.close(fd)

    def _cleanup(self) -> None:
        if self._scratch is not None:
            remove_tree(self._scratch)  # the child may have nested it past rmtree's reach
            self._scratch = None
        if self._stage is not None:  # empty here: its mounts lived in the child's namespace
            remove_tree(self._stage)
            self._stage = None

    def log_tail(self, n: int = 2000) -> str:
        """The end of the child's stray output (for the instructor's log)."""
        if not self.log or not self.log.is_file():
            return ""
        with open(self.log, "rb") as f:
            f.seek(max(0, self.log.stat().st_size - n))
            return f.read().decode("utf-8", "replace")

    # -- calls ----------------------------------------------------------------------------
    def call(self, module: str, function: str, kwargs: dict, timeout: float | None = None):
        """Call ``module.function(**kwargs)`` in the child; return its (decoded) result.

        Raises:
            ProbeFailed: the call raised (the child stays up for the next call).
            ProbeTimeout: no answer within ``timeout`` seconds (the child is killed).
            SandboxDied: the child ended or answered nonsense (it is killed).
        """
        self.start()
        self._count += 1
        rid = f"{os.getpid()}-{self._count}-{os.urandom(6).hex()}"
        request = wire.encode({"id": rid, "module": module, "function": function,
                               "kwargs": kwargs})  # fmt: skip
        deadline = time.monotonic() + (self.config.timeout if timeout is None else timeout)
        try:
            self._write(struct.pack("<Q", len(request)) + request, deadline)
            size = struct.unpack("<Q", self._read(8, deadline))[0]
            if size > wire.MAX_BYTES:
                raise SandboxDied(f"the answer would take {size} bytes")
            answer = wire.decode(self._read(size, deadline))
        except _Timeout:
            self._kill()
            raise ProbeTimeout(
                f"no answer within {self.config.timeout if timeout is None else timeout:g} s"
            ) from None
        except (_Ended, wire.WireError, SandboxDied) as e:
            status = self.proc.poll() if self.proc is not None else None
            with contextlib.suppress(subprocess.TimeoutExpired):
                if self.proc is not None and status is None:
                    status = self.proc.wait(timeout=2)
            self._kill()
            why = _exit_reason(status) if isinstance(e, _Ended) else f"a bad answer ({e})"
            raise SandboxDied(why, self.log_tail()) from None
        if not isinstance(answer, dict) or answer.get("id") != rid:
            self._kill()
            raise SandboxDied("an answer to another request")
        if answer.get("ok") is True:
            return answer.get("value")
        error = answer.get("error")
        if not isinstance(error, dict):
            self._kill()
            raise SandboxDied("a malformed error report")
        raise ProbeFailed(error, str(answer.get("output", ""))[-2000:])

    def _write(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Timeout
            _, ready, _ = select.select([], [self._req], [], left)
            if ready:
                try:
                    view = view[os.write(self._req, view[: 1 << 16]) :]
                except BlockingIOError:
                    continue
                except BrokenPipeError:
                    raise _Ended from None

    def _read(self, n: int, deadline: float) -> bytes:
        chunks, got = [], 0
        while got < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Timeout
            ready, _, _ = select.select([self._resp], [], [], left)
            if ready:
                try:
                    chunk = os.read(self._resp, min(n - got, 1 << 20))
                except BlockingIOError:
                    continue
                if not chunk:
                    raise _Ended
                chunks.append(chunk)
                got += len(chunk)
        return b"".join(chunks)


_LOG_TAIL = 64 << 10  # bytes of a child's output kept in the log


def _private_file(folder: Path) -> int:
    """A new, empty file open for reading and writing that no other process can open by name
    (``O_TMPFILE``; else a file made and unlinked at once, 0600)."""
    folder.mkdir(parents=True, exist_ok=True)
    flag = getattr(os, "O_TMPFILE", 0)
    if flag:
        with contextlib.suppress(OSError):  # a file system without O_TMPFILE
            return os.open(folder, flag | os.O_RDWR, 0o600)
    fd, name = tempfile.mkstemp(prefix=".child-out-", dir=folder)
    os.unlink(name)
    return fd


class _Timeout(Exception):
    pass


class _Ended(Exception):
    pass


def _exit_reason(status) -> str:
    if status is None:
        return "the sandbox stopped answering"
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        hint = {
            "SIGXCPU": " (its CPU time limit)", "SIGKILL": " (killed: a limit, or the "
            "out-of-memory killer)", "SIGXFSZ": " (its file size limit)",
            "SIGSEGV": " (a crash)",
        }.get(name, "")  # fmt: skip
        return f"the process running your code was ended by {name}{hint}"
    return f"the process running your code exited with status {status}"


