"""Run a learner's answer with a time and a memory bound, so that a check survives an endless
loop or a runaway allocation and says what happened.

:func:`run_bounded` forks: the child sets ``RLIMIT_AS`` (its current size plus ``memory``
bytes), captures what it prints, runs the function and sends back its result (or what went
wrong) through a pipe; the parent waits at most ``seconds``, then kills it. Where forking is
unsafe or impossible (no ``os.fork``, as on Windows, or a CUDA context already made in this
process, which a forked child cannot use), the function runs in this process, unbounded.

>>> run_bounded(lambda: 6 * 7)
('ok', 42, '')
>>> status, message, _ = run_bounded(lambda: [0] * 10**12, memory=2**28)
>>> status, "more memory" in message
('memory', True)
>>> run_bounded(lambda: print("hi") or 1)
('ok', 1, 'hi\\n')
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import select
import signal
import sys
import time

__all__ = ["run_bounded", "SECONDS", "MEMORY"]

SECONDS = 20.0  # a check's answer may run this long
MEMORY = 1 << 30  # and allocate this much more than the process holds already (1 GiB)


def _can_fork() -> bool:
    if not hasattr(os, "fork") or sys.platform == "win32":
        return False
    cupy = sys.modules.get("cupy")  # a CUDA context does not survive fork
    return cupy is None


def _vm_size() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _child(fn, write_fd: int, memory: int) -> None:  # pragma: no cover - runs in the child
    import resource  # noqa: PLC0415

    size = _vm_size()
    if size:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (size + memory, size + memory))
    torch = sys.modules.get("torch")
    if torch is not None:  # NOTE: the parent's OpenMP workers are not in the child: use none
        with contextlib.suppress(Exception):
            torch.set_num_threads(1)
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            value = fn()
        payload = ("ok", value, printed.getvalue())
    except MemoryError:
        payload = ("memory", _memory_message(memory), printed.getvalue())
    except BaseException as error:  # noqa: BLE001 - everything goes back to the parent
        payload = ("raised", error, printed.getvalue())
    try:
        data = pickle.dumps(payload)
    except Exception as error:  # noqa: BLE001 - an answer that cannot be sent back
        data = pickle.dumps(("raised", RuntimeError(f"the check's result could not be sent "
                                                    f"back: {error}"), ""))  # fmt: skip
    with os.fdopen(write_fd, "wb") as pipe:
        pipe.write(data)
    os._exit(0)


def _memory_message(memory: int) -> str:
    return (f"your function needed more memory than a check allows ({memory / 2**30:.3g} GiB "
            "more than the notebook holds): does a list or a graph grow without end, or does "
            "a loop keep every intermediate value?")  # fmt: skip


def run_bounded(fn, seconds: float = SECONDS, memory: int = MEMORY):
    """Call ``fn()`` with a time and memory bound.

    Returns:
        ``(status, value, printed)``: ``("ok", result, text printed)``; ``("raised",
        exception, text)`` when ``fn`` raised (the exception travels back by pickle, with its
        traceback as text in ``exception.__notes__``); ``("timeout" | "memory" | "crashed",
        message, text)`` when the child ran too long, ran out of memory or died.
    """
    if not _can_fork():
        try:
            return "ok", fn(), ""
        except BaseException as error:  # noqa: BLE001
            return "raised", error, ""
    read_fd, write_fd = os.pipe()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read_fd)
        try:
            _child(fn, write_fd, memory)
        finally:
            os._exit(1)
    os.close(write_fd)
    chunks, deadline = [], time.monotonic() + seconds
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return "timeout", (f"your function ran past {seconds:g} s and was stopped: is "
                                   "your loop's condition ever false?"), ""  # fmt: skip
            ready, _, _ = select.select([read_fd], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(read_fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
    except BaseException:  # an interrupt while waiting: take the child down too
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        raise
    finally:
        os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGKILL, signal.SIGSEGV):
            return "memory", _memory_message(memory), ""
        return "crashed", f"your function stopped the check's process (status {status})", ""
    return pickle.loads(b"".join(chunks))
