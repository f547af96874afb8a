"""Every learning-rate schedule against ``torch.optim.lr_scheduler``: the sequence of rates
(``get_last_lr()`` and each group's ``lr``) equals PyTorch's exactly, over enough epochs to pass
every milestone, restart and phase; ``state_dict`` resumes a schedule where it stopped."""

import warnings

import pytest
import torch

from tinygrad_edu import nn, optim
from tinygrad_edu.optim import lr_scheduler as ours

EPOCHS = 30

SCHEDULES = [
    ("StepLR", dict(step_size=4, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[3, 7, 7, 12], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=10, eta_min=0.01)),  # 30 epochs: down, up and down again
    ("LambdaLR", dict(lr_lambda=lambda e: 1 / (1 + e))),
    ("LinearLR", dict(start_factor=0.1, total_iters=8)),
    ("ConstantLR", dict(factor=0.5, total_iters=4)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=EPOCHS + 1)),
    ("OneCycleLR", dict(max_lr=[1.0, 2.0], total_steps=EPOCHS + 1, anneal_strategy="linear",
                        three_phase=True)),
    ("CosineAnnealingWarmRestarts", dict(T_0=5, T_mult=2, eta_min=0.001)),
    ("CosineAnnealingWarmRestarts", dict(T_0=7)),
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.95)),
    ("PolynomialLR", dict(total_iters=12, power=2.0)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4, step_size_down=3)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=3, mode="triangular2")),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=5, mode="exp_range", gamma=0.9)),
]


def _opt(lib, kind="SGD"):
    if lib is torch:
        ps = [torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)]
        make = getattr(torch.optim, kind)
    else:
        ps = [nn.Parameter([0.0]), nn.Parameter([0.0])]
        make = getattr(optim, kind)
    extra = {"momentum": 0.9} if kind == "SGD" else {}
    return make([{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.3}], lr=0.1, **extra)


def _sequence(lib, sched, make_kw, kind="SGD"):
    opt = _opt(lib, kind)
    mod = torch.optim.lr_scheduler if lib is torch else ours
    s = getattr(mod, sched)(opt, **make_kw)
    seq = []
    for _ in range(EPOCHS):
        seq.append((tuple(s.get_last_lr()), tuple(g["lr"] for g in opt.param_groups),
                    tuple(g.get("momentum", g.get("betas", (None,))[0])
                          for g in opt.param_groups)))  # fmt: skip
        opt.step()
        s.step()
    return seq


@pytest.mark.parametrize("sched,kw", SCHEDULES, ids=[s for s, _ in SCHEDULES])
def test_rates_equal_torchs(sched, kw):
    assert _sequence(optim, sched, kw) == _sequence(torch, sched, kw)


def test_one_cycle_moves_adams_beta1():
    kw = dict(max_lr=0.5, epochs=3, steps_per_epoch=10, pct_start=0.25)
    assert (_sequence(optim, "OneCycleLR", kw, kind="Adam")
            == _sequence(torch, "OneCycleLR", kw, kind="Adam"))  # fmt: skip


def test_chained_schedulers_multiply():
    def run(lib, mod):
        opt = _opt(lib)
        s = mod.ChainedScheduler([mod.ConstantLR(opt, factor=0.5, total_iters=3),
                                  mod.ExponentialLR(opt, gamma=0.9)])  # fmt: skip
        out = []
        for _ in range(10):
            out.append(tuple(s.get_last_lr()))
            opt.step()
            s.step()
        return out, s.state_dict()["_schedulers"][1]["last_epoch"]

    assert run(optim, ours) == run(torch, torch.optim.lr_scheduler)


def test_sequential_warmup_then_cosine():
    def run(lib, mod):
        opt = _opt(lib)
        warm = mod.LinearLR(opt, start_factor=0.2, total_iters=4)
        cos = mod.CosineAnnealingLR(opt, T_max=10)
        s = mod.SequentialLR(opt, [warm, cos], milestones=[4])
        out = []
        for _ in range(EPOCHS):
            out.append(tuple(s.get_last_lr()))
            opt.step()
            s.step()
        return out

    assert run(optim, ours) == run(torch, torch.optim.lr_scheduler)


@pytest.mark.parametrize("mode,values", [
    ("min", [5, 4, 4, 4, 4, 3.9999, 4, 4, 4, 4, 4, 4, 2, 2, 2, 2, 2, 2, 2, 2]),
    ("max", [1, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 5, 5, 5, 5, 5, 5]),
])  # fmt: skip
def test_reduce_on_plateau_equals_torchs(mode, values):
    def run(lib, mod):
        opt = _opt(lib)
        s = mod.ReduceLROnPlateau(opt, mode=mode, patience=2, cooldown=1, factor=0.5,
                                  min_lr=[0.0, 0.05])  # fmt: skip
        out = []
        for v in values:
            s.step(v)
            out.append((tuple(s.get_last_lr()), s.num_bad_epochs, s.cooldown_counter))
        return out

    assert run(optim, ours) == run(torch, torch.optim.lr_scheduler)


def test_plateau_accepts_a_loss_tensor():
    import tinygrad_edu as tg

    opt = _opt(optim)
    s = ours.ReduceLROnPlateau(opt, patience=0)
    s.step(tg.tensor(1.0))
    s.step(tg.tensor(2.0))
    assert s.get_last_lr()[0] == pytest.approx(0.01)


@pytest.mark.parametrize("sched,kw", [SCHEDULES[3], SCHEDULES[7], SCHEDULES[9]],
                         ids=["cosine", "onecycle", "warm_restarts"])  # fmt: skip
def test_state_dict_resumes_the_schedule(sched, kw):
    def fresh():
        opt = _opt(optim)
        return opt, getattr(ours, sched)(opt, **kw)

    opt_a, a = fresh()
    for _ in range(12):
        opt_a.step()
        a.step()
    opt_b, b = fresh()
    opt_b.load_state_dict(opt_a.state_dict())
    b.load_state_dict(a.state_dict())
    for _ in range(10):
        a.step(), b.step()
        assert a.get_last_lr() == b.get_last_lr()
    assert "optimizer" not in a.state_dict()


def test_errors_are_pytorchs():
    opt = _opt(optim)
    with pytest.raises(TypeError, match="not an Optimizer"):
        ours.StepLR([1, 2], step_size=1)
    with pytest.raises(ValueError, match="total_steps"):
        ours.OneCycleLR(opt, max_lr=1.0)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        ours.ReduceLROnPlateau(opt, factor=2.0)
    with pytest.raises(ValueError, match="Tried to step"):
        s = ours.OneCycleLR(opt, max_lr=1.0, total_steps=2)
        for _ in range(3):
            opt.step()
            s.step()
    with pytest.raises(KeyError, match="initial_lr"):
        ours.StepLR(_opt(optim), step_size=2, last_epoch=3)


def test_stepping_the_schedule_before_the_optimizer_warns_as_torch():
    for lib, mod in ((optim, ours), (torch, torch.optim.lr_scheduler)):
        opt = _opt(lib)
        s = mod.StepLR(opt, step_size=1)
        with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
            s.step()
        opt = _opt(lib)
        s = mod.StepLR(opt, step_size=1)
        opt.step()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            s.step()
