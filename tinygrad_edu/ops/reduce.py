r"""Reductions and scans: ``sum``, ``mean``, ``var``/``std``, ``max``/``min`` (over axes, or
along one dim with indices), ``argmax``/``argmin``, ``all``/``any``, ``cumsum``, ``sum_to``
(the reduction that undoes broadcasting) and ``numel``.

The ops take numpy's ``axis``/``keepdims``; the public surfaces (bottom of the file) speak
PyTorch's ``dim``/``keepdim`` and accept numpy's spelling too.
"""

from __future__ import annotations

import math

from .base import REGISTRY, Op, ShapeError, normalize_axes, register
from .dtypes import category
from .surface import ValuesIndices, cast, declare, dims, reduction, scalar_dims

__all__ = [
    "Sum", "Mean", "Max", "Min", "MaxDim", "MinDim", "ArgMax", "ArgMin", "Var", "Std",
    "Cumsum", "SumTo", "Numel", "All", "Any", "reduced_shape",
]  # fmt: skip


def reduced_shape(opname, shape, axis, keepdims):
    axes = normalize_axes(opname, axis, len(shape), shape)
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _restore_axes(F, g, axis, keepdims):
    """Put back the axes a reduction removed, so ``g`` broadcasts against the input."""
    return g if keepdims or axis is None else F.expand_dims(g, axis=axis)


def _need_float(opname, x):
    if category(x.dtype) != 2:
        raise TypeError(
            f"{opname}: the input is {x.dtype}, but {opname} needs a floating dtype (as in "
            "PyTorch); convert first, e.g. x.float()"
        )


class _Reduction(Op):
    torch_names: tuple = ()

    def shape(self, shape, axis=None, keepdims=False, **attrs):
        return reduced_shape(self.name, shape, axis, keepdims)

    def variant(self, inputs, attrs):
        return 0 if attrs.get("axis") is None else 1  # PyTorch: x.sum() vs x.sum(dim)


@register
class Sum(_Reduction):
    r"""$\sum_{axis} x$. $\partial L/\partial x = g$ broadcast back over the summed axes."""

    name, torch_names = "sum", ("SumBackward0", "SumBackward1")

    def forward(self, xp, x, axis=None, keepdims=False):
        return xp.sum(x, axis=axis, keepdims=keepdims)

    def vjp(self, F, g, inputs, out, shapes, needs, axis=None, keepdims=False):
        # BEGIN SOLUTION A1.6
        return (F.broadcast_to(_restore_axes(F, g, axis, keepdims), shapes[0]),)
        # END SOLUTION

    def onnx(self, ex, node, args):
        return ex.reduce(node, args, "ReduceSum")


@register
class Mean(_Reduction):
    r"""Mean over axes. $\partial L/\partial x = g / n$ broadcast back ($n$: elements averaged).

    The mean of nothing is nan (an empty batch), as in PyTorch.
    """

    name, torch_names = "mean", ("MeanBackward0", "MeanBackward1")

    def forward(self, xp, x, axis=None, keepdims=False):
        _need_float(self.name, x)
        if x.size == 0 and _count(x, axis) == 0:  # numpy would warn "mean of empty slice"
            shape = reduced_shape(self.name, x.shape, axis, keepdims)
            return xp.full(shape, math.nan, dtype=x.dtype)
        return xp.mean(x, axis=axis, keepdims=keepdims)

    def vjp(self, F, g, inputs, out, shapes, needs, axis=None, keepdims=False):
        g = _restore_axes(F, g, axis, keepdims) / F.numel(shapes[0], axis)
        return (F.broadcast_to(g, shapes[0]),)

    def onnx(self, ex, node, args):
        return ex.reduce(node, args, "ReduceMean")


@register
class Max(_Reduction):
    r"""Maximum over axes. The gradient goes to the maximal elements, split evenly on ties.

    (``x.max()`` is PyTorch's ``MaxBackward1``; over given axes, ``amax``'s ``AmaxBackward0``.)
    """

    name, saves, saves_output = "max", (0,), True
    torch_names = ("MaxBackward1", "AmaxBackward0")

    def forward(self, xp, x, axis=None, keepdims=False):
        return xp.max(x, axis=axis, keepdims=keepdims)

    def vjp(self, F, g, inputs, out, shapes, needs, axis=None, keepdims=False):
        (x,) = inputs
        hit = F.equal(x, _restore_axes(F, out, axis, keepdims))
        mask = F.where(hit, F.ones_like(x), F.zeros_like(x))
        share = mask / F.sum(mask, axis=axis, keepdims=True)
        return (share * _restore_axes(F, g, axis, keepdims),)

    def onnx(self, ex, node, args):
        return ex.reduce(node, args, "ReduceMax")


@register
class Min(Max):
    r"""Minimum over axes. The gradient goes to the minimal elements, split evenly on ties."""

    name, torch_names = "min", ("MinBackward1", "AminBackward0")

    def forward(self, xp, x, axis=None, keepdims=False):
        return xp.min(x, axis=axis, keepdims=keepdims)

    def onnx(self, ex, node, args):
        return ex.reduce(node, args, "ReduceMin")


@register
class All(_Reduction):
    """True where every element over the axes is nonzero (a bool result). Not differentiable."""

    name, differentiable = "all", False

    def forward(self, xp, x, axis=None, keepdims=False):
        return xp.all(x, axis=axis, keepdims=keepdims)

    def onnx(self, ex, node, args):
        return ex.all_any(node, args, "ReduceMin")


@register
class Any(_Reduction):
    """True where some element over the axes is nonzero (a bool result). Not differentiable."""

    name, differentiable = "any", False

    def forward(self, xp, x, axis=None, keepdims=False):
        return xp.any(x, axis=axis, keepdims=keepdims)

    def onnx(self, ex, node, args):
        return ex.all_any(node, args, "ReduceMax")


class _AlongDim(Op):
    """The extreme value along one ``dim`` (``x.max(dim)``): the gradient goes to the element
    that ``argmax``/``argmin`` picks, the first of ties, as in PyTorch."""

    saves = (0,)
    _arg = ""

    def forward(self, xp, x, dim=0, keepdim=False):
        if x.ndim == 0:
            normalize_axes(self.name, dim, 0)  # 0 or -1 only
            return xp.asarray(x, copy=True)  # not x itself: the result is no view of it
        idx = getattr(xp, self._arg)(x, axis=dim, keepdims=True)
        values = xp.take_along_axis(x, idx, axis=dim)
        return values if keepdim else xp.squeeze(values, axis=dim)

    def shape(self, shape, dim=0, keepdim=False):
        return reduced_shape(self.name, shape, dim, keepdim) if len(shape) else ()

    def vjp(self, F, g, inputs, out, shapes, needs, dim=0, keepdim=False):
        if shapes[0] == ():
            return (g,)
        idx = getattr(F, self._arg)(inputs[0], axis=dim, keepdims=True)
        return (F.gather_grad(g if keepdim else F.expand_dims(g, axis=dim), shapes[0], idx, dim),)


@register
class MaxDim(_AlongDim):
    __doc__ = _AlongDim.__doc__
    name, _arg, torch_name = "max_dim", "argmax", "MaxBackward0"

    def onnx(self, ex, node, args):
        return ex.along_dim(node, args, "ReduceMax")


@register
class MinDim(_AlongDim):
    __doc__ = _AlongDim.__doc__
    name, _arg, torch_name = "min_dim", "argmin", "MinBackward0"

    def onnx(self, ex, node, args):
        return ex.along_dim(node, args, "ReduceMin")


class _Arg(Op):
    """The index of the extreme value along ``axis`` (of the flattened input when None), as
    int64. Not differentiable."""

    differentiable = False

    def forward(self, xp, x, axis=None, keepdims=False):
        if x.ndim == 0:
            normalize_axes(self.name, axis, 0)  # 0 or -1 only
            return xp.zeros((), dtype=xp.int64)
        return getattr(xp, self.name)(x, axis=axis, keepdims=keepdims)

    def shape(self, shape, axis=None, keepdims=False):
        if not len(shape):
            return ()
        if axis is None:
            return (1,) * len(shape) if keepdims else ()
        return reduced_shape(self.name, shape, axis, keepdims)


@register
class ArgMax(_Arg):
    __doc__ = _Arg.__doc__
    name = "argmax"

    def onnx(self, ex, node, args):
        return ex.arg_reduce(node, args, "ArgMax")


@register
class ArgMin(_Arg):
    __doc__ = _Arg.__doc__
    name = "argmin"

    def onnx(self, ex, node, args):
        return ex.arg_reduce(node, args, "ArgMin")


def _count(x, axis):
    return math.prod(x.shape[a] for a in normalize_axes("var", axis, x.ndim, x.shape))


@register
class Var(_Reduction):
    r"""Variance $\frac{1}{n - c}\sum (x - \bar x)^2$ with ``correction`` $c$ (1: unbiased).

    $\partial L/\partial x = g\,\frac{2 (x - \bar x)}{n - c}$.
    """

    name, saves, torch_names = "var", (0,), ("VarBackward0", "VarBackward0")

    def forward(self, xp, x, axis=None, correction=1, keepdims=False):
        _need_float(self.name, x)
        d = x - xp.mean(x, axis=axis, keepdims=True)
        return xp.sum(d * d, axis=axis, keepdims=keepdims) / max(_count(x, axis) - correction, 0)

    def vjp(self, F, g, inputs, out, shapes, needs, axis=None, correction=1, keepdims=False):
        x = inputs[0]
        d = x - F.mean(x, axis=axis, keepdims=True)
        n = F.numel(shapes[0], axis) - correction
        return (_restore_axes(F, g, axis, keepdims) * d * 2 / n,)

    def onnx(self, ex, node, args):
        return ex.moments(node, args, root=False)


@register
class Std(Var):
    r"""Standard deviation $\sqrt{\mathrm{var}}$.
    $\partial L/\partial x = g\,\frac{x - \bar x}{(n - c)\,\mathrm{std}}$ (reuses the output;
    0 where the std is 0, as in PyTorch)."""

    name, saves_output, torch_names = "std", True, ("StdBackward0", "StdBackward0")

    def forward(self, xp, x, axis=None, correction=1, keepdims=False):
        return xp.sqrt(Var.forward(self, xp, x, axis, correction, keepdims))

    def vjp(self, F, g, inputs, out, shapes, needs, axis=None, correction=1, keepdims=False):
        x = inputs[0]
        d = x - F.mean(x, axis=axis, keepdims=True)
        n = F.numel(shapes[0], axis) - correction
        std = _restore_axes(F, out, axis, keepdims)
        zero = F.equal(std, 0)  # all values equal: 0, as in PyTorch (not 0/0 = nan)
        scale = _restore_axes(F, g, axis, keepdims) / (F.where(zero, 1.0, std) * n)
        return (F.where(zero, 0.0, d * scale),)

    def onnx(self, ex, node, args):
        return ex.moments(node, args, root=True)


@register
class Cumsum(Op):
    r"""Running sums along ``dim`` (from the end when ``reverse``).
    $\partial L/\partial x$ = the running sums of $g$ in the other direction."""

    name = "cumsum"

    def forward(self, xp, x, dim=0, reverse=False):
        if x.ndim == 0:
            return xp.asarray(x, copy=True)
        if reverse:
            x = xp.flip(x, axis=dim)
        out = xp.cumulative_sum(x, axis=dim)
        return xp.flip(out, axis=dim) if reverse else out

    def shape(self, shape, dim=0, reverse=False):
        normalize_axes(self.name, dim, len(shape), shape)
        return tuple(shape)

    def vjp(self, F, g, inputs, out, shapes, needs, dim=0, reverse=False):
        return (F.cumsum(g, dim=dim, reverse=not reverse),)

    def onnx(self, ex, node, args):
        rank = len(ex.need_shape(node.inputs[0], "cumsum"))
        axis = ex.const(node.attrs.get("dim", 0) % max(rank, 1), "axis", "int64")
        return ex.one("CumSum", [args[0], axis], "cumsum",
                         reverse=int(bool(node.attrs.get("reverse"))))  # fmt: skip


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
        target = shape if shape is not None else shapes[1] if len(shapes) > 1 else None
        if not _static(target):  # g has the target's shape
            target = getattr(g, "shape", None)
        rest = (None,) * (len(shapes) - 1)
        if not (_static(shapes[0]) and _static(target)):
            return (F.broadcast_to(g, shapes[0]),) + rest
        lead = len(shapes[0]) - len(target)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, d in enumerate(target) if d == 1 and shapes[0][lead + i] != 1
        )
        if not axes:
            return (F.broadcast_to(g, shapes[0]),) + rest
        # the sum rule, written once: g with the summed axes kept, back over them
        g = F.reshape(g, (1,) * lead + tuple(target))
        (gx,) = REGISTRY["sum"].vjp(F, g, inputs[:1], None, shapes[:1], needs[:1], axis=axes,
                                    keepdims=True)  # fmt: skip
        return (gx,) + rest

    def onnx(self, ex, node, args):
        src = ex.need_shape(node.inputs[0], "sum_to")
        like = node.attrs.get("shape")
        target = tuple(like) if like is not None else ex.need_shape(node.inputs[1], "sum_to")
        lead = len(src) - len(target)
        axes = list(range(lead)) + [
            lead + i for i, d in enumerate(target) if d == 1 and src[lead + i] != 1
        ]
        if not axes:
            return ex.one("Identity", args[:1], "sum_to")
        summed, n1 = ex.node(
            "ReduceSum", [args[0], ex.const(axes, "axes", "int64")], "sum_to", keepdims=1
        )
        shape = ex.const(list(target), "shape", "int64")
        name, n2 = ex.node("Reshape", [summed, shape], "sum_to")
        return [n1, n2], name


def _static(shape) -> bool:
    return isinstance(shape, tuple | list) and all(isinstance(d, int) for d in shape)


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

    def onnx(self, ex, node, args):
        shape, n1 = ex.node("Shape", args, "numel_shape")
        axis, pre = node.attrs.get("axis"), [n1]
        if axis is not None:
            rank = len(ex.need_shape(node.inputs[0], "numel"))
            idx = ex.const([a % rank for a in ex.as_tuple(axis)], "axes", "int64")
            shape, n2 = ex.node("Gather", [shape, idx], "numel_dims", axis=0)
            pre.append(n2)
        count, n3 = ex.node("ReduceProd", [shape], "numel_count", keepdims=0)
        name, n4 = ex.node("CastLike", [count, args[0]], "numel")
        return pre + [n3, n4], name


# -- public surfaces: rows beside the ops (see tinygrad_edu.ops.surface) ---------------------
def _dim_args(opname, dim, keepdim, axis, keepdims, input=None):
    if axis is not None:
        if dim is not None and dim != axis:
            raise TypeError(f"{opname}: got both dim={dim!r} and axis={axis!r}")
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return scalar_dims(opname, input, dims(opname, dim)), keepdim


def _extreme(op, apply):
    """``max(input)`` -> the value; ``max(input, dim, keepdim=False)`` -> ``(values,
    indices)``; ``max(input, other)`` -> the elementwise maximum."""
    along, arg = REGISTRY[f"{op.name}_dim"], REGISTRY[f"arg{op.name}"]
    pairwise = REGISTRY["maximum" if op.name == "max" else "minimum"]

    def extreme(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
        if hasattr(dim, "shape"):  # torch.max(a, b)
            return apply(pairwise, input, dim)
        dim, keepdim = _dim_args(op.name, dim, keepdim, axis, keepdims)
        if dim is None:
            return apply(op, input)
        if type(dim) is not int:
            raise TypeError(f"{op.name}: dim must be one int here, got {dim!r}; use amax")
        return ValuesIndices(apply(along, input, dim=dim, keepdim=keepdim),
                             apply(arg, input, axis=dim, keepdims=keepdim))  # fmt: skip

    return extreme


def _amax(op, apply):
    """``amax(input, dim=(), keepdim=False)``: the maximum over ``dim`` (every dim when empty),
    ties sharing the gradient."""

    def amax(input, dim=(), keepdim=False, *, axis=None, keepdims=None):
        dim = None if dim == () else dim
        dim, keepdim = _dim_args(op.name, dim, keepdim, axis, keepdims, input)
        if dim is None or dim == ():
            shape = getattr(input, "shape", None)
            dim = None if shape is None else tuple(range(len(shape)))
        return apply(op, input, axis=dim, keepdims=keepdim)

    return amax


def _arg(op, apply):
    def arg(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
        dim, keepdim = _dim_args(op.name, dim, keepdim, axis, keepdims)
        return apply(op, input, axis=dim, keepdims=keepdim)

    return arg


def _var(op, apply):
    """``var(input, dim=None, *, correction=1, keepdim=False)``; also PyTorch's older
    ``unbiased=`` and numpy's ``ddof=``, ``axis=``, ``keepdims=``."""

    def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None,
            keepdims=None, ddof=None):  # fmt: skip
        if isinstance(dim, bool):  # x.var(False): PyTorch's var(unbiased)
            dim, unbiased = None, dim
        dim, keepdim = _dim_args(op.name, dim, keepdim, axis, keepdims, input)
        given = [c for c in (correction, ddof, None if unbiased is None else int(unbiased))
                 if c is not None]  # fmt: skip
        if len(given) > 1:
            raise TypeError(f"{op.name}: give one of correction, unbiased and ddof")
        return apply(op, input, axis=dim, correction=given[0] if given else 1, keepdims=keepdim)

    return var


def _cumsum(op, apply):
    def cumsum(input, dim=None, *, dtype=None, axis=None):
        dim = dims(op.name, axis if dim is None else dim)
        if type(dim) is not int:
            raise TypeError(f"cumsum: dim must be one int (PyTorch requires it), got {dim!r}")
        if getattr(input, "shape", None) == () and dim not in (0, -1):
            raise IndexError(f"cumsum: dim {dim} is out of range for a 0-d tensor (use 0 or -1)")
        return apply(op, cast(apply, input, dtype), dim=dim)

    return cumsum


declare("sum", reduction, methods=("sum",), functions=("sum",))
declare("mean", reduction, methods=("mean",), functions=("mean",))
declare("var", _var, methods=("var",), functions=("var",))
declare("std", _var, methods=("std",), functions=("std",))
declare("max", _extreme, methods=("max",), functions=("max",))
declare("min", _extreme, methods=("min",), functions=("min",))
declare("max", _amax, methods=("amax",), functions=("amax",))
declare("min", _amax, methods=("amin",), functions=("amin",))
declare("argmax", _arg, methods=("argmax",), functions=("argmax",))
declare("argmin", _arg, methods=("argmin",), functions=("argmin",))
declare("cumsum", _cumsum, methods=("cumsum",), functions=("cumsum",))
declare("all", reduction, methods=("all",), functions=("all",))
declare("any", reduction, methods=("any",), functions=("any",))
