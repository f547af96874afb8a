r"""Reductions: ``sum``, ``mean``, ``max`` over axes (numpy's ``axis``/``keepdims``), ``sum_to``
(the reduction that undoes broadcasting) and ``numel``."""

from __future__ import annotations

import math

from .base import Op, ShapeError, normalize_axes, register

__all__ = ["Sum", "Mean", "Max", "SumTo", "Numel", "reduced_shape"]


def reduced_shape(opname, shape, axis, keepdims):
    axes = normalize_axes(opname, axis, len(shape), shape)
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _restore_axes(F, g, axis, keepdims):
    """Put back the axes a reduction removed, so ``g`` broadcasts against the input."""
    return g if keepdims or axis is None else F.expand_dims(g, axis=axis)


class _Reduction(Op):
    def shape(self, shape, axis=None, keepdims=False):
        return reduced_shape(self.name, shape, axis, keepdims)


@register
class Sum(_Reduction):
    r"""$\sum_{axis} x$. $\partial L/\partial x = g$ broadcast back over the summed axes."""

    name = "sum"

    def forward(self, xp, x, axis=None, keepdims=False):
        return xp.sum(x, axis=axis, keepdims=keepdims)

    def vjp(self, F, g, inputs, out, shapes, needs, axis=None, keepdims=False):
        # BEGIN SOLUTION A1.6
        return (F.broadcast_to(_restore_axes(F, g, axis, keepdims), shapes[0]),)
        # END SOLUTION


@register
class Mean(_Reduction):
    r"""Mean over axes. $\partial L/\partial x = g / n$ broadcast back ($n$: elements averaged)."""

    name = "mean"

    def forward(self, xp, x, axis=None, keepdims=False):
        return xp.mean(x, axis=axis, keepdims=keepdims)

    def vjp(self, F, g, inputs, out, shapes, needs, axis=None, keepdims=False):
        g = _restore_axes(F, g, axis, keepdims) / F.numel(shapes[0], axis)
        return (F.broadcast_to(g, shapes[0]),)


@register
class Max(_Reduction):
    r"""Maximum over axes. The gradient goes to the maximal elements, split evenly on ties."""

    name, saves, saves_output = "max", (0,), True

    def forward(self, xp, x, axis=None, keepdims=False):
        return xp.max(x, axis=axis, keepdims=keepdims)

    def vjp(self, F, g, inputs, out, shapes, needs, axis=None, keepdims=False):
        (x,) = inputs
        hit = F.equal(x, _restore_axes(F, out, axis, keepdims))
        mask = F.where(hit, F.ones_like(x), F.zeros_like(x))
        share = mask / F.sum(mask, axis=axis, keepdims=True)
        return (share * _restore_axes(F, g, axis, keepdims),)


@register
class SumTo(Op):
    r"""``sum_to(x, shape)``: sum ``x`` down to ``shape``, undoing a broadcast.

    The second input, when given instead of ``shape``, supplies its shape only.
    $\partial L/\partial x$ = ``broadcast_to(g, x.shape)``.
    """

    name = "sum_to"

    def forward(self, xp, x, like=None, shape=None):
        shape = tuple(like.shape) if shape is None else shape
        lead = x.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, d in enumerate(shape) if d == 1 and x.shape[lead + i] != 1
        )
        if axes:
            x = xp.sum(x, axis=axes, keepdims=True)
        return xp.reshape(x, shape) if tuple(x.shape) != shape else x

    def shape(self, xshape, like=None, shape=None):
        target = like if shape is None else shape
        lead = len(xshape) - len(target)
        if lead < 0 or any(d != 1 and d != xshape[lead + i] for i, d in enumerate(target)):
            raise ShapeError(
                f"sum_to: cannot sum shape {tuple(xshape)} down to {tuple(target)}; the target "
                "must be a shape that broadcasts to the input"
            )
        return tuple(target)

    def vjp(self, F, g, inputs, out, shapes, needs, shape=None):
        return (F.broadcast_to(g, shapes[0]),) + (None,) * (len(shapes) - 1)


@register
class Numel(Op):
    """How many elements of ``like`` lie along ``axis`` (all when None), as a 0-d array.

    Used where a derivative rule needs a count (``mean``) before the shape is known.
    """

    name, differentiable = "numel", False

    def forward(self, xp, like, axis=None):
        shape = tuple(like.shape)
        n = math.prod(shape[a] for a in normalize_axes("numel", axis, len(shape)))
        return xp.asarray(n, dtype=like.dtype)

    def shape(self, shape, axis=None):
        normalize_axes("numel", axis, len(shape), shape)
        return ()
