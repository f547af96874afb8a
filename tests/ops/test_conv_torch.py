"""The layer ops against PyTorch in float64: values, first derivatives and second derivatives
(eager engine, ``create_graph=True``), and the symbolic engine against the eager one, for every
parameter combination in the tables (stride, padding, dilation, groups, odd sizes, ceil mode,
count_include_pad, padding modes, affine or not, training or evaluation); plus the errors.
Central differences for the same ops run in the shared table (``tests/opinfo/grad_layers.py``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F
import tinygrad_edu.symbolic as S
from tests.ops.layer_configs import CONV_CONFIGS, POOL_CONFIGS
from tinygrad_edu.ops import ShapeError

TF = torch.nn.functional

ATOL = 1e-9


def _close(ours, theirs, what):
    ours = ours.detach().numpy() if isinstance(ours, tg.Tensor) else np.asarray(ours)
    theirs = theirs.detach().numpy()
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape} vs torch {theirs.shape}"
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=ATOL, err_msg=what)


def compare(ours_fn, torch_fn, arrays, second=True, seed=0):
    """Values, gradients (for a random output gradient) and second derivatives (the gradient
    of <first gradients, random v>) of ``ours_fn`` and ``torch_fn`` at ``arrays``."""
    rng = np.random.default_rng(seed)
    xs = [tg.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    y, yt = ours_fn(*xs), torch_fn(*ts)
    _close(y, yt, "value")
    g = rng.standard_normal(y.shape)
    grads = tg.grad(y, xs, grad_outputs=tg.tensor(g), create_graph=second, allow_unused=True)
    tgrads = torch.autograd.grad(yt, ts, torch.tensor(g), create_graph=second, allow_unused=True)
    for i, (a, b) in enumerate(zip(grads, tgrads)):
        if b is None:
            assert a is None or not np.any(a.numpy()), f"gradient {i}: torch has none"
            continue
        _close(a, b, f"gradient {i}")
    if not second:
        return
    vs = [rng.standard_normal(a.shape) for a in arrays]
    inner = [(a * tg.tensor(v)).sum() for a, v in zip(grads, vs) if a is not None]
    tinner = [(b * torch.tensor(v)).sum() for b, v in zip(tgrads, vs) if b is not None]
    s, st = sum(inner), sum(tinner)
    t_second = (
        torch.autograd.grad(st, ts, allow_unused=True) if st.requires_grad else [None] * len(ts)
    )
    ours_second = (
        tg.grad(s, xs, allow_unused=True)
        if isinstance(s, tg.Tensor) and s.requires_grad
        else [None] * len(xs)
    )
    for i, (a, b) in enumerate(zip(ours_second, t_second)):
        a = np.zeros(arrays[i].shape) if a is None else a.numpy()
        b = torch.zeros(arrays[i].shape, dtype=torch.float64) if b is None else b
        _close(a, b, f"second derivative {i}")


def _rand(rng, *shape):
    return rng.standard_normal(shape)


# -- conv2d ---------------------------------------------------------------------------------
@pytest.mark.parametrize("cfg", CONV_CONFIGS + [
    (2, 4, 6, 5, 4, (1, 1), (1, 1), (0, 0), (1, 1), 2),
    (1, 3, 7, 7, 6, (3, 3), (3, 2), (2, 1), (2, 1), 3),
    (2, 2, 5, 6, 4, (3, 3), (2, 2), (1, 1), (1, 1), 1),
], ids=str)  # fmt: skip
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d_matches_torch(cfg, bias):
    N, C, H, W, O, k, s, p, d, g = cfg
    rng = np.random.default_rng(hash(cfg) % 2**32)
    arrays = [_rand(rng, N, C, H, W), _rand(rng, O, C // g, *k)]
    if bias:
        arrays.append(_rand(rng, O))
    compare(lambda *a: F.conv2d(*a, stride=s, padding=p, dilation=d, groups=g),
            lambda *a: TF.conv2d(*a, stride=s, padding=p, dilation=d, groups=g), arrays)


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("padding", ["same", "valid", 0, 2, (1, 0)])
@pytest.mark.parametrize("kernel", [(3, 3), (2, 4)])
def test_conv2d_string_and_int_padding(padding, kernel):
    rng = np.random.default_rng(1)
    arrays = [_rand(rng, 2, 3, 5, 6), _rand(rng, 4, 3, *kernel), _rand(rng, 4)]
    compare(lambda *a: F.conv2d(*a, padding=padding),
            lambda *a: TF.conv2d(*a, padding=padding), arrays, second=False)


def test_conv2d_unbatched_input():
    rng = np.random.default_rng(2)
    compare(lambda x, w: F.conv2d(x, w, padding=1), lambda x, w: TF.conv2d(x, w, padding=1),
            [_rand(rng, 3, 5, 4), _rand(rng, 2, 3, 3, 3)], second=False)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_conv2d_module_padding_modes(mode):
    tg.manual_seed(3)
    ours = tg.nn.Conv2d(2, 3, 3, padding=1, padding_mode=mode, dtype="float64")
    theirs = torch.nn.Conv2d(2, 3, 3, padding=1, padding_mode=mode).double()
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(ours.weight.detach().numpy()))
        theirs.bias.copy_(torch.tensor(ours.bias.detach().numpy()))
    x = np.random.default_rng(4).standard_normal((2, 2, 5, 4))
    compare(ours, theirs, [x], second=False)


# -- pooling --------------------------------------------------------------------------------
_MORE_POOLS = [
    ((2, 3, 7, 8), (3, 3), (2, 2), (1, 1), (2, 2), True),
    ((1, 2, 4, 4), (4, 4), None, (2, 2), (1, 1), False),
    ((1, 1, 5, 7), (1, 3), (1, 3), (0, 1), (1, 1), True),
]


@pytest.mark.parametrize("cfg", POOL_CONFIGS + _MORE_POOLS, ids=str)
def test_max_pool2d_matches_torch(cfg):
    shape, k, s, p, d, ceil = cfg
    x = np.random.default_rng(5).permutation(np.prod(shape)).reshape(shape) * 0.1
    compare(lambda x: F.max_pool2d(x, k, s, p, d, ceil), lambda x: TF.max_pool2d(x, k, s, p, d,
                                                                                  ceil), [x])


def test_max_pool2d_ties_go_to_the_first_maximum_like_torch():
    # after a ReLU many windows hold only zeros: the gradient must go to one element
    x = np.maximum(np.random.default_rng(6).standard_normal((2, 3, 6, 6)), 0)
    x[0, 0, :2, :2] = 1.5  # a window of equal maxima
    compare(lambda x: F.max_pool2d(x, 2), lambda x: TF.max_pool2d(x, 2), [x])
    compare(lambda x: F.max_pool2d(x, 3, 1, 1), lambda x: TF.max_pool2d(x, 3, 1, 1), [x])


@pytest.mark.parametrize("cfg", POOL_CONFIGS + _MORE_POOLS, ids=str)
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool2d_matches_torch(cfg, count_include_pad):
    shape, k, s, p, _, ceil = cfg
    x = np.random.default_rng(7).standard_normal(shape)
    compare(lambda x: F.avg_pool2d(x, k, s, p, ceil, count_include_pad),
            lambda x: TF.avg_pool2d(x, k, s, p, ceil, count_include_pad), [x])


def test_avg_pool2d_divisor_override():
    x = np.random.default_rng(8).standard_normal((2, 2, 5, 5))
    compare(lambda x: F.avg_pool2d(x, 3, 2, 1, divisor_override=4),
            lambda x: TF.avg_pool2d(x, 3, 2, 1, divisor_override=4), [x])


@pytest.mark.parametrize("out", [1, (2, 3), (None, 1)])
def test_adaptive_avg_pool2d(out):
    x = np.random.default_rng(9).standard_normal((2, 3, 4, 6))
    compare(lambda x: F.adaptive_avg_pool2d(x, out), lambda x: TF.adaptive_avg_pool2d(x, out),
            [x], second=False)


# -- pad ------------------------------------------------------------------------------------
@pytest.mark.parametrize("pads", [(1, 2), (0, 1, 2, 0), (-1, 2, 1, -2), (1, 1, 1, 1, 1, 1)])
def test_constant_pad_matches_torch(pads):
    x = np.random.default_rng(10).standard_normal((2, 3, 4, 5))
    compare(lambda x: F.pad(x, pads, value=0.5), lambda x: TF.pad(x, pads, value=0.5), [x])


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("pads", [(1, 2), (2, 1, 0, 3)])
def test_other_pad_modes_match_torch(mode, pads):
    shape = (2, 3, 4, 5) if len(pads) == 4 else (2, 3, 5)  # the ranks torch accepts
    x = np.random.default_rng(11).standard_normal(shape)
    compare(lambda x: F.pad(x, pads, mode=mode), lambda x: TF.pad(x, pads, mode=mode), [x])


# -- normalisation --------------------------------------------------------------------------
@pytest.mark.parametrize("shape,norm", [((3, 5), (5,)), ((2, 3, 4), (3, 4)), ((2, 1, 3), (3,))])
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
def test_layer_norm_matches_torch(shape, norm, affine):
    rng = np.random.default_rng(12)
    arrays = [_rand(rng, *shape)]
    if affine != "none":
        arrays.append(_rand(rng, *norm))
    if affine == "both":
        arrays.append(_rand(rng, *norm))
    compare(lambda x, *wb: F.layer_norm(x, norm, *wb, eps=1e-3),
            lambda x, *wb: TF.layer_norm(x, norm, *wb, eps=1e-3), arrays)


@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 2), (2, 3, 3, 2)])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_matches_torch(shape, training, affine):
    rng = np.random.default_rng(13)
    C = shape[1]
    stats = (rng.standard_normal(C), rng.uniform(0.5, 2, C))
    arrays = [_rand(rng, *shape) * 2 + 1]
    if affine:
        arrays += [_rand(rng, C), _rand(rng, C)]

    def ours(x, *wb):
        rm, rv = (tg.tensor(s.copy()) for s in stats)
        return F.batch_norm(x, rm, rv, *wb, training=training, eps=1e-3)

    def theirs(x, *wb):
        rm, rv = (torch.tensor(s.copy()) for s in stats)
        return TF.batch_norm(x, rm, rv, *wb, training=training, eps=1e-3)

    compare(ours, theirs, arrays)


@pytest.mark.parametrize("momentum", [0.1, 0.5])
def test_batch_norm_running_statistics_follow_torch(momentum):
    rng = np.random.default_rng(14)
    rm, rv = tg.zeros(3, dtype="float64"), tg.ones(3, dtype="float64")
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    for step in range(3):
        x = rng.standard_normal((4, 3, 2, 2)) * (step + 1) + step
        F.batch_norm(tg.tensor(x), rm, rv, training=True, momentum=momentum)
        TF.batch_norm(torch.tensor(x), trm, trv, training=True, momentum=momentum)
        np.testing.assert_allclose(rm.numpy(), trm.numpy(), rtol=1e-12)
        np.testing.assert_allclose(rv.numpy(), trv.numpy(), rtol=1e-12)  # unbiased variance
    # evaluation reads them and leaves them alone
    before = rv.numpy().copy()
    F.batch_norm(tg.tensor(x), rm, rv, training=False)
    np.testing.assert_array_equal(rv.numpy(), before)


# -- embedding ------------------------------------------------------------------------------
@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding_matches_torch(padding_idx):
    idx = np.array([[0, 2, 2], [4, 1, 4]])
    w = np.random.default_rng(15).standard_normal((5, 3))
    compare(lambda w: F.embedding(tg.tensor(idx), w, padding_idx=padding_idx),
            lambda w: TF.embedding(torch.tensor(idx), w, padding_idx=padding_idx), [w])


def test_embedding_max_norm_renormalises_rows_like_torch():
    idx = np.array([1, 3, 1])
    w = np.random.default_rng(16).standard_normal((5, 4)) * 3
    ours, theirs = tg.tensor(w.copy()), torch.tensor(w.copy())
    y = F.embedding(tg.tensor(idx), ours, max_norm=1.5)
    yt = TF.embedding(torch.tensor(idx), theirs, max_norm=1.5)
    _close(y, yt, "value")
    _close(ours, theirs, "renormalised table")


# -- the symbolic engine agrees with the eager one --------------------------------------------
def _both(build_eager, build_symbolic, arrays, seed=0):
    """Value and gradients of sum(out * p) in both engines."""
    p = np.random.default_rng(seed).standard_normal
    xs = [tg.tensor(a, requires_grad=True) for a in arrays]
    y = build_eager(*xs)
    proj = p(y.shape)
    grads = tg.grad((y * tg.tensor(proj)).sum(), xs)
    vs = [S.Variable(f"v{i}", shape=a.shape, dtype="float64") for i, a in enumerate(arrays)]
    ys = build_symbolic(*vs)
    sgrads = S.gradients((ys * S.constant(proj)).sum(), vs)
    out = S.Executor([ys, *sgrads]).run(dict(zip(vs, arrays)))
    np.testing.assert_allclose(out[0], y.detach().numpy(), rtol=1e-12, atol=1e-12)
    for a, b in zip(out[1:], grads):
        np.testing.assert_allclose(a, b.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cfg", CONV_CONFIGS, ids=str)
def test_symbolic_conv_net_agrees_with_eager(cfg):
    N, C, H, W, O, k, s, p, d, g = cfg
    rng = np.random.default_rng(17)
    arrays = [_rand(rng, N, C, H, W), _rand(rng, O, C // g, *k), _rand(rng, O), _rand(rng, O),
              _rand(rng, O)]  # fmt: skip
    kw = dict(stride=s, padding=p, dilation=d, groups=g)

    def eager(x, w, b, gamma, beta):
        h = F.pad(F.conv2d(x, w, b, **kw).relu(), (1, 1, 1, 1))
        h = F.batch_norm(h, None, None, gamma, beta, training=True)
        return F.avg_pool2d(F.max_pool2d(h, 2, 1), 2, ceil_mode=True)

    def symbolic(x, w, b, gamma, beta):
        h = S.pad(S.conv2d(x, w, b, **kw).relu(), (1, 1, 1, 1))
        h = S.batch_norm(h, None, None, gamma, beta, training=True)
        return S.avg_pool2d(S.max_pool2d(h, 2, 1), 2, ceil_mode=True)

    _both(eager, symbolic, arrays)


def test_symbolic_layer_norm_and_embedding_agree_with_eager():
    rng = np.random.default_rng(18)
    idx = np.array([[1, 0, 3], [3, 3, 2]])

    def eager(w, gamma, beta):
        return F.layer_norm(F.embedding(tg.tensor(idx), w), (4,), gamma, beta).tanh()

    def symbolic(w, gamma, beta):
        return S.layer_norm(S.embedding(idx, w), (4,), gamma, beta).tanh()

    _both(eager, symbolic, [_rand(rng, 5, 4), _rand(rng, 4), _rand(rng, 4)])


def test_symbolic_second_derivative_of_a_conv_layer():
    rng = np.random.default_rng(19)
    x, w = _rand(rng, 1, 2, 4, 4), _rand(rng, 3, 2, 3, 3)
    X, Wv = S.Variable("x", shape=x.shape, dtype="float64"), S.Variable("w", dtype="float64")
    y = (S.conv2d(X, Wv, padding=1).tanh() ** 2).sum()
    (dx,) = S.gradients(y, [X])
    (dxw,) = S.gradients((dx * S.constant(x)).sum(), [Wv])
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    (tdx,) = torch.autograd.grad((TF.conv2d(tx, tw, padding=1).tanh() ** 2).sum(), tx,
                                 create_graph=True)  # fmt: skip
    (tdxw,) = torch.autograd.grad((tdx * torch.tensor(x)).sum(), tw)
    (got,) = S.Executor([dxw]).run({X: x, Wv: w})
    np.testing.assert_allclose(got, tdxw.numpy(), rtol=1e-10, atol=1e-10)


# -- errors ---------------------------------------------------------------------------------
def test_kernel_bigger_than_padded_input_is_a_clear_error_in_both_engines():
    x, w = tg.zeros(2, 3, 4, 4), tg.zeros(8, 3, 5, 5)
    with pytest.raises(ShapeError, match=r"conv2d: the kernel 5×5.*bigger than the padded input "
                                         r"4×4 \(input \(2, 3, 4, 4\)"):  # fmt: skip
        F.conv2d(x, w)
    F.conv2d(x, w, padding=1)  # fits once padded
    with pytest.raises(ShapeError, match=r"dilated to 7×7 .*bigger than the padded input 6×6"):
        F.conv2d(x, tg.zeros(8, 3, 3, 3), padding=1, dilation=3)
    with pytest.raises(ShapeError, match=r"conv2d: .*weight \(8, 3, 5, 5\)"):
        S.conv2d(S.Variable("x", shape=(2, 3, 4, 4)), S.Variable("w", shape=(8, 3, 5, 5)))
    with pytest.raises(ShapeError, match=r"max_pool2d: the window 5×5 is bigger than the padded "
                                         r"input 4×4"):  # fmt: skip
        F.max_pool2d(x, 5)
    with pytest.raises(ShapeError, match="avg_pool2d: the window"):
        S.avg_pool2d(S.Variable("x", shape=(1, 1, 2, 2)), 3)


@pytest.mark.parametrize("call,match", [
    (lambda: F.conv2d(tg.zeros(2, 3, 5, 5), tg.zeros(4, 2, 3, 3)),
     r"input \(2, 3, 5, 5\) has 3 channels but the weight \(4, 2, 3, 3\)"),
    (lambda: F.conv2d(tg.zeros(2, 4, 5, 5), tg.zeros(3, 2, 3, 3), groups=2),
     "3 output channels must divide into 2 groups"),
    (lambda: F.conv2d(tg.zeros(2, 3, 5, 5), tg.zeros(4, 3, 3, 3), tg.zeros(3)),
     r"bias has shape \(3,\).*\(4,\)"),
    (lambda: F.conv2d(tg.zeros(5, 5), tg.zeros(4, 3, 3, 3)), r"\(N, C, H, W\) or \(C, H, W\)"),
    (lambda: F.conv2d(tg.zeros(1, 3, 5, 5), tg.zeros(4, 3, 3, 3), stride=0), "stride must be"),
    (lambda: F.conv2d(tg.zeros(1, 3, 5, 5), tg.zeros(4, 3, 3, 3), padding=-1),
     "padding must be"),
    (lambda: F.conv2d(tg.zeros(1, 3, 5, 5), tg.zeros(4, 3, 3, 3), stride=2, padding="same"),
     "not supported for strided"),
    (lambda: F.max_pool2d(tg.zeros(1, 1, 4, 4), 2, padding=2), "at most half the kernel"),
    (lambda: F.max_pool2d(tg.zeros(4, 4), 2), r"\(N, C, H, W\) or \(C, H, W\)"),
    (lambda: F.pad(tg.zeros(2, 3), (1, 2, 3)), "even length"),
    (lambda: F.pad(tg.zeros(2, 3), (1, 1, 1, 1, 1, 1)), "pads 3 axes"),
    (lambda: F.pad(tg.zeros(2, 3), (-2, -2)), "negative size"),
    (lambda: F.pad(tg.zeros(1, 2, 3), (3, 0), mode="reflect"), "needs an axis longer"),
    (lambda: F.layer_norm(tg.zeros(2, 3), (4,)), r"normalized_shape \(4,\) must equal"),
    (lambda: F.batch_norm(tg.zeros(2, 3), tg.zeros(4), tg.ones(4)), r"shape \(3,\)"),
    (lambda: F.batch_norm(tg.zeros(2, 3), None, None), "evaluation mode"),
    (lambda: F.batch_norm(tg.zeros(1, 3), None, None, training=True), "more than 1 value"),
    (lambda: F.embedding(tg.tensor([0, 5], dtype="int64"), tg.zeros(5, 2)),
     "index 5 is out of range for a table of 5 rows"),
    (lambda: F.embedding(tg.tensor([-1], dtype="int64"), tg.zeros(5, 2)), "index -1"),
    (lambda: F.embedding(tg.tensor([0.0]), tg.zeros(5, 2)), "indices must be integers"),
    (lambda: F.conv2d(tg.zeros(1, 1, 3, 3), tg.zeros(1, 1, 0, 2)), "kernel_size must be"),
    (lambda: F.conv2d(tg.zeros(1, 2, 3, 3), tg.zeros(1, 2, 2, 2), groups=0), "groups must be"),
    (lambda: F.pad(tg.zeros(2, 3), (1.5, 1)), "tuple of ints"),
    (lambda: F.conv2d([[[[1.0]]]], tg.ones(1, 1, 1, 1)), "input must be a tensor"),
])  # fmt: skip
def test_bad_arguments_are_clear_errors(call, match):
    with pytest.raises((ValueError, TypeError, IndexError, ShapeError), match=match):
        call()


def test_an_input_changed_in_place_after_conv2d_saved_it_is_an_error():
    x = tg.randn(1, 1, 4, 4, requires_grad=True)
    y = F.conv2d(x, tg.randn(1, 1, 2, 2))
    with tg.no_grad():
        x.mul_(0)
    with pytest.raises(RuntimeError, match="in-place"):
        y.sum().backward()


def test_empty_batch_like_torch():
    x = tg.randn(0, 3, 5, 5, requires_grad=True)
    w = tg.randn(4, 3, 3, 3, requires_grad=True)
    y = F.max_pool2d(F.conv2d(x, w, padding=1), 2)
    assert y.shape == (0, 4, 2, 2)
    y.sum().backward()
    assert x.grad.shape == x.shape and not w.grad.numpy().any()


def test_errors_do_not_corrupt_state():
    rm, rv = tg.zeros(3), tg.ones(3)
    with pytest.raises(ShapeError):
        F.batch_norm(tg.zeros(2, 4), rm, rv, training=True)
    assert rm._version == 0 and rv._version == 0
    np.testing.assert_array_equal(rv.numpy(), np.ones(3))
