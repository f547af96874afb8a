"""``tg.optim.LBFGS`` against ``torch.optim.LBFGS``: the same parameter trajectory, step by
step, in float64, on a least-squares problem and on the Rosenbrock function, with and without
the strong-Wolfe line search; and its errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tinygrad_edu as tg

_rng = np.random.default_rng(0)
_A = _rng.standard_normal((8, 3))
_B = _rng.standard_normal((8, 2))


def _least_squares(L, w, b):
    A, B = L.tensor(_A), L.tensor(_B)
    return ((A @ w + b - B) ** 2).sum()


def _rosenbrock(L, x, y):
    return (1 - x) ** 2 + 100 * (y - x**2) ** 2


def _trajectory(L, problem, starts, steps, **options):
    params = [L.tensor(s, requires_grad=True) for s in starts]
    opt = L.optim.LBFGS(params, **options)
    losses, path = [], []

    def closure():
        opt.zero_grad()
        loss = problem(L, *params)
        loss.backward()
        return loss

    for _ in range(steps):
        losses.append(opt.step(closure).item())
        path.append(np.concatenate([np.asarray(p.detach().tolist()).ravel() for p in params]))
    return np.array(losses), np.array(path), opt.state[params[0]]


_PROBLEMS = {
    "least_squares": (_least_squares, (np.zeros((3, 2)), np.zeros(2))),
    "rosenbrock": (_rosenbrock, (np.array(-1.2), np.array(1.0))),
}
_OPTIONS = [
    {},
    {"line_search_fn": "strong_wolfe"},
    {"lr": 0.5, "max_iter": 4, "history_size": 2},
    {"lr": 0.8, "max_iter": 7, "history_size": 3, "line_search_fn": "strong_wolfe"},
    {"max_iter": 30, "tolerance_grad": 1e-3, "tolerance_change": 1e-4},
    {"max_iter": 10, "max_eval": 12, "line_search_fn": "strong_wolfe"},
]


@pytest.mark.parametrize("options", _OPTIONS, ids=str)
@pytest.mark.parametrize("problem", sorted(_PROBLEMS))
def test_trajectory_matches_pytorch(problem, options):
    fn, starts = _PROBLEMS[problem]
    steps = 4
    tl, tp, ts = _trajectory(torch, fn, starts, steps, **options)
    gl, gp, gs = _trajectory(tg, fn, starts, steps, **options)
    np.testing.assert_allclose(gp, tp, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(gl, tl, rtol=1e-8, atol=1e-10)
    assert gs["n_iter"] == ts["n_iter"] and gs["func_evals"] == ts["func_evals"]
    assert len(gs["old_dirs"]) == len(ts["old_dirs"])


def test_the_rosenbrock_minimum_is_reached():
    _, path, _ = _trajectory(tg, _rosenbrock, _PROBLEMS["rosenbrock"][1], 5,
                             line_search_fn="strong_wolfe")  # fmt: skip
    np.testing.assert_allclose(path[-1], [1.0, 1.0], atol=1e-3)


def test_a_model_trains_with_a_closure():
    tg.manual_seed(0)
    model = tg.nn.Linear(3, 1).double()
    x, y = tg.tensor(_A), tg.tensor(_B[:, :1])
    opt = tg.optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = tg.nn.functional.mse_loss(model(x), y)
        loss.backward()
        return loss

    first = opt.step(closure).item()
    second = opt.step(closure).item()
    assert second < first


def test_errors_match_pytorch():
    for L in (torch, tg):
        p = L.zeros(2, requires_grad=True)
        with pytest.raises(ValueError):
            L.optim.LBFGS([p], lr=-1.0)
        q = L.zeros(2, requires_grad=True)
        with pytest.raises(ValueError):
            L.optim.LBFGS([{"params": [p]}, {"params": [q]}])
    with pytest.raises(ValueError, match="strong_wolfe"):
        tg.optim.LBFGS([tg.zeros(2, requires_grad=True)], line_search_fn="armijo")
    with pytest.raises((RuntimeError, TypeError)):
        tg.optim.LBFGS([tg.zeros(2, requires_grad=True)]).step(None)


def test_state_dict_round_trip_continues_the_same_path():
    fn, starts = _PROBLEMS["rosenbrock"]
    _, whole, _ = _trajectory(tg, fn, starts, 3, max_iter=3)
    params = [tg.tensor(s, requires_grad=True) for s in starts]
    opt = tg.optim.LBFGS(params, max_iter=3)

    def closure():
        opt.zero_grad()
        loss = fn(tg, *params)
        loss.backward()
        return loss

    opt.step(closure)
    saved = opt.state_dict()
    again = tg.optim.LBFGS(params, max_iter=3)
    again.load_state_dict(saved)
    opt = again
    opt.step(closure)
    opt.step(closure)
    np.testing.assert_allclose([p.item() for p in params], whole[-1], rtol=1e-12)
