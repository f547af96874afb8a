"""gradients(): adjoint sums, pruning, marks for drawings, higher orders, depth."""

import numpy as np

from tinygrad_edu.symbolic import Executor, Variable, gradients, topo_sort


def _run(nodes, feeds):
    return Executor(nodes).run(feeds)


def test_canonical_example_gradients_match_the_matrix_calculus():
    A, B, C = Variable("A"), Variable("B"), Variable("C")
    D = (A + B) * C
    E = D @ (A + C)
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal((3, 3)) for _ in range(3))
    dA, dB, dC = _run(gradients(E, [A, B, C]), {A: a, B: b, C: c})
    G = np.ones((3, 3))
    dD = G @ (a + c).T
    dR = ((a + b) * c).T @ G  # gradient of the right factor A + C
    np.testing.assert_allclose(dA, dD * c + dR)
    np.testing.assert_allclose(dB, dD * c)
    np.testing.assert_allclose(dC, dD * (a + b) + dR)


def _adjoint_sums(nodes):
    return [n for n in topo_sort(nodes) if n.is_adjoint_sum]


def test_a_value_used_twice_gets_one_adjoint_sum():
    x = Variable("x", shape=(2,))
    y = (x.exp() + x.tanh()).sum()  # x feeds two ops
    (dx,) = gradients(y, [x])
    sums = _adjoint_sums([dx])
    assert len(sums) == 1 and dx is sums[0] and sums[0].op.name == "add"
    assert "sum of partial adjoints" in sums[0].name
    xv = np.array([0.3, -1.2])
    np.testing.assert_allclose(_run([dx], {x: xv})[0], np.exp(xv) + 1 - np.tanh(xv) ** 2)


def test_three_uses_need_two_adds():
    x = Variable("x", shape=())
    y = x * 2 + x * 3 + x * 4
    (dx,) = gradients(y, [x])
    assert len(_adjoint_sums([dx])) == 2
    assert float(_run([dx], {x: 1.0})[0]) == 9.0


def test_gradient_nodes_are_marked_and_forward_nodes_are_not():
    A, B = Variable("A"), Variable("B")
    y = (A * B).sum()
    forward = topo_sort([y])
    dA, dB = gradients(y, [A, B])
    assert not any(n.is_gradient for n in forward)
    new = [n for n in topo_sort([dA, dB]) if n not in set(forward)]
    assert new and all(n.is_gradient for n in new)
    assert dA.grad_of is A and dB.grad_of is B


def test_unrelated_variable_gets_zeros_like():
    x, w = Variable("x"), Variable("w")
    dx, dw = gradients((x * x).sum(), [x, w])
    assert dw.op.name == "zeros_like" and dw.inputs == (w,)
    wv = np.ones((2, 5))
    got_dx, got_dw = _run([dx, dw], {x: np.array([1.0, 3.0]), w: wv})
    np.testing.assert_array_equal(got_dx, [2.0, 6.0])
    np.testing.assert_array_equal(got_dw, np.zeros_like(wv))


def test_branches_not_leading_to_xs_are_pruned():
    x, w = Variable("x"), Variable("w")
    e = w.exp()
    y = (x * e).sum()
    (dx,) = gradients(y, [x])
    gradient_graph = [n for n in topo_sort([dx]) if n.is_gradient]
    assert gradient_graph and not any(n.grad_of in (w, e) for n in gradient_graph)
    assert not any(n.op.name == "exp" for n in gradient_graph)  # exp's rule never ran


def test_identity_and_seed():
    x = Variable("x")
    (dx,) = gradients(x, [x])
    assert dx.op.name == "ones_like"
    np.testing.assert_array_equal(_run([dx], {x: np.zeros(3)})[0], np.ones(3))


def test_gradient_of_gradient():
    x, y = Variable("x"), Variable("y")
    z = x * x * y + (x * y).exp()
    dx, dy = gradients(z, [x, y])
    dxx, dxy = gradients(dx, [x, y])
    xv, yv = np.array([0.5, -1.0]), np.array([2.0, 0.3])
    got = _run([dx, dy, dxx, dxy], {x: xv, y: yv})
    e = np.exp(xv * yv)
    want = [2 * xv * yv + yv * e, xv * xv + xv * e, 2 * yv + yv * yv * e,
            2 * xv + e + xv * yv * e]  # fmt: skip
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)
    (dxxx,) = gradients(dxx, [x])  # third order
    np.testing.assert_allclose(_run([dxxx], {x: xv, y: yv})[0], yv**3 * e)


def test_unknown_shapes_use_runtime_shapes_for_broadcasting():
    a, b = Variable("a"), Variable("b")
    da, db = gradients((a * b).sum(), [a, b])
    av, bv = np.arange(3.0).reshape(3, 1), np.arange(4.0).reshape(1, 4)
    ga, gb = _run([da, db], {a: av, b: bv})
    np.testing.assert_allclose(ga, np.full((3, 1), bv.sum()))
    np.testing.assert_allclose(gb, np.full((1, 4), av.sum()))


def test_deep_chain_gradient_is_iterative():
    x = Variable("x", shape=(2,))
    y = x
    for _ in range(100_000):
        y = y * 1.00001
    (dx,) = gradients(y.sum(), [x])
    got = _run([dx], {x: np.ones(2)})[0]
    np.testing.assert_allclose(got, np.full(2, 1.00001**100_000), rtol=1e-9)
