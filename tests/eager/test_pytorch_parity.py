"""Where the eager engine used to give a silent wrong answer, crash, or raise numpy's error
instead of PyTorch's: each case against PyTorch itself (issue #22)."""

import warnings

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F


def _both(fn, *arrays, dtype=np.float64):
    """``fn`` on tinygrad_edu tensors and on torch tensors made from ``arrays`` (all requiring
    grad): ``(ours, theirs)`` as pairs of (value, grads)."""
    ours = [tg.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, tout = fn(tg, F, *ours), fn(torch, torch.nn.functional, *theirs)
    out.sum().backward()
    tout.sum().backward()
    return (out, [x.grad for x in ours]), (tout, [x.grad for x in theirs])


# -- binary cross-entropy at probabilities of exactly 0 and 1 ----------------------------------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_gradient_is_finite_at_zero_and_one_as_in_pytorch(reduction):
    p, t = np.array([0.0, 1.0, 0.0, 1.0, 0.3]), np.array([0.0, 1.0, 1.0, 0.0, 0.6])
    w = np.array([1.0, 2.0, 0.5, 1.0, 3.0])

    def bce(M, Fn, p, t):
        weight = (tg.tensor if M is tg else torch.tensor)(w)
        return Fn.binary_cross_entropy(p, t, weight=weight, reduction=reduction)

    (out, grads), (tout, tgrads) = _both(bce, p, t)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy())
    assert np.isfinite(grads[0].numpy()).all()  # the target's is +-inf there, in PyTorch too
    for g, tg_ in zip(grads, tgrads):
        np.testing.assert_allclose(g.numpy(), tg_.numpy(), rtol=1e-6)
    assert out.grad_fn.name() == type(tout.grad_fn).__name__ == "BinaryCrossEntropyBackward0"


def test_bce_of_a_saturated_sigmoid_trains_bceloss():
    x = tg.tensor([20.0, -20.0], requires_grad=True)  # sigmoid is exactly 1.0 and ~0 in float32
    tg.nn.BCELoss()(x.sigmoid(), tg.tensor([1.0, 0.0])).backward()
    assert np.isfinite(x.grad.numpy()).all()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_with_logits_is_one_node_as_in_pytorch(reduction):
    x, t = np.array([-30.0, -1.0, 0.0, 2.0, 40.0]), np.array([0.0, 1.0, 0.5, 1.0, 0.0])
    pw = np.array([1.0, 2.0, 0.5, 3.0, 1.0])

    def bce(M, Fn, x, t):
        pos = (tg.tensor if M is tg else torch.tensor)(pw)
        return Fn.binary_cross_entropy_with_logits(x, t, pos_weight=pos, reduction=reduction)

    (out, grads), (tout, tgrads) = _both(bce, x, t)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-6)
    for g, tg_ in zip(grads, tgrads):
        np.testing.assert_allclose(g.numpy(), tg_.numpy(), rtol=1e-6, atol=1e-12)
    assert out.grad_fn.name() == type(tout.grad_fn).__name__


# -- numpy's RuntimeWarnings: PyTorch is silent ---------------------------------------------
@pytest.mark.parametrize("name, fn", [
    ("x / 0", lambda: tg.tensor([1.0, 0.0, -1.0]) / 0),
    ("log(0)", lambda: tg.tensor([0.0, -1.0]).log()),
    ("log1p(-1)", lambda: tg.tensor([-1.0]).log1p()),
    ("sqrt(-1)", lambda: tg.tensor([-1.0]).sqrt()),
    ("rsqrt(0)", lambda: tg.tensor([0.0]).rsqrt()),
    ("exp overflow", lambda: tg.tensor([1000.0]).exp()),
    ("0 ** -1", lambda: tg.tensor([0.0]) ** -1),
    ("softmax with inf", lambda: F.softmax(tg.tensor([float("inf"), 1.0]), dim=0)),
    ("log_softmax with inf", lambda: F.log_softmax(tg.tensor([float("inf"), 1.0]), dim=0)),
    ("bce at 0", lambda: F.binary_cross_entropy(tg.tensor([0.0, 1.0]), tg.tensor([1.0, 0.0]))),
    ("backward of log at 0", lambda: tg.tensor([0.0], requires_grad=True).log().sum().backward()),
])  # fmt: skip
def test_no_numpy_runtime_warnings(name, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fn()


def test_numpy_error_state_is_left_as_it_was():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tg.tensor([1.0]) / 0
        with pytest.raises(RuntimeWarning):
            np.array([1.0]) / 0  # the user's own numpy still warns


# -- integer powers ------------------------------------------------------------------------------
def test_int_to_negative_int_power_is_pytorchs_error():
    with pytest.raises(RuntimeError, match="pow: Integers to negative integer powers"):
        tg.tensor([2, 3]).long() ** -1
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        torch.tensor([2, 3]) ** -1


def test_int_tensor_exponent_negative_matches_pytorch():
    base, exp = [2, 1, -1, -1, 3, 0], [-1, -3, -3, -2, 2, 2]
    ours = tg.tensor(base).long() ** tg.tensor(exp).long()
    assert ours.tolist() == (torch.tensor(base) ** torch.tensor(exp)).tolist()
    assert (2 ** tg.tensor([-1, 3]).long()).tolist() == (2 ** torch.tensor([-1, 3])).tolist()
