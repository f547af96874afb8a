"""Module and optimizer state against PyTorch: ``state_dict`` aliases the weights,
``load_state_dict`` (copy, ``assign``, ``strict``, errors), BatchNorm's old checkpoints,
``vector_to_parameters``, optimizer state as tensors, and saving shared memory."""

import copy
import io

import numpy as np
import pytest
import torch

import tinygrad_edu as tg

LIBS = [pytest.param(tg, id="tg"), pytest.param(torch, id="torch")]


def _np(t):
    return np.asarray(t.detach().numpy())


def _shares(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    return np.shares_memory(a._data, b._data)


def _net(lib):
    """The same small network in both libraries (weights from one numpy generator)."""
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    rng = np.random.default_rng(1)
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    return net


def _x(lib):
    return lib.tensor(np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32))


def _train(lib, net, opt, steps):
    for _ in range(steps):
        opt.zero_grad()
        net(_x(lib)).pow(2).sum().backward()
        opt.step()


# -- 1. state_dict aliases ---------------------------------------------------------------------
@pytest.mark.parametrize("lib", LIBS)
def test_state_dict_values_alias_the_parameters(lib):
    net = _net(lib)
    sd = net.state_dict()
    w = net[0].weight
    assert not sd["0.weight"].requires_grad and sd["0.weight"] is not w
    assert _shares(sd["0.weight"], w)
    before = _np(sd["0.weight"]).copy()
    opt = lib.optim.SGD(net.parameters(), lr=0.1)
    _train(lib, net, opt, 1)
    np.testing.assert_array_equal(_np(sd["0.weight"]), _np(w))  # the step shows in sd
    assert not np.array_equal(_np(sd["0.weight"]), before)
    net[2].bias.data.add_(1)
    np.testing.assert_array_equal(_np(sd["2.bias"]), _np(net[2].bias))


def _best_then_restore(lib, deep):
    net = _net(lib)
    opt = lib.optim.SGD(net.parameters(), lr=0.1)
    best = copy.deepcopy(net.state_dict()) if deep else net.state_dict()
    _train(lib, net, opt, 2)
    net.load_state_dict(best)
    return _np(net(_x(lib)))


@pytest.mark.parametrize("deep", [False, True])
def test_best_state_pattern_agrees_with_torch(deep):
    ours, ref = _best_then_restore(tg, deep), _best_then_restore(torch, deep)
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)
    untrained = _np(_net(torch)(_x(torch)))
    assert np.allclose(ref, untrained) == deep  # only the deep copy restores anything


@pytest.mark.parametrize("lib", LIBS)
def test_deepcopy_keep_vars_prefix_destination(lib):
    net = _net(lib)
    sd = copy.deepcopy(net.state_dict())
    assert not _shares(sd["0.weight"], net[0].weight)
    kv = net.state_dict(keep_vars=True)
    assert kv["0.weight"] is net[0].weight and kv["2.bias"] is net[2].bias
    assert list(net.state_dict(prefix="x.")) == ["x.0.weight", "x.0.bias", "x.2.weight",
                                                 "x.2.bias"]  # fmt: skip
    dest = {"other": 1}
    assert net.state_dict(destination=dest) is dest and list(dest)[1:] == list(net.state_dict())


def test_state_dict_keys_and_types_match_torch():
    ours, ref = tg.nn.BatchNorm1d(3).state_dict(), torch.nn.BatchNorm1d(3).state_dict()
    assert list(ours) == list(ref) and type(ours) is type(ref)
    for k in ref:
        assert isinstance(ours[k], tg.Tensor) and str(ours[k].dtype) == str(ref[k].dtype)[6:]


def test_save_and_load_of_tensor_state_dicts(tmp_path):
    a, b = _net(tg), tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.ReLU(), tg.nn.Linear(4, 2))
    assert not np.allclose(_np(a[0].weight), _np(b[0].weight))
    path = tg.save(a.state_dict(), tmp_path / "a.pt")
    loaded = tg.load(path)
    assert all(isinstance(v, tg.Tensor) for v in loaded.values())
    with np.load(path, allow_pickle=False) as f:  # still one array per name, for numpy
        np.testing.assert_array_equal(f["0.weight"], _np(a[0].weight))
    b.load_state_dict(loaded)
    np.testing.assert_array_equal(_np(b(_x(tg))), _np(a(_x(tg))))
    b.load_state_dict({k: _np(v) for k, v in a.state_dict().items()})  # numpy values too
    b.load_state_dict(_net(torch).state_dict())  # and a PyTorch state dict
    np.testing.assert_allclose(_np(b(_x(tg))), _np(_net(torch)(_x(torch))), rtol=1e-6)


# -- 2. load_state_dict ------------------------------------------------------------------------
@pytest.mark.parametrize("lib", LIBS)
def test_assign_makes_the_given_tensors_the_parameters(lib):
    lin = lib.nn.Linear(2, 2)
    lin.weight.requires_grad_(False)
    w, b = lib.ones(2, 2, dtype=lib.float64), lib.zeros(2)
    lin.load_state_dict({"weight": w, "bias": b}, assign=True)
    assert isinstance(lin.weight, lib.nn.Parameter) and _shares(lin.weight, w)
    assert not lin.weight.requires_grad and lin.bias.requires_grad
    assert str(lin.weight.dtype).endswith("float64")
    w[0, 0] = 5.0
    assert lin.weight[0, 0].item() == 5.0


@pytest.mark.parametrize("lib", LIBS)
def test_strict_false_returns_the_named_tuple(lib):
    lin = lib.nn.Linear(2, 2)
    res = lin.load_state_dict({"weight": lib.zeros(2, 2), "x": lib.zeros(1)}, strict=False)
    assert res.missing_keys == ["bias"] and res.unexpected_keys == ["x"]
    assert tuple(res) == (["bias"], ["x"])
    assert "missing_keys=['bias'], unexpected_keys=['x']" in repr(res)
    assert repr(lin.load_state_dict(lin.state_dict())) == "<All keys matched successfully>"


def _load_error(lib, sd, strict=True):
    lin = lib.nn.Linear(2, 2)
    before = _np(lin.weight).copy()
    with pytest.raises(Exception) as info:
        lin.load_state_dict(sd, strict=strict)
    np.testing.assert_array_equal(_np(lin.weight), before)  # nothing was loaded
    return info.type, str(info.value).replace("torch.Size", "Size").replace("tg.Size", "Size")


@pytest.mark.parametrize("strict", [True, False])
def test_load_errors_have_torchs_words(strict):
    for make in (lambda lib: {"weight": lib.zeros(3, 2), "bias": lib.zeros(2)},
                 lambda lib: {"weight": lib.zeros(3, 2), "x": lib.zeros(1)}):  # fmt: skip
        ours, ref = _load_error(tg, make(tg), strict), _load_error(torch, make(torch), strict)
        assert ours[0] is ref[0] is RuntimeError
        assert ours[1].startswith(ref[1])  # (ours may add a hint line)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        tg.nn.Linear(2, 2).load_state_dict([1])


# -- 3. BatchNorm's older checkpoints -------------------------------------------------------
@pytest.mark.parametrize("lib", LIBS)
def test_batchnorm_state_without_num_batches_tracked_loads_strictly(lib):
    src, dst = lib.nn.BatchNorm1d(3), lib.nn.BatchNorm1d(3)
    src(lib.tensor(np.arange(12.0, dtype=np.float32).reshape(4, 3)))
    dst(lib.ones(2, 3)), dst(lib.ones(2, 3))
    sd = {k: v for k, v in src.state_dict().items() if k != "num_batches_tracked"}
    assert repr(dst.load_state_dict(sd)) == "<All keys matched successfully>"
    assert "num_batches_tracked" not in sd  # the caller's dict is left alone
    assert int(dst.num_batches_tracked.item()) == 2  # kept
    np.testing.assert_array_equal(_np(dst.running_mean), _np(src.running_mean))
    seq = lib.nn.Sequential(lib.nn.BatchNorm1d(3))  # under a prefix too
    seq.load_state_dict({"0." + k: v for k, v in sd.items()})


# -- 4. vector_to_parameters --------------------------------------------------------------------
def _vector_roundtrip(lib):
    lin = lib.nn.Linear(2, 2)
    sd = lin.state_dict()
    old = _np(sd["bias"]).copy()
    vec = lib.arange(6, dtype=lib.float64)
    lib.nn.utils.vector_to_parameters(vec, lin.parameters())
    out = [_np(lin.weight).copy(), str(lin.weight.dtype)[-7:]]
    vec.add_(10)  # the parameters are views of vec
    with lib.no_grad():
        lin.bias.mul_(2)  # and vec sees a change of theirs
    v = lib.nn.utils.parameters_to_vector(lin.parameters())
    np.testing.assert_array_equal(_np(sd["bias"]), old)  # a state dict taken before: old memory
    return out + [_np(lin.weight), _np(vec), _np(v), v.requires_grad, lin.weight.requires_grad]


def test_vector_to_parameters_matches_torch():
    ours, ref = _vector_roundtrip(tg), _vector_roundtrip(torch)
    for a, b in zip(ours, ref):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        tg.nn.utils.vector_to_parameters([1.0], tg.nn.Linear(1, 1).parameters())


# -- 5. optimizer state ---------------------------------------------------------------------
OPTS = [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.05)), ("AdamW", dict(lr=0.05)),
        ("RMSprop", dict(lr=0.01, momentum=0.5)), ("NAdam", dict(lr=0.05))]  # fmt: skip


@pytest.mark.parametrize("name,kw", OPTS, ids=[n for n, _ in OPTS])
def test_optimizer_state_is_tensors_as_in_torch(name, kw):
    states = {}
    for lib in (tg, torch):
        net = _net(lib)
        opt = getattr(lib.optim, name)(net.parameters(), **kw)
        _train(lib, net, opt, 2)
        sd = opt.state_dict()
        assert list(sd["state"]) == [0, 1, 2, 3]
        st = opt.state[net[0].weight]
        assert all(st[k] is sd["state"][0][k] for k in st)  # the same tensors
        states[lib] = {k: (str(v.dtype)[-7:], tuple(v.shape), _np(v)) for k, v in st.items()}
    assert sorted(states[tg]) == sorted(states[torch])
    for k, (dtype, shape, value) in states[torch].items():
        assert states[tg][k][:2] == (dtype, shape), k
        np.testing.assert_allclose(states[tg][k][2], value, rtol=1e-5, atol=1e-7)


def _resume(lib, name, kw, via_file):
    """3 steps, then the state dicts into fresh objects and 3 more; and without the break."""
    net, fresh = _net(lib), _net(lib)
    opt = getattr(lib.optim, name)(net.parameters(), **kw)
    _train(lib, net, opt, 3)
    msd, osd = net.state_dict(), opt.state_dict()
    if via_file:
        f = io.BytesIO()
        lib.save({"model": msd, "opt": osd}, f)
        f.seek(0)
        loaded = lib.load(f)
        msd, osd = loaded["model"], loaded["opt"]
    else:
        msd, osd = copy.deepcopy(msd), copy.deepcopy(osd)
    fopt = getattr(lib.optim, name)(fresh.parameters(), **kw)
    fresh.load_state_dict(msd)
    fopt.load_state_dict(osd)
    _train(lib, fresh, fopt, 3)
    _train(lib, net, opt, 3)
    return _np(fresh[0].weight), _np(net[0].weight)


@pytest.mark.parametrize("via_file", [False, True])
@pytest.mark.parametrize("name,kw", OPTS, ids=[n for n, _ in OPTS])
def test_optimizer_round_trip_continues_as_torch(name, kw, via_file):
    resumed, continued = _resume(tg, name, kw, via_file)
    np.testing.assert_array_equal(resumed, continued)
    ref, _ = _resume(torch, name, kw, via_file)
    np.testing.assert_allclose(resumed, ref, rtol=1e-4, atol=1e-6)


def test_optimizer_loads_the_old_numpy_form_and_aliases_like_torch():
    def run(lib, numpy_form):
        a = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
        b = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
        oa, ob = lib.optim.Adam([a], lr=0.1), lib.optim.Adam([b], lr=0.1)
        for _ in range(2):
            oa.zero_grad(), (a * a).sum().backward(), oa.step()
        sd = oa.state_dict()
        if numpy_form:
            sd = {"state": {0: {k: _np(v) for k, v in sd["state"][0].items()}},
                  "param_groups": sd["param_groups"]}  # fmt: skip
        ob.load_state_dict(sd)
        shared = ob.state[b]["exp_avg"] is oa.state[a]["exp_avg"]
        with lib.no_grad():
            b.copy_(a)
        ob.zero_grad(), (b * b).sum().backward(), ob.step()
        return shared, type(ob.state[b]["step"]).__name__, _np(b)

    assert run(tg, False)[:2] == (True, "Tensor") == run(torch, False)[:2]
    np.testing.assert_allclose(run(tg, False)[2], run(torch, False)[2], rtol=1e-6)
    ours = run(tg, True)
    assert ours[:2] == (False, "Tensor")
    np.testing.assert_allclose(ours[2], run(torch, False)[2], rtol=1e-6)


# -- 8. slices and tied weights -------------------------------------------------------------
@pytest.mark.parametrize("lib", LIBS)
def test_sequential_slice_keeps_the_names(lib):
    net = _net(lib)
    assert list(net[1:].state_dict()) == ["2.weight", "2.bias"]
    assert list(net[:1].state_dict()) == ["0.weight", "0.bias"]


def _tied(lib):
    enc, dec = lib.nn.Linear(3, 3), lib.nn.Linear(3, 3)
    dec.weight = enc.weight
    rng = np.random.default_rng(2)
    with lib.no_grad():
        for p in (enc.weight, enc.bias, dec.bias):
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    net = lib.nn.Sequential(enc, dec)
    sd = net.state_dict()
    sd["view"] = sd["0.weight"][1]
    sd["t"] = sd["0.weight"].t()
    f = io.BytesIO()
    lib.save(sd, f)
    f.seek(0)
    loaded = lib.load(f)
    shared = [_shares(loaded["0.weight"], loaded[k]) for k in ("1.weight", "view", "t", "0.bias")]
    loaded["0.weight"].add_(1)  # one memory: the others see it
    fresh = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.Linear(3, 3))
    fresh[1].weight = fresh[0].weight
    fresh.load_state_dict({k: v for k, v in loaded.items() if k not in ("view", "t")})
    return shared, _np(loaded["view"]), _np(loaded["t"]), _np(fresh[1].weight)


def test_tied_weights_and_views_stay_shared_through_save_and_load():
    ours, ref = _tied(tg), _tied(torch)
    assert ours[0] == ref[0] == [True, True, True, False]
    for a, b in zip(ours[1:], ref[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-6)
