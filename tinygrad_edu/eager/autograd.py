"""``backward()`` and ``tg.grad()``: the two ways to ask the engine for gradients."""

from __future__ import annotations

from .backward import _as_tuple, _run, backward
from .factories import zeros_like
from .tensor import Tensor

__all__ = ["backward", "grad"]


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
