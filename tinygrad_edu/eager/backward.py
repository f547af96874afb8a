"""``backward()`` and ``grad()`` around the engine's core: the roots, their seed gradients,
and the inputs asked for.

``tensor.backward()`` accumulates into every leaf's ``.grad``; ``tg.autograd.grad(outputs,
inputs)`` (and ``backward(inputs=...)``) wants some inputs only: their gradients are
*captured* as they arrive at the inputs' nodes, and only the nodes on a path from the roots
to those inputs run (``GraphTask.exec_nodes``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as _np

from ..backend import namespace_of
from . import core
from .core import edge as _edge
from .engine import GraphTask, _count_dependencies, execute
from .node import GraphRoot

__all__ = ["backward", "make_root"]


def make_root(tensors, grad_tensors, create_graph) -> GraphRoot:
    """Check the roots and their seed gradients; the GraphRoot node the engine starts from."""
    edges, seeds = [], []
    for t, g in zip(tensors, grad_tensors):
        if not t._requires_grad or (g is None and t._data.size != 1):
            raise _root_error(t)
        if g is None:
            d = t._data
            seed = (_np if type(d) is _np.ndarray else namespace_of(d)).ones_like(d)
            seeds.append(core.new_tensor(seed, t._device) if create_graph else seed)
        else:
            g = _seed(t, g)
            seeds.append(g if create_graph else g._data)
        edges.append(_edge(t))
    return GraphRoot(edges, seeds)


def _root_error(t) -> RuntimeError:
    if not t.requires_grad:
        return RuntimeError(
            "backward: this tensor does not require grad and has no grad_fn, so nothing "
            "can be differentiated; set requires_grad=True on the inputs you want "
            "gradients for (and compute it outside no_grad())"
        )
    return RuntimeError(
        f"backward: a gradient can be created implicitly only for scalar (one-element) "
        f"outputs, and this output has shape {t.shape}; pass gradient= of that shape, "
        "or reduce the output first (e.g. y.sum())"
    )


def _seed(t, g):
    """A seed gradient given for ``t``: a tensor of ``t``'s shape, device and dtype."""
    g = g if isinstance(g, core.Tensor) else core.Tensor(g, dtype=t.dtype, device=t.device)
    if g.shape != t.shape:
        raise RuntimeError(
            f"backward: gradient has shape {g.shape} but the output has shape {t.shape}; "
            "the gradient must match the output's shape"
        )
    if g.device != t.device:
        raise RuntimeError(
            f"backward: gradient is on {g.device} but the output is on {t.device}; "
            f"move it first, e.g. gradient.to('{t.device}')"
        )
    return g if g.dtype == t.dtype else g.astype(t.dtype)


def _as_tuple(x):
    if x is None:
        return None
    return tuple(x) if isinstance(x, Sequence) and not isinstance(x, core.Tensor) else (x,)


def _run(outputs, grad_outputs, retain_graph, create_graph, inputs=None):
    """Run a backward from ``outputs``; with ``inputs``, capture their gradients. Returns the
    captured gradients and, per input, whether the outputs reach it."""
    outputs = _as_tuple(outputs)
    grad_outputs = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise ValueError(
            f"grad_outputs has {len(grad_outputs)} entries but there are {len(outputs)} outputs"
        )
    retain_graph = create_graph if retain_graph is None else retain_graph
    task = GraphTask(make_root(outputs, grad_outputs, create_graph), retain_graph, create_graph)
    if inputs is None:
        return execute(task), []
    _capture(task, inputs)
    captured = execute(task)
    # an input the outputs reach, whose gradient no rule produced (a flat function), gets zeros
    return captured, [_edge(t)[0] in task.dependencies for t in inputs]


def _capture(task, inputs) -> None:
    """Capture the gradients of ``inputs`` and run only the nodes on a path to them."""
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(
                f"input {i} does not require grad, so no gradient can be computed for it; "
                "set requires_grad=True on it before computing the outputs"
            )
    task.captured = [None] * len(inputs)
    for slot, (node, nr) in enumerate(_edge(t) for t in inputs):
        task.captures.setdefault(node, []).append((nr, slot))
    _, parents = _count_dependencies(task.root, True)
    task.exec_nodes = _ancestors(task.captures, parents)
    task.dependencies = {}
    for node in task.exec_nodes:
        for nxt, _ in node.next_functions:
            if nxt is not None:
                task.dependencies[nxt] = task.dependencies.get(nxt, 0) + 1


def _ancestors(targets, parents):
    """Nodes on a path from the root to any target (their gradients are needed)."""
    seen, stack = set(), list(targets)
    while stack:
        for p in parents.get(stack.pop(), ()):
            if p not in seen:
                seen.add(p)
                stack.append(p)
    return seen


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the leaves (or only of
    ``inputs``, when given). ``retain_graph`` defaults to ``create_graph``."""
    inputs = _as_tuple(inputs)
    captured, _ = _run(tensors, grad_tensors, retain_graph, create_graph, inputs)
    for t, g in zip(inputs or (), captured):  # backward(inputs=...): into those inputs only
        if g is not None:
            t._accumulate(g, create_graph)
            for fn in tuple(t._post_acc_hooks or ()):  # a leaf's post-accumulate-grad hooks
                fn((), ())
