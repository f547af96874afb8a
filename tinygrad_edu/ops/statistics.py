r"""Statistics of values: ``var``/``std`` (with Bessel's ``correction``), ``var_mean``/
``std_mean``, and histograms (``histc``, ``histogram`` with its ``bin_edges``). Order
statistics (``median``, ``quantile``, ``mode``) are in :mod:`~tinygrad_edu.ops.sorting`.

>>> import tinygrad_edu as tg
>>> x = tg.tensor([1.0, 2.0, 4.0])
>>> x.var(), tg.histc(x, bins=3, min=1, max=4)
(tensor(2.3333), tensor([1., 1., 1.]))
"""

from __future__ import annotations

import math
from collections import namedtuple

from .base import REGISTRY, NoOnnx, Op, register
from .promotion import category
from .reductions import _count, _dim_args, _need_float, _Reduction, _restore_axes
from .surface import declare

__all__ = ["Var", "Std", "Histc", "HistogramBinEdges", "Histogram"]


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


# -- public surfaces: rows beside the ops (see tinygrad_edu.ops.surface) ----------------------
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


def _stat_mean(kind):
    """``var_mean``/``std_mean(input, dim=None, *, correction=1, keepdim=False)``: the two
    statistics as a tuple (``var``/``std`` and ``mean``)."""

    def template(op, apply):
        spread, mean = _var(REGISTRY[kind], apply), REGISTRY["mean"]

        def stat_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
            s = spread(input, dim, unbiased, keepdim, correction=correction)
            d, keepdim = _dim_args(kind + "_mean", dim if not isinstance(dim, bool) else None,
                                   keepdim, None, None, input)  # fmt: skip
            return s, apply(mean, input, axis=d, keepdims=keepdim)

        return stat_mean

    return template


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


declare("var", _var, methods=("var",), functions=("var",))
declare("std", _var, methods=("std",), functions=("std",))
declare(None, _stat_mean("var"), functions=("var_mean",))
declare(None, _stat_mean("std"), functions=("std_mean",))
declare("histc", _histc, methods=("histc",), functions=("histc",), symbolic=False)
declare("histogram", _histogram, methods=("histogram",), functions=("histogram",),
        symbolic=False)  # fmt: skip
