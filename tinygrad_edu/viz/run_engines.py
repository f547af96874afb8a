"""Running a user's function in the three engines, for :func:`~tinygrad_edu.viz.draw.draw_both`:
the symbolic one (Variables, ``gradients()``, an Executor), ours eagerly (leaf tensors, then
``backward()``) and PyTorch (its leaf tensors, then ``backward()``). Nothing here draws: each
function returns the graphs and values that the drawing then shows.

>>> from tinygrad_edu.viz.examples import seed, seed_inputs
>>> out, leaves = run_eager(seed, input_arrays(seed_inputs()))
>>> sorted(leaves), leaves["A"].grad is not None
(['A', 'B', 'C'], True)
"""

from __future__ import annotations

import numpy as np  # the inputs as arrays (no math)

from .torch_graph import require_torch

__all__ = ["input_arrays", "run_symbolic", "run_eager", "run_torch"]


def input_arrays(inputs) -> dict:
    if not inputs:
        raise ValueError("draw_both: pass the inputs as keywords, e.g. draw_both(fn, A=a, B=b)")
    return {
        k: np.asarray(v, dtype=np.float32) if not hasattr(v, "dtype") else np.asarray(v)
        for k, v in inputs.items()
    }


def run_symbolic(fn, arrays):
    """``fn`` on Variables; its gradient graph and every value, by an Executor."""
    from ..symbolic import Executor, Variable, gradients  # noqa: PLC0415

    variables = {k: Variable(k, shape=a.shape, dtype=a.dtype.name) for k, a in arrays.items()}
    y = fn(**variables)
    grads = gradients(y, list(variables.values()))
    values = Executor([y, *grads]).run(
        dict(zip(variables.values(), arrays.values())), return_all=True
    )
    return y, grads, values


def run_eager(fn, arrays, out_name="output"):
    """``fn`` on our eager leaves (named by keyword), then backward (of ``sum`` if needed)."""
    import tinygrad_edu as tg  # noqa: PLC0415

    leaves = {k: tg.tensor(a, requires_grad=True) for k, a in arrays.items()}
    for k, t in leaves.items():
        t.name = k
    out = fn(**leaves)
    if out.name is None:
        out.name = out_name
    if out.grad_fn is None:
        raise ValueError("draw_both: the function's result does not depend on its inputs")
    out.backward(gradient=None if out.numel() == 1 else tg.ones_like(out), retain_graph=True)
    return out, leaves


def run_torch(fn, arrays):
    """``fn`` on PyTorch leaves (``requires_grad=True``), then backward (of ``sum`` if needed)."""
    torch = require_torch("draw_both(..., forms=(..., 'torch'))")
    leaves = {k: torch.tensor(a, requires_grad=True) for k, a in arrays.items()}
    out = fn(**leaves)
    if not isinstance(out, torch.Tensor) or out.grad_fn is None:
        raise ValueError("draw_both: the function's result does not depend on its inputs")
    out.backward(gradient=torch.ones_like(out), retain_graph=True)
    return out, leaves
