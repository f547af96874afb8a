"""Symbolic training: a step is one graph run; its gradients and updates match the eager
engine's (nn + optim) for the same initial weights, step by step; an MLP learns the digits."""

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu import nn, optim
from tinygrad_edu.data import DataLoader, load_digits
from tinygrad_edu.symbolic import Executor, Variable, matmul, relu, softmax_cross_entropy
from tinygrad_edu.symbolic import training as st


def _symbolic_mlp(scope, w1, b1, w2, b2):
    """The same network as nn.Sequential(Linear, ReLU, Linear): weights stored (out, in)."""
    W1, B1 = scope.parameter("W1", w1), scope.parameter("b1", b1)
    W2, B2 = scope.parameter("W2", w2), scope.parameter("b2", b2)
    x, y = Variable("x"), Variable("y")
    h = relu(matmul(x, W1, trans_B=True) + B1)
    logits = matmul(h, W2, trans_B=True) + B2
    loss = softmax_cross_entropy(logits, y)
    return [W1, B1, W2, B2], x, y, logits, loss


def _eager_mlp(seed):
    tg.manual_seed(seed)
    return nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))


CASES = [
    (lambda p: optim.SGD(p, lr=0.1), lambda: st.SGD(lr=0.1)),
    (lambda p: optim.SGD(p, lr=0.05, momentum=0.9), lambda: st.SGD(lr=0.05, momentum=0.9)),
    (lambda p: optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
     lambda: st.SGD(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    (lambda p: optim.Adam(p, lr=0.01), lambda: st.Adam(lr=0.01)),
    (lambda p: optim.Adam(p, lr=0.01, betas=(0.8, 0.99), weight_decay=0.05),
     lambda: st.Adam(lr=0.01, betas=(0.8, 0.99), weight_decay=0.05)),
]  # fmt: skip


@pytest.mark.parametrize("make_eager, make_symbolic", CASES,
                         ids=["sgd", "momentum", "nesterov+wd", "adam", "adam+wd"])  # fmt: skip
def test_steps_match_eager_engine(make_eager, make_symbolic):
    X, y = load_digits("train")
    net = _eager_mlp(seed=1)
    init = [p.detach().numpy().copy() for p in net.parameters()]
    opt = make_eager(list(net.parameters()))

    scope = st.Scope()
    params, x, yv, _, loss = _symbolic_mlp(scope, *init)
    sopt = make_symbolic()
    updates = sopt.minimize(loss, params)
    step = st.TrainingExecutor([loss] + sopt.grads, updates)

    onehot = np.eye(10, dtype=np.float32)
    for i, (xb, yb) in enumerate(DataLoader(X, y, batch_size=64, seed=0, as_tensors=False)):
        if i == 4:
            break
        opt.zero_grad()
        eager_loss = nn.functional.cross_entropy(net(tg.tensor(xb)), tg.tensor(yb))
        eager_loss.backward()
        sym_loss, *sym_grads = step.run({x: xb, yv: onehot[yb]})
        assert sym_loss == pytest.approx(eager_loss.item(), rel=1e-5), f"loss at step {i}"
        for p, g, name in zip(net.parameters(), sym_grads, ["W1", "b1", "W2", "b2"]):
            np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-4, atol=1e-6,
                                       err_msg=f"gradient of {name} at step {i}")  # fmt: skip
        opt.step()
        for p, name in zip(net.parameters(), ["W1", "b1", "W2", "b2"]):
            np.testing.assert_allclose(scope[name], p.detach().numpy(), rtol=1e-4, atol=2e-6,
                                       err_msg=f"{name} after step {i}")  # fmt: skip


def test_symbolic_mlp_trains_on_digits():
    Xtr, ytr = load_digits("train")
    Xte, yte = load_digits("test")
    net = _eager_mlp(seed=0)  # PyTorch-style initial weights
    scope = st.Scope()
    start = [p.detach().numpy() for p in net.parameters()]
    params, x, yv, logits, loss = _symbolic_mlp(scope, *start)
    step = st.TrainingExecutor([loss], st.Adam(lr=0.01).minimize(loss, params))
    predict = st.TrainingExecutor([logits], scope=scope)  # reads the same scope, no updates
    onehot = np.eye(10, dtype=np.float32)
    losses = []
    for epoch in range(8):
        for xb, yb in DataLoader(Xtr, ytr, batch_size=64, seed=epoch, as_tensors=False):
            losses.append(float(step.run({x: xb, yv: onehot[yb]})[0]))
    (out,) = predict.run({x: Xte})
    acc = (out.argmax(1) == yte).mean()
    assert acc >= 0.94, f"test accuracy {acc:.3f}"
    assert np.mean(losses[-20:]) < 0.2 * np.mean(losses[:5])


def test_one_run_is_one_step_and_graph_holds_updates():
    scope = st.Scope()
    w = scope.parameter("w", np.array([1.0, 2.0], np.float32))
    loss = (w * w).sum()
    (upd,) = st.SGD(lr=0.25).minimize(loss, [w])
    assert upd.target is w and upd.value.name == "w'"
    order = st.TrainingExecutor([loss], [upd]).executor.order
    assert w in order and upd.value in order and any(n.is_gradient for n in order)
    step = st.TrainingExecutor([loss], [upd])
    (l0,) = step.run()
    assert float(l0) == 5.0
    np.testing.assert_allclose(scope["w"], [0.5, 1.0])  # w - 0.25 * 2w
    step.run()
    np.testing.assert_allclose(scope["w"], [0.25, 0.5])


def test_momentum_and_adam_state_live_in_the_scope():
    scope = st.Scope()
    w = scope.parameter("w", np.array([1.0], np.float32))
    st.SGD(lr=0.1, momentum=0.9).minimize(w * w, [w])
    assert "w.velocity" in scope
    st.Adam().minimize(w * w, [w])
    assert {"w.m", "w.v", "w.beta1_pow", "w.beta2_pow"} <= set(scope.variables)
    np.testing.assert_array_equal(scope["w.beta1_pow"], [1.0])


def test_errors_are_clear():
    scope = st.Scope()
    w = scope.parameter("w", np.ones(2, np.float32))
    with pytest.raises(ValueError, match="exists already"):
        scope.parameter("w", np.ones(2, np.float32))
    with pytest.raises(ValueError, match="scope.parameter"):
        st.SGD(lr=0.1).minimize(Variable("v") * 2, [Variable("v")])
    with pytest.raises(KeyError, match="no variable 'nope'"):
        scope["nope"]
    loss = (w * w).sum()
    step = st.TrainingExecutor([loss], st.SGD(lr=0.1).minimize(loss, [w]))
    with pytest.raises(ValueError, match="lives in the scope"):
        step.run({w: np.zeros(2, np.float32)})


def test_executor_alone_still_works_with_scope_variables():
    scope = st.Scope()
    w = scope.parameter("w", np.array([3.0], np.float32))
    (val,) = Executor([w * 2]).run({w: scope["w"]})
    np.testing.assert_allclose(val, [6.0])


@pytest.mark.gpu
@pytest.mark.skipif(not tg.backend.cuda_available(), reason="needs CuPy and a CUDA GPU")
def test_training_on_cuda_keeps_values_on_device():
    scope = st.Scope(device="cuda")
    w = scope.parameter("w", np.array([1.0, 2.0], np.float32))
    loss = (w * w).sum()
    step = st.TrainingExecutor([loss], st.Adam(lr=0.1).minimize(loss, [w]))
    step.run()
    assert type(scope.values[w]).__module__.startswith("cupy")
    np.testing.assert_allclose(scope["w"], [0.9, 1.9], rtol=1e-5)
