"""``max_pool2d`` and its gradient when the windows tile the input (NOTE [Tiling max-pool on
numpy]): the same bits as the general code (window columns, mask, scatter), and PyTorch's
choice of the first maximum on ties, for kernels that tile exactly, leave rows or columns
over (floor mode), are not square or are one element; the general code keeps padding,
dilation, overlapping windows and ``ceil_mode``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F
from tinygrad_edu.ops import get_op, pooling

TF = torch.nn.functional
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered")


def _general(monkeypatch, fn):
    """``fn()`` with the tiling fast path switched off."""
    with monkeypatch.context() as m:
        m.setattr(pooling, "_tiles", lambda *a, **k: None)
        return fn()


def _inputs(shape, dtype, kind, seed=0):
    rng = np.random.default_rng(seed)
    if kind == "ties":  # after a ReLU: whole windows of 0 (and -0.0), a few of equal maxima
        x = np.maximum(rng.integers(-3, 3, size=shape), 0).astype(dtype)
        x[..., ::3, ::2] *= -1  # -0.0 beside +0.0 in the same windows
    elif kind == "nan":
        x = rng.standard_normal(shape).astype(dtype)
        x.flat[::7] = np.nan
        x.flat[1::11] = np.inf
        x.flat[2::13] = -np.inf
    else:
        x = rng.standard_normal(shape).astype(dtype)
    return x


CASES = [
    ((2, 3, 8, 8), dict(kernel_size=2)),
    ((2, 3, 9, 7), dict(kernel_size=2)),  # a row and a column left over
    ((3, 10, 9), dict(kernel_size=(3, 2))),  # (C, H, W), not square
    ((2, 2, 6, 6), dict(kernel_size=3, stride=3)),
    ((1, 2, 5, 5), dict(kernel_size=1)),
    ((2, 2, 12, 10), dict(kernel_size=(2, 5), stride=(2, 5))),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["plain", "ties", "nan"])
@pytest.mark.parametrize("shape,attrs", CASES)
def test_tiled_max_pool_gives_the_general_codes_bits(monkeypatch, shape, attrs, dtype, kind):
    x = _inputs(shape, dtype, kind)
    fwd, grad = get_op("max_pool2d"), get_op("max_pool2d_grad")
    assert (
        pooling._tiles(
            np, x, *fwd._geometry(x.shape, attrs["kernel_size"], attrs.get("stride"), 0, 1, False)
        )
        is not None
    )
    y = fwd.forward(np, x, **attrs)
    g = np.random.default_rng(1).standard_normal(y.shape).astype(dtype)
    g.flat[::5] *= -1e-40 if dtype == np.float32 else -1e-310  # denormals and signs
    if kind == "nan":
        g.flat[3::17] = np.inf
    gx = grad.forward(np, x, g, **attrs)
    y0 = _general(monkeypatch, lambda: fwd.forward(np, x, **attrs))
    gx0 = _general(monkeypatch, lambda: grad.forward(np, x, g, **attrs))
    assert (
        grad._tiled_grad(x, g, attrs["kernel_size"], attrs.get("stride"), 0, 1, False) is not None
    )
    for new, old in ((y, y0), (gx, gx0)):
        assert new.shape == old.shape and new.dtype == old.dtype
        assert new.tobytes() == old.tobytes()


@pytest.mark.parametrize("shape,attrs", CASES)
def test_tiled_max_pool_gradient_goes_to_torchs_first_maximum(shape, attrs):
    x = _inputs(shape, np.float64, "ties", seed=3)
    g = np.random.default_rng(4).standard_normal(TF.max_pool2d(torch.tensor(x), **attrs).shape)
    xt = torch.tensor(x, requires_grad=True)
    yt = TF.max_pool2d(xt, **attrs)
    yt.backward(torch.tensor(g))
    xs = tg.tensor(x, requires_grad=True)
    ys = F.max_pool2d(xs, **attrs)
    ys.backward(tg.tensor(g))
    np.testing.assert_array_equal(ys.detach().numpy(), yt.detach().numpy())
    np.testing.assert_array_equal(xs.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize(
    "attrs",
    [
        dict(kernel_size=2, padding=1),
        dict(kernel_size=2, stride=1),
        dict(kernel_size=2, dilation=2),
        dict(kernel_size=2, ceil_mode=True),
    ],
)
def test_other_windows_take_the_general_code(monkeypatch, attrs):
    x = _inputs((2, 3, 7, 7), np.float64, "ties")
    k = attrs["kernel_size"]
    geo = get_op("max_pool2d")._geometry(
        x.shape,
        k,
        attrs.get("stride"),
        attrs.get("padding", 0),
        attrs.get("dilation", 1),
        attrs.get("ceil_mode", False),
    )
    assert pooling._tiles(np, x, *geo) is None
    xt = torch.tensor(x, requires_grad=True)
    TF.max_pool2d(xt, **attrs).sum().backward()
    xs = tg.tensor(x, requires_grad=True)
    F.max_pool2d(xs, **attrs).sum().backward()
    np.testing.assert_array_equal(xs.grad.numpy(), xt.grad.numpy())


def test_tiled_gradient_leaves_its_inputs_alone_and_takes_strided_g():
    x = _inputs((2, 3, 8, 8), np.float32, "ties")
    g_big = np.random.default_rng(2).standard_normal((2, 3, 4, 8)).astype(np.float32)
    g = g_big[..., ::2]  # not contiguous
    x0, g0 = x.copy(), g.copy()
    gx = get_op("max_pool2d_grad").forward(np, x, g, kernel_size=2)
    assert x.tobytes() == x0.tobytes() and np.array_equal(g, g0)
    ref = get_op("max_pool2d_grad").forward(np, x, g0, kernel_size=2)
    assert gx.tobytes() == ref.tobytes()
    # each window's gradient lands once: the sums agree exactly (one nonzero per window)
    assert np.array_equal(gx.reshape(2, 3, 4, 2, 4, 2).sum(axis=(3, 5)), g0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32])
def test_relu_gives_the_bits_of_a_maximum_with_zeros(dtype):
    """relu's numpy float path takes a zero scalar instead of an array of zeros: the same bits,
    -0.0 and NaN included (other dtypes keep the array of zeros)."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(100_003) * 3).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x[rng.random(x.size) < 0.2] = -0.0
        x[rng.random(x.size) < 0.05] = np.nan
        x[rng.random(x.size) < 0.05] = -np.inf
    relu = get_op("relu")
    for v in (x, x[1:], x[::3], x.reshape(7, -1)[:, 1:] if x.size % 7 == 0 else x[2:]):
        assert relu.forward(np, v).tobytes() == np.maximum(v, np.zeros_like(v)).tobytes()
    assert relu.forward(np, x).dtype == x.dtype
