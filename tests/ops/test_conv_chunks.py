"""``conv2d`` and ``conv2d_weight_grad`` on float32 numpy arrays build their columns a few
images or channels at a time (NOTE [im2col in cache-sized chunks] in ``ops/conv.py``). The
columns are copies, so they must be im2col's exactly; each chunk's product has the whole
product's inner dimension in the same order, so the results must agree with the plain path
(im2col of the whole batch and one matrix product, which the ops still run on other namespaces:
here a stand-in for numpy that is not the module itself) to the last bit or so (BLAS may pick
another kernel for a smaller product). Chunk budgets from one item per chunk to everything at
once; strides, dilations, paddings, groups, a bias, 1x1 kernels and 1x1 outputs (where a chunk
of one would be a matrix-vector product). float64 builds its columns the same way but in one
chunk: the plain path's bits. So does the stride-1 input gradient's fused first add, in both
dtypes. The layers against PyTorch with chunks forced small are below; ``test_conv_torch.py``
and ``test_cnn_fast_paths.py`` compare the float64 path."""

from __future__ import annotations

import types

import numpy as np
import pytest
import torch

import tinygrad_edu.ops.conv as conv
from tinygrad_edu.ops import get_op


class _PlainNumpy(types.SimpleNamespace):
    """numpy under another name: the ops see a namespace that is not the numpy module, so they
    take their plain path (as on a GPU's namespace), with numpy's own functions."""

    __name__ = "numpy"

    def __getattr__(self, name):
        return getattr(np, name)


PLAIN = _PlainNumpy()

# (N, C, H, W, O, kernel, stride, padding, dilation, groups)
CASES = [
    (50, 16, 14, 14, 32, (5, 5), (1, 1), (2, 2), (1, 1), 1),  # the ConvNet's second layer
    (7, 1, 28, 28, 16, (5, 5), (1, 1), (2, 2), (1, 1), 1),  # its first, an odd batch
    (5, 6, 9, 8, 4, (3, 2), (2, 1), (1, 0), (1, 2), 2),
    (3, 4, 9, 10, 5, (3, 3), (2, 3), (1, 2), (2, 1), 1),  # strides in both directions
    (3, 5, 7, 7, 3, (1, 1), (1, 1), (0, 0), (1, 1), 1),  # 1x1 kernel, an odd channel count
    (4, 3, 3, 3, 2, (3, 3), (1, 1), (0, 0), (1, 1), 1),  # 1x1 output: one column per image
    (3, 4, 6, 6, 1, (3, 3), (1, 1), (1, 1), (1, 1), 1),  # one output channel
    (2, 6, 5, 6, 6, (2, 2), (1, 1), (0, 1), (2, 1), 6),  # depthwise
]
BUDGETS = [1, 40_000, 1 << 40]  # one item per chunk, a few, everything at once


def _arrays(case, dtype, seed=0):
    N, C, H, W, O, k, s, p, d, groups = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, C, H, W)).astype(dtype)
    w = rng.standard_normal((O, C // groups, *k)).astype(dtype)
    b = rng.standard_normal(O).astype(dtype)
    attrs = dict(stride=s, padding=p, dilation=d, groups=groups)
    out = get_op("conv2d").forward(PLAIN, x, w, **attrs)
    g = rng.standard_normal(out.shape).astype(dtype)
    return x, w, b, g, attrs


def _same_bits(ours, plain, what):
    assert ours.shape == plain.shape and ours.dtype == plain.dtype, what
    assert ours.flags.c_contiguous, what
    assert ours.tobytes() == plain.tobytes(), f"{what}: differs from the plain path"


def _agree(ours, plain, what):
    """float32 products of the same dot products: equal up to a rounding or two of the largest
    terms (an index mistake would be off by whole terms)."""
    assert ours.shape == plain.shape and ours.dtype == plain.dtype, what
    assert ours.flags.c_contiguous, what
    scale = max(1.0, float(np.abs(plain).max()))
    np.testing.assert_allclose(ours, plain, rtol=0, atol=4e-6 * scale, err_msg=what)


@pytest.mark.parametrize("case", CASES)
def test_columns_are_im2col_exactly(case):
    N, C, H, W, O, k, s, p, d, groups = case
    x = _arrays(case, np.float32)[0]
    oh, ow = conv.conv_output_hw("conv2d", x.shape, k, s, p, d)
    want = conv.im2col(np, x, k, s, p, d).reshape(C * k[0] * k[1], -1)
    _same_bits(conv._columns(conv._padded_cn(x, p), k, s, d, oh, ow), want, "columns")
    c0 = 1 if C > 1 else 0
    xcn = conv._padded_cn(x, p)[c0:, 1:]  # a view: some channels of some images
    part = conv.im2col(np, x[1:, c0:], k, s, p, d).reshape((C - c0) * k[0] * k[1], -1)
    _same_bits(conv._columns(xcn, k, s, d, oh, ow), part, "columns of a view")


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("case", CASES)
def test_chunked_products_agree_with_the_plain_path(case, budget, monkeypatch):
    monkeypatch.setattr(conv, "_CHUNK_BYTES", budget)
    monkeypatch.setattr(conv, "_WGRAD_CHUNK_BYTES", budget)
    x, w, b, g, attrs = _arrays(case, np.float32)
    fwd, wgrad = get_op("conv2d"), get_op("conv2d_weight_grad")
    for bias in (None, b):
        _agree(fwd.forward(np, x, w, bias, **attrs), fwd.forward(PLAIN, x, w, bias, **attrs),
               f"conv2d (bias {bias is not None})")  # fmt: skip
    _agree(wgrad.forward(np, x, g, shape=w.shape, **attrs),
           wgrad.forward(PLAIN, x, g, shape=w.shape, **attrs), "conv2d_weight_grad")  # fmt: skip


def test_small_budgets_do_build_the_columns_in_chunks(monkeypatch):
    """The comparison above means something only if the chunked paths ran in chunks: one image
    per chunk for the forward, one channel per chunk for the weight gradient (two for a 1x1
    kernel, whose single rows would make matrix-vector products)."""
    calls = []
    real = conv._columns

    def counting(xcn, *args):
        calls.append(xcn.shape[:2])
        return real(xcn, *args)

    monkeypatch.setattr(conv, "_columns", counting)
    monkeypatch.setattr(conv, "_CHUNK_BYTES", 1)
    monkeypatch.setattr(conv, "_WGRAD_CHUNK_BYTES", 1)
    x, w, _, g, attrs = _arrays(CASES[1], np.float32)  # 7 images, 1 channel
    get_op("conv2d").forward(np, x, w, **attrs)
    assert calls == [(1, 1)] * 7
    calls.clear()
    x, w, _, g, attrs = _arrays(CASES[4], np.float32)  # 5 channels, a 1x1 kernel
    get_op("conv2d_weight_grad").forward(np, x, g, shape=w.shape, **attrs)
    assert calls == [(2, 3), (2, 3), (2, 3)]  # channels 0-1, 2-3, then 3-4 (row 3 again)


def test_chunked_layer_gradients_match_torch(monkeypatch):
    """A 5x5 layer with padding through the tensors in float32, one image or channel per
    chunk: values and all three gradients against PyTorch's (to float32 rounding)."""
    import tinygrad_edu as tg
    import tinygrad_edu.nn.functional as F

    monkeypatch.setattr(conv, "_CHUNK_BYTES", 1)
    monkeypatch.setattr(conv, "_WGRAD_CHUNK_BYTES", 1)
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((6, 4, 9, 9), (5, 4, 5, 5), (5,))]
    g = rng.standard_normal((6, 5, 9, 9)).astype(np.float32)
    ours = [tg.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    y = F.conv2d(*ours, padding=2)
    yt = torch.nn.functional.conv2d(*theirs, padding=2)
    y.backward(tg.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-5)
    for a, t, what in zip(ours, theirs, ("input", "weight", "bias")):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-4,
                                   err_msg=what)  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_float64_makes_one_chunk_with_the_plain_paths_bits(case, monkeypatch):
    """float64's BLAS kernel for a product's last columns rounds differently from its main
    one, so float64 never chunks: the columns (built in two copies) go into one product, the
    plain path's, bit for bit."""
    calls = []
    real = conv._columns
    monkeypatch.setattr(conv, "_columns", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(conv, "_CHUNK_BYTES", 1)
    monkeypatch.setattr(conv, "_WGRAD_CHUNK_BYTES", 1)
    x, w, b, g, attrs = _arrays(case, np.float64)
    fwd, wgrad = get_op("conv2d"), get_op("conv2d_weight_grad")
    _same_bits(fwd.forward(np, x, w, b, **attrs), fwd.forward(PLAIN, x, w, b, **attrs),
               "conv2d float64")  # fmt: skip
    assert len(calls) == 1
    got = wgrad.forward(np, x, g, shape=w.shape, **attrs)
    _same_bits(got, wgrad.forward(PLAIN, x, g, shape=w.shape, **attrs), "weight grad float64")
    assert len(calls) == (2 if attrs["groups"] == 1 else 1)  # groups > 1: the plain path


def test_an_empty_batch_takes_the_chunked_path():
    x = np.zeros((0, 3, 5, 5), np.float32)
    w = np.ones((2, 3, 3, 3), np.float32)
    assert get_op("conv2d").forward(np, x, w, padding=1).shape == (0, 2, 5, 5)
    gw = get_op("conv2d_weight_grad").forward(np, x, np.zeros((0, 2, 5, 5), np.float32),
                                              shape=w.shape, padding=(1, 1))  # fmt: skip
    assert gw.shape == w.shape and not gw.any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_input_gradient_on_numpy_gives_the_plain_paths_bits(case, dtype):
    """``conv2d_input_grad`` at stride 1 copies the first column offset and adds the second in
    one pass on numpy arrays (NOTE [col2im on the padded grid]): the same additions in the same
    order as the plain path's copy then add."""
    x, w, _, g, attrs = _arrays(case, dtype)
    op = get_op("conv2d_input_grad")
    _same_bits(op.forward(np, g, w, shape=x.shape, **attrs),
               op.forward(PLAIN, g, w, shape=x.shape, **attrs), "conv2d_input_grad")  # fmt: skip
