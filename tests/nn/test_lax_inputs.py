"""Inputs of the wrong dtype raise PyTorch's error (same exception class, a message naming the
layer or op, the dtypes and the fix) instead of being converted silently; the corrected call
runs in both libraries and agrees. And the channel dropouts read odd shapes as PyTorch does
(``dropout2d`` of a 3-D input drops channels of ``(N, C, L)``, with PyTorch's warning)."""

import warnings

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F
from tinygrad_edu import nn

TF = torch.nn.functional
RNG = np.random.default_rng(11)


def _both_raise(ours, theirs, *words):
    """Both calls raise the same exception class; ours names each of ``words``."""
    with pytest.raises(Exception) as t_err:
        theirs()
    with pytest.raises(type(t_err.value)) as o_err:
        ours()
    assert type(o_err.value) is type(t_err.value)
    for w in words:
        assert w in str(o_err.value), (w, str(o_err.value))
    return str(o_err.value)


def _modules(make_ours, make_theirs):
    torch.manual_seed(0)
    theirs = make_theirs()
    ours = make_ours()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours, theirs


def _close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# -- a float64 or integer input into float32 weights -------------------------------------------
LAYER_CASES = [  # (name, ours, theirs, input shape, the words of our message)
    ("Linear", lambda: nn.Linear(3, 4), lambda: torch.nn.Linear(3, 4), (2, 3), "Linear(3, 4)"),
    ("Conv1d", lambda: nn.Conv1d(3, 4, 3), lambda: torch.nn.Conv1d(3, 4, 3), (2, 3, 7),
     "conv1d"),
    ("Conv2d", lambda: nn.Conv2d(3, 4, 3), lambda: torch.nn.Conv2d(3, 4, 3), (2, 3, 6, 6),
     "Conv2d(3, 4)"),
    ("ConvTranspose2d", lambda: nn.ConvTranspose2d(3, 4, 3),
     lambda: torch.nn.ConvTranspose2d(3, 4, 3), (2, 3, 4, 4), "conv_transpose2d"),
]  # fmt: skip


# (PyTorch's transposed convolution has no uint8 kernel: NotImplementedError, not a dtype check)
LAYER_DTYPES = [(c, d) for c in LAYER_CASES for d in ("float64", "int64", "uint8")
                if (c[0], d) != ("ConvTranspose2d", "uint8")]  # fmt: skip


@pytest.mark.parametrize("case, dtype", LAYER_DTYPES, ids=[f"{c[0]}-{d}" for c, d in LAYER_DTYPES])
def test_a_float32_layer_refuses_other_input_dtypes(case, dtype):
    name, make_ours, make_theirs, shape, words = case
    ours, theirs = _modules(make_ours, make_theirs)
    x = (RNG.standard_normal(shape) * 3).astype(dtype)
    msg = _both_raise(lambda: ours(tg.tensor(x)), lambda: theirs(torch.tensor(x)), words,
                      dtype, "float32", "x.float()")  # fmt: skip
    assert ("model.double()" in msg or "weight.double()" in msg) == (dtype == "float64")
    # the fix the message names works, and agrees
    with torch.no_grad():
        want = theirs(torch.tensor(x).float()).numpy()
    _close(ours(tg.tensor(x).float()).detach().numpy(), want, 1e-5)


def test_the_model_side_fix_works_too():
    ours, theirs = _modules(lambda: nn.Linear(3, 2), lambda: torch.nn.Linear(3, 2))
    x = RNG.standard_normal((4, 3))
    got = ours.double()(tg.tensor(x))
    want = theirs.double()(torch.tensor(x))
    assert str(got.dtype) == "float64"
    _close(got.detach().numpy(), want.detach().numpy(), 1e-12)


@pytest.mark.parametrize("fn", ["linear", "conv1d", "conv2d"])
@pytest.mark.parametrize("mixed", ["input", "bias"])
def test_the_functions_refuse_mixed_dtypes(fn, mixed):
    shapes = {"linear": ((2, 3), (4, 3)), "conv1d": ((2, 3, 5), (4, 3, 3)),
              "conv2d": ((2, 3, 5, 5), (4, 3, 3, 3))}[fn]  # fmt: skip
    x, w = (RNG.standard_normal(s).astype("float32") for s in shapes)
    b = RNG.standard_normal(4).astype("float32")
    if mixed == "input":
        x = x.astype("float64")
    else:
        b = b.astype("float64")
    ours, theirs = getattr(F, fn), getattr(TF, fn)
    _both_raise(lambda: ours(tg.tensor(x), tg.tensor(w), tg.tensor(b)),
                lambda: theirs(torch.tensor(x), torch.tensor(w), torch.tensor(b)), fn,
                "float64", "float32", mixed if mixed == "bias" else "weight")  # fmt: skip
    x, b = x.astype("float32"), b.astype("float32")
    got = ours(tg.tensor(x), tg.tensor(w), tg.tensor(b)).numpy()
    _close(got, theirs(torch.tensor(x), torch.tensor(w), torch.tensor(b)).numpy(), 1e-5)


RECURRENT = ["RNN", "LSTM", "GRU"]


@pytest.mark.parametrize("kind", RECURRENT)
@pytest.mark.parametrize("dtype", ["float64", "int64", "uint8"])
def test_recurrent_layers_refuse_other_input_dtypes(kind, dtype):
    ours, theirs = _modules(lambda: getattr(nn, kind)(3, 4), lambda: getattr(torch.nn, kind)(3, 4))
    x = (RNG.standard_normal((5, 2, 3)) * 3).astype(dtype)
    _both_raise(lambda: ours(tg.tensor(x)), lambda: theirs(torch.tensor(x)), kind, dtype,
                "float32", "input.float()")  # fmt: skip
    out, _ = ours(tg.tensor(x).float())
    with torch.no_grad():
        want, _ = theirs(torch.tensor(x).float())
    _close(out.detach().numpy(), want.numpy(), 1e-5)


@pytest.mark.parametrize("kind", ["RNN", "GRU"])
def test_recurrent_layers_refuse_a_state_of_another_dtype(kind):
    ours, theirs = _modules(lambda: getattr(nn, kind)(3, 4), lambda: getattr(torch.nn, kind)(3, 4))
    x, h = RNG.standard_normal((5, 2, 3)).astype("float32"), RNG.standard_normal((1, 2, 4))
    _both_raise(lambda: ours(tg.tensor(x), tg.tensor(h)),
                lambda: theirs(torch.tensor(x), torch.tensor(h)), kind, "float64", "float32")
    out, _ = ours(tg.tensor(x), tg.tensor(h).float())
    with torch.no_grad():
        want, _ = theirs(torch.tensor(x), torch.tensor(h).float())
    _close(out.detach().numpy(), want.numpy(), 1e-5)


@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_refuse_a_float64_input(kind):
    ours, theirs = _modules(lambda: getattr(nn, kind)(3, 4), lambda: getattr(torch.nn, kind)(3, 4))
    x = RNG.standard_normal((2, 3))
    _both_raise(lambda: ours(tg.tensor(x)), lambda: theirs(torch.tensor(x)), "float64",
                "float32")  # fmt: skip
    got, want = ours(tg.tensor(x).float()), theirs(torch.tensor(x).float())
    got, want = (got[0], want[0]) if kind == "LSTMCell" else (got, want)
    _close(got.detach().numpy(), want.detach().numpy(), 1e-5)


# -- attention masks ----------------------------------------------------------------------------
def _qkv():
    return [RNG.standard_normal(s).astype("float32") for s in ((2, 3, 4), (2, 5, 4), (2, 5, 4))]


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "float64"])
def test_sdpa_refuses_an_int_mask_and_takes_bool_or_float(dtype):
    q, k, v = _qkv()
    m = RNG.integers(0, 2, (3, 5))
    m[:, 0] = 1  # every query may see one key
    _both_raise(
        lambda: F.scaled_dot_product_attention(*map(tg.tensor, (q, k, v)),
                                               attn_mask=tg.tensor(m.astype(dtype))),
        lambda: TF.scaled_dot_product_attention(*map(torch.tensor, (q, k, v)),
                                                attn_mask=torch.tensor(m.astype(dtype))),
        "attn_mask", dtype, "float32", "bool")  # fmt: skip
    for mask in (m.astype(bool), np.where(m, 0.0, -1e9).astype("float32")):  # the fixes
        got = F.scaled_dot_product_attention(*map(tg.tensor, (q, k, v)), attn_mask=tg.tensor(mask))
        want = TF.scaled_dot_product_attention(*map(torch.tensor, (q, k, v)),
                                               attn_mask=torch.tensor(mask))  # fmt: skip
        _close(got.numpy(), want.numpy(), 1e-5)


def test_sdpa_refuses_query_key_value_of_different_dtypes():
    q, k, v = _qkv()
    _both_raise(lambda: F.scaled_dot_product_attention(tg.tensor(q).double(), tg.tensor(k),
                                                       tg.tensor(v)),
                lambda: TF.scaled_dot_product_attention(torch.tensor(q).double(),
                                                        torch.tensor(k), torch.tensor(v)),
                "query", "float64", "float32")  # fmt: skip


@pytest.mark.parametrize("where", ["attn_mask", "key_padding_mask"])
@pytest.mark.parametrize("dtype", ["int64", "uint8", "float64"])
def test_multihead_attention_refuses_int_masks_and_takes_bool_or_float(where, dtype):
    ours, theirs = _modules(lambda: nn.MultiheadAttention(4, 2),
                            lambda: torch.nn.MultiheadAttention(4, 2))  # fmt: skip
    x = RNG.standard_normal((3, 2, 4)).astype("float32")
    shape = (3, 3) if where == "attn_mask" else (2, 3)
    m = RNG.integers(0, 2, shape)
    m[..., 0] = 0  # MultiheadAttention: nonzero/True = may NOT attend; each query sees key 0
    _both_raise(lambda: ours(*(tg.tensor(x),) * 3, **{where: tg.tensor(m.astype(dtype))}),
                lambda: theirs(*(torch.tensor(x),) * 3, **{where: torch.tensor(m.astype(dtype))}),
                where, dtype)  # fmt: skip
    _check_mha_fixes(ours, theirs, x, where, m)


def _check_mha_fixes(ours, theirs, x, where, m):
    for mask in (m.astype(bool), np.where(m, -1e9, 0.0).astype("float32")):
        got, _ = ours(*(tg.tensor(x),) * 3, **{where: tg.tensor(mask)})
        with torch.no_grad():
            want, _ = theirs(*(torch.tensor(x),) * 3, **{where: torch.tensor(mask)})
        _close(got.detach().numpy(), want.numpy(), 1e-5)


# -- labels of the wrong dtype ------------------------------------------------------------------
@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("dtype", ["int32", "int16", "bool"])
def test_class_losses_want_int64_labels(loss, dtype):
    x = RNG.standard_normal((4, 3)).astype("float32")
    y = np.array([0, 1, 2, 1]) if dtype != "bool" else np.array([0, 1, 1, 0])
    _both_raise(lambda: getattr(F, loss)(tg.tensor(x), tg.tensor(y.astype(dtype))),
                lambda: getattr(TF, loss)(torch.tensor(x), torch.tensor(y.astype(dtype))),
                loss, "Long", dtype, ".long()")  # fmt: skip
    for fix in ("int64", "uint8"):  # PyTorch takes Byte class indices too
        got = getattr(F, loss)(tg.tensor(x), tg.tensor(y.astype(fix))).item()
        want = getattr(TF, loss)(torch.tensor(x), torch.tensor(y.astype(fix))).item()
        assert got == pytest.approx(want, rel=1e-6)


def test_the_loss_module_wants_int64_labels_too():
    x, y = RNG.standard_normal((4, 3)).astype("float32"), np.array([0, 1, 2, 1], dtype="int32")
    _both_raise(lambda: nn.CrossEntropyLoss()(tg.tensor(x), tg.tensor(y)),
                lambda: torch.nn.CrossEntropyLoss()(torch.tensor(x), torch.tensor(y)), "int32")


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("target", ["indices", "probabilities"])
def test_a_class_weight_of_the_wrong_length_names_both_lengths(n, target):
    x = RNG.standard_normal((4, 3)).astype("float32")
    y = np.array([0, 1, 2, 1]) if target == "indices" else RNG.random((4, 3)).astype("float32")
    w = RNG.random(n).astype("float32")
    _both_raise(lambda: nn.CrossEntropyLoss(weight=tg.tensor(w))(tg.tensor(x), tg.tensor(y)),
                lambda: torch.nn.CrossEntropyLoss(weight=torch.tensor(w))(torch.tensor(x),
                                                                          torch.tensor(y)),
                "3 classes", f"[{n}]")  # fmt: skip
    if target == "indices":
        _both_raise(lambda: F.nll_loss(tg.tensor(x), tg.tensor(y), tg.tensor(w)),
                    lambda: TF.nll_loss(torch.tensor(x), torch.tensor(y), torch.tensor(w)),
                    "3 classes", f"[{n}]")  # fmt: skip
    w = RNG.random(3).astype("float32")
    got = nn.CrossEntropyLoss(weight=tg.tensor(w))(tg.tensor(x), tg.tensor(y)).item()
    want = torch.nn.CrossEntropyLoss(weight=torch.tensor(w))(torch.tensor(x), torch.tensor(y))
    assert got == pytest.approx(want.item(), rel=1e-5)


@pytest.mark.parametrize("dtype", ["int64", "bool", "float64"])
def test_bce_wants_targets_of_the_inputs_float_dtype(dtype):
    p = RNG.random(6).astype("float32")
    y = RNG.integers(0, 2, 6).astype(dtype)
    for ours, theirs in ((F.binary_cross_entropy, TF.binary_cross_entropy),
                         (nn.BCELoss(), torch.nn.BCELoss())):  # fmt: skip
        _both_raise(lambda o=ours: o(tg.tensor(p), tg.tensor(y)),
                    lambda t=theirs: t(torch.tensor(p), torch.tensor(y)), dtype, "float32",
                    "target.float()")  # fmt: skip
        got = ours(tg.tensor(p), tg.tensor(y).float()).item()
        assert got == pytest.approx(theirs(torch.tensor(p), torch.tensor(y).float()).item(),
                                    rel=1e-5)  # fmt: skip


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_bce_with_logits_wants_float_targets(dtype):
    x = RNG.standard_normal(6).astype("float32")
    y = RNG.integers(0, 2, 6).astype(dtype)
    for ours, theirs in ((F.binary_cross_entropy_with_logits,
                          TF.binary_cross_entropy_with_logits),
                         (nn.BCEWithLogitsLoss(), torch.nn.BCEWithLogitsLoss())):  # fmt: skip
        _both_raise(lambda o=ours: o(tg.tensor(x), tg.tensor(y)),
                    lambda t=theirs: t(torch.tensor(x), torch.tensor(y)), dtype,
                    "target.float()")  # fmt: skip
        got = ours(tg.tensor(x), tg.tensor(y).float()).item()
        assert got == pytest.approx(theirs(torch.tensor(x), torch.tensor(y).float()).item(),
                                    rel=1e-5)  # fmt: skip


def test_bce_with_logits_takes_a_float64_target_as_pytorch_does():
    x, y = RNG.standard_normal(6).astype("float32"), RNG.random(6)
    got = F.binary_cross_entropy_with_logits(tg.tensor(x), tg.tensor(y)).item()
    want = TF.binary_cross_entropy_with_logits(torch.tensor(x), torch.tensor(y)).item()
    assert got == pytest.approx(want, rel=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8", "bool"])
def test_one_hot_wants_int64_indices(dtype):
    y = np.array([0, 2, 1, 1]).astype(dtype)
    _both_raise(lambda: F.one_hot(tg.tensor(y)), lambda: TF.one_hot(torch.tensor(y)),
                "one_hot", "LongTensor", dtype, ".long()")  # fmt: skip
    np.testing.assert_array_equal(F.one_hot(tg.tensor(y).long(), 3).numpy(),
                                  TF.one_hot(torch.tensor(y).long(), 3).numpy())


# -- joins of a tensor and a Python list --------------------------------------------------------
@pytest.mark.parametrize("fn", ["stack", "cat", "hstack", "vstack"])
@pytest.mark.parametrize("other", [[1.0, 2.0, 3.0], (1.0, 2.0, 3.0), 1.0])
def test_joins_want_tensors_not_python_values(fn, other):
    a = np.ones(3, dtype="float32")
    _both_raise(lambda: getattr(tg, fn)([tg.tensor(a), other]),
                lambda: getattr(torch, fn)([torch.tensor(a), other]),
                fn, "element 1", type(other).__name__, "tg.tensor")  # fmt: skip
    if isinstance(other, float):
        return
    got = getattr(tg, fn)([tg.tensor(a), tg.tensor(other)]).numpy()
    np.testing.assert_array_equal(got, getattr(torch, fn)([torch.tensor(a),
                                                            torch.tensor(other)]).numpy())


# -- dropout of integers ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("fn", ["dropout", "dropout1d", "dropout2d", "module"])
def test_dropout_in_training_wants_a_float_input(fn, dtype):
    x = np.ones((2, 3, 4)).astype(dtype)
    if fn == "module":
        ours, theirs = nn.Dropout(0.5), torch.nn.Dropout(0.5)
    else:
        ours, theirs = getattr(F, fn), getattr(TF, fn)
    _both_raise(lambda: ours(tg.tensor(x)), lambda: theirs(torch.tensor(x)), dtype, "x.float()")
    for call in (lambda f, t: f(t, 0.5, training=False), lambda f, t: f(t, 0.0),
                 lambda f, t: f(t, 1.0)):  # what PyTorch allows: no scaling happens
        if fn == "module":
            break
        got, want = call(ours, tg.tensor(x)), call(theirs, torch.tensor(x))
        assert str(got.dtype) == dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    ours_eval = nn.Dropout(0.5).eval()(tg.tensor(x))
    np.testing.assert_array_equal(ours_eval.numpy(), x)
    y = (ours if fn != "module" else nn.Dropout(0.5))(tg.tensor(x).float())
    assert set(np.unique(y.numpy())) <= {0.0, 2.0}


# -- the channel dropouts on odd shapes ---------------------------------------------------------
def _drop(lib, fn, shape, p=0.5, training=True):
    """(the result of ``fn`` on ones of ``shape``, the warnings' categories)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            x = lib.ones(*shape) if shape else lib.ones(())
            y = fn(x, p, training)
        except Exception as e:  # noqa: BLE001  (the class is compared with PyTorch's)
            return e, [w.category for w in caught]
    return y.detach().numpy(), [w.category for w in caught]


def _groups(y, axes):
    """Whether ``y`` is constant over ``axes`` (every zeroed group is zeroed whole) and the
    number of groups that are zero."""
    keep = (y != 0).astype(float)
    mean = keep.mean(axis=axes, keepdims=True) if axes else keep
    return bool(np.all((mean == 0) | (mean == 1))), int((mean == 0).sum())


SHAPES = [(), (6,), (6, 40), (6, 40, 5), (6, 40, 3, 2), (6, 40, 2, 2, 2), (6, 4, 2, 2, 1, 2)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{len(s)}D")
@pytest.mark.parametrize("name", ["dropout1d", "dropout2d", "dropout3d"])
def test_channel_dropout_warns_and_groups_as_pytorch(name, shape):
    tg.manual_seed(0)
    torch.manual_seed(0)
    got, got_w = _drop(tg, getattr(F, name), shape)
    want, want_w = _drop(torch, getattr(TF, name), shape)
    assert got_w == want_w  # the same number of warnings, each a UserWarning
    if isinstance(want, Exception):
        assert type(got) is type(want), (got, want)
        assert name in str(got)
        return
    assert not isinstance(got, Exception), got
    assert got.shape == want.shape
    # which elements are dropped together: the axes over which PyTorch's mask is constant
    together = tuple(a for a in range(len(shape)) if shape[a] > 1 and all(
        np.array_equal(np.take(want, [0], a), np.take(want, [i], a))
        for i in range(shape[a])))  # fmt: skip
    ok, zeros = _groups(got, together)
    assert ok, f"{name} {shape}: ours is not constant over the axes {together}"
    ok, zeros_t = _groups(want, together)
    assert ok
    groups = got.size // max(1, int(np.prod([shape[a] for a in together])))
    assert 0 < zeros < groups and 0 < zeros_t < groups  # about half the groups are dropped
    assert set(np.unique(got)) <= {0.0, 2.0}
    _, eval_w = _drop(tg, getattr(F, name), shape, training=False)
    assert eval_w == _drop(torch, getattr(TF, name), shape, training=False)[1]


def test_dropout2d_of_a_3d_input_drops_channels_of_n_c_l():
    """The case named in PyTorch's warning: a (N, C, L) input, one draw per (n, c)."""
    x = tg.ones(8, 16, 5)
    with pytest.warns(UserWarning, match=r"dropout2d.*\(N, C, L\)"):
        y = nn.Dropout2d(0.5)(x).numpy()
    with pytest.warns(UserWarning, match=r"dropout2d.*\(N, C, L\)"):
        t = torch.nn.Dropout2d(0.5)(torch.ones(8, 16, 5)).numpy()
    for out in (y, t):
        assert (out == out[:, :, :1]).all()  # constant along L
        assert 0 < (out[:, :, 0] == 0).sum() < 8 * 16  # drawn per (n, c), not per c only
        assert not all((out[:, c, 0] == out[0, c, 0]).all() for c in range(16))


def test_dropout2d_of_a_2d_input_warns_and_drops_elements():
    with pytest.warns(UserWarning, match="dropout2d: Received a 2-D input"):
        y = F.dropout2d(tg.ones(30, 40), 0.5).numpy()
    assert 0.3 < (y == 0).mean() < 0.7
    assert len({tuple(row) for row in (y == 0)}) > 1 and len({tuple(c) for c in (y == 0).T}) > 1


def test_channel_dropout_in_place_changes_the_input_and_keeps_the_grouping():
    x = tg.ones(4, 10, 3, 3)
    y = F.dropout2d(x, 0.5, True, inplace=True)
    assert y is x
    ok, zeros = _groups(x.numpy(), (2, 3))
    assert ok and 0 < zeros < 40
    z = tg.ones(10, 6)
    F.dropout1d(z, 0.5, True, inplace=True)  # unbatched (C, L)
    ok, zeros = _groups(z.numpy(), (1,))
    assert ok and 0 < zeros < 10


def test_channel_dropout_gradient_is_the_mask():
    x = tg.tensor(RNG.standard_normal((3, 8, 4)), requires_grad=True)
    y = F.dropout1d(x, 0.5)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (y.detach().numpy() / x.detach().numpy()),
                               rtol=1e-12)  # fmt: skip
