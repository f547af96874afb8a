"""Cases for the ops of issue 24 (pointwise, sorting, indexing, reductions, linear algebra,
activations) in the per-op table (``grad_core.py``): every engine's central-difference tests run
them (float64). Import it through ``tests.opinfo.grad_core`` (which imports this module at its end).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.opinfo.grad_core import (  # isort: skip
    Case, Example, _away_from_zero, _broadcasting, _distinct, _normal, _positive, _quarter,
    _seeds, _single, _wide,
)  # fmt: skip

__all__ = ["TORCHOPS_CASES", "TORCHOPS_SECOND_ORDER", "TORCHOPS_EXAMPLES"]

_nonscalar = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)
_matrices = st.lists(st.integers(1, 4), min_size=2, max_size=3).map(tuple)


def _inside(rng, shape):
    """In (-0.9, 0.9): asin and acos are smooth there."""
    return rng.uniform(-0.9, 0.9, shape)


def _method(name, **kw):
    return lambda M, a: getattr(a, name)(**kw)


def _dim(draw, shape):
    return {"dim": draw(st.integers(-len(shape), len(shape) - 1))}


TORCHOPS_CASES: list[Case] = [
    *[Case(n, (n,), _method(n), _single(fill)) for n, fill in [
        ("floor", _quarter), ("ceil", _quarter), ("trunc", _quarter), ("frac", _quarter),
        ("round", _quarter), ("tan", _inside), ("atan", _normal), ("asin", _inside),
        ("acos", _inside), ("sinh", _normal), ("cosh", _normal), ("expm1", _normal),
        ("exp2", _normal), ("log2", _positive), ("log10", _positive),
        ("reciprocal", _away_from_zero), ("nan_to_num", _normal)]],
    Case("round_decimals", ("round",), _method("round", decimals=1), _single(_quarter)),
    Case("fmod", ("fmod",), lambda M, a, b: M.fmod(a, b), _broadcasting((_quarter, _positive)),
         uses=("fmod",)),
    Case("remainder", ("remainder",), lambda M, a, b: a % b,
         _broadcasting((_quarter, _positive))),
    Case("atan2", ("atan2",), lambda M, a, b: M.atan2(a, b),
         _broadcasting((_away_from_zero, _away_from_zero)), uses=("atan2",)),
]



@st.composite
def _matrix_and(draw, extra, shapes=_matrices):
    shape = draw(shapes)
    rng = np.random.default_rng(draw(_seeds))
    return Example([rng.standard_normal(shape)], extra(draw, rng, shape))


def _diagonal_extra(draw, rng, shape):
    n = len(shape)
    dim1 = draw(st.integers(-n, n - 1))
    dim2 = draw(st.sampled_from([d for d in range(-n, n) if d % n != dim1 % n]))
    return {"offset": draw(st.integers(-2, 2)), "dim1": dim1, "dim2": dim2}


def _select_extra(draw, rng, shape):
    d = draw(st.integers(-len(shape), len(shape) - 1))
    return {"dim": d, "index": rng.integers(0, shape[d], draw(st.integers(0, 5)))}


def _scatter_extra(draw, rng, shape):
    d = draw(st.integers(-len(shape), len(shape) - 1))
    ishape = [draw(st.integers(1, s)) for s in shape]
    # distinct positions along d (a repeated position would make scatter's result ambiguous)
    cols = [rng.permutation(shape[d])[: min(ishape[d], shape[d])] for _ in range(int(np.prod(
        [s for i, s in enumerate(ishape) if i != d % len(shape)])))]  # fmt: skip
    ishape[d] = len(cols[0])
    index = np.moveaxis(np.array(cols).reshape([s for i, s in enumerate(ishape)
                                                if i != d % len(shape)] + [ishape[d]]), -1, d)
    return {"dim": d, "index": index, "src": rng.standard_normal(tuple(ishape))}


def _unfold_extra(draw, rng, shape):
    d = draw(st.integers(-len(shape), len(shape) - 1))
    size = draw(st.integers(1, shape[d]))
    return {"dim": d, "size": size, "step": draw(st.integers(1, 3))}


def _mask_extra(draw, rng, shape):
    return {"mask": rng.random(shape[1:]) > 0.4}


def _op(M, name, *args, **attrs):
    from tests.opinfo.grad_layers import _op as op

    return op(M, name, *args, **attrs)


def _index(M, a):
    from tests.opinfo.grad_layers import _const

    return _const(M, a)


TORCHOPS_CASES += [
    Case("tril", ("tril",), lambda M, a, k: a.tril(k), _matrix_and(
        lambda draw, rng, s: {"k": draw(st.integers(-2, 2))})),
    Case("triu", ("triu",), lambda M, a, k: M.triu(a, k), _matrix_and(
        lambda draw, rng, s: {"k": draw(st.integers(-2, 2))}), uses=("triu",)),
    Case("flip", ("flip",), lambda M, a, dims: a.flip(*dims), _matrix_and(
        lambda draw, rng, s: {"dims": draw(st.sampled_from([(0,), (-1,), (0, 1)]))})),
    Case("roll", ("roll",), lambda M, a, shifts, dims: a.roll(shifts, dims), _matrix_and(
        lambda draw, rng, s: {"shifts": draw(st.integers(-5, 5)),
                              "dims": draw(st.sampled_from([None, 0, -1]))})),
    Case("index_select", ("index_select",), lambda M, a, dim, index: a.index_select(
        dim, _index(M, index)), _matrix_and(_select_extra)),
    Case("index_select_grad", ("index_select_grad",), lambda M, g: _op(
        M, "index_select_grad", g, np.array([0, 2, 0]), shape=(4, 2), dim=0),
         _single(shapes=st.just((3, 2)))),
    Case("index_add", ("index_add",), lambda M, a, s: a.index_add(0, _index(M, np.array(
        [1, 0, 1])), s), st.builds(lambda seed: Example([
            np.random.default_rng(seed).standard_normal(s) for s in ((3, 2), (3, 2))]), _seeds)),
    Case("scatter", ("scatter",), lambda M, a, s, dim, index: a.scatter(dim, _index(M, index), s),
         _matrix_and(_scatter_extra).map(lambda e: Example(e.arrays + [e.extra.pop("src")],
                                                           e.extra)), static_shapes=True),
    Case("masked_select", ("masked_select", "masked_select_grad"), lambda M, a, mask: _op(
        M, "masked_select", a, mask).sum() * 1.5 + (_op(M, "masked_select", a, mask) ** 2).sum(),
         _matrix_and(_mask_extra), static_shapes=True),
    Case("diagonal", ("diagonal",), lambda M, a, **k: a.diagonal(**k),
         _matrix_and(_diagonal_extra)),
    Case("diag_embed", ("diagonal_grad",), lambda M, a, **k: a.diag_embed(**k),
         _single(shapes=_nonscalar, extra=lambda draw, s: {"offset": draw(st.integers(-1, 1))}),
         static_shapes=True),
    Case("unfold", ("unfold", "unfold_grad"), lambda M, a, **k: a.unfold(k["dim"], k["size"],
         k["step"]), _matrix_and(_unfold_extra)),
]

TORCHOPS_SECOND_ORDER: tuple = ("tan", "atan2", "reciprocal", "diagonal", "unfold",
                                "index_select")

# op name -> (inputs, attrs): the forward and raw derivative rule of each op, run again on
# array_api_strict by tests/ops/test_strict_namespace.py
_rng = np.random.default_rng(0)
_a, _b = _rng.standard_normal((3, 4)), _rng.standard_normal((1, 4))
_pos = _rng.uniform(0.5, 2.0, (3, 4))
_in = _rng.uniform(-0.9, 0.9, (3, 4))
_m = _rng.standard_normal((2, 3, 4))
_idx = np.array([2, 0, 2])
TORCHOPS_EXAMPLES = {
    **{n: ((_a,), {}) for n in ("floor", "ceil", "trunc", "frac", "atan", "sinh", "cosh",
                                "expm1", "exp2", "isnan", "isinf", "isfinite", "nan_to_num")},
    **{n: ((_in,), {}) for n in ("tan", "asin", "acos")},
    **{n: ((_pos,), {}) for n in ("log2", "log10", "reciprocal")},
    "round": ((_a * 10,), {"decimals": -1}),
    "fmod": ((_a * 3, _pos), {}),
    "remainder": ((_a * 3, _pos), {}),
    "floor_divide": ((_a * 3, _pos), {}),
    "atan2": ((_a, _b), {}),
    "isclose": ((_a, _a + 1e-9), {"rtol": 1e-3}),
    "tril": ((_m,), {"diagonal": -1}),
    "triu": ((_a,), {"diagonal": 1}),
    "flip": ((_m,), {"dims": (0, 2)}),
    "roll": ((_m,), {"shifts": (1, -2), "dims": (0, 2)}),
    "index_select": ((_a, _idx), {"dim": 1}),
    "index_select_grad": ((_a[:, :3], _idx), {"shape": (3, 4), "dim": 1}),
    "index_add": ((_a, _idx, _a[:, :3]), {"dim": 1, "alpha": 2.0}),
    "scatter": ((_a, np.array([[1, 0, 3]]), _b), {"dim": 1}),
    "masked_select": ((_a, _b > 0), {}),
    "masked_select_grad": ((_a[_a > 0], _a > 0), {"shape": (3, 4)}),
    "nonzero": ((_a > 0,), {}),
    "diagonal": ((_m,), {"offset": 1, "dim1": 2, "dim2": 0}),
    "diagonal_grad": ((_a.T[:, :1],), {"shape": (2, 4, 3), "offset": 1, "dim1": 2, "dim2": 0}),
    "unfold": ((_m,), {"dim": 2, "size": 2, "step": 1}),
    "unfold_grad": ((_m[:, :, :3, None] * _m[0, 0, :2],), {"shape": (2, 3, 4), "dim": 2,
                                                            "size": 2, "step": 1}),
}


def _with_zeros(rng, shape):
    """Normal values, about a third of them exactly 0 (where a product's rule must not
    divide)."""
    a = rng.standard_normal(shape)
    return np.where(rng.random(shape) < 0.3, 0.0, a)


def _reduce_dim(draw, shape):
    return {"dim": draw(st.sampled_from([None] + list(range(-len(shape), len(shape))))),
            "keepdim": draw(st.booleans())}  # fmt: skip


TORCHOPS_CASES += [
    Case("prod", ("prod",), lambda M, a, dim, keepdim: a.prod(dim, keepdim),
         _single(_with_zeros, shapes=_nonscalar, extra=_reduce_dim)),
    Case("cumprod", ("cumprod",), lambda M, a, dim: a.cumprod(dim),
         _single(_with_zeros, shapes=_nonscalar, extra=_dim)),
    Case("cumprod_exclusive", ("cumprod",), lambda M, a, dim, reverse: _op(
        M, "cumprod", a, dim=dim, exclusive=True, reverse=reverse),
         _single(_with_zeros, shapes=_nonscalar, extra=lambda draw, s: {
             **_dim(draw, s), "reverse": draw(st.booleans())})),
    Case("logsumexp", ("logsumexp",), lambda M, a, dim, keepdim: a.logsumexp(
        dim if dim is not None else tuple(range(len(a.shape))), keepdim),
         _single(shapes=_nonscalar, extra=_reduce_dim), static_shapes=True),
    Case("vector_norm", ("vector_norm",), lambda M, a, p, dim, keepdim: a.norm(p, dim, keepdim),
         _single(_distinct, shapes=_nonscalar, extra=lambda draw, s: {
             **_reduce_dim(draw, s), "p": draw(st.sampled_from([2, 1, 3.0, float("inf")]))})),
]
TORCHOPS_SECOND_ORDER += ("prod", "cumprod", "logsumexp", "vector_norm")
TORCHOPS_EXAMPLES.update({
    "prod": ((_m,), {"axis": 1, "keepdims": True}),
    "cumprod": ((_m,), {"dim": 1, "exclusive": True, "reverse": True}),
    "logsumexp": ((_m,), {"axis": (0, 2)}),
    "vector_norm": ((_m,), {"ord": 3.0, "axis": 1}),
})
TORCHOPS_EXAMPLES.update({
    "argsort": ((_m,), {"dim": 1, "descending": True}),
    "mode_index": ((np.round(_m),), {"dim": 2}),
    "unique": ((np.round(_m),), {"part": "counts"}),
    "cum_extreme_index": ((np.round(_m),), {"dim": 1, "largest": False}),
})
# random ops: parameters that leave one possible value, so both namespaces draw the same
TORCHOPS_EXAMPLES.update({
    "random_fill": ((_a,), {"dist": "uniform", "params": (("low", 0.5), ("high", 0.5))}),
    "sample": ((_pos,), {"dist": "normal", "std": 0.0}),
    "multinomial": ((np.array([0.0, 1.0, 0.0]),), {"num_samples": 2, "replacement": True}),
})


def _well_conditioned(rng, shape):
    """Square matrices near the identity (invertible, with a moderate condition number)."""
    n = shape[-1]
    return np.eye(n) * 2.0 + rng.uniform(-0.5, 0.5, shape)


@st.composite
def _einsum_case(draw):
    equation, shapes = draw(st.sampled_from([
        ("ij,jk->ik", ((2, 3), (3, 4))), ("bij,bjk->bik", ((2, 2, 3), (2, 3, 2))),
        ("i,j->ij", ((3,), (2,))), ("ij->", ((2, 3),)), ("ij,ik->j", ((2, 3), (2, 4))),
        ("...j,j->...", ((2, 3), (3,))), ("ij,jk,kl->il", ((2, 3), (3, 2), (2, 2))),
        ("ij,j->ij", ((2, 3), (1,))),
    ]))  # fmt: skip
    rng = np.random.default_rng(draw(_seeds))
    return Example([rng.standard_normal(s) for s in shapes], {"equation": equation})


@st.composite
def _square(draw, rhs=None):
    n = draw(st.integers(1, 3))
    batch = draw(st.sampled_from([(), (2,)]))
    rng = np.random.default_rng(draw(_seeds))
    arrays = [_well_conditioned(rng, batch + (n, n))]
    if rhs == "vector":
        arrays.append(rng.standard_normal(batch + (n,)))
    elif rhs == "matrix":
        arrays.append(rng.standard_normal(batch + (n, 2)))
    return Example(arrays, {"vector": rhs == "vector"} if rhs else {})


TORCHOPS_CASES += [
    Case("einsum", ("einsum",), lambda M, *xs, equation: M.einsum(equation, *xs),
         _einsum_case(), uses=("einsum",), static_shapes=True),
    Case("inv", ("inv",), lambda M, a: M.inverse(a), _square(), uses=("inverse",)),
    Case("det", ("det",), lambda M, a: M.det(a), _square(), uses=("det",)),
    Case("solve", ("solve",), lambda M, a, b, vector: _op(M, "solve", a, b, vector=vector),
         st.one_of(_square("vector"), _square("matrix"))),
]
TORCHOPS_SECOND_ORDER += ("einsum", "inv", "det", "solve")
_sq = np.eye(3) * 2 + _a[:, :3] * 0.3
TORCHOPS_EXAMPLES.update({
    "einsum": ((_m, _a), {"equation": "bij,ij->bj"}),
    "inv": ((_sq,), {}),
    "det": ((_sq,), {}),
    "solve": ((_sq, _a), {"vector": False}),
})

TORCHOPS_CASES += [
    *[Case(n, (n,), (lambda name: lambda M, a: _op(M, name, a))(n), _single(fill))
      for n, fill in [("silu", _wide), ("mish", _wide), ("log_sigmoid", _wide),
                      ("hardswish", _wide), ("hardsigmoid", _wide)]],
    Case("elu", ("elu",), lambda M, a, **k: _op(M, "elu", a, **k), _single(_wide, extra=lambda
         draw, s: draw(st.sampled_from([{}, {"alpha": 0.5}, {"alpha": 1.6732632423543772,
         "scale": 1.0507009873554805}, {"alpha": 2.0, "input_scale": 0.5}])))),
    Case("hardtanh", ("hardtanh",), lambda M, a: _op(M, "hardtanh", a, min_val=-1.0,
         max_val=2.0), _single(_quarter)),
]
TORCHOPS_SECOND_ORDER += ("silu", "mish", "elu", "log_sigmoid")
TORCHOPS_EXAMPLES.update({
    **{n: ((_a * 3,), {}) for n in ("silu", "mish", "hardswish", "hardsigmoid", "log_sigmoid")},
    "elu": ((_a,), {"alpha": 0.5, "scale": 2.0, "input_scale": 0.5}),
    "hardtanh": ((_a,), {"min_val": -0.5, "max_val": 0.5}),
})
