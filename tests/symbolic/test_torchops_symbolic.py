"""The ops of issue 24 reach the symbolic engine from the same declarations: each program
below runs as a graph (``Executor``, gradients from ``gradients()``) and eagerly, and the
values and gradients agree."""

import numpy as np
import pytest

import tinygrad_edu as tg
import tinygrad_edu.symbolic as S

_rng = np.random.default_rng(0)
A = _rng.standard_normal((3, 4))
B = _rng.standard_normal((4, 3))
SQ = np.eye(3) * 2 + _rng.uniform(-0.4, 0.4, (3, 3))
IDX = np.array([2, 0, 2])

PROGRAMS = {
    "tril_triu": (lambda M, a: a.tril(-1) * 2 + a.triu(1), [A]),
    "flip_roll": (lambda M, a: a.flip(0, 1) * a.roll(1, 1), [A]),
    "index_select": (lambda M, a: a.index_select(1, _idx(M, IDX)) ** 2, [A]),
    "diagonal_trace": (lambda M, a: a.diagonal(1) * a.trace(), [SQ]),
    "diag_embed": (lambda M, a: a.diag_embed() @ a.exp().diag_embed(), [A]),
    "unfold": (lambda M, a: a.unfold(1, 2, 1) ** 2, [A]),
    "narrow_movedim_tile": (lambda M, a: a.narrow(1, 1, 2).movedim(0, 1).tile((2, 1)), [A]),
    "repeat_interleave": (lambda M, a: a.repeat_interleave(2, dim=1) * 1.5, [A]),
    "prod_cumprod": (lambda M, a: a.prod(1) + a.cumprod(0).sum(0)[:3], [A]),
    "logsumexp_norm": (lambda M, a: a.logsumexp(1) * a.norm(dim=1) + a.norm(1, dim=1), [A]),
    "sort_topk": (lambda M, a: a.sort(1).values[:, :2] * a.topk(2).values, [A]),
    "median_quantile": (lambda M, a: a.median(1).values + a.quantile(0.3, dim=1), [A]),
    "einsum": (lambda M, a, b: M.einsum("ij,jk->ik", a, b).sin(), [A, B]),
    "inverse_det": (lambda M, a: a.inverse() * a.det(), [SQ]),
    "rounding": (lambda M, a: a.floor() + a.frac() * a.remainder(0.7) + M.atan2(a, a + 3), [A]),
    "lerp_clamp": (lambda M, a, b: a.lerp(b.T, 0.3).clamp_min(-0.5).clamp_max(0.5), [A, B]),
    "outer_kron_cross": (lambda M, a: M.outer(a[0], a[1]).sum(0) + M.kron(a[:2, :2], a[2:, 2:])
                         .sum(0) + M.cross(a[:, :3], a[:, 1:], dim=1).sum(), [A]),
    "hstack_meshgrid": (lambda M, a: M.hstack([a, a * 2]).sum(0) + M.meshgrid(
        a[0], a[1], indexing="ij")[0].sum(1)[0], [A]),
    "bmm_addmm": (lambda M, a, b: M.addmm(a[:, :3], a, b, beta=0.5) + M.bmm(
        a[None], b[None])[0], [A, B]),
}  # fmt: skip


def _idx(M, index):
    return index if M is S else tg.tensor(index)


def _eager(build, arrays):
    xs = [tg.tensor(a, requires_grad=True) for a in arrays]
    y = build(tg, *xs)
    y.sum().backward()
    return y.detach().numpy(), [x.grad.numpy() for x in xs]


def _symbolic(build, arrays):
    xs = [S.Variable(f"x{i}", shape=a.shape, dtype="float64") for i, a in enumerate(arrays)]
    y = build(S, *xs)
    total = y.sum()
    grads = S.gradients(total, xs)
    out = S.Executor([y, *grads]).run(dict(zip(xs, arrays)))
    return out[0], out[1:]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_symbolic_graph_agrees_with_eager(name):
    build, arrays = PROGRAMS[name]
    value, grads = _symbolic(build, arrays)
    expect, expect_grads = _eager(build, arrays)
    np.testing.assert_allclose(value, expect, rtol=1e-10, atol=1e-12)
    for g, e in zip(grads, expect_grads):
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12)


def test_data_dependent_ops_are_eager_only():
    x = S.Variable("x", shape=(3,))
    for name in ("masked_select", "nonzero", "unique", "multinomial"):
        assert not hasattr(x, name), name
