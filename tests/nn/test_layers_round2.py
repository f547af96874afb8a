"""Conv3d and 3-D pooling, max_pool indices and max_unpool, AlphaDropout, EmbeddingBag,
Bilinear, CTCLoss, grid_sample/affine_grid, the Transformer's decoder, flatten_parameters and
ChainDataset: each against PyTorch (float64 values and gradients with the same weights copied
in, state_dict keys, errors)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import tinygrad_edu as tg

_rng = np.random.default_rng(0)


def _r(*shape):
    return _rng.standard_normal(shape)


def _both(fn, *arrays, atol=1e-12):
    """``fn(L, *leaves)`` in both libraries: the values and every leaf's gradient agree."""
    out = {}
    for L in (torch, tg):
        leaves = [L.tensor(a, requires_grad=True) for a in arrays]
        y = fn(L, *leaves)
        ys = y if isinstance(y, tuple) else (y,)
        weight = np.random.default_rng(1).standard_normal(tuple(ys[0].shape))
        (ys[0] * L.tensor(weight)).sum().backward()
        out[L] = ([np.asarray(v.detach().tolist()) for v in ys],
                  [None if t.grad is None else t.grad.numpy() for t in leaves])
    (tv, tgr), (gv, ggr) = out[torch], out[tg]
    for a, b in zip(gv, tv):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=atol)
    for a, b in zip(ggr, tgr):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=atol)


def _copy(tmod, gmod):
    """PyTorch's weights into the tinygrad_edu module; their state_dict keys must agree."""
    assert list(gmod.state_dict()) == list(tmod.state_dict())
    gmod.load_state_dict({k: v.detach().numpy() for k, v in tmod.state_dict().items()})


def _errors(fn, exc=Exception):
    """Both libraries reject the call (with the same exception class, when given)."""
    for L in (torch, tg):
        with pytest.raises(exc):
            fn(L)


# -- conv3d and 3-D pooling ------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [{}, dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1)),
                                dict(padding="same"), dict(padding="same", dilation=2),
                                dict(padding="valid", stride=2)], ids=str)
def test_conv3d(kw):
    x, w, b = _r(2, 4, 5, 6, 7), _r(6, 2, 3, 2, 3), _r(6)
    _both(lambda L, x, w, b: L.nn.functional.conv3d(x, w, b, groups=2, **kw), x, w, b)
    _both(lambda L, x, w: L.nn.functional.conv3d(x, w, groups=2, **kw), x[0], w)


def test_conv3d_module():
    torch.manual_seed(0)
    t = torch.nn.Conv3d(3, 4, (2, 3, 3), stride=(1, 2, 1), padding=1, bias=True).double()
    g = tg.nn.Conv3d(3, 4, (2, 3, 3), stride=(1, 2, 1), padding=1).double()
    _copy(t, g)
    assert repr(g) == repr(t)
    x = _r(2, 3, 4, 5, 6)
    xt, xg = torch.tensor(x, requires_grad=True), tg.tensor(x, requires_grad=True)
    yt, yg = t(xt), g(xg)
    np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    yt.sum().backward()
    yg.sum().backward()
    np.testing.assert_allclose(g.weight.grad.numpy(), t.weight.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(g.bias.grad.numpy(), t.bias.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
    tg.manual_seed(0)
    fresh = tg.nn.Conv3d(3, 4, 3)
    bound = 1 / np.sqrt(3 * 27)
    assert np.abs(fresh.weight.detach().numpy()).max() <= bound
    assert fresh.weight.shape == (4, 3, 3, 3, 3)


def test_conv3d_errors():
    _errors(lambda L: L.nn.functional.conv3d(L.zeros(1, 3, 4, 4, 4), L.zeros(2, 2, 2, 2, 2)),
            RuntimeError)
    _errors(lambda L: L.nn.functional.conv3d(L.zeros(1, 2, 4, 4, 4), L.zeros(2, 2, 2, 2, 2),
                                             stride=2, padding="same"), RuntimeError)
    _errors(lambda L: L.nn.Conv3d(2, 2, 2, stride=2, padding="same"), ValueError)
    _errors(lambda L: L.nn.functional.conv3d(L.zeros(1, 2, 1, 4, 4), L.zeros(2, 2, 2, 2, 2)),
            RuntimeError)
    _errors(lambda L: L.nn.Conv3d(3, 4, 2, groups=2), ValueError)
    with pytest.raises(RuntimeError, match="in_channels=3"):
        tg.nn.Conv3d(3, 4, 2)(tg.zeros(1, 2, 4, 4, 4))


_POOL3D = [dict(kernel_size=2), dict(kernel_size=(3, 2, 2), stride=2, padding=1),
           dict(kernel_size=2, ceil_mode=True), dict(kernel_size=(3, 2, 3), stride=2, padding=1,
                                                     ceil_mode=True)]  # fmt: skip


@pytest.mark.parametrize("kw", _POOL3D, ids=str)
def test_max_pool3d(kw):
    x = _rng.permutation(2 * 3 * 5 * 6 * 7).reshape(2, 3, 5, 6, 7) * 0.1  # no ties
    _both(lambda L, x: L.nn.functional.max_pool3d(x, **kw), x)
    _both(lambda L, x: L.nn.functional.max_pool3d(x, dilation=(2, 1, 2), **kw), x)
    _both(lambda L, x: L.nn.MaxPool3d(**kw)(x), x[0])


@pytest.mark.parametrize("kw", _POOL3D, ids=str)
@pytest.mark.parametrize("extra", [{}, dict(count_include_pad=False), dict(divisor_override=5)],
                         ids=str)
def test_avg_pool3d(kw, extra):
    x = _r(2, 3, 5, 6, 7)
    _both(lambda L, x: L.nn.functional.avg_pool3d(x, **kw, **extra), x)
    _both(lambda L, x: L.nn.AvgPool3d(**kw, **extra)(x), x[1])


def test_pool3d_errors():
    _errors(lambda L: L.nn.functional.max_pool3d(L.zeros(1, 1, 4, 4, 4), 2, padding=2), Exception)
    _errors(lambda L: L.nn.functional.avg_pool3d(L.zeros(1, 1, 1, 4, 4), 2), RuntimeError)
    _errors(lambda L: L.nn.functional.avg_pool3d(L.zeros(1, 1, 4, 4, 4), 2, divisor_override=0),
            Exception)
    with pytest.raises(NotImplementedError, match="return_indices"):
        tg.nn.functional.max_pool3d(tg.zeros(1, 1, 2, 2, 2), 2, return_indices=True)


# -- max_pool indices and max_unpool ---------------------------------------------------------------
_POOL2D = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
           dict(kernel_size=(2, 3), stride=1, dilation=2, ceil_mode=True),
           dict(kernel_size=3, stride=2, ceil_mode=True)]  # fmt: skip


@pytest.mark.parametrize("kw", _POOL2D, ids=str)
def test_max_pool2d_return_indices(kw):
    x = _rng.permutation(2 * 3 * 7 * 6).reshape(2, 3, 7, 6) * 0.1
    for single in (False, True):
        xt, xg = torch.tensor(x[0] if single else x), tg.tensor(x[0] if single else x)
        yt, it = torch.nn.functional.max_pool2d(xt, return_indices=True, **kw)
        yg, ig = tg.nn.functional.max_pool2d(xg, return_indices=True, **kw)
        np.testing.assert_array_equal(ig.numpy(), it.numpy())
        assert str(ig.dtype) == "int64" and not ig.requires_grad
        np.testing.assert_allclose(yg.numpy(), yt.numpy())
        yg2, ig2 = tg.nn.MaxPool2d(return_indices=True, **kw)(xg)
        np.testing.assert_array_equal(ig2.numpy(), it.numpy())


def test_max_pool_indices_of_ties_are_the_first_maximum():
    x = np.zeros((1, 1, 4, 4))
    yt, it = torch.nn.functional.max_pool2d(torch.tensor(x), 2, return_indices=True)
    yg, ig = tg.nn.functional.max_pool2d(tg.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(ig.numpy(), it.numpy())


def test_max_pool1d_return_indices():
    x = _rng.permutation(2 * 3 * 9).reshape(2, 3, 9) * 0.1
    for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1)):
        yt, it = torch.nn.functional.max_pool1d(torch.tensor(x), return_indices=True, **kw)
        yg, ig = tg.nn.functional.max_pool1d(tg.tensor(x), return_indices=True, **kw)
        np.testing.assert_array_equal(ig.numpy(), it.numpy())
        yg, ig = tg.nn.MaxPool1d(return_indices=True, **kw)(tg.tensor(x[0]))
        np.testing.assert_array_equal(ig.numpy(), it.numpy()[0])


def _unpool2d(L, x, kw, **options):
    y, i = L.nn.functional.max_pool2d(x, return_indices=True, **kw)
    return L.nn.functional.max_unpool2d(y * 2, i, kw["kernel_size"], kw.get("stride"),
                                        kw.get("padding", 0), **options)


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1)],
                         ids=str)
def test_max_unpool2d(kw):
    x = _rng.permutation(2 * 3 * 7 * 7).reshape(2, 3, 7, 7) * 0.1
    side = 6 if kw['kernel_size'] == 2 else 5  # the size max_unpool2d gives back by default
    _both(lambda L, x: _unpool2d(L, x, kw), x[:, :, :side, :side])
    _both(lambda L, x: _unpool2d(L, x, kw, output_size=(7, 7)), x)
    _both(lambda L, x: _unpool2d(L, x, kw, output_size=(2, 3, 7, 7)), x)
    _both(lambda L, x: _unpool2d(L, x, kw, output_size=(7, 7)), x[0])


def test_max_unpool_modules():
    x = _rng.permutation(2 * 3 * 8 * 8).reshape(2, 3, 8, 8) * 0.1

    def run2(L, x):
        y, i = L.nn.MaxPool2d(2, return_indices=True)(x)
        return L.nn.MaxUnpool2d(2)(y, i, output_size=x.shape)

    def run1(L, x):
        y, i = L.nn.MaxPool1d(2, stride=2, return_indices=True)(x)
        return L.nn.MaxUnpool1d(2, stride=2)(y, i)

    _both(run2, x)
    _both(run1, x[0])
    _both(lambda L, x: L.nn.functional.max_unpool1d(
        *L.nn.functional.max_pool1d(x, 3, return_indices=True), 3, output_size=[8]), x[0])
    assert repr(tg.nn.MaxUnpool2d(2)) == repr(torch.nn.MaxUnpool2d(2))


def test_max_unpool_errors():
    y, i = torch.zeros(1, 1, 2, 2), torch.tensor([[[[0, 1], [2, 3]]]])

    def run(L, **kw):
        return L.nn.functional.max_unpool2d(L.tensor(y.numpy()), L.tensor(i.numpy()), 2, **kw)

    _errors(lambda L: run(L, output_size=(9, 9)), ValueError)
    _errors(lambda L: run(L, output_size=(4, 4, 4)), ValueError)
    _errors(lambda L: L.nn.functional.max_unpool2d(L.zeros(1, 1, 2, 2),
                                                   L.tensor([[[[0, 1], [2, 99]]]]), 2),
            RuntimeError)  # fmt: skip
    with pytest.raises(RuntimeError, match="int64"):
        tg.nn.functional.max_unpool2d(tg.zeros(1, 1, 2, 2), tg.zeros(1, 1, 2, 2), 2)


# -- AlphaDropout ----------------------------------------------------------------------------------
def test_alpha_dropout_keeps_mean_and_variance():
    tg.manual_seed(0)
    torch.manual_seed(0)
    x = np.random.default_rng(2).standard_normal(400_000)
    for p in (0.2, 0.5):
        y = tg.nn.functional.alpha_dropout(tg.tensor(x), p, training=True).numpy()
        yt = torch.nn.functional.alpha_dropout(torch.tensor(x), p, training=True).numpy()
        for out in (y, yt):
            assert abs(out.mean()) < 0.01 and abs(out.var() - 1) < 0.01
        # the two libraries' random masks differ; what a kept and a dropped element become
        # does not: a kept x maps to a*x + b (found from PyTorch's kept elements), a dropped
        # one to a single constant
        values, counts = np.unique(yt, return_counts=True)
        kept_t = yt != values[counts.argmax()]
        a, b = np.polyfit(x[kept_t][:100], yt[kept_t][:100], 1)
        kept = np.isclose(y, a * x + b, rtol=1e-9, atol=1e-12)
        assert abs(kept.mean() - (1 - p)) < 0.01 and abs(kept_t.mean() - (1 - p)) < 0.01
        np.testing.assert_allclose(np.unique(y[~kept]), np.unique(yt[~kept_t]), rtol=1e-12)
        assert np.unique(y[~kept]).size == 1


def test_alpha_dropout_eval_and_edges():
    x = tg.randn(5, 4)
    assert tg.nn.functional.alpha_dropout(x) is x  # training=False by default, as PyTorch
    m = tg.nn.AlphaDropout(0.3)
    assert repr(m) == repr(torch.nn.AlphaDropout(0.3))
    m.eval()
    np.testing.assert_array_equal(m(x).numpy(), x.numpy())
    for L in (torch, tg):
        z = L.nn.functional.alpha_dropout(L.ones(3, 4, dtype=L.float64), 1.0, training=True)
        np.testing.assert_array_equal(z.numpy(), np.zeros((3, 4)))
    leaf = tg.ones(6, requires_grad=True)
    tg.nn.functional.alpha_dropout(leaf, 0.5, training=True).sum().backward()
    assert leaf.grad is not None
    _errors(lambda L: L.nn.AlphaDropout(1.5), ValueError)
    _errors(lambda L: L.nn.functional.alpha_dropout(L.ones(2), -0.1, True), ValueError)


# -- EmbeddingBag ----------------------------------------------------------------------------------
_W = _r(10, 3)
_FLAT = [1, 2, 4, 5, 4, 3, 2, 9]


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode):
    _both(lambda L, w: L.nn.functional.embedding_bag(L.tensor(_FLAT), w, L.tensor([0, 3, 3, 5]),
                                                     mode=mode), _W)
    _both(lambda L, w: L.nn.functional.embedding_bag(L.tensor([[1, 2, 4], [5, 2, 2]]), w,
                                                     mode=mode, padding_idx=2), _W)
    _both(lambda L, w: L.nn.functional.embedding_bag(L.tensor(_FLAT), w,
                                                     L.tensor([0, 3, 3, 5, 8]), mode=mode,
                                                     include_last_offset=True), _W)
    _both(lambda L, w: L.nn.functional.embedding_bag(L.tensor(_FLAT), w, L.tensor([0, 2, 6]),
                                                     mode=mode, padding_idx=-1), _W)


def test_embedding_bag_per_sample_weights_and_module():
    _both(lambda L, w, p: L.nn.functional.embedding_bag(L.tensor(_FLAT), w, L.tensor([0, 3, 5]),
                                                        mode="sum", per_sample_weights=p),
          _W, _r(8))
    for kw in (dict(mode="sum"), dict(mode="max", padding_idx=3), dict()):
        torch.manual_seed(0)
        t = torch.nn.EmbeddingBag(10, 3, **kw).double()
        g = tg.nn.EmbeddingBag(10, 3, **kw).double()
        _copy(t, g)
        assert repr(g) == repr(t)
        idx = np.array([[1, 3, 3], [9, 0, 3]])
        yt, yg = t(torch.tensor(idx)), g(tg.tensor(idx))
        np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
        yt.sum().backward()
        yg.sum().backward()
        np.testing.assert_allclose(g.weight.grad.numpy(), t.weight.grad.numpy(), rtol=1e-12)
    tg.manual_seed(0)
    fresh = tg.nn.EmbeddingBag(5, 2, padding_idx=1)
    np.testing.assert_array_equal(fresh.weight.detach().numpy()[1], [0.0, 0.0])
    pre = tg.nn.EmbeddingBag.from_pretrained(tg.tensor(_W), mode="sum")
    assert not pre.weight.requires_grad


def test_embedding_bag_errors():
    w = _W

    def eb(L, *a, **kw):
        return L.nn.functional.embedding_bag(a[0], L.tensor(w), *a[1:], **kw)

    _errors(lambda L: eb(L, L.tensor([[1, 2]]), L.tensor([0])), ValueError)
    _errors(lambda L: eb(L, L.tensor([1, 2])), ValueError)
    _errors(lambda L: eb(L, L.tensor([1, 2]), L.tensor([0]), mode="median"), ValueError)
    _errors(lambda L: eb(L, L.tensor([1, 2]), L.tensor([0]), mode="mean",
                         per_sample_weights=L.ones(2, dtype=L.float64)), NotImplementedError)
    _errors(lambda L: eb(L, L.tensor([1, 2]), L.tensor([1])), RuntimeError)
    _errors(lambda L: eb(L, L.tensor([[[1]]])), ValueError)
    _errors(lambda L: eb(L, L.tensor([1, 20]), L.tensor([0])), RuntimeError)
    _errors(lambda L: L.nn.EmbeddingBag(4, 2, mode="median")(L.tensor([[1]])), ValueError)


# -- Bilinear --------------------------------------------------------------------------------------
def test_bilinear():
    w, b = _r(5, 3, 4), _r(5)
    _both(lambda L, x1, x2, w, b: L.nn.functional.bilinear(x1, x2, w, b), _r(6, 3), _r(6, 4), w, b)
    _both(lambda L, x1, x2, w: L.nn.functional.bilinear(x1, x2, w), _r(2, 6, 3), _r(2, 6, 4), w)
    torch.manual_seed(0)
    t = torch.nn.Bilinear(3, 4, 5).double()
    g = tg.nn.Bilinear(3, 4, 5).double()
    _copy(t, g)
    assert repr(g) == repr(t)
    x1, x2 = _r(7, 3), _r(7, 4)
    yt = t(torch.tensor(x1), torch.tensor(x2))
    yg = g(tg.tensor(x1), tg.tensor(x2))
    np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    yt.sum().backward()
    yg.sum().backward()
    np.testing.assert_allclose(g.weight.grad.numpy(), t.weight.grad.numpy(), rtol=1e-12)
    tg.manual_seed(0)
    assert np.abs(tg.nn.Bilinear(4, 2, 3).weight.detach().numpy()).max() <= 0.5
    _errors(lambda L: L.nn.functional.bilinear(L.zeros(2, 3), L.zeros(3, 4), L.zeros(5, 3, 4)),
            RuntimeError)
    _errors(lambda L: L.nn.functional.bilinear(L.zeros(2, 2), L.zeros(2, 4), L.zeros(5, 3, 4)),
            RuntimeError)


# -- CTCLoss ---------------------------------------------------------------------------------------
_T, _N, _C = 12, 3, 5
_LOGITS = _r(_T, _N, _C)
_TARGETS = np.array([[1, 2, 2, 3], [4, 1, 0, 0], [3, 3, 3, 1]])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ctc_loss(reduction):
    def fn(L, z, **kw):
        return L.nn.functional.ctc_loss(z.log_softmax(2), L.tensor(_TARGETS),
                                        L.tensor([12, 9, 7]), L.tensor([4, 2, 3]),
                                        reduction=reduction, **kw)

    _both(fn, _LOGITS)
    _both(lambda L, z: L.nn.CTCLoss(reduction=reduction)(
        z.log_softmax(2), L.tensor([1, 2, 2, 3, 4, 1, 3, 3]), (12, 9, 7), (4, 2, 2)), _LOGITS)
    _both(lambda L, z: L.nn.functional.ctc_loss(
        z.log_softmax(2), L.tensor(np.where(_TARGETS == 4, 0, _TARGETS)), [12, 9, 7], [4, 0, 3],
        blank=4, reduction=reduction), _LOGITS)


def test_ctc_loss_gradient_for_log_probs_is_pytorchs():
    # PyTorch's backward for log_probs is exp(log_probs) - posterior: matched for any input
    _both(lambda L, lp: L.nn.functional.ctc_loss(lp, L.tensor(_TARGETS), [12, 9, 7], [4, 2, 3]),
          _LOGITS)
    lp = torch.tensor(_LOGITS).log_softmax(2).numpy()
    _both(lambda L, lp: L.nn.functional.ctc_loss(lp, L.tensor(_TARGETS), [12, 9, 7], [4, 2, 3]),
          lp)


def test_ctc_loss_impossible_targets_and_unbatched():
    def fn(L, z, zero_infinity, reduction="none"):
        return L.nn.functional.ctc_loss(z.log_softmax(2), L.tensor(_TARGETS), [12, 9, 3],
                                        [4, 2, 3], zero_infinity=zero_infinity,
                                        reduction=reduction)

    _both(lambda L, z: fn(L, z, True), _LOGITS)
    _both(lambda L, z: fn(L, z, True, "mean"), _LOGITS)
    for L in (torch, tg):
        assert np.isinf(fn(L, L.tensor(_LOGITS), False).detach().numpy()[2])
    _both(lambda L, z: L.nn.functional.ctc_loss(z.log_softmax(1), L.tensor([1, 2]), L.tensor(12),
                                                L.tensor(2), reduction="none"), _LOGITS[:, 0])


def test_ctc_loss_errors():
    lp = torch.tensor(_LOGITS).log_softmax(2).numpy()

    def run(L, **kw):
        args = dict(targets=L.tensor(_TARGETS), input_lengths=[12, 9, 7],
                    target_lengths=[4, 2, 3])
        args.update(kw)
        return L.nn.functional.ctc_loss(L.tensor(lp), **args)

    _errors(lambda L: run(L, input_lengths=[13, 9, 7]), RuntimeError)
    _errors(lambda L: run(L, target_lengths=[5, 2, 3]), RuntimeError)
    _errors(lambda L: run(L, blank=5), RuntimeError)
    _errors(lambda L: run(L, reduction="avg"), ValueError)
    _errors(lambda L: L.nn.CTCLoss(reduction="avg")(L.tensor(lp), L.tensor(_TARGETS),
                                                    [12, 9, 7], [4, 2, 3]), ValueError)


# -- affine_grid and grid_sample -------------------------------------------------------------------
@pytest.mark.parametrize("align_corners", [True, False])
def test_affine_grid(align_corners):
    theta = _r(2, 2, 3) * 0.5
    _both(lambda L, t: L.nn.functional.affine_grid(t, (2, 3, 4, 5), align_corners=align_corners),
          theta)
    _both(lambda L, t: L.nn.functional.affine_grid(t, [2, 1, 1, 3], align_corners=align_corners),
          theta)


@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("padding_mode", ["zeros", "border"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample(mode, padding_mode, align_corners):
    grid = _rng.uniform(-1.3, 1.3, (2, 4, 3, 2))
    _both(lambda L, x, g: L.nn.functional.grid_sample(x, g, mode=mode, padding_mode=padding_mode,
                                                      align_corners=align_corners),
          _r(2, 3, 5, 6), grid)  # fmt: skip


def test_spatial_transformer_pipeline():
    def fn(L, x, t):
        grid = L.nn.functional.affine_grid(t, (2, 3, 6, 4), align_corners=False)
        return L.nn.functional.grid_sample(x, grid, align_corners=False)

    _both(fn, _r(2, 3, 5, 6), _r(2, 2, 3) * 0.7)


def test_grid_sample_and_affine_grid_errors_and_warning():
    _errors(lambda L: L.nn.functional.grid_sample(L.zeros(1, 1, 2, 2), L.zeros(1, 1, 1, 2),
                                                  mode="cubic", align_corners=True), ValueError)
    _errors(lambda L: L.nn.functional.grid_sample(L.zeros(1, 1, 2, 2), L.zeros(1, 1, 1, 2),
                                                  padding_mode="wrap", align_corners=True),
            ValueError)  # fmt: skip
    _errors(lambda L: L.nn.functional.affine_grid(L.zeros(1, 3, 3), (1, 1, 2, 2),
                                                  align_corners=True), ValueError)
    _errors(lambda L: L.nn.functional.affine_grid(L.zeros(2, 2, 3), (1, 1, 2, 2),
                                                  align_corners=True), RuntimeError)
    with pytest.raises(NotImplementedError, match="reflection"):
        tg.nn.functional.grid_sample(tg.zeros(1, 1, 2, 2), tg.zeros(1, 1, 1, 2),
                                     padding_mode="reflection", align_corners=True)
    for L in (torch, tg):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            L.nn.functional.affine_grid(L.zeros(1, 2, 3), (1, 1, 2, 2))
        assert any("align_corners" in str(w.message) for w in seen)


# -- Transformer -----------------------------------------------------------------------------------
_KW = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16,
           dropout=0.0)


@pytest.mark.parametrize("extra", [{}, dict(batch_first=True, norm_first=True,
                                            activation="gelu")], ids=str)
def test_transformer_matches_pytorch(extra):
    torch.manual_seed(0)
    t = torch.nn.Transformer(**_KW, **extra).double()
    g = tg.nn.Transformer(**_KW, **extra).double()
    _copy(t, g)
    src, tgt = _r(5, 3, 8), _r(4, 3, 8)
    pad = np.zeros((3, 5), dtype=bool)
    pad[1, 3:] = True
    out = {}
    for L, m in ((torch, t), (tg, g)):
        s, u = L.tensor(src, requires_grad=True), L.tensor(tgt, requires_grad=True)
        if extra.get("batch_first"):
            s, u = s.transpose(0, 1), u.transpose(0, 1)
        mask = L.nn.Transformer.generate_square_subsequent_mask(4, dtype=L.float64)
        y = m(s, u, tgt_mask=mask, src_key_padding_mask=L.tensor(pad),
              memory_key_padding_mask=L.tensor(pad))
        (y * L.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)))).sum().backward()
        grads = {k: p.grad.numpy() for k, p in m.named_parameters()}
        out[L] = (y.detach().numpy(), grads)
    np.testing.assert_allclose(out[tg][0], out[torch][0], rtol=1e-9, atol=1e-11)
    for k, v in out[torch][1].items():
        np.testing.assert_allclose(out[tg][1][k], v, rtol=1e-8, atol=1e-11, err_msg=k)


def test_decoder_layer_and_decoder_alone():
    torch.manual_seed(0)
    tl = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True).double()
    td = torch.nn.TransformerDecoder(tl, 2, norm=torch.nn.LayerNorm(8).double())
    gl = tg.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True).double()
    gd = tg.nn.TransformerDecoder(gl, 2, norm=tg.nn.LayerNorm(8).double())
    for tm, gm in ((tl, gl), (td, gd)):
        _copy(tm, gm)
        tgt, mem = _r(2, 4, 8), _r(2, 6, 8)
        causal = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
        yt = tm(torch.tensor(tgt), torch.tensor(mem), tgt_mask=causal, tgt_is_causal=True)
        yg = gm(tg.tensor(tgt), tg.tensor(mem),
                tgt_mask=tg.nn.Transformer.generate_square_subsequent_mask(4, dtype="float64"),
                tgt_is_causal=True)  # fmt: skip
        np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), rtol=1e-9,
                                   atol=1e-11)  # fmt: skip
    mask = tg.nn.Transformer.generate_square_subsequent_mask(3)
    np.testing.assert_array_equal(mask.numpy(),
                                  torch.nn.Transformer.generate_square_subsequent_mask(3).numpy())


def test_transformer_errors():
    _errors(lambda L: L.nn.Transformer(**_KW)(L.zeros(5, 3, 8), L.zeros(4, 2, 8)), RuntimeError)
    _errors(lambda L: L.nn.Transformer(**_KW)(L.zeros(5, 3, 8), L.zeros(4, 3, 6)), RuntimeError)
    _errors(lambda L: L.nn.TransformerDecoderLayer(8, 2, activation="tanh"), RuntimeError)


def _tutorial_model(L):
    """PyTorch's word-language-model example: nn.Transformer subclassed, encoder only."""
    nn, F = L.nn, L.nn.functional

    class TransformerModel(nn.Transformer):
        def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
            super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid,
                             num_encoder_layers=nlayers)
            self.model_type = "Transformer"
            self.src_mask = None
            self.input_emb = nn.Embedding(ntoken, ninp)
            self.ninp = ninp
            self.decoder = nn.Linear(ninp, ntoken)

        def forward(self, src):
            mask = nn.Transformer.generate_square_subsequent_mask(len(src), dtype=L.float64)
            src = self.input_emb(src) * (self.ninp ** 0.5)
            output = self.encoder(src, mask=mask)
            return F.log_softmax(self.decoder(output), dim=-1)

    return TransformerModel(20, 8, 2, 16, 2, dropout=0.0)


def test_transformer_subclass_using_only_the_encoder():
    torch.manual_seed(0)
    t, g = _tutorial_model(torch).double(), _tutorial_model(tg).double()
    t.eval()
    g.eval()
    _copy(t, g)
    src = np.array([[1, 2], [3, 4], [5, 19], [0, 7]])
    yt, yg = t(torch.tensor(src)), g(tg.tensor(src))
    np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), rtol=1e-9, atol=1e-11)
    yg.sum().backward()
    assert g.input_emb.weight.grad is not None


# -- flatten_parameters, ChainDataset --------------------------------------------------------------
@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_flatten_parameters_is_a_no_op(kind):
    torch.manual_seed(0)
    t = getattr(torch.nn, kind)(3, 4, 2).double()
    g = getattr(tg.nn, kind)(3, 4, 2).double()
    _copy(t, g)
    before = {k: v.numpy().copy() for k, v in g.state_dict().items()}
    assert g.flatten_parameters() is None and t.flatten_parameters() is None
    for k, v in g.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k])
    x = _r(5, 2, 3)
    np.testing.assert_allclose(g(tg.tensor(x))[0].detach().numpy(),
                               t(torch.tensor(x))[0].detach().numpy(), rtol=1e-10)


class _Stream:
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def __iter__(self):
        return iter(range(self.lo, self.hi))

    def __len__(self):
        return self.hi - self.lo


def _datasets(data):
    class Stream(_Stream, data.IterableDataset):
        pass

    class Map(data.Dataset):
        def __getitem__(self, i):
            return i * 10

        def __len__(self):
            return 3

    return Stream, Map


@pytest.mark.parametrize("L", [torch, tg], ids=["torch", "tg"])
def test_iterable_dataset_plus_is_a_chain(L):
    data = L.utils.data
    Stream, Map = _datasets(data)
    chain = Stream(0, 3) + Stream(10, 12)
    assert type(chain).__name__ == "ChainDataset" and isinstance(chain, data.ChainDataset)
    assert list(chain) == [0, 1, 2, 10, 11] and len(chain) == 5
    both = data.ChainDataset([Stream(0, 2), Stream(5, 6)]) + Stream(7, 8)
    assert list(both) == [0, 1, 5, 7]
    loader = data.DataLoader(chain, batch_size=2)
    assert [b.tolist() for b in loader] == [[0, 1], [2, 10], [11]]
    bad = Stream(0, 1) + Map()
    with pytest.raises(AssertionError):
        list(bad)
    with pytest.raises(AssertionError):
        len(bad)
    cat = Map() + Map()
    assert isinstance(cat, data.ConcatDataset) and [cat[i] for i in range(6)] == [0, 10, 20] * 2
