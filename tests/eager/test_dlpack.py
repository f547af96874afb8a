"""DLPack both ways: tg.from_dlpack(x) and Tensor.__dlpack__ share memory, never copy."""

from __future__ import annotations

import doctest
import gc

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu.backend import DeviceError, cuda_available
from tinygrad_edu.eager import dlpack as dlpack_module


def _ptr(t) -> int:
    return t._data.__array_interface__["data"][0]


# -- numpy (no PyTorch needed) -----------------------------------------------------------------
def test_numpy_round_trip_shares_memory():
    a = np.arange(6.0).reshape(2, 3)
    t = tg.from_dlpack(a)
    assert t.shape == (2, 3) and t.dtype == np.float64 and not t.requires_grad and t.is_leaf
    assert _ptr(t) == a.__array_interface__["data"][0]
    a[0, 0] = 10.0  # numpy writes, we see it
    assert t[0, 0].item() == 10.0
    with tg.no_grad():
        t.mul_(2)  # we write, numpy sees it
    np.testing.assert_array_equal(a, [[20.0, 2.0, 4.0], [6.0, 8.0, 10.0]])
    b = np.from_dlpack(t)  # and back out
    b[1, 1] = -1.0
    assert a[1, 1] == -1.0 and t[1, 1].item() == -1.0


def test_numpy_strided_and_zero_d():
    a = np.arange(12.0).reshape(3, 4)
    t = tg.from_dlpack(a[:, ::2])  # positive strides: a view of the same memory
    assert t.shape == (3, 2)
    a[2, 2] = 99.0
    assert t[2, 1].item() == 99.0
    z = tg.from_dlpack(np.array(3.5))
    assert z.shape == () and z.item() == 3.5


def test_copy_is_independent():
    a = np.ones(3)
    t = tg.from_dlpack(a, copy=True)
    a[0] = 5.0
    assert t.tolist() == [1.0, 1.0, 1.0]


def test_our_own_tensor_shares_data_and_version_counter():
    x = tg.tensor([1.0, 2.0])
    y = tg.from_dlpack(x)
    assert y._data is x._data and y._counter is x._counter
    assert tg.from_dlpack(x, copy=True)._data is not x._data


def test_not_dlpack():
    with pytest.raises(TypeError, match=r"__dlpack__.*tg\.tensor"):
        tg.from_dlpack([1.0, 2.0])


class _Foreign:
    """A producer on a device we do not compute on."""

    def __init__(self, kind):
        self.kind = kind
        self.dtype, self.shape = "float32", (2,)

    def __dlpack_device__(self):
        return (self.kind, 0)

    def __dlpack__(self, **kwargs):  # pragma: no cover - never reached
        raise AssertionError("the device check comes first")


def test_wrong_devices():
    with pytest.raises(DeviceError, match=r"Metal device.*CPU"):
        tg.from_dlpack(_Foreign(8))
    with pytest.raises(DeviceError, match="ROCm"):
        tg.from_dlpack(_Foreign(10))
    if not cuda_available():  # a CUDA producer without CuPy/GPU: say how to get them
        with pytest.raises(DeviceError, match=r"tinygrad_edu\[gpu\]|no CUDA device"):
            tg.from_dlpack(_Foreign(2))


def test_export_refuses_what_a_consumer_could_break():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(BufferError, match=r"requires grad.*detach\(\)"):
        np.from_dlpack(w)
    assert np.from_dlpack(w.detach()).tolist() == [1.0, 2.0]  # detach() shares fine
    rev = tg.tensor([1.0, 2.0, 3.0])[::-1]
    with pytest.raises(BufferError, match=r"negative strides.*clone\(\)"):
        rev.__dlpack__()
    assert np.from_dlpack(rev.clone()).tolist() == [3.0, 2.0, 1.0]
    wide = tg.tensor([1.0, 2.0]).broadcast_to((3, 2))
    with pytest.raises(BufferError, match=r"read-only.*clone\(\)"):
        np.from_dlpack(wide)


def test_any_array_namespace():
    """The CPU namespace may be a strict array-API one (no numpy flags or strides): DLPack
    works the same, both ways."""
    import array_api_strict as xp

    from tinygrad_edu.backend import use_cpu_namespace

    with use_cpu_namespace(xp):
        t = tg.tensor([1.0, 2.0, 3.0])
        b = np.from_dlpack(t)
        b[0] = 5.0
        assert t.tolist() == [5.0, 2.0, 3.0]
        a = np.arange(3.0)
        u = tg.from_dlpack(a)
        assert type(u._data).__module__.startswith("array_api_strict")
        a[2] = -1.0
        assert u.tolist() == [0.0, 1.0, -1.0]


def test_zero_d_result_of_a_reduction_is_shared():
    s = (tg.tensor([1.0, 2.0]) * 2).sum()  # numpy hands back a numpy scalar here
    b = np.from_dlpack(s)
    assert s.__dlpack_device__() == (1, 0)
    b[...] = 7.0
    assert s.item() == 7.0


# -- PyTorch -----------------------------------------------------------------------------------
@pytest.fixture
def torch():
    import torch  # installed by make test: PyTorch is the reference here

    return torch


def test_doctests(torch):
    result = doctest.testmod(dlpack_module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 5


def test_torch_to_ours_shares_memory(torch):
    x = torch.arange(6.0).reshape(2, 3)
    t = tg.from_dlpack(x)
    assert _ptr(t) == x.data_ptr()
    x[1, 2] = -3.0  # PyTorch writes
    assert t[1, 2].item() == -3.0
    with tg.no_grad():
        t.add_(1)  # we write
    assert x[0, 0].item() == 1.0 and x[1, 2].item() == -2.0
    # the result is ours: it computes and differentiates like any tensor
    w = t.detach().requires_grad_()
    (w * w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * x.numpy())


def test_ours_to_torch_shares_memory(torch):
    t = tg.tensor([[1.0, 2.0], [3.0, 4.0]])
    x = torch.from_dlpack(t)
    assert x.data_ptr() == _ptr(t) and x.dtype == torch.float32
    x.mul_(10)
    assert t.tolist() == [[10.0, 20.0], [30.0, 40.0]]
    with tg.no_grad():
        t.sub_(5)
    assert x.tolist() == [[5.0, 15.0], [25.0, 35.0]]


def test_non_contiguous_both_ways(torch):
    x = torch.zeros(3, 4)
    t = tg.from_dlpack(x.T)  # strides, not a copy
    assert t.shape == (4, 3) and not t._data.flags.c_contiguous
    x[2, 1] = 8.0
    assert t[1, 2].item() == 8.0
    ours = tg.tensor(np.arange(12.0, dtype=np.float32).reshape(3, 4))
    back = torch.from_dlpack(ours.T)
    assert back.stride() == (1, 4) and back.data_ptr() == _ptr(ours)
    back[0, 1] = -1.0
    assert ours[1, 0].item() == -1.0


@pytest.mark.parametrize(
    "dtype", ["bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64"]
)
def test_dtypes_round_trip(torch, dtype):
    x = torch.zeros(3, dtype=getattr(torch, dtype))
    t = tg.from_dlpack(x)
    assert str(t.dtype) == dtype and not t.requires_grad
    x[1] = 1
    assert bool(t[1].item()) is True  # shared
    back = torch.from_dlpack(t)
    assert back.dtype == x.dtype and back.data_ptr() == x.data_ptr()


def test_zero_d_both_ways(torch):
    x = torch.tensor(2.5)
    t = tg.from_dlpack(x)
    assert t.shape == ()
    x.fill_(4.0)
    assert t.item() == 4.0
    y = torch.from_dlpack(tg.tensor(1.5))
    assert y.shape == () and y.item() == 1.5


def test_torch_tensor_that_requires_grad(torch):
    p = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"requires grad.*x\.detach\(\)"):
        tg.from_dlpack(p)
    t = tg.from_dlpack(p.detach())  # the fix the message gives: shares p's memory
    with torch.no_grad():
        p.add_(1.0)
    assert t.tolist() == [2.0, 2.0]


def test_torch_dtypes_and_devices_numpy_cannot_hold(torch):
    with pytest.raises(RuntimeError, match=r"bfloat16.*x\.float\(\)"):
        tg.from_dlpack(torch.ones(2, dtype=torch.bfloat16))
    with pytest.raises(RuntimeError, match=r"resolve_conj"):
        tg.from_dlpack(torch.ones(2, dtype=torch.complex64).conj())
    with pytest.raises(DeviceError, match=r"x\.cpu\(\)"):
        tg.from_dlpack(torch.ones(2, device="meta"))


def test_memory_outlives_the_producer(torch):
    t = tg.from_dlpack(torch.full((1000,), 3.0))  # the torch tensor is gone right away
    gc.collect()
    torch.zeros(1000)  # reuse of freed memory would show here
    assert float(t.sum().item()) == 3000.0


def test_version_counters_are_per_library(torch):
    """NOTE [Shared buffers and version counters]: PyTorch's in-place change is invisible to
    our counter (backward uses the new values); the same change made on our side is caught."""
    x = torch.tensor([1.0, 2.0])
    t = tg.from_dlpack(x)
    w = tg.tensor([1.0, 1.0], requires_grad=True)
    y = (w * t).sum()  # saves t for w's gradient
    x.mul_(10)  # PyTorch writes: our version counter does not move
    assert t._version == 0
    y.backward()
    assert w.grad.tolist() == [10.0, 20.0]  # computed with the new values, silently
    y = (w * t).sum()
    with tg.no_grad():
        t.mul_(10)  # the same change on our side bumps our counter
    with pytest.raises(RuntimeError, match="in-place"):
        y.backward()


@pytest.mark.gpu
@pytest.mark.skipif(not cuda_available(), reason="needs CuPy and a CUDA GPU")
def test_cupy_round_trip():  # pragma: no cover - GPU machines only
    import cupy

    a = cupy.arange(4.0)
    t = tg.from_dlpack(a)
    assert t.device == "cuda:0"
    a[0] = 9.0
    assert t[0].item() == 9.0
    b = cupy.from_dlpack(t)
    b[1] = -1.0
    assert float(a[1]) == -1.0
