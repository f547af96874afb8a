r"""Assignment A1: the symbolic engine (graphs of tensors, gradients built as more graph).

Tasks (the functions to write, in the library):

- A1.1 ``symbolic/graph.py``: ``topo_sort`` (iterative depth-first post-order).
- A1.2 ``symbolic/executor.py``: the evaluation loop of ``Executor.run``.
- A1.3 ``ops/elementwise.py``: the derivative rules (``vjp``) of ``add`` and ``mul``.
- A1.4 ``ops/elementwise.py``: the derivative rules of ``exp`` and ``log``.
- A1.5 ``ops/linalg.py``: the derivative rule of ``matmul`` (with ``trans_A``/``trans_B``).
- A1.6 ``ops/reduce.py``: the derivative rule of ``sum`` (``reduce_sum``).
- A1.7 ``ops/nn.py``: the derivative rule of ``softmax_cross_entropy``.
- A1.8 ``symbolic/gradients.py``: ``gradients(y, xs)``; gradients of gradients.

A derivative rule is checked on its own, with raw numpy arrays (``F = RAW``), against central
differences of the op's forward computation, so each rule scores independently of the engine.
"""

import numpy as np
import pytest

from tinygrad_edu.grading import (
    check_symbolic_gradgrad,
    check_symbolic_gradients,
    compare_gradients,
    numeric_gradient,
    random_projection,
)
from tinygrad_edu.ops import RAW, ShapeError, get_op
from tinygrad_edu.symbolic import (
    Executor,
    Variable,
    constant,
    gradients,
    matmul,
    reduce_sum,
    softmax_cross_entropy,
    topo_sort,
)


def _rng(seed=0):
    return np.random.default_rng(seed)


def check_rule(opname, arrays, needs=None, **attrs):
    """Run ``opname``'s vjp on raw float64 arrays and compare it with central differences of
    its forward computation (the output is reduced with a fixed random projection)."""
    op = get_op(opname)
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    needs = tuple(needs) if needs is not None else (True,) * len(arrays)
    out = op.forward(np, *arrays, **attrs)
    g = np.asarray(random_projection(np.shape(out), seed=1))
    shapes = tuple(a.shape for a in arrays)
    grads = op.vjp(RAW, g, list(arrays), out, shapes, needs, **attrs)
    where = f"{opname}.vjp(attrs={attrs}) with input shapes {list(shapes)}"
    assert grads is not None and len(grads) == len(arrays), (
        f"{where} must return one gradient per input ({len(arrays)}), got {grads!r}"
    )
    numeric = numeric_gradient(lambda v: op.forward(np, *v, **attrs), arrays, projection=g)
    for i, (gi, need) in enumerate(zip(grads, needs)):
        if not need:
            assert gi is None, f"{where}: needs[{i}] is False, so gradient {i} must be None"
            continue
        assert gi is not None, f"{where}: gradient {i} is None but needs[{i}] is True"
        assert np.shape(gi) == shapes[i], (
            f"{where}: gradient {i} has shape {np.shape(gi)}, but input {i} has shape "
            f"{shapes[i]}; a gradient has its input's shape (sum broadcast axes with F.sum_to)"
        )
        compare_gradients([gi], [numeric[i]], names=[f"input {i}"], what=f"{where}: gradient")


# --------------------------------------------------------------------------------------------
# Given code (no solution needed): shape rules and forward kernels.


@pytest.mark.task("A1.0")
@pytest.mark.points(1)
def test_static_shapes_come_from_the_shape_rules():
    x, W, b = Variable("x", shape=(5, 3)), Variable("W", shape=(3, 4)), Variable("b", shape=(4,))
    h = matmul(x, W) + b
    assert h.shape == (5, 4), f"x @ W + b should have static shape (5, 4), got {h.shape}"
    assert reduce_sum(h, axis=0).shape == (4,)
    with pytest.raises(ShapeError, match="matmul"):
        matmul(x, Variable("V", shape=(4, 2)))


@pytest.mark.task("A1.0")
@pytest.mark.points(1)
def test_forward_kernels_match_numpy():
    rng = _rng()
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    np.testing.assert_allclose(get_op("matmul").forward(np, a, b), a @ b)
    np.testing.assert_allclose(get_op("exp").forward(np, a), np.exp(a))
    np.testing.assert_allclose(get_op("sum").forward(np, a, axis=1), a.sum(axis=1))
    y = np.eye(4)[[0, 3, 1]]
    p = np.exp(a) / np.exp(a).sum(axis=1, keepdims=True)
    expected = -np.mean(np.sum(y * np.log(p), axis=1))
    np.testing.assert_allclose(get_op("softmax_cross_entropy").forward(np, a, y), expected)


# --------------------------------------------------------------------------------------------
# A1.1 topological sort


def _canonical():
    A, B, C = Variable("A"), Variable("B"), Variable("C")
    D = (A + B) * C
    E = D @ (A + C)
    return (A, B, C), D, E


def _reference_postorder(roots):
    """Depth-first post-order, inputs left to right (recursive: fine for small graphs)."""
    order, seen = [], set()

    def visit(node):
        if node in seen:
            return
        seen.add(node)
        for i in node.inputs:
            visit(i)
        order.append(node)

    for r in roots:
        visit(r)
    return order


def _assert_valid_order(order, roots):
    expected = _reference_postorder(roots)
    names = [n.name for n in order]
    assert len(order) == len(set(order)), f"topo_sort returned a node twice: {names}"
    assert set(order) == set(expected), (
        f"topo_sort must return every node the roots depend on, each once; got {names}, "
        f"expected the nodes {sorted(n.name for n in expected)}"
    )
    position = {n: k for k, n in enumerate(order)}
    for n in order:
        for i in n.inputs:
            assert position[i] < position[n], (
                f"node {n.name!r} comes before its input {i.name!r} in {names}"
            )


@pytest.mark.task("A1.1")
@pytest.mark.points(2)
def test_topo_sort_places_every_node_after_its_inputs():
    (A, B, C), D, E = _canonical()
    _assert_valid_order(topo_sort([E]), [E])
    y2 = (D * 2).exp()  # a second root sharing D
    _assert_valid_order(topo_sort([E, y2]), [E, y2])


@pytest.mark.task("A1.1")
@pytest.mark.points(1)
def test_topo_sort_is_depth_first_post_order_left_to_right():
    (A, B, C), D, E = _canonical()
    got = [n.name for n in topo_sort([E, D])]
    expected = [n.name for n in _reference_postorder([E, D])]
    assert got == expected, f"expected the depth-first post-order {expected}, got {got}"


# --------------------------------------------------------------------------------------------
# A1.2 the Executor


@pytest.mark.task("A1.2")
@pytest.mark.points(2)
def test_executor_computes_the_canonical_example():
    (A, B, C), D, E = _canonical()
    rng = _rng(1)
    a, b, c = (rng.standard_normal((3, 3)) for _ in range(3))
    e, d = Executor([E, D]).run({A: a, B: b, C: c})
    np.testing.assert_allclose(d, (a + b) * c, err_msg="D = (A + B) * C")
    np.testing.assert_allclose(e, ((a + b) * c) @ (a + c), err_msg="E = D @ (A + C)")


@pytest.mark.task("A1.2")
@pytest.mark.points(1)
def test_executor_runs_again_with_new_values_and_constants():
    x = Variable("x")
    y = reduce_sum((x * 2 + 1).exp(), axis=0)
    ex = Executor([y])
    for shape in [(3,), (2, 5)]:
        xv = _rng(2).standard_normal(shape)
        (out,) = ex.run({x: xv})
        np.testing.assert_allclose(out, np.exp(xv * 2 + 1).sum(axis=0), rtol=1e-6)


# --------------------------------------------------------------------------------------------
# A1.3-A1.7 derivative rules, checked on raw arrays


@pytest.mark.task("A1.3")
@pytest.mark.points(1)
@pytest.mark.parametrize("opname", ["add", "mul"])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((4,), (2, 3, 4))])
def test_add_and_mul_rules(opname, shapes):
    rng = _rng(3)
    check_rule(opname, [rng.standard_normal(s) for s in shapes])


@pytest.mark.task("A1.3")
@pytest.mark.points(1)
def test_rules_skip_inputs_that_need_no_gradient():
    rng = _rng(4)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    check_rule("mul", [a, b], needs=(False, True))
    check_rule("add", [a, b], needs=(True, False))


@pytest.mark.task("A1.4")
@pytest.mark.points(1)
@pytest.mark.parametrize("opname", ["exp", "log"])
def test_exp_and_log_rules(opname):
    x = _rng(5).uniform(0.2, 2.0, size=(3, 4))
    check_rule(opname, [x])


@pytest.mark.task("A1.5")
@pytest.mark.points(1)
@pytest.mark.parametrize("trans_A", [False, True])
@pytest.mark.parametrize("trans_B", [False, True])
def test_matmul_rule(trans_A, trans_B):
    rng = _rng(6)
    a = rng.standard_normal((4, 3) if trans_A else (3, 4))
    b = rng.standard_normal((5, 4) if trans_B else (4, 5))
    check_rule("matmul", [a, b], trans_A=trans_A, trans_B=trans_B)


@pytest.mark.task("A1.6")
@pytest.mark.points(1)
@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), ((0, 2), False), (1, True)])
def test_sum_rule(axis, keepdims):
    x = _rng(7).standard_normal((2, 3, 4))
    check_rule("sum", [x], axis=axis, keepdims=keepdims)


@pytest.mark.task("A1.7")
@pytest.mark.points(2)
def test_softmax_cross_entropy_rule():
    rng = _rng(8)
    logits = rng.standard_normal((5, 4))
    labels = np.eye(4)[rng.integers(0, 4, size=5)]
    check_rule("softmax_cross_entropy", [logits, labels])


# --------------------------------------------------------------------------------------------
# A1.8 gradients()


@pytest.mark.task("A1.8")
@pytest.mark.points(3)
def test_gradients_of_the_canonical_example():
    rng = _rng(9)
    arrays = [rng.standard_normal((3, 3)) for _ in range(3)]
    check_symbolic_gradients(lambda A, B, C: ((A + B) * C) @ (A + C), arrays, ["A", "B", "C"])


@pytest.mark.task("A1.8")
@pytest.mark.points(1)
def test_a_value_used_twice_sums_its_partial_adjoints():
    x = Variable("x")
    y = x * x + x.exp() * x
    (dx,) = gradients(y, [x])
    xv = np.array([0.5, -1.5, 2.0])
    (got,) = Executor([dx]).run({x: xv})
    expected = 2 * xv + np.exp(xv) * (1 + xv)
    np.testing.assert_allclose(
        got, expected, rtol=1e-6, err_msg="d/dx (x*x + exp(x)*x): every use of x must count"
    )


@pytest.mark.task("A1.8")
@pytest.mark.points(1)
def test_an_input_y_does_not_depend_on_gets_zeros():
    x, z = Variable("x"), Variable("z")
    dx, dz = gradients(reduce_sum(x * 3), [x, z])
    gx, gz = Executor([dx, dz]).run({x: np.ones(2), z: np.ones((2, 3))})
    np.testing.assert_allclose(gx, [3.0, 3.0])
    assert gz.shape == (2, 3) and not gz.any(), f"dy/dz should be zeros of z's shape, got {gz}"


@pytest.mark.task("A1.8")
@pytest.mark.points(2)
def test_gradients_of_a_classifier_loss():
    rng = _rng(10)
    X = rng.standard_normal((6, 4))
    Y = np.eye(3)[rng.integers(0, 3, size=6)]

    def loss(W, b):
        return softmax_cross_entropy(matmul(constant(X), W) + b, constant(Y))

    check_symbolic_gradients(
        loss, [rng.standard_normal((4, 3)), rng.standard_normal(3)], ["W", "b"]
    )


@pytest.mark.task("A1.8")
@pytest.mark.points(2)
def test_gradients_of_gradients():
    x = Variable("x")
    y = x * x * x
    (dx,) = gradients(y, [x])
    (ddx,) = gradients(dx, [x])
    (got,) = Executor([ddx]).run({x: np.array([1.0, -2.0, 0.5])})
    np.testing.assert_allclose(
        got, 6 * np.array([1.0, -2.0, 0.5]), rtol=1e-6, err_msg="d2/dx2 x^3 = 6x"
    )


# BEGIN HIDDEN TESTS
@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A1.1")
@pytest.mark.points(1)
def test_topo_sort_handles_a_deep_chain():
    x = Variable("x")
    y = x
    for _ in range(3000):
        y = y + 1
    order = topo_sort([y])
    assert len(order) == 6001, "3000 adds: x, 3000 constants and 3000 sums"
    assert order[0] is x and order[-1] is y


@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A1.7")
@pytest.mark.points(1)
def test_softmax_cross_entropy_rule_with_large_logits():
    rng = _rng(11)
    logits = rng.standard_normal((3, 5)) * 50 + 800
    labels = np.eye(5)[[4, 0, 2]]
    op = get_op("softmax_cross_entropy")
    (gl, _) = op.vjp(
        RAW, np.float64(1.0), [logits, labels], None, (logits.shape,) * 2, (True, False)
    )
    z = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    assert np.all(np.isfinite(gl)), "logits near 800 must not overflow: use a stable softmax"
    np.testing.assert_allclose(gl, (p - labels) / 3, atol=1e-12)


@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A1.8")
@pytest.mark.points(2)
def test_second_derivatives_of_the_canonical_example():
    rng = _rng(12)
    arrays = [rng.standard_normal((2, 2)) for _ in range(3)]
    check_symbolic_gradgrad(lambda A, B, C: ((A + B) * C) @ (A + C) * A, arrays, ["A", "B", "C"])


# END HIDDEN TESTS
