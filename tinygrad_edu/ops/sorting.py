r"""Sorting and order statistics, with PyTorch's names: the op ``argsort`` (positions, not
differentiable), ``mode_index`` and ``unique``; and the composites built on them:
``sort``, ``msort``, ``topk``, ``kthvalue``, ``median``, ``quantile``, ``mode``.

A sorted value *is* an element of the input, so every value-returning function here is
``argsort`` followed by ``gather``: the gradient goes back to the element each value came
from (``gather``'s rule), exactly PyTorch's ``SortBackward0``/``TopkBackward0``. Among equal
elements the first comes first (a stable sort); PyTorch leaves that order open, so the index
chosen among ties can differ from PyTorch's.

>>> import tinygrad_edu as tg
>>> x = tg.tensor([3.0, 1.0, 2.0], requires_grad=True)
>>> x.sort()
ValuesIndices(values=tensor([1., 2., 3.], grad_fn=<GatherBackward0>), indices=tensor([1, 2, 0]))
>>> x.topk(2).values.sum().backward(); x.grad
tensor([1., 0., 1.])
"""

from __future__ import annotations

import math

from .base import REGISTRY, NoOnnx, Op, normalize_axes, register
from .promotion import category
from .surface import ValuesIndices, declare, shape_of

__all__ = ["Argsort", "CumExtremeIndex", "ModeIndex", "Unique"]


def _axis(opname, dim, shape):
    return normalize_axes(opname, dim, max(len(shape), 1), shape)[0]


def _stable_argsort(xp, x, d, descending=False):
    try:  # the Array API's signature (the strict namespace, CuPy's newer versions)
        out = xp.argsort(x, axis=d, descending=descending, stable=True)
    except TypeError:  # numpy: no descending=; a stable sort of the negated values
        if descending:
            x = -x if category(x.dtype) == 2 else -xp.astype(x, xp.int64)
        out = xp.argsort(x, axis=d, kind="stable")
    return xp.astype(out, xp.int64)


@register
class Argsort(Op):
    """The positions that sort ``x`` along ``dim`` (ascending, or ``descending``), int64; equal
    elements keep their order (stable). Not differentiable."""

    name, differentiable = "argsort", False

    def forward(self, xp, x, dim=-1, descending=False):
        if x.ndim == 0:
            _axis(self.name, dim, ())
            return xp.zeros((), dtype=xp.int64)
        return _stable_argsort(xp, x, _axis(self.name, dim, x.shape), descending)

    def shape(self, shape, dim=-1, descending=False):
        _axis(self.name, dim, shape)
        return tuple(shape)

    def onnx(self, ex, node, args):  # TopK of every element; ties keep the lower index first
        shape = ex.need_shape(node.inputs[0], "argsort")
        axis = node.attrs.get("dim", -1) % len(shape)
        k = ex.const([shape[axis]], "k", "int64")
        (_, indices), n = ex.node_n("TopK", [args[0], k], ["sorted", "argsort"], axis=axis,
                                    largest=int(bool(node.attrs.get("descending"))), sorted=1)
        return [n], indices


@register
class ModeIndex(Op):
    """The position of the most frequent value along ``dim`` (the smallest such value; its
    last occurrence, as PyTorch picks), int64, with ``dim`` kept as size 1. Not
    differentiable (``mode``'s values are a ``gather`` at these positions)."""

    name, differentiable = "mode_index", False
    onnx = NoOnnx("no ONNX operator: a running extreme's or the most frequent value's index")

    def forward(self, xp, x, dim=-1):
        if x.ndim == 0:
            return xp.zeros((), dtype=xp.int64)
        d = _axis(self.name, dim, x.shape)
        order = _stable_argsort(xp, x, d)
        s = xp.take_along_axis(x, order, axis=d)
        n = x.shape[d]
        # for each sorted place: the length of the run of equal values ending there
        runs = xp.zeros(s.shape, dtype=xp.int64)
        at = [slice(None)] * x.ndim
        for i in range(n):
            at[d] = slice(i, i + 1)
            if i == 0:
                runs[tuple(at)] = 1
                continue
            prev = list(at)
            prev[d] = slice(i - 1, i)
            same = s[tuple(at)] == s[tuple(prev)]
            runs[tuple(at)] = xp.where(same, runs[tuple(prev)] + 1, 1)
        best = xp.max(runs, axis=d, keepdims=True)
        # the first place (smallest value) whose run is the longest: its last element
        first = xp.argmax(xp.astype(runs == best, xp.int8), axis=d, keepdims=True)
        return xp.take_along_axis(order, first, axis=d)

    def shape(self, shape, dim=-1):
        if not len(shape):
            return ()
        d = _axis(self.name, dim, shape)
        return tuple(1 if i == d else s for i, s in enumerate(shape))


@register
class Unique(Op):
    """``part`` of numpy's ``unique`` of ``x`` (flattened, or along ``dim``): ``"values"``
    (sorted), ``"inverse"`` (where each element went) or ``"counts"``. Not differentiable."""

    name, differentiable = "unique", False

    def forward(self, xp, x, part="values", dim=None):
        if not hasattr(xp, "unique") and dim is None:  # the Array API's spelling
            values, _, inverse, counts = xp.unique_all(xp.reshape(x, (-1,)))
        else:
            values, inverse, counts = xp.unique(x, return_inverse=True, return_counts=True,
                                                axis=dim)  # fmt: skip
        if part == "values":
            return values
        if part == "counts":
            return xp.astype(counts, xp.int64)
        shape = x.shape if dim is None else (x.shape[_axis(self.name, dim, x.shape)],)
        return xp.astype(xp.reshape(inverse, shape), xp.int64)

    def shape(self, shape, part="values", dim=None):
        return None  # known only from the values

    def onnx(self, ex, node, args):
        if node.attrs.get("dim") is not None:
            raise NotImplementedError(f"to_onnx: unique along a dim (node {node.name!r}) is not "
                                      "written; unique of all elements exports")
        flat, n1 = ex.node("Reshape", [args[0], ex.const([-1], "flat", "int64")], "flat")
        outs, n2 = ex.node_n("Unique", [flat], ["values", "first", "inverse", "counts"], sorted=1)
        part = node.attrs.get("part", "values")
        return [n1, n2], outs[{"values": 0, "inverse": 2, "counts": 3}[part]]


# -- public surfaces: composites of argsort and gather (see the module's docstring) ------------
def _sorted(apply, input, dim, descending):
    """``(values, indices)`` of ``input`` sorted along ``dim``."""
    if getattr(input, "shape", None) == ():
        _axis("sort", dim, ())
    idx = apply(REGISTRY["argsort"], input, dim=dim, descending=descending)
    if getattr(input, "shape", None) == ():
        return input * 1, idx
    return apply(REGISTRY["gather"], input, idx, dim=dim), idx


def _sort(op, apply):
    def sort(input, dim=-1, descending=False, stable=False):
        if isinstance(dim, bool):  # x.sort(True) is not descending in PyTorch either
            raise TypeError("sort: dim must be an int; pass descending=True by name")
        return ValuesIndices(*_sorted(apply, input, dim, descending))

    return sort


def _argsort(op, apply):
    def argsort(input, dim=-1, descending=False, stable=False):
        return apply(op, input, dim=dim, descending=descending)

    return argsort


def _msort(op, apply):
    def msort(input):
        return _sorted(apply, input, 0, False)[0]

    return msort


def _pick(apply, input, dim, keepdim, position, descending=False, index=None):
    """``(values, indices)`` at ``position`` of the sorted ``dim`` (positions given by
    ``index`` instead, when given), that dim dropped unless ``keepdim``."""
    getitem, gather, squeeze = REGISTRY["getitem"], REGISTRY["gather"], REGISTRY["squeeze"]
    shape = shape_of("kthvalue", input)
    if not shape:
        _axis("kthvalue", dim, ())
        return ValuesIndices(input * 1, apply(REGISTRY["argsort"], input, dim=dim))
    d = _axis("kthvalue", dim, shape)
    if index is None:
        order = apply(REGISTRY["argsort"], input, dim=d, descending=descending)
        index = apply(getitem, order, index=(slice(None),) * d + (slice(position, position + 1),))
    values = apply(gather, input, index, dim=d)
    if not keepdim:
        values, index = apply(squeeze, values, dim=d), apply(squeeze, index, dim=d)
    return ValuesIndices(values, index)


def _topk(op, apply):
    getitem = REGISTRY["getitem"]

    def topk(input, k, dim=-1, largest=True, sorted=True):
        shape = shape_of("topk", input)
        n = shape[_axis("topk", dim, shape)] if shape else 1
        if not 0 <= k <= n:
            raise IndexError(f"topk: k={k} is out of range for dim {dim} of size {n} (shape "
                             f"{shape})")  # fmt: skip
        if not shape:
            return _pick(apply, input, dim, False, 0)
        d = _axis("topk", dim, shape)
        order = apply(REGISTRY["argsort"], input, dim=d, descending=largest)
        index = apply(getitem, order, index=(slice(None),) * d + (slice(0, k),))
        return ValuesIndices(apply(REGISTRY["gather"], input, index, dim=d), index)

    return topk


def _kthvalue(op, apply):
    def kthvalue(input, k, dim=-1, keepdim=False):
        shape = shape_of("kthvalue", input)
        n = shape[_axis("kthvalue", dim, shape)] if shape else 1
        if not 1 <= k <= n:
            raise IndexError(f"kthvalue: k={k} is out of range for dim {dim} of size {n} (shape "
                             f"{shape}); k counts from 1")  # fmt: skip
        return _pick(apply, input, dim, keepdim, k - 1)

    return kthvalue


def _median(op, apply):
    """``median(input)``: the lower median of all elements (a value); ``median(input, dim,
    keepdim=False)``: ``(values, indices)`` along ``dim``."""
    reshape = REGISTRY["reshape"]

    def median(input, dim=None, keepdim=False):
        shape = shape_of("median", input)
        if dim is None:
            n = math.prod(shape)
            if n == 0:  # nan, as in PyTorch
                return apply(REGISTRY["mul"], apply(REGISTRY["sum"], input), math.nan)
            flat = apply(reshape, input, shape=(-1,))
            return _pick(apply, flat, 0, False, (n - 1) // 2).values
        n = shape[_axis("median", dim, shape)] if shape else 1
        if n == 0:
            raise IndexError(f"median: dim {dim} of shape {shape} is empty")
        return _pick(apply, input, dim, keepdim, (n - 1) // 2)

    return median


def _mode(op, apply):
    def mode(input, dim=-1, keepdim=False):
        shape = shape_of("mode", input)
        if not shape:
            return _pick(apply, input, dim, keepdim, 0)
        index = apply(op, input, dim=dim)
        return _pick(apply, input, dim, keepdim, None, index=index)

    return mode


def _quantile(op, apply):
    r"""``quantile(input, q, dim=None, keepdim=False, *, interpolation='linear')``: the sorted
    values at position $q\,(n-1)$, interpolated between their neighbours (``sort``, ``gather``
    and arithmetic; a tensor or list ``q`` adds a leading dim)."""
    getitem, reshape, stack = REGISTRY["getitem"], REGISTRY["reshape"], REGISTRY["stack"]
    squeeze = REGISTRY["squeeze"]

    def at(values, d, i):
        return apply(getitem, values, index=(slice(None),) * d + (slice(i, i + 1),))

    def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
        if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
            raise ValueError(f"quantile: interpolation must be 'linear', 'lower', 'higher', "
                             f"'midpoint' or 'nearest', got {interpolation!r}")  # fmt: skip
        qs = q.tolist() if hasattr(q, "tolist") else q
        many = isinstance(qs, list | tuple)
        qs = list(qs) if many else [qs]
        if any(not 0 <= v <= 1 for v in qs):
            raise ValueError(f"quantile: q must be in [0, 1], got {q!r}")
        shape = shape_of("quantile", input)
        x = input
        if dim is None:
            x, d = apply(reshape, input, shape=(-1,)), 0
        else:
            d = _axis("quantile", dim, shape)
            if not shape:
                x, d = apply(reshape, input, shape=(1,)), 0
        n = shape_of("quantile", x)[d]
        if n == 0:
            raise IndexError(f"quantile: dim {dim} of shape {shape} is empty")
        values = _sorted(apply, x, d, False)[0]
        outs = []
        for v in qs:
            pos = v * (n - 1)
            lo, hi = math.floor(pos), math.ceil(pos)
            frac = pos - lo
            if interpolation == "lower" or interpolation == "nearest" and round(pos) == lo:
                hi, frac = lo, 0.0
            elif interpolation in ("higher", "nearest"):
                lo, frac = hi, 0.0
            elif interpolation == "midpoint":
                frac = 0.5 if hi != lo else 0.0
            out = at(values, d, lo)
            if hi != lo and frac:
                out = out + (at(values, d, hi) - out) * frac
            if dim is None:
                out = apply(reshape, out, shape=(1,) * len(shape) if keepdim else ())
            elif not keepdim:
                out = apply(squeeze, out, dim=d)
            outs.append(out)
        return apply(stack, *outs, dim=0) if many else outs[0]

    return quantile


def _unique(op, apply):
    def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
        out = [apply(op, input, part="values", dim=dim)]
        if return_inverse:
            out.append(apply(op, input, part="inverse", dim=dim))
        if return_counts:
            out.append(apply(op, input, part="counts", dim=dim))
        return out[0] if len(out) == 1 else tuple(out)

    return unique


@register
class CumExtremeIndex(Op):
    """``cum_extreme_index(x, dim, largest)``: for each position along ``dim``, where the running
    maximum (``largest``) or minimum so far sits, int64: its *last* occurrence among equal
    values, and a NaN once one is seen (PyTorch's ``cummax``/``cummin`` indices). Not
    differentiable: the values are a ``gather`` at these positions, whose gradient goes to
    them, as PyTorch's ``CummaxBackward0`` does.

    >>> import numpy as np
    >>> CumExtremeIndex().forward(np, np.array([1.0, 3.0, 2.0, 3.0]), dim=0).tolist()
    [0, 1, 1, 3]
    """

    name, differentiable = "cum_extreme_index", False
    onnx = NoOnnx("no ONNX operator: a running extreme's or the most frequent value's index")

    def forward(self, xp, x, dim=0, largest=True):
        if x.ndim == 0:
            return xp.zeros((), dtype=xp.int64)
        d = _axis(self.name, dim, x.shape)
        out = xp.zeros(x.shape, dtype=xp.int64)
        at = [slice(None)] * x.ndim
        best = idx = None
        for i in range(x.shape[d]):
            at[d] = slice(i, i + 1)
            v = x[tuple(at)]
            if best is None:
                best, idx = v, xp.zeros(v.shape, dtype=xp.int64)
            else:
                take = (v >= best) if largest else (v <= best)
                if category(x.dtype) == 2:  # a float dtype: a NaN wins and stays
                    take = (take & ~xp.isnan(best)) | xp.isnan(v)
                best, idx = xp.where(take, v, best), xp.where(take, i, idx)
            out[tuple(at)] = idx
        return out

    def shape(self, shape, dim=0, largest=True):
        if len(shape):
            _axis(self.name, dim, shape)
        return tuple(shape)


def _cum_extreme(largest):
    name = "cummax" if largest else "cummin"

    def template(op, apply):
        def cum_extreme(input, dim):
            shape = shape_of(name, input)
            if not shape:
                _axis(name, dim, ())
                return ValuesIndices(input * 1, apply(op, input, dim=0, largest=largest))
            index = apply(op, input, dim=dim, largest=largest)
            return ValuesIndices(apply(REGISTRY["gather"], input, index, dim=_axis(name, dim,
                                                                                  shape)), index)

        cum_extreme.__doc__ = (
            f"``(values, indices)``: the running {'maximum' if largest else 'minimum'} along "
            "``dim`` and where it sits (its last occurrence among ties; a NaN once seen), "
            "PyTorch's. The gradient goes to those positions (a ``gather``)."
        )
        return cum_extreme

    return template


declare("argsort", _sort, methods=("sort",), functions=("sort",))
declare("argsort", _argsort, methods=("argsort",), functions=("argsort",))
declare("argsort", _msort, methods=("msort",), functions=("msort",))
declare("argsort", _topk, methods=("topk",), functions=("topk",))
declare("argsort", _kthvalue, methods=("kthvalue",), functions=("kthvalue",))
declare("argsort", _median, methods=("median",), functions=("median",))
declare("argsort", _quantile, methods=("quantile",), functions=("quantile",))
declare("mode_index", _mode, methods=("mode",), functions=("mode",))
declare("unique", _unique, methods=("unique",), functions=("unique",), symbolic=False)
declare("cum_extreme_index", _cum_extreme(True), methods=("cummax",), functions=("cummax",))
declare("cum_extreme_index", _cum_extreme(False), methods=("cummin",), functions=("cummin",))
