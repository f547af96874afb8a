"""What a trace records (:mod:`~tinygrad_edu.compiler.trace`): the :class:`Trace` itself, where
each graph input comes from (:class:`Source`), each recorded op (:class:`Rec`), a
:class:`GraphBreak`, and the user's line that did something (:func:`user_line`)."""

from __future__ import annotations

import functools
import traceback
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["GraphBreak", "Rec", "Source", "Trace", "user_line"]

_LIBRARY = __name__.rsplit(".", 2)[0]  # "tinygrad_edu"


class GraphBreak(Exception):
    """Tracing cannot continue in one graph here (raised only with ``fullgraph=True``)."""


def user_line() -> str:
    """``file:line (code)`` of the innermost frame outside the library's machinery (the
    user's code: any file outside the library's folder, a package built on it included); a
    notebook cell is "cell line N"; a module of a package is named from its top package's
    folder on (``pkg/sub/mod.py``), the same on every machine."""
    for frame in reversed(traceback.extract_stack()[:-1]):
        path = frame.filename.replace("\\", "/")
        if f"/{_LIBRARY}/" in path:
            continue
        if "ipykernel" in path:
            where = f"cell line {frame.lineno}"
        else:
            where = f"{_package_relative(frame.filename)}:{frame.lineno}"
        return f"{where} ({frame.line})"
    return "<unknown line>"


@functools.lru_cache(maxsize=256)  # tracing asks for the same few files again and again
def _package_relative(filename: str) -> str:
    """``filename`` from its top-level package's folder on, or as it is outside a package."""
    path = Path(filename)
    top = path.parent
    if not (top / "__init__.py").is_file():
        return filename
    while (top.parent / "__init__.py").is_file():
        top = top.parent
    return path.relative_to(top.parent).as_posix()


@dataclass
class Source:
    """Where a graph input's value comes from on each call."""

    kind: str  # "arg" (index into the flat args), "tensor" (its ._data), "grad" (the .grad
    #            of the argument `index`, or of `tensor`), "state" (an optimizer state array),
    #            "scalar" (a number computed per call)
    index: int = -1
    tensor: object = None
    fetch: object = None  # "state"/"scalar": a callable giving the value
    dtype: object = None
    at: int = -1  # "state"/"scalar": the log position where eager read it (after an event)


@dataclass
class Trace:
    """What one trace produced (see the module docstring)."""

    placeholders: list = field(default_factory=list)  # (node, Source)
    guards: list = field(default_factory=list)  # (node, expected bool, line)
    writes: dict = field(default_factory=dict)  # id -> (tensor, node): ._data written back
    grads: dict = field(default_factory=dict)  # id -> (tensor, node or None): .grad set
    grad_reads: set = field(default_factory=set)  # ids of tensors whose old .grad is read
    state_writes: list = field(default_factory=list)  # (setter, node)
    breaks: list = field(default_factory=list)  # (reason, line)
    ops: int = 0
    log: list = field(default_factory=list)  # Rec, one per recorded op
    syncs: list = field(default_factory=list)  # (op count, node read or None)
    whole: list = field(default_factory=list)  # reasons the function cannot be segmented
    effects: list = field(default_factory=list)  # (log position, kind, key, node): each
    #   write, .grad and state write with the log entry that made it ("write", "grad", "state")
    after: list = field(default_factory=list)  # (scheduler, args, kwargs): its step() run
    #   after the program, every call (a captured scheduler step)
    arg_index: dict = field(default_factory=dict)  # id(argument tensor) -> its place: its
    #   writes and .grad go to the call's own argument at that place
    python: list = field(default_factory=list)  # (reason, line): Python side effects, which
    #   make the function run its Python every call (a replay), never one program


@dataclass
class Rec:
    """One recorded op: what a replay checks a later call's op against."""

    op: object
    attrs: dict
    refs: tuple  # per input: ("op", j), ("arg", i), ("tensor", node), ("scalar",), ("value", v)
    node: object
    requires_grad: bool
    shape: tuple = ()  # the eager result's (a replay's stand-in has them)
    dtype: object = None
    event: bool = False  # a training call (op: "backward", "step" or "zero_grad"), no node
    guards: int = 0  # an event's: how many extra guards the trace held when it was made
    index_ref: tuple = None  # `C[ix]` recorded as a gather: where ix came from (as refs)
