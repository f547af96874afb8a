r"""Assignment A3: training with ``tinygrad_edu.nn`` and ``tinygrad_edu.optim``.

Tasks (the functions to write, in the library):

- A3.1 ``nn/functional.py`` ``linear`` and ``nn/layers.py`` ``Linear.forward``:
  $y = x W^\top + b$.
- A3.2 ``nn/functional.py`` ``mse_loss``: $\frac1n\sum_i (x_i - y_i)^2$.
- A3.3 ``optim/sgd.py`` ``SGD._update`` (the step): momentum, dampening, Nesterov, weight
  decay, PyTorch's formulas.
- A3.4 ``optim/adam.py`` ``Adam._update`` (the step): bias-corrected moments.
- A3.5 a model: an MLP trained on the 8x8 digits to at least 95% test accuracy.

The optimizers are checked step by step against numpy transcriptions of PyTorch's update
rules (the formulas in the modules' docstrings).
"""

import math

import numpy as np
import pytest

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F
from tinygrad_edu import nn, optim
from tinygrad_edu.data import DataLoader, load_digits
from tinygrad_edu.grading import gradcheck


def _rng(seed=0):
    return np.random.default_rng(seed)


# --------------------------------------------------------------------------------------------
# Given code (no solution needed): the data.


@pytest.mark.task("A3.0")
@pytest.mark.points(1)
def test_digits_and_the_data_loader():
    Xtr, ytr = load_digits("train")
    Xte, yte = load_digits("test")
    assert Xtr.shape[1:] == (64,) and len(Xtr) + len(Xte) == 1797
    assert set(np.unique(ytr)) == set(range(10))
    loader = DataLoader(Xtr, ytr, batch_size=100, shuffle=True, seed=0)
    seen = np.concatenate([yb.numpy() for _, yb in loader])
    assert sorted(seen.tolist()) == sorted(ytr.tolist()), "one epoch visits every example once"


# --------------------------------------------------------------------------------------------
# A3.1 Linear


@pytest.mark.task("A3.1")
@pytest.mark.points(2)
def test_linear_layer_forward():
    tg.manual_seed(0)
    layer = nn.Linear(5, 3)
    xv = _rng(1).standard_normal((4, 5)).astype(np.float32)
    y = layer(tg.tensor(xv))
    W, b = layer.weight.numpy(), layer.bias.numpy()
    assert y.shape == (4, 3), f"Linear(5, 3) on a (4, 5) batch gives (4, 3), got {y.shape}"
    np.testing.assert_allclose(
        y.numpy(), xv @ W.T + b, rtol=1e-5, atol=1e-6, err_msg="y = x W^T + b"
    )
    assert y.grad_fn is not None, "the output must be connected to the weights' graph"


@pytest.mark.task("A3.1")
@pytest.mark.points(1)
def test_linear_function_without_bias_and_its_gradients():
    rng = _rng(2)
    x = tg.tensor(rng.standard_normal((3, 4)))
    w = tg.tensor(rng.standard_normal((2, 4)), requires_grad=True)
    np.testing.assert_allclose(F.linear(x, w).numpy(), x.numpy() @ w.numpy().T)
    b = tg.tensor(rng.standard_normal(2), requires_grad=True)
    gradcheck(lambda w, b: F.linear(x, w, b), [w, b])


# --------------------------------------------------------------------------------------------
# A3.2 a loss


@pytest.mark.task("A3.2")
@pytest.mark.points(2)
def test_mse_loss_value_and_gradient():
    rng = _rng(3)
    xv, yv = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    x = tg.tensor(xv, requires_grad=True)
    loss = F.mse_loss(x, tg.tensor(yv))
    assert loss.shape == (), f"the loss is a scalar, got shape {loss.shape}"
    np.testing.assert_allclose(loss.item(), np.mean((xv - yv) ** 2), rtol=1e-12)
    loss.backward()
    np.testing.assert_allclose(
        x.grad.numpy(),
        2 * (xv - yv) / xv.size,
        rtol=1e-12,
        err_msg="d/dx mean((x - y)^2) = 2 (x - y) / n",
    )


# --------------------------------------------------------------------------------------------
# A3.3, A3.4 optimizers against numpy transcriptions of PyTorch's updates


def _quadratic_grad(p, target):
    return 2 * (p - target)  # the gradient of sum((p - target)^2)


def _run_optimizer(make, steps=6):
    """Minimise sum((p - target)^2) with the library; return the parameter after each step."""
    rng = _rng(4)
    p0, target = rng.standard_normal(5), rng.standard_normal(5)
    p = nn.Parameter(p0.copy())
    opt = make([p])
    history = []
    for _ in range(steps):
        opt.zero_grad()
        ((p - tg.tensor(target)) ** 2).sum().backward()
        opt.step()
        history.append(p.numpy().copy())
    return p0, target, history


def _sgd_reference(
    p, target, steps, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False
):
    p, buf, out = p.copy(), None, []
    for _ in range(steps):
        d = _quadratic_grad(p, target) + weight_decay * p
        if momentum:
            buf = d.copy() if buf is None else momentum * buf + (1 - dampening) * d
            d = d + momentum * buf if nesterov else buf
        p = p - lr * d
        out.append(p)
    return out


def _adam_reference(p, target, steps, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
    p, m, v, out = p.copy(), np.zeros_like(p), np.zeros_like(p), []
    for t in range(1, steps + 1):
        g = _quadratic_grad(p, target) + weight_decay * p
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        denom = np.sqrt(v) / math.sqrt(1 - betas[1] ** t) + eps
        p = p - lr / (1 - betas[0] ** t) * m / denom
        out.append(p)
    return out


def _assert_steps(got, want, what):
    for k, (g, w) in enumerate(zip(got, want), 1):
        np.testing.assert_allclose(
            g, w, rtol=1e-10, atol=1e-12, err_msg=f"{what}: the parameter after step {k}"
        )


SGD_SETTINGS = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.01),
]


@pytest.mark.task("A3.3")
@pytest.mark.points(1)
@pytest.mark.parametrize("settings", SGD_SETTINGS, ids=["plain", "momentum", "dampening-wd"])
def test_sgd_steps(settings):
    p0, target, got = _run_optimizer(lambda ps: optim.SGD(ps, **settings))
    _assert_steps(got, _sgd_reference(p0, target, len(got), **settings), f"SGD({settings})")


@pytest.mark.task("A3.4")
@pytest.mark.points(2)
def test_adam_steps():
    p0, target, got = _run_optimizer(lambda ps: optim.Adam(ps, lr=0.05))
    _assert_steps(got, _adam_reference(p0, target, len(got), lr=0.05), "Adam(lr=0.05)")


# --------------------------------------------------------------------------------------------
# A3.5 a model on the digits


@pytest.mark.task("A3.5")
@pytest.mark.points(5)
def test_mlp_reaches_95_percent_on_the_digits():
    Xtr, ytr = load_digits("train")
    Xte, yte = load_digits("test")
    tg.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = optim.Adam(model.parameters(), lr=0.003)
    loss_fn = nn.CrossEntropyLoss()
    loader = DataLoader(Xtr, ytr, batch_size=32, shuffle=True, seed=0)
    for epoch in range(30):  # the loader reshuffles every epoch
        if epoch == 15:
            for group in opt.param_groups:
                group["lr"] *= 0.1  # a smaller step to settle (about 96% from here on)
        for xb, yb in loader:
            opt.zero_grad()
            loss_fn(model(xb), yb).backward()
            opt.step()
    with tg.no_grad():
        predicted = model(tg.tensor(Xte)).numpy().argmax(axis=1)
    accuracy = float((predicted == yte).mean())
    assert accuracy >= 0.95, f"test accuracy {accuracy:.3f}; the MLP should reach 0.95"


# BEGIN HIDDEN TESTS
@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A3.3")
@pytest.mark.points(1)
def test_sgd_nesterov_with_weight_decay():
    settings = dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1)
    p0, target, got = _run_optimizer(lambda ps: optim.SGD(ps, **settings))
    _assert_steps(got, _sgd_reference(p0, target, len(got), **settings), f"SGD({settings})")


@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A3.4")
@pytest.mark.points(1)
def test_adam_with_weight_decay_and_betas():
    settings = dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.05)
    p0, target, got = _run_optimizer(lambda ps: optim.Adam(ps, **settings))
    _assert_steps(got, _adam_reference(p0, target, len(got), **settings), f"Adam({settings})")


# END HIDDEN TESTS
