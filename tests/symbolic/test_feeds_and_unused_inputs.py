"""Feeds: a stray feed_dict key (a string, a computed node) is an error, never silently
ignored, while a Variable the outputs do not need may be fed (#22: TF1, Fluid and CSE599W
code feeds every placeholder); lossy feeds are errors; the gradient of an input the output
does not use is zeros of the right shape (#10)."""

import numpy as np
import pytest

from tinygrad_edu.symbolic import (  # noqa: A004 (compile: the graph compiler)
    Executor,
    Variable,
    compile,
    gradients,
    ones_like,
    optimize,
    topo_sort,
)
from tinygrad_edu.symbolic.static.training import Scope, TrainingExecutor


def _runners(nodes):
    """The same graph through the interpreter, the planned interpreter and compiled code."""
    return [Executor(nodes).run, Executor(nodes, plan_memory=True).run, compile(nodes)]


@pytest.mark.parametrize("which", ["executor", "planned", "compiled"])
def test_string_key_is_a_type_error_naming_the_variable(which):
    x = Variable("x")
    run = dict(zip(["executor", "planned", "compiled"], _runners([x * 2])))[which]
    with pytest.raises(TypeError, match=r"not the string 'x'.*Variable named 'x'"):
        run({"x": np.ones(2)})
    with pytest.raises(TypeError, match=r"not the string 'y'.*Variables: 'x'"):
        run({x: np.ones(2), "y": 1.0})  # all Variables fed, plus a stray string


def test_computed_node_cannot_be_fed():
    x = Variable("x")
    h = x * 2
    with pytest.raises(ValueError, match=r"'\(x\*2\)' is computed by the graph \(op mul\)"):
        Executor([h + 1]).run({x: 1.0, h: 5.0})


@pytest.mark.parametrize("which", ["executor", "planned", "compiled"])
def test_a_variable_the_outputs_do_not_need_may_be_fed(which):
    x, w = Variable("x"), Variable("w")
    run = dict(zip(["executor", "planned", "compiled"], _runners([x * 2])))[which]
    np.testing.assert_array_equal(run({x: np.ones(2), w: np.ones(3)})[0], [2.0, 2.0])
    other_x = Variable("x")  # same name, another node: the classic mix-up
    with pytest.raises(ValueError, match="'x' was not fed.*different Variable named 'x'"):
        run({other_x: 2.0})


def test_optimize_does_not_change_which_feeds_are_accepted():
    x = Variable("x", shape=(2,), dtype="float64")
    w = Variable("w", shape=(2,), dtype="float64")
    y = x * 2 + ones_like(w) * 0  # w: needed before optimize, not after (static shape)
    assert w not in topo_sort(optimize([y]))
    feed = {x: np.ones(2), w: np.ones(2)}
    for run in _runners([y]) + _runners(optimize([y])):
        np.testing.assert_array_equal(run(feed)[0], [2.0, 2.0])


@pytest.mark.parametrize("which", ["executor", "planned", "compiled"])
@pytest.mark.parametrize("dtype", ["float32", None])
def test_lossy_feeds_are_errors(which, dtype):
    x = Variable("x", dtype=dtype)
    run = dict(zip(["executor", "planned", "compiled"], _runners([x * 2])))[which]
    if dtype is not None:
        with pytest.raises(TypeError, match=r"'x' has dtype float32 but was fed complex"):
            run({x: np.array([1 + 2j])})
    with pytest.raises(TypeError, match=r"'x' was fed Python objects"):
        run({x: np.array([1.0, None], dtype=object)})
    with pytest.raises(TypeError, match=r"'x' was fed Python objects"):
        run({x: [1.0, None]})
    with pytest.raises(TypeError, match=r"'x' has dtype float32 but was fed complex"):
        run({x: [1 + 1j]})  # Python data becomes float32


def test_other_key_types_are_type_errors():
    x = Variable("x")
    with pytest.raises(TypeError, match="got int 3"):
        Executor([x * 2]).run({x: 1.0, 3: 1.0})


def test_a_bad_feed_leaves_the_executor_usable():
    x = Variable("x")
    ex = Executor([x * 2], plan_memory=True)
    with pytest.raises(TypeError):
        ex.run({"x": 1.0})
    np.testing.assert_allclose(ex.run({x: np.ones(2)})[0], [2.0, 2.0])


def test_training_executor_checks_feeds_too():
    scope = Scope()
    w = scope.parameter("w", np.ones(2, np.float32))
    step = TrainingExecutor([(w * w).sum()], scope=scope)
    with pytest.raises(TypeError, match="not the string"):
        step.run({"x": 1.0})


def test_unused_input_with_static_shape_gets_zeros_without_a_feed():
    x = Variable("x", shape=(3,), dtype="float64")
    w = Variable("w", shape=(2, 4), dtype="float64")
    dx, dw = gradients((x * x).sum(), [x, w])
    assert dw.op.name == "fill_constant" and dw.inputs == () and dw.grad_of is w
    got_dx, got_dw = Executor([dx, dw]).run({x: np.array([1.0, 2.0, 3.0])})  # w not fed
    np.testing.assert_array_equal(got_dx, [2.0, 4.0, 6.0])
    assert got_dw.shape == (2, 4) and got_dw.dtype == np.float64 and not got_dw.any()
    # feeding w anyway (the student expected to need it) is accepted, not a stray key
    again = Executor([dx, dw]).run({x: np.ones(3), w: np.ones((2, 4))})
    assert not again[1].any()


def test_unused_input_without_static_shape_needs_its_feed_and_says_why():
    x, w = Variable("x"), Variable("w")
    dx, dw = gradients((x * x).sum(), [x, w])
    assert dw.op.name == "zeros_like" and dw.inputs == (w,)
    with pytest.raises(
        ValueError,
        match=r"'w' was not fed.*only for the shape of a zero "
        r"gradient.*Variable\('w', shape=...\)",
    ):
        Executor([dx, dw]).run({x: np.ones(2)})
    (got,) = Executor([dw]).run({w: np.ones((2, 5))})
    np.testing.assert_array_equal(got, np.zeros((2, 5)))


def test_gradients_of_non_nodes_is_a_clear_error():
    x = Variable("x")
    with pytest.raises(TypeError, match="xs must be symbolic nodes, got ndarray"):
        gradients(x * 2, [np.ones(2)])
    with pytest.raises(TypeError, match="y must be symbolic nodes, got float"):
        gradients([3.0], [x])


def test_an_object_array_of_numbers_is_fed_as_numbers():
    x = Variable("x", dtype="float32")
    (got,) = Executor([x * 2]).run({x: np.array([1.0, 2.5], dtype=object)})
    np.testing.assert_array_equal(got, [2.0, 5.0])
    assert got.dtype == np.float32
