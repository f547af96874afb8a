"""Every optimizer and option against ``torch.optim``: the same weights, the same loss, 20
steps; the parameters agree to ~1e-6 in float32 and ~1e-12 in float64 at every step. Plus what
the optimizers share (``maximize``, ``step(closure)``, default rates, param groups,
``state_dict``) and clear errors for bad settings."""

import copy

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
from tinygrad_edu import nn, optim

CASES = [
    ("SGD", {}),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.2, maximize=True)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("AdamW", {}),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.01, betas=(0.8, 0.99), maximize=True)),
    ("RMSprop", {}),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.005, alpha=0.9, eps=1e-6, maximize=True)),
    ("Adagrad", {}),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adadelta", {}),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Adamax", {}),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("NAdam", {}),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", {}),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, betas=(0.9, 0.9))),
]
STEPS = 20


def _problem(dtype):
    rng = np.random.default_rng(0)
    w0, b0 = rng.standard_normal((4, 3)), rng.standard_normal(4)
    x, t = rng.standard_normal((8, 3)), rng.standard_normal((8, 4))
    return [a.astype(dtype) for a in (w0, b0, x, t)]


def _trajectory(lib, name, kw, dtype):
    """The parameters after each of STEPS steps, with ``lib`` (tinygrad_edu or torch)."""
    w0, b0, x, t = _problem(dtype)
    if lib is tg:
        w, b = nn.Parameter(w0.copy()), nn.Parameter(b0.copy())
        make = getattr(optim, name)
    else:
        w = torch.tensor(w0, requires_grad=True)
        b = torch.tensor(b0, requires_grad=True)
        make = getattr(torch.optim, name)
    opt = make([w, b], **kw)
    x, t = lib.tensor(x), lib.tensor(t)
    out = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = (((x @ w.T + b).tanh() - t) ** 2).mean()
        loss.backward()
        opt.step()
        out.append(np.concatenate([w.detach().numpy().ravel(), b.detach().numpy().ravel()]))
    return np.array(out)


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-6), (np.float64, 1e-12)],
                         ids=["float32", "float64"])  # fmt: skip
@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}{kw}" for n, kw in CASES])
def test_matches_torch_step_by_step(name, kw, dtype, tol):
    torch.set_num_threads(1)
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64 if dtype == np.float64 else torch.float32)
    try:  # (NAdam keeps a scalar state in the default dtype)
        ref = _trajectory(torch, name, kw, dtype)
    finally:
        torch.set_default_dtype(old)
    old = tg.get_default_dtype()
    tg.set_default_dtype(tg.float64 if dtype == np.float64 else tg.float32)
    try:  # (the same here: a 0-d state tensor has the default float dtype, as in PyTorch)
        ours = _trajectory(tg, name, kw, dtype)
    finally:
        tg.set_default_dtype(old)
    assert ours.dtype == dtype
    for step, (a, b) in enumerate(zip(ours, ref)):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=f"{name}({kw}), step {step}")
    assert np.abs(ref[-1] - ref[0]).max() > 1e-3  # the case really moves the weights


@pytest.mark.parametrize("name", sorted({n for n, _ in CASES}))
def test_default_settings_are_torchs(name):
    p = nn.Parameter([1.0])
    ours = getattr(optim, name)([p]).defaults
    theirs = getattr(torch.optim, name)([torch.tensor([1.0], requires_grad=True)]).defaults
    for k, v in ours.items():
        assert theirs[k] == v, f"{name}: default {k}={v}, PyTorch's is {theirs[k]}"


@pytest.mark.parametrize("name", sorted({n for n, _ in CASES}))
def test_state_dict_roundtrip_continues_identically(name):
    w0, b0, x, t = _problem(np.float64)

    def run(opt, w, steps):
        for _ in range(steps):
            opt.zero_grad()
            ((tg.tensor(x) @ w.T).tanh() - tg.tensor(t)).pow(2).mean().backward()
            opt.step()

    a = nn.Parameter(w0.copy())
    oa = getattr(optim, name)([a])
    run(oa, a, 3)
    b = nn.Parameter(a.detach().numpy().copy())
    ob = getattr(optim, name)([b])
    ob.load_state_dict(copy.deepcopy(oa.state_dict()))  # (else shared, as in PyTorch)
    run(oa, a, 3), run(ob, b, 3)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_maximize_ascends():
    p = nn.Parameter([1.0])
    opt = optim.AdamW([p], lr=0.1, maximize=True)
    (p * 2).sum().backward()
    opt.step()
    assert p.item() > 1.0


def test_step_with_closure_recomputes_and_returns_the_loss():
    p = nn.Parameter([3.0])
    opt = optim.RMSprop([p], lr=0.1)
    calls = []

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        calls.append(loss.item())
        return loss

    with tg.no_grad():  # the closure still records: step turns grad mode on for it
        out = opt.step(closure)
    assert calls == [9.0] and out.item() == 9.0 and p.item() < 3.0
    assert optim.SGD([p]).step() is None


def test_add_param_group_gets_defaults_and_its_own_lr():
    a, b = nn.Parameter([1.0]), nn.Parameter([1.0])
    opt = optim.Adagrad([a], lr=0.5)
    opt.add_param_group({"params": b, "lr": 0.1})
    assert [g["lr"] for g in opt.param_groups] == [0.5, 0.1]
    assert opt.param_groups[1]["eps"] == 1e-10
    with pytest.raises(ValueError, match="two groups"):
        opt.add_param_group({"params": [a]})


@pytest.mark.parametrize("make,word", [
    (lambda p: optim.RMSprop(p, lr=-1), "lr"),
    (lambda p: optim.Adagrad(p, eps=-1), "eps"),
    (lambda p: optim.Adadelta(p, rho=1.5), "rho"),
    (lambda p: optim.Adamax(p, betas=(0.9, 1.0)), "betas"),
    (lambda p: optim.NAdam(p, betas=(0.9,)), "betas"),
    (lambda p: optim.RAdam(p, weight_decay=-0.1), "weight_decay"),
    (lambda p: optim.AdamW(p, betas=(1.2, 0.9)), "betas"),
])  # fmt: skip
def test_bad_settings_are_value_errors_naming_the_setting(make, word):
    with pytest.raises(ValueError, match=word):
        make([nn.Parameter([1.0])])


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}{kw}" for n, kw in CASES])
def test_state_is_keyed_by_parameter_with_torchs_names(name, kw):
    p = nn.Parameter([1.0, 2.0])
    q = torch.tensor([1.0, 2.0], requires_grad=True)
    ours, theirs = getattr(optim, name)([p], **kw), getattr(torch.optim, name)([q], **kw)
    for t, opt in ((p, ours), (q, theirs)):
        (t * t).sum().backward()
        opt.step()
    assert set(ours.state[p]) == set(theirs.state[q])


def test_params_that_are_not_an_iterable_of_tensors_are_type_errors():
    lin = nn.Linear(2, 1)
    with pytest.raises(TypeError, match="model.parameters()"):
        optim.AdamW(lin)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        optim.Adam(lin.weight)  # one tensor: PyTorch's TypeError, not a row-by-row walk
    with pytest.raises(TypeError, match="iterable of Tensors"):
        torch.optim.Adam(torch.zeros(2, requires_grad=True))
