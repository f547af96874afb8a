r"""Joining and aligning several tensors, with PyTorch's names, all composites of ``cat``,
``stack``, ``reshape`` and ``broadcast_to``: ``hstack``, ``vstack``/``row_stack``,
``dstack``, ``column_stack``, ``atleast_1d``/``2d``/``3d``, ``broadcast_tensors``,
``meshgrid``, ``block_diag``, ``cartesian_prod``.

>>> import tinygrad_edu as tg
>>> a, b = tg.tensor([1, 2]), tg.tensor([3, 4])
>>> tg.hstack([a, b]), tg.vstack([a, b]).shape, [t.shape for t in tg.meshgrid(a, b, indexing="ij")]
(tensor([1, 2, 3, 4]), (2, 2), [(2, 2), (2, 2)])
"""

from __future__ import annotations

from .base import REGISTRY, ShapeError, broadcast_shapes
from .surface import declare, shape_of

__all__: list = []


def _tensors(opname, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        tensors = tuple(tensors[0])
    if not tensors:
        raise ValueError(f"{opname}: got no tensors; give at least one")
    for i, t in enumerate(tensors):  # PyTorch takes no Python lists or numbers here
        if not hasattr(t, "shape"):
            raise TypeError(f"{opname}: expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}; convert it first: tg.tensor(...)")
    return tuple(tensors)


def _at_least(apply, x, n):
    """``x`` with dims added to reach ``n``: a 0-d becomes (1,)*n, 1-D (k,) becomes (1, k)
    then (1, k, 1) (numpy's atleast_3d)."""
    shape = shape_of("atleast", x)
    if len(shape) >= n:
        return x
    if n == 3 and len(shape) == 2:
        new = shape + (1,)
    elif n == 3 and len(shape) == 1:
        new = (1,) + shape + (1,)
    else:
        new = (1,) * (n - len(shape)) + shape
    return apply(REGISTRY["reshape"], x, shape=new)


def _atleast(n):
    def template(op, apply):
        def atleast(*tensors):
            many = len(tensors) > 1 or isinstance(tensors[0], list | tuple)
            out = tuple(_at_least(apply, t, n) for t in _tensors(f"atleast_{n}d", tensors))
            return out if many else out[0]

        return atleast

    return template


def _stacker(kind):
    """``hstack``/``vstack``/``dstack``/``column_stack``: ``cat`` along dim 1 (0 for 1-D
    inputs), 0 and 2 after ``atleast_2d``/``3d``; ``column_stack`` makes 1-D inputs
    columns."""

    def template(op, apply):
        cat, reshape = REGISTRY["cat"], REGISTRY["reshape"]

        def stack(tensors, *, out=None):
            if out is not None:
                raise TypeError(f"{kind}: out= is not supported; assign the result instead")
            if not isinstance(tensors, list | tuple):
                raise TypeError(f"{kind}: expects a list or tuple of tensors, got "
                                f"{type(tensors).__name__}")  # fmt: skip
            xs = _tensors(kind, (tensors,))
            if kind == "hstack":
                xs = [_at_least(apply, x, 1) for x in xs]
                return apply(cat, *xs, dim=0 if len(shape_of(kind, xs[0])) == 1 else 1)
            if kind in ("vstack", "row_stack"):
                return apply(cat, *[_at_least(apply, x, 2) for x in xs], dim=0)
            if kind == "dstack":
                return apply(cat, *[_at_least(apply, x, 3) for x in xs], dim=2)
            cols = []  # column_stack
            for x in xs:
                s = shape_of(kind, x)
                cols.append(apply(reshape, x, shape=(max(len(s) and s[0], 1), 1))
                            if len(s) <= 1 else x)  # fmt: skip
            return apply(cat, *cols, dim=1)

        return stack

    return template


def _broadcast_tensors(op, apply):
    def broadcast_tensors(*tensors):
        xs = _tensors("broadcast_tensors", tensors)
        shape = broadcast_shapes("broadcast_tensors", *(shape_of("broadcast_tensors", x)
                                                         for x in xs))  # fmt: skip
        return tuple(x if shape_of("broadcast_tensors", x) == shape else
                     apply(op, x, shape=shape) for x in xs)  # fmt: skip

    return broadcast_tensors


def _meshgrid(op, apply):
    """``meshgrid(*tensors, indexing='ij')``: 1-D inputs spread over a grid (``reshape`` then
    ``broadcast_to``); ``'xy'`` swaps the first two dims, as numpy does."""
    reshape = REGISTRY["reshape"]

    def meshgrid(*tensors, indexing=None):
        xs = _tensors("meshgrid", tensors)
        if indexing is None:
            indexing = "ij"  # PyTorch's default (it warns that it will change)
        if indexing not in ("ij", "xy"):
            raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
        sizes = []
        for x in xs:
            s = shape_of("meshgrid", x)
            if len(s) > 1:
                raise ShapeError(f"meshgrid: expects 0-D or 1-D tensors, got shape {s}")
            sizes.append(s[0] if s else 1)
        n = len(xs)
        swap = indexing == "xy" and n >= 2
        order = [1, 0] + list(range(2, n)) if swap else list(range(n))
        shape = tuple(sizes[i] for i in order)
        out = []
        for i, x in enumerate(xs):
            at = order.index(i)
            lay = tuple(sizes[i] if j == at else 1 for j in range(n))
            out.append(apply(op, apply(reshape, x, shape=lay), shape=shape))
        return tuple(out)

    return meshgrid


def _block_diag(op, apply):
    """``block_diag(*tensors)``: the matrices along a diagonal, zeros elsewhere (``pad``-like
    ``cat`` of zero blocks)."""

    def block_diag(*tensors):
        xs = [_at_least(apply, x, 2) for x in _tensors("block_diag", tensors)]
        for x in xs:
            if len(shape_of("block_diag", x)) > 2:
                raise ShapeError(f"block_diag: expects tensors of at most 2 dims, got shape "
                                 f"{shape_of('block_diag', x)}")  # fmt: skip
        cols = sum(shape_of("block_diag", x)[1] for x in xs)
        rows, left = [], 0
        zeros_like = REGISTRY["zeros_like"]
        for x in xs:
            r, c = shape_of("block_diag", x)
            parts = []
            if left:
                parts.append(_zeros(apply, zeros_like, x, (r, left)))
            parts.append(x)
            if cols - left - c:
                parts.append(_zeros(apply, zeros_like, x, (r, cols - left - c)))
            rows.append(apply(REGISTRY["cat"], *parts, dim=1) if len(parts) > 1 else x)
            left += c
        return apply(REGISTRY["cat"], *rows, dim=0)

    return block_diag


def _zeros(apply, zeros_like, like, shape):
    """Zeros of ``shape`` in ``like``'s dtype and device (a ``zeros_like`` of a broadcast)."""
    flat = apply(REGISTRY["reshape"], apply(REGISTRY["getitem"], like, index=(Ellipsis,
                                                                                slice(0, 0))),
                 shape=(-1,))  # fmt: skip
    zero = apply(REGISTRY["sum"], flat)  # 0-d zero with like's dtype
    return apply(REGISTRY["broadcast_to"], apply(zeros_like, zero), shape=shape)


def _cartesian_prod(op, apply):
    """``cartesian_prod(*tensors)``: every combination of the 1-D inputs' elements, one per
    row (``meshgrid``, ``reshape``, ``stack``)."""
    grid = _meshgrid(op, apply)

    def cartesian_prod(*tensors):
        xs = _tensors("cartesian_prod", tensors)
        if len(xs) == 1:
            return xs[0]
        cols = [apply(REGISTRY["reshape"], g, shape=(-1,)) for g in grid(*xs, indexing="ij")]
        return apply(REGISTRY["stack"], *cols, dim=1)

    return cartesian_prod


for _n in (1, 2, 3):
    declare(None, _atleast(_n), functions=(f"atleast_{_n}d",))
for _kind in ("hstack", "vstack", "row_stack", "dstack", "column_stack"):
    declare(None, _stacker(_kind), functions=(_kind,))
declare("broadcast_to", _broadcast_tensors, functions=("broadcast_tensors",))
declare("broadcast_to", _meshgrid, functions=("meshgrid",))
declare(None, _block_diag, functions=("block_diag",))
declare("broadcast_to", _cartesian_prod, functions=("cartesian_prod",))
