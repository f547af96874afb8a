"""Cases for the special functions (ops/special.py), masked_scatter and the histograms in the
per-op table (``grad_core.py``) (central differences in every engine, float64), and their
examples on array_api_strict (``test_strict_namespace.py``). Imported through
``tests.opinfo.grad_core``."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.opinfo.grad_core import Case, Example, _positive, _seeds, _single, _wide  # isort: skip

__all__ = ["NAMES2_CASES", "NAMES2_SECOND_ORDER", "NAMES2_EXAMPLES"]


def _op(M, name, *args, **attrs):
    from tests.opinfo.grad_layers import _op as op

    return op(M, name, *args, **attrs)


def _unit(rng, shape):
    """In (-0.9, 0.9): inside erfinv's domain, away from its poles at +-1."""
    return rng.uniform(-0.9, 0.9, shape)


def _nonzero(rng, shape):
    """Away from 0 (sinc's formula divides by x)."""
    return rng.uniform(0.3, 3.0, shape) * rng.choice([-1.0, 1.0], shape) + 0.013


def _off_poles(rng, shape):
    """In (0.3, 3), or negative and at least 0.15 from the poles 0, -1, -2, -3 of lgamma and
    digamma: next to a pole (-2.00002) a central difference of the steep first derivative
    is not the second derivative, whatever the rule."""
    positive = rng.uniform(0.3, 3.0, shape)
    negative = -(rng.integers(0, 3, shape) + rng.uniform(0.15, 0.85, shape))
    return np.where(rng.random(shape) < 0.5, positive, negative)


@st.composite
def _scatter(draw):
    rng = np.random.default_rng(draw(_seeds))
    shape = draw(st.sampled_from([(3,), (2, 3), (3, 4)]))
    mask = rng.random(shape[-1:]) > 0.4
    count = int(mask.sum()) * (shape[0] if len(shape) == 2 else 1)
    source = rng.standard_normal((count + draw(st.integers(0, 2)),))
    return Example([rng.standard_normal(shape), source], {"mask": mask})


NAMES2_CASES = [
    Case("lgamma", ("lgamma",), lambda M, a: a.lgamma(), _single(_off_poles)),
    Case("digamma", ("digamma",), lambda M, a: a.digamma(), _single(_off_poles)),
    Case("polygamma", ("polygamma",), lambda M, a, n: a.polygamma(n), _single(
        _positive, extra=lambda draw, s: {"n": draw(st.integers(1, 3))})),
    Case("erfc", ("erfc",), lambda M, a: a.erfc(), _single(_wide)),
    Case("erfinv", ("erfinv",), lambda M, a: a.erfinv(), _single(_unit)),
    Case("i0", ("i0", "i1"), lambda M, a: a.i0(), _single(_wide)),
    Case("i1", ("i1",), lambda M, a: _op(M, "i1", a), _single(_wide)),
    Case("sinc", ("sinc",), lambda M, a: a.sinc(), _single(_nonzero)),
    Case("entr", ("entr",), lambda M, a: _op(M, "entr", a), _single(_positive)),
    Case("masked_scatter", ("masked_scatter", "masked_scatter_grad"),
         lambda M, a, s, mask: _op(M, "masked_scatter", a, mask, s), _scatter(),
         static_shapes=True),
]
NAMES2_SECOND_ORDER = ("lgamma", "digamma", "erfinv", "i0", "sinc", "masked_scatter")

_rng = np.random.default_rng(0)
_a = _rng.standard_normal((3, 4))
_pos = _rng.uniform(0.5, 2.0, (3, 4))
_in = _rng.uniform(-0.9, 0.9, (3, 4))
_mask = np.array([True, False, True, True])
NAMES2_EXAMPLES = {
    **{n: ((_a,), {}) for n in ("lgamma", "digamma", "erfc", "i0", "i1", "sinc")},
    "polygamma": ((_pos,), {"n": 2}),
    "erfinv": ((_in,), {}),
    "entr": ((_pos,), {}),
    "masked_scatter": ((_a, _mask, _rng.standard_normal(10)), {}),
    "masked_scatter_grad": ((_a, _mask), {"shape": (2, 5)}),
    "histc": ((_a,), {"bins": 4}),
    "histogram_bin_edges": ((_a,), {"bins": 4}),
    "histogram": ((_a, np.array([-1.0, 0.0, 0.5, 2.0])), {}),
}
