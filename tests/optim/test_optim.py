"""SGD and Adam: PyTorch's formulas, checked step by step against torch.optim when installed
and against the written-out formulas in numpy always."""

import copy

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
from tinygrad_edu import nn, optim

SGD_CASES = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, nesterov=True),
    dict(lr=0.1, momentum=0.5, weight_decay=0.01),
    dict(lr=0.1, momentum=0.9, dampening=0.3),
]
ADAM_CASES = [
    dict(lr=1e-3),
    dict(lr=0.05, betas=(0.8, 0.99)),
    dict(lr=0.01, weight_decay=0.1, eps=1e-6),
]


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    w0 = rng.standard_normal((4, 3)).astype(np.float32)
    b0 = rng.standard_normal(4).astype(np.float32)
    x = rng.standard_normal((8, 3)).astype(np.float32)
    return w0, b0, x


def _run_ours(make_opt, steps=5):
    w0, b0, x = _problem()
    w, b = nn.Parameter(w0.copy()), nn.Parameter(b0.copy())
    opt = make_opt([w, b])
    traj = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((tg.tensor(x).matmul(w, trans_B=True) + b).tanh() ** 2).sum()
        loss.backward()
        opt.step()
        traj.append((w.detach().numpy().copy(), b.detach().numpy().copy()))
    return traj


def _run_torch(make_opt, steps=5):
    w0, b0, x = _problem()
    w = torch.tensor(w0, requires_grad=True)
    b = torch.tensor(b0, requires_grad=True)
    opt = make_opt([w, b])
    traj = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((torch.tensor(x) @ w.T + b).tanh() ** 2).sum()
        loss.backward()
        opt.step()
        traj.append((w.detach().numpy().copy(), b.detach().numpy().copy()))
    return traj


def _assert_same(ours, ref):
    for step, ((w1, b1), (w2, b2)) in enumerate(zip(ours, ref)):
        np.testing.assert_allclose(w1, w2, rtol=2e-5, atol=2e-6, err_msg=f"weight, step {step}")
        np.testing.assert_allclose(b1, b2, rtol=2e-5, atol=2e-6, err_msg=f"bias, step {step}")


@pytest.mark.parametrize("kw", SGD_CASES, ids=str)
def test_sgd_matches_torch(kw):
    torch.set_num_threads(1)
    _assert_same(_run_ours(lambda p: optim.SGD(p, **kw)),
                 _run_torch(lambda p: torch.optim.SGD(p, **kw)))  # fmt: skip


@pytest.mark.parametrize("kw", ADAM_CASES, ids=str)
def test_adam_matches_torch(kw):
    torch.set_num_threads(1)
    _assert_same(_run_ours(lambda p: optim.Adam(p, **kw)),
                 _run_torch(lambda p: torch.optim.Adam(p, **kw)))  # fmt: skip


def test_sgd_momentum_formula_in_numpy():
    lr, mu, wd = 0.1, 0.9, 0.01
    p = nn.Parameter([1.0, -2.0])
    opt = optim.SGD([p], lr=lr, momentum=mu, weight_decay=wd, nesterov=True)
    ref, buf = np.array([1.0, -2.0]), None
    for _ in range(4):
        opt.zero_grad()
        (p * p * p).sum().backward()  # gradient 3 p^2
        opt.step()
        d = 3 * ref**2 + wd * ref
        buf = d if buf is None else mu * buf + d
        ref = ref - lr * (d + mu * buf)
        np.testing.assert_allclose(p.detach().numpy(), ref, rtol=1e-5)


def test_adam_formula_in_numpy():
    lr, (b1, b2), eps = 0.01, (0.9, 0.999), 1e-8
    p = nn.Parameter([0.5, 3.0])
    opt = optim.Adam([p], lr=lr)
    ref, m, v = np.array([0.5, 3.0]), 0.0, 0.0
    for t in range(1, 5):
        opt.zero_grad()
        (p * p).sum().backward()
        opt.step()
        g = 2 * ref
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        ref = ref - lr / (1 - b1**t) * m / (np.sqrt(v) / np.sqrt(1 - b2**t) + eps)
        np.testing.assert_allclose(p.detach().numpy(), ref, rtol=1e-5)


def test_step_bumps_version_and_keeps_dtype_and_identity():
    p = nn.Parameter([1.0, 2.0])
    data = p._data
    opt = optim.Adam([p], lr=0.1)
    y = p * p  # saves p
    y.sum().backward(retain_graph=True)
    v0 = p._version
    opt.step()
    assert p._version == v0 + 1 and p._data is data and p.dtype == np.float32
    with pytest.raises(RuntimeError, match="in-place"):
        y.sum().backward()  # p changed after y saved it


def test_parameters_without_grad_are_skipped_and_zero_grad():
    a, b = nn.Parameter([1.0]), nn.Parameter([1.0])
    opt = optim.SGD([a, b], lr=1.0)
    (a * 3).sum().backward()
    opt.step()
    assert a.item() == -2.0 and b.item() == 1.0
    opt.zero_grad(set_to_none=False)
    assert a.grad.item() == 0.0 and b.grad is None
    opt.zero_grad()
    assert a.grad is None


def test_param_groups_have_their_own_settings():
    a, b = nn.Parameter([1.0]), nn.Parameter([1.0])
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    (a + b).sum().backward()
    opt.step()
    assert a.item() == pytest.approx(0.9) and b.item() == pytest.approx(0.5)
    assert "Parameter Group 1" in repr(opt) and "lr: 0.5" in repr(opt)


def test_bad_arguments_are_clear_errors():
    p = nn.Parameter([1.0])
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="leaf that requires grad"):
        optim.SGD([p * 2], lr=0.1)
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="betas"):
        optim.Adam([p], betas=(0.9, 1.5))
    with pytest.raises(ValueError, match="two groups"):
        optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)


def test_state_dict_roundtrip_continues_identically():
    def make():
        tg.manual_seed(0)
        lin = nn.Linear(3, 2)
        return lin, optim.Adam(lin.parameters(), lr=0.05)

    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)

    def step(lin, opt):
        opt.zero_grad()
        lin(tg.tensor(x)).tanh().sum().backward()
        opt.step()

    a, oa = make()
    for _ in range(3):
        step(a, oa)
    b, ob = make()
    b.load_state_dict(a.state_dict())
    ob.load_state_dict(copy.deepcopy(oa.state_dict()))  # (else shared, as in PyTorch)
    assert ob.state_dict()["state"][0]["step"] == 3
    step(a, oa), step(b, ob)
    np.testing.assert_allclose(a.weight.detach().numpy(), b.weight.detach().numpy(), rtol=1e-6)


MAKERS = [lambda p: optim.SGD(p, lr=0.1, momentum=0.9), lambda p: optim.Adam(p, lr=1e-2)]


@pytest.mark.parametrize("make", MAKERS, ids=["sgd", "adam"])
def test_training_a_small_network_reduces_loss(make):
    from tinygrad_edu.data import make_moons

    X, y = make_moons(200, noise=0.1, seed=0)
    tg.manual_seed(0)
    net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
    opt = make(net.parameters())
    xt, yt = tg.tensor(X), tg.tensor(y)
    first = None
    for _ in range(150):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(xt), yt)
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    acc = (net(xt).detach().numpy().argmax(1) == y).mean()
    assert loss.item() < 0.5 * first and acc > 0.85
