"""``inplace=`` of the activations and of dropout, against PyTorch: each case runs the same
code in ``torch`` and in ``tinygrad_edu`` and compares values, identity of the output and the
input, the input afterwards, gradients, and the errors autograd raises."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_edu as tg

torch = pytest.importorskip("torch")

LIBS = {"torch": torch, "tg": tg}
DATA = [-3.5, -1.2, -0.3, 0.2, 0.7, 2.5, 4.0, 7.0]  # away from every kink
WEIGHTS = [0.5, -1.0, 2.0, 1.5, -0.25, 3.0, 1.0, -2.0]


def _nn(lib):
    return lib.nn


def _F(lib):
    return lib.nn.functional


# name -> (module given (lib, inplace), functional given (lib, x, inplace))
ACTIVATIONS = {
    "ReLU": (lambda L, ip: _nn(L).ReLU(ip), lambda L, x, ip: _F(L).relu(x, ip)),
    "ReLU_kw": (lambda L, ip: _nn(L).ReLU(inplace=ip), lambda L, x, ip: _F(L).relu(x, inplace=ip)),
    "LeakyReLU": (
        lambda L, ip: _nn(L).LeakyReLU(0.1, ip),
        lambda L, x, ip: _F(L).leaky_relu(x, 0.1, ip),
    ),
    "LeakyReLU_kw": (
        lambda L, ip: _nn(L).LeakyReLU(inplace=ip),
        lambda L, x, ip: _F(L).leaky_relu(x, inplace=ip),
    ),
    "ELU": (lambda L, ip: _nn(L).ELU(0.7, ip), lambda L, x, ip: _F(L).elu(x, 0.7, ip)),
    "ELU_kw": (lambda L, ip: _nn(L).ELU(inplace=ip), lambda L, x, ip: _F(L).elu(x, inplace=ip)),
    "ReLU6": (lambda L, ip: _nn(L).ReLU6(ip), lambda L, x, ip: _F(L).relu6(x, ip)),
    "SiLU": (lambda L, ip: _nn(L).SiLU(ip), lambda L, x, ip: _F(L).silu(x, ip)),
    "Hardtanh": (
        lambda L, ip: _nn(L).Hardtanh(-2.0, 3.0, ip),
        lambda L, x, ip: _F(L).hardtanh(x, -2.0, 3.0, ip),
    ),
    "Hardtanh_kw": (
        lambda L, ip: _nn(L).Hardtanh(inplace=ip),
        lambda L, x, ip: _F(L).hardtanh(x, inplace=ip),
    ),
    "Hardswish": (lambda L, ip: _nn(L).Hardswish(ip), lambda L, x, ip: _F(L).hardswish(x, ip)),
    "Mish": (lambda L, ip: _nn(L).Mish(ip), lambda L, x, ip: _F(L).mish(x, ip)),
    "SELU": (lambda L, ip: _nn(L).SELU(ip), lambda L, x, ip: _F(L).selu(x, ip)),
    "CELU": (lambda L, ip: _nn(L).CELU(1.5, ip), lambda L, x, ip: _F(L).celu(x, 1.5, ip)),
    "CELU_kw": (lambda L, ip: _nn(L).CELU(inplace=ip), lambda L, x, ip: _F(L).celu(x, inplace=ip)),
    "Threshold": (
        lambda L, ip: _nn(L).Threshold(0.1, 20.0, ip),
        lambda L, x, ip: _F(L).threshold(x, 0.1, 20.0, ip),
    ),
    "Threshold_kw": (
        lambda L, ip: _nn(L).Threshold(0.5, -1.0, inplace=ip),
        lambda L, x, ip: _F(L).threshold(x, 0.5, -1.0, inplace=ip),
    ),
}


def _apply(lib, name, form, inplace):
    module, function = ACTIVATIONS[name]
    if form == "module":
        m = module(lib, inplace)
        return lambda x: m(x)
    return lambda x: function(lib, x, inplace)


def _np(t):
    return np.asarray(t.detach().tolist(), dtype=np.float64)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the class is what is compared)
        return type(e)
    return None


def _both(fn):
    return fn(torch), fn(tg)


CASES = [(n, f, ip) for n in ACTIVATIONS for f in ("module", "functional") for ip in (False, True)]
IDS = [f"{n}-{f}-{'inplace' if ip else 'copy'}" for n, f, ip in CASES]


@pytest.mark.parametrize(("name", "form", "inplace"), CASES, ids=IDS)
def test_values_identity_and_input_afterwards(name, form, inplace):
    def run(lib):
        x = lib.tensor(DATA)
        out = _apply(lib, name, form, inplace)(x)
        return _np(out), out is x, _np(x)

    (t_out, t_is, t_x), (g_out, g_is, g_x) = _both(run)
    np.testing.assert_allclose(g_out, t_out, rtol=1e-5, atol=1e-6)
    assert g_is == t_is == inplace
    np.testing.assert_allclose(g_x, t_x, rtol=1e-5, atol=1e-6)
    if inplace:
        np.testing.assert_allclose(g_x, g_out)
    else:
        np.testing.assert_allclose(g_x, DATA)


@pytest.mark.parametrize(("name", "form", "inplace"), CASES, ids=IDS)
def test_gradients_on_a_non_leaf(name, form, inplace):
    def run(lib):
        x = lib.tensor(DATA, requires_grad=True)
        y = x * 1
        out = _apply(lib, name, form, inplace)(y)
        (out * lib.tensor(WEIGHTS)).sum().backward()
        return _np(out), out is y, _np(y), _np(x.grad)

    (t_out, t_is, t_y, t_grad), (g_out, g_is, g_y, g_grad) = _both(run)
    np.testing.assert_allclose(g_out, t_out, rtol=1e-5, atol=1e-6)
    assert g_is == t_is == inplace
    np.testing.assert_allclose(g_y, t_y, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g_grad, t_grad, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("name", "form", "inplace"), CASES, ids=IDS)
def test_on_a_leaf_that_requires_grad(name, form, inplace):
    def run(lib):
        x = lib.tensor(DATA, requires_grad=True)
        return _error(lambda: _apply(lib, name, form, inplace)(x)), _np(x)

    (t_err, t_x), (g_err, g_x) = _both(run)
    assert g_err is t_err
    assert (t_err is RuntimeError) == inplace
    np.testing.assert_allclose(g_x, t_x)
    np.testing.assert_allclose(g_x, DATA)  # the leaf is left as it was


@pytest.mark.parametrize(("name", "form", "inplace"), CASES, ids=IDS)
def test_on_a_leaf_under_no_grad(name, form, inplace):
    def run(lib):
        x = lib.tensor(DATA, requires_grad=True)
        with lib.no_grad():
            out = _apply(lib, name, form, inplace)(x)
        return out is x, _np(x), x.grad_fn is None, x.requires_grad

    t, g = _both(run)
    assert g[0] == t[0] == inplace
    np.testing.assert_allclose(g[1], t[1], rtol=1e-5, atol=1e-6)
    assert g[2:] == t[2:]


@pytest.mark.parametrize(("name", "form", "inplace"), CASES, ids=IDS)
def test_overwriting_a_value_saved_for_backward(name, form, inplace):
    """``exp`` keeps its output for backward; an in-place activation of it makes backward fail
    (the version check), an out-of-place one does not."""

    def run(lib):
        x = lib.tensor(DATA, requires_grad=True)
        y = x.exp()
        out = _apply(lib, name, form, inplace)(y)
        err = _error(lambda: out.sum().backward())
        return err, None if err else _np(x.grad)

    (t_err, t_grad), (g_err, g_grad) = _both(run)
    assert g_err is t_err
    assert (t_err is RuntimeError) == inplace
    if not inplace:
        np.testing.assert_allclose(g_grad, t_grad, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("form", ["module", "functional"])
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_in_place_through_a_view(name, form):
    def run(lib):
        x = lib.tensor(DATA, requires_grad=True)
        y = x * 1
        v = y[2:6]
        out = _apply(lib, name, form, True)(v)
        (y * lib.tensor(WEIGHTS)).sum().backward()
        return out is v, _np(y), _np(x.grad)

    (t_is, t_y, t_grad), (g_is, g_y, g_grad) = _both(run)
    assert g_is and t_is
    np.testing.assert_allclose(g_y, t_y, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g_grad, t_grad, rtol=1e-5, atol=1e-6)


def test_threshold_in_place_matches_pytorch_on_the_threshold_itself():
    def run(lib):
        x = lib.tensor([0.1, 0.0999, 0.1001, -5.0])
        lib.nn.functional.threshold(x, 0.1, 7.0, inplace=True)
        return _np(x)

    t, g = _both(run)
    np.testing.assert_allclose(g, t)


# -- repr ------------------------------------------------------------------------------------
REPRS = [
    "ReLU()", "ReLU(True)", "ReLU(inplace=True)", "LeakyReLU()", "LeakyReLU(0.2, True)",
    "LeakyReLU(inplace=True)", "ELU()", "ELU(0.5, True)", "ELU(inplace=True)", "ReLU6()",
    "ReLU6(True)", "SiLU()", "SiLU(inplace=True)", "Hardtanh()", "Hardtanh(-2.0, 2.0, True)",
    "Hardtanh(inplace=True)", "Hardswish()", "Hardswish(inplace=True)", "Mish()", "Mish(True)",
    "SELU()", "SELU(inplace=True)", "CELU()", "CELU(2.0, True)", "Threshold(0.1, 20.0)",
    "Threshold(0.1, 20.0, True)", "Threshold(0.1, 20.0, inplace=True)", "Dropout(0.3, True)",
    "Dropout(inplace=True)", "Dropout2d()", "Dropout2d(0.3, True)",
]  # fmt: skip


@pytest.mark.parametrize("expr", REPRS)
def test_repr_shows_inplace_as_pytorch(expr):
    t, g = (repr(eval(f"lib.nn.{expr}", {"lib": lib})) for lib in (torch, tg))  # noqa: S307
    assert g == t
    assert eval(f"lib.nn.{expr}", {"lib": tg}).inplace == ("True" in expr)  # noqa: S307


def test_dropout_repr_says_inplace_as_pytorch_does():
    """PyTorch writes ``Dropout(p=0.5, inplace=False)``, and so does the library."""
    assert repr(tg.nn.Dropout()) == repr(torch.nn.Dropout()) == "Dropout(p=0.5, inplace=False)"
    assert repr(tg.nn.Dropout(0.2, inplace=True)) == repr(torch.nn.Dropout(0.2, inplace=True))


# -- dropout ---------------------------------------------------------------------------------
DROPOUTS = {
    "Dropout": (
        lambda L, p, ip: _nn(L).Dropout(p, ip),
        lambda L, x, p, ip: _F(L).dropout(x, p, True, ip),
        (4000,),
    ),
    "Dropout_kw": (
        lambda L, p, ip: _nn(L).Dropout(p=p, inplace=ip),
        lambda L, x, p, ip: _F(L).dropout(x, p, training=True, inplace=ip),
        (50, 80),
    ),
    "Dropout2d": (
        lambda L, p, ip: _nn(L).Dropout2d(p, ip),
        lambda L, x, p, ip: _F(L).dropout2d(x, p, True, ip),
        (40, 100, 2, 3),
    ),
}
DROP_CASES = [(n, f, ip) for n in DROPOUTS for f in ("module", "functional")
              for ip in (False, True)]  # fmt: skip
DROP_IDS = [f"{n}-{f}-{'inplace' if ip else 'copy'}" for n, f, ip in DROP_CASES]


def _dropout(lib, name, form, p, inplace):
    module, function, _ = DROPOUTS[name]
    if form == "module":
        m = module(lib, p, inplace)
        return lambda x: m(x)
    return lambda x: function(lib, x, p, inplace)


def _drop_input(lib, name, **kw):
    shape = DROPOUTS[name][2]
    data = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32).reshape(shape) / 100 + 0.5
    return lib.tensor(data, **kw), data


@pytest.mark.parametrize("p", [0.0, 1.0])
@pytest.mark.parametrize(("name", "form", "inplace"), DROP_CASES, ids=DROP_IDS)
def test_dropout_exact_for_p_0_and_1(name, form, inplace, p):
    def run(lib):
        lib.manual_seed(0)
        x, _ = _drop_input(lib, name)
        out = _dropout(lib, name, form, p, inplace)(x)
        return tuple(out.shape), out is x, _np(out), _np(x)

    (t_shape, t_is, t_out, t_x), (g_shape, g_is, g_out, g_x) = _both(run)
    assert g_shape == t_shape
    assert g_is == t_is
    if inplace:
        assert g_is
    np.testing.assert_array_equal(g_out, t_out)
    np.testing.assert_array_equal(g_x, t_x)


@pytest.mark.parametrize(("name", "form", "inplace"), DROP_CASES, ids=DROP_IDS)
def test_dropout_in_eval_mode_returns_the_input(name, form, inplace):
    def run(lib):
        x, data = _drop_input(lib, name)
        if form == "module":
            m = DROPOUTS[name][0](lib, 0.5, inplace).eval()
            out = m(x)
        else:
            fn = (
                _F(lib).dropout
                if name.startswith("Dropout_") or name == "Dropout"
                else _F(lib).dropout2d
            )
            out = fn(x, 0.5, False, inplace)
        return out is x, np.array_equal(_np(x), data.astype(np.float64))

    t, g = _both(run)
    assert g == t == (True, True)


@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
@pytest.mark.parametrize(("name", "form", "inplace"), DROP_CASES, ids=DROP_IDS)
def test_dropout_statistics_and_scaling(name, form, inplace, p):
    """Masks differ between the libraries: each keeps about ``1 - p`` of the elements (of the
    channels, for Dropout2d), scaled by ``1/(1-p)``, and the rest are zero."""
    channels = name == "Dropout2d"

    def run(lib):
        lib.manual_seed(1)
        x, data = _drop_input(lib, name)
        out = _dropout(lib, name, form, p, inplace)(x)
        got = _np(out)
        kept = got != 0
        np.testing.assert_allclose(got[kept], data[kept] / (1 - p), rtol=1e-5)
        if channels:  # whole channels: all kept or all dropped
            per = kept.reshape(kept.shape[0] * kept.shape[1], -1)
            assert (per.all(axis=1) | ~per.any(axis=1)).all()
            frac = per.all(axis=1).mean()
            n = per.shape[0]
        else:
            frac, n = kept.mean(), kept.size
        assert abs(frac - (1 - p)) < 5 * np.sqrt(p * (1 - p) / n)
        modified = not np.array_equal(_np(x), data.astype(np.float64))
        return tuple(out.shape), out is x, modified, np.array_equal(_np(x), got)

    t, g = _both(run)
    assert g == t == (DROPOUTS[name][2], inplace, inplace, inplace)


@pytest.mark.parametrize(("name", "form", "inplace"), DROP_CASES, ids=DROP_IDS)
def test_dropout_gradients_on_a_non_leaf(name, form, inplace):
    p = 0.4

    def run(lib):
        lib.manual_seed(2)
        x, data = _drop_input(lib, name, requires_grad=True)
        y = x * 1
        out = _dropout(lib, name, form, p, inplace)(y)
        out.sum().backward()
        # the gradient is the mask: 1/(1-p) where kept, 0 where dropped
        np.testing.assert_allclose(_np(x.grad) * data, _np(out), rtol=1e-5)
        return out is y, set(np.round(np.unique(_np(x.grad)), 5))

    t, g = _both(run)
    assert g == t
    assert g[0] == inplace


@pytest.mark.parametrize("p", [0.0, 0.5])
@pytest.mark.parametrize(("name", "form", "inplace"), DROP_CASES, ids=DROP_IDS)
def test_dropout_on_a_leaf_that_requires_grad(name, form, inplace, p):
    def run(lib):
        x, _ = _drop_input(lib, name, requires_grad=True)
        return _error(lambda: _dropout(lib, name, form, p, inplace)(x))

    t, g = _both(run)
    assert g is t
    assert (t is RuntimeError) == (inplace and p > 0)


@pytest.mark.parametrize(
    ("name", "form"), [(n, f) for n in DROPOUTS for f in ("module", "functional")]
)
def test_dropout_in_place_overwrites_a_value_saved_for_backward(name, form):
    def run(lib):
        lib.manual_seed(3)
        x, _ = _drop_input(lib, name, requires_grad=True)
        y = (x / 100).exp()
        _dropout(lib, name, form, 0.5, True)(y)
        return _error(lambda: y.sum().backward())

    t, g = _both(run)
    assert g is t is RuntimeError
