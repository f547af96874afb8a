"""``backward()`` and ``tg.grad()``: the two ways to ask the engine for gradients."""

from __future__ import annotations

from collections.abc import Sequence

from .engine import GraphTask, execute, make_root
from .factories import zeros_like
from .tensor import Tensor, _edge

__all__ = ["backward", "grad"]


def _as_tuple(x):
    if x is None:
        return None
    return tuple(x) if isinstance(x, Sequence) and not isinstance(x, Tensor) else (x,)


def _run(outputs, grad_outputs, retain_graph, create_graph, inputs=None):
    outputs = _as_tuple(outputs)
    grad_outputs = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise ValueError(
            f"grad_outputs has {len(grad_outputs)} entries but there are {len(outputs)} outputs"
        )
    retain_graph = create_graph if retain_graph is None else retain_graph
    root = make_root(outputs, grad_outputs, create_graph)
    edges = None
    if inputs is not None:
        for i, t in enumerate(inputs):
            if not t.requires_grad:
                raise RuntimeError(
                    f"input {i} does not require grad, so no gradient can be computed for it; "
                    "set requires_grad=True on it before computing the outputs"
                )
        edges = [_edge(t) for t in inputs]
    task = GraphTask(root, retain_graph, create_graph, edges)
    captured = execute(task)
    # an input the outputs reach, whose gradient no rule produced (a flat function), gets zeros
    reached = [e[0] in task.dependencies for e in edges or ()]
    return captured, reached


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the leaves (or only of
    ``inputs``, when given). ``retain_graph`` defaults to ``create_graph``."""
    inputs = _as_tuple(inputs)
    captured, _ = _run(tensors, grad_tensors, retain_graph, create_graph, inputs)
    for t, g in zip(inputs or (), captured):
        if g is not None:
            t._accumulate(g, create_graph)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    allow_unused=False,
):
    r"""The gradients of ``outputs`` w.r.t. ``inputs``, as a tuple; ``.grad`` is not touched.

    Only the nodes needed for ``inputs`` run.

    >>> import tinygrad_edu as tg
    >>> x = tg.tensor(3.0, requires_grad=True)
    >>> (dx,) = tg.grad(x ** 3, x, create_graph=True)   # 3x^2 = 27
    >>> tg.grad(dx, x)[0].item()                        # 6x = 18
    18.0
    """
    inputs = _as_tuple(inputs)
    captured, reached = _run(outputs, grad_outputs, retain_graph, create_graph, inputs)
    result = []
    for i, (t, g, r) in enumerate(zip(inputs, captured, reached)):
        if g is None and r:
            result.append(zeros_like(t))
        elif g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"grad: input {i} (shape {t.shape}) was not used to compute the outputs, so "
                    "it has no gradient; pass allow_unused=True to get None for it"
                )
            result.append(None)
        else:
            result.append(g if isinstance(g, Tensor) else Tensor._make(g, device=t._device))
    return tuple(result)
