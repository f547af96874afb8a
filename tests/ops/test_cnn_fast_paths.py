"""The ConvNet's fast paths against PyTorch in float64, through the plain backward (no
``create_graph``, which takes the composite rules that ``test_conv_torch.py`` checks):

* ``conv2d_input_grad`` at stride 1 (col2im on flattened rows, NOTE [col2im on the padded
  grid]) for dilations, paddings, groups and kernels that are not square;
* ``batch_norm`` in training, its gradients with and without the affine parameters, and its
  forward and plain backward on arrays in place against the same operations one by one, bit
  for bit (NOTE [batch_norm's arrays in place]).
"""

from __future__ import annotations

import itertools
import types

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F
from tinygrad_edu.ops import RAW, RawFunctional, get_op

TF = torch.nn.functional


def _grads(fn, arrays, g):
    xs = [tg.tensor(a, requires_grad=True) for a in arrays]
    y = fn(*xs)
    y.backward(tg.tensor(g))
    return y.detach().numpy(), [x.grad.numpy() for x in xs]


def _torch_grads(fn, arrays, g):
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    y = fn(*ts)
    y.backward(torch.tensor(g))
    return y.detach().numpy(), [t.grad.numpy() for t in ts]


# (N, C, H, W, O, kernel, padding, dilation, groups): stride 1 throughout
UNIT_STRIDE = [
    (2, 3, 7, 6, 4, (3, 3), (1, 1), (1, 1), 1),
    (3, 2, 8, 9, 4, (3, 2), (2, 0), (2, 3), 2),
    (1, 4, 5, 5, 2, (5, 5), (2, 2), (1, 1), 2),
    (2, 1, 6, 4, 3, (1, 4), (0, 3), (1, 2), 1),
    (2, 2, 4, 4, 2, (2, 2), (0, 0), (3, 3), 1),  # the dilated kernel covers the whole input
]


@pytest.mark.parametrize("cfg", UNIT_STRIDE)
def test_unit_stride_conv_gradients_match_torch(cfg):
    N, C, H, W, O, k, p, d, groups = cfg
    rng = np.random.default_rng(21)
    x, w = rng.standard_normal((N, C, H, W)), rng.standard_normal((O, C // groups, *k))
    b = rng.standard_normal(O)
    kw = dict(padding=p, dilation=d, groups=groups)
    g = rng.standard_normal(TF.conv2d(*map(torch.tensor, (x, w, b)), **kw).shape)
    y, grads = _grads(lambda *a: F.conv2d(*a, **kw), (x, w, b), g)
    yt, grads_t = _torch_grads(lambda *a: TF.conv2d(*a, **kw), (x, w, b), g)
    np.testing.assert_allclose(y, yt, rtol=1e-10, atol=1e-10)
    for ours, theirs, what in zip(grads, grads_t, ("input", "weight", "bias")):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10, err_msg=what)


def test_two_training_steps_of_a_conv_layer_match_torch():
    """Two steps of a conv layer, the second on a new batch of the same shape: each weight
    gradient is that of its own batch."""
    rng = np.random.default_rng(25)
    w0 = rng.standard_normal((4, 2, 3, 3))
    ours, theirs = tg.tensor(w0, requires_grad=True), torch.tensor(w0, requires_grad=True)
    for _ in range(2):
        x, g = rng.standard_normal((3, 2, 6, 6)), rng.standard_normal((3, 4, 6, 6))
        F.conv2d(tg.tensor(x), ours, padding=1).backward(tg.tensor(g))
        TF.conv2d(torch.tensor(x), theirs, padding=1).backward(torch.tensor(g))
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-10)
        ours.grad, theirs.grad = None, None


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (3, 2, 4, 5)])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("needs_x", [True, False])
def test_batch_norm_training_gradients_match_torch(shape, affine, needs_x):
    rng = np.random.default_rng(26)
    C = shape[1]
    x = rng.standard_normal(shape) * 3 + 2
    wb = [rng.standard_normal(C), rng.standard_normal(C)] if affine else []
    g = rng.standard_normal(shape)
    xs = [tg.tensor(x, requires_grad=needs_x)] + [tg.tensor(a, requires_grad=True) for a in wb]
    ts = [torch.tensor(x, requires_grad=needs_x)] + [torch.tensor(a, requires_grad=True)
                                                     for a in wb]  # fmt: skip
    y = F.batch_norm(xs[0], None, None, *xs[1:], training=True, eps=1e-3)
    yt = TF.batch_norm(ts[0], None, None, *ts[1:], training=True, eps=1e-3)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    if not needs_x and not affine:
        return
    y.backward(tg.tensor(g))
    yt.backward(torch.tensor(g))
    for ours, theirs in zip(xs, ts):
        if theirs.requires_grad:
            np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-9,
                                       atol=1e-11)  # fmt: skip
        else:
            assert ours.grad is None


def test_batch_norm_forward_stays_float32():
    x = np.random.default_rng(27).standard_normal((4, 3, 5, 5)).astype(np.float32)
    w, b = np.ones(3, np.float32), np.zeros(3, np.float32)
    op = get_op("batch_norm")
    assert op.forward(np, x, w, b).dtype == np.float32
    gx, gw, gb = op.vjp(RAW, x, (x, w, b), None, [x.shape, (3,), (3,)],
                        (True, True, True))  # fmt: skip
    assert gx.dtype == gw.dtype == gb.dtype == np.float32


class _RuleF(RawFunctional):
    """The raw namespace under another class: ``batch_norm``'s rule runs its F ops one by one
    (the path a create_graph backward or the symbolic engine takes), not the in-place arrays."""


class _PlainNumpy(types.SimpleNamespace):
    """numpy under another name: the forward takes its plain path (``_normalize``)."""

    __name__ = "numpy"

    def __getattr__(self, name):
        return getattr(np, name)


def _bits(a, b, what):
    assert a.shape == b.shape and a.dtype == b.dtype, what
    assert a.tobytes() == b.tobytes(), f"{what}: not the plain path's bits"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7, 3), (4, 3, 5), (5, 4, 6, 7), (50, 16, 28, 28)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_in_place_arrays_give_the_rules_bits(dtype, shape, affine):
    """NOTE [batch_norm's arrays in place]: the training forward and the plain backward on
    numpy arrays against the same computation op by op, for every combination of the inputs
    that need a gradient."""
    rng = np.random.default_rng(28)
    C = shape[1]
    x = (rng.standard_normal(shape) * 3 + 2).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    params = [rng.standard_normal(C).astype(dtype), rng.standard_normal(C).astype(dtype)]
    params = params if affine else []
    op = get_op("batch_norm")
    attrs = dict(training=True, affine=affine, eps=1e-3, ndim=len(shape))
    _bits(op.forward(np, x, *params, **attrs), op.forward(_PlainNumpy(), x, *params, **attrs),
          "forward")  # fmt: skip
    shapes = [shape] + [(C,)] * len(params)
    for needs in itertools.product([True, False], repeat=1 + len(params)):
        fast = op.vjp(RAW, g, (x, *params), None, shapes, needs, **attrs)
        rule = op.vjp(_RuleF(), g, (x, *params), None, shapes, needs, **attrs)
        assert len(fast) == len(rule)
        for i, (a, b) in enumerate(zip(fast, rule)):
            assert (a is None) == (b is None), (needs, i)
            if a is not None:
                _bits(a, b, f"gradient {i} (needs {needs})")
    assert not np.shares_memory(op.vjp(RAW, g, (x, *params), None, shapes, (True,) * len(shapes),
                                       **attrs)[0], g)  # fmt: skip


def test_batch_norm_in_place_arrays_leave_the_inputs_alone():
    rng = np.random.default_rng(29)
    x, g = rng.standard_normal((4, 3, 5, 5)), rng.standard_normal((4, 3, 5, 5))
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    copies = [a.copy() for a in (x, g, w, b)]
    op = get_op("batch_norm")
    attrs = dict(training=True, affine=True, eps=1e-5, ndim=4)
    op.forward(np, x, w, b, **attrs)
    op.vjp(RAW, g, (x, w, b), None, [x.shape, (3,), (3,)], (True, True, True), **attrs)
    for a, c in zip((x, g, w, b), copies):
        np.testing.assert_array_equal(a, c)
