"""Errors around the engine's core: messages that name the node, and anomaly mode's checks.

An error raised inside a node's derivative rule is re-raised naming the node and the thread
(and, in anomaly mode, the forward call that created the node: ``Node._trace``); the
original stays its ``__cause__``. In anomaly mode with ``check_nan`` (``tg.autograd.
detect_anomaly()``), a node that returns a NaN stops the backward naming the node.
"""

from __future__ import annotations

import threading

from ..backend import namespace_of
from . import core
from .engine import ATTACHED

__all__: list = []


def _node_error(e, node, grads=None):
    """``e`` with a message that names the node, the thread (and, in anomaly mode, the
    forward call that created the node); the original is its ``__cause__``. A gradient whose
    shape is not the node's output's is named instead of the array library's error."""
    mismatch = _gradient_mismatch(node, grads)
    if mismatch is not None:
        e = RuntimeError(mismatch)
    notes = []
    if node.name() not in str(e):
        thread = threading.current_thread().name
        notes.append(f"(raised in {node.name()} during backward, thread {thread!r})")
    if node._trace:
        notes.append(f"The forward call that created {node.name()}:\n{node._trace}")
    if not notes:
        return e
    message = "\n\n".join([str(e), *notes])
    try:
        error = type(e)(message)
    except Exception:
        error = RuntimeError(f"{type(e).__name__}: {message}")
    error.__cause__ = e
    return error


def _gradient_mismatch(node, grads):
    """The error message when ``node``'s incoming gradient has another shape than the output
    its op made (a tensor whose ``.data`` was set to another shape after the op ran), else
    None. Only called on the error path: the shape rule runs again from the recorded shapes."""
    g = grads[0] if grads else None
    op, shapes = getattr(node, "op", None), getattr(node, "shapes", None)
    if g is None or op is None or not shapes or not hasattr(g, "shape"):
        return None
    try:
        expected = tuple(op.shape(*shapes, **(node.attrs or {})))
    except Exception:
        return None
    if tuple(g.shape) == expected:
        return None
    return (
        f"{node.name()} got a gradient of shape {tuple(g.shape)} for its output of shape "
        f"{expected}: the tensor it made was given another shape after the op ran (x.data = t "
        "with another shape?), so the graph recorded before no longer fits. Set .data before "
        "the ops that use it, or rebuild the graph"
    )


def _check_nan(node, outs):
    for i, g in enumerate(outs):
        data = g._data if isinstance(g, core.Tensor) else g
        if data is not None and bool(namespace_of(data).any(namespace_of(data).isnan(data))):
            raise RuntimeError(
                f"Function '{node.name()}' returned nan values in its {i}th output."
            )


ATTACHED.node_error = _node_error
ATTACHED.check_nan = _check_nan
