"""Cases for the ops of issue 24 (pointwise, sorting, indexing, reductions, linear algebra,
activations) in the shared table of ``cases.py``: every engine's central-difference tests run
them (float64). Import it through ``tests.ops.cases`` (which imports this module at its end).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.ops.cases import (  # isort: skip
    Case, _away_from_zero, _broadcasting, _normal, _positive, _quarter,
    _single,
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

TORCHOPS_SECOND_ORDER: tuple = ("tan", "atan2", "reciprocal")

# op name -> (inputs, attrs): the forward and raw derivative rule of each op, run again on
# array_api_strict by tests/ops/test_strict_namespace.py
_rng = np.random.default_rng(0)
_a, _b = _rng.standard_normal((3, 4)), _rng.standard_normal((1, 4))
_pos = _rng.uniform(0.5, 2.0, (3, 4))
_in = _rng.uniform(-0.9, 0.9, (3, 4))
_m = _rng.standard_normal((2, 3, 4))
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
}
