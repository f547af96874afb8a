r"""Reductions: ``sum``, ``mean``, ``prod``, ``max``/``min`` (over axes, or along one dim with
indices; also ``amax``/``amin``), ``argmax``/``argmin``, ``all``/``any``, ``logsumexp``,
``vector_norm`` (behind ``x.norm``, ``torch.norm`` and ``torch.linalg.vector_norm``), ``sum_to``
(the reduction that undoes broadcasting) and ``numel``; and the composites built on them:
``count_nonzero``, ``nansum``, ``nanmean``. The spread of values (``var``, ``std``, histograms)
is in :mod:`~tinygrad_edu.ops.statistics`, the running reductions in
:mod:`~tinygrad_edu.ops.scans`.

The ops take numpy's ``axis``/``keepdims``; the public surfaces (bottom of the file) speak
PyTorch's ``dim``/``keepdim`` and accept numpy's spelling too.

The derivative of a product is the product of the *other* factors. Dividing the product by
$x_i$ would fail where $x_i = 0$; here it is the product of the exclusive running products
from the left and from the right (``cumprod`` with ``exclusive``), which is exact everywhere,
as PyTorch's ``ProdBackward0`` is.

>>> import tinygrad_edu as tg
>>> x = tg.tensor([[1.0, 2.0], [3.0, 0.0]], requires_grad=True)
>>> x.prod(1), x.norm()
(tensor([2., 0.], grad_fn=<ProdBackward1>), tensor(3.7417, grad_fn=<LinalgVectorNormBackward0>))
>>> x.prod().backward(); x.grad[1]
tensor([0., 6.])
"""

from __future__ import annotations

import math

from .base import REGISTRY, Op, ShapeError, normalize_axes, register
from .promotion import category, floating
from .surface import ValuesIndices, cast, declare, dims, reduction, scalar_dims

__all__ = [
    "Sum", "Mean", "Max", "Min", "MaxDim", "MinDim", "ArgMax", "ArgMin", "SumTo", "Numel",
    "All", "Any", "Prod", "Logsumexp", "VectorNorm", "reduced_shape",
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


def _count(x, axis):
    return math.prod(x.shape[a] for a in normalize_axes("var", axis, x.ndim, x.shape))


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


def _one_axis(opname, axis, shape):
    return normalize_axes(opname, axis, max(len(shape), 1), shape)[0]


@register
class Prod(Op):
    r"""The product over one ``axis`` (all elements when None).
    $\partial L/\partial x_i = g \prod_{j \ne i} x_j$: the exclusive running products from
    both sides, multiplied (exact where some $x_j = 0$)."""

    name, saves, torch_names = "prod", (0,), ("ProdBackward0", "ProdBackward1")

    def variant(self, inputs, attrs):
        return 0 if attrs.get("axis") is None else 1

    def forward(self, xp, x, axis=None, keepdims=False):
        if x.ndim == 0:
            return xp.asarray(x, copy=True) if category(x.dtype) == 2 else xp.astype(x, xp.int64)
        out = xp.prod(x, axis=axis, keepdims=keepdims)
        return xp.astype(out, xp.int64) if category(x.dtype) != 2 else out

    def shape(self, shape, axis=None, keepdims=False):
        if not len(shape):
            return ()
        return reduced_shape(self.name, shape, axis, keepdims)

    def vjp(self, F, g, inputs, out, shapes, needs, axis=None, keepdims=False):
        x = inputs[0]
        if shapes[0] == ():
            return (g,)
        flat = axis is None
        if flat:
            x = F.reshape(x, (-1,))
        d = 0 if flat else axis
        others = F.cumprod(x, dim=d, exclusive=True) * F.cumprod(x, dim=d, exclusive=True,
                                                                  reverse=True)  # fmt: skip
        grad = others * (g if flat else _restore_axes(F, g, axis, keepdims))
        return (F.reshape(grad, shapes[0]) if flat else grad,)

    def onnx(self, ex, node, args):
        return ex.reduce(node, args, "ReduceProd")


@register
class Logsumexp(Op):
    r"""$\log \sum e^{x}$ over ``axis``, computed stably (the maximum taken out first).
    $\partial L/\partial x = g\,e^{x - \mathrm{out}}$ (the softmax)."""

    name, saves, saves_output = "logsumexp", (0,), True

    def forward(self, xp, x, axis=None, keepdims=False):
        x = floating(xp, x)
        if x.ndim == 0:
            return xp.asarray(x, copy=True)
        if x.size == 0:
            shape = reduced_shape(self.name, x.shape, axis, keepdims)
            return xp.full(shape, -math.inf, dtype=x.dtype)
        top = xp.max(x, axis=axis, keepdims=True)
        top = xp.where(xp.isfinite(top), top, xp.zeros_like(top))  # all -inf (or an inf)
        out = xp.log(xp.sum(xp.exp(x - top), axis=axis, keepdims=True)) + top
        if not keepdims:
            out = xp.reshape(out, reduced_shape(self.name, x.shape, axis, False))
        return out

    def shape(self, shape, axis=None, keepdims=False):
        return reduced_shape(self.name, shape, axis, keepdims) if len(shape) else ()

    def vjp(self, F, g, inputs, out, shapes, needs, axis=None, keepdims=False):
        if shapes[0] == ():
            return (g,)
        out, g = (_restore_axes(F, v, axis, keepdims) for v in (out, g))
        return (g * F.exp(inputs[0] - out),)

    def onnx(self, ex, node, args):
        return ex.reduce(node, args, "ReduceLogSumExp")


@register
class VectorNorm(Op):
    r"""The ``ord``-norm over ``axis`` (all elements when None): $(\sum |x|^p)^{1/p}$; ``inf``
    the largest $|x|$, ``-inf`` the smallest, 0 the count of nonzeros.

    $\partial L/\partial x = g\,\mathrm{sign}(x)\,|x|^{p-1}/\mathrm{out}^{p-1}$ (for $p=2$:
    $g\,x/\mathrm{out}$), 0 where the norm is 0, as in PyTorch; for $\pm\infty$ the gradient
    is shared by the elements that reach the extreme."""

    name, saves, saves_output = "vector_norm", (0,), True
    torch_name = "LinalgVectorNormBackward0"

    def forward(self, xp, x, ord=2, axis=None, keepdims=False):
        if category(x.dtype) != 2:
            raise TypeError(f"vector_norm: the input is {x.dtype}, but a norm needs a floating "
                            "dtype (as in PyTorch); convert first, e.g. x.float()")  # fmt: skip
        a = xp.abs(x)
        if x.ndim == 0:
            return a if ord != 0 else xp.astype(a != 0, x.dtype)
        if ord == math.inf or ord == -math.inf:
            if x.size == 0:
                raise ValueError("vector_norm: the infinity norm of an empty input is undefined")
            pick = xp.max if ord > 0 else xp.min
            return pick(a, axis=axis, keepdims=keepdims)
        if ord == 0:
            return xp.sum(xp.astype(a != 0, x.dtype), axis=axis, keepdims=keepdims)
        if ord == 1:
            return xp.sum(a, axis=axis, keepdims=keepdims)
        if ord == 2:
            return xp.sqrt(xp.sum(a * a, axis=axis, keepdims=keepdims))
        return xp.sum(a**ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)

    def shape(self, shape, ord=2, axis=None, keepdims=False):
        return reduced_shape(self.name, shape, axis, keepdims) if len(shape) else ()

    def vjp(self, F, g, inputs, out, shapes, needs, ord=2, axis=None, keepdims=False):
        x = inputs[0]
        if shapes[0] != ():
            out, g = (_restore_axes(F, v, axis, keepdims) for v in (out, g))
        if ord == 0:
            return (F.zeros_like(x),)
        if ord == 1 or shapes[0] == ():
            return (g * F.sign(x),)
        if ord == math.inf or ord == -math.inf:
            hit = F.where(F.equal(F.abs(x), out), 1.0, 0.0)
            return (g * F.sign(x) * hit / F.sum(hit, axis=axis, keepdims=True),)
        zero = F.equal(out, 0.0)
        safe = F.where(zero, 1.0, out)
        if ord == 2:
            return (F.where(zero, 0.0, g * x / safe),)
        scale = F.sign(x) * F.abs(x) ** (ord - 1) / safe ** (ord - 1)
        return (F.where(zero, 0.0, g * scale),)

    def onnx(self, ex, node, args):
        p = node.attrs.get("ord", 2)
        if p in (1, 2):
            return ex.reduce(node, args, f"ReduceL{int(p)}")
        if math.isinf(p):
            pre, a = ex.one("Abs", args, "abs")
            nodes, name = ex.reduce(node, [a], "ReduceMax" if p > 0 else "ReduceMin")
            return pre + nodes, name
        if p == 0:  # the count of nonzero elements
            pre, a = ex.chain([("Equal", [args[0], ex.like(0, node, "zero")], {}),
                               ("Not", ["{0}"], {}), ("CastLike", ["{1}", args[0]], {})], "nz")
        else:
            pre, a = ex.chain([("Abs", args, {}),
                               ("Pow", ["{0}", ex.like(p, node, "p")], {})], "abs_pow")
        nodes, name = ex.reduce(node, [a], "ReduceSum")
        if p == 0:
            return pre + nodes, name
        last, name = ex.one("Pow", [name, ex.like(1 / p, node, "inv_p")], "vector_norm")
        return pre + nodes + last, name


# -- public surfaces: rows beside the ops (see tinygrad_edu.ops.surface) ----------------------
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


def _prod(op, apply):
    def prod(input, dim=None, keepdim=False, *, dtype=None):
        if dim is not None and type(dim) is not int:
            raise TypeError(f"prod: dim must be one int (PyTorch's prod reduces one dim), got "
                            f"{dim!r}")  # fmt: skip
        dim = scalar_dims("prod", input, dim)
        return apply(op, cast(apply, input, dtype), axis=dim, keepdims=keepdim)

    return prod


def _logsumexp(op, apply):
    def logsumexp(input, dim, keepdim=False):
        dim = scalar_dims("logsumexp", input, dims("logsumexp", dim))
        if dim == ():
            dim = None
        return apply(op, input, axis=dim, keepdims=keepdim)

    return logsumexp


def _ord(opname, p):
    if isinstance(p, str):
        if p == "fro":
            return 2
        raise ValueError(f"{opname}: p={p!r} is not supported here (a vector norm: a number, "
                         "inf, -inf or 'fro'); 'nuc' needs singular values")  # fmt: skip
    return float(p) if p not in (math.inf, -math.inf) else p


def _vector_norm(op, apply):
    """``vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None)``, the function of
    ``torch.linalg``."""

    def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
        dim = scalar_dims("vector_norm", x, dims("vector_norm", dim))
        return apply(op, cast(apply, x, dtype), ord=_ord("vector_norm", ord),
                     axis=None if dim == () else dim, keepdims=keepdim)  # fmt: skip

    return vector_norm


def _norm(op, apply):
    """``norm(input, p='fro', dim=None, keepdim=False, dtype=None)``: PyTorch's older
    ``x.norm``, a vector norm over ``dim`` (all elements when None; 'fro' is 2)."""

    def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
        dim = scalar_dims("norm", input, dims("norm", dim))
        return apply(op, cast(apply, input, dtype), ord=_ord("norm", p if p is not None else 2),
                     axis=None if dim == () else dim, keepdims=keepdim)  # fmt: skip

    return norm


def _count_nonzero(op, apply):
    """``count_nonzero(input, dim=None)``: ``(input != 0).sum(dim)``, int64."""
    total, ne = REGISTRY["sum"], REGISTRY["not_equal"]

    def count_nonzero(input, dim=None):
        dim = scalar_dims("count_nonzero", input, dims("count_nonzero", dim))
        return cast(apply, apply(total, apply(ne, input, 0), axis=dim), "int64")

    return count_nonzero


def _nansum(mean):
    """``nansum``/``nanmean``: ``sum``/``mean`` with nan counted as 0 (and, for the mean, not
    counted): ``where`` of ``isnan``, then ``sum``."""

    def template(op, apply):
        where, isnan, total = REGISTRY["where"], REGISTRY["isnan"], REGISTRY["sum"]
        negate, div = REGISTRY["logical_not"], REGISTRY["div"]

        def nansum(input, dim=None, keepdim=False, *, dtype=None):
            dim, keepdim = _dim_args("nansum", dim, keepdim, None, None, input)
            input = cast(apply, input, dtype)
            nan = apply(isnan, input)
            s = apply(total, apply(where, nan, 0.0, input), axis=dim, keepdims=keepdim)
            if not mean:
                return s
            count = apply(total, apply(negate, nan), axis=dim, keepdims=keepdim)
            return apply(div, s, count)

        return nansum

    return template


declare("sum", reduction, methods=("sum",), functions=("sum",))
declare("mean", reduction, methods=("mean",), functions=("mean",))
declare("max", _extreme, methods=("max",), functions=("max",))
declare("min", _extreme, methods=("min",), functions=("min",))
declare("max", _amax, methods=("amax",), functions=("amax",))
declare("min", _amax, methods=("amin",), functions=("amin",))
declare("argmax", _arg, methods=("argmax",), functions=("argmax",))
declare("argmin", _arg, methods=("argmin",), functions=("argmin",))
declare("all", reduction, methods=("all",), functions=("all",))
declare("any", reduction, methods=("any",), functions=("any",))
declare("prod", _prod, methods=("prod",), functions=("prod",))
declare("logsumexp", _logsumexp, methods=("logsumexp",), functions=("logsumexp",))
declare("vector_norm", _norm, methods=("norm",), functions=("norm",))
declare(None, _count_nonzero, methods=("count_nonzero",), functions=("count_nonzero",))
declare(None, _nansum(False), methods=("nansum",), functions=("nansum",))
declare(None, _nansum(True), methods=("nanmean",), functions=("nanmean",))
