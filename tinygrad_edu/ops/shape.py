r"""Ops that move elements without arithmetic: ``reshape``, ``transpose``, ``broadcast_to``,
``expand_dims``, indexing (``getitem``) and its adjoint ``getitem_grad``."""

from __future__ import annotations

import math

import numpy as _np  # shape arithmetic only (a zero-byte view for indexing rules)

from .base import Op, ShapeError, broadcast_shapes, normalize_axes, register

__all__ = ["Reshape", "Transpose", "BroadcastTo", "ExpandDims", "GetItem", "GetItemGrad"]


def _target(like, shape):
    return tuple(like.shape) if shape is None else tuple(shape)


@register
class Reshape(Op):
    r"""Same elements, new shape (one ``-1`` allowed). $\partial L/\partial x$ = g reshaped back."""

    name = "reshape"

    def forward(self, xp, x, like=None, shape=None):
        return xp.reshape(x, _target(like, shape))

    def shape(self, xshape, like=None, shape=None):
        target = tuple(like if shape is None else shape)
        n = math.prod(xshape)
        known = math.prod(d for d in target if d != -1)
        if target.count(-1) > 1 or (n != known if -1 not in target else (known == 0 or n % known)):
            raise ShapeError(
                f"reshape: cannot reshape shape {tuple(xshape)} ({n} elements) into "
                f"{target}; the sizes must multiply to {n}"
            )
        return tuple(n // known if d == -1 else d for d in target)

    def vjp(self, F, g, inputs, out, shapes, needs, shape=None):
        return (F.reshape(g, shapes[0]),) + (None,) * (len(shapes) - 1)


@register
class Transpose(Op):
    r"""Permute axes (reverse them when ``axes`` is None). The gradient un-permutes."""

    name = "transpose"

    def forward(self, xp, x, axes=None):
        if axes is None:
            axes = tuple(range(x.ndim - 1, -1, -1))
        return xp.permute_dims(x, axes)

    def shape(self, xshape, axes=None):
        if axes is None:
            return tuple(reversed(xshape))
        if sorted(a % max(len(xshape), 1) for a in axes) != list(range(len(xshape))):
            raise ShapeError(
                f"transpose: axes {tuple(axes)} are not a permutation of the {len(xshape)} "
                f"axes of shape {tuple(xshape)}"
            )
        return tuple(xshape[a] for a in axes)

    def vjp(self, F, g, inputs, out, shapes, needs, axes=None):
        if axes is None:
            return (F.transpose(g),)
        n = len(axes)
        inverse = [0] * n
        for i, a in enumerate(axes):
            inverse[a % n] = i
        return (F.transpose(g, axes=tuple(inverse)),)


@register
class BroadcastTo(Op):
    r"""Repeat ``x`` along size-1 and new leading axes. $\partial L/\partial x$ = ``sum_to``."""

    name = "broadcast_to"

    def forward(self, xp, x, like=None, shape=None):
        return xp.broadcast_to(x, _target(like, shape))

    def shape(self, xshape, like=None, shape=None):
        target = tuple(like if shape is None else shape)
        try:
            if broadcast_shapes("broadcast_to", xshape, target) == target:
                return target
        except ShapeError:
            pass
        raise ShapeError(
            f"broadcast_to: shape {tuple(xshape)} cannot be broadcast to {target}; each axis "
            "must match the target or be 1"
        )

    def vjp(self, F, g, inputs, out, shapes, needs, shape=None):
        return (F.sum_to(g, shapes[0]),) + (None,) * (len(shapes) - 1)


def _expanded(shape, axis):
    ndim = len(shape) + (1 if isinstance(axis, int) else len(axis))
    axes = normalize_axes("expand_dims", axis, ndim, shape)
    it = iter(shape)
    return tuple(1 if i in axes else next(it) for i in range(len(shape) + len(axes)))


@register
class ExpandDims(Op):
    r"""Insert size-1 axes at ``axis`` (positions in the result). The gradient drops them."""

    name = "expand_dims"

    def forward(self, xp, x, axis):
        return xp.reshape(x, _expanded(tuple(x.shape), axis))

    def shape(self, xshape, axis):
        return _expanded(tuple(xshape), axis)

    def vjp(self, F, g, inputs, out, shapes, needs, axis):
        return (F.reshape(g, shapes[0]),)


def _index_shape(opname, shape, index):
    try:
        return _np.broadcast_to(_np.empty((), dtype=bool), shape)[index].shape
    except (IndexError, TypeError, ValueError) as e:
        raise ShapeError(f"{opname}: index {index!r} does not fit shape {tuple(shape)}: {e}") from e


def _is_basic(index) -> bool:
    """True when the index holds only ints, slices, None and Ellipsis (a view, no copy)."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, int | slice) for p in parts)


@register
class GetItem(Op):
    r"""``x[index]``: slices, ints, ``None``, ``...`` and integer arrays.

    $\partial L/\partial x$ = zeros with ``g`` added at ``index`` (``getitem_grad``), so an
    element picked twice by an integer array gets both gradients.
    """

    name = "getitem"

    def forward(self, xp, x, index):
        rows = _first_axis_array(index)
        if rows is not None:  # `take` is the Array API's spelling of x[int_array]
            return xp.take(x, rows, axis=0)
        return x[index]

    def shape(self, xshape, index):
        return _index_shape(self.name, xshape, index)

    def vjp(self, F, g, inputs, out, shapes, needs, index):
        return (F.getitem_grad(g, shapes[0], index),)


@register
class GetItemGrad(Op):
    r"""``getitem_grad(g, shape, index)``: zeros of ``shape`` with ``g`` *added* at ``index``."""

    name = "getitem_grad"

    def forward(self, xp, g, like=None, shape=None, index=None):
        shape = _target(like, shape)
        z = xp.zeros(shape, dtype=g.dtype)
        if _is_basic(index):
            z[index] = g
            return z
        add = getattr(xp, "add", None)
        if hasattr(add, "at"):  # numpy, CuPy: scatter-add handles repeated indices
            add.at(z, index, g)
            return z
        return _scatter_add_first_axis(xp, z, g, index)

    def shape(self, gshape, like=None, shape=None, index=None):
        target = tuple(like if shape is None else shape)
        want = _index_shape("getitem_grad", target, index)
        if tuple(gshape) != want:
            raise ShapeError(
                f"getitem_grad: gradient of shape {tuple(gshape)} does not fit {target}[{index!r}] "
                f"of shape {want}"
            )
        return target

    def vjp(self, F, gg, inputs, out, shapes, needs, shape=None, index=None):
        return (F.getitem(gg, index=index),) + (None,) * (len(shapes) - 1)


def _first_axis_array(index):
    """The integer array when ``index`` is one 1-D integer array on the first axis
    (``a``, ``(a,)`` or ``(a, ...)``), else None."""
    if isinstance(index, tuple) and (len(index) == 1 or len(index) == 2 and index[1] is Ellipsis):
        index = index[0]
    if hasattr(index, "shape") and len(index.shape) == 1 and "int" in str(index.dtype):
        return index
    return None


def _scatter_add_first_axis(xp, z, g, index):
    """Scatter-add with a one-hot product, for namespaces without ``add.at``
    (the strict array API). Supports one integer array indexing the first axis."""
    idx = _first_axis_array(index)
    if idx is None:
        raise ShapeError(
            f"getitem_grad: this array namespace has no scatter-add; only a 1-D integer array on "
            f"the first axis is supported here, got index {index!r}"
        )
    n = z.shape[0]
    onehot = xp.astype(xp.arange(n)[:, None] == idx[None, :], g.dtype)
    rest = xp.reshape(g, (idx.shape[0], -1))
    return z + xp.reshape(onehot @ rest, z.shape)
