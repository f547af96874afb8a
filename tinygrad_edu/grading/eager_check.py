r"""Gradient checks for the eager engine: ``gradcheck`` and ``gradgradcheck``.

``gradcheck(fn, inputs)`` compares the engine's gradient of ``fn`` with central differences,

$$\partial f/\partial x_i \approx \big(f(x + \epsilon e_i) - f(x - \epsilon e_i)\big) / 2\epsilon,$$

for every element of every input that requires grad. A non-scalar output $y = f(x)$ is reduced
to the scalar $\sum_j p_j y_j$ with a fixed random projection $p$ (a vector-Jacobian product:
the engine computes $p^\top J$ in one backward, the differences compute it one element at a
time), so every output element takes part and errors cannot cancel as they could in a plain sum.

``gradgradcheck`` checks second derivatives the same way: the gradient $g(x)$ is computed with
``create_graph=True``, projected to the scalar $\sum_i g_i v_i$ with a second fixed random $v$,
differentiated again by the engine, and compared with central differences of $\sum_i g_i v_i$.

Use float64 inputs: with float32, rounding error ($\approx 10^{-7}/\epsilon$) swamps the
check. Float32 inputs are converted (with a warning).

>>> import numpy as np
>>> import tinygrad_edu as tg
>>> x = tg.tensor(np.array([[0.5, -1.0], [2.0, 0.1]]), requires_grad=True)
>>> gradcheck(lambda t: (t * t).exp(), [x])
True
>>> gradgradcheck(lambda t: t.tanh().sum(), [x])
True
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np

from .gradcheck import numeric_gradient, random_projection

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(AssertionError):
    """An analytic derivative disagrees with finite differences.

    Attributes:
        input_index: position of the offending input in ``inputs``.
        input_name: its ``.name`` (or None).
        index: the worst element's index in that input.
        analytic: the engine's value there.
        numeric: the finite-difference value there.
        abs_error: ``|analytic - numeric|``.
        rel_error: ``abs_error / |numeric|``.
    """

    def __init__(self, message, input_index=None, input_name=None, index=None, analytic=None,
                 numeric=None, abs_error=None, rel_error=None):  # fmt: skip
        super().__init__(message)
        self.input_index, self.input_name, self.index = input_index, input_name, index
        self.analytic, self.numeric = analytic, numeric
        self.abs_error, self.rel_error = abs_error, rel_error


def _tg():
    import tinygrad_edu as tg  # local: grading sits above the engines

    return tg


def _prepare(inputs, what):
    """Float64 copies of the inputs that require grad; everything else passes through."""
    tg = _tg()
    if isinstance(inputs, tg.Tensor):
        inputs = [inputs]
    inputs = list(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, tg.Tensor) and x.requires_grad]
    if not diff:
        raise ValueError(f"{what}: no input requires grad; create them with requires_grad=True")
    arrays = {}
    for i in diff:
        x = inputs[i]
        if "float64" not in str(x.dtype):
            warnings.warn(
                f"{what}: input {i} is {x.dtype}; converting it to float64 because finite "
                "differences in single precision are too noisy to check (pass float64 tensors, "
                "e.g. tg.tensor(np.array(..., dtype=np.float64)), to silence this)",
                UserWarning,
                stacklevel=3,
            )
        arrays[i] = np.array(x.detach().numpy(), dtype=np.float64)
    return inputs, diff, arrays


def _call(fn, inputs, diff, values, requires_grad, what):
    """Run ``fn`` with fresh float64 tensors holding ``values`` at the positions ``diff``."""
    tg = _tg()
    args = list(inputs)
    leaves = []
    for i, v in zip(diff, values):
        t = tg.tensor(v, requires_grad=requires_grad, device=inputs[i].device)
        t.name = inputs[i].name
        args[i] = t
        leaves.append(t)
    out = fn(*args)
    if not isinstance(out, tg.Tensor):
        raise TypeError(f"{what}: fn must return a Tensor, got {type(out).__name__}")
    return out, leaves


def _project(out, proj):
    tg = _tg()
    return (out * tg.tensor(proj, device=out.device)).sum()


def _grads(loss, leaves, create_graph=False):
    """Gradients of ``loss`` for ``leaves``; an input it does not depend on gets None."""
    tg = _tg()
    if not loss.requires_grad:
        return [None] * len(leaves)
    return list(tg.grad(loss, leaves, create_graph=create_graph, allow_unused=True))


def _to_numpy(g, like):
    return np.zeros_like(like) if g is None else np.asarray(g.detach().numpy(), np.float64)


def _compare(analytic, numeric, inputs, diff, atol, rtol, what):
    """Raise GradcheckError at the worst element of the first input that fails."""
    for i, a, n in zip(diff, analytic, numeric):
        if a.shape != n.shape:
            raise GradcheckError(
                f"{what} wrt input {i}: the engine's shape {a.shape} differs from the "
                f"input's {n.shape}",
                input_index=i,
            )
        excess = np.abs(a - n) - (atol + rtol * np.abs(n))
        excess = np.where(np.isnan(a) | np.isnan(n), np.inf, excess)
        if a.size == 0 or excess.max() <= 0:
            continue
        worst = np.unravel_index(int(np.argmax(excess)), a.shape)
        index = tuple(int(k) for k in worst)
        av, nv = float(a[worst]), float(n[worst])
        err = abs(av - nv)
        rel = err / max(abs(nv), 1e-12)
        name = inputs[i].name
        label = f"input {i}" + (f" ({name!r})" if name else "")
        bad = int((excess > 0).sum())
        raise GradcheckError(
            f"{what} wrt {label}, shape {n.shape}: {bad} of {a.size} elements disagree with "
            f"finite differences. Worst at index {index}: engine {av:.8g}, numeric {nv:.8g}, "
            f"abs error {err:.3g}, rel error {rel:.3g} (atol={atol}, rtol={rtol})",
            input_index=i, input_name=name, index=index, analytic=av, numeric=nv,
            abs_error=err, rel_error=rel,
        )  # fmt: skip


def _finish(check, raise_exception):
    try:
        check()
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradcheck(
    fn: Callable,
    inputs: Sequence,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    seed: int = 0,
) -> bool:
    r"""Check the eager engine's first derivatives of ``fn`` against central differences.

    Args:
        fn: maps the inputs (as positional arguments) to a Tensor.
        inputs: a Tensor or a sequence of Tensors (and other arguments passed through as they
            are). Tensors with ``requires_grad`` are checked; use float64.
        eps: the finite-difference step $\epsilon$.
        atol, rtol: an element fails when $|a - n| > \mathrm{atol} + \mathrm{rtol}\,|n|$.
        raise_exception: on a mismatch raise :class:`GradcheckError` (default) or return False.
        seed: seeds the fixed random projection of a non-scalar output.

    Returns:
        True when every element agrees.

    Raises:
        GradcheckError: naming the input (index and ``.name``), the worst element, the engine's
            and the numeric value, and the absolute and relative error.

    >>> import numpy as np
    >>> import tinygrad_edu as tg
    >>> a = tg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    >>> gradcheck(lambda t: t ** 3, [a])
    True
    """
    what = "gradcheck"
    inputs, diff, arrays = _prepare(inputs, what)
    points = [arrays[i] for i in diff]

    def check():
        out, leaves = _call(fn, inputs, diff, points, True, what)
        proj = random_projection(tuple(out.shape), seed)
        analytic = [_to_numpy(g, p) for g, p in zip(_grads(_project(out, proj), leaves), points)]

        def f(values):
            with _tg().no_grad():
                return _call(fn, inputs, diff, values, False, what)[0].numpy()

        numeric = numeric_gradient(f, points, eps, proj)
        _compare(analytic, numeric, inputs, diff, atol, rtol, "gradient")

    return _finish(check, raise_exception)


def gradgradcheck(
    fn: Callable,
    inputs: Sequence,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    seed: int = 0,
) -> bool:
    r"""Check second derivatives: the gradient of $s(x) = \sum_i g_i(x) \cdot v_i$, where
    $g = \nabla_x (p^\top f(x))$ is computed with ``create_graph=True``, against central
    differences of $s$.

    Arguments and errors as in :func:`gradcheck` (the report says "second derivative").

    >>> import numpy as np
    >>> import tinygrad_edu as tg
    >>> a = tg.tensor(np.array([0.3, -0.7]), requires_grad=True)
    >>> gradgradcheck(lambda t: (t * t * t).sum(), [a])
    True
    """
    what = "gradgradcheck"
    inputs, diff, arrays = _prepare(inputs, what)
    points = [arrays[i] for i in diff]
    vs = [random_projection(p.shape, seed + 1 + k) for k, p in enumerate(points)]

    def projected_grad(values, create_graph):
        out, leaves = _call(fn, inputs, diff, values, True, what)
        proj = random_projection(tuple(out.shape), seed)
        grads = _grads(_project(out, proj), leaves, create_graph=create_graph)
        terms = [_project(g, v) for g, v in zip(grads, vs) if g is not None]
        return sum(terms[1:], terms[0]) if terms else None, leaves

    def check():
        s, leaves = projected_grad(points, create_graph=True)
        grads = [None] * len(leaves) if s is None else _grads(s, leaves)
        analytic = [_to_numpy(g, p) for g, p in zip(grads, points)]

        def f(values):
            s_value, _ = projected_grad(values, create_graph=False)
            return 0.0 if s_value is None else s_value.item()

        numeric = numeric_gradient(f, points, eps)
        _compare(analytic, numeric, inputs, diff, atol, rtol, "second derivative")

    return _finish(check, raise_exception)
