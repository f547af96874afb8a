"""PyTorch names built from existing ops (issue: the missing names): ``take_along_dim``,
``tensordot``, ``hsplit``/``vsplit``/``dsplit``, ``split_with_sizes``, ``sum_to_size``,
``index_fill``/``index_fill_``, and the factories and helpers ``broadcast_shapes``,
``logspace``, ``tril_indices``, ``triu_indices``.

Each is a row of the surface table (see :mod:`tinygrad_edu.ops.surface`) whose template
applies ops that already have derivative rules (``gather``, ``permute``, ``reshape``,
``matmul``, ``getitem``, ``sum_to``, ``masked_fill``): no rule is written twice. The
factories make their tensor by applying ``clone`` to a numpy array (the engine wraps it),
so this module imports no engine."""

from __future__ import annotations

from math import prod

import numpy as _np

from .. import backend
from ..size import Size
from .base import REGISTRY, IndexShapeError, ShapeError, broadcast_shapes, normalize_axes
from .surface import declare, shape_of

__all__: list = []


def _axis(opname, dim, shape):
    return normalize_axes(opname, dim, max(len(shape), 1), shape)[0]


def _is_int64(x) -> bool:
    return str(getattr(x, "dtype", "")).endswith("int64")


# -- take_along_dim ------------------------------------------------------------------------------
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


# -- tensordot -----------------------------------------------------------------------------------
def _tensordot(op, apply):
    """``tensordot(a, b, dims=2)``: the dims of ``a`` and ``b`` named by ``dims`` (an int:
    the last ``dims`` of ``a`` with the first of ``b``; or two lists) contracted. A
    ``permute`` and ``reshape`` of each operand into a matrix, one ``matmul``, a
    ``reshape``."""
    permute, reshape, matmul = REGISTRY["permute"], REGISTRY["reshape"], REGISTRY["matmul"]

    def tensordot(a, b, dims=2):
        sa, sb = shape_of("tensordot", a), shape_of("tensordot", b)
        if hasattr(dims, "tolist"):
            dims = dims.tolist()
        if isinstance(dims, int):
            if dims < 0:
                raise ShapeError(f"tensordot: expects dims >= 0, but got dims={dims}")
            if dims > min(len(sa), len(sb)):
                raise ShapeError(f"tensordot: dims={dims} is more than the dims of shapes {sa} "
                                 f"and {sb}")  # fmt: skip
            da, db = list(range(len(sa) - dims, len(sa))), list(range(dims))
        else:
            if len(dims) != 2 or any(isinstance(d, int) for d in dims):
                raise TypeError(f"tensordot: dims must be an int or two lists of dims, got "
                                f"{dims!r}")  # fmt: skip
            da, db = (list(d) for d in dims)
            if len(da) != len(db):
                raise ShapeError(f"tensordot: both dimension lists should have same length, got "
                                 f"{da} and {db}")  # fmt: skip
            da = [_axis("tensordot", d, sa) for d in da]
            db = [_axis("tensordot", d, sb) for d in db]
        for i, j in zip(da, db):
            if sa[i] != sb[j]:
                raise ShapeError(
                    f"tensordot: contracted dimensions need to match, but the first (shape "
                    f"{sa}) has size {sa[i]} in dim {i} and the second (shape {sb}) has size "
                    f"{sb[j]} in dim {j}"
                )
        fa = [i for i in range(len(sa)) if i not in da]
        fb = [j for j in range(len(sb)) if j not in db]
        k = prod(sa[i] for i in da)
        ma = apply(reshape, apply(permute, a, axes=tuple(fa + da)),
                   shape=(prod(sa[i] for i in fa), k))  # fmt: skip
        mb = apply(reshape, apply(permute, b, axes=tuple(db + fb)),
                   shape=(k, prod(sb[j] for j in fb)))  # fmt: skip
        return apply(reshape, apply(matmul, ma, mb),
                     shape=tuple(sa[i] for i in fa) + tuple(sb[j] for j in fb))  # fmt: skip

    return tensordot


# -- hsplit, vsplit, dsplit, split_with_sizes ----------------------------------------------------
def _split_along(name, least, pick):
    """numpy's ``hsplit``/``vsplit``/``dsplit``: ``tensor_split`` along one fixed dim, an int
    number of sections only when it divides the dim's size."""

    def template(op, apply):
        getitem = REGISTRY["getitem"]

        def split(input, indices_or_sections):
            shape = shape_of(name, input)
            if len(shape) < least:
                raise ShapeError(f"{name} requires a tensor with at least {least} dims, but got "
                                 f"one of shape {shape}")  # fmt: skip
            d = pick(len(shape))
            n = shape[d]
            if isinstance(indices_or_sections, int):
                k = indices_or_sections
                if k <= 0 or n % k:
                    raise ShapeError(
                        f"{name} attempted to split along dim {d}, but the size of the dim "
                        f"({n}, shape {shape}) is not divisible by the split_size {k}"
                    )
                cuts = [n // k * i for i in range(1, k)]
            else:
                cuts = [int(i) for i in indices_or_sections]
            bounds = [0, *cuts, n]
            return tuple(apply(getitem, input, index=(slice(None),) * d + (slice(a, max(a, b)),))
                         for a, b in zip(bounds, bounds[1:]))  # fmt: skip

        split.__name__ = name
        return split

    return template


def _split_with_sizes(op, apply):
    """``split_with_sizes(input, split_sizes, dim=0)``: ``split`` with a list of sizes that
    must add up to the dim's size."""
    getitem = REGISTRY["getitem"]

    def split_with_sizes(input, split_sizes, dim=0):
        shape = shape_of("split_with_sizes", input)
        d = _axis("split_with_sizes", dim, shape)
        sizes = [int(s) for s in split_sizes]
        n = shape[d] if shape else 1
        if any(s < 0 for s in sizes) or sum(sizes) != n:
            raise ShapeError(
                f"split_with_sizes expects split_sizes to be non-negative and sum exactly to {n} "
                f"(the size of dim {dim} of shape {shape}), but got split_sizes={sizes}"
            )
        pieces, start = [], 0
        for size in sizes:
            index = (slice(None),) * d + (slice(start, start + size), Ellipsis)
            pieces.append(apply(getitem, input, index=index, piece_of="split_with_sizes"))
            start += size
        return tuple(pieces)

    return split_with_sizes


# -- sum_to_size ---------------------------------------------------------------------------------
def _sum_to_size(op, apply):
    """``x.sum_to_size(*size)``: ``x`` summed down to ``size``, which must broadcast to
    ``x``'s shape (the ``sum_to`` op)."""

    def sum_to_size(input, *size):
        if not size:
            raise TypeError("sum_to_size: missing the size (e.g. x.sum_to_size(1, 3))")
        size = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size
        shape = shape_of("sum_to_size", input)
        lead = len(shape) - len(size)
        if lead < 0 or any(s != 1 and s != shape[lead + i] for i, s in enumerate(size)):
            raise ShapeError(f"sum_to_size: size {list(size)} is not expandable to the input's "
                             f"size {list(shape)}")  # fmt: skip
        return apply(op, input, shape=tuple(int(s) for s in size))

    return sum_to_size


# -- index_fill ----------------------------------------------------------------------------------
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


# -- broadcast_shapes and the factories ----------------------------------------------------------
def _broadcast_shapes(op, apply):
    def broadcast_shapes_(*shapes):
        """The shape that ``shapes`` broadcast to (a :class:`~tinygrad_edu.Size`)."""
        parts = []
        for s in shapes:
            s = (s,) if isinstance(s, int) else tuple(s)
            if any(int(v) < 0 for v in s):
                raise ShapeError(f"broadcast_shapes: a shape has a negative size: {s}")
            parts.append(tuple(int(v) for v in s))
        return Size(broadcast_shapes("broadcast_shapes", *parts))

    broadcast_shapes_.__name__ = "broadcast_shapes"
    return broadcast_shapes_


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


declare(None, _take_along_dim, methods=("take_along_dim",), functions=("take_along_dim",),
        symbolic=False)  # fmt: skip
declare(None, _tensordot, functions=("tensordot",), symbolic=False)
declare(None, _split_along("hsplit", 1, lambda n: 0 if n == 1 else 1), methods=("hsplit",),
        functions=("hsplit",), symbolic=False)  # fmt: skip
declare(None, _split_along("vsplit", 2, lambda n: 0), methods=("vsplit",),
        functions=("vsplit",), symbolic=False)  # fmt: skip
declare(None, _split_along("dsplit", 3, lambda n: 2), methods=("dsplit",),
        functions=("dsplit",), symbolic=False)  # fmt: skip
declare(None, _split_with_sizes, methods=("split_with_sizes",),
        functions=("split_with_sizes",), symbolic=False)  # fmt: skip
declare("sum_to", _sum_to_size, methods=("sum_to_size",), symbolic=False)
declare(None, _index_fill, methods=("index_fill",), functions=("index_fill",),
        inplace=("index_fill_",), symbolic=False)  # fmt: skip
declare(None, _broadcast_shapes, functions=("broadcast_shapes",), symbolic=False)
declare(None, _logspace, functions=("logspace",), symbolic=False)
declare(None, _triangle_indices("tril_indices", True), functions=("tril_indices",),
        symbolic=False)  # fmt: skip
declare(None, _triangle_indices("triu_indices", False), functions=("triu_indices",),
        symbolic=False)  # fmt: skip
