"""Eager gradcheck/gradgradcheck: they pass correct rules and catch wrong ones."""

import warnings

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu.grading.eager_check import GradcheckError, gradcheck, gradgradcheck


def _t(shape, seed, name=None):
    t = tg.tensor(np.random.default_rng(seed).normal(size=shape), requires_grad=True)
    t.name = name
    return t


class ScaledMul(tg.Function):
    """a * b whose backward for ``a`` is off by a factor ``SCALE`` (1.0: correct)."""

    SCALE = 1.0

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b * ScaledMul.SCALE, grad * a


@pytest.mark.parametrize(
    "fn, shapes",
    [
        (lambda a, b: a @ b, [(3, 4), (4, 2)]),
        (lambda a, b: (a * b).exp().sum(), [(3, 1), (1, 4)]),  # broadcasting
        (lambda a: a.log_softmax(), [(2, 5)]),
        (lambda a, b: (a @ b.T).tanh() / 3.0, [(2, 3), (4, 3)]),
        (lambda a, b: ScaledMul.apply(a, b), [(2, 3), (2, 3)]),
    ],
)
def test_correct_rules_pass(fn, shapes):
    inputs = [_t(s, i) for i, s in enumerate(shapes)]
    assert gradcheck(fn, inputs) is True
    assert gradgradcheck(fn, inputs) is True


def test_wrong_gradient_is_reported(monkeypatch):
    monkeypatch.setattr(ScaledMul, "SCALE", 1.1)
    a, b = _t((2, 3), 0, "W"), _t((2, 3), 1)
    with pytest.raises(GradcheckError) as info:
        gradcheck(lambda x, y: ScaledMul.apply(x, y), [a, b])
    e = info.value
    assert isinstance(e, AssertionError)
    assert (e.input_index, e.input_name) == (0, "W")
    proj_b = (np.asarray(b.detach().numpy()) * _projection((2, 3)))[e.index]
    assert e.numeric == pytest.approx(proj_b, rel=1e-6)
    assert e.analytic == pytest.approx(1.1 * proj_b, rel=1e-9)
    assert e.abs_error == pytest.approx(abs(0.1 * proj_b), rel=1e-5)
    assert e.rel_error == pytest.approx(0.1, rel=1e-4)
    msg = str(e)
    for part in ("input 0 ('W')", f"index {e.index}", "abs error", "rel error", "engine"):
        assert part in msg
    # the worst element is the one with the largest |b * p|
    worst = np.argmax(np.abs(b.detach().numpy() * _projection((2, 3))))
    assert e.index == np.unravel_index(worst, (2, 3))
    assert gradcheck(lambda x, y: ScaledMul.apply(x, y), [a, b], raise_exception=False) is False


def _projection(shape):
    from tinygrad_edu.grading.gradcheck import random_projection

    return random_projection(shape, 0)


def test_wrong_second_derivative_is_caught(monkeypatch):
    # first derivatives right, but the backward's own graph is wrong: detach one factor
    class DetachedSquare(tg.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, grad):
            (a,) = ctx.saved_tensors
            return grad * 2.0 * a.detach()

    a = _t((3,), 2, "x")
    assert gradcheck(lambda x: DetachedSquare.apply(x) * x, [a])
    with pytest.raises(GradcheckError, match="second derivative wrt input 0 \\('x'\\)"):
        gradgradcheck(lambda x: DetachedSquare.apply(x) * x, [a])
    assert gradgradcheck(lambda x: DetachedSquare.apply(x) * x, [a], raise_exception=False) is False


def test_constants_and_unused_inputs():
    a, b = _t((2, 2), 0), _t((2, 2), 1)
    c = tg.tensor(np.ones((2, 2)))  # no grad: passed through
    assert gradcheck(lambda x, y, k, s: x * k * s, [a, b, c, 2.0])  # b unused: zero gradient
    assert gradgradcheck(lambda x, y, k, s: x * k * s, [a, b, c, 2.0])  # linear: zero


def test_float32_inputs_warn_and_convert():
    a = tg.tensor([0.5, 1.5], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert gradcheck(lambda x: x.exp(), [a])
    assert any("float32" in str(w.message) and "float64" in str(w.message) for w in caught)


def test_argument_errors():
    with pytest.raises(ValueError, match="requires_grad"):
        gradcheck(lambda x: x, [tg.tensor(np.ones(2))])
    with pytest.raises(TypeError, match="must return a Tensor"):
        gradcheck(lambda x: 3.0, [_t((2,), 0)])
