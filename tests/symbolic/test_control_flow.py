"""cond and while_loop: values, sub-blocks and captures, and gradients checked against PyTorch
eager running the same Python control flow and against central differences in float64."""

import numpy as np
import pytest
import torch

from tinygrad_edu.ops import ShapeError
from tinygrad_edu.symbolic import (
    Executor,
    Program,
    Variable,
    cond,
    gradients,
    program_guard,
    while_loop,
)


def _numeric(f, arrays, eps=1e-6):
    """Central differences of the scalar f(*arrays) with respect to each array (float64)."""
    grads = []
    for k, a in enumerate(arrays):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus = [b.copy() for b in arrays]
            minus = [b.copy() for b in arrays]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            g[idx] = (f(*plus) - f(*minus)) / (2 * eps)
        grads.append(g)
    return grads


def _torch_grads(fn, arrays):
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    out = fn(*ts)
    out.backward()
    return out.item(), [t.grad.numpy() for t in ts]


# -- cond -----------------------------------------------------------------------------------
def _sym_cond():
    x = Variable("x", shape=(3,), dtype="float64")
    w = Variable("w", shape=(3,), dtype="float64")
    y = cond((x * w).sum() > 0,
             lambda a: (a * w).tanh() * a,  # uses the outer w: a capture
             lambda a: (a * a * w).exp(), x)  # fmt: skip
    return x, w, y.sum()


def _torch_cond(x, w):
    y = torch.tanh(x * w) * x if (x * w).sum() > 0 else torch.exp(x * x * w)
    return y.sum()


@pytest.mark.parametrize("xv", [[0.5, -1.0, 2.0], [-0.5, 1.0, -2.0]], ids=["true", "false"])
def test_cond_value_and_gradient_of_the_branch_taken(xv):
    x, w, loss = _sym_cond()
    dx, dw = gradients(loss, [x, w])
    xv, wv = np.array(xv), np.array([0.3, 0.2, 0.4])
    got = Executor([loss, dx, dw]).run({x: xv, w: wv})
    want_loss, (want_dx, want_dw) = _torch_grads(_torch_cond, [xv, wv])
    np.testing.assert_allclose(got[0], want_loss, rtol=1e-12)
    np.testing.assert_allclose(got[1], want_dx, rtol=1e-10)
    np.testing.assert_allclose(got[2], want_dw, rtol=1e-10)
    num = _numeric(lambda a, b: Executor([loss]).run({x: a, w: b})[0], [xv, wv])
    np.testing.assert_allclose(got[1], num[0], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got[2], num[1], rtol=1e-6, atol=1e-8)


def test_cond_branches_are_sub_blocks_with_captures():
    main = Program()
    with program_guard(main, Program()):
        x, w, loss = _sym_cond()
    node = loss.inputs[0].inputs[0]  # sum <- tuple_get <- cond
    assert node.op.name == "cond"
    tb, fb = node.attrs["true_block"], node.attrs["false_block"]
    assert tb.parent is fb.parent is main.global_block() and tb.idx != fb.idx
    assert set(tb.captures) == {x, w} and node.inputs[1:] == tb.captures
    assert all(n.block is tb for n in tb.ops)
    assert not any(n.block is not None for n in main.global_block().nodes)


def test_cond_second_derivative_matches_torch():
    x = Variable("x", shape=(2,), dtype="float64")
    y = cond(x.sum() > 0, lambda a: (a * a * a).sum(), lambda a: (a * 2).exp().sum(), x)
    (dx,) = gradients(y, [x])
    (ddx,) = gradients(dx.sum(), [x])
    for xv in ([0.5, 1.0], [-0.7, 0.2]):
        xv = np.array(xv)
        t = torch.tensor(xv, requires_grad=True)
        ty = (t**3).sum() if t.sum() > 0 else torch.exp(t * 2).sum()
        (g,) = torch.autograd.grad(ty, t, create_graph=True)
        (gg,) = torch.autograd.grad(g.sum(), t)
        got_dx, got_ddx = Executor([dx, ddx]).run({x: xv})
        np.testing.assert_allclose(got_dx, g.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(got_ddx, gg.numpy(), rtol=1e-12)


def test_cond_with_several_outputs_and_a_python_bool():
    x = Variable("x", dtype="float64")
    a, b = cond(x.sum() < 0, lambda v: (v, v * 2), lambda v: (v * 3, v + 1), x)
    (dx,) = gradients((a * b).sum(), [x])
    xv = np.array([1.0, 2.0])
    got_a, got_b, got_dx = Executor([a, b, dx]).run({x: xv})
    np.testing.assert_allclose(got_a, 3 * xv)
    np.testing.assert_allclose(got_b, xv + 1)
    np.testing.assert_allclose(got_dx, 3 * (xv + 1) + 3 * xv)  # d/dx 3x(x+1)
    assert cond(True, lambda v: v * 2, lambda v: v * 3, x).op.name == "mul"


def test_cond_errors_are_clear():
    x = Variable("x", shape=(3,))
    with pytest.raises(ValueError, match="true branch returns 2 values and the false branch 1"):
        cond(x.sum() > 0, lambda: (x, x), lambda: x)
    with pytest.raises(ShapeError, match=r"output 0 has shape \(3,\).*\(\)"):
        cond(x.sum() > 0, lambda: x, lambda: x.sum())
    with pytest.raises(ShapeError, match=r"condition .* has shape \(3,\)"):
        cond(x > 0, lambda: x, lambda: -x)
    y = cond(Variable("p") > 0, lambda: x, lambda: -x)
    with pytest.raises(RuntimeError, match="must hold one value"):
        Executor([y]).run({x: np.ones(3), y.inputs[0].inputs[0].inputs[0]: np.ones(2)})


# -- while_loop -------------------------------------------------------------------------------
def _sym_loop():
    x = Variable("x", shape=(3,), dtype="float64")
    w = Variable("w", shape=(3,), dtype="float64")
    n, v = while_loop(lambda n, v: (v * v).sum() < 30.0,
                      lambda n, v: (n + 1, (v * w).tanh() * 2.0 + v * 1.1), (0, x))  # fmt: skip
    return x, w, n, (v * v * w).sum()


def _torch_loop(x, w):
    v = x
    while (v * v).sum() < 30.0:  # the trip count depends on the data
        v = torch.tanh(v * w) * 2.0 + v * 1.1
    return (v * v * w).sum()


@pytest.mark.parametrize("xv", [[0.5, -1.0, 2.0], [0.1, 0.2, -0.1], [3.0, 4.0, 5.0]])
def test_while_loop_gradient_with_a_data_dependent_trip_count(xv):
    x, w, n, loss = _sym_loop()
    dx, dw = gradients(loss, [x, w])
    xv, wv = np.array(xv), np.array([0.7, -0.4, 0.9])
    got_n, got_loss, got_dx, got_dw = Executor([n, loss, dx, dw]).run({x: xv, w: wv})
    want_loss, (want_dx, want_dw) = _torch_grads(_torch_loop, [xv, wv])
    np.testing.assert_allclose(got_loss, want_loss, rtol=1e-12)
    np.testing.assert_allclose(got_dx, want_dx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_dw, want_dw, rtol=1e-10, atol=1e-12)
    num = _numeric(lambda a, b: Executor([loss]).run({x: a, w: b})[0], [xv, wv])
    np.testing.assert_allclose(got_dx, num[0], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got_dw, num[1], rtol=1e-5, atol=1e-7)
    if xv[0] == 3.0:
        assert got_n == 0  # no iteration: the gradient is the plain one
    else:
        assert got_n >= 2


def test_while_forward_saves_only_what_the_gradient_reads():
    x, w, n, loss = _sym_loop()
    node = n.inputs[0]
    assert node.op.name == "while" and node.attrs["saves"] == ()
    (ex_fwd,) = Executor([loss]).run({x: np.ones(3), w: np.ones(3)})  # no stack kept
    gradients(loss, [x])
    saves = node.attrs["saves"]
    body = node.attrs["body_block"]
    assert saves and all(s.block is body for s in saves)
    assert any(s.op.name == "tanh" for s in saves)  # tanh's rule reads its output
    ex = Executor([node.inputs[0], n])
    ex.run({x: np.ones(3), w: np.ones(3)}, return_all=True)
    stack = ex.values[node][-1]
    assert len(stack) == int(ex.values[n]) and set(stack[0]) == set(saves)


def test_while_loop_with_nested_cond_and_nested_loop_matches_torch():
    x = Variable("x", shape=(2,), dtype="float64")
    w = Variable("w", shape=(2,), dtype="float64")

    def body(i, v):
        v = cond(v.sum() > 1.0, lambda: v * w, lambda: v + w * w)
        _, v = while_loop(lambda j, u: j < 2, lambda j, u: (j + 1, (u * 0.9).tanh() + u), (0, v))
        return i + 1, v

    _, out = while_loop(lambda i, v: i < 3, body, (0, x))
    loss = (out * out).sum()
    dx, dw = gradients(loss, [x, w])

    def tbody(v, tw):
        v = v * tw if v.sum() > 1.0 else v + tw * tw
        for _ in range(2):
            v = torch.tanh(v * 0.9) + v
        return v

    def tloss(tx, tw):
        v = tx
        for _ in range(3):
            v = tbody(v, tw)
        return (v * v).sum()

    for xv in ([0.2, 0.3], [-1.0, 0.4]):
        xv, wv = np.array(xv), np.array([1.3, -0.6])
        got = Executor([loss, dx, dw]).run({x: xv, w: wv})
        want_loss, (want_dx, want_dw) = _torch_grads(tloss, [xv, wv])
        np.testing.assert_allclose(got[0], want_loss, rtol=1e-12)
        np.testing.assert_allclose(got[1], want_dx, rtol=1e-10)
        np.testing.assert_allclose(got[2], want_dw, rtol=1e-10)


def test_while_inside_a_cond_branch_matches_torch():
    x = Variable("x", shape=(), dtype="float64")

    def grow(v):
        return while_loop(lambda u: u < 10.0, lambda u: u * u + 0.5, v)

    y = cond(x > 0, lambda: grow(x + 1.0), lambda: x * x)
    (dx,) = gradients(y, [x])
    for xv in (0.3, 1.7, -2.0):
        t = torch.tensor(xv, dtype=torch.float64, requires_grad=True)
        if t > 0:
            ty = t + 1.0
            while ty < 10.0:
                ty = ty * ty + 0.5
        else:
            ty = t * t
        ty.backward()
        got_y, got_dx = Executor([y, dx]).run({x: xv})
        np.testing.assert_allclose(got_y, ty.item(), rtol=1e-12)
        np.testing.assert_allclose(got_dx, t.grad.item(), rtol=1e-12)


def test_while_loop_errors_and_limits():
    x = Variable("x", shape=(2,))
    with pytest.raises(ShapeError, match=r"changes loop variable 0 \('x'\) from shape \(2,\)"):
        while_loop(lambda v: v.sum() < 3, lambda v: v.sum(), x)
    with pytest.raises(ValueError, match="must return 2 values"):
        while_loop(lambda a, b: a.sum() < 3, lambda a, b: a, (x, x))
    with pytest.raises(ValueError, match="at least one loop variable"):
        while_loop(lambda: True, lambda: (), ())
    with pytest.raises(ValueError, match="does not depend on the loop variables"):
        while_loop(lambda v: True, lambda v: v + 1.0, x)  # would never stop
    with pytest.raises(ValueError, match="does not depend on the loop variables"):
        while_loop(lambda v: x.sum() < 3, lambda v: v + 1.0, x)
    v = while_loop(lambda v: v.sum() > -1.0, lambda v: v + 1.0, x, maximum_iterations=4)
    np.testing.assert_allclose(Executor([v]).run({x: np.zeros(2)})[0], [4.0, 4.0])
    (dx,) = gradients(v.sum(), [x])
    with pytest.raises(NotImplementedError, match="second derivatives through a loop"):
        gradients(dx.sum(), [x])


def test_loop_variable_not_used_by_the_output_and_int_counters():
    x = Variable("x", dtype="float64")
    i, a, b = while_loop(lambda i, a, b: i < 3, lambda i, a, b: (i + 1, a * 2.0, b + a), (0, x, x))
    (dx,) = gradients(b.sum(), [x])  # b = x + x + 2x + 4x = 8x
    got_i, got_dx = Executor([i, dx]).run({x: np.array([1.0, 2.0])})
    assert got_i == 3 and got_i.dtype.kind == "i"
    np.testing.assert_allclose(got_dx, [8.0, 8.0])
