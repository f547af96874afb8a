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

from .base import (
    NO_ONNX_GRAD,
    REGISTRY,
    NoOnnx,
    Op,
    ShapeError,
    broadcast_shapes,
    normalize_axes,
    register,
)
from .shape import _static
from .surface import declare

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

    def onnx(self, ex, node, args):
        k = ex.const(node.attrs.get("diagonal", 0), "k", "int64")
        return ex.one("Trilu", [args[0], k], self.name, upper=int(not self._lower))


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

    def onnx(self, ex, node, args):  # a Slice that steps back along each flipped dim
        rank = len(ex.need_shape(node.inputs[0], "flip"))
        dims = sorted({d % rank for d in node.attrs.get("dims", ())}) if rank else []
        if not dims:
            return ex.one("Identity", args, "flip")
        n, big = len(dims), 2**63 - 1
        ins = [args[0], ex.const([-1] * n, "starts", "int64"),
               ex.const([-big] * n, "ends", "int64"), ex.const(dims, "axes", "int64"),
               ex.const([-1] * n, "steps", "int64")]
        return ex.one("Slice", ins, "flip")


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

    def onnx(self, ex, node, args):  # per dim: the last `shift` elements, then the rest
        shape = ex.need_shape(node.inputs[0], "roll")
        shifts, dims = node.attrs.get("shifts", ()), node.attrs.get("dims")
        nodes, x = [], args[0]
        if dims is None:  # the flattened input
            more, x = ex.one("Reshape", [x, ex.const([-1], "flat", "int64")], "flat")
            nodes, dims, sizes = more, (0,), [math.prod(shape)]
        else:
            dims = [d % len(shape) for d in dims]
            sizes = [shape[d] for d in dims]
        for shift, d, n in zip(shifts, dims, sizes):
            k = shift % n if n else 0
            if k:
                more, x = ex.chain([
                    ("Slice", [x, ex.const([n - k], "s", "int64"), ex.const([n], "e", "int64"),
                               ex.const([d], "axes", "int64")], {}),
                    ("Slice", [x, ex.const([0], "s", "int64"), ex.const([n - k], "e", "int64"),
                               ex.const([d], "axes", "int64")], {}),
                    ("Concat", ["{0}", "{1}"], {"axis": d})], "roll")
                nodes += more
        if node.attrs.get("dims") is None:
            more, x = ex.one("Reshape", [x, ex.const(list(shape), "shape", "int64")], "roll")
            nodes += more
        if not nodes:
            return ex.one("Identity", args, "roll")
        return nodes, x


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

    def onnx(self, ex, node, args):
        rank = len(ex.need_shape(node.inputs[0], "index_select"))
        return ex.chain([("Cast", [args[1]], {"to": ex.tensor_type("int64")}),
                         ("Gather", [args[0], "{0}"], {"axis": node.attrs.get("dim", 0) % rank})],
                        "index_select")


@register
class IndexSelectGrad(Op):
    r"""Zeros of ``shape`` with $g$ *added* at positions ``index`` along ``dim`` (the adjoint
    of ``index_select``)."""

    name, arity, saves = "index_select_grad", 2, (1,)
    onnx = NO_ONNX_GRAD

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
    onnx = NoOnnx("no single ONNX operator (a ScatterND with reduction='add' over expanded "
                  "indices; not written)")

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

    def onnx(self, ex, node, args):
        rank = len(ex.need_shape(node.inputs[0], "scatter"))
        x, index, src = args
        return ex.chain([("Cast", [index], {"to": ex.tensor_type("int64")}),
                         ("ScatterElements", [x, "{0}", src],
                          {"axis": node.attrs.get("dim", 0) % rank})], "scatter")


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

    def onnx(self, ex, node, args):  # both broadcast, flattened, then Compress
        shape = broadcast_shapes(self.name, ex.need_shape(node.inputs[0], self.name),
                                 ex.need_shape(node.inputs[1], self.name))
        full, flat = ex.const(list(shape), "shape", "int64"), ex.const([-1], "flat", "int64")
        return ex.chain([("Expand", [args[0], full], {}), ("Reshape", ["{0}", flat], {}),
                         ("Cast", [args[1]], {"to": ex.tensor_type("bool")}),
                         ("Expand", ["{2}", full], {}), ("Reshape", ["{3}", flat], {}),
                         ("Compress", ["{1}", "{4}"], {})], "masked_select")


def _bool_mask(opname, mask):
    if "bool" not in str(mask.dtype):
        raise TypeError(f"{opname}: the mask must be a bool tensor, got {mask.dtype}; make one "
                        "with a comparison (x > 0) or mask.bool()")  # fmt: skip


@register
class MaskedSelectGrad(Op):
    r"""Zeros of ``shape`` with $g$ written where ``mask`` (broadcast to ``shape``) holds (the
    adjoint of ``masked_select``)."""

    name, arity, saves = "masked_select_grad", 2, (1,)
    onnx = NO_ONNX_GRAD

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

    def onnx(self, ex, node, args):  # ONNX's NonZero gives one row per dim: transposed
        return ex.chain([("NonZero", args, {}), ("Transpose", ["{0}"], {"perm": [1, 0]})],
                        "nonzero")


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


def _diagonal_slice(start, m, length):
    """The places of a diagonal in a flattened n x m matrix: it starts at ``start`` (row
    ``r0`` times ``m`` plus column ``c0``) and each next element is one row and one column on,
    ``m + 1`` places later. A basic strided slice, so reading or writing it costs O(length),
    never a (length, n * m) one-hot matrix."""
    return slice(start, start + (length - 1) * (m + 1) + 1, m + 1)


@register
class Diagonal(Op):
    r"""The diagonal of the dims ``dim1``, ``dim2`` (shifted by ``offset``), as a last dim (a
    view in PyTorch). The gradient writes $g$ back on the diagonal (``diagonal_grad``)."""

    name, view = "diagonal", True
    onnx = NoOnnx("no ONNX operator takes a diagonal (not written as a Gather)")

    def forward(self, xp, x, offset=0, dim1=0, dim2=1):
        a, b, r0, c0, length = _diag_geometry(self.name, x.shape, offset, dim1, dim2)
        strided = _strided(xp)
        if strided is not None:  # numpy, CuPy: a writable view, as PyTorch's
            rest = [i for i in range(x.ndim) if i not in (a, b)]
            start = x[tuple(slice(r0, None) if i == a else slice(c0, None) if i == b else
                            slice(None) for i in range(x.ndim))] if length else x  # fmt: skip
            return strided(start, tuple(x.shape[i] for i in rest) + (length,),
                           tuple(x.strides[i] for i in rest) + (x.strides[a] + x.strides[b],))
        # other namespaces (the strict Array API): a copy, read by one strided slice
        rest = [i for i in range(x.ndim) if i not in (a, b)]
        moved = xp.permute_dims(x, tuple(rest) + (a, b))
        n, m = x.shape[a], x.shape[b]
        if not length:
            return xp.zeros(tuple(moved.shape[:-2]) + (0,), dtype=x.dtype)
        flat = xp.reshape(moved, tuple(moved.shape[:-2]) + (n * m,))
        return flat[..., _diagonal_slice(r0 * m + c0, m, length)]

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
    onnx = NO_ONNX_GRAD

    def forward(self, xp, g, like=None, shape=None, offset=0, dim1=0, dim2=1):
        shape = tuple(like.shape) if shape is None else tuple(shape)
        a, b, r0, c0, length = _diag_geometry(self.name, shape, offset, dim1, dim2)
        n, m = shape[a], shape[b]
        # zeros with g written on the diagonal's places: O(n * m), not a one-hot product
        flat = xp.zeros(tuple(g.shape[:-1]) + (n * m,), dtype=g.dtype)  # (..., n * m)
        if length:
            flat[..., _diagonal_slice(r0 * m + c0, m, length)] = g
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
    onnx = NoOnnx("no ONNX operator makes sliding windows of one dim")

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
    onnx = NO_ONNX_GRAD

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


# -- masked_scatter: source's first elements, in order, where the mask holds -------------------
@register
class MaskedScatter(Op):
    r"""``masked_scatter(x, mask, source)``: $x$ (broadcast with ``mask``) with the first
    elements of ``source`` written, in row-major order, where ``mask`` holds.
    $\partial L/\partial x = g$ where the mask is False; $\partial L/\partial \mathrm{source}$
    is $g$ at the masked places, in order, then zeros, in source's shape
    (``masked_scatter_grad``)."""

    name, arity, saves = "masked_scatter", 3, (1,)
    onnx = NoOnnx("no single ONNX operator: it places the source's leading elements where the "
                  "mask holds")

    def forward(self, xp, x, mask, source):
        if "bool" not in str(mask.dtype):
            raise RuntimeError(f"masked_scatter: the mask must be a bool tensor, got "
                               f"{mask.dtype}; make one with a comparison (x > 0)")  # fmt: skip
        if x.dtype != source.dtype:
            raise RuntimeError(f"masked_scatter: expected self and source to have the same "
                               f"dtype, got {x.dtype} and {source.dtype}; convert source "
                               "with source.to(x.dtype)")  # fmt: skip
        shape = broadcast_shapes(self.name, x.shape, mask.shape)
        where = xp.broadcast_to(mask, shape)
        out = xp.asarray(xp.broadcast_to(x, shape), copy=True)
        count = int(xp.sum(xp.astype(where, xp.int64)))
        flat = xp.reshape(source, (-1,))
        if count > flat.shape[0]:
            raise RuntimeError(f"masked_scatter: the mask holds at {count} places but source "
                               f"(shape {tuple(source.shape)}) has only {flat.shape[0]} "
                               "elements; give a source with at least as many")  # fmt: skip
        out[where] = flat[:count]
        return out

    def shape(self, xshape, mshape, sshape):
        return broadcast_shapes(self.name, xshape, mshape)

    def vjp(self, F, g, inputs, out, shapes, needs):
        mask = inputs[1]
        gx = F.sum_to(F.where(mask, 0.0, g), _static(self.name, shapes[0])) if needs[0] else None
        gs = F.masked_scatter_grad(g, mask, shape=_static(self.name, shapes[2])) if needs[
            2] else None  # fmt: skip
        return gx, None, gs


@register
class MaskedScatterGrad(Op):
    r"""``masked_scatter``'s gradient for ``source``: $g$ at the places ``mask`` (broadcast to
    $g$'s shape) holds, in row-major order, then zeros, in ``shape``. Its own gradient is
    ``masked_scatter`` of zeros (the two are adjoint)."""

    name, arity, saves = "masked_scatter_grad", 2, (0, 1)
    onnx = NO_ONNX_GRAD

    def forward(self, xp, g, mask, shape=()):
        picked = g[xp.broadcast_to(mask, g.shape)]
        out = xp.zeros(math.prod(shape), dtype=g.dtype)
        out[: picked.shape[0]] = picked
        return xp.reshape(out, tuple(shape))

    def shape(self, gshape, mshape, shape=()):
        return tuple(shape)

    def vjp(self, F, gg, inputs, out, shapes, needs, shape=()):
        g, mask = inputs
        return (F.masked_scatter(F.zeros_like(g), mask, gg), None)


def _masked_scatter(op, apply):
    def masked_scatter(input, mask, source):
        return apply(op, input, mask, source)

    return masked_scatter


declare("masked_scatter", _masked_scatter, methods=("masked_scatter",),
        functions=("masked_scatter",), inplace=("masked_scatter_",))
