r"""More reductions and scans, with PyTorch's names: ``prod``, ``cumprod``, ``logsumexp``,
``vector_norm`` (behind ``x.norm``, ``torch.norm`` and ``torch.linalg.vector_norm``); and
composites built on ops: ``count_nonzero``, ``nansum``, ``nanmean``, ``var_mean``/
``std_mean``, ``diff``.

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
from collections import namedtuple

from .base import REGISTRY, NoOnnx, Op, normalize_axes, register
from .dtypes import category, floating
from .reduce import _cumsum, _dim_args, _restore_axes, reduced_shape
from .surface import cast, declare, dims, scalar_dims, shape_of

__all__ = ["Prod", "Cumprod", "Logsumexp", "VectorNorm"]


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
class Cumprod(Op):
    r"""Running products along ``dim`` (from the end when ``reverse``; each excluding its own
    element when ``exclusive``, so the first is 1).

    $\partial L/\partial x_k = \sum_i g_i \prod_{j \in S(i), j \ne k} x_j$ over the outputs
    $i$ whose products include $x_k$: the same running products of a matrix holding 1 in
    place of $x_k$ in row $k$ (exact where some $x_j = 0$; $O(n^2)$ in the length of ``dim``).
    """

    name, saves = "cumprod", (0,)
    onnx = NoOnnx("no ONNX operator: CumSum has no product form, and exp(cumsum(log x)) "
                  "is wrong at zeros and negatives")

    def forward(self, xp, x, dim=0, exclusive=False, reverse=False):
        if x.ndim == 0:
            return xp.ones_like(x) if exclusive else xp.asarray(x, copy=True)
        d = _one_axis(self.name, dim, x.shape)
        if reverse:
            x = xp.flip(x, axis=d)
        if exclusive:
            n = x.shape[d]
            keep = tuple(slice(None) if i != d else slice(0, max(n - 1, 0)) for i in range(x.ndim))
            one = xp.ones(tuple(1 if i == d else s for i, s in enumerate(x.shape)), dtype=x.dtype)
            x = xp.concat([one, x[keep]], axis=d) if n else x
        prod = getattr(xp, "cumulative_prod", None) or xp.cumprod
        out = prod(x, axis=d)
        if category(out.dtype) != 2 and out.dtype != xp.int64:
            out = xp.astype(out, xp.int64)
        return xp.flip(out, axis=d) if reverse else out

    def shape(self, shape, dim=0, exclusive=False, reverse=False):
        _one_axis(self.name, dim, shape)
        return tuple(shape)

    def vjp(self, F, g, inputs, out, shapes, needs, dim=0, exclusive=False, reverse=False):
        x = inputs[0]
        if shapes[0] == ():
            return (F.zeros_like(g) if exclusive else g,)
        xt = F.expand_dims(F.transpose(x, dim0=dim, dim1=-1), axis=-2)  # (..., 1, n): x_j
        ones = F.ones_like(xt * F.transpose(xt, dim0=-2, dim1=-1))  # (..., n, n)
        own = F.greater(F.tril(F.triu(ones)), 0.5)  # row k, column j: j == k
        runs = F.cumprod(F.where(own, 1.0, xt), dim=-1, exclusive=exclusive, reverse=reverse)
        if reverse:  # output i includes x_k: k >= i (k > i when exclusive)
            mask = F.tril(ones, diagonal=-1 if exclusive else 0)
        else:  # k <= i (k < i)
            mask = F.triu(ones, diagonal=1 if exclusive else 0)
        gt = F.expand_dims(F.transpose(g, dim0=dim, dim1=-1), axis=-2)  # (..., 1, n): g_i
        gk = F.sum(runs * mask * gt, axis=-1)  # (..., n): one per k
        return (F.transpose(gk, dim0=dim, dim1=-1),)


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


# -- public surfaces: rows beside the ops (see tinygrad_edu.ops.surface) ---------------------
def _prod(op, apply):
    def prod(input, dim=None, keepdim=False, *, dtype=None):
        if dim is not None and type(dim) is not int:
            raise TypeError(f"prod: dim must be one int (PyTorch's prod reduces one dim), got "
                            f"{dim!r}")  # fmt: skip
        dim = scalar_dims("prod", input, dim)
        return apply(op, cast(apply, input, dtype), axis=dim, keepdims=keepdim)

    return prod


def _cumprod(op, apply):
    def cumprod(input, dim, *, dtype=None):
        if type(dims("cumprod", dim)) is not int:
            raise TypeError(f"cumprod: dim must be one int, got {dim!r}")
        if getattr(input, "shape", None) == () and dim not in (0, -1):
            raise IndexError(f"cumprod: dim {dim} is out of range for a 0-d tensor (use 0 or -1)")
        return apply(op, cast(apply, input, dtype), dim=dim)

    return cumprod


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


def _stat_mean(kind):
    """``var_mean``/``std_mean(input, dim=None, *, correction=1, keepdim=False)``: the two
    statistics as a tuple (``var``/``std`` and ``mean``)."""

    def template(op, apply):
        from .reduce import _var  # noqa: PLC0415

        spread, mean = _var(REGISTRY[kind], apply), REGISTRY["mean"]

        def stat_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
            s = spread(input, dim, unbiased, keepdim, correction=correction)
            d, keepdim = _dim_args(kind + "_mean", dim if not isinstance(dim, bool) else None,
                                   keepdim, None, None, input)  # fmt: skip
            return s, apply(mean, input, axis=d, keepdims=keepdim)

        return stat_mean

    return template


def _diff(op, apply):
    """``diff(input, n=1, dim=-1, prepend=None, append=None)``: differences of neighbours
    along ``dim``, ``n`` times (slices and ``sub``; ``cat`` for prepend/append)."""
    getitem, sub, cat = REGISTRY["getitem"], REGISTRY["sub"], REGISTRY["cat"]

    def diff(input, n=1, dim=-1, prepend=None, append=None):
        shape = shape_of("diff", input)
        if not shape:
            raise ValueError("diff: expects a tensor of at least 1 dim, got a 0-d tensor")
        d = _one_axis("diff", dim, shape)
        parts = [p for p in (prepend, input, append) if p is not None]
        x = apply(cat, *parts, dim=d) if len(parts) > 1 else input
        lead = (slice(None),) * d
        for _ in range(n):
            x = apply(sub, apply(getitem, x, index=lead + (slice(1, None),)),
                      apply(getitem, x, index=lead + (slice(None, -1),)))  # fmt: skip
        return x

    return diff


declare("prod", _prod, methods=("prod",), functions=("prod",))
declare("cumprod", _cumprod, methods=("cumprod",), functions=("cumprod",))
declare("logsumexp", _logsumexp, methods=("logsumexp",), functions=("logsumexp",))
declare("vector_norm", _norm, methods=("norm",), functions=("norm",))
declare(None, _count_nonzero, methods=("count_nonzero",), functions=("count_nonzero",))
declare(None, _nansum(False), methods=("nansum",), functions=("nansum",))
declare(None, _nansum(True), methods=("nanmean",), functions=("nanmean",))
declare(None, _stat_mean("var"), functions=("var_mean",))
declare(None, _stat_mean("std"), functions=("std_mean",))
declare(None, _diff, methods=("diff",), functions=("diff",))


# -- histograms: histc and histogram (counts, not differentiable, as in PyTorch) --------------
def _float_only(opname, x):
    if category(x.dtype) != 2:
        raise NotImplementedError(f"{opname}: the input must be floating point, got {x.dtype} "
                                  "(as PyTorch); convert it first, e.g. x.float()")  # fmt: skip


def _data_range(xp, x, lo, hi):
    """``(lo, hi)``: the data's own min and max when ``lo == hi`` (PyTorch's rule), widened by
    ``widen`` on each side when they are still equal."""
    if lo == hi and x.size:
        lo, hi = float(xp.min(x)), float(xp.max(x))
    return lo, hi


def _counts(xp, index, bins, weight, dtype):
    """How many (or how much ``weight``) of ``index`` falls on each of ``bins`` places;
    ``index`` -1 counts nowhere."""
    flat = xp.reshape(index, (-1,))
    places = xp.arange(bins, dtype=flat.dtype)
    hits = xp.astype(flat[:, None] == places[None, :], dtype)
    if weight is not None:
        hits = hits * xp.reshape(weight, (-1, 1))
    return xp.sum(hits, axis=0)


@register
class Histc(Op):
    r"""``histc(input, bins, min, max)``: counts of the elements in ``bins`` equal bins between
    ``min`` and ``max`` (the data's own range when ``min == max``); elements outside are not
    counted, and ``max`` itself falls in the last bin. Not differentiable (as in PyTorch)."""

    name, differentiable = "histc", False
    onnx = NoOnnx("no ONNX operator counts values into bins")

    def forward(self, xp, x, bins=100, min=0, max=0):  # noqa: A002  (PyTorch's names)
        _float_only(self.name, x)
        lo, hi = _data_range(xp, x, float(min), float(max))
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"histc: range of [{lo}, {hi}] is not finite; give finite "
                               "min and max")  # fmt: skip
        with _quiet_np(xp):
            inside = (x >= lo) & (x <= hi)
            place = xp.astype(xp.floor((x - lo) * bins / (hi - lo)), xp.int64)
            place = xp.where(place >= bins, bins - 1, place)  # max itself: the last bin
        return _counts(xp, xp.where(inside, place, -1), bins, None, x.dtype)

    def shape(self, shape, bins=100, **attrs):
        return (bins,)


@register
class HistogramBinEdges(Op):
    r"""``bins + 1`` equal bin edges from ``min`` to ``max`` (the data's own min and max when
    they are None; widened by 0.5 on each side when equal), in the input's dtype, spaced as
    PyTorch's ``linspace`` (from the left end for the first half, from the right end
    after). Not differentiable."""

    name, differentiable = "histogram_bin_edges", False
    onnx = NoOnnx("no ONNX operator counts values into bins")

    def forward(self, xp, x, bins, min=None, max=None):  # noqa: A002
        if min is None:
            min, max = _data_range(xp, x, 0.0, 0.0)
        if min == max:
            min, max = min - 0.5, max + 0.5
        if not (math.isfinite(min) and math.isfinite(max)):
            raise ValueError(f"histogram: range of [{min}, {max}] is not finite; give a "
                             "finite range=(min, max)")  # fmt: skip
        i = xp.arange(bins + 1, dtype=x.dtype)
        step = (max - min) / bins
        return xp.where(i < (bins + 1) // 2, min + step * i, max - step * (bins - i))

    def shape(self, shape, bins, **attrs):
        return (bins + 1,)


@register
class Histogram(Op):
    r"""``histogram(input, bin_edges, weight)``: the (weighted) counts of the elements between
    each pair of consecutive ``bin_edges``; a bin holds its left edge, the last bin also its
    right edge. ``density=True`` divides by the total and the bin widths. Not
    differentiable."""

    name, arity, differentiable = "histogram", 3, False
    onnx = NoOnnx("no ONNX operator counts values into bins")

    def forward(self, xp, x, edges, weight=None, density=False):
        _float_only(self.name, x)
        n = edges.shape[0] - 1
        flat = xp.reshape(x, (-1,))
        place = xp.astype(xp.searchsorted(edges, flat, side="right"), xp.int64) - 1
        place = xp.where(flat == edges[n], n - 1, place)  # the right edge: the last bin
        inside = (flat >= edges[0]) & (flat <= edges[n])
        hist = _counts(xp, xp.where(inside, place, -1), n, weight, x.dtype)
        if density:
            with _quiet_np(xp):
                hist = hist / (xp.sum(hist) * (edges[1:] - edges[:-1]))
        return hist

    def shape(self, shape, edges, weight=None, **attrs):
        return (edges[0] - 1,)


def _quiet_np(xp):
    errstate = getattr(xp, "errstate", None)
    if errstate is None:
        import contextlib  # noqa: PLC0415

        return contextlib.nullcontext()
    return errstate(invalid="ignore", divide="ignore", over="ignore")


def _histc(op, apply):
    def histc(input, bins=100, min=0, max=0):  # noqa: A002
        if isinstance(bins, bool) or not isinstance(bins, int) or bins <= 0:
            raise RuntimeError(f"histc: bins must be a positive int, got {bins!r}")
        if float(min) > float(max):
            raise RuntimeError(f"histc: max must be larger than min, got min={min}, max={max}")
        return apply(op, input, bins=bins, min=min, max=max)

    return histc


#: ``torch.histogram`` returns ``(hist, bin_edges)`` with names, as PyTorch's return type.
HistogramResult = namedtuple("histogram", ["hist", "bin_edges"])


def _histogram(op, apply):
    """``histogram(input, bins, *, range=None, weight=None, density=False)``: ``bins`` is a
    number of equal bins over ``range`` (the data's min and max by default) or a 1-D tensor of
    increasing edges. Returns ``(hist, bin_edges)``, both of the input's dtype."""
    edges_op = REGISTRY["histogram_bin_edges"]

    def histogram(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
        _float_only("histogram", input)
        if weight is not None and tuple(weight.shape) != tuple(input.shape):
            raise RuntimeError(f"histogram: weight of shape {tuple(weight.shape)} must have "
                               f"the input's shape {tuple(input.shape)}")  # fmt: skip
        if hasattr(bins, "shape"):
            if len(bins.shape) != 1 or bins.shape[0] < 1:
                raise RuntimeError(f"histogram: bins must be a 1-D tensor of edges with at "
                                   f"least one element, got shape {tuple(bins.shape)}")
            edges = bins
        else:
            if isinstance(bins, bool) or not isinstance(bins, int) or bins <= 0:
                raise RuntimeError(f"histogram: bins must be a positive int or a 1-D tensor "
                                   f"of edges, got {bins!r}")  # fmt: skip
            if range is not None and float(range[0]) > float(range[1]):
                raise ValueError(f"histogram: range {tuple(range)} must have min <= max")
            lo, hi = (None, None) if range is None else (float(range[0]), float(range[1]))
            edges = apply(edges_op, input, bins=bins, min=lo, max=hi)
        return HistogramResult(apply(op, input, edges, weight, density=density), edges)

    return histogram


def _cumsum_inplace(op, apply):
    """``x.cumsum_(dim, *, dtype=None)``: ``dtype`` must be ``x``'s own (PyTorch's rule: an
    in-place result keeps the tensor's dtype)."""
    cumsum = _cumsum(op, apply)

    def cumsum_(input, dim=None, *, dtype=None, axis=None):
        if dtype is not None and dtype != input.dtype:
            raise RuntimeError(f"cumsum_: dtype={dtype} differs from this tensor's "
                               f"{input.dtype}; an in-place result keeps the tensor's dtype "
                               "(use x.cumsum(dim, dtype=...) for a new tensor)")  # fmt: skip
        return cumsum(input, dim, axis=axis)

    return cumsum_


declare("cumsum", _cumsum_inplace, inplace=("cumsum_",))  # cumsum's own row is in reduce.py
declare("histc", _histc, methods=("histc",), functions=("histc",), symbolic=False)
declare("histogram", _histogram, methods=("histogram",), functions=("histogram",),
        symbolic=False)  # fmt: skip
