"""The random ops (ops/random.py): seeded, with the right distributions, and PyTorch's errors.

Every sample here comes from a fixed seed, so the statistics below are the same numbers on
every run (no flaky bounds): they would fail if a sampler drew from the wrong distribution."""

import numpy as np
import pytest

import tinygrad_edu as tg


def test_a_seed_gives_the_same_numbers():
    tg.manual_seed(3)
    a = tg.empty(5).normal_(), tg.multinomial(tg.ones(6), 3), tg.randperm(6)
    tg.manual_seed(3)
    b = tg.empty(5).normal_(), tg.multinomial(tg.ones(6), 3), tg.randperm(6)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.numpy(), y.numpy())


@pytest.mark.parametrize(("fill", "args", "mean", "std"), [
    ("normal_", (1.0, 0.5), 1.0, 0.5),
    ("uniform_", (-1.0, 3.0), 1.0, 4 / 12**0.5),
    ("bernoulli_", (0.25,), 0.25, (0.25 * 0.75) ** 0.5),
    ("exponential_", (2.0,), 0.5, 0.5),
])  # fmt: skip
def test_fills_draw_from_their_distribution(fill, args, mean, std):
    tg.manual_seed(0)
    x = getattr(tg.empty(20000, dtype=tg.float64), fill)(*args)
    assert x.dtype == np.float64 and x.shape == (20000,)
    assert abs(x.mean().item() - mean) < 0.03 * max(std, 1)
    assert abs(x.std().item() - std) < 0.03 * max(std, 1)


def test_random_integers_stay_in_range():
    tg.manual_seed(0)
    x = tg.zeros(1000, dtype=tg.int64).random_(2, 5)
    assert set(x.tolist()) == {2, 3, 4}
    assert set(tg.zeros(500).random_(3).tolist()) == {0.0, 1.0, 2.0}


def test_multinomial_follows_the_weights():
    tg.manual_seed(0)
    draws = tg.multinomial(tg.tensor([1.0, 0.0, 3.0]), 4000, replacement=True)
    counts = np.bincount(draws.numpy(), minlength=3)
    assert counts[1] == 0 and abs(counts[2] / 4000 - 0.75) < 0.03
    rows = tg.multinomial(tg.tensor([[1.0, 1.0, 1.0, 1.0], [0.0, 2.0, 1.0, 1.0]]), 3)
    assert rows.shape == (2, 3) and rows.dtype == np.int64
    assert all(len(set(r)) == 3 for r in rows.tolist())  # without replacement: distinct
    assert 0 not in rows.tolist()[1]  # a zero weight is never drawn


def test_bad_parameters_are_errors_naming_the_op():
    with pytest.raises(RuntimeError, match="normal_.*std"):
        tg.zeros(3).normal_(0.0, -1.0)
    with pytest.raises(RuntimeError, match="from <= to"):
        tg.zeros(3).uniform_(2.0, 1.0)
    with pytest.raises(RuntimeError, match="without replacement"):
        tg.multinomial(tg.ones(3), 4)
    with pytest.raises(RuntimeError, match="sums to 0"):
        tg.multinomial(tg.zeros(3), 1)
    with pytest.raises(RuntimeError, match="non-negative"):
        tg.multinomial(tg.tensor([1.0, -1.0]), 1)
    with pytest.raises(RuntimeError, match="floating"):
        tg.zeros(3, dtype=tg.int64).normal_()


def test_a_failed_fill_leaves_the_tensor_unchanged():
    x = tg.ones(3)
    with pytest.raises(RuntimeError):
        x.uniform_(1.0, 0.0)
    assert x.tolist() == [1.0, 1.0, 1.0] and x._counter == [0]


def test_fills_on_parameters_need_no_grad_as_in_pytorch():
    w = tg.nn.Parameter(tg.zeros(4))
    with pytest.raises(RuntimeError, match="leaf"):
        w.normal_()
    with tg.no_grad():
        assert w.normal_() is w
    assert w.requires_grad and float(w.abs().sum()) > 0


def test_an_explicit_generator_is_used():
    rng = np.random.default_rng(7)
    a = tg.empty(4).normal_(generator=rng)
    b = tg.empty(4).normal_(generator=np.random.default_rng(7))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    with pytest.raises(TypeError, match="generator"):
        tg.empty(2).normal_(generator="seed 1")
