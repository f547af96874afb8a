"""The derivative cases of the per-op table (``tests/opinfo``), which every engine's gradient
tests share.

Each :class:`Case` names the registry ops it exercises, a ``build(M, *xs, **extra)`` function
and a Hypothesis strategy of :class:`Example` inputs. ``build`` uses only what symbolic nodes
and eager tensors have in common (operators, ``.exp() .sum(axis, keepdims) .T`` ...) plus the
functions of a namespace ``M`` (``tinygrad_edu.symbolic`` or the eager functional module)
listed in ``case.uses``; an engine whose ``M`` lacks one of them can skip that case.

``Example.arrays`` are the float64 inputs to differentiate; ``Example.extra`` are keyword
arguments that are not differentiated (a ``where`` condition, an index, an exponent).
Generated values keep away from points where the op is not differentiable (relu at 0, ties
in max/maximum, log of non-positive numbers).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

__all__ = ["Case", "Example", "CASES", "SECOND_ORDER", "case_by_name"]


@dataclass
class Example:
    arrays: list[np.ndarray]
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    name: str
    ops: tuple[str, ...]
    build: Callable
    inputs: st.SearchStrategy
    uses: tuple[str, ...] = ()
    static_shapes: bool = False  # the derivative needs the inputs' static shapes

    def __repr__(self) -> str:
        return self.name


# -- value generators: a seed drawn by Hypothesis, values from numpy ---------------------------
_seeds = st.integers(0, 2**32 - 1)


def _normal(rng, shape):
    return rng.standard_normal(shape)


def _positive(rng, shape):
    return rng.uniform(0.5, 2.0, shape)


def _away_from_zero(rng, shape):
    return rng.uniform(0.2, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def _distinct(rng, shape):
    """All elements at least 0.5 apart: no ties for max."""
    n = int(np.prod(shape, dtype=int))
    return (rng.permutation(n) * 0.5 - n * 0.25 + rng.uniform(0, 0.1, n)).reshape(shape)


def _quarter(rng, shape):
    return rng.integers(-3, 3, shape) + 0.25 + rng.uniform(0, 0.1, shape)


def _three_quarter(rng, shape):
    return rng.integers(-3, 3, shape) + 0.75 + rng.uniform(0, 0.1, shape)


_shape = st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple)
_nonscalar = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


@st.composite
def _broadcasting(draw, fills, extra=None):
    """len(fills) arrays of mutually broadcastable shapes, filled by ``fills``."""
    shapes = draw(mutually_broadcastable_shapes(num_shapes=len(fills), max_dims=3, max_side=4))
    rng = np.random.default_rng(draw(_seeds))
    arrays = [fill(rng, s) for fill, s in zip(fills, shapes.input_shapes)]
    return Example(arrays, extra(draw, rng, shapes) if extra else {})


@st.composite
def _single(draw, fill=_normal, shapes=_shape, extra=None):
    shape = draw(shapes)
    rng = np.random.default_rng(draw(_seeds))
    return Example([fill(rng, shape)], extra(draw, shape) if extra else {})


def _axes(draw, shape):
    ndim = len(shape)
    options = [None] + list(range(-ndim, ndim))
    if ndim >= 2:
        options += [(0, ndim - 1), tuple(range(ndim))]
    return {"axis": draw(st.sampled_from(options)), "keepdims": draw(st.booleans())}


@st.composite
def _matmul(draw):
    batch = draw(mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3))
    n, k, m = (draw(st.integers(1, 4)) for _ in range(3))
    ta, tb = draw(st.booleans()), draw(st.booleans())
    rng = np.random.default_rng(draw(_seeds))
    a = rng.standard_normal(batch.input_shapes[0] + ((k, n) if ta else (n, k)))
    b = rng.standard_normal(batch.input_shapes[1] + ((m, k) if tb else (k, m)))
    return Example([a, b], {"trans_A": ta, "trans_B": tb})


@st.composite
def _matmul_vector(draw):
    """A vector on one side or both: mv, vm, dot, and a vector times a batch of matrices."""
    k, n = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    kind = draw(st.sampled_from(["mv", "vm", "dot", "batch_v", "v_batch"]))
    shapes = {"mv": ((n, k), (k,)), "vm": ((k,), (k, n)), "dot": ((k,), (k,)),
              "batch_v": ((2, n, k), (k,)), "v_batch": ((k,), (2, k, n))}[kind]  # fmt: skip
    flags = {}
    if kind != "dot" and draw(st.booleans()):  # the matrix side transposed (F.linear's way)
        flags = {"trans_A": True} if len(shapes[0]) > 1 else {"trans_B": True}
        shapes = tuple(s[:-2] + (s[-1], s[-2]) if len(s) > 1 else s for s in shapes)
    rng = np.random.default_rng(draw(_seeds))
    return Example([rng.standard_normal(s) for s in shapes], flags)


def _broadcasts_to(draw, target):
    """A shape that broadcasts to ``target``: leading axes dropped, some axes set to 1."""
    kept = target[draw(st.integers(0, len(target))) :]
    return tuple(1 if draw(st.booleans()) else d for d in kept)


@st.composite
def _into(draw, fill=_normal):
    """An array and a target shape it broadcasts to (``shape``)."""
    target = draw(_shape)
    shape = _broadcasts_to(draw, target)
    rng = np.random.default_rng(draw(_seeds))
    return Example([fill(rng, shape)], {"shape": target})


@st.composite
def _down_to(draw):
    """An array and a shape that broadcasts to its shape (``sum_to``'s target)."""
    shape = draw(_shape)
    target = _broadcasts_to(draw, shape)
    rng = np.random.default_rng(draw(_seeds))
    return Example([rng.standard_normal(shape)], {"shape": target})


_INDEXES = [
    ((6, 3), (slice(1, None, 2),)),
    ((6, 3), (slice(None), 1)),
    ((6, 3), (slice(4, 0, -1), slice(None, 2))),
    ((6, 3), 2),
    ((6, 3), (Ellipsis, None, slice(1, 3))),
    ((6, 3), np.array([0, 2, 0, 5, 2])),  # repeats: gradients add up
    ((6, 3), (np.array([1, 1, 4]), np.array([0, 2, 0]))),
    ((4, 2, 3), (slice(None), np.array([1, 0, 1]))),
]


@st.composite
def _indexing(draw):
    shape, index = draw(st.sampled_from(_INDEXES))
    rng = np.random.default_rng(draw(_seeds))
    return Example([rng.standard_normal(shape)], {"index": index})


@st.composite
def _rows(draw, fills=(_normal,), min_dims=1, max_dims=3):
    """Arrays sharing one shape of ``min_dims`` to ``max_dims`` dims (classes on the last
    axis)."""
    shape = draw(st.lists(st.integers(1, 4), min_size=min_dims, max_size=max_dims).map(tuple))
    rng = np.random.default_rng(draw(_seeds))
    return Example([fill(rng, shape) for fill in fills])


def _probabilities(rng, shape):
    e = np.exp(rng.standard_normal(shape))
    return e / e.sum(axis=-1, keepdims=True)


def _where_extra(draw, rng, shapes):
    return {"cond": rng.random(shapes.result_shape) > 0.5}


def _pow_extra(draw, shape):
    return {"exponent": draw(st.sampled_from([2, 3, 0.5, -1.5, 1.7]))}


def _softmax_extra(draw, shape):
    return {"axis": draw(st.integers(-len(shape), len(shape) - 1))}


def _transpose_extra(draw, shape):
    return {"axes": draw(st.none() | st.permutations(range(len(shape))).map(tuple))}


def _reshape_extra(draw, shape):
    n = int(np.prod(shape, dtype=int))
    return {"shape": draw(st.sampled_from([(-1,), tuple(reversed(shape)), (n, 1), (1, -1)]))}


def _expand_extra(draw, shape):
    return {"axis": draw(st.integers(-len(shape) - 1, len(shape)))}


def _wide(rng, shape):
    """Values across erf's two regimes (|x| below and above 2.5) and softplus' threshold."""
    return rng.uniform(-5.0, 5.0, shape) + 0.01


def _shifted(by):
    def fill(rng, shape):
        return _three_quarter(rng, shape) + by

    return fill


_matrices = st.lists(st.integers(1, 4), min_size=2, max_size=3).map(tuple)
_wide_shape = st.lists(st.integers(2, 4), min_size=0, max_size=3).map(tuple)
_nonscalar_wide = st.lists(st.integers(2, 4), min_size=1, max_size=3).map(tuple)
_with_ones = st.lists(st.sampled_from([1, 2, 3]), min_size=0, max_size=4).map(tuple)


def _two_dims(draw, shape):
    n = max(len(shape), 1)
    dims = st.integers(-n, n - 1) if shape else st.sampled_from([0, -1])
    return {"dim0": draw(dims), "dim1": draw(dims)}


def _one_dim(draw, shape):
    return {"dim": draw(st.integers(-len(shape), len(shape) - 1)), "keepdim": draw(st.booleans())}


def _any_dim(draw, shape):
    return {"dim": draw(st.integers(-len(shape), len(shape) - 1)) if shape else 0}


def _squeeze_dim(draw, shape):
    options = [None] + (list(range(-len(shape), len(shape))) if shape else [])
    return {"dim": draw(st.sampled_from(options))}


def _expand_extra_dim(draw, shape):
    return {"dim": draw(st.integers(-len(shape) - 1, len(shape)))}


def _flatten_dims(draw, shape):
    n = max(len(shape), 1)
    start = draw(st.integers(0, n - 1))
    end = draw(st.integers(start, n - 1))
    return {"start": start - n * draw(st.booleans()), "end": end}


def _repeats(draw, shape):
    extra = draw(st.integers(0, 1))
    return {"reps": tuple(draw(st.integers(1, 3)) for _ in range(len(shape) + extra))}


def _bounds(draw, shape):
    lo = draw(st.sampled_from([-1.5, -0.5, None]))
    return {"lo": lo, "hi": draw(st.sampled_from([0.5, 1.5]))}


def _mask(draw, shape):
    rng = np.random.default_rng(draw(_seeds))
    return {"mask": rng.random(shape) > 0.5}


def _var(draw, shape):
    extra = _axes(draw, shape)
    return {"dim": extra["axis"], "keepdim": extra["keepdims"],
            "correction": draw(st.sampled_from([0, 1]))} if len(shape) else {"correction": 0}


@st.composite
def _pair_along(draw):
    """Two arrays equal in every dim but ``dim``, where their sizes may differ."""
    shape = draw(_nonscalar)
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    other = list(shape)
    other[dim] = draw(st.integers(0, 3))
    rng = np.random.default_rng(draw(_seeds))
    return Example([rng.standard_normal(shape), rng.standard_normal(tuple(other))], {"dim": dim})


@st.composite
def _same_pair(draw):
    shape = draw(_shape)
    rng = np.random.default_rng(draw(_seeds))
    dim = draw(st.integers(-len(shape) - 1, len(shape)))
    return Example([rng.standard_normal(shape), rng.standard_normal(shape)], {"dim": dim})


@st.composite
def _gathering(draw):
    """An input, a dim, and an int64 index no larger than the input outside ``dim``."""
    shape = draw(_nonscalar)
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(draw(_seeds))
    ishape = [draw(st.integers(1, d)) for d in shape]
    ishape[dim] = draw(st.integers(1, 4))
    index = rng.integers(0, shape[dim], tuple(ishape))
    return Example([rng.standard_normal(shape)], {"dim": dim, "index": index})


@st.composite
def _setting(draw):
    shape, index = draw(st.sampled_from(_INDEXES[:5] + [((6, 3), np.array([0, 2, 5]))]))
    rng = np.random.default_rng(draw(_seeds))
    target = np.broadcast_to(np.empty(shape), shape)[index].shape
    vshape = target[draw(st.integers(0, len(target))):]  # the value may broadcast
    return Example([rng.standard_normal(shape), rng.standard_normal(vshape)], {"index": index})


@st.composite
def _classes(draw):
    """Log-probabilities (N, C) or (C,), class targets (some ignored), options."""
    n, c = draw(st.integers(0, 4)), draw(st.integers(1, 4))
    single = draw(st.booleans())
    rng = np.random.default_rng(draw(_seeds))
    shape = (c,) if single else (n, c)
    target = rng.integers(0, c, () if single else (n,))
    if not single and n:
        target[rng.random(n) < 0.3] = -100
    extra = {"target": target, "reduction": draw(st.sampled_from(["mean", "sum", "none"]))}
    if draw(st.booleans()):
        extra["weight"] = rng.uniform(0.5, 2.0, c)
    return Example([rng.standard_normal(shape)], extra)


@st.composite
def _class_grads(draw):
    rng = np.random.default_rng(draw(_seeds))
    target = np.array([0, 3, -100])
    reduction = draw(st.sampled_from(["mean", "sum", "none"]))
    g = rng.standard_normal((3,) if reduction == "none" else ())
    return Example([g], {"target": target, "reduction": reduction})


@st.composite
def _fused_class_grads(draw):
    """``nll_log_softmax_grad``'s inputs: a loss gradient, log-probabilities (3, 4), class
    targets (all valid: its plain case; or some ignored), options."""
    rng = np.random.default_rng(draw(_seeds))
    target = np.array([0, 3, -100]) if draw(st.booleans()) else np.array([0, 3, 1])
    extra = {"target": target, "reduction": draw(st.sampled_from(["mean", "sum", "none"]))}
    if draw(st.booleans()):
        extra["weight"] = rng.uniform(0.5, 2.0, 4)
    g = rng.standard_normal((3,) if extra["reduction"] == "none" else ())
    z = rng.standard_normal((3, 4))
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return Example([g, logp], extra)


@st.composite
def _binary_loss(draw, logits):
    """Inputs (probabilities in (0.05, 0.95), or logits) and targets in [0, 1] of one shape,
    with a reduction, sometimes a weight (and for logits a pos_weight)."""
    shape = draw(_shape)
    rng = np.random.default_rng(draw(_seeds))
    x = rng.standard_normal(shape) * 3 if logits else rng.uniform(0.05, 0.95, shape)
    extra = {"reduction": draw(st.sampled_from(["mean", "sum", "none"]))}
    if draw(st.booleans()):
        extra["weight"] = rng.uniform(0.5, 2.0, shape)
    if logits and draw(st.booleans()):
        extra["pos_weight"] = rng.uniform(0.5, 3.0, shape)
    return Example([x, rng.uniform(0, 1, shape)], extra)


def _op(M, name, *inputs, **attrs):
    """Apply a registry op with no function in ``M`` (an nn.functional op) directly."""
    from tinygrad_edu.ops import get_op

    return M.apply_op(get_op(name), *inputs, **attrs)


CASES: list[Case] = [
    Case("add", ("add",), lambda M, a, b: a + b, _broadcasting((_normal, _normal))),
    Case("add_const", ("add",), lambda M, a: 2.5 + a, _single()),
    Case("sub", ("sub",), lambda M, a, b: a - b, _broadcasting((_normal, _normal))),
    Case("rsub_const", ("sub",), lambda M, a: 1.5 - a, _single()),
    Case("mul", ("mul",), lambda M, a, b: a * b, _broadcasting((_normal, _normal))),
    Case("mul_self", ("mul",), lambda M, a: a * a, _single()),
    Case("div", ("div",), lambda M, a, b: a / b, _broadcasting((_normal, _away_from_zero))),
    Case("rdiv_const", ("div",), lambda M, a: 2.0 / a, _single(_away_from_zero)),
    Case("neg", ("neg",), lambda M, a: -a, _single()),
    Case("pow", ("pow",), lambda M, a, exponent: a**exponent, _single(_positive, extra=_pow_extra)),
    Case("exp", ("exp",), lambda M, a: a.exp(), _single()),
    Case("log", ("log",), lambda M, a: a.log(), _single(_positive)),
    Case("tanh", ("tanh",), lambda M, a: a.tanh(), _single()),
    Case("sigmoid", ("sigmoid",), lambda M, a: a.sigmoid(), _single()),
    Case("relu", ("relu",), lambda M, a: a.relu(), _single(_away_from_zero)),
    Case(
        "relu_grad",
        ("relu_grad",),
        lambda M, y, g: M.relu_grad(y, g),
        _rows((_away_from_zero, _normal), min_dims=0),
        uses=("relu_grad",),
    ),
    Case(
        "maximum",
        ("maximum",),
        lambda M, a, b: M.maximum(a, b),
        _broadcasting((_quarter, _three_quarter)),
        uses=("maximum",),
    ),
    Case(
        "where",
        ("where",),
        lambda M, a, b, cond: M.where(cond, a, b),
        _broadcasting((_normal, _normal), extra=_where_extra),
        uses=("where",),
    ),
    Case("matmul", ("matmul",), lambda M, a, b, **t: M.matmul(a, b, **t), _matmul(),
         uses=("matmul",)),  # fmt: skip
    Case("matmul_operator", ("matmul",), lambda M, a, b: a @ b.T, _rows((_normal, _normal), 2, 2)),
    Case("matmul_vector", ("matmul",), lambda M, a, b, **t: M.matmul(a, b, **t), _matmul_vector(),
         uses=("matmul",), static_shapes=True),
    Case("sum", ("sum",), lambda M, a, **k: a.sum(**k), _single(extra=_axes)),
    Case("mean", ("mean",), lambda M, a, **k: a.mean(**k), _single(extra=_axes)),
    Case("amax", ("max",), lambda M, a, **k: a.amax(**k), _single(_distinct, extra=_axes)),
    Case("max_all", ("max",), lambda M, a: a.max(), _single(_distinct)),
    Case("amin", ("min",), lambda M, a, **k: a.amin(**k), _single(_distinct, extra=_axes)),
    Case("reshape", ("reshape",), lambda M, a, shape: a.reshape(shape),
         _single(extra=_reshape_extra)),  # fmt: skip
    Case("permute", ("permute",), lambda M, a, axes: a.permute(*axes) if axes else a.T,
         _single(extra=_transpose_extra)),  # fmt: skip
    Case("transpose", ("transpose",), lambda M, a, dim0, dim1: a.transpose(dim0, dim1),
         _single(extra=_two_dims)),  # fmt: skip
    Case("mT", ("transpose",), lambda M, a: a.mT, _single(shapes=_matrices)),
    Case("T", ("transpose",), lambda M, a: a.T, _single()),
    Case("broadcast_to", ("broadcast_to",), lambda M, a, shape: M.broadcast_to(a, shape),
         _into(), uses=("broadcast_to",)),  # fmt: skip
    Case("sum_to", ("sum_to",), lambda M, a, shape: M.sum_to(a, shape), _down_to(),
         uses=("sum_to",)),  # fmt: skip
    Case("expand_dims", ("expand_dims",), lambda M, a, axis: M.expand_dims(a, axis),
         _single(extra=_expand_extra), uses=("expand_dims",)),  # fmt: skip
    Case("getitem", ("getitem",), lambda M, a, index: a[index], _indexing()),
    Case(
        "getitem_grad",
        ("getitem_grad",),
        lambda M, g: M.getitem_grad(g, (6, 3), np.array([0, 2, 0, 5, 2])),
        _single(shapes=st.just((5, 3))),
        uses=("getitem_grad",),
    ),
    Case("zeros_like", ("zeros_like",), lambda M, a: a + M.zeros_like(a), _single(),
         uses=("zeros_like",)),  # fmt: skip
    Case("ones_like", ("ones_like",), lambda M, a: a * M.ones_like(a), _single(),
         uses=("ones_like",)),  # fmt: skip
    Case("fill", ("fill",), lambda M, a: a * M.fill(a, 3.0) + a, _single(), uses=("fill",)),
    Case("astype", ("astype",), lambda M, a: a.astype("float64") * a, _single()),
    Case("clone", ("clone",), lambda M, a: a.clone() * a, _single()),
    Case("softmax", ("softmax",), lambda M, a, axis: a.softmax(axis),
         _single(shapes=_nonscalar, extra=_softmax_extra)),  # fmt: skip
    Case("log_softmax", ("log_softmax",), lambda M, a, axis: a.log_softmax(axis),
         _single(shapes=_nonscalar, extra=_softmax_extra)),  # fmt: skip
    Case(
        "softmax_cross_entropy",
        ("softmax_cross_entropy",),
        lambda M, z, y: M.softmax_cross_entropy(z, y),
        _rows((_normal, _probabilities)),
        uses=("softmax_cross_entropy",),
    ),
    Case(
        "mlp_layer",
        ("matmul", "add", "tanh", "sum"),
        lambda M, x, w, b: (x @ w + b).tanh().sum(axis=0),
        st.builds(
            lambda seed: Example([_normal(np.random.default_rng(seed), s)
                                  for s in ((3, 4), (4, 2), (2,))]),  # fmt: skip
            _seeds,
        ),
    ),
]

CASES += [
    Case("pow_tensor", ("pow_tensor",), lambda M, a, b: a**b,
         _broadcasting((_positive, _normal))),
    Case("rpow", ("pow_tensor",), lambda M, a: 2.0**a, _single()),
    Case("pow_zero", ("pow",), lambda M, a: a**0 + a, _single()),
    *[Case(n, (n,), (lambda name: lambda M, a: getattr(a, name)())(n), _single(fill))
      for n, fill in [("log1p", _positive), ("sqrt", _positive), ("rsqrt", _positive),
                      ("sin", _normal), ("cos", _normal), ("abs", _away_from_zero),
                      ("sign", _away_from_zero), ("erf", _wide)]],
    Case("minimum", ("minimum",), lambda M, a, b: M.minimum(a, b),
         _broadcasting((_quarter, _three_quarter)), uses=("minimum",)),
    Case("clamp", ("clamp",), lambda M, a, lo, hi: a.clamp(lo, hi),
         _single(_quarter, extra=_bounds)),
    Case("clamp_min", ("clamp",), lambda M, a: a.clamp(min=-0.5), _single(_quarter)),
    Case("clamp_tensor", ("clamp_tensor",), lambda M, a, lo, hi: a.clamp(lo, hi),
         _broadcasting((_quarter, _shifted(-1.0), _shifted(1.0)))),
    Case("masked_fill", ("masked_fill",), lambda M, a, mask: a.masked_fill(mask, 0.5),
         _single(extra=_mask)),
    Case("masked_fill_tensor", ("masked_fill",), lambda M, a, v, mask: a.masked_fill(mask, v),
         st.builds(lambda e: Example([e.arrays[0], np.asarray(0.3)], e.extra),
                   _single(extra=_mask))),
    Case("max_dim", ("max_dim",), lambda M, a, dim, keepdim: a.max(dim, keepdim).values,
         _single(_distinct, shapes=_nonscalar, extra=_one_dim)),
    Case("min_dim", ("min_dim",), lambda M, a, dim, keepdim: a.min(dim=dim, keepdim=keepdim)[0],
         _single(_distinct, shapes=_nonscalar, extra=_one_dim)),
    Case("var", ("var",), lambda M, a, **k: a.var(**k), _single(shapes=_wide_shape, extra=_var)),
    Case("std", ("std",), lambda M, a, **k: a.std(**k), _single(shapes=_nonscalar_wide,
         extra=_var)),  # fmt: skip
    Case("cumsum", ("cumsum",), lambda M, a, dim: a.cumsum(dim), _single(extra=_any_dim)),
    Case("squeeze", ("squeeze",), lambda M, a, dim: a.squeeze(dim), _single(shapes=_with_ones,
         extra=_squeeze_dim)),
    Case("unsqueeze", ("expand_dims",), lambda M, a, dim: a.unsqueeze(dim),
         _single(extra=_expand_extra_dim)),
    Case("flatten", ("flatten",), lambda M, a, start, end: a.flatten(start, end),
         _single(extra=_flatten_dims)),
    Case("repeat", ("repeat",), lambda M, a, reps: a.repeat(*reps), _single(extra=_repeats),
         static_shapes=True),
    Case("cat", ("cat",), lambda M, a, b, dim: M.cat([a, b], dim), _pair_along(),
         uses=("cat",), static_shapes=True),
    Case("stack", ("stack",), lambda M, a, b, dim: M.stack([a, b], dim=dim), _same_pair(),
         uses=("stack",)),
    Case("gather", ("gather",), lambda M, a, dim, index: a.gather(dim, index), _gathering()),
    Case("gather_grad", ("gather_grad",),
         lambda M, g: M.gather_grad(g, (4, 3), np.array([[0, 3, 3], [1, 0, 3]]), 0),
         _single(shapes=st.just((2, 3))), uses=("gather_grad",)),
    Case("setitem", ("setitem",), lambda M, a, v, index: M.setitem(a, v, index), _setting(),
         uses=("setitem",)),
    Case("leaky_relu", ("leaky_relu",), lambda M, a: _op(M, "leaky_relu", a, negative_slope=0.2),
         _single(_away_from_zero)),
    Case("gelu", ("gelu",), lambda M, a, approximate: _op(M, "gelu", a, approximate=approximate),
         _single(_wide, extra=lambda draw, s: {"approximate": draw(st.sampled_from(
             ["none", "tanh"]))})),  # fmt: skip
    Case("softplus", ("softplus",), lambda M, a: _op(M, "softplus", a, beta=2.0, threshold=3.0),
         _single(_wide)),
    Case("nll_loss", ("nll_loss",), lambda M, a, target, **k: _op(M, "nll_loss", a, target, **k),
         _classes()),
    Case("nll_loss_grad", ("nll_loss_grad",),
         lambda M, g, target, **k: _op(M, "nll_loss_grad", g, target, shape=(3, 4), **k),
         _class_grads()),
    Case("nll_log_softmax_grad", ("nll_log_softmax_grad",),
         lambda M, g, logp, target, **k: _op(M, "nll_log_softmax_grad", g, logp, target, **k),
         _fused_class_grads()),
    Case("binary_cross_entropy", ("binary_cross_entropy",),
         lambda M, p, t, **k: _op(M, "binary_cross_entropy", p, t, **k), _binary_loss(False)),
    Case("binary_cross_entropy_with_logits", ("binary_cross_entropy_with_logits",),
         lambda M, x, t, **k: _op(M, "binary_cross_entropy_with_logits", x, t, **k),
         _binary_loss(True)),
]

SECOND_ORDER = ("mul", "exp", "tanh", "matmul", "softmax_cross_entropy", "log_softmax",
                "pow_tensor", "erf", "gelu", "softplus", "var", "std", "sqrt", "sin",
                "clamp_tensor", "nll_loss", "nll_log_softmax_grad", "binary_cross_entropy",
                "binary_cross_entropy_with_logits")  # fmt: skip

# the layer ops (convolution, pooling, padding, normalisation, embedding) have their cases in
# grad_layers.py; they join the table here
from tests.opinfo.grad_layers import LAYER_CASES, LAYER_EXAMPLES, LAYER_SECOND_ORDER  # noqa: E402, F401

CASES += LAYER_CASES
SECOND_ORDER += LAYER_SECOND_ORDER


def case_by_name(name: str) -> Case:
    return next(c for c in CASES if c.name == name)


# -- a whole LSTM layer as one op (ops/rnn.py): backpropagation through time ---------------------
@st.composite
def _lstm(draw):
    rng = np.random.default_rng(draw(_seeds))
    T, N, H = draw(st.sampled_from([(1, 1, 1), (3, 2, 2), (2, 1, 3)]))
    arrays = [_normal(rng, (T, N, 4 * H)), _normal(rng, (N, H)), _normal(rng, (N, H)),
              _normal(rng, (4 * H, H)) * 0.5]  # fmt: skip
    return Example(arrays, {"reverse": draw(st.booleans())})


def _lstm_layer(M, gi, h0, c0, w, reverse):
    from tests.opinfo.grad_layers import _op

    return _op(M, "lstm_layer", gi, h0, c0, w, reverse=reverse)


CASES += [Case("lstm_layer", ("lstm_layer",), _lstm_layer, _lstm(), static_shapes=True)]
SECOND_ORDER += ("lstm_layer",)
# the ops of issue 24 (pointwise, sorting, indexing, reductions, linear algebra, activations)
from tests.opinfo.grad_torchops import TORCHOPS_CASES, TORCHOPS_SECOND_ORDER  # noqa: E402

CASES += TORCHOPS_CASES
SECOND_ORDER += TORCHOPS_SECOND_ORDER
# the special functions, masked_scatter and the histograms (grad_names2.py)
from tests.opinfo.grad_names2 import NAMES2_CASES, NAMES2_SECOND_ORDER  # noqa: E402

CASES += NAMES2_CASES
SECOND_ORDER += NAMES2_SECOND_ORDER
