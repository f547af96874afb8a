"""Every differentiable op's derivative rule against central differences (float64), in the
symbolic engine, over the derivative cases of the per-op table (``tests/opinfo``)."""

from functools import partial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tinygrad_edu.symbolic as S
from tests.opinfo import OPS, SECOND_ORDER, case_by_name
from tinygrad_edu.ops import REGISTRY
from tinygrad_edu.symbolic import gradcheck as check_symbolic_gradients
from tinygrad_edu.symbolic import gradgradcheck as check_symbolic_gradgrad

CASES = [case for info in OPS.values() for case in info.gradients]


def test_table_covers_every_differentiable_op():
    covered = {op for case in CASES for op in case.ops}
    missing = sorted(n for n, op in REGISTRY.items() if op.differentiable and n not in covered
                     and type(op).__module__.startswith("tinygrad_edu.ops"))
    assert not missing, f"add derivative cases for {missing} to tests/opinfo/grad_core.py"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_gradients_match_central_differences(case, data):
    example = data.draw(case.inputs)
    check_symbolic_gradients(partial(case.build, S, **example.extra), example.arrays)


@pytest.mark.parametrize("case", [c for c in CASES if not c.static_shapes], ids=lambda c: c.name)
@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_gradients_without_static_shapes(case, data):
    """Unknown shapes: rules get the input nodes as shapes and resolve them at run time
    (except the few rules that need static shapes, which say so)."""
    example = data.draw(case.inputs)
    build = partial(case.build, S, **example.extra)
    check_symbolic_gradients(build, example.arrays, static_shapes=False)


@pytest.mark.parametrize("name", SECOND_ORDER)
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_second_derivatives_match_central_differences(name, data):
    case = case_by_name(name)
    example = data.draw(case.inputs)
    check_symbolic_gradgrad(partial(case.build, S, **example.extra), example.arrays, atol=1e-4)


def test_rules_that_need_static_shapes_say_so():
    from tinygrad_edu.ops import ShapeError
    from tinygrad_edu.symbolic import Variable, gradients

    x = Variable("x")  # no static shape
    y = x.repeat(2, 1).sum()
    with pytest.raises(ShapeError, match="static shape"):
        gradients(y, [x])
