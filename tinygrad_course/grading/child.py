"""The sandboxed child: runs probes on submitted code and answers with plain data.

:mod:`tinygrad_course.grading.sandbox` starts it, as the sandbox user, with
``python -I -B child.py WORKDIR REQUEST_FD RESPONSE_FD LIMITS``. Before anything else it
lowers its own resource limits (code it runs later cannot raise them again), offers itself
first to the out-of-memory killer and closes every file it does not need; it joins a fresh
session keyring, empties its user's keyrings and forbids itself the system calls that reach
kernel state outliving it (:mod:`seccomp`, :mod:`kernel_state`). Then, for each
request: import the probe module from WORKDIR (the first import runs the submitted code),
call the probe with the request's arguments, and answer with the result, or with the
exception's type, message and frames (file, line, function; the grader fills in the source
lines from files it trusts).

A message is an 8-byte little-endian length and :mod:`wire` bytes. This file is copied next to
``wire.py``, ``seccomp.py`` and ``kernel_state.py`` and run on its own: it imports nothing
from the package, which in the sandbox is the code under test.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import resource
import struct
import sys
import traceback

__all__ = ["main"]

_OUTPUT_LIMIT = 2000  # characters of a message or of captured output sent back
_FRAMES = 12


def _limit(name: str, value, slack: int = 0) -> None:
    if value is None or not hasattr(resource, name):
        return
    res = getattr(resource, name)
    _, hard = resource.getrlimit(res)
    if hard == resource.RLIM_INFINITY:
        resource.setrlimit(res, (value, value + slack))
    else:
        soft = min(value, hard)
        resource.setrlimit(res, (soft, min(soft + slack, hard)))


def _confine(limits: dict, keep: tuple[int, ...]) -> None:
    _limit("RLIMIT_CPU", limits.get("cpu_seconds"), slack=2)  # SIGXCPU, then SIGKILL
    _limit("RLIMIT_AS", limits.get("memory_bytes"))
    _limit("RLIMIT_DATA", limits.get("memory_bytes"))
    _limit("RLIMIT_NPROC", limits.get("processes"))
    _limit("RLIMIT_FSIZE", limits.get("file_bytes"))
    _limit("RLIMIT_NOFILE", limits.get("open_files"))
    _limit("RLIMIT_CORE", 0)
    with contextlib.suppress(OSError):  # as root the grader already set it, and its floor
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    for name in os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else ():
        fd = int(name)
        if fd > 2 and fd not in keep:
            with contextlib.suppress(OSError):
                os.close(fd)


def _read_exact(fd: int, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _send(fd: int, data: bytes) -> None:
    view = memoryview(struct.pack("<Q", len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _frames(tb, workdir: str) -> list:
    out = []
    for fs in traceback.extract_tb(tb)[-_FRAMES:]:
        name = fs.filename
        if name == __file__:
            continue  # this harness
        if name.startswith(workdir + os.sep):
            name = name[len(workdir) + 1 :]
        elif os.path.isabs(name) or name.startswith("<"):
            name = "<python>"  # the standard library or numpy: not the grader's business
        out.append([name, fs.lineno or 0, fs.name])
    return out


def _error(e: BaseException, workdir: str) -> dict:
    try:
        message = str(e)
    except BaseException:  # noqa: BLE001 - a hostile __str__
        message = "<the exception's message could not be read>"
    return {
        "type": type(e).__name__,
        "message": message[:_OUTPUT_LIMIT],
        "frames": _frames(e.__traceback__, workdir),
    }


def main(argv: list[str]) -> int:
    workdir, req, resp, limits = argv[0], int(argv[1]), int(argv[2]), json.loads(argv[3])
    _confine(limits, (req, resp))
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import kernel_state  # noqa: PLC0415 - only after the limits are in place
    import seccomp  # noqa: PLC0415
    import wire  # noqa: PLC0415

    kernel_state.reset_keyrings()  # before the filter takes keyctl away
    try:
        seccomp.install()
    except OSError as e:  # an unknown architecture: the keyrings were still cleared above
        print(f"tgedu child: no seccomp filter ({e})", file=sys.stderr)

    sys.path.remove(here)
    sys.path.insert(0, workdir)
    os.chdir(os.environ.get("HOME", workdir))
    import numpy  # noqa: F401, PLC0415 - a broken runtime shows here, not in a probe

    while True:
        try:
            size = struct.unpack("<Q", _read_exact(req, 8))[0]
            request = wire.decode(_read_exact(req, size))
        except EOFError:
            return 0
        answer = {"id": request["id"]}
        captured = io.StringIO()
        try:
            with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
                module = importlib.import_module(request["module"])
                value = getattr(module, request["function"])(**request["kwargs"])
            answer.update(ok=True, value=value)
            data = wire.encode({**answer, "output": captured.getvalue()[-_OUTPUT_LIMIT:]})
        except BaseException as e:  # noqa: BLE001 - every failure is the submission's answer
            answer.update(ok=False, error=_error(e, workdir))
            answer["output"] = captured.getvalue()[-_OUTPUT_LIMIT:]
            data = wire.encode(answer)
        _send(resp, data)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
