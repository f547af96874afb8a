"""The PyTorch surface that is not ops: ``tg.device``, ``tg.cuda``, ``tg.backends``,
``tg.accelerator``, default device and dtype, ``tg.Size``, generators and the rng state, and
``tg.testing.assert_close``; each against PyTorch's behaviour."""

import pickle

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
from tinygrad_edu import backend


# -- devices ------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [("cpu",), ("cuda",), ("cuda:1",), ("cuda", 2)])
def test_device_matches_torch(args):
    ours, theirs = tg.device(*args), torch.device(*args)
    assert (str(ours), ours.type, ours.index, repr(ours)) == (
        str(theirs), theirs.type, theirs.index, repr(theirs))  # fmt: skip
    assert pickle.loads(pickle.dumps(ours)) == ours


def test_device_goes_where_a_name_goes():
    d = tg.device("sim:1")
    x = tg.ones(2).to(d)
    assert x.device == d == "sim:1" and x.device.type == "sim" and x.device.index == 1
    m = tg.nn.Linear(2, 1).to(tg.device("sim", 1))
    assert m.weight.device == "sim:1"
    assert tg.ones(1).device == tg.device("cpu") and repr(tg.ones(1).device) == "device(type='cpu')"


@pytest.mark.parametrize("bad,err", [("abacus", RuntimeError), ("cuda:x", RuntimeError),
                                     (("cuda", -1), RuntimeError), (3.5, TypeError)])
def test_bad_device_names_are_torchs_errors(bad, err):
    args = bad if isinstance(bad, tuple) else (bad,)
    with pytest.raises(err):
        tg.device(*args)
    with pytest.raises(err):
        torch.device(*args)


def test_cuda_probe_follows_the_backend(monkeypatch):
    # no GPU here: the CPU answers, as PyTorch's CPU build gives them
    assert tg.cuda.is_available() is False and tg.cuda.device_count() == 0
    assert tg.accelerator.is_available() is False
    assert tg.accelerator.current_accelerator() is None
    assert not tg.backends.mps.is_available() and not tg.backends.cudnn.is_available()
    with pytest.raises(RuntimeError, match="is_available"):
        tg.cuda.current_device()
    tg.cuda.manual_seed(0), tg.cuda.manual_seed_all(0), tg.cuda.synchronize()
    tg.cuda.empty_cache()
    # a machine where CuPy sees a GPU: the same script picks "cuda"
    monkeypatch.setattr(backend, "cuda_available", lambda: True)
    assert tg.cuda.is_available() and tg.backends.cudnn.is_available()
    assert tg.accelerator.current_accelerator() == tg.device("cuda")
    device = "cuda" if tg.cuda.is_available() else "cpu"
    assert device == "cuda"


def test_cuda_if_available_else_cpu_script_runs():
    device = tg.device("cuda" if tg.cuda.is_available() else "cpu")
    model = tg.nn.Linear(3, 2).to(device)
    x = tg.randn(4, 3, device=device)
    model(x).sum().backward()
    assert model.weight.grad.device == device


def test_set_default_device_moves_the_factories():
    try:
        tg.set_default_device("sim:1")
        assert tg.get_default_device() == "sim:1"
        for t in (tg.zeros(2), tg.ones(2, 2), tg.randn(3), tg.tensor([1.0]), tg.arange(3),
                  tg.full((2,), 7)):  # fmt: skip
            assert t.device == "sim:1"
        assert tg.zeros(2, device="cpu").device == "cpu"
        assert tg.from_numpy(np.zeros(2)).device == "cpu"
    finally:
        tg.set_default_device(None)
    assert tg.zeros(2).device == "cpu"
    assert str(tg.get_default_device()) == str(torch.get_default_device())


def test_float32_matmul_precision_is_recorded():
    assert tg.get_float32_matmul_precision() == torch.get_float32_matmul_precision() == "highest"
    try:
        tg.set_float32_matmul_precision("high")
        assert tg.get_float32_matmul_precision() == "high"
    finally:
        tg.set_float32_matmul_precision("highest")
    with pytest.raises(RuntimeError, match="Invalid argument"):
        tg.set_float32_matmul_precision("fast")


# -- dtypes ---------------------------------------------------------------------------------------
def test_set_default_dtype_changes_new_floats_only():
    assert tg.get_default_dtype() is tg.float32
    try:
        tg.set_default_dtype(tg.float64)
        assert tg.get_default_dtype() is tg.float64
        for t in (tg.tensor([1.5]), tg.zeros(2), tg.randn(2), tg.arange(0.0, 1.0, 0.5),
                  tg.linspace(0, 1, 3), tg.full((1,), 2.0), tg.nn.Linear(2, 2).weight):
            assert t.dtype == np.float64
        assert tg.tensor([1]).dtype == np.int64 and tg.arange(3).dtype == np.int64
        assert "dtype" not in repr(tg.tensor([1.5]))  # the default is not printed
        assert "dtype=float32" in repr(tg.tensor([1.5], dtype=tg.float32))
    finally:
        tg.set_default_dtype(tg.float32)
    assert tg.tensor([1.5]).dtype == np.float32


@pytest.mark.parametrize("bad", [tg.int64, "int32", tg.bool, "nonsense"])
def test_set_default_dtype_refuses_non_floats(bad):
    with pytest.raises(TypeError, match="floating"):
        tg.set_default_dtype(bad)
    assert tg.get_default_dtype() is tg.float32


def test_dtype_facts():
    x = tg.ones(2)
    assert isinstance(x.dtype, tg.dtype) and tg.is_floating_point(x)
    assert not tg.is_floating_point(tg.arange(2))
    assert tg.finfo(tg.float32).eps == torch.finfo(torch.float32).eps
    assert tg.finfo().max == torch.finfo().max
    assert tg.iinfo(tg.int64).max == torch.iinfo(torch.int64).max


# -- Size -----------------------------------------------------------------------------------------
def test_size_is_a_tuple_as_in_torch():
    s, t = tg.Size([2, 3, 4]), torch.Size([2, 3, 4])
    assert s == t == (2, 3, 4) and s.numel() == t.numel() == 24
    assert isinstance(s[1:], tg.Size) and s[1:] == t[1:] and s[0] == 2
    assert isinstance(s + (5,), tg.Size) and tg.Size(tg.ones(2, 3).shape) == (2, 3)
    assert tg.Size([np.int64(2)]) == (2,) and tg.Size() == () and tg.Size().numel() == 1
    assert repr(s) == "Size([2, 3, 4])"
    with pytest.raises(TypeError, match="dimension 1"):
        tg.Size([2, -1])
    with pytest.raises(TypeError):
        tg.Size([2.5])


# -- random ---------------------------------------------------------------------------------------
def test_manual_seed_reproduces_and_generators_are_independent():
    tg.manual_seed(7)
    a = tg.randn(4).numpy()
    tg.manual_seed(7)
    g = tg.Generator().manual_seed(123)
    tg.randn(3, generator=g)  # draws from g, not from the default generator
    np.testing.assert_array_equal(tg.randn(4).numpy(), a)
    assert tg.initial_seed() == 7 and g.initial_seed() == 123


def test_generator_manual_seed_returns_it_and_repeats():
    g1 = tg.Generator().manual_seed(2147483647)
    g2 = tg.Generator().manual_seed(2147483647)
    a = tg.randn(27, 2, generator=g1).numpy()
    np.testing.assert_array_equal(a, tg.randn(27, 2, generator=g2).numpy())
    r1 = tg.randint(0, 10, (5,), generator=g1).numpy()
    r2 = tg.randint(0, 10, (5,), generator=g2).numpy()
    np.testing.assert_array_equal(r1, r2)
    np.testing.assert_array_equal(tg.rand(3, generator=g1).numpy(),
                                  tg.rand(3, generator=g2).numpy())  # fmt: skip


def test_rng_state_roundtrip():
    tg.manual_seed(3)
    tg.rand(1)  # leaves numpy's buffered half-word in play for some draws
    state = tg.get_rng_state()
    assert state.dtype == np.uint8 and state.ndim == 1
    a = tg.randn(5).numpy()
    tg.randint(0, 100, (3,))
    tg.set_rng_state(state)
    np.testing.assert_array_equal(tg.randn(5).numpy(), a)
    assert tg.initial_seed() == 3


def test_bad_rng_state_is_refused_without_damage():
    tg.manual_seed(1)
    state = tg.get_rng_state()
    with pytest.raises(TypeError, match="uint8"):
        tg.set_rng_state(tg.zeros(45))
    with pytest.raises(TypeError, match="45 bytes"):
        tg.set_rng_state(state[:10])
    a = tg.randn(2).numpy()
    tg.set_rng_state(state)
    np.testing.assert_array_equal(tg.randn(2).numpy(), a)
    with pytest.raises(TypeError, match="int seed"):
        tg.manual_seed(1.5)
    with pytest.raises(TypeError, match="Generator"):
        tg.randn(2, generator=np.random.default_rng(0))


def test_torch_random_module_spelling():
    tg.random.manual_seed(11)
    a = tg.randn(2).numpy()
    tg.manual_seed(11)
    np.testing.assert_array_equal(tg.randn(2).numpy(), a)
    assert tg.random.initial_seed() == 11 and tg.random.get_rng_state().dtype == np.uint8


def test_seed_picks_a_new_seed():
    s = tg.seed()
    assert isinstance(s, int) and tg.initial_seed() == s


# -- assert_close ---------------------------------------------------------------------------------
def test_assert_close_passes_and_fails_as_torch():
    tg.testing.assert_close(tg.tensor([1.0, 2.0]), tg.tensor([1.0, 2.0 + 1e-6]))
    tg.testing.assert_close({"a": [tg.tensor(1.0), 2]}, {"a": [tg.tensor(1.0), 2]})
    cases = [
        ((tg.tensor([1.0, 2.0]), tg.tensor([1.0, 2.1])), "Mismatched elements: 1 / 2"),
        ((tg.tensor([1.0]), tg.tensor([1.0, 2.0])), "shape"),
        ((tg.tensor([1.0]), tg.tensor([1.0], dtype=tg.float64)), "dtype"),
        ((tg.tensor([1]), tg.tensor([2])), "Greatest absolute difference: 1"),
        ((tg.tensor([float("nan")]), tg.tensor([float("nan")])), "not close"),
        (([1.0, 2.0], [1.0]), "length"),
    ]
    for (a, e), words in cases:
        with pytest.raises(AssertionError, match=words):
            tg.testing.assert_close(a, e)
    tg.testing.assert_close(tg.tensor([float("nan")]), tg.tensor([float("nan")]), equal_nan=True)
    tg.testing.assert_close(tg.tensor([1.0]), tg.tensor([1.5]), rtol=0.0, atol=0.5)
    tg.testing.assert_close(tg.tensor([1.0]), tg.tensor([1.0], dtype=tg.float64),
                            check_dtype=False)  # fmt: skip
    with pytest.raises(ValueError, match="atol"):
        tg.testing.assert_close(tg.tensor(1.0), tg.tensor(1.0), rtol=0.1)
    with pytest.raises(AssertionError, match="custom"):
        tg.testing.assert_close(tg.tensor(1.0), tg.tensor(2.0), msg="custom")


def test_assert_close_default_tolerances_are_torchs():
    for dt, tdt in [(tg.float32, torch.float32), (tg.float64, torch.float64)]:
        for rel in (1e-8, 1e-6, 2e-6, 1e-4):
            a, e = np.array([1.0 + rel]), np.array([1.0])
            ours = theirs = True
            try:
                tg.testing.assert_close(tg.tensor(a, dtype=dt), tg.tensor(e, dtype=dt))
            except AssertionError:
                ours = False
            try:
                torch.testing.assert_close(torch.tensor(a, dtype=tdt), torch.tensor(e, dtype=tdt))
            except AssertionError:
                theirs = False
            assert ours == theirs, (dt, rel)
