"""PyTorch's argument conventions for the ops of :mod:`tinygrad_edu.ops.indexing`: the rows of
the surface table (see :mod:`tinygrad_edu.ops.surface`) that give ``tril``/``triu``, ``flip``,
``roll``, ``index_select``, ``scatter``, ``masked_select``, ``diagonal``, ``unfold`` ... their
PyTorch names and arguments; and the composites ``take_along_dim`` (of ``gather``) and
``index_fill`` (of ``masked_fill``). The ops themselves (forwards, shape rules, derivative
rules) are in ``indexing.py``; this module only parses arguments and declares the rows."""

from __future__ import annotations

import numpy as _np  # the boolean mask of index_fill (a constant), no math on values

from .base import REGISTRY, IndexShapeError, ShapeError, broadcast_shapes, normalize_axes
from .indexing import _axis
from .surface import declare, shape_of

__all__: list = []


def _triangle(op, apply):
    def triangle(input, diagonal=0):
        return apply(op, input, diagonal=diagonal)

    return triangle


def _flip(op, apply):
    def flip(input, *dims):
        dims = dims[0] if len(dims) == 1 and isinstance(dims[0], list | tuple) else dims
        return apply(op, input, dims=tuple(dims))

    return flip


def _flip_function(op, apply):
    def flip(input, dims):  # torch.flip takes the dims as one tuple
        if isinstance(dims, int):
            raise TypeError(f"flip: dims must be a tuple of ints, got {dims!r}; e.g. "
                            f"flip(x, ({dims},))")  # fmt: skip
        return apply(op, input, dims=tuple(dims))

    return flip


def _flip_matrix(axis):
    def template(op, apply):
        def flip_matrix(input):  # fliplr / flipud
            return apply(op, input, dims=(axis,))

        return flip_matrix

    return template


def _roll(op, apply):
    def roll(input, shifts, dims=None):
        shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
        if dims is not None:
            dims = (dims,) if isinstance(dims, int) else tuple(dims)
        return apply(op, input, shifts=shifts, dims=dims)

    return roll


def _index_select(op, apply):
    def index_select(input, dim, index):
        return apply(op, input, index, dim=dim)

    return index_select


def _index_add(op, apply):
    def index_add(input, dim, index, source, *, alpha=1):
        return apply(op, input, index, source, dim=dim, alpha=alpha)

    return index_add


def _scatter(op, apply):
    def scatter(input, dim, index, src=None, *, value=None, reduce=None):
        if reduce is not None:
            raise NotImplementedError("scatter: reduce= is not supported; use scatter_add or "
                                      "scatter_reduce's PyTorch spelling elsewhere")  # fmt: skip
        if (src is None) == (value is None):
            raise TypeError("scatter: give src (a tensor or a number) or value=, not both")
        return apply(op, input, index, src if value is None else value, dim=dim)

    return scatter


def _scatter_add(op, apply):
    """``scatter_add(input, dim, index, src)``: ``input`` plus ``src`` added at ``index`` (a
    composite: ``add`` of ``gather_grad``, the adjoint of ``gather``, so the gradients are
    ``g`` and ``gather(g, dim, index)``)."""
    add, getitem = REGISTRY["add"], REGISTRY["getitem"]

    def scatter_add(input, dim, index, src):
        shape, ishape = shape_of("scatter_add", input), shape_of("scatter_add", index)
        if len(ishape) != len(shape) or len(shape_of("scatter_add", src)) != len(shape):
            raise ShapeError(f"scatter_add: input {shape}, index {ishape} and src "
                             f"{tuple(src.shape)} must have the same number of dims")
        if tuple(src.shape) != ishape:
            src = apply(getitem, src, index=tuple(slice(0, n) for n in ishape))
        return apply(add, input, apply(op, src, index, shape=shape, dim=dim))

    return scatter_add


def _masked_select(op, apply):
    def masked_select(input, mask):
        return apply(op, input, mask)

    return masked_select


def _nonzero(op, apply):
    getitem = REGISTRY["getitem"]

    def nonzero(input, *, as_tuple=False):
        if as_tuple and shape_of("nonzero", input) == ():  # PyTorch: a 0-d input as (1,)
            input = apply(REGISTRY["reshape"], input, shape=(1,))
        out = apply(op, input)
        if not as_tuple:
            return out
        n = max(len(shape_of("nonzero", input)), 1)
        return tuple(apply(getitem, out, index=(slice(None), i)) for i in range(n))

    return nonzero


def _argwhere(op, apply):
    def argwhere(input):
        return apply(op, input)

    return argwhere


def _diagonal(op, apply):
    def diagonal(input, offset=0, dim1=0, dim2=1):
        return apply(op, input, offset=offset, dim1=dim1, dim2=dim2)

    return diagonal


def _diag_embed(op, apply):
    def diag_embed(input, offset=0, dim1=-2, dim2=-1):
        shape = shape_of("diag_embed", input)
        if not shape:
            raise ShapeError("diag_embed: the input must have at least 1 dim, got a 0-d tensor")
        n = shape[-1] + abs(offset)
        out_ndim = len(shape) + 1
        a, b = (normalize_axes("diag_embed", d, out_ndim) for d in (dim1, dim2))
        if a == b:
            raise ShapeError(f"diag_embed: dim1 and dim2 are the same dim ({dim1})")
        rest = iter(shape[:-1])
        target = tuple(n if i in (a[0], b[0]) else next(rest) for i in range(out_ndim))
        return apply(op, input, shape=target, offset=offset, dim1=dim1, dim2=dim2)

    return diag_embed


def _diag(op, apply):
    """``diag(input, diagonal=0)``: a 1-D input becomes a square matrix with it on the
    ``diagonal`` (``diag_embed``); a matrix gives its diagonal (``diagonal``)."""
    embed = _diag_embed(REGISTRY["diagonal_grad"], apply)
    clone = REGISTRY["clone"]

    def diag(input, diagonal=0):
        n = len(shape_of("diag", input))
        if n == 1:
            return embed(input, offset=diagonal, dim1=0, dim2=1)
        if n == 2:  # a copy, as PyTorch's diag (diagonal is the view)
            return apply(clone, apply(op, input, offset=diagonal, dim1=0, dim2=1))
        raise ShapeError(f"diag: the input must be 1-D or 2-D, got {n} dims; use diagonal or "
                         "diag_embed")  # fmt: skip

    return diag


def _trace(op, apply):
    """``trace(input)``: the sum of a matrix's diagonal (``diagonal`` then ``sum``)."""
    total = REGISTRY["sum"]

    def trace(input):
        n = len(shape_of("trace", input))
        if n != 2:
            raise ShapeError(f"trace: expected a matrix (2 dims), got {n} dims")
        return apply(total, apply(op, input, offset=0, dim1=0, dim2=1))

    return trace


def _unfold(op, apply):
    def unfold(input, dimension, size, step):
        return apply(op, input, dim=dimension, size=size, step=step)

    return unfold


def _narrow(op, apply):
    """``narrow(input, dim, start, length)``: the slice ``start:start + length`` of ``dim``
    (indexing with a slice: a view)."""

    op = REGISTRY["getitem"]

    def narrow(input, dim, start, length):
        shape = shape_of("narrow", input)
        d = _axis("narrow", dim, shape)
        start = int(start)
        n = shape[d] if shape else 1
        if start < 0:
            start += n
        if not 0 <= start <= n or length < 0 or start + length > n:
            raise IndexError(f"narrow: start {start} and length {length} do not fit dim {dim} "
                             f"of size {n} (shape {shape})")  # fmt: skip
        return apply(op, input, index=(slice(None),) * d + (slice(start, start + length),))

    return narrow


def _movedim(op, apply):
    """``movedim(input, source, destination)``: dims moved to new places, the others keeping
    their order (a ``permute``)."""

    op = REGISTRY["permute"]

    def movedim(input, source, destination):
        n = len(shape_of("movedim", input))
        src = (source,) if isinstance(source, int) else tuple(source)
        dst = (destination,) if isinstance(destination, int) else tuple(destination)
        if len(src) != len(dst):
            raise ValueError(f"movedim: source {source} and destination {destination} must have "
                             "the same number of dims")  # fmt: skip
        src = [_axis("movedim", s, (0,) * n) for s in src]
        dst = [_axis("movedim", d, (0,) * n) for d in dst]
        if len(set(src)) != len(src) or len(set(dst)) != len(dst):
            raise ValueError(f"movedim: repeated dim in source {source} or destination "
                             f"{destination}")  # fmt: skip
        order = [None] * n
        for s, d in zip(src, dst):
            order[d] = s
        rest = iter(i for i in range(n) if i not in src)
        return apply(op, input, axes=tuple(o if o is not None else next(rest) for o in order))

    return movedim


def _tile(method):
    """``tile(input, dims)``: ``repeat`` with the repeats padded by ones in front when there
    are fewer than dims (numpy's tile). The method also takes the dims one by one."""

    def template(op, apply):
        op = REGISTRY["repeat"]

        def tile(input, *dims):
            if len(dims) == 1 and isinstance(dims[0], list | tuple):
                dims = tuple(dims[0])
            elif not method or not all(isinstance(d, int) for d in dims):
                raise TypeError(f"tile: dims must be a tuple of ints, got {dims!r}")
            n = len(shape_of("tile", input))
            return apply(op, input, repeats=(1,) * (n - len(dims)) + dims)

        if method:
            return tile

        def tile_function(input, dims):  # torch.tile takes the dims as one tuple
            return tile(input, dims)

        return tile_function

    return template


def _repeat_interleave(op, apply):
    """``repeat_interleave(input, repeats, dim=None)``: each element ``repeats`` times in a
    row along ``dim`` (of the flattened input when None). An int ``repeats`` is an
    ``expand`` and a ``reshape``; a tensor of repeats (one per element) is an
    ``index_select`` of the positions repeated."""
    op, expand, reshape = REGISTRY["expand_dims"], REGISTRY["broadcast_to"], REGISTRY["reshape"]

    def repeat_interleave(input, repeats, dim=None, *, output_size=None):
        if dim is None:
            input, dim = apply(reshape, input, shape=(-1,)), 0
        shape = shape_of("repeat_interleave", input)
        d = _axis("repeat_interleave", dim, shape)
        if not shape:
            input, shape = apply(reshape, input, shape=(1,)), (1,)
        if hasattr(repeats, "shape"):
            counts = [int(r) for r in repeats.tolist()] if repeats.shape else [int(repeats)]
            if len(counts) == 1:
                repeats = counts[0]
            else:
                if len(counts) != shape[d] or min(counts) < 0:
                    raise ValueError(f"repeat_interleave: {len(counts)} repeats for dim {dim} of "
                                     f"size {shape[d]}; give one non-negative count per "
                                     "element")  # fmt: skip
                index = [i for i, c in enumerate(counts) for _ in range(c)]
                like = repeats.new_tensor(index) if hasattr(repeats, "new_tensor") else index
                return apply(REGISTRY["index_select"], input, like, dim=d)
        if type(repeats) is not int or repeats < 0:
            raise ValueError(f"repeat_interleave: repeats must be a non-negative int or a tensor "
                             f"of them, got {repeats!r}")  # fmt: skip
        wide = shape[: d + 1] + (repeats,) + shape[d + 1 :]
        out = apply(expand, apply(op, input, axis=d + 1), shape=wide)
        return apply(reshape, out, shape=shape[:d] + (shape[d] * repeats,) + shape[d + 1 :])

    return repeat_interleave


def _take(op, apply):
    """``take(input, index)``: elements of the flattened input at ``index`` (``reshape`` then
    ``index_select``), shaped like ``index``."""
    reshape = REGISTRY["reshape"]

    def take(input, index):
        flat_index = apply(reshape, index, shape=(-1,))
        flat = apply(op, apply(reshape, input, shape=(-1,)), flat_index, dim=0)
        return apply(reshape, flat, shape=shape_of("take", index))

    return take


declare("tril", _triangle, methods=("tril",), functions=("tril",), inplace=("tril_",))
declare("triu", _triangle, methods=("triu",), functions=("triu",), inplace=("triu_",))
declare("flip", _flip, methods=("flip",))
declare("flip", _flip_function, functions=("flip",))
declare("flip", _flip_matrix(1), methods=("fliplr",), functions=("fliplr",))
declare("flip", _flip_matrix(0), methods=("flipud",), functions=("flipud",))
declare("roll", _roll, methods=("roll",), functions=("roll",))
declare("index_select", _index_select, methods=("index_select",), functions=("index_select",))
declare("index_add", _index_add, methods=("index_add",), functions=("index_add",),
        inplace=("index_add_",))  # fmt: skip
declare("scatter", _scatter, methods=("scatter",), functions=("scatter",), inplace=("scatter_",))
declare("gather_grad", _scatter_add, methods=("scatter_add",), functions=("scatter_add",))
declare("masked_select", _masked_select, methods=("masked_select",),
        functions=("masked_select",), symbolic=False)  # fmt: skip
declare("nonzero", _nonzero, methods=("nonzero",), functions=("nonzero",), symbolic=False)
declare("nonzero", _argwhere, methods=("argwhere",), functions=("argwhere",), symbolic=False)
declare("diagonal", _diagonal, methods=("diagonal",), functions=("diagonal",))
declare("diagonal_grad", _diag_embed, methods=("diag_embed",), functions=("diag_embed",))
declare("diagonal", _diag, methods=("diag",), functions=("diag",))
declare("diagonal", _trace, methods=("trace",), functions=("trace",))
declare("unfold", _unfold, methods=("unfold",))
declare(None, _narrow, methods=("narrow",), functions=("narrow",))
declare(None, _movedim, methods=("movedim", "moveaxis"), functions=("movedim", "moveaxis"))
declare(None, _tile(True), methods=("tile",))
declare(None, _tile(False), functions=("tile",))
declare(None, _repeat_interleave, methods=("repeat_interleave",),
        functions=("repeat_interleave",))  # fmt: skip
declare("index_select", _take, methods=("take",), functions=("take",))


def _unflatten(op, apply):
    """``unflatten(input, dim, sizes)``: dim ``dim`` split into ``sizes`` (one may be -1), a
    ``reshape``."""
    reshape = REGISTRY["reshape"]

    def unflatten(input, dim, sizes):
        shape = shape_of("unflatten", input)
        d = _axis("unflatten", dim, shape)
        return apply(reshape, input, shape=shape[:d] + tuple(sizes) + shape[d + 1 :])

    return unflatten


def _tensor_split(op, apply):
    """``tensor_split(input, indices_or_sections, dim=0)``: ``n`` nearly equal pieces (the
    first ``size % n`` one longer), or pieces cut at the given indices (slices: views)."""
    getitem = REGISTRY["getitem"]

    def tensor_split(input, indices_or_sections, dim=0):
        shape = shape_of("tensor_split", input)
        d = _axis("tensor_split", dim, shape)
        n = shape[d]
        if isinstance(indices_or_sections, int):
            k = indices_or_sections
            if k <= 0:
                raise RuntimeError(f"tensor_split: number of sections must be positive, got {k}")
            sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
            cuts = [sum(sizes[:i]) for i in range(1, k)]
        else:
            cuts = [int(i) for i in indices_or_sections]
        bounds = [0, *cuts, n]
        return tuple(apply(getitem, input, index=(slice(None),) * d + (slice(a, max(a, b)),))
                     for a, b in zip(bounds, bounds[1:]))  # fmt: skip

    return tensor_split


def _aminmax(op, apply):
    """``aminmax(input, *, dim=None, keepdim=False)``: ``(min, max)`` (``amin``, ``amax``)."""
    from collections import namedtuple  # noqa: PLC0415

    pair = namedtuple("aminmax", ["min", "max"])

    def aminmax(input, *, dim=None, keepdim=False):
        return pair(*(apply(REGISTRY[k], input, axis=dim, keepdims=keepdim)
                      for k in ("min", "max")))  # fmt: skip

    return aminmax


declare(None, _unflatten, methods=("unflatten",), functions=("unflatten",))
declare(None, _tensor_split, methods=("tensor_split",), functions=("tensor_split",))
declare(None, _aminmax, methods=("aminmax",), functions=("aminmax",))


def _select(op, apply):
    """``select(input, dim, index)``: the slice at ``index`` of ``dim``, that dim dropped
    (indexing with an int: a view)."""
    getitem = REGISTRY["getitem"]

    def select(input, dim, index):
        shape = shape_of("select", input)
        d = _axis("select", dim, shape)
        n = shape[d] if shape else 0
        if not -n <= int(index) < n:
            raise IndexError(f"select: index {index} is out of range for dim {dim} of size {n} "
                             f"(shape {shape})")  # fmt: skip
        # the trailing ``...`` keeps a 0-d result an array (numpy gives a scalar copy for
        # ``x[(i,)]`` of a 1-D ``x``), so the result is a view in every case, as ``x[i]``
        return apply(getitem, input, index=(slice(None),) * d + (int(index), Ellipsis))

    return select


declare(None, _select, methods=("select",), functions=("select",))


# -- take_along_dim and index_fill, composites of gather and masked_fill ---------------------
def _is_int64(x) -> bool:
    return str(getattr(x, "dtype", "")).endswith("int64")


def _take_along_dim(op, apply):
    """``take_along_dim(input, indices, dim=None)``: ``gather`` after broadcasting ``input``
    and ``indices`` against each other in every dim but ``dim`` (``dim=None``: both
    flattened)."""
    gather, reshape, expand = REGISTRY["gather"], REGISTRY["reshape"], REGISTRY["broadcast_to"]

    def take_along_dim(input, indices, dim=None):
        if not _is_int64(indices):
            raise TypeError(f"take_along_dim: indices must be int64, got "
                            f"{getattr(indices, 'dtype', type(indices).__name__)}")  # fmt: skip
        xs, js = shape_of("take_along_dim", input), shape_of("take_along_dim", indices)
        if dim is None:
            return apply(gather, apply(reshape, input, shape=(-1,)),
                         apply(reshape, indices, shape=(-1,)), dim=0)  # fmt: skip
        if len(xs) != len(js):
            raise ShapeError(
                f"take_along_dim: input and indices should have the same number of dims, got "
                f"{len(xs)} (shape {xs}) and {len(js)} (shape {js})"
            )
        d = _axis("take_along_dim", dim, xs)
        if xs:
            rest = broadcast_shapes("take_along_dim", xs[:d] + (1,) + xs[d + 1 :],
                                    js[:d] + (1,) + js[d + 1 :])  # fmt: skip
            xt, jt = rest[:d] + (xs[d],) + rest[d + 1 :], rest[:d] + (js[d],) + rest[d + 1 :]
            input = input if xt == xs else apply(expand, input, shape=xt)
            indices = indices if jt == js else apply(expand, indices, shape=jt)
        return apply(gather, input, indices, dim=d)

    return take_along_dim


def _index_fill(op, apply):
    """``index_fill(input, dim, index, value)``: ``value`` at the positions ``index`` of dim
    ``dim``, a ``masked_fill`` with the mask those positions make."""
    masked_fill = REGISTRY["masked_fill"]

    def index_fill(input, dim, index, value):
        shape = shape_of("index_fill", input)
        d = _axis("index_fill", dim, shape)
        if not _is_int64(index):
            raise IndexError(f"index_fill: expected dtype int64 for index, got "
                             f"{getattr(index, 'dtype', type(index).__name__)}")  # fmt: skip
        idx = _np.asarray(index.tolist() if hasattr(index, "tolist") else index, dtype=_np.int64)
        if idx.ndim > 1:
            raise IndexShapeError(f"index_fill: index has to be a vector or a scalar, got "
                                  f"shape {idx.shape}")  # fmt: skip
        if getattr(value, "ndim", 0):
            raise ShapeError(f"index_fill: expected a number or a 0-dim value tensor, got one "
                             f"of shape {tuple(value.shape)}")  # fmt: skip
        n = shape[d] if shape else 1
        bad = idx[(idx < -n) | (idx >= n)]
        if bad.size:
            raise IndexShapeError(f"index_fill: index {int(bad[0])} is out of bounds for dim "
                                  f"{d} with size {n} (shape {shape})")  # fmt: skip
        mask = _np.zeros(n, dtype=bool)
        mask[idx.reshape(-1)] = True
        mask = mask.reshape((1,) * d + (n,) + (1,) * (len(shape) - d - 1) if shape else ())
        try:
            return apply(masked_fill, input, mask, value)
        except RuntimeError as e:  # index_fill_ of a leaf that requires grad, of a view ...
            raise type(e)(f"index_fill: {e}") from e

    return index_fill


declare(None, _take_along_dim, methods=("take_along_dim",), functions=("take_along_dim",),
        symbolic=False)  # fmt: skip
declare(None, _index_fill, methods=("index_fill",), functions=("index_fill",),
        inplace=("index_fill_",), symbolic=False)  # fmt: skip
