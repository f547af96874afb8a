r"""Ops that pick, place and rearrange elements by position, with PyTorch's names:
``tril``/``triu``, ``flip``, ``roll``, ``index_select`` (and its adjoint), ``index_add``,
``scatter``, ``masked_select`` (and its adjoint), ``nonzero``, ``diagonal`` (and its adjoint,
which is also ``diag_embed``), ``unfold`` (and its adjoint); and the composites built on ops:
``narrow``, ``movedim``, ``tile``, ``repeat_interleave``, ``take``, ``scatter_add``, ``diag``,
``diag_embed``, ``trace``.

Index arguments are inputs of the op (integer arrays, never differentiated), so a derivative
rule can read them in every engine. ``diagonal``, ``unfold`` and ``narrow`` return views in
PyTorch, and declare it (``view = True``).

>>> import tinygrad_edu as tg
>>> x = tg.arange(9.0).reshape(3, 3)
>>> x.tril()[1], x.flip(0)[0], x.index_select(1, tg.tensor([2, 0]))[0]
(tensor([3., 4., 0.]), tensor([6., 7., 8.]), tensor([2., 0.]))
"""

from __future__ import annotations

import math

from .base import REGISTRY, Op, ShapeError, broadcast_shapes, normalize_axes, register
from .shape import _static
from .surface import declare, shape_of

__all__ = ["Tril", "Triu", "Flip", "Roll", "IndexSelect", "IndexSelectGrad", "IndexAdd",
           "Scatter", "MaskedSelect", "MaskedSelectGrad", "Nonzero", "Diagonal",
           "DiagonalGrad", "Unfold", "UnfoldGrad"]  # fmt: skip


def _axis(opname, dim, shape):
    return normalize_axes(opname, dim, max(len(shape), 1), shape)[0]


def _moved_last(xp, x, d):
    """``x`` with dim ``d`` moved to the end (and the permutation that undoes it)."""
    n = x.ndim
    perm = [i for i in range(n) if i != d] + [d]
    back = [0] * n
    for i, p in enumerate(perm):
        back[p] = i
    return xp.permute_dims(x, tuple(perm)), tuple(back)


def _add_along(xp, z, d, index, src):
    """``z`` with ``src`` added at positions ``index`` (1-D) along dim ``d``; repeated
    positions add up. numpy and CuPy scatter with ``add.at``; other namespaces (the strict
    Array API) with a one-hot product."""
    add = getattr(xp, "add", None)
    if hasattr(add, "at"):
        add.at(z, (slice(None),) * d + (index,), src)
        return z
    n = z.shape[d]
    onehot = xp.astype(xp.reshape(index, (-1, 1)) == xp.reshape(xp.arange(n), (1, -1)), z.dtype)
    moved, back = _moved_last(xp, src, d)
    return z + xp.permute_dims(moved @ onehot, back)


# -- triangles, flips, rolls ------------------------------------------------------------------
class _Triangle(Op):
    """The lower (``tril``) or upper (``triu``) triangle of the last two dims, the rest zero;
    ``diagonal`` shifts the edge. The gradient keeps the same triangle of $g$."""

    _lower = True

    def forward(self, xp, x, diagonal=0):
        n, m = x.shape[-2], x.shape[-1]
        offset = xp.reshape(xp.arange(m), (1, m)) - xp.reshape(xp.arange(n), (n, 1))
        keep = offset <= diagonal if self._lower else offset >= diagonal
        return xp.where(keep, x, xp.zeros_like(x))

    def shape(self, shape, diagonal=0):
        if len(shape) < 2:
            raise ShapeError(f"{self.name}: input of shape {tuple(shape)} has {len(shape)} dims, "
                             "but it needs at least 2 (a matrix or a batch of them)")  # fmt: skip
        return tuple(shape)

    def vjp(self, F, g, inputs, out, shapes, needs, diagonal=0):
        return (getattr(F, self.name)(g, diagonal=diagonal),)


@register
class Tril(_Triangle):
    __doc__ = _Triangle.__doc__
    name = "tril"


@register
class Triu(_Triangle):
    __doc__ = _Triangle.__doc__
    name, _lower = "triu", False


@register
class Flip(Op):
    r"""Reverse the order along ``dims`` (a copy, as in PyTorch). The gradient flips back."""

    name = "flip"

    def forward(self, xp, x, dims=()):
        if not (x.ndim and dims):
            return xp.asarray(x, copy=True)
        # a copy: numpy's flip is a view, PyTorch's is not
        return xp.asarray(xp.flip(x, axis=tuple(dims)), copy=True)

    def shape(self, shape, dims=()):
        normalize_axes(self.name, tuple(dims), max(len(shape), 1), shape)
        return tuple(shape)

    def vjp(self, F, g, inputs, out, shapes, needs, dims=()):
        return (F.flip(g, dims=dims),)


@register
class Roll(Op):
    r"""Shift elements by ``shifts`` along ``dims``, wrapping around (the flattened input when
    ``dims`` is None). The gradient rolls back by $-$``shifts``."""

    name = "roll"

    def forward(self, xp, x, shifts=(), dims=None):
        self.shape(x.shape, shifts, dims)
        if dims is None:
            return xp.reshape(xp.roll(xp.reshape(x, (-1,)), shifts[0]), x.shape)
        return xp.roll(x, tuple(shifts), axis=tuple(dims))

    def shape(self, shape, shifts=(), dims=None):
        if dims is None and len(shifts) != 1 or dims is not None and len(dims) != len(shifts):
            raise ShapeError(f"roll: shifts {tuple(shifts)} and dims {dims} must have the same "
                             "length (one shift when dims is not given)")  # fmt: skip
        if dims is not None:
            for d in dims:
                _axis(self.name, d, shape)
        return tuple(shape)

    def vjp(self, F, g, inputs, out, shapes, needs, shifts=(), dims=None):
        return (F.roll(g, shifts=tuple(-s for s in shifts), dims=dims),)


# -- index_select, index_add, scatter ---------------------------------------------------------
def _index_vector(opname, ishape):
    if len(ishape) > 1:
        raise ShapeError(f"{opname}: index must be 1-D (or 0-d), got shape {tuple(ishape)}")


@register
class IndexSelect(Op):
    r"""``index_select(x, dim, index)``: the slices of ``x`` at positions ``index`` (1-D)
    along ``dim``. $\partial L/\partial x$ adds $g$ back at those positions
    (``index_select_grad``)."""

    name, arity, saves = "index_select", 2, (1,)

    def forward(self, xp, x, index, dim=0):
        self.shape(x.shape, index.shape, dim)
        if not x.ndim:
            return xp.asarray(x, copy=True)
        return xp.take(x, xp.reshape(index, (-1,)), axis=_axis(self.name, dim, x.shape))

    def shape(self, xshape, ishape, dim=0):
        _index_vector(self.name, ishape)
        if not len(xshape):
            return ()
        d = _axis(self.name, dim, xshape)
        return tuple(xshape[:d]) + (math.prod(ishape),) + tuple(xshape[d + 1 :])

    def vjp(self, F, g, inputs, out, shapes, needs, dim=0):
        if shapes[0] == ():
            return (g, None)
        return (F.with_shape("index_select_grad", shapes[0], g, inputs[1], dim=dim), None)


@register
class IndexSelectGrad(Op):
    r"""Zeros of ``shape`` with $g$ *added* at positions ``index`` along ``dim`` (the adjoint
    of ``index_select``)."""

    name, arity, saves = "index_select_grad", 2, (1,)

    def forward(self, xp, g, index, like=None, shape=None, dim=0):
        shape = tuple(like.shape) if shape is None else tuple(shape)
        z = xp.zeros(shape, dtype=g.dtype)
        return _add_along(xp, z, _axis(self.name, dim, shape), xp.reshape(index, (-1,)), g)

    def shape(self, gshape, ishape, like=None, shape=None, dim=0):
        return tuple(like if shape is None else shape)

    def vjp(self, F, gg, inputs, out, shapes, needs, shape=None, dim=0):
        return (F.index_select(gg, inputs[1], dim=dim), None) + (None,) * (len(shapes) - 2)


@register
class IndexAdd(Op):
    r"""``index_add(x, dim, index, source, alpha)``: $x$ with $\alpha\,$``source`` added at
    positions ``index`` along ``dim``. $\partial L/\partial x = g$;
    $\partial L/\partial \mathrm{source} = \alpha\,$``index_select(g, dim, index)``."""

    name, arity, saves = "index_add", 3, (1,)

    def forward(self, xp, x, index, source, dim=0, alpha=1):
        self.shape(x.shape, index.shape, source.shape, dim)
        src = source * alpha if alpha != 1 else source
        src = xp.astype(src, x.dtype) if src.dtype != x.dtype else src
        out = xp.asarray(x, copy=True)
        return _add_along(xp, out, _axis(self.name, dim, x.shape), xp.reshape(index, (-1,)), src)

    def shape(self, xshape, ishape, sshape, dim=0, alpha=1):
        _index_vector(self.name, ishape)
        d = _axis(self.name, dim, xshape)
        want = tuple(xshape[:d]) + (math.prod(ishape),) + tuple(xshape[d + 1 :])
        if tuple(sshape) != want and len(xshape):
            raise ShapeError(f"index_add: source of shape {tuple(sshape)} does not fit input "
                             f"{tuple(xshape)} with {math.prod(ishape)} indices along dim {dim}: "
                             f"it must have shape {want}")  # fmt: skip
        return tuple(xshape)

    def vjp(self, F, g, inputs, out, shapes, needs, dim=0, alpha=1):
        gs = F.index_select(g, inputs[1], dim=dim) if needs[2] else None
        return (g if needs[0] else None, None, gs * alpha if gs is not None and alpha != 1 else gs)


def _grid(xp, index, d):
    """An open grid of positions shaped like ``index``, with ``index`` itself on dim ``d``."""
    n = len(index.shape)
    grid = [xp.reshape(xp.arange(s), tuple(s if j == i else 1 for j in range(n)))
            for i, s in enumerate(index.shape)]  # fmt: skip
    grid[d] = index
    return tuple(grid)


@register
class Scatter(Op):
    r"""``scatter(x, dim, index, src)``: $x$ with ``src`` (a tensor, or a number) written at
    ``index`` along ``dim`` (``out[i][index[i][j]] = src[i][j]`` for ``dim=1``).
    $\partial L/\partial x$ = $g$ with zeros where written; $\partial L/\partial
    \mathrm{src}$ = ``gather(g, dim, index)``."""

    name, arity, saves = "scatter", 3, (1,)

    def forward(self, xp, x, index, src, dim=0):
        self.shape(x.shape, index.shape, getattr(src, "shape", ()), dim)
        out = xp.asarray(x, copy=True)
        if not x.ndim:
            return out
        d = _axis(self.name, dim, x.shape)
        if hasattr(src, "shape") and src.ndim:
            src = src[tuple(slice(0, n) for n in index.shape)]
        src = xp.astype(xp.asarray(src), x.dtype) if getattr(src, "dtype", None) != x.dtype else src
        if hasattr(getattr(xp, "add", None), "at"):  # numpy, CuPy: write through an open grid
            out[_grid(xp, index, d)] = src
            return out
        # other namespaces (the strict Array API): the adjoint of gather marks the places
        spread = REGISTRY["gather_grad"].forward
        src = xp.broadcast_to(src, tuple(index.shape))
        hit = spread(xp, xp.ones(tuple(index.shape), dtype=x.dtype), index, shape=x.shape, dim=d)
        return xp.where(hit > 0, spread(xp, src, index, shape=x.shape, dim=d), out)

    def shape(self, xshape, ishape, sshape, dim=0):
        d = _axis(self.name, dim, xshape)
        if len(ishape) != len(xshape) or any(
            i != d and a > b for i, (a, b) in enumerate(zip(ishape, xshape))
        ) or len(sshape) and (len(sshape) != len(ishape)
                              or any(a > b for a, b in zip(ishape, sshape))):  # fmt: skip
            raise ShapeError(
                f"scatter: index of shape {tuple(ishape)} does not fit input {tuple(xshape)} and "
                f"src {tuple(sshape)} along dim {dim}: it needs as many dims, none larger than "
                f"src's, nor than the input's except dim {dim}"
            )
        return tuple(xshape)

    def vjp(self, F, g, inputs, out, shapes, needs, dim=0):
        gx = F.scatter(g, inputs[1], 0.0, dim=dim) if needs[0] else None
        gs = None
        if needs[2]:
            gs = F.gather(g, inputs[1], dim=dim)
            src, index = (_static(self.name, shapes[i]) for i in (2, 1))
            if src != index:  # src larger than index: zeros elsewhere
                gs = F.getitem_grad(gs, shapes[2], tuple(slice(0, n) for n in shapes[1]))
        return gx, None, gs


# -- masked_select and nonzero: data-dependent shapes (eager only) -----------------------------
@register
class MaskedSelect(Op):
    r"""``masked_select(x, mask)``: the elements of $x$ where ``mask`` (broadcast together)
    holds, as a 1-D array. $\partial L/\partial x$ puts $g$ back at those places
    (``masked_select_grad``)."""

    name, arity, saves = "masked_select", 2, (1,)

    def forward(self, xp, x, mask):
        _bool_mask(self.name, mask)
        shape = broadcast_shapes(self.name, x.shape, mask.shape)
        return xp.broadcast_to(x, shape)[xp.broadcast_to(mask, shape)]

    def shape(self, xshape, mshape):
        broadcast_shapes(self.name, xshape, mshape)
        return None  # known only from the mask's values

    def vjp(self, F, g, inputs, out, shapes, needs):
        full = broadcast_shapes(self.name, *(_static(self.name, s) for s in shapes))
        gx = F.masked_select_grad(g, inputs[1], shape=full)
        return (F.sum_to(gx, shapes[0]), None)


def _bool_mask(opname, mask):
    if "bool" not in str(mask.dtype):
        raise TypeError(f"{opname}: the mask must be a bool tensor, got {mask.dtype}; make one "
                        "with a comparison (x > 0) or mask.bool()")  # fmt: skip


@register
class MaskedSelectGrad(Op):
    r"""Zeros of ``shape`` with $g$ written where ``mask`` (broadcast to ``shape``) holds (the
    adjoint of ``masked_select``)."""

    name, arity, saves = "masked_select_grad", 2, (1,)

    def forward(self, xp, g, mask, shape=()):
        z = xp.zeros(tuple(shape), dtype=g.dtype)
        z[xp.broadcast_to(mask, tuple(shape))] = g
        return z

    def shape(self, gshape, mshape, shape=()):
        return tuple(shape)

    def vjp(self, F, gg, inputs, out, shapes, needs, shape=()):
        return (F.masked_select(gg, inputs[1]), None)


@register
class Nonzero(Op):
    """The positions of the nonzero elements, one row each: an int64 array of shape
    ``(count, ndim)``. Not differentiable."""

    name, differentiable = "nonzero", False

    def forward(self, xp, x):
        if not x.ndim:
            return xp.zeros((1 if bool(x) else 0, 0), dtype=xp.int64)
        return xp.astype(xp.stack(xp.nonzero(x), axis=1), xp.int64)

    def shape(self, shape):
        return None  # known only from the values


# -- diagonals and sliding windows -------------------------------------------------------------
def _diag_geometry(opname, shape, offset, dim1, dim2):
    """The two dims (non-negative), the start row and column, and the diagonal's length."""
    n = len(shape)
    if n < 2:
        raise ShapeError(f"{opname}: input of shape {tuple(shape)} needs at least 2 dims")
    a, b = (normalize_axes(opname, d, n, shape)[0] for d in (dim1, dim2))
    if a == b:
        raise ShapeError(f"{opname}: dim1 and dim2 are the same dim ({dim1}); give two dims")
    r0, c0 = max(-offset, 0), max(offset, 0)
    length = max(min(shape[a] - r0, shape[b] - c0), 0)
    return a, b, r0, c0, length


def _onehot_diagonal(xp, n, m, r0, c0, length, dtype):
    """An array (length, n * m): row l is one at the place (l + r0, l + c0) of an n x m
    matrix."""
    flat = xp.reshape(xp.arange(n * m), (1, n * m))
    where = xp.reshape((xp.arange(length) + r0) * m + xp.arange(length) + c0, (length, 1))
    return xp.astype(flat == where, dtype)


@register
class Diagonal(Op):
    r"""The diagonal of the dims ``dim1``, ``dim2`` (shifted by ``offset``), as a last dim (a
    view in PyTorch). The gradient writes $g$ back on the diagonal (``diagonal_grad``)."""

    name, view = "diagonal", True

    def forward(self, xp, x, offset=0, dim1=0, dim2=1):
        a, b, r0, c0, length = _diag_geometry(self.name, x.shape, offset, dim1, dim2)
        strided = _strided(xp)
        if strided is not None:  # numpy, CuPy: a writable view, as PyTorch's
            rest = [i for i in range(x.ndim) if i not in (a, b)]
            start = x[tuple(slice(r0, None) if i == a else slice(c0, None) if i == b else
                            slice(None) for i in range(x.ndim))] if length else x  # fmt: skip
            return strided(start, tuple(x.shape[i] for i in rest) + (length,),
                           tuple(x.strides[i] for i in rest) + (x.strides[a] + x.strides[b],))
        rest = [i for i in range(x.ndim) if i not in (a, b)]
        moved = xp.permute_dims(x, tuple(rest) + (a, b))
        n, m = x.shape[a], x.shape[b]
        flat = xp.reshape(moved, moved.shape[:-2] + (n * m,))
        return flat @ xp.permute_dims(_onehot_diagonal(xp, n, m, r0, c0, length, x.dtype),
                                      (1, 0))  # fmt: skip

    def shape(self, shape, offset=0, dim1=0, dim2=1):
        a, b, r0, c0, length = _diag_geometry(self.name, shape, offset, dim1, dim2)
        return tuple(d for i, d in enumerate(shape) if i not in (a, b)) + (length,)

    def vjp(self, F, g, inputs, out, shapes, needs, offset=0, dim1=0, dim2=1):
        return (F.with_shape("diagonal_grad", shapes[0], g, offset=offset, dim1=dim1,
                             dim2=dim2),)  # fmt: skip


@register
class DiagonalGrad(Op):
    r"""Zeros of ``shape`` with the last dim of $g$ written on the diagonal of ``dim1``,
    ``dim2`` (the adjoint of ``diagonal``; ``diag_embed`` is this op)."""

    name = "diagonal_grad"

    def forward(self, xp, g, like=None, shape=None, offset=0, dim1=0, dim2=1):
        shape = tuple(like.shape) if shape is None else tuple(shape)
        a, b, r0, c0, length = _diag_geometry(self.name, shape, offset, dim1, dim2)
        n, m = shape[a], shape[b]
        flat = g @ _onehot_diagonal(xp, n, m, r0, c0, length, g.dtype)  # (..., n * m)
        moved = xp.reshape(flat, tuple(g.shape[:-1]) + (n, m))
        rest = [i for i in range(len(shape)) if i not in (a, b)]
        perm = tuple(rest) + (a, b)
        back = [0] * len(shape)
        for i, p in enumerate(perm):
            back[p] = i
        return xp.permute_dims(moved, tuple(back))

    def shape(self, gshape, like=None, shape=None, offset=0, dim1=0, dim2=1):
        target = tuple(like if shape is None else shape)
        want = Diagonal.shape(self, target, offset, dim1, dim2)
        if tuple(gshape) != want:
            raise ShapeError(f"diagonal_grad: a diagonal of shape {tuple(gshape)} does not fit "
                             f"{target} (offset {offset}, dims {dim1}, {dim2}): it must be "
                             f"{want}")  # fmt: skip
        return target

    def vjp(self, F, gg, inputs, out, shapes, needs, shape=None, offset=0, dim1=0, dim2=1):
        return (F.diagonal(gg, offset=offset, dim1=dim1, dim2=dim2),) + (None,) * (
            len(shapes) - 1)


def _strided(xp):
    """``as_strided(x, shape, strides)`` making a view that writes through (numpy, CuPy), or
    None for namespaces without strides (the strict Array API: a copy instead)."""
    lib = getattr(getattr(xp, "lib", None), "stride_tricks", None)
    fn = getattr(lib, "as_strided", None)
    if fn is None:
        return None

    def strided(x, shape, strides):
        try:  # numpy: writable where x is
            return fn(x, shape=shape, strides=strides, writeable=bool(x.flags.writeable))
        except (TypeError, AttributeError):  # CuPy: no writeable= (its arrays always are)
            return fn(x, shape=shape, strides=strides)

    return strided


def _windows(xp, n, size, step):
    count = (n - size) // step + 1
    return xp.reshape(xp.reshape(xp.arange(count) * step, (count, 1))
                      + xp.reshape(xp.arange(size), (1, size)), (-1,)), count  # fmt: skip


@register
class Unfold(Op):
    r"""``x.unfold(dim, size, step)``: every window of ``size`` elements along ``dim``, ``step``
    apart, as a new last dim (a view in PyTorch). The gradient adds each window's $g$ back
    (``unfold_grad``)."""

    name, view = "unfold", True

    def forward(self, xp, x, dim=0, size=1, step=1):
        self.shape(x.shape, dim, size, step)
        if not x.ndim:
            return xp.reshape(x, (1,))
        d = _axis(self.name, dim, x.shape)
        strided = _strided(xp)
        if strided is not None:  # numpy, CuPy: a view, as PyTorch's
            count = (x.shape[d] - size) // step + 1
            shape = tuple(x.shape[:d]) + (count,) + tuple(x.shape[d + 1 :]) + (size,)
            strides = list(x.strides) + [x.strides[d]]
            strides[d] *= step
            return strided(x, shape, tuple(strides))
        index, count = _windows(xp, x.shape[d], size, step)
        picked = xp.take(x, index, axis=d)  # (..., count * size, ...)
        shape = tuple(x.shape[:d]) + (count, size) + tuple(x.shape[d + 1 :])
        picked = xp.reshape(picked, shape)
        perm = tuple(i for i in range(len(shape)) if i != d + 1) + (d + 1,)
        return xp.permute_dims(picked, perm)

    def shape(self, shape, dim=0, size=1, step=1):
        if not len(shape):
            if size > 1:
                raise ShapeError(f"unfold: size {size} is larger than a 0-d tensor's 1 element")
            return (1,)
        d = _axis(self.name, dim, shape)
        if step < 1 or size < 0 or size > shape[d]:
            raise ShapeError(f"unfold: size {size} and step {step} do not fit dim {dim} of shape "
                             f"{tuple(shape)}; size must be at most {shape[d]} and step at "
                             "least 1")  # fmt: skip
        count = (shape[d] - size) // step + 1
        return tuple(shape[:d]) + (count,) + tuple(shape[d + 1 :]) + (size,)

    def vjp(self, F, g, inputs, out, shapes, needs, dim=0, size=1, step=1):
        return (F.with_shape("unfold_grad", shapes[0], g, dim=dim, size=size, step=step),)


@register
class UnfoldGrad(Op):
    r"""Zeros of ``shape`` with each window of $g$ added back where ``unfold`` took it (the
    adjoint of ``unfold``: overlapping windows add up)."""

    name = "unfold_grad"

    def forward(self, xp, g, like=None, shape=None, dim=0, size=1, step=1):
        shape = tuple(like.shape) if shape is None else tuple(shape)
        if not shape:
            return xp.reshape(g, ())
        d = _axis(self.name, dim, shape)
        index, count = _windows(xp, shape[d], size, step)
        n = len(shape)
        perm = tuple(range(d + 1)) + (n,) + tuple(range(d + 1, n))  # the window dim back
        g = xp.permute_dims(g, perm)
        g = xp.reshape(g, tuple(shape[:d]) + (count * size,) + tuple(shape[d + 1 :]))
        return _add_along(xp, xp.zeros(shape, dtype=g.dtype), d, index, g)

    def shape(self, gshape, like=None, shape=None, dim=0, size=1, step=1):
        return tuple(like if shape is None else shape)

    def vjp(self, F, gg, inputs, out, shapes, needs, shape=None, dim=0, size=1, step=1):
        return (F.unfold(gg, dim=dim, size=size, step=step),) + (None,) * (len(shapes) - 1)


# -- public surfaces: rows beside the ops (see tinygrad_edu.ops.surface) ---------------------
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
        return apply(getitem, input, index=(slice(None),) * d + (int(index),))

    return select


declare(None, _select, methods=("select",), functions=("select",))
