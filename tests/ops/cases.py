"""The table of op cases that every engine's gradient tests share.

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
    Case("sum", ("sum",), lambda M, a, **k: a.sum(**k), _single(extra=_axes)),
    Case("mean", ("mean",), lambda M, a, **k: a.mean(**k), _single(extra=_axes)),
    Case("max", ("max",), lambda M, a, **k: a.max(**k), _single(_distinct, extra=_axes)),
    Case("reshape", ("reshape",), lambda M, a, shape: a.reshape(shape),
         _single(extra=_reshape_extra)),  # fmt: skip
    Case("transpose", ("transpose",), lambda M, a, axes: a.transpose(*(axes or ())),
         _single(extra=_transpose_extra)),  # fmt: skip
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

SECOND_ORDER = ("mul", "exp", "tanh", "matmul", "softmax_cross_entropy", "log_softmax")

# the layer ops (convolution, pooling, padding, normalisation, embedding) have their cases in
# cases_layers.py; they join the shared table here
from tests.ops.cases_layers import LAYER_CASES, LAYER_EXAMPLES, LAYER_SECOND_ORDER  # noqa: E402, F401

CASES += LAYER_CASES
SECOND_ORDER += LAYER_SECOND_ORDER


def case_by_name(name: str) -> Case:
    return next(c for c in CASES if c.name == name)
