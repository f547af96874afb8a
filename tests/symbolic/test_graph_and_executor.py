"""Building graphs (names, static shapes, constants) and running them (feeds, errors,
observers, depth)."""

import doctest
import importlib

import numpy as np
import pytest

import tinygrad_edu.symbolic as S
from tinygrad_edu.ops import ShapeError
from tinygrad_edu.symbolic import Executor, Variable


def test_canonical_example_names_and_values():
    A, B, C = Variable("A"), Variable("B"), Variable("C")
    D = (A + B) * C
    E = D @ (A + C)
    assert [n.name for n in (D, E)] == ["((A+B)*C)", "(((A+B)*C)@(A+C))"]
    assert E.inputs[0] is D and D.inputs[0].inputs == (A, B)
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal((3, 3)) for _ in range(3))
    (e,) = Executor([E]).run({A: a, B: b, C: c})
    np.testing.assert_allclose(e, ((a + b) * c) @ (a + c))


def test_a_times_a_has_two_edges():
    x = Variable("x")
    y = x * x
    assert y.inputs == (x, x)
    assert hash(x) != hash(Variable("x")) and x != Variable("x")


def test_constants_on_either_side():
    x = Variable("x")
    xv = np.array([1.0, 2.0, 4.0])
    nodes = [x + 5, 5 + x, x - 5, 5 - x, 2 * x, x * 2, x / 4, 1 / x, x**3, -x]
    got = Executor(nodes).run({x: xv})
    want = [xv + 5, 5 + xv, xv - 5, 5 - xv, 2 * xv, xv * 2, xv / 4, 1 / xv, xv**3, -xv]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert (x + 5).const_attr == 5 and (x * 2).const_attr == 2
    assert (5 - x).name == "(5-x)"


def test_methods_match_numpy():
    x = Variable("x")
    xv = np.random.default_rng(1).standard_normal((2, 3))
    nodes = [x.exp(), x.tanh(), x.relu(), x.sum(axis=0), x.mean(axis=1, keepdims=True),
             x.max(), x.reshape(3, 2), x.transpose(1, 0), x.T, x[1], x[:, ::2],
             x.softmax(axis=0), x.matmul(x.T)]  # fmt: skip
    m = xv - xv.max(0)
    want = [np.exp(xv), np.tanh(xv), np.maximum(xv, 0), xv.sum(0), xv.mean(1, keepdims=True),
            xv.max(), xv.reshape(3, 2), xv.T, xv.T, xv[1], xv[:, ::2],
            np.exp(m) / np.exp(m).sum(0), xv @ xv.T]  # fmt: skip
    for g, w in zip(Executor(nodes).run({x: xv}), want):
        np.testing.assert_allclose(g, w)


def test_static_shapes_flow_and_fail_at_build_time():
    a, b = Variable("a", shape=(3, 4)), Variable("b", shape=(4, 2))
    assert (a @ b).shape == (3, 2)
    assert S.reduce_sum(a + 1, axis=1, keepdims=True).shape == (3, 1)
    assert (a @ Variable("free")).shape is None
    with pytest.raises(ShapeError, match=r"matmul: shapes \(3, 4\) and \(5, 4\) do not align"):
        a @ Variable("c", shape=(5, 4))
    with pytest.raises(ShapeError, match=r"add: shapes \(3, 4\) and \(2,\)"):
        a + Variable("d", shape=(2,))


def test_missing_feed_names_the_variable():
    x, y = Variable("x"), Variable("weights")
    ex = Executor([x * y])
    with pytest.raises(ValueError, match=r"'weights' was not fed \(fed: 'x'\)"):
        ex.run({x: 1.0})


def test_declared_shape_is_checked_against_the_feed():
    x = Variable("x", shape=(2,))
    with pytest.raises(ShapeError, match=r"'x' was declared with shape \(2,\) but fed shape"):
        Executor([x * 2]).run({x: np.ones(3)})


def test_runtime_shape_error_names_op_node_and_shapes():
    a, b = Variable("a"), Variable("b")
    with pytest.raises(ShapeError, match=r"matmul: shapes \(2, 3\) and \(2, 3\).*node '\(a@b\)'"):
        Executor([a @ b]).run({a: np.ones((2, 3)), b: np.ones((2, 3))})


def test_one_executor_serves_feeds_of_different_shapes():
    x = Variable("x")
    ex = Executor([S.reduce_sum(x * x, axis=0)])
    for shape in [(2,), (3, 4), (5, 1, 2)]:
        xv = np.random.default_rng(2).standard_normal(shape)
        np.testing.assert_allclose(ex.run({x: xv})[0], (xv * xv).sum(0))


def test_dtypes_numpy_kept_python_data_float32():
    x = Variable("x")
    ex = Executor([x * 2])
    assert ex.run({x: np.ones(2, dtype=np.float64)})[0].dtype == np.float64
    assert ex.run({x: [1, 2]})[0].dtype == np.float32
    assert ex.run({x: 3})[0].dtype == np.float32


def test_variable_dtype_converts_feeds():
    h = Variable("h", dtype="float64")
    (out,) = Executor([h + 1]).run({h: [1, 2]})
    assert out.dtype == np.float64


def test_observer_sees_every_node_in_order_and_values_are_kept():
    x = Variable("x")
    y = (x + 1).exp()
    ex = Executor([y])
    seen = []
    ex.run({x: np.zeros(2)}, observer=lambda node, value: seen.append((node, value)))
    assert [n for n, _ in seen] == ex.order
    assert ex.order[-1] is y and ex.order[0] is x
    np.testing.assert_allclose(ex.values[y], np.exp(np.ones(2)))
    everything = ex.run({x: np.zeros(2)}, return_all=True)
    assert set(everything) == set(ex.order)
    np.testing.assert_allclose(everything[y.inputs[0]], np.ones(2))  # the value of x + 1


def test_deep_chain_runs_iteratively():
    x = Variable("x")
    y = x
    for _ in range(100_000):
        y = y + 1.0
    ex = Executor([y])
    assert len(ex.order) == 200_001
    np.testing.assert_allclose(ex.run({x: np.zeros(2)})[0], np.full(2, 100_000.0))


def test_runs_on_strict_array_api_namespace():
    import array_api_strict as xp

    from tinygrad_edu.backend import use_cpu_namespace

    A, B = Variable("A"), Variable("B")
    loss = S.softmax_cross_entropy((A @ B).tanh(), S.ones_like(A @ B) / 3)
    grads = S.gradients(loss, [A, B])
    feeds = {A: np.random.default_rng(3).standard_normal((2, 3)), B: np.eye(3)}
    want = Executor([loss, *grads]).run(feeds)
    with use_cpu_namespace(xp):
        got = Executor([loss, *grads]).run(feeds)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6)


@pytest.mark.parametrize(
    "module",
    ["tensor_node", "graph", "api", "gradients", "executor", "cse599w", "__init__"],
)
def test_docstring_examples_run(module):
    name = "tinygrad_edu.symbolic" + ("" if module == "__init__" else f".{module}")
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0 and result.attempted > 0


def test_gradcheck_docstring_examples_run():
    for name in ("tinygrad_edu.symbolic.gradient_check", "tinygrad_edu.autograd.gradcheck"):
        result = doctest.testmod(importlib.import_module(name))
        assert result.failed == 0 and result.attempted > 0, name
    result = doctest.testmod(importlib.import_module("tinygrad_edu.finite_diff"))
    assert result.failed == 0 and result.attempted > 0


def test_a_node_cannot_be_used_as_a_condition():
    import pytest

    from tinygrad_edu.symbolic import Variable

    x = Variable("x")
    with pytest.raises(TypeError, match="eager engine"):
        if x * 2:
            pass
