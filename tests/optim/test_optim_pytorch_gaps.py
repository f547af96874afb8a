"""Optimizer behaviour that PyTorch 2.13 has, checked against it numerically:

- frozen parameters (``requires_grad=False``) may be given to any optimizer; ``step()`` skips
  them (they never get a ``.grad``), so ``SGD(model.parameters())`` works after
  ``model[0].requires_grad_(False)``;
- ``decoupled_weight_decay`` where PyTorch takes it (``Adam``, ``NAdam``, ``RAdam``):
  ``Adam(decoupled_weight_decay=True)`` is AdamW;
- ``lr_scheduler._LRScheduler``, the old name of ``LRScheduler``, subclassed by custom
  schedules that define ``get_lr()``.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
from tinygrad_edu import nn, optim

OPTIMIZERS = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
              "RAdam"]  # fmt: skip


def _models():
    """The same 3 -> 4 -> 2 MLP in both libraries (float32, equal weights)."""
    tg.manual_seed(0)
    ours = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    with torch.no_grad():
        for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
            q.copy_(torch.tensor(p.detach().numpy()))
    return ours, theirs


def _train(ours, theirs, opt, topt, steps=5):
    rng = np.random.default_rng(0)
    for _ in range(steps):
        x, y = rng.standard_normal((6, 3)), rng.standard_normal((6, 2))
        for model, o, lib in ((ours, opt, tg), (theirs, topt, torch)):
            o.zero_grad()
            loss = ((model(lib.tensor(x, dtype=lib.float32)) - lib.tensor(y, dtype=lib.float32))
                    ** 2).mean()  # fmt: skip
            loss.backward()
            o.step()


def _assert_same(ours, theirs):
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), atol=1e-6, rtol=0)


# -- frozen parameters -------------------------------------------------------------------------
@pytest.mark.parametrize("name, kwargs", [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.01)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.01)),
])  # fmt: skip
def test_a_frozen_first_layer_is_skipped_as_in_torch(name, kwargs):
    ours, theirs = _models()
    ours[0].requires_grad_(False)
    theirs[0].requires_grad_(False)
    frozen = [p.numpy().copy() for p in ours[0].parameters()]
    trained = ours[2].weight.detach().numpy().copy()
    opt = getattr(optim, name)(ours.parameters(), **kwargs)
    topt = getattr(torch.optim, name)(theirs.parameters(), **kwargs)
    _train(ours, theirs, opt, topt)
    _assert_same(ours, theirs)
    for p, before in zip(ours[0].parameters(), frozen, strict=True):
        assert p.grad is None
        np.testing.assert_array_equal(p.numpy(), before)
    assert not np.allclose(ours[2].weight.detach().numpy(), trained)  # the rest did train


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_every_optimizer_accepts_frozen_parameters(name):
    w, frozen = nn.Parameter([1.0, -2.0]), tg.tensor([3.0, 4.0])  # frozen: requires_grad False
    opt = getattr(optim, name)([w, frozen], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    opt.zero_grad()
    assert frozen.tolist() == [3.0, 4.0] and w.tolist() != [1.0, -2.0]
    opt.load_state_dict(opt.state_dict())


def test_a_non_leaf_is_still_refused():
    p = nn.Parameter([1.0])
    with pytest.raises(ValueError, match="SGD: parameter 0 .*leaf"):
        optim.SGD([p * 2], lr=0.1)


# -- decoupled_weight_decay --------------------------------------------------------------------
def test_decoupled_weight_decay_is_accepted_where_torch_accepts_it():
    for name in OPTIMIZERS:
        theirs = inspect.signature(getattr(torch.optim, name)).parameters
        ours = inspect.signature(getattr(optim, name)).parameters
        assert ("decoupled_weight_decay" in ours) == ("decoupled_weight_decay" in theirs), name


@pytest.mark.parametrize("name, kwargs", [
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, amsgrad=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=False)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
])  # fmt: skip
def test_decoupled_weight_decay_matches_torch(name, kwargs):
    ours, theirs = _models()
    opt = getattr(optim, name)(ours.parameters(), **kwargs)
    topt = getattr(torch.optim, name)(theirs.parameters(), **kwargs)
    _train(ours, theirs, opt, topt, steps=8)
    _assert_same(ours, theirs)
    assert opt.param_groups[0]["decoupled_weight_decay"] == kwargs["decoupled_weight_decay"]


def test_adam_with_decoupled_weight_decay_is_adamw():
    a, b = _models()[0], _models()[0]
    opt_a = optim.Adam(a.parameters(), lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)
    opt_b = optim.AdamW(b.parameters(), lr=0.01, weight_decay=0.1)
    assert opt_b.param_groups[0]["decoupled_weight_decay"] is True
    rng = np.random.default_rng(0)
    for _ in range(5):
        x, y = tg.tensor(rng.standard_normal((6, 3))), tg.tensor(rng.standard_normal((6, 2)))
        for model, opt in ((a, opt_a), (b, opt_b)):
            opt.zero_grad()
            ((model(x.float()) - y.float()) ** 2).mean().backward()
            opt.step()
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


# -- _LRScheduler ------------------------------------------------------------------------------
def test_lr_scheduler_alias_subclassed_with_get_lr_matches_torch():
    def custom(base):
        class HalveEvery2(base):
            def __init__(self, optimizer, last_epoch=-1):
                super().__init__(optimizer, last_epoch)

            def get_lr(self):
                return [lr * 0.5 ** (self.last_epoch // 2) for lr in self.base_lrs]

        return HalveEvery2

    assert optim.lr_scheduler._LRScheduler is not None
    assert issubclass(optim.lr_scheduler._LRScheduler, optim.lr_scheduler.LRScheduler)
    opt = optim.SGD([nn.Parameter([1.0])], lr=0.8)
    topt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.8)
    sched = custom(optim.lr_scheduler._LRScheduler)(opt)
    tsched = custom(torch.optim.lr_scheduler._LRScheduler)(topt)
    assert isinstance(sched, optim.lr_scheduler.LRScheduler)
    ours, theirs = [], []
    for _ in range(7):
        opt.step()
        topt.step()
        sched.step()
        tsched.step()
        ours.append(sched.get_last_lr())
        theirs.append(tsched.get_last_lr())
    assert ours == theirs
    assert sched.state_dict()["last_epoch"] == tsched.state_dict()["last_epoch"] == 7
