"""The same random programs through the eager engine, the symbolic engine and PyTorch."""

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
import tinygrad_edu.symbolic as S
from tests.eager.programs import LEAF_SHAPES, leaf_values, random_program, run_program

SEEDS = range(40)


def eager_run(prog, values, create_graph=False):
    xs = [tg.tensor(v, requires_grad=True) for v in values]
    out = run_program(prog, xs, "tg")
    grads = tg.grad(out, xs, allow_unused=True, create_graph=create_graph)
    return out, xs, grads


@pytest.mark.parametrize("seed", SEEDS)
def test_symbolic_and_eager_agree(seed):
    prog = random_program(seed)
    values = leaf_values(seed)
    out, _, grads = eager_run(prog, values)
    xs = [S.Variable(f"x{i}", shape=s, dtype="float64") for i, s in enumerate(LEAF_SHAPES)]
    y = run_program(prog, xs, "symbolic")
    gs = S.gradients(y, xs)
    results = S.Executor([y, *gs]).run(dict(zip(xs, values)))
    np.testing.assert_allclose(results[0], out.detach().numpy(), rtol=1e-12)
    for g_eager, g_sym, v in zip(grads, results[1:], values):
        expected = np.zeros_like(v) if g_eager is None else g_eager.numpy()
        np.testing.assert_allclose(g_sym, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_eager_matches_pytorch(seed):
    prog = random_program(seed)
    values = leaf_values(seed)
    out, xs, grads = eager_run(prog, values, create_graph=True)
    txs = [torch.tensor(v, requires_grad=True) for v in values]
    tout = run_program(prog, txs, "torch")
    tgrads = torch.autograd.grad(tout, txs, allow_unused=True, create_graph=True)
    np.testing.assert_allclose(out.item(), tout.item(), rtol=1e-12)
    for g, tg_ in zip(grads, tgrads):
        assert (g is None) == (tg_ is None)  # unused inputs agree
        if g is not None:
            np.testing.assert_allclose(g.detach().numpy(), tg_.detach().numpy(), rtol=1e-10,
                                       atol=1e-12)
    # second order: the gradient of sum(grad * grad) agrees too
    inner = sum((g * g).sum() for g in grads if g is not None and g.requires_grad)
    tinner = sum((g * g).sum() for g in tgrads if g is not None and g.requires_grad)
    if isinstance(inner, tg.Tensor) and torch.is_tensor(tinner) and tinner.requires_grad:
        h = tg.grad(inner, xs, allow_unused=True)
        th = torch.autograd.grad(tinner, txs, allow_unused=True)
        for a, b, v in zip(h, th, values):
            got = np.zeros_like(v) if a is None else a.numpy()
            ref = np.zeros_like(v) if b is None else b.numpy()
            np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-10)


def test_engine_semantics_match_pytorch():
    """A few behaviours side by side: accumulation, hooks, retain_grad, in-place rebase."""
    v = np.array([0.5, -1.5, 2.0])
    a, ta = tg.tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
    for x in (a, ta):
        h = x * 2
        h.retain_grad()
        h.register_hook(lambda g: g * 3)
        k = h.tanh()
        k2 = k * 1
        k2.mul_(k.detach() + 1)
        (k2.sum() + (x * x).sum()).backward()
        (x.exp().sum()).backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-12)
