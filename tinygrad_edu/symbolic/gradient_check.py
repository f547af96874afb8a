"""Gradient checks for the symbolic engine: ``gradients()`` against central differences.

The symbolic counterpart of :func:`tinygrad_edu.autograd.gradcheck`, on graphs rather than
functions of tensors: ``build(*variables)`` builds the graph on float64 Variables, and the
derivative graph that :func:`~tinygrad_edu.symbolic.gradients` adds is run and compared with
finite differences of the forward graph (:mod:`tinygrad_edu.finite_diff`). An array output is
reduced to a scalar by a fixed random projection, so every output element takes part and
errors cannot cancel as they could in a plain sum.

>>> import numpy as np
>>> gradcheck(lambda a, b: (a * b).exp(), [np.ones((2, 3)), np.zeros(3)])
True
>>> gradgradcheck(lambda a: (a * a * a).sum(), [np.array([0.5, -1.0])])
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..finite_diff import GradcheckError, compare_gradients, numeric_gradient, random_projection
from .executor import Executor
from .gradients import gradients
from .tensor_node import Variable, constant

__all__ = ["gradcheck", "gradgradcheck"]


def _setup(build, arrays, names, static_shapes):
    names = list(names) if names is not None else [f"x{i}" for i in range(len(arrays))]
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    xs = [
        Variable(n, shape=a.shape if static_shapes else None, dtype="float64")
        for n, a in zip(names, arrays)
    ]
    y = build(*xs)

    def run(nodes, values):
        return Executor(nodes).run(dict(zip(xs, values)))

    return names, arrays, xs, y, run


def _finish(check, raise_exception: bool) -> bool:
    try:
        check()
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradcheck(
    build: Callable,
    arrays: Sequence[np.ndarray],
    *,
    names: Sequence[str] | None = None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    seed: int = 0,
    static_shapes: bool = True,
) -> bool:
    """Check ``gradients()`` of the graph ``build(*variables)`` at the point ``arrays``.

    Args:
        build: maps float64 Variables (one per array, named ``names``) to the output node.
        arrays: the point (converted to float64).
        names: the Variables' names (default ``x0``, ``x1`` ...); a report names the input.
        eps, atol, rtol: the step, and an element fails when
            ``|analytic - numeric| > atol + rtol * |numeric|`` (as in the eager check).
        raise_exception: on a mismatch raise :class:`~tinygrad_edu.finite_diff.GradcheckError`
            (default) or return False.
        seed: seeds the fixed random projection of an array output.
        static_shapes: False declares no shapes on the Variables, so the derivative rules take
            shapes from the nodes at run time.

    Returns:
        True when every element agrees.
    """
    names, arrays, xs, y, run = _setup(build, arrays, names, static_shapes)

    def check():
        (out,) = run([y], arrays)
        if y.shape is not None and y.shape != out.shape:
            raise GradcheckError(f"gradcheck: the graph's static shape {y.shape} differs from "
                                 f"the computed {out.shape}")  # fmt: skip
        proj = random_projection(out.shape, seed)
        loss = (y * constant(proj)).sum()
        analytic = run(gradients(loss, xs), arrays)
        numeric = numeric_gradient(lambda v: run([y], v)[0], arrays, eps, proj)
        compare_gradients(analytic, numeric, names, atol, rtol)

    return _finish(check, raise_exception)


def gradgradcheck(
    build: Callable,
    arrays: Sequence[np.ndarray],
    *,
    names: Sequence[str] | None = None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    seed: int = 0,
    static_shapes: bool = True,
) -> bool:
    """Check second derivatives: the gradient graph of the first gradients (each projected to
    a scalar), against central differences of the first gradients. Arguments as in
    :func:`gradcheck`; a report says "second derivative"."""
    names, arrays, xs, y, run = _setup(build, arrays, names, static_shapes)

    def check():
        (out,) = run([y], arrays)
        first = gradients((y * constant(random_projection(out.shape, seed))).sum(), xs)
        projs = [random_projection(a.shape, seed + 1 + i) for i, a in enumerate(arrays)]
        second_loss = sum((g * constant(p)).sum() for g, p in zip(first, projs))
        analytic = run(gradients(second_loss, xs), arrays)

        def first_projected(values):
            return sum(float((g * p).sum()) for g, p in zip(run(first, values), projs))

        numeric = numeric_gradient(first_projected, arrays, eps)
        compare_gradients(analytic, numeric, names, atol, rtol, what="second derivative")

    return _finish(check, raise_exception)
