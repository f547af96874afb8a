r"""Ops that move elements without arithmetic: ``reshape``, ``permute``, ``transpose``,
``broadcast_to``, ``expand_dims``/``squeeze``, ``flatten``, ``repeat``, ``cat``/``stack``,
indexing (``getitem``, its adjoint ``getitem_grad``, and ``setitem``, PyTorch's
``CopySlices``) and ``gather`` (with its adjoint ``gather_grad``)."""

from __future__ import annotations

import math

import numpy as _np  # shape arithmetic only (a zero-byte view for indexing rules)

from .base import (
    NO_ONNX_GRAD,
    IndexShapeError,
    NoOnnx,
    Op,
    ShapeError,
    broadcast_shapes,
    fmt_shapes,
    normalize_axes,
    register,
)
from .promotion import result_type

__all__ = [
    "Reshape", "Permute", "Transpose", "BroadcastTo", "ExpandDims", "Squeeze", "Flatten",
    "Repeat", "Cat", "Stack", "GetItem", "GetItemGrad", "SetItem", "Gather", "GatherGrad",
    "index_kind",
]  # fmt: skip


def _target(like, shape):
    return tuple(like.shape) if shape is None else tuple(shape)


def _axis(opname, axis, ndim, shape=None):
    """One axis, made non-negative (0-d inputs accept 0 and -1, as in PyTorch)."""
    return normalize_axes(opname, axis, max(ndim, 1), shape)[0]


@register
class Reshape(Op):
    r"""Same elements, new shape (one ``-1`` allowed). $\partial L/\partial x$ = g reshaped back."""

    name, torch_name = "reshape", "ViewBackward0"
    view = True

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

    def onnx(self, ex, node, args):
        pre, shape = ex.target(node, args, "reshape")
        name, n = ex.node("Reshape", [args[0], shape], "reshape")
        return pre + [n], name


@register
class Permute(Op):
    r"""Permute axes (reverse them when ``axes`` is None, numpy's ``.T``). The gradient
    un-permutes."""

    name = "permute"
    view = True

    def forward(self, xp, x, axes=None):
        if axes is None:
            axes = tuple(range(x.ndim - 1, -1, -1))
        return xp.permute_dims(x, axes)

    def shape(self, xshape, axes=None):
        if axes is None:
            return tuple(reversed(xshape))
        if sorted(a % max(len(xshape), 1) for a in axes) != list(range(len(xshape))):
            raise ShapeError(
                f"permute: dims {tuple(axes)} are not a permutation of the {len(xshape)} "
                f"dims of shape {tuple(xshape)}"
            )
        return tuple(xshape[a] for a in axes)

    def vjp(self, F, g, inputs, out, shapes, needs, axes=None):
        if axes is None:
            return (F.permute(g),)
        n = len(axes)
        inverse = [0] * n
        for i, a in enumerate(axes):
            inverse[a % n] = i
        return (F.permute(g, axes=tuple(inverse)),)

    def onnx(self, ex, node, args):
        axes = node.attrs.get("axes")
        if axes is None:
            axes = list(reversed(range(len(ex.need_shape(node.inputs[0], "permute")))))
        return ex.one("Transpose", args[:1], "permute", perm=list(axes))


@register
class Transpose(Op):
    r"""Swap two dims (PyTorch's ``transpose(dim0, dim1)``; the same dim twice changes
    nothing). The gradient swaps them back."""

    name = "transpose"
    view = True
    #: ``x.t()`` is this op too, but PyTorch names its node ``TBackward0``: the surface row of
    #: ``t`` passes ``via="t"`` (an attribute only the node's name reads)
    torch_names = ("TransposeBackward0", "TBackward0")

    def variant(self, inputs, attrs):
        return 1 if attrs.get("via") == "t" else 0

    def forward(self, xp, x, dim0, dim1, via=None):
        if x.ndim < 2:
            return x
        perm = list(range(x.ndim))
        a, b = perm[dim0], perm[dim1]
        perm[a], perm[b] = b, a
        return xp.permute_dims(x, perm)

    def shape(self, xshape, dim0, dim1, via=None):
        n = len(xshape)
        a, b = (_axis(self.name, d, n, xshape) for d in (dim0, dim1))
        out = list(xshape)
        if n:
            out[a], out[b] = out[b], out[a]
        return tuple(out)

    def vjp(self, F, g, inputs, out, shapes, needs, dim0, dim1, via=None):
        return (F.transpose(g, dim0=dim0, dim1=dim1),)

    def onnx(self, ex, node, args):
        perm = list(range(len(ex.need_shape(node.inputs[0], "transpose"))))
        if len(perm) >= 2:
            a, b = perm[node.attrs["dim0"]], perm[node.attrs["dim1"]]
            perm[a], perm[b] = b, a
        return ex.one("Transpose", args[:1], "transpose", perm=perm)


@register
class BroadcastTo(Op):
    r"""Repeat ``x`` along size-1 and new leading axes (PyTorch's ``expand``).
    $\partial L/\partial x$ = ``sum_to``."""

    name, torch_name = "broadcast_to", "ExpandBackward0"
    view = True

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

    def onnx(self, ex, node, args):
        pre, shape = ex.target(node, args, "broadcast")
        name, n = ex.node("Expand", [args[0], shape], "broadcast_to")
        return pre + [n], name


def _expanded(shape, axis):
    if type(axis) is int and -len(shape) - 1 <= axis <= len(shape):  # unsqueeze(d): the one
        axis %= len(shape) + 1  # new axis at d, as the loop below places it (and checks it)
        return shape[:axis] + (1,) + shape[axis:]
    ndim = len(shape) + (1 if isinstance(axis, int) else len(axis))
    axes = normalize_axes("expand_dims", axis, ndim, shape)
    it = iter(shape)
    return tuple(1 if i in axes else next(it) for i in range(len(shape) + len(axes)))


@register
class ExpandDims(Op):
    r"""Insert size-1 axes at ``axis`` (positions in the result; PyTorch's ``unsqueeze``).
    The gradient drops them."""

    name, torch_name = "expand_dims", "UnsqueezeBackward0"
    view = True

    def forward(self, xp, x, axis):
        return xp.reshape(x, _expanded(tuple(x.shape), axis))

    def shape(self, xshape, axis):
        return _expanded(tuple(xshape), axis)

    def vjp(self, F, g, inputs, out, shapes, needs, axis):
        return (F.reshape(g, shapes[0]),)

    def onnx(self, ex, node, args):
        axis = node.attrs["axis"]
        rank = len(ex.need_shape(node, "expand_dims"))
        axes = sorted(a % rank for a in ex.as_tuple(axis))
        return ex.one("Unsqueeze", [args[0], ex.const(axes, "axes", "int64")], "unsq")


def _squeezed(opname, shape, dim):
    if dim is None:
        return tuple(d for d in shape if d != 1)
    axes = normalize_axes(opname, dim, max(len(shape), 1), shape)  # 0-d: 0 or -1
    return tuple(d for i, d in enumerate(shape) if not (i in axes and d == 1))


@register
class Squeeze(Op):
    r"""Drop size-1 dims (all of them, or those of ``dim`` that have size 1, as in PyTorch).
    The gradient is reshaped back."""

    name, torch_names = "squeeze", ("SqueezeBackward0", "SqueezeBackward1")
    view = True

    def variant(self, inputs, attrs):
        return 0 if attrs.get("dim") is None else 1

    def forward(self, xp, x, dim=None):
        return xp.reshape(x, _squeezed(self.name, tuple(x.shape), dim))

    def shape(self, xshape, dim=None):
        return _squeezed(self.name, tuple(xshape), dim)

    def vjp(self, F, g, inputs, out, shapes, needs, dim=None):
        return (F.reshape(g, shapes[0]),)

    def onnx(self, ex, node, args):
        return ex.reshaped(node, args, "squeeze")


def _flattened(opname, shape, start_dim, end_dim):
    a, b = (_axis(opname, d, len(shape), shape) for d in (start_dim, end_dim))
    if not shape:
        return (1,)
    if a > b:
        raise ShapeError(f"{opname}: start_dim {start_dim} comes after end_dim {end_dim} "
                         f"for shape {tuple(shape)}")  # fmt: skip
    return shape[:a] + (math.prod(shape[a : b + 1]),) + shape[b + 1 :]


@register
class Flatten(Op):
    r"""Merge dims ``start_dim..end_dim`` into one (a reshape: PyTorch names its node
    ``ViewBackward0``). The gradient is reshaped back."""

    name, torch_name = "flatten", "ViewBackward0"
    view = True

    def forward(self, xp, x, start_dim=0, end_dim=-1):
        return xp.reshape(x, _flattened(self.name, tuple(x.shape), start_dim, end_dim))

    def shape(self, xshape, start_dim=0, end_dim=-1):
        return _flattened(self.name, tuple(xshape), start_dim, end_dim)

    def vjp(self, F, g, inputs, out, shapes, needs, start_dim=0, end_dim=-1):
        return (F.reshape(g, shapes[0]),)

    def onnx(self, ex, node, args):
        return ex.reshaped(node, args, "flatten")


@register
class Repeat(Op):
    r"""Tile ``x``: ``repeats[i]`` copies along dim ``i`` (new leading dims when there are
    more repeats than dims). $\partial L/\partial x$ sums the copies (needs static shapes)."""

    name = "repeat"

    def forward(self, xp, x, repeats):
        if len(repeats) < x.ndim:  # numpy's tile would pad the repeats: PyTorch refuses
            raise ValueError("fewer repeats than dims")
        return xp.tile(x, tuple(repeats))

    def shape(self, xshape, repeats):
        if len(repeats) < len(xshape):
            raise ShapeError(
                f"repeat: {len(repeats)} repeats {tuple(repeats)} for shape {tuple(xshape)}; "
                "give at least one per dim"
            )
        padded = (1,) * (len(repeats) - len(xshape)) + tuple(xshape)
        return tuple(r * d for r, d in zip(repeats, padded))

    def vjp(self, F, g, inputs, out, shapes, needs, repeats):
        shape = _static(self.name, shapes[0])
        padded = (1,) * (len(repeats) - len(shape)) + shape
        split = tuple(x for r, d in zip(repeats, padded) for x in (r, d))
        g = F.sum(F.reshape(g, split), axis=tuple(range(0, len(split), 2)))
        return (F.reshape(g, shape),)

    def onnx(self, ex, node, args):
        repeats = list(node.attrs["repeats"])
        src = ex.need_shape(node.inputs[0], "repeat")
        pre, x = [], args[0]
        if len(repeats) > len(src):  # PyTorch adds leading axes of size 1 first
            shape = [1] * (len(repeats) - len(src)) + list(src)
            x, n = ex.node("Reshape", [x, ex.const(shape, "shape", "int64")], "lead")
            pre.append(n)
        name, n = ex.node("Tile", [x, ex.const(repeats, "repeats", "int64")], "repeat")
        return pre + [n], name


def _static(opname, shape):
    if not isinstance(shape, tuple):
        raise ShapeError(
            f"{opname}: its derivative needs the input's static shape; declare the "
            "Variable's shape (Variable(name, shape=...))"
        )
    return shape


@register
class Cat(Op):
    r"""Join inputs along ``dim`` (any number of inputs). The gradient is cut back into
    pieces of the inputs' sizes (static shapes)."""

    name, arity = "cat", -1

    def forward(self, xp, *xs, dim=0):
        dt = xs[0].dtype if xs else None
        if any(x.dtype != dt for x in xs):  # PyTorch's promotion (numpy's would differ)
            dt = result_type(xp, *xs)
            xs = [xp.astype(x, dt) for x in xs]
        return xp.concat(xs, axis=dim)

    def shape(self, *shapes, dim=0):
        if not shapes:
            raise ShapeError("cat: got no tensors; give at least one")
        first = tuple(shapes[0])
        d = _axis(self.name, dim, len(first), first)
        for s in shapes[1:]:
            if len(s) != len(first) or any(a != b for i, (a, b) in enumerate(zip(s, first))
                                           if i != d):  # fmt: skip
                raise ShapeError(
                    f"cat: shapes {fmt_shapes(shapes)} must match except in dim {dim}"
                )
        return first[:d] + (sum(s[d] for s in shapes),) + first[d + 1 :]

    def vjp(self, F, g, inputs, out, shapes, needs, dim=0):
        grads, start = [], 0
        for s, need in zip(shapes, needs):
            s = _static(self.name, s)
            d = _axis(self.name, dim, len(s), s)
            index = (slice(None),) * d + (slice(start, start + s[d]), Ellipsis)
            grads.append(F.getitem(g, index=index) if need else None)
            start += s[d]
        return tuple(grads)

    def onnx(self, ex, node, args):
        rank = len(ex.need_shape(node, "cat"))
        return ex.one("Concat", args, "cat", axis=node.attrs.get("dim", 0) % rank)


@register
class Stack(Op):
    r"""Stack inputs of one shape along a new ``dim``. The gradient of input $i$ is
    ``g`` at position $i$ of that dim."""

    name, arity = "stack", -1

    def forward(self, xp, *xs, dim=0):
        return xp.stack(xs, axis=dim)

    def shape(self, *shapes, dim=0):
        if not shapes or any(tuple(s) != tuple(shapes[0]) for s in shapes):
            raise ShapeError(f"stack: shapes {fmt_shapes(shapes or [()])} must all be equal")
        first = tuple(shapes[0])
        d = normalize_axes(self.name, dim, len(first) + 1, first)[0]
        return first[:d] + (len(shapes),) + first[d:]

    def vjp(self, F, g, inputs, out, shapes, needs, dim=0):
        at = (slice(None),) * dim if dim >= 0 else (Ellipsis,)
        rest = (Ellipsis,) if dim >= 0 else (slice(None),) * (-dim - 1)
        return tuple(F.getitem(g, index=at + (i,) + rest) if need else None
                     for i, need in enumerate(needs))  # fmt: skip

    def onnx(self, ex, node, args):
        rank = len(ex.need_shape(node, "stack"))
        axis = node.attrs.get("dim", 0) % rank
        axes = ex.const([axis], "axes", "int64")
        pre, parts = [], []
        for a in args:
            name, n = ex.node("Unsqueeze", [a, axes], "unsq")
            pre.append(n)
            parts.append(name)
        name, n = ex.node("Concat", parts, "stack", axis=axis)
        return pre + [n], name


def _index_shape(opname, shape, index):
    try:
        return _np.broadcast_to(_np.empty((), dtype=bool), shape)[index].shape
    except (IndexError, TypeError, ValueError) as e:
        cls = IndexShapeError if isinstance(e, IndexError) else ShapeError
        raise cls(f"{opname}: index {index!r} does not fit shape {tuple(shape)}: {e}") from e


def _is_basic(index) -> bool:
    """True when the index holds only ints, slices, None and Ellipsis (a view, no copy)."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, int | slice) for p in parts)


def index_kind(index) -> int:
    """PyTorch's node for ``x[index]``: 0 ``SelectBackward0``, 1 ``SliceBackward0``, 2
    ``IndexBackward0`` (arrays).

    PyTorch applies a basic index one part at a time (a ``select`` per int, a ``slice`` per
    slice), so the node is named for the last of them: ``x[:, 2]`` and ``x.select(1, 2)`` are
    ``SelectBackward0``, ``x[2, 1:]`` is ``SliceBackward0``. An index of ints only is a
    select, one without ints or slices (``None``, ``...``) a slice."""
    if not _is_basic(index):
        return 2
    parts = index if isinstance(index, tuple) else (index,)
    if all(isinstance(p, int) or p is Ellipsis for p in parts):
        return 0
    last = [p for p in parts if isinstance(p, int | slice)]
    return 0 if last and isinstance(last[-1], int) else 1


@register
class GetItem(Op):
    r"""``x[index]``: slices, ints, ``None``, ``...``, integer and boolean arrays.

    $\partial L/\partial x$ = zeros with ``g`` added at ``index`` (``getitem_grad``), so an
    element picked twice by an integer array gets both gradients.
    """

    name = "getitem"
    view = True
    torch_names = ("SelectBackward0", "SliceBackward0", "IndexBackward0", "SplitBackward0",
                   "SplitWithSizesBackward0", "UnbindBackward0")  # fmt: skip

    def variant(self, inputs, attrs):
        piece = attrs.get("piece_of")  # a piece of x.split(...) / x.unbind(): PyTorch's name
        return index_kind(attrs["index"]) if piece is None else _PIECES[piece]

    def forward(self, xp, x, index, piece_of=None):
        rows = _first_axis_array(index)
        if rows is not None:  # `take` is the Array API's spelling of x[int_array]
            return xp.take(x, rows, axis=0)
        return x[index]

    def shape(self, xshape, index, piece_of=None):
        return _index_shape(self.name, xshape, index)

    def vjp(self, F, g, inputs, out, shapes, needs, index, piece_of=None):
        return (F.getitem_grad(g, shapes[0], index),)

    def onnx(self, ex, node, args):
        index = node.attrs["index"]
        parts = index if isinstance(index, tuple) else (index,)
        rank = len(ex.need_shape(node.inputs[0], "indexing"))
        if any(not (p is None or p is Ellipsis or isinstance(p, int | slice)) for p in parts):
            rows = parts[0]
            if len(parts) == 1 and hasattr(rows, "dtype"):  # one integer array: rows
                idx = ex.const(rows, "rows", "int64")
                return ex.one("Gather", [args[0], idx], "gather", axis=0)
            raise NotImplementedError(f"to_onnx: the index {index!r} of {node.name!r} has no "
                                      "ONNX form here (slices, ints, None and one row array "
                                      "export)")  # fmt: skip
        if Ellipsis in parts:
            k = parts.index(Ellipsis)
            fill = rank - sum(p is not None for p in parts if p is not Ellipsis)
            parts = parts[:k] + (slice(None),) * fill + parts[k + 1 :]
        starts, ends, axes, steps, squeeze, unsqueeze = [], [], [], [], [], []
        dim, out_dim = 0, 0
        for p in parts:
            if p is None:
                unsqueeze.append(out_dim)
                out_dim += 1
                continue
            if isinstance(p, int):
                starts.append(p)
                ends.append(p + 1 if p != -1 else 2**63 - 1)
                axes.append(dim)
                steps.append(1)
                squeeze.append(dim)
            else:
                step = p.step or 1
                big = 2**63 - 1
                starts.append(p.start if p.start is not None else (0 if step > 0 else -1))
                ends.append(p.stop if p.stop is not None else (big if step > 0 else -big))
                axes.append(dim)
                steps.append(step)
                out_dim += 1
            dim += 1
        nodes, cur = [], args[0]
        if axes:
            ins = [cur] + [
                ex.const(v, k, "int64")
                for k, v in (("starts", starts), ("ends", ends), ("axes", axes), ("steps", steps))
            ]
            cur, n = ex.node("Slice", ins, "slice")  # fmt: skip
            nodes.append(n)
        if squeeze:
            cur, n = ex.node("Squeeze", [cur, ex.const(squeeze, "axes", "int64")], "sq")
            nodes.append(n)
        if unsqueeze:
            cur, n = ex.node("Unsqueeze", [cur, ex.const(unsqueeze, "axes", "int64")], "u")
            nodes.append(n)
        if not nodes:
            cur, n = ex.node("Identity", [cur], "getitem")
            nodes.append(n)
        return nodes, cur


_PIECES = {"split": 3, "split_with_sizes": 4, "unbind": 5}  # GetItem.torch_names


@register
class GetItemGrad(Op):
    r"""``getitem_grad(g, shape, index)``: zeros of ``shape`` with ``g`` *added* at ``index``."""

    name = "getitem_grad"
    onnx = NO_ONNX_GRAD

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


@register
class SetItem(Op):
    r"""``setitem(x, value, index)``: a copy of $x$ with ``value`` written at ``index``
    (``y[index] = value`` on an eager tensor records this op in place, as PyTorch's
    ``CopySlices``). $\partial L/\partial x$ = ``g`` with zeros at ``index``;
    $\partial L/\partial \mathrm{value}$ = ``g[index]`` summed to the value's shape."""

    name, arity = "setitem", 2
    onnx = NoOnnx("an in-place write (the exporter writes graphs of pure values)")
    torch_names = ("CopySlices", "IndexPutBackward0")  # slices and ints; arrays and masks

    def variant(self, inputs, attrs):
        return 1 if index_kind(attrs["index"]) == 2 else 0

    def forward(self, xp, x, value, index):
        out = xp.asarray(x, copy=True)
        if hasattr(value, "shape") and value.dtype != x.dtype:
            value = xp.astype(value, x.dtype)
        out[index] = value
        return out

    def shape(self, xshape, vshape, index):
        want = _index_shape(self.name, xshape, index)
        try:
            broadcast_shapes(self.name, vshape, want)
            if len(vshape) > len(want) and any(d != 1 for d in vshape[: len(vshape) - len(want)]):
                raise ShapeError("")
        except ShapeError:
            raise ShapeError(
                f"setitem: a value of shape {tuple(vshape)} cannot be written into "
                f"{tuple(xshape)}[{index!r}], of shape {want}"
            ) from None
        return tuple(xshape)

    def vjp(self, F, g, inputs, out, shapes, needs, index):
        gx = F.setitem(g, 0.0, index=index) if needs[0] else None
        gv = F.sum_to(F.getitem(g, index=index), shapes[1]) if needs[1] else None
        return gx, gv


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


def _gather_region(x, index, dim):
    """``x`` cut to ``index``'s size in every dim but ``dim`` (PyTorch allows a smaller
    index there; numpy's ``take_along_axis`` needs equal sizes)."""
    cut = tuple(slice(None) if i == dim else slice(0, n) for i, n in enumerate(index.shape))
    return x[cut]


@register
class Gather(Op):
    r"""``gather(x, dim, index)``: ``out[i][j] = x[i][index[i][j]]`` for ``dim=1``.
    $\partial L/\partial x$ adds ``g`` back at the gathered places (``gather_grad``)."""

    name, arity, saves = "gather", 2, (1,)

    def forward(self, xp, x, index, dim=0):
        d = _axis(self.name, dim, x.ndim)
        return xp.take_along_axis(_gather_region(x, index, d), index, axis=d)

    def shape(self, xshape, ishape, dim=0):
        d = _axis(self.name, dim, len(xshape), xshape)
        if len(ishape) != len(xshape) or any(
            i != d and a > b for i, (a, b) in enumerate(zip(ishape, xshape))
        ):
            raise ShapeError(
                f"gather: index of shape {tuple(ishape)} does not fit input {tuple(xshape)} "
                f"along dim {dim}: it needs as many dims, none larger except dim {dim}"
            )
        return tuple(ishape)

    def vjp(self, F, g, inputs, out, shapes, needs, dim=0):
        return (F.gather_grad(g, shapes[0], inputs[1], dim), None)

    def onnx(self, ex, node, args):
        rank = len(ex.need_shape(node.inputs[0], "gather"))
        idx, n1 = ex.node("Cast", [args[1]], "index", to=ex.onnx.TensorProto.INT64)
        name, n2 = ex.node("GatherElements", [args[0], idx], "gather",
                             axis=node.attrs.get("dim", 0) % rank)  # fmt: skip
        return [n1, n2], name


@register
class GatherGrad(Op):
    r"""``gather_grad(g, index, shape, dim)``: zeros of ``shape`` with ``g`` *added* at the
    places ``gather`` read (the adjoint of ``gather``)."""

    name, arity, saves = "gather_grad", 2, (1,)
    onnx = NO_ONNX_GRAD

    def forward(self, xp, g, index, like=None, shape=None, dim=0):
        shape = _target(like, shape)
        d = _axis(self.name, dim, len(shape))
        z = xp.zeros(shape, dtype=g.dtype)
        if not shape:
            return z + g
        add = getattr(xp, "add", None)
        if hasattr(add, "at"):  # numpy, CuPy: an open grid of indices, index on `dim`
            grid = [xp.reshape(xp.arange(n), tuple(n if j == i else 1 for j in range(len(shape))))
                    for i, n in enumerate(index.shape)]  # fmt: skip
            grid[d] = index
            add.at(z, tuple(grid), g)
            return z
        # the strict array API: a one-hot product along `dim`
        onehot = xp.astype(xp.expand_dims(index, axis=-1) == xp.arange(shape[d]), g.dtype)
        moved = xp.sum(xp.expand_dims(g, axis=-1) * onehot, axis=d)  # dim d now last
        moved = xp.moveaxis(moved, -1, d)
        pad = tuple(slice(0, n) for n in moved.shape)
        z[pad] = moved
        return z

    def shape(self, gshape, ishape, like=None, shape=None, dim=0):
        return tuple(like if shape is None else shape)

    def vjp(self, F, gg, inputs, out, shapes, needs, shape=None, dim=0):
        return (F.gather(gg, inputs[1], dim=dim), None) + (None,) * (len(shapes) - 2)
