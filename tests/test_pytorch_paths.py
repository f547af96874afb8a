"""PyTorch's import paths and ``torch.save``/``torch.load`` spellings, as programs use them:
``tg.save(obj, f)`` with a path (written under exactly that name) or an open binary file,
shared tensors kept shared; ``tinygrad_edu.onnx``, ``tinygrad_edu.nn.parallel``,
``tinygrad_edu.backends.cudnn``, ``tinygrad_edu.nn.modules.*``, ``tinygrad_edu.serialization``."""

from __future__ import annotations

import importlib
import io
import subprocess
import sys

import numpy as np
import pytest

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
    np.testing.assert_array_equal(other(x).numpy(), model(x).numpy())


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
    np.testing.assert_array_equal(dp(x).numpy(), model(x).numpy())
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
    np.testing.assert_allclose(y, model(x).numpy(), rtol=1e-5, atol=1e-6)


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
