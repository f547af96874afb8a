"""Adadelta's update in two buffers (NOTE [Adadelta in two buffers]) gives the bits of the
expressions it replaces, step after step, in float32 and float64, with weight decay and
``maximize``; other dtypes take the expressions; and it still follows ``torch.optim.Adadelta``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
from tinygrad_edu.optim import adadelta


def _expressions(p, grad, v, u, lr, rho, eps, weight_decay):
    """The update as written before the buffers (one new array per operation)."""
    if weight_decay:
        grad = grad + weight_decay * p
    v *= rho
    v += (1 - rho) * (grad * grad)
    delta = np.sqrt(u + eps) / np.sqrt(v + eps) * grad
    u *= rho
    u += (1 - rho) * (delta * delta)
    p -= lr * delta


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "settings",
    [dict(), dict(lr=0.3, rho=0.7, eps=1e-3), dict(weight_decay=0.1), dict(maximize=True)],
)
def test_buffers_give_the_expressions_bits(dtype, settings):
    rng = np.random.default_rng(0)
    shapes = [(37, 19), (5,), ()]
    w0 = [rng.standard_normal(s).astype(dtype) for s in shapes]
    ps = [tg.nn.Parameter(tg.tensor(w.copy())) for w in w0]
    opt = tg.optim.Adadelta(ps, **settings)
    ref = [w.copy() for w in w0]
    v = [np.zeros_like(w) for w in w0]
    u = [np.zeros_like(w) for w in w0]
    full = dict(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0) | settings
    sign = -1 if full.pop("maximize", False) else 1
    for step in range(4):
        grads = [(rng.standard_normal(s) * 10.0 ** (step - 2)).astype(dtype) for s in shapes]
        for p, g in zip(ps, grads):
            p.grad = tg.tensor(g.copy())
        opt.step()
        for i, g in enumerate(grads):
            _expressions(ref[i], sign * g, v[i], u[i], **full)
            assert ps[i].detach().numpy().tobytes() == ref[i].tobytes()
            st = opt.state[ps[i]]
            assert st["square_avg"].numpy().tobytes() == v[i].tobytes()
            assert st["acc_delta"].numpy().tobytes() == u[i].tobytes()


def test_other_dtypes_take_the_expressions():
    half = np.zeros(3, np.float16)
    assert not adadelta._in_place(np, half, half, half, half)
    f32 = np.zeros(3, np.float32)
    assert not adadelta._in_place(np, f32, f32.astype(np.float64), f32, f32)  # mixed
    assert adadelta._in_place(np, f32, f32, f32, f32)
    p = tg.nn.Parameter(tg.tensor(np.array([1.0, -2.0], np.float16)))
    opt = tg.optim.Adadelta([p], lr=0.5)
    p.grad = tg.tensor(np.array([0.5, 0.25], np.float16))
    opt.step()
    ref = np.array([1.0, -2.0], np.float16)
    _expressions(
        ref,
        np.array([0.5, 0.25], np.float16),
        np.zeros(2, np.float16),
        np.zeros(2, np.float16),
        0.5,
        0.9,
        1e-6,
        0.0,
    )
    assert p.detach().numpy().tobytes() == ref.tobytes()


def test_follows_torch():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((6, 4))
    p = tg.nn.Parameter(tg.tensor(w.copy()))
    pt = torch.nn.Parameter(torch.tensor(w.copy()))
    opt = tg.optim.Adadelta([p], lr=0.7, weight_decay=0.01)
    opt_t = torch.optim.Adadelta([pt], lr=0.7, weight_decay=0.01)
    for _ in range(5):
        g = rng.standard_normal((6, 4))
        p.grad, pt.grad = tg.tensor(g), torch.tensor(g)
        opt.step()
        opt_t.step()
    np.testing.assert_allclose(p.detach().numpy(), pt.detach().numpy(), rtol=1e-12, atol=1e-14)
