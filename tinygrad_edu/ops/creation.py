r"""Creation ops: arrays made from attributes alone, with no inputs.

They are the initialisers of Fluid's startup program (``fill_constant``, ``uniform_random``,
``gaussian_random``; see :mod:`tinygrad_edu.symbolic.static.initializer`): a parameter's first value
is one of these ops, run once into a scope.
"""

from __future__ import annotations

import numpy as _np  # random numbers are drawn with numpy's generator, then moved to xp

from .base import NO_ONNX_RANDOM, Op, register

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
