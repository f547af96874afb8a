r"""Derivatives by finite differences, in float64: the numeric core of every gradient check.

Engine-independent (numpy arrays in, numpy arrays out), so both engines' checks
(:func:`tinygrad_edu.autograd.gradcheck`, :func:`tinygrad_edu.symbolic.gradcheck`) and the
course's graded tests share it:

$$\partial f/\partial x_i \approx \big(f(x + \epsilon e_i) - f(x - \epsilon e_i)\big) / 2\epsilon$$

with error $O(\epsilon^2)$. A function with an array output is reduced to a scalar by a fixed
random projection $\sum_j p_j f_j(x)$, which checks every output element at once (a plain sum
would miss errors that cancel).

>>> import numpy as np
>>> numeric_gradient(lambda xs: (xs[0] ** 2).sum(), [np.array([1.0, -2.0])])
[array([ 2., -4.])]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = [
    "GradcheckError",
    "random_projection",
    "numeric_gradient",
    "complex_step_gradient",
    "compare_gradients",
]


class GradcheckError(RuntimeError, AssertionError):
    """An analytic derivative disagrees with finite differences.

    A RuntimeError, as PyTorch's ``torch.autograd.GradcheckError``; also an AssertionError,
    because a failed check is a failed assertion (a test that calls a check fails rather than
    errors, and ``pytest.raises(AssertionError)`` keeps catching it).

    Attributes (None where the failure is not about one element):
        output_index: the output whose Jacobian is wrong (eager ``gradcheck``).
        input_index: position of the offending input.
        input_name: its name (a tensor's ``.name``, a Variable's name) or None.
        index: the worst element's index in that input.
        analytic: the engine's value there.
        numeric: the finite-difference value there.
        abs_error: ``|analytic - numeric|``.
        rel_error: ``abs_error / |numeric|``.
    """

    def __init__(self, message, input_index=None, input_name=None, index=None, analytic=None,
                 numeric=None, abs_error=None, rel_error=None, output_index=None):  # fmt: skip
        super().__init__(message)
        self.output_index, self.input_index, self.input_name = output_index, input_index, input_name
        self.index, self.analytic, self.numeric = index, analytic, numeric
        self.abs_error, self.rel_error = abs_error, rel_error


def random_projection(shape, seed: int = 0) -> np.ndarray:
    """A fixed float64 array of ``shape`` with entries in [0.5, 1.5) and random signs."""
    rng = np.random.default_rng(seed)
    return rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def _as_scalar(value, projection) -> float:
    value = np.asarray(value, dtype=np.float64)
    if projection is None:
        return float(value.sum())
    return float((value * projection).sum())


def numeric_gradient(
    f: Callable[[list[np.ndarray]], object],
    arrays: Sequence[np.ndarray],
    eps: float = 1e-6,
    projection: np.ndarray | None = None,
) -> list[np.ndarray]:
    r"""Central-difference gradients of ``f`` with respect to each array.

    Args:
        f: maps a list of float64 arrays to a scalar or an array.
        arrays: the point to differentiate at (copied to float64; not modified).
        eps: the step $\epsilon$.
        projection: for an array output, differentiate $\sum f(x)\odot p$ (a plain sum when
            None).

    Returns:
        One float64 array per input, of its shape.
    """
    point = [np.array(a, dtype=np.float64) for a in arrays]
    grads = []
    for x in point:
        grad = np.zeros_like(x)
        flat, gflat = x.reshape(-1), grad.reshape(-1)  # views: writes reach `x` and `grad`
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + eps
            plus = _as_scalar(f(point), projection)
            flat[i] = old - eps
            minus = _as_scalar(f(point), projection)
            flat[i] = old
            gflat[i] = (plus - minus) / (2 * eps)
        grads.append(grad)
    return grads


def complex_step_gradient(
    f: Callable[[list[np.ndarray]], object],
    arrays: Sequence[np.ndarray],
    projection: np.ndarray | None = None,
    step: float = 1e-100,
) -> list[np.ndarray]:
    r"""Gradients of ``f`` by the complex step, exact to the last few digits in float64.

    $\partial f/\partial x_i = \operatorname{Im} f(x + i h e_i) / h$ for a real-analytic
    ``f`` evaluated in complex arithmetic: nothing is subtracted, so no digit is lost at any
    magnitude (central differences lose about half of them). ``f`` must accept complex
    arrays (numpy's ``exp``, ``log``, ``+``, ``*``, ``@``, ``sum``, ``max`` of real parts
    do).

    >>> complex_step_gradient(lambda xs: np.exp(xs[0]).sum(), [np.array([0.0, 30.0])])
    [array([1.00000000e+00, 1.06864746e+13])]
    """
    point = [np.array(a, dtype=np.complex128) for a in arrays]
    grads = []
    for x in point:
        grad = np.zeros(x.shape, dtype=np.float64)
        flat, gflat = x.reshape(-1), grad.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + 1j * step
            value = np.asarray(f(point))
            if projection is not None:
                value = value * projection
            gflat[i] = float(np.sum(value).imag) / step
            flat[i] = old
        grads.append(grad)
    return grads


def compare_gradients(
    analytic: Sequence[np.ndarray],
    numeric: Sequence[np.ndarray],
    names: Sequence[str] | None = None,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    what: str = "gradient",
) -> None:
    """Raise :class:`GradcheckError` (an AssertionError) naming the input, the worst element,
    both values and the errors when ``|analytic - numeric| > atol + rtol * |numeric|``
    anywhere. ``analytic`` may come from code under test: a wrong type or count fails too."""
    numeric = list(numeric)
    names = list(names) if names is not None else [f"input {i}" for i in range(len(numeric))]
    if isinstance(analytic, str | bytes | dict) or not hasattr(analytic, "__len__"):
        raise GradcheckError(f"{what}: expected a list of {len(numeric)} gradients, got "
                             f"{type(analytic).__name__}")  # fmt: skip
    # NOTE: graded answers come from code under test: a short list must fail, never pass
    # on the gradients it does hold (zip alone would stop at the shorter one)
    if len(analytic) != len(numeric):
        raise GradcheckError(f"{what}: {len(analytic)} gradients for {len(numeric)} inputs "
                             f"({', '.join(names)}); one per input")  # fmt: skip
    for k, (name, a, n) in enumerate(zip(names, analytic, numeric)):
        a = np.asarray(a, dtype=np.float64)
        if a.shape != n.shape:
            raise GradcheckError(
                f"{what} wrt {name}: analytic shape {a.shape} differs from the input's {n.shape}",
                input_index=k, input_name=name,
            )
        excess = np.abs(a - n) - (atol + rtol * np.abs(n))
        if a.size == 0 or not (np.isnan(a).any() or excess.max() > 0):
            continue
        worst = np.unravel_index(int(np.argmax(np.where(np.isnan(a), np.inf, excess))), a.shape)
        av, nv = float(a[worst]), float(n[worst])
        err, index = abs(av - nv), tuple(map(int, worst))
        rel = err / max(abs(nv), 1e-12)
        raise GradcheckError(
            f"{what} wrt {name} (shape {n.shape}) is wrong: worst at index {index}"
            f": analytic {av:.8g}, numeric {nv:.8g}, abs error {err:.3g}, "
            f"rel error {rel:.3g} (atol={atol}, rtol={rtol})",
            input_index=k, input_name=name, index=index, analytic=av, numeric=nv,
            abs_error=err, rel_error=rel,
        )  # fmt: skip
