"""The everyday names of round 2, each against PyTorch: histograms, ``tg.distributions``,
``tg.fft``, ``tg.special``, ``tg.jit``, ``tg.set_printoptions`` and the small Tensor methods
(``empty_strided``, ``masked_scatter``, ``cumsum_``, ``resize_``, ``char``/``byte``/
``bfloat16``). Values and gradients in float64; errors of the same type as PyTorch's."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
import tinygrad_edu.distributions as D
from tinygrad_edu.distributions import Categorical

LIBS = (tg, torch)


def _np(t):
    return t.detach().numpy()


def _grad(L, out, inputs):
    fn = torch.autograd.grad if L is torch else tg.grad
    return fn(out, inputs, allow_unused=True)


def _close(a, b, rtol=1e-12, atol=1e-12):
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, equal_nan=True)


def _both(fn, *arrays, rtol=1e-12, atol=1e-12, grads=True):
    """``fn(L, *leaves)`` in both libraries: the outputs and the gradients of a random
    projection of them agree."""
    results = []
    for L in LIBS:
        leaves = [L.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
        out = fn(L, *leaves)
        outs = out if isinstance(out, tuple) else (out,)
        rng = np.random.default_rng(7)
        wanted = [leaf for leaf in leaves if leaf.requires_grad]
        floats = [o for o in outs if o.requires_grad]
        grad = ()
        if grads and floats and wanted:
            total = sum((o * L.tensor(rng.standard_normal(tuple(o.shape)))).sum() for o in floats)
            grad = _grad(L, total, wanted)
        results.append((outs, grad))
    (ours, our_grad), (theirs, their_grad) = results
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype) == str(b.dtype).removeprefix("torch.")
        _close(a, b, rtol, atol)
    assert len(our_grad) == len(their_grad)
    for a, b in zip(our_grad, their_grad):
        assert (a is None) == (b is None)
        if a is not None:
            _close(a, b, max(rtol, 1e-10), max(atol, 1e-10))


def _same_error(fn, kind):
    """``fn(L)`` raises ``kind`` in both libraries."""
    for L in LIBS:
        with pytest.raises(kind):
            fn(L)


_rng = np.random.default_rng(0)
_x = _rng.standard_normal(40)
_wide = _rng.uniform(-6, 6, (3, 5)) + 0.013
_pos = _rng.uniform(0.2, 4.0, (3, 5))
_unit = _rng.uniform(0.05, 0.95, (4,))


# -- 1. histogram and histc ------------------------------------------------------------------
@pytest.mark.parametrize("kw", [dict(bins=5), dict(bins=4, range=(-1.0, 1.0)),
                                dict(bins=3, density=True)])  # fmt: skip
def test_histogram_matches_pytorch(kw):
    ours, theirs = tg.histogram(tg.tensor(_x), **kw), torch.histogram(torch.tensor(_x), **kw)
    assert type(ours).__name__ == "histogram" and ours._fields == ("hist", "bin_edges")
    _close(ours.hist, theirs.hist)
    _close(ours.bin_edges, theirs.bin_edges)
    hist, edges = ours  # unpacks as a pair
    assert hist is ours.hist and edges is ours.bin_edges


def test_histogram_with_edges_weights_and_a_constant_input():
    edges, w = np.array([-1.0, 0.0, 0.5, 2.0]), _rng.uniform(0, 1, 40)
    _both(lambda L, x: L.histogram(x.detach(), L.tensor(edges)).hist, _x)
    _both(lambda L, x: L.histogram(x.detach(), 3, weight=L.tensor(w)).hist, _x)
    _both(lambda L, x: L.histogram(x.detach(), 2).bin_edges, np.array([2.0, 2.0]))
    _both(lambda L, x: x.detach().histogram(3, density=True, weight=L.tensor(w)).hist, _x)
    out = tg.histogram(tg.tensor(_x, requires_grad=True), 3)
    assert not out.hist.requires_grad  # counts: no gradient, as in PyTorch


def test_histogram_and_histc_errors():
    _same_error(lambda L: L.histogram(L.tensor([1, 2, 3]), 3), NotImplementedError)
    _same_error(lambda L: L.histc(L.tensor([1, 2, 3]), 3), NotImplementedError)
    _same_error(lambda L: L.histogram(L.tensor(_x), 3, weight=L.ones(3, dtype=L.float64)),
                RuntimeError)  # fmt: skip
    _same_error(lambda L: L.histogram(L.tensor(_x), 0), RuntimeError)
    _same_error(lambda L: L.histc(L.tensor(_x), bins=3, min=2, max=1), RuntimeError)
    with pytest.raises(ValueError, match="range"):
        tg.histogram(tg.tensor(_x), 3, range=(1.0, -1.0))
    with pytest.raises(NotImplementedError, match=r"x\.float\(\)"):
        tg.histc(tg.tensor([1, 2]))


@pytest.mark.parametrize("kw", [dict(), dict(bins=7), dict(bins=4, min=-1, max=1),
                                dict(bins=3, min=0.5, max=0.5)])  # fmt: skip
def test_histc_matches_pytorch(kw):
    _both(lambda L, x: L.histc(x, **kw), _x)
    _both(lambda L, x: x.histc(**kw), _x.reshape(5, 8))


# -- 2. distributions ------------------------------------------------------------------------
def test_the_import_forms():
    import tinygrad_edu.distributions as dists

    assert dists is tg.distributions and Categorical is dists.Categorical
    assert D.kl.kl_divergence is D.kl_divergence


def _normal(L, loc, scale):
    d = L.distributions.Normal(loc, scale)
    value = L.tensor(np.array([0.3, -1.2, 2.0]))
    return (d.log_prob(value), d.entropy(), d.mean, d.stddev, d.variance, d.cdf(value),
            d.icdf(L.tensor(np.array([0.2, 0.5, 0.9]))))  # fmt: skip


def test_normal_matches_pytorch():
    _both(_normal, np.array([0.1, -0.5, 1.0]), np.array([0.5, 1.5, 2.0]))
    for L in LIBS:
        d = L.distributions.Normal(L.zeros(2, 3), 1.0)
        assert tuple(d.batch_shape) == (2, 3) and tuple(d.event_shape) == ()
        assert tuple(d.sample((4,)).shape) == (4, 2, 3) and d.has_rsample


def _uniform(L, low, high):
    d = L.distributions.Uniform(low, high)
    value = L.tensor(np.array([0.3, 0.1, 2.5]))
    return d.log_prob(value), d.entropy(), d.mean, d.stddev, d.variance, d.cdf(value)


def test_uniform_matches_pytorch():
    _both(_uniform, np.array([0.0, -0.5, 1.0]), np.array([0.5, 1.5, 3.0]))


@pytest.mark.parametrize("given", ["probs", "logits"])
def test_bernoulli_matches_pytorch(given):
    def fn(L, p):
        d = L.distributions.Bernoulli(**{given: p})
        value = L.tensor(np.array([1.0, 0.0, 1.0, 0.0]))
        return d.log_prob(value), d.entropy(), d.mean, d.variance, d.probs, d.logits

    _both(fn, _unit if given == "probs" else _wide[0, :4])


@pytest.mark.parametrize("given", ["probs", "logits"])
def test_categorical_matches_pytorch(given):
    param = _pos if given == "probs" else _wide

    def fn(L, p):
        d = L.distributions.Categorical(**{given: p})
        value = L.tensor(np.array([0, 4, 2]))
        return d.log_prob(value), d.entropy(), d.probs, d.logits

    _both(fn, param)
    for L in LIBS:
        d = L.distributions.Categorical(**{given: L.tensor(param)})
        assert tuple(d.batch_shape) == (3,) and tuple(d.event_shape) == ()
        sample = d.sample((2,))
        assert tuple(sample.shape) == (2, 3) and str(sample.dtype).endswith("int64")
        assert bool(((sample >= 0) & (sample < 5)).all())


@pytest.mark.parametrize("family", ["Normal", "Uniform", "Bernoulli", "Categorical"])
def test_kl_divergence_matches_pytorch(family):
    def fn(L, a, b, c, d):
        M = L.distributions
        if family == "Normal":
            p, q = M.Normal(a, b), M.Normal(c, d)
        elif family == "Uniform":
            p, q = M.Uniform(a - b, a + b), M.Uniform(c - d, c + d)
        elif family == "Bernoulli":
            p, q = M.Bernoulli(logits=a), M.Bernoulli(probs=b / (b + d))
        else:
            p, q = M.Categorical(logits=L.stack([a, c])), M.Categorical(probs=L.stack([b, d]))
        return M.kl_divergence(p, q)

    arrays = (_wide[0], _pos[0], _wide[1], _pos[1])
    if family == "Uniform":
        arrays = (_wide[0], _pos[0] + 3, _wide[0] + 0.1, _pos[0] + 4)  # mixes finite and inf
    _both(fn, *arrays)


def test_kl_divergence_edges_and_unknown_pairs():
    def fn(L, p0, q0):
        M = L.distributions
        return (M.kl_divergence(M.Bernoulli(probs=p0), M.Bernoulli(probs=q0)),
                M.kl_divergence(M.Categorical(probs=L.stack([p0, 1 - p0], -1)),
                                M.Categorical(probs=L.stack([q0, 1 - q0], -1))))  # fmt: skip

    _both(fn, np.array([0.0, 0.3, 1.0, 0.5]), np.array([0.2, 0.0, 0.7, 1.0]), grads=False)
    _same_error(lambda L: L.distributions.kl_divergence(
        L.distributions.Categorical(L.tensor([0.5, 0.5])), L.distributions.Normal(0.0, 1.0)),
        NotImplementedError)  # fmt: skip


def test_rsample_is_reparameterised():
    loc = tg.tensor([0.5, -1.0], dtype=tg.float64, requires_grad=True)
    scale = tg.tensor([2.0, 0.5], dtype=tg.float64, requires_grad=True)
    x = D.Normal(loc, scale).rsample((1000,))
    g_loc, g_scale = tg.grad(x.sum(), [loc, scale])
    eps = (x.detach() - loc.detach()) / scale.detach()
    np.testing.assert_allclose(g_loc.numpy(), [1000.0, 1000.0])
    np.testing.assert_allclose(g_scale.numpy(), eps.sum(0).numpy(), rtol=1e-12)
    low = tg.tensor(1.0, dtype=tg.float64, requires_grad=True)
    high = tg.tensor(3.0, dtype=tg.float64, requires_grad=True)
    u = D.Uniform(low, high).rsample((500,))
    g_low, g_high = tg.grad(u.sum(), [low, high])
    frac = ((u.detach() - 1.0) / 2.0).sum().item()
    np.testing.assert_allclose([g_low.item(), g_high.item()], [500 - frac, frac], rtol=1e-12)
    assert not D.Normal(loc, scale).sample((3,)).requires_grad


def test_sampling_follows_the_library_generator():
    draws = []
    for _ in range(2):
        tg.manual_seed(123)
        draws.append([D.Normal(0.0, 1.0).sample((5,)), D.Uniform(0.0, 2.0).sample((5,)),
                      D.Bernoulli(probs=0.3).sample((5,)),
                      Categorical(probs=tg.tensor([0.2, 0.5, 0.3])).sample((5,))])  # fmt: skip
    for a, b in zip(*draws):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    tg.manual_seed(0)
    big = D.Normal(tg.tensor(3.0, dtype=tg.float64), 2.0).sample((20000,))
    assert abs(big.mean().item() - 3.0) < 0.1 and abs(big.std().item() - 2.0) < 0.1
    counts = Categorical(probs=tg.tensor([0.2, 0.5, 0.3])).sample((20000,))
    freq = [(counts == k).float().mean().item() for k in range(3)]
    np.testing.assert_allclose(freq, [0.2, 0.5, 0.3], atol=0.02)
    b = D.Bernoulli(logits=tg.tensor(0.0)).sample((20000,))
    assert abs(b.mean().item() - 0.5) < 0.02 and set(b.unique().tolist()) <= {0.0, 1.0}


def test_arguments_and_values_are_validated_as_in_pytorch():
    M = "distributions"
    _same_error(lambda L: getattr(L, M).Normal(0.0, -1.0), ValueError)
    _same_error(lambda L: getattr(L, M).Normal(0.0, 0.0), ValueError)
    _same_error(lambda L: getattr(L, M).Uniform(1.0, 0.0), ValueError)
    _same_error(lambda L: getattr(L, M).Bernoulli(probs=L.tensor(1.5)), ValueError)
    _same_error(lambda L: getattr(L, M).Bernoulli(probs=0.5, logits=0.0), ValueError)
    _same_error(lambda L: getattr(L, M).Bernoulli(), ValueError)
    _same_error(lambda L: getattr(L, M).Categorical(probs=L.tensor([0.5, -0.1, 0.6])),
                ValueError)  # fmt: skip
    _same_error(lambda L: getattr(L, M).Categorical(L.tensor([0.5]), L.tensor([0.0])),
                ValueError)  # fmt: skip
    _same_error(lambda L: getattr(L, M).Bernoulli(probs=0.5).log_prob(L.tensor(0.5)),
                ValueError)  # fmt: skip
    _same_error(lambda L: getattr(L, M).Uniform(0.0, 1.0).log_prob(L.tensor(1.5)), ValueError)
    _same_error(lambda L: getattr(L, M).Categorical(L.tensor([0.5, 0.5])).log_prob(
        L.tensor(2)), ValueError)  # fmt: skip
    with pytest.raises(ValueError, match=r"scale.*GreaterThan"):
        D.Normal(0.0, -1.0)
    for L in LIBS:  # validate_args=False: no check, the values PyTorch gives
        d = getattr(L, M).Normal(0.0, -1.0, validate_args=False)
        assert math.isnan(d.log_prob(L.tensor(0.0)).item())


# -- 3. fft ------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
def test_fftfreq_and_rfftfreq_match_pytorch(n):
    for d, dtype in ((1.0, None), (0.1, "float64")):
        for name in ("fftfreq", "rfftfreq"):
            ours = getattr(tg.fft, name)(n, d, dtype=dtype and tg.float64)
            theirs = getattr(torch.fft, name)(n, d, dtype=dtype and torch.float64)
            assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("dim", [None, 0, (1, 2), -1])
def test_fftshift_and_ifftshift_match_pytorch(dim):
    x = _rng.standard_normal((2, 3, 5))
    _both(lambda L, t: L.fft.fftshift(t, dim), x)
    _both(lambda L, t: L.fft.ifftshift(t, dim), x)
    _both(lambda L, t: L.fft.ifftshift(L.fft.fftshift(t, dim), dim), x)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft"])
def test_complex_transforms_say_what_to_use(name):
    with pytest.raises(NotImplementedError, match=rf"np\.fft\.{name}.*fftfreq"):
        getattr(tg.fft, name)(tg.ones(4))


# -- 4. special ----------------------------------------------------------------------------------
_UNARY = ["erf", "erfc", "erfinv", "expit", "gammaln", "digamma", "psi", "log1p", "expm1",
          "exp2", "sinc", "entr", "ndtr", "i0", "i1"]  # fmt: skip


@pytest.mark.parametrize("name", _UNARY)
def test_special_functions_match_pytorch(name):
    x = _unit if name == "erfinv" else _pos if name in ("log1p", "entr") else _wide
    # PyTorch's polygamma(1, x) (digamma's derivative) is off by up to 5e-10 in places
    _both(lambda L, t: getattr(L.special, name)(t), x,
          rtol=1e-9 if name in ("digamma", "psi") else 1e-10)  # fmt: skip


def test_special_functions_with_arguments_match_pytorch():
    _both(lambda L, t: L.special.logit(t, eps=0.2), _unit)
    _both(lambda L, t: L.special.logit(t), _unit)
    _both(lambda L, a, b: L.special.xlogy(a, b), _wide, _pos)
    _both(lambda L, t: L.special.polygamma(2, t), _pos, rtol=1e-10)
    _both(lambda L, t: L.special.softmax(t, 1), _wide)
    _both(lambda L, t: L.special.log_softmax(t, dim=0), _wide)
    _both(lambda L, t: L.special.logsumexp(t, 1), _wide)
    _same_error(lambda L: L.special.softmax(L.ones(3)), TypeError)  # dim is required
    _same_error(lambda L: L.polygamma(-1, L.ones(3)), RuntimeError)


def test_special_values_at_poles_and_edges_match_pytorch():
    edges = np.array([0.0, -1.0, -2.0, -2.5, 1.0, 2.0, np.inf, -np.inf, np.nan])
    for name in ("lgamma", "digamma"):
        _both(lambda L, t, name=name: getattr(L, name)(t), edges, grads=False)
    _both(lambda L, t: L.erfinv(t), np.array([1.0, -1.0, 1.5, 0.0, 1 - 1e-15, -1 + 1e-12]),
          rtol=1e-12, grads=False)  # fmt: skip
    _both(lambda L, t: L.special.entr(t), np.array([0.0, -1.0, 2.0, np.inf]), grads=False)
    _both(lambda L, t: L.erfc(t), np.array([-30.0, -6.0, 5.0, 10.0, 26.0]), grads=False)
    _both(lambda L, t: L.sinc(t), np.array([0.0, 1.0, -2.0, 0.5]))


def test_second_derivatives_match_pytorch():
    for name in ("lgamma", "digamma", "erfinv", "i0", "erfc", "sinc"):
        x = _unit if name == "erfinv" else _wide[0]
        res = []
        for L in LIBS:
            t = L.tensor(x, requires_grad=True)
            grad = torch.autograd.grad if L is torch else tg.grad
            (g,) = grad(getattr(L, name)(t).sum(), [t], create_graph=True)
            (h,) = grad((g * g).sum(), [t])
            res.append(_np(h))
        np.testing.assert_allclose(res[0], res[1], rtol=1e-9, atol=1e-10, err_msg=name)


def test_sinc_curvature_at_zero():
    x = tg.tensor(0.0, dtype=tg.float64, requires_grad=True)
    (g,) = tg.grad(tg.sinc(x), [x], create_graph=True)
    (h,) = tg.grad(g, [x])
    assert g.item() == 0.0
    np.testing.assert_allclose(h.item(), -math.pi**2 / 3, rtol=1e-12)
    step = 1e-4  # against a central difference of the values
    f = [tg.sinc(tg.tensor(v, dtype=tg.float64)).item() for v in (-step, 0.0, step)]
    np.testing.assert_allclose(h.item(), (f[0] - 2 * f[1] + f[2]) / step**2, rtol=1e-6)


def test_special_names_are_methods_and_functions_as_in_pytorch():
    t = tg.tensor(_pos)
    for name in ("lgamma", "digamma", "erfinv", "erfc", "sinc", "i0"):
        assert hasattr(torch.Tensor, name) and hasattr(torch, name)
        np.testing.assert_array_equal(getattr(t, name)().numpy(), getattr(tg, name)(t).numpy())
    assert tg.special.gammaln is tg.lgamma and tg.special.psi is tg.digamma
    y = tg.tensor(_unit) * 1
    assert y.erfinv_() is y and y._version == 1


# -- 5. jit ------------------------------------------------------------------------------------
def test_jit_pass_throughs():
    calls = []

    def fn(x):
        calls.append(1)
        return x * 2

    assert tg.jit.script(fn) is fn
    assert tg.jit.trace(fn, tg.ones(2)) is fn and len(calls) == 1  # run once on the example
    assert tg.jit.trace(fn, (tg.ones(2),)) is fn and len(calls) == 2
    model = tg.nn.Linear(3, 2)
    assert tg.jit.trace(model, tg.ones(1, 3)) is model and tg.jit.script(model) is model
    assert tg.jit.ignore(fn) is fn and tg.jit.ignore(drop=True)(fn) is fn
    assert tg.jit.unused(fn) is fn
    assert not tg.jit.is_scripting()
    with pytest.raises(TypeError):
        tg.jit.trace(3, tg.ones(1))
    with pytest.raises(tg.ShapeError):  # an error in the example run shows at trace time
        tg.jit.trace(model, tg.ones(1, 4))


@pytest.mark.parametrize("name", ["save", "load"])
def test_jit_save_and_load_name_the_state_dict(name):
    with pytest.raises(NotImplementedError, match=r"tg\.save\(model\.state_dict\(\)"):
        getattr(tg.jit, name)(tg.nn.Linear(2, 2), "m.pt")


# -- 6. set_printoptions -------------------------------------------------------------------------
_PRINTED = (np.array([1.12345, 200.5]), np.array([1e-5, 1.0]), np.arange(2000.0),
            np.arange(12.0).reshape(3, 4) * 1.5)  # fmt: skip


@pytest.mark.parametrize("options", [dict(precision=2), dict(sci_mode=True), dict(sci_mode=False),
                                     dict(profile="short"), dict(profile="full", linewidth=50),
                                     dict(threshold=5, edgeitems=1)])  # fmt: skip
def test_print_options_match_pytorch_and_reset(options):
    default = [repr(tg.tensor(v.astype(np.float32))) for v in _PRINTED]
    try:
        for L in LIBS:
            L.set_printoptions(**options)
        for v in _PRINTED:
            assert repr(tg.tensor(v.astype(np.float32))) == repr(torch.tensor(v.astype(
                np.float32)))  # fmt: skip
    finally:
        for L in LIBS:
            L.set_printoptions(profile="default")
    assert [repr(tg.tensor(v.astype(np.float32))) for v in _PRINTED] == default


def test_print_options_errors_leave_the_options_alone():
    before = repr(tg.tensor([1.12345]))
    with pytest.raises(ValueError, match="profile"):
        tg.set_printoptions(profile="huge")
    with pytest.raises(TypeError, match="sci_mode"):
        tg.set_printoptions(sci_mode="yes")
    with pytest.raises(TypeError, match="precision"):
        tg.set_printoptions(precision="4")
    assert repr(tg.tensor([1.12345])) == before


# -- 7. empty_strided, masked_scatter, cumsum_, resize_, char/byte/bfloat16 ---------------------
def test_empty_strided():
    for L in LIBS:
        t = L.empty_strided((2, 3), (3, 1), dtype=L.float64)
        assert tuple(t.shape) == (2, 3) and str(t.dtype).endswith("float64")
    _same_error(lambda L: L.empty_strided((2, 3), (1,)), RuntimeError)
    _same_error(lambda L: L.empty_strided((2,), (-1,)), RuntimeError)


def test_masked_scatter_in_place_and_errors():
    mask = np.array([True, False, True])

    def fn(L, x, s):
        y = x * 1
        out = y.masked_scatter_(L.tensor(mask), s)
        assert out is y
        return y

    _both(fn, _rng.standard_normal((2, 3)), _rng.standard_normal(5))
    _same_error(lambda L: L.ones(3, requires_grad=True).masked_scatter_(
        L.tensor(mask), L.ones(3)), RuntimeError)  # a leaf that requires grad
    _same_error(lambda L: L.zeros(3).masked_scatter_(L.ones(2, 3, dtype=L.bool), L.ones(6)),
                RuntimeError)  # fmt: skip
    _same_error(lambda L: L.zeros(3).masked_scatter(L.tensor(mask), L.ones(1)), RuntimeError)
    _same_error(lambda L: L.zeros(3).masked_scatter(L.ones(3), L.ones(3)), RuntimeError)
    with pytest.raises(RuntimeError, match="source.to"):
        tg.zeros(3).masked_scatter(tg.tensor(mask), tg.ones(3, dtype=tg.float64))


def test_cumsum_in_place():
    def fn(L, x):
        y = x * 1
        assert y.cumsum_(1) is y and y._version == 1
        return y

    _both(fn, _wide)
    _same_error(lambda L: L.ones(3).cumsum_(0, dtype=L.float64), RuntimeError)


def test_resize_():
    for sizes in ((6,), (2, 2), ((3, 2),), (0,)):
        res = []
        for L in LIBS:
            t = L.tensor(np.arange(6.0).reshape(2, 3))
            assert t.resize_(*sizes) is t
            res.append((tuple(t.shape), t.numpy().tolist(), t._version))
        assert res[0] == res[1]
    for L in LIBS:  # growing keeps the first elements (the rest: zeros here, unset in PyTorch)
        t = L.tensor([1.0, 2.0])
        t.resize_(2, 2)
        assert tuple(t.shape) == (2, 2) and t.numpy().ravel()[:2].tolist() == [1.0, 2.0]
    _same_error(lambda L: L.ones(3, requires_grad=True).resize_(2), RuntimeError)
    _same_error(lambda L: (L.ones(3, requires_grad=True) * 1).resize_(2), RuntimeError)
    with pytest.raises(RuntimeError, match=r"contiguous\(\)"):
        tg.ones(2, 3).t().resize_(6)
    base = tg.arange(6.0)
    view = base[:4]
    with pytest.raises(RuntimeError, match="view"):
        view.resize_(8)
    view.resize_(2, 2)
    view[0, 0] = 7.0  # a view that shrinks keeps sharing its base's memory
    assert base[0].item() == 7.0


def test_char_byte_and_bfloat16():
    x = np.array([-1.5, 2.7, 300.0])
    for name, dtype in (("char", "int8"), ("byte", "uint8")):
        ours = getattr(tg.tensor(x[:2]), name)()
        theirs = getattr(torch.tensor(x[:2]), name)()
        assert str(ours.dtype) == dtype == str(theirs.dtype).removeprefix("torch.")
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    with pytest.raises(TypeError, match=r"x\.half\(\).*x\.float\(\)"):
        tg.ones(2).bfloat16()
    with pytest.raises(AttributeError, match=r"tg\.float16"):
        tg.bfloat16  # noqa: B018
    assert not hasattr(tg, "bfloat16")
