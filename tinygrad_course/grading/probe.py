"""Probes: how a graded test calls the code under test and gets plain data back.

A graded test has two halves. The **probe** is a small function in a probes module of the
suite (``tests/assignments/probes_a1.py``): it builds its inputs from plain arguments, calls
the library, and returns plain data (:mod:`tinygrad_course.grading.wire`). The **check** is the
test body: it compares that data with what it expects. Tests call probes through the ``run``
fixture of the grading plugin::

    def test_topo_sort(run):
        got = run(probes.topo_order, spec=CANONICAL, roots=["E"])
        assert ...

At home, ``run`` calls the probe in the test's own process (arguments and result still go
through the wire format, so they are the same plain data as in the autograder). In the
autograder the probe runs in a sandboxed child with the submission's code
(:mod:`tinygrad_course.grading.sandbox`) and the check runs in the grader, which never imports
submitted code. Whatever goes wrong on the probe's side (an exception, a hang, a crash)
becomes a :class:`SubmissionError`: the test fails with a message for the student.
"""

from __future__ import annotations

import re
import traceback
from pathlib import Path

from . import wire

__all__ = ["SubmissionError", "roundtrip", "call_in_process", "format_error", "probe_name"]

_MESSAGE_LIMIT = 600  # characters of the exception's message shown to the student
_FRAME_LIMIT = 6


class SubmissionError(AssertionError):
    """The code under test raised, hung or crashed while a probe ran it.

    An ``AssertionError``, so pytest reports the test as failed (not as an error in the test).
    """


def roundtrip(value):
    """``value`` after a trip through the wire format (what the other side would receive)."""
    return wire.decode(wire.encode(value))


def probe_name(probe) -> tuple[str, str]:
    """(module, function name) of a probe: a plain function at the top of a module."""
    module, name = getattr(probe, "__module__", None), getattr(probe, "__qualname__", "")
    if not module or not name or "." in name or "<" in name:
        raise TypeError(
            f"run() takes a function defined at the top of a probes module, got {probe!r}"
        )
    return module, name


_HINTS = [
    (r"\[Errno 28\]|No space left on device",
     "the disk is full: your code filled the space the grader gives it by writing files; "
     "your code should not need to write any"),
    (r"\[Errno 27\]|File too large",
     "your code wrote a file larger than the grader allows; it should not need to write any"),
    (r"\[Errno 24\]|Too many open files",
     "your code opened more files than the grader allows; close what you open"),
]


def format_error(error: dict, frames: list[str], output: str = "") -> str:
    """The student's message for an exception raised by the code under test.

    Args:
        error: ``{"type", "message"}`` of the exception.
        frames: the traceback, already rendered as lines (innermost last).
        output: what the code printed (shown only when given).
    """
    message = str(error.get("message", ""))
    if len(message) > _MESSAGE_LIMIT:
        message = message[:_MESSAGE_LIMIT] + " ..."
    text = f"your code raised {error.get('type', 'an exception')}"
    if message:
        text += f": {message}"
    for pattern, hint in _HINTS:
        if re.search(pattern, message):
            text += f"\n({hint})"
    if frames:
        text += "\nTraceback (most recent call last):\n" + "\n".join(frames[-_FRAME_LIMIT:])
    if output:
        text += "\nIt printed:\n" + output[-_MESSAGE_LIMIT:]
    return text


def _local_frames(tb) -> list[str]:
    lines = []
    for fs in traceback.extract_tb(tb):
        if fs.filename == __file__:
            continue
        where = Path(fs.filename)
        parts = where.parts
        for anchor in ("tinygrad_edu", "tinygrad_course", "tests"):
            if anchor in parts:
                where = Path(*parts[parts.index(anchor) :])
                break
        lines.append(f"  {where}, line {fs.lineno}, in {fs.name}")
        if fs.line:
            lines.append(f"    {fs.line}")
    return lines


def call_in_process(probe, kwargs: dict):
    """Run ``probe(**kwargs)`` here; plain data in and out (see :func:`roundtrip`).

    Raises:
        SubmissionError: the probe raised; the original exception is chained.
    """
    probe_name(probe)
    kwargs = roundtrip(kwargs)
    try:
        value = probe(**kwargs)
    except Exception as e:  # noqa: BLE001 - whatever the code under test raises
        error = {"type": type(e).__name__, "message": str(e)}
        raise SubmissionError(format_error(error, _local_frames(e.__traceback__))) from e
    try:
        return roundtrip(value)
    except wire.WireError as e:
        raise TypeError(f"the probe {probe.__qualname__} returned {e}") from None
