"""The layer functions composed of existing ops (in ``ops/conv.py``, ``pooling.py``,
``normalization.py``, ``dropout.py``, ``upsampling.py``) and their modules, against PyTorch:
values and input/weight gradients in float64, the modules with PyTorch's state dicts loaded,
and the errors of clumsy calls."""

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F
from tinygrad_edu import nn

rng = np.random.default_rng(0)


def _pair(*shapes):
    arrays = [rng.standard_normal(s) for s in shapes]
    ours = [tg.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    return ours, theirs


def _agree(fn_ours, fn_torch, shapes, **kw):
    ours, theirs = _pair(*shapes)
    y, t = fn_ours(*ours, **kw), fn_torch(*theirs, **kw)
    assert tuple(y.shape) == tuple(t.shape)
    np.testing.assert_allclose(y.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = rng.standard_normal(tuple(t.shape))
    (y * tg.tensor(g)).sum().backward()
    (t * torch.tensor(g)).sum().backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-11)


TF = torch.nn.functional
CASES = [
    ("conv1d", (2, 4, 9), (6, 2, 3), dict(stride=2, padding=1, groups=2)),
    ("conv1d", (4, 9), (3, 4, 2), dict(dilation=2, padding="same")),
    ("conv_transpose2d", (2, 4, 5, 4), (4, 3, 3, 2), dict(stride=2, padding=1,
                                                          output_padding=1)),
    ("conv_transpose2d", (2, 4, 3, 3), (4, 1, 2, 3), dict(groups=2, dilation=2, stride=(1, 3))),
    ("conv_transpose2d", (4, 3, 3), (4, 2, 3, 3), dict(padding=1)),
    ("conv_transpose1d", (2, 3, 5), (3, 2, 3), dict(stride=3, padding=1, output_padding=2)),
]


@pytest.mark.parametrize("name,xs,ws,kw", CASES)
def test_convolutions(name, xs, ws, kw):
    _agree(getattr(F, name), getattr(TF, name), [xs, ws], **kw)


def test_conv_transpose_bias_and_conv1d_bias():
    _agree(F.conv_transpose2d, TF.conv_transpose2d, [(1, 2, 3, 3), (2, 3, 2, 2), (3,)], stride=2)
    _agree(F.conv1d, TF.conv1d, [(2, 3, 7), (5, 3, 3), (5,)], padding=2)


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=(2, 3), stride=2,
                                                          padding=1, dilation=(1, 2))])
def test_unfold_fold(kw):
    _agree(F.unfold, TF.unfold, [(2, 3, 6, 7)], **kw)
    cols = TF.unfold(torch.zeros(2, 3, 6, 7), **kw).shape
    _agree(F.fold, TF.fold, [tuple(cols)], output_size=(6, 7), **kw)


@pytest.mark.parametrize("name,xs,out", [
    ("adaptive_avg_pool2d", (2, 3, 7, 5), (3, 2)), ("adaptive_avg_pool2d", (3, 7, 5), (None, 4)),
    ("adaptive_avg_pool2d", (2, 3, 5, 5), 7), ("adaptive_avg_pool1d", (2, 3, 10), 4),
    ("adaptive_max_pool2d", (2, 3, 7, 5), (3, 2)), ("adaptive_max_pool1d", (2, 3, 10), 3),
])  # fmt: skip
def test_adaptive_pools(name, xs, out):
    _agree(getattr(F, name), getattr(TF, name), [xs], output_size=out)


def test_norms():
    _agree(lambda x, w, b: F.group_norm(x, 2, w, b), lambda x, w, b: TF.group_norm(x, 2, w, b),
           [(3, 4, 5, 2), (4,), (4,)])
    _agree(lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
           lambda x, w, b: TF.instance_norm(x, weight=w, bias=b), [(3, 4, 5, 2), (4,), (4,)])
    _agree(lambda x: F.instance_norm(x), lambda x: TF.instance_norm(x), [(3, 4, 6)])
    _agree(lambda x, w: F.rms_norm(x, (3, 4), w), lambda x, w: TF.rms_norm(x, (3, 4), w),
           [(2, 3, 4), (3, 4)])
    _agree(lambda x: F.rms_norm(x, 4, eps=0.1), lambda x: TF.rms_norm(x, [4], eps=0.1), [(2, 4)])


@pytest.mark.parametrize("kw", [
    dict(scale_factor=2), dict(size=(5, 3)), dict(size=7, mode="nearest-exact"),
    dict(scale_factor=(1.7, 0.6)), dict(size=(5, 7), mode="bilinear"),
    dict(size=(5, 7), mode="bilinear", align_corners=True),
    dict(scale_factor=1.5, mode="bilinear"), dict(scale_factor=(0.5, 2.5), mode="bilinear"),
    dict(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True),
])  # fmt: skip
def test_interpolate_2d(kw):
    _agree(F.interpolate, TF.interpolate, [(2, 3, 4, 6)], **kw)


def test_interpolate_1d_3d():
    _agree(F.interpolate, TF.interpolate, [(2, 3, 5)], size=8, mode="linear")
    _agree(F.interpolate, TF.interpolate, [(2, 3, 5)], scale_factor=3)
    _agree(F.interpolate, TF.interpolate, [(1, 2, 3, 4, 2)], size=(4, 3, 5), mode="trilinear",
           align_corners=True)


def test_dropout_channels():
    tg.manual_seed(0)
    x = tg.ones(8, 16, 3, 3, requires_grad=True)
    y = F.dropout2d(x, 0.5)
    per_channel = y.detach().numpy().reshape(8, 16, 9)
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    assert (per_channel.min(-1) == per_channel.max(-1)).all()  # whole channels
    assert 0 < (per_channel[..., 0] == 0).sum() < 128
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())
    assert F.dropout1d(x[0, :, :, 0], 0.3, training=False) is not None
    np.testing.assert_array_equal(F.dropout2d(x, 0.9, training=False).detach().numpy(),
                                  x.detach().numpy())
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout2d(x, 1.5)


@pytest.mark.parametrize("call,err,match", [
    (lambda: F.conv1d(tg.ones(2, 3, 4, 5), tg.ones(1, 3, 2)), tg.ShapeError, "conv1d"),
    (lambda: F.conv_transpose2d(tg.ones(1, 2, 3, 3), tg.ones(3, 1, 2, 2)), RuntimeError,
     "channels"),
    (lambda: F.conv_transpose2d(tg.ones(1, 2, 3, 3), tg.ones(2, 1, 2, 2), stride=2,
                                output_padding=2), ValueError, "output_padding"),
    (lambda: F.group_norm(tg.ones(2, 3, 4), 2), RuntimeError, "divisible"),
    (lambda: F.rms_norm(tg.ones(2, 3), (2,)), RuntimeError, "normalized_shape"),
    (lambda: F.interpolate(tg.ones(1, 1, 4), size=2, scale_factor=2), ValueError, "size"),
    (lambda: F.interpolate(tg.ones(1, 1, 4), size=2, mode="bicubic"), NotImplementedError,
     "bicubic"),
    (lambda: F.interpolate(tg.ones(1, 1, 4), size=2, align_corners=True), ValueError,
     "align_corners"),
    (lambda: F.fold(tg.ones(1, 5, 4), 3, 2), RuntimeError, "fold"),
    (lambda: F.adaptive_avg_pool2d(tg.ones(4, 4), 0), tg.ShapeError, "adaptive"),
    (lambda: F.adaptive_max_pool2d(tg.ones(1, 4, 4), 2, return_indices=True),
     NotImplementedError, "return_indices"),
])  # fmt: skip
def test_errors(call, err, match):
    with pytest.raises(err, match=match):
        call()


MODULES = [
    ("Conv1d", (4, 6, 3), dict(stride=2, padding=1, groups=2), (2, 4, 9)),
    ("ConvTranspose1d", (4, 6, 3), dict(stride=2, output_padding=1), (2, 4, 5)),
    ("ConvTranspose2d", (4, 2, 3), dict(stride=2, padding=1, bias=False), (2, 4, 5, 4)),
    ("GroupNorm", (2, 4), {}, (2, 4, 3, 3)),
    ("InstanceNorm2d", (4,), dict(affine=True), (2, 4, 3, 3)),
    ("InstanceNorm1d", (4,), {}, (4, 7)),
    ("RMSNorm", ((3, 4),), {}, (2, 3, 4)),
    ("AdaptiveAvgPool1d", (3,), {}, (2, 4, 7)),
    ("AdaptiveMaxPool2d", ((2, 3),), {}, (2, 4, 5, 7)),
    ("Upsample", (), dict(scale_factor=2, mode="bilinear"), (1, 2, 3, 4)),
    ("UpsamplingBilinear2d", (), dict(size=(5, 6)), (1, 2, 3, 4)),
    ("UpsamplingNearest2d", (), dict(scale_factor=3), (1, 2, 3, 4)),
    ("ZeroPad2d", ((1, 2, 0, 3),), {}, (1, 2, 3, 4)),
    ("ConstantPad1d", (2, 3.5), {}, (1, 2, 3)),
    ("ConstantPad2d", (1, -1.0), {}, (1, 2, 3, 3)),
    ("ReflectionPad2d", (2,), {}, (1, 2, 3, 4)),
    ("ReflectionPad1d", ((1, 2),), {}, (1, 2, 4)),
    ("ReplicationPad2d", ((1, 0, 2, 1),), {}, (1, 2, 3, 4)),
    ("ReplicationPad1d", (3,), {}, (1, 2, 4)),
    ("Unfold", (2,), dict(stride=2), (1, 2, 4, 4)),
    ("Fold", ((4, 5), 2), {}, (1, 8, 12)),
    ("Dropout2d", (0.4,), {}, (2, 3, 4, 4)),
    ("Dropout3d", (0.4,), {}, (2, 3, 2, 2, 2)),
    ("MaxPool1d", (3,), dict(stride=2, padding=1), (2, 3, 9)),
    ("AvgPool1d", (2,), {}, (2, 3, 9)),
    ("PixelShuffle", (2,), {}, (2, 8, 2, 3)),
    ("PixelUnshuffle", (2,), {}, (2, 2, 4, 6)),
]  # fmt: skip


@pytest.mark.parametrize("name,args,kw,xs", MODULES, ids=[m[0] for m in MODULES])
def test_modules_with_torch_state(name, args, kw, xs):
    """The module made as PyTorch's, with PyTorch's parameters loaded, gives its outputs and
    gradients (Dropout2d in evaluation mode: the identity)."""
    theirs = getattr(torch.nn, name)(*args, **kw).double()
    ours = getattr(nn, name)(*args, **kw).double()
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    assert sorted(state) == sorted(ours.state_dict())
    for k, v in state.items():
        assert tuple(ours.state_dict()[k].shape) == v.shape
    ours.load_state_dict(state)
    if name.startswith("Dropout"):
        ours.eval(), theirs.eval()
    _agree(lambda x: ours(x), lambda x: theirs(x), [xs])
    for (k, p), (k2, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert k == k2
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-11)


def test_default_init_bounds():
    """PyTorch's default bound 1/sqrt(fan_in), fan_in = weight.shape[1] * kernel."""
    m = nn.ConvTranspose2d(3, 8, 3)
    bound = 1 / np.sqrt(8 * 9)
    w = m.weight.detach().numpy()
    assert w.shape == (3, 8, 3, 3) and np.abs(w).max() <= bound and np.abs(w).max() > bound / 2
    c = nn.Conv1d(4, 2, 5, bias=False)
    assert c.bias is None and np.abs(c.weight.detach().numpy()).max() <= 1 / np.sqrt(20)


def test_conv_transpose_output_size():
    """``forward(x, output_size=...)`` picks the output_padding, as PyTorch's."""
    theirs = torch.nn.ConvTranspose2d(2, 3, 3, stride=2).double()
    ours = nn.ConvTranspose2d(2, 3, 3, stride=2).double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = rng.standard_normal((1, 2, 4, 4))
    y = ours(tg.tensor(x), output_size=(10, 9))
    t = theirs(torch.tensor(x), output_size=(10, 9))
    np.testing.assert_allclose(y.detach().numpy(), t.detach().numpy(), rtol=1e-10)


def test_symbolic_engine_has_them():
    """The same declarations give the symbolic engine's functions: a graph evaluates to the
    eager result."""
    from tinygrad_edu import symbolic as S

    x = rng.standard_normal((2, 4, 6, 5))
    node = S.layer_functions.LAYERS["group_norm"](S.constant(x), 2)
    node = S.layer_functions.LAYERS["interpolate"](node, scale_factor=2, mode="bilinear")
    node = S.layer_functions.LAYERS["adaptive_avg_pool2d"](node, (5, 3))
    (value,) = S.Executor([node]).run({})
    eager = F.adaptive_avg_pool2d(F.interpolate(F.group_norm(tg.tensor(x), 2), scale_factor=2,
                                                mode="bilinear"), (5, 3))  # fmt: skip
    np.testing.assert_allclose(np.asarray(value), eager.numpy(), rtol=1e-12)


@pytest.mark.parametrize("call,match", [
    (lambda: nn.Conv1d(3, 4, 3)(tg.ones(2, 5, 7)), r"conv1d \(computed as conv2d"),
    (lambda: F.conv1d(tg.ones(1, 2, 5), tg.ones(3, 2, 7)), r"conv1d .*kernel"),
    (lambda: F.unfold(tg.ones(1, 1, 2, 2), 3), r"unfold \(computed as"),
    (lambda: F.max_pool1d(tg.ones(1, 1, 2), 3), r"max_pool1d \(computed as"),
])  # fmt: skip
def test_composed_errors_name_the_function_called(call, match):
    with pytest.raises(tg.ShapeError, match=match):
        call()


def test_norm_affine_of_the_wrong_size_is_an_error():
    with pytest.raises(RuntimeError, match=r"group_norm: expected weight of shape \(6,\)"):
        nn.GroupNorm(2, 4)(tg.ones(2, 6, 3))
    with pytest.raises(RuntimeError, match=r"instance_norm: expected bias of shape \(3,\)"):
        F.instance_norm(tg.ones(2, 3, 4), bias=tg.ones(2))


def test_softmin_softmax2d_and_the_upsample_aliases():
    _agree(lambda x: F.softmin(x, dim=1), lambda x: TF.softmin(x, dim=1), [(2, 3)])
    _agree(lambda x: nn.Softmin(0)(x), lambda x: torch.nn.Softmin(0)(x), [(4, 2)])
    _agree(lambda x: nn.Softmax2d()(x), lambda x: torch.nn.Softmax2d()(x), [(2, 3, 2, 2)])
    with pytest.raises(ValueError, match="Softmax2d"):
        nn.Softmax2d()(tg.ones(2, 3))
    for name, kw in (("upsample", dict(scale_factor=2, mode="bilinear")),
                     ("upsample_nearest", dict(size=(3, 5))),
                     ("upsample_bilinear", dict(scale_factor=2))):  # fmt: skip
        with pytest.warns(UserWarning, match="deprecated"):
            _agree(getattr(F, name), getattr(TF, name), [(1, 2, 2, 3)], **kw)


def test_batchnorm3d_trains_and_evaluates_as_pytorchs():
    theirs = torch.nn.BatchNorm3d(3).double()
    ours = nn.BatchNorm3d(3).double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    _agree(lambda x: ours(x), lambda x: theirs(x), [(2, 3, 2, 3, 2)])  # training: batch stats
    for name in ("running_mean", "running_var"):
        np.testing.assert_allclose(getattr(ours, name).numpy(),
                                   getattr(theirs, name).detach().numpy(), rtol=1e-10)
    ours.eval(), theirs.eval()
    _agree(lambda x: ours(x), lambda x: theirs(x), [(2, 3, 2, 3, 2)])
    with pytest.raises(ValueError, match=r"\(N, C, D, H, W\)"):
        ours(tg.ones(2, 3, 4, 4))


def test_module_arguments_are_read_at_call_time():
    up = nn.Upsample(scale_factor=2)
    up.scale_factor = 3  # as PyTorch's modules, the attribute is what forward uses
    assert up(tg.ones(1, 1, 2, 2)).shape == (1, 1, 6, 6)
    assert "scale_factor=3" in repr(up)


@pytest.mark.parametrize("name,xs,ws,kw", [
    ("conv_transpose2d", (2, 4, 3, 3), (4, 2, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    ("conv1d", (2, 3, 7), (4, 3, 3), dict(padding=1)),
    ("group_norm", (2, 4, 3, 2), None, dict(num_groups=2)),
    ("interpolate", (1, 2, 3, 4), None, dict(scale_factor=1.5, mode="bilinear")),
    ("unfold", (1, 2, 4, 5), None, dict(kernel_size=2, stride=(1, 2))),
    ("adaptive_max_pool2d", (1, 2, 5, 7), None, dict(output_size=(3, 4))),
])  # fmt: skip
def test_symbolic_gradients_are_the_eager_ones(name, xs, ws, kw):
    """The symbolic engine's function (the same declaration) and ``gradients`` give the eager
    engine's output and input gradients."""
    from tinygrad_edu import symbolic as S

    arrays = [rng.standard_normal(s) for s in ([xs] if ws is None else [xs, ws])]
    names = ["x", "w"][: len(arrays)]
    nodes = [S.Variable(n, shape=a.shape, dtype="float64") for n, a in zip(names, arrays)]
    y = getattr(S, name)(*nodes, **kw)
    g = rng.standard_normal(tuple(getattr(F, name)(*map(tg.tensor, arrays), **kw).shape))
    loss = S.api.reduce_sum(y * S.constant(g))
    grads = S.gradients(loss, nodes)
    values = S.Executor([y, *grads]).run(dict(zip(nodes, arrays)))
    eager = [tg.tensor(a, requires_grad=True) for a in arrays]
    out = getattr(F, name)(*eager, **kw)
    (out * tg.tensor(g)).sum().backward()
    np.testing.assert_allclose(np.asarray(values[0]), out.detach().numpy(), rtol=1e-12)
    for got, t in zip(values[1:], eager):
        np.testing.assert_allclose(np.asarray(got), t.grad.numpy(), rtol=1e-10, atol=1e-12)
