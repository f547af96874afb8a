"""PyTorch's import paths and ``torch.save``/``torch.load`` spellings, as programs use them:
``tg.save(obj, f)`` with a path (written under exactly that name) or an open binary file,
shared tensors kept shared; a whole module saved and loaded under the ``weights_only``
allow-list, against PyTorch (hostile files refused, nothing run); ``tinygrad_edu.onnx``,
``tinygrad_edu.nn.parallel``, ``tinygrad_edu.backends.cudnn``, ``tinygrad_edu.nn.modules.*``,
``tinygrad_edu.serialization``."""

from __future__ import annotations

import importlib
import io
import os
import pickle
import subprocess
import sys
import warnings
import zipfile

import numpy as np
import pytest
import torch

import tinygrad_edu as tg


def _model():
    tg.manual_seed(0)
    return tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.ReLU(), tg.nn.Linear(4, 2))


def _same(a, b):
    if isinstance(a, tg.Tensor):
        assert isinstance(b, tg.Tensor) and a.dtype == b.dtype
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, list | tuple):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert a == b


def _objects():
    model = _model()
    opt = tg.optim.Adam(model.parameters(), lr=0.01)
    model(tg.randn(5, 3)).sum().backward()
    opt.step()
    return [model.state_dict(),
            {"w": tg.ones(2, 3), "epoch": 3, "name": "run", "lr": 0.5, "none": None},
            [tg.arange(4), 2.5, "x", (1, tg.zeros(1))],
            opt.state_dict()]  # fmt: skip


@pytest.mark.parametrize("k", range(4))
def test_save_and_load_through_an_in_memory_buffer(k):
    obj = _objects()[k]
    buf = io.BytesIO()
    tg.save(obj, buf)
    buf.seek(0)
    _same(tg.load(buf), obj)


@pytest.mark.parametrize("k", range(4))
def test_save_and_load_through_an_open_file(tmp_path, k):
    obj = _objects()[k]
    with open(tmp_path / "ckpt.pt", "wb") as f:
        tg.save(obj, f)
    with open(tmp_path / "ckpt.pt", "rb") as f:
        _same(tg.load(f), obj)


@pytest.mark.parametrize("name", ["ckpt.pt", "model.pth", "weights", "w.npz"])
def test_a_path_is_written_under_exactly_its_name(tmp_path, name):
    obj = _objects()[1]
    tg.save(obj, tmp_path / name)
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]
    _same(tg.load(tmp_path / name), obj)
    _same(tg.load(str(tmp_path / name)), obj)


def test_a_module_state_dict_loads_back_into_a_model(tmp_path):
    model = _model()
    tg.save(model.state_dict(), tmp_path / "model.pt")
    other = tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.ReLU(), tg.nn.Linear(4, 2))
    other.load_state_dict(tg.load(tmp_path / "model.pt", map_location="cpu", weights_only=True))
    x = tg.randn(2, 3)
    np.testing.assert_array_equal(other(x).detach().numpy(), model(x).detach().numpy())


def test_one_tensor_under_two_names_loads_as_one_tensor():
    t = tg.arange(3.0)
    buf = io.BytesIO()
    tg.save({"a": t, "b": t, "c": [t]}, buf)
    buf.seek(0)
    back = tg.load(buf)
    assert back["a"] is back["b"] and back["c"][0] is back["a"]  # as torch.load gives
    buf.seek(0)
    moved = tg.load(buf, map_location="cpu")
    assert moved["a"] is moved["b"]
    arr = np.zeros(2)
    buf = io.BytesIO()
    tg.save({"x": arr, "y": arr}, buf)  # a state dict whose names share an array (tied weights)
    buf.seek(0)
    back = tg.load(buf)
    assert back["x"] is back["y"]


def test_load_takes_torch_keywords():
    buf = io.BytesIO()
    tg.save({"w": tg.ones(2)}, buf, pickle_protocol=2)
    for kw in ({"map_location": "cpu"}, {"weights_only": True}, {"weights_only": False},
               {"map_location": None, "mmap": None}):  # fmt: skip
        buf.seek(0)
        np.testing.assert_array_equal(tg.load(buf, **kw)["w"].numpy(), [1.0, 1.0])


def test_serialization_module():
    import tinygrad_edu.serialization as serialization

    assert serialization.save is tg.save and serialization.load is tg.load
    from tinygrad_edu.serialization import load, save

    assert (save, load) == (tg.save, tg.load)


def test_cudnn_flags_are_settable():
    import tinygrad_edu.backends.cudnn as cudnn

    assert cudnn is tg.backends.cudnn
    before = (cudnn.benchmark, cudnn.deterministic, cudnn.enabled)
    try:
        cudnn.benchmark, cudnn.deterministic, cudnn.enabled = True, True, False
        assert (tg.backends.cudnn.benchmark, tg.backends.cudnn.deterministic) == (True, True)
        assert tg.backends.cudnn.enabled is False
    finally:
        cudnn.benchmark, cudnn.deterministic, cudnn.enabled = before
    assert isinstance(cudnn.is_available(), bool)
    tg.backends.cudnn.benchmark = True  # the attribute spelling works as before
    tg.backends.cudnn.benchmark = before[0]


def test_data_parallel_passes_calls_through():
    from tinygrad_edu.nn.parallel import DataParallel

    model = _model()
    dp = DataParallel(model)
    assert dp.module is model
    x = tg.randn(2, 3)
    np.testing.assert_array_equal(dp(x).detach().numpy(), model(x).detach().numpy())
    assert sorted(dp.state_dict()) == sorted(f"module.{k}" for k in model.state_dict())
    assert len(list(dp.parameters())) == len(list(model.parameters()))
    assert isinstance(dp, tg.nn.Module)


SUBMODULES = ["module", "linear", "conv", "activation", "loss", "batchnorm", "dropout",
              "container", "sparse", "rnn", "pooling", "normalization"]  # fmt: skip


@pytest.mark.parametrize("sub", SUBMODULES)
def test_nn_modules_submodules_re_export_the_layers(sub):
    mod = importlib.import_module(f"tinygrad_edu.nn.modules.{sub}")
    assert mod.__all__
    for name in mod.__all__:
        assert getattr(mod, name) is getattr(tg.nn.modules, name)
        if not name.startswith("_"):
            assert getattr(mod, name) is getattr(tg.nn, name)


def test_nn_modules_paths_as_programs_spell_them():
    from tinygrad_edu.nn.modules import Module
    from tinygrad_edu.nn.modules.conv import Conv2d
    from tinygrad_edu.nn.modules.linear import Linear
    from tinygrad_edu.nn.modules.loss import _Loss

    assert Module is tg.nn.Module and Linear is tg.nn.Linear and Conv2d is tg.nn.Conv2d
    assert isinstance(tg.nn.MSELoss(), _Loss)


def test_the_submodule_names_match_pytorchs():
    torch = pytest.importorskip("torch")
    for sub in SUBMODULES:
        theirs = importlib.import_module(f"torch.nn.modules.{sub}")
        ours = importlib.import_module(f"tinygrad_edu.nn.modules.{sub}")
        assert all(hasattr(theirs, n) for n in ours.__all__), sub
    assert torch  # (imported for the names)


def test_onnx_export_of_a_module(tmp_path):
    onnx = pytest.importorskip("onnx")
    import tinygrad_edu.onnx

    model = _model()
    x = tg.randn(2, 3)
    path = tmp_path / "model.onnx"
    tinygrad_edu.onnx.export(model, (x,), str(path), input_names=["x"], output_names=["y"])
    m = onnx.load(str(path))
    onnx.checker.check_model(m)
    assert [i.name for i in m.graph.input] == ["x"]
    assert [o.name for o in m.graph.output] == ["y"]
    assert len(m.graph.initializer) >= 4  # the weights travel inside the file
    rt = pytest.importorskip("onnxruntime")
    sess = rt.InferenceSession(str(path))
    (y,) = sess.run(None, {"x": x.numpy()})
    np.testing.assert_allclose(y, model(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_onnx_export_to_a_buffer_and_a_single_tensor_argument():
    pytest.importorskip("onnx")
    from tinygrad_edu import onnx

    buf = io.BytesIO()
    onnx.export(_model(), tg.randn(1, 3), buf)
    assert buf.getvalue()[:2]  # bytes written


def test_the_paths_import_nothing_heavy():
    code = ("import sys, tinygrad_edu, tinygrad_edu.onnx, tinygrad_edu.serialization, "
            "tinygrad_edu.backends.cudnn, tinygrad_edu.nn.parallel, tinygrad_edu.nn.modules; "
            "print(sorted({'torch', 'onnx', 'onnxruntime'} & set(sys.modules)))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_random_sampler_with_replacement_draws_lazily():
    """``RandomSampler(replacement=True, num_samples=10**10)``: PyTorch draws 32 indices at a
    time; drawing them all first would need 75 GiB."""
    from tinygrad_edu.utils.data import RandomSampler

    it = iter(RandomSampler(range(10), replacement=True, num_samples=10**10))
    first = [next(it) for _ in range(100)]
    assert all(0 <= i < 10 for i in first) and len(set(first)) > 1
    seeded = [list(RandomSampler(range(7), replacement=True, num_samples=101,
                                 generator=tg.Generator().manual_seed(3))) for _ in range(2)]
    assert seeded[0] == seeded[1] and len(seeded[0]) == 101 and max(seeded[0]) < 7


def test_nn_modules_is_an_attribute_without_importing_it_first():
    # word_language_model's main.py reads `torch.nn.modules.dropout.Dropout` after only
    # `import torch.nn as nn`; in a fresh process, so no earlier import hides the gap
    code = ("import tinygrad_edu as torch, tinygrad_edu.nn as nn; "
            "print(torch.nn.modules.dropout.Dropout is nn.Dropout, "
            "hasattr(nn, 'no_such_name'))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False"]


def test_serialization_safe_globals_as_pytorch_spells_them():
    torch = pytest.importorskip("torch")
    for lib in (tg, torch):
        ser = lib.serialization
        ser.clear_safe_globals()
        with ser.safe_globals([np.dtype]):
            inside = ser.get_safe_globals()
        ser.add_safe_globals([np.ndarray])
        assert (inside, ser.get_safe_globals()) == ([np.dtype], [np.ndarray]), lib.__name__
        ser.clear_safe_globals()
    buf = io.BytesIO()
    tg.save({"w": tg.ones(2)}, buf)
    buf.seek(0)
    with tg.serialization.safe_globals([np.dtype]):
        np.testing.assert_array_equal(tg.load(buf)["w"].numpy(), [1.0, 1.0])


# -- a whole module: tg.save(model, f), tg.load(f) ------------------------------------------------
class _LM:
    """word_language_model's RNNModel in small: embedding, LSTM, dropout, decoder (tied to
    the embedding), one buffer, one frozen parameter; the same code for both libraries."""

    def build(self, nn, lib):
        self.encoder = nn.Embedding(7, 5)
        self.rnn = nn.LSTM(5, 5, 2)
        self.drop = nn.Dropout(0.3)
        self.decoder = nn.Linear(5, 7)
        self.decoder.weight = self.encoder.weight  # tied weights stay tied
        self.rnn.bias_hh_l1.requires_grad_(False)
        self.register_buffer("scale", lib.full((7,), 0.5))
        self.nhid = 5

    def forward(self, x):
        out, _ = self.rnn(self.drop(self.encoder(x)))
        return self.decoder(self.drop(out)) * self.scale


class TorchLM(_LM, torch.nn.Module):
    def __init__(self):
        torch.nn.Module.__init__(self)
        self.build(torch.nn, torch)


class TgLM(_LM, tg.nn.Module):
    def __init__(self):
        tg.nn.Module.__init__(self)
        self.build(tg.nn, tg)


def _pair():
    """The same TorchLM and TgLM (float64, the same weights), in eval mode."""
    ours, theirs = TgLM().double(), TorchLM().double()
    theirs.load_state_dict({k: torch.from_numpy(np.array(v.detach().numpy()))
                            for k, v in ours.state_dict().items()})  # fmt: skip
    return ours.eval(), theirs.eval()


def _allowed(lib, cls):
    nn = lib.nn.modules
    return [cls, nn.dropout.Dropout, nn.linear.Linear, nn.rnn.LSTM, nn.sparse.Embedding]


def _round_trip(lib, obj, allowed=None, **kw):
    buf = io.BytesIO()
    lib.save(obj, buf)
    buf.seek(0)
    if allowed is None:
        return lib.load(buf, **kw)
    with lib.serialization.safe_globals(allowed):
        return lib.load(buf, **kw)


def _grads(model, lib, x):
    model.zero_grad()
    out = model(x)
    (out * out).sum().backward()
    return {n: p.grad.numpy() for n, p in model.named_parameters() if p.grad is not None}


def test_a_whole_module_round_trips_as_in_pytorch():
    ours, theirs = _pair()
    tg_back = _round_trip(tg, ours, _allowed(tg, TgLM))
    torch_back = _round_trip(torch, theirs, _allowed(torch, TorchLM))
    assert type(tg_back) is TgLM and type(torch_back) is TorchLM
    assert tg_back is not ours and not tg_back.training and not tg_back.rnn.training
    kinds = [(n, type(p).__name__, p.requires_grad, p.dtype == tg.float64)
             for n, p in tg_back.named_parameters()]  # fmt: skip
    assert kinds == [(n, type(p).__name__, p.requires_grad, p.dtype == torch.float64)
                     for n, p in torch_back.named_parameters()]  # fmt: skip
    assert all(k[1] == "Parameter" for k in kinds) and ("rnn.bias_hh_l1", "Parameter", False,
                                                        True) in kinds  # fmt: skip
    assert tg_back.decoder.weight is tg_back.encoder.weight
    assert torch_back.decoder.weight is torch_back.encoder.weight
    assert list(dict(tg_back.named_buffers())) == list(dict(torch_back.named_buffers()))
    assert tg_back.nhid == torch_back.nhid == 5
    x = [[1, 2, 3], [4, 5, 6]]
    y_tg, y_torch = tg_back(tg.tensor(x)), torch_back(torch.tensor(x))
    np.testing.assert_allclose(y_tg.detach().numpy(), y_torch.detach().numpy(), rtol=1e-12)
    np.testing.assert_array_equal(y_tg.detach().numpy(), ours(tg.tensor(x)).detach().numpy())
    g_tg, g_torch = _grads(tg_back, tg, tg.tensor(x)), _grads(torch_back, torch, torch.tensor(x))
    assert sorted(g_tg) == sorted(g_torch) and "rnn.bias_hh_l1" not in g_tg  # gradient flows
    for n in g_tg:
        np.testing.assert_allclose(g_tg[n], g_torch[n], rtol=1e-10, atol=1e-12, err_msg=n)
    assert all(p.grad is None for p in ours.parameters())  # the original is untouched


def test_the_loaded_module_trains_like_the_saved_one():
    ours, theirs = _pair()
    ours.train(), theirs.train()
    tg_back = _round_trip(tg, ours, _allowed(tg, TgLM))
    torch_back = _round_trip(torch, theirs, _allowed(torch, TorchLM))
    assert tg_back.training and tg_back.drop.training and torch_back.drop.training
    opt_tg = tg.optim.SGD(tg_back.parameters(), lr=0.1)
    opt_torch = torch.optim.SGD(torch_back.parameters(), lr=0.1)
    for model, opt in ((tg_back, opt_tg), (torch_back, opt_torch)):
        model.eval()
        lib = tg if model is tg_back else torch
        out = model(lib.tensor([[1, 2], [3, 4]]))
        (out * out).mean().backward()
        opt.step()
    for (n, a), (_, b) in zip(tg_back.state_dict().items(), torch_back.state_dict().items()):
        np.testing.assert_allclose(a.detach().numpy(), b.numpy(), rtol=1e-10, atol=1e-12, err_msg=n)


def test_a_sequential_round_trips_through_a_path_and_a_file(tmp_path):
    model = _model()
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    theirs.load_state_dict({k: torch.from_numpy(np.array(v.detach().numpy()))
                            for k, v in model.state_dict().items()})  # fmt: skip
    nn = torch.nn.modules
    allowed = [nn.container.Sequential, nn.linear.Linear, nn.activation.ReLU]
    tg.save(model, tmp_path / "model.pt")
    torch.save(theirs, tmp_path / "theirs.pt")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.pt", "theirs.pt"]
    with np.load(tmp_path / "model.pt", allow_pickle=False) as archive:  # still one .npz
        assert len(archive.files) == 5 and "__pickle__" in archive.files
    back = tg.load(tmp_path / "model.pt")  # the library's own layers need no allowing here
    with torch.serialization.safe_globals(allowed):  # (PyTorch allows none by default)
        torch_back = torch.load(tmp_path / "theirs.pt")
    with open(tmp_path / "model.pt", "rb") as f:
        from_file = tg.load(f, map_location="cpu")
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    for m in (back, from_file):
        assert type(m) is tg.nn.Sequential and [type(c).__name__ for c in m] == [
            "Linear", "ReLU", "Linear"]  # fmt: skip
        assert all(isinstance(p, tg.nn.Parameter) and p.requires_grad for p in m.parameters())
        np.testing.assert_allclose(m(tg.tensor(x)).detach().numpy(),
                                   torch_back(torch.tensor(x)).detach().numpy(),
                                   rtol=1e-6, atol=1e-7)  # fmt: skip


def test_a_class_that_is_not_allowed_is_refused_as_in_pytorch():
    ours, theirs = _pair()
    for lib, model, cls in ((tg, ours, "TgLM"), (torch, theirs, "TorchLM")):
        buf = io.BytesIO()
        lib.save(model, buf)
        lib.serialization.clear_safe_globals()
        for attempt in range(2):  # before the block, and again after it
            buf.seek(0)
            with pytest.raises(pickle.UnpicklingError,
                               match=rf"Unsupported global: GLOBAL \S*\.{cls} was not an "
                                     "allowed global by default"):  # fmt: skip
                lib.load(buf)
            if attempt == 0:
                buf.seek(0)
                with lib.serialization.safe_globals(_allowed(lib, type(model))):
                    assert type(lib.load(buf)) is type(model)
        lib.serialization.add_safe_globals(_allowed(lib, type(model)))
        try:
            buf.seek(0)
            assert type(lib.load(buf)) is type(model)
        finally:
            lib.serialization.clear_safe_globals()
        buf.seek(0)
        assert type(lib.load(buf, weights_only=False)) is type(model)  # the user's choice
    buf = io.BytesIO()
    tg.save(ours, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match=r"add_safe_globals\(\[TgLM\]\).*"
                                                     r"weights_only=False if you trust"):
        tg.load(buf)


def test_an_object_that_is_not_plain_is_pickled_and_refused_as_in_pytorch():
    for lib in (tg, torch):
        buf = io.BytesIO()
        lib.save({"opt": object(), "w": lib.ones(2)}, buf)
        buf.seek(0)
        with pytest.raises(pickle.UnpicklingError,
                           match=r"GLOBAL (builtins\.)?object was not an allowed global"):
            lib.load(buf)
        buf.seek(0)
        back = lib.load(buf, weights_only=False)
        assert type(back["opt"]) is object and back["w"].tolist() == [1.0, 1.0]
    back = _round_trip(tg, {"sizes": {1, 2}, "od": __import__("collections").OrderedDict(a=1),
                            "b": b"xy", "m": tg.nn.Linear(2, 1)})  # fmt: skip
    assert back["sizes"] == {1, 2} and back["od"] == {"a": 1} and back["b"] == b"xy"


class _Hostile:
    """An object whose unpickling would run ``call(*args)``: what a hostile file holds."""

    def __init__(self, call, *args):
        self.call, self.args = call, args

    def __reduce__(self):
        return self.call, self.args


def _marker_code(path):
    return f"open({str(path)!r}, 'w').close()"


@pytest.mark.parametrize("how", ["os.system", "eval"])
def test_a_hostile_file_runs_nothing_when_loaded(tmp_path, how):
    marker = tmp_path / "marker"
    if how == "eval":
        payload = _Hostile(eval, _marker_code(marker))
    else:
        payload = _Hostile(os.system, f"{sys.executable} -c \"{_marker_code(marker)}\"")
    name = r"(builtins\.)?eval" if how == "eval" else rf"({os.system.__module__}\.)?system"
    ours, theirs = tmp_path / "ours.pt", tmp_path / "theirs.pt"
    tg.save({"model": _model(), "x": payload}, ours)
    torch.save({"x": payload}, theirs)
    raw = tmp_path / "raw.npz"  # written by hand, without tg.save
    np.savez(raw, __pickle__=np.frombuffer(pickle.dumps(payload, protocol=4), np.uint8))
    for lib, path in ((tg, ours), (torch, theirs), (tg, raw)):
        for kw in ({}, {"weights_only": True}, {"weights_only": None}):
            if lib is torch and kw.get("weights_only", True) is None:
                continue  # (torch.load's default is None, the same as no keyword)
            with pytest.raises(pickle.UnpicklingError, match=rf"GLOBAL {name}\b"):
                lib.load(path, **kw)
        assert not marker.exists(), (lib.__name__, path.name)
    tg.load(raw, weights_only=False)  # the file really is hostile: unpickled, it runs
    assert marker.exists()


def test_a_damaged_archive_is_a_clear_value_error(tmp_path):
    path = tmp_path / "model.pt"
    tg.save(_model(), path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # truncated
    with pytest.raises(ValueError, match=r"model\.pt.*not a readable model file"):
        tg.load(path)
    with zipfile.ZipFile(io.BytesIO(data)) as z:  # a valid archive whose pickle is cut short
        entries = {n: z.read(n) for n in z.namelist()}
    pickled = np.load(io.BytesIO(entries["__pickle__.npy"]))
    np.savez(tmp_path / "cut.npz", **{n[:-4]: np.load(io.BytesIO(b)) for n, b in entries.items()
                                     if n != "__pickle__.npy"},
             __pickle__=pickled[: len(pickled) // 2])  # fmt: skip
    with pytest.raises(ValueError, match=r"cut\.npz.*not a readable model file.*damaged"):
        tg.load(tmp_path / "cut.npz")
    np.savez(tmp_path / "gone.npz", __pickle__=pickled)  # its tensors' entries are missing
    with pytest.raises(ValueError, match=r"gone\.npz.*tensor entry.*missing or damaged"):
        tg.load(tmp_path / "gone.npz")
    with pytest.raises(RuntimeError):  # PyTorch's damaged file: a RuntimeError there
        torch.load(io.BytesIO(data[: len(data) // 2]))


def _double_output(module, args, output):
    return output * 2


def test_hooks_are_saved_when_they_pickle_and_left_out_with_a_warning_when_not():
    outs = []
    for lib in (tg, torch):
        tg.manual_seed(0)
        torch.manual_seed(0)
        model = lib.nn.Linear(2, 2)
        model.register_forward_hook(_double_output)
        back = _round_trip(lib, model, [lib.nn.modules.linear.Linear, _double_output])
        x = lib.ones(1, 2)
        want = 2 * (model.weight.sum(1) + model.bias).detach().numpy()
        np.testing.assert_allclose(back(x)[0].detach().numpy(), want, rtol=1e-6)
        outs.append(back)
    with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL \S*_double_output"):
        _round_trip(tg, outs[0])  # a hook function must be allowed, as in PyTorch
    model = tg.nn.Linear(2, 2)
    model.register_forward_hook(lambda m, a, out: out * 0)
    model.register_forward_hook(_double_output)
    buf = io.BytesIO()
    with pytest.warns(UserWarning, match=r"save: the forward hook <function .*<lambda>.* cannot "
                                         r"be pickled .*not saved"):  # fmt: skip
        tg.save(model, buf)
    buf.seek(0)
    with tg.serialization.safe_globals([_double_output]):
        back = tg.load(buf)
    np.testing.assert_allclose(back(tg.ones(1, 2))[0].detach().numpy(), 2 * (model.weight.sum(1) +
                               model.bias).detach().numpy(), rtol=1e-6)  # fmt: skip
    with pytest.raises((pickle.PicklingError, AttributeError)):  # PyTorch refuses to save it
        theirs = torch.nn.Linear(2, 2)
        theirs.register_forward_hook(lambda m, a, out: out * 0)
        torch.save(theirs, io.BytesIO())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tg.save(tg.nn.Linear(2, 2), io.BytesIO())  # no hook, no warning


def test_something_that_does_not_pickle_is_refused_at_save():
    for lib in (tg, torch):
        with pytest.raises((pickle.PicklingError, AttributeError), match="lambda"):
            lib.save({"fn": lambda: 0, "w": lib.ones(1)}, io.BytesIO())
    with pytest.raises(AttributeError, match=r"save: cannot pickle builtins\.dict: .*"
                                                   r"save its state_dict\(\) instead"):
        tg.save({"fn": lambda: 0}, io.BytesIO())


def test_safe_globals_refuse_what_has_no_name():
    with pytest.raises(TypeError, match=r"safe_globals: 3 is not a class or a function"):
        tg.serialization.add_safe_globals([3])
    with pytest.raises(TypeError, match=r"safe_globals: 3 is not a class or a function"):
        tg.serialization.safe_globals([3])
    assert tg.serialization.get_safe_globals() == []


def test_the_serialization_module_examples_run():
    import doctest

    import tinygrad_edu.nn.serialization as ser

    assert doctest.testmod(ser, optionflags=doctest.ELLIPSIS).failed == 0


def test_a_name_reached_through_a_library_module_is_refused(tmp_path):
    # GLOBAL tinygrad_edu.nn.serialization os.system, called with ("true",): only the
    # library's Module classes are found in its modules, not what those modules imported
    data = b"\x80\x04ctinygrad_edu.nn.serialization\nos.system\nX\x04\x00\x00\x00true\x85R."
    assert pickle.loads(data) == 0  # (unrestricted, it runs the command)
    np.savez(tmp_path / "f.npz", __pickle__=np.frombuffer(data, np.uint8))
    with pytest.raises(pickle.UnpicklingError,
                       match=r"GLOBAL tinygrad_edu\.nn\.serialization\.os\.system was not an "):
        tg.load(tmp_path / "f.npz")
