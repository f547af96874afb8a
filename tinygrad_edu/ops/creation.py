r"""Creation ops: arrays made from attributes alone, with no inputs.

They are the initialisers of Fluid's startup program (``fill_constant``, ``uniform_random``,
``gaussian_random``; see :mod:`tinygrad_edu.symbolic.static.initializer`): a parameter's first value
is one of these ops, run once into a scope.

Beside them, PyTorch's factories that are made from a numpy array (``logspace``,
``tril_indices``, ``triu_indices``): each applies ``clone`` to the array (the engine wraps it),
so this module imports no engine.
"""

from __future__ import annotations

import numpy as _np  # random numbers are drawn with numpy's generator, then moved to xp

from .. import backend
from .base import NO_ONNX_RANDOM, REGISTRY, Op, register
from .surface import declare

__all__ = ["FillConstant", "UniformRandom", "GaussianRandom"]


class _Generator(Op):
    """An op with no inputs whose value comes from its attributes (an initialiser)."""

    arity, differentiable = 0, False

    def shape(self, shape, **attrs):
        return tuple(shape)


@register
class FillConstant(_Generator):
    """``fill_constant(shape, value, dtype)``: an array of ``shape`` holding ``value``."""

    name = "fill_constant"

    def forward(self, xp, shape, value, dtype="float32"):
        return xp.full(tuple(shape), value, dtype=getattr(xp, dtype))

    def onnx(self, ex, node, args):
        a = node.attrs
        value = ex.full(a["shape"], a["value"], a.get("dtype") or "float32")
        return ex.one("Identity", [value], "fill_constant")


@register
class UniformRandom(_Generator):
    """``uniform_random(shape, low, high, seed, dtype)``: uniform on $[low, high)$. The same
    ``seed`` gives the same array; ``seed=None`` draws afresh at every run."""

    name, pure = "uniform_random", False
    onnx = NO_ONNX_RANDOM

    def forward(self, xp, shape, low=-1.0, high=1.0, seed=None, dtype="float32"):
        values = _np.random.default_rng(seed).uniform(low, high, size=tuple(shape))
        return xp.asarray(values.astype(dtype))


@register
class GaussianRandom(_Generator):
    """``gaussian_random(shape, mean, std, seed, dtype)``: normal with ``mean`` and ``std``."""

    name, pure = "gaussian_random", False
    onnx = NO_ONNX_RANDOM

    def forward(self, xp, shape, mean=0.0, std=1.0, seed=None, dtype="float32"):
        values = _np.random.default_rng(seed).normal(mean, std, size=tuple(shape))
        return xp.asarray(values.astype(dtype))


# -- factories with PyTorch's names, made by applying clone to a numpy array -----------------
def _numpy_dtype(opname, dtype, default):
    if dtype is None:
        return _np.dtype(default)
    if isinstance(dtype, str):
        return _np.dtype(dtype.removeprefix("torch."))
    try:
        return _np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{opname}: unknown dtype {dtype!r}") from None


def _made(apply, values, device, requires_grad):
    """A tensor of the engine around the numpy array ``values`` (the engine's class is the
    type of what it makes of an array; the device is the default one unless given)."""
    cls = type(apply(REGISTRY["clone"], values[:0]))
    device = device if device is not None else backend.default_device()
    return cls(values, device=device, requires_grad=requires_grad)


def _logspace(op, apply):
    def logspace(start, end, steps, base=10.0, *, dtype=None, device=None,
                 requires_grad=False):  # fmt: skip
        """``steps`` values from ``base ** start`` to ``base ** end``, evenly spaced in the
        exponent (float32 unless ``dtype``)."""
        if int(steps) < 0:
            raise ValueError(f"logspace: number of steps must be non-negative, got {steps}")
        dt = _numpy_dtype("logspace", dtype, backend.default_float(_np))
        values = _np.power(float(base), _np.linspace(float(start), float(end), int(steps)))
        return _made(apply, values.astype(dt), device, requires_grad)

    return logspace


def _triangle_indices(name, lower):
    def template(op, apply):
        def indices(row, col, offset=0, *, dtype=None, device=None, requires_grad=False):
            if row < 0 or col < 0:
                raise ValueError(f"{name}: row and col must be non-negative, got row={row}, "
                                 f"col={col}")  # fmt: skip
            dt = _numpy_dtype(name, dtype, "int64")
            if dt.kind not in "iu":
                raise TypeError(f"{name}: dtype must be an integer dtype, got {dt}")
            make = _np.tril_indices if lower else _np.triu_indices
            values = _np.stack(make(int(row), int(offset), int(col))).astype(dt)
            return _made(apply, values.reshape(2, -1), device, requires_grad)

        indices.__name__ = indices.__qualname__ = name
        return indices

    return template


declare(None, _logspace, functions=("logspace",), symbolic=False)
declare(None, _triangle_indices("tril_indices", True), functions=("tril_indices",),
        symbolic=False)  # fmt: skip
declare(None, _triangle_indices("triu_indices", False), functions=("triu_indices",),
        symbolic=False)  # fmt: skip
