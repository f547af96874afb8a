"""The short paths that small programs take many times (docs/performance.md, the part on
makemore, bigram and regression), each against the path it shortens or against PyTorch:
``tg.tensor`` of a flat list, ``zeros``/``full``/``randn`` on the CPU, the in-place ops
outside grad mode, ``unsqueeze(d)``, axis checks, the view test of indexing, numpy scalars
out of an op, and the weight gradient of ``(..., n, k) @ (k, m)`` as one product."""

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
from tinygrad_edu import backend
from tinygrad_edu.eager import dispatch, factories
from tinygrad_edu.ops import REGISTRY, IndexShapeError, ShapeError
from tinygrad_edu.ops.base import normalize_axes
from tinygrad_edu.ops.shape import _expanded


def plain_tensor(data):
    """What ``tg.tensor(data)`` made before the flat-list path: the item-by-item conversion,
    copied."""
    return np.array(factories._python_data(data), copy=True)


# -- tg.tensor of a flat list ----------------------------------------------------------------
FLAT = [[1, 2, 3], [1.5, 2], [True, False], [True, 2], [1, 2.5, True], [2**62, -5], [2**63],
        [float("nan"), 1e300], [0.1] * 7, [-0.0, 0.0], [3], list(range(1000))]  # fmt: skip


@pytest.mark.parametrize("data", FLAT, ids=range(len(FLAT)))
def test_flat_list_matches_the_item_by_item_conversion(data):
    with np.errstate(over="ignore"):
        want = plain_tensor(data)
        fast = factories._flat_numbers(data)
        got = tg.tensor(data)._data
    assert fast is not None  # the short path was taken ...
    assert got.dtype == want.dtype and got.shape == want.shape  # ... and gave the same array
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    assert got.flags.owndata and got.flags.writeable and got.flags.c_contiguous


def test_flat_list_dtypes_are_torchs():
    for data in ([1, 2], [1.5, 2], [True, False], [True, 2]):
        assert str(tg.tensor(data).dtype) == str(torch.tensor(data).dtype).removeprefix("torch.")
    assert tg.tensor([1, 2], dtype=tg.float64).dtype == np.float64
    assert tg.tensor([1.5, 2.5], dtype="int64").tolist() == [1, 2]


@pytest.mark.parametrize("data", [[[1, 2], [3, 4]], [tg.tensor(1.0), 2.0], [], (1, 2),
                                  [1, [2]], [1, "a"], [1, None], [1, 1j]])  # fmt: skip
def test_anything_but_a_row_of_numbers_takes_the_plain_way(data):
    assert factories._flat_numbers(data) is None or isinstance(data[0], tg.Tensor)
    try:
        want = plain_tensor(data)
    except TypeError as e:
        with pytest.raises(TypeError, match="cannot make a tensor"):
            tg.tensor(data)
        assert "cannot make a tensor" in str(e)
        return
    got = tg.tensor(data)._data
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_tensors_among_numbers_convert_as_before():
    t = tg.tensor(2.0, requires_grad=True)
    for data in ([1, tg.tensor(2.0)], [1.0, tg.tensor(2, dtype=tg.int32)], [1, t]):
        got, want = tg.tensor(data)._data, plain_tensor(data)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_a_flat_list_tensor_owns_its_memory():
    data = [1.0, 2.0, 3.0]
    a, b = tg.tensor(data), tg.tensor(data)
    a[0] = 7.0
    assert b.tolist() == [1.0, 2.0, 3.0] and data == [1.0, 2.0, 3.0]


def test_flat_list_under_another_cpu_namespace_keeps_that_namespace():
    xps = pytest.importorskip("array_api_strict")
    with backend.use_cpu_namespace(xps):
        t = tg.tensor([1.0, 2.0])
    assert type(t._data) is not np.ndarray
    assert np.asarray(t._data).tolist() == [1.0, 2.0]


# -- zeros, full, randn ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [None, tg.float64, tg.long, tg.bool, "int32", "float16"])
@pytest.mark.parametrize("size", [(16,), (2, 3), (), (0, 4)])
def test_zeros_and_full_are_numpys_full(size, dtype):
    for fill, make in ((0.0, lambda: tg.zeros(size, dtype=dtype)),
                       (0.0, lambda: tg.zeros(*(size or [()]), dtype=dtype)),
                       (1.0, lambda: tg.ones(size, dtype=dtype)),
                       (-0.0, lambda: tg.full(size, -0.0, dtype=dtype)),
                       (2.5, lambda: tg.full(size, 2.5, dtype=dtype))):  # fmt: skip
        t = make()
        dt = np.dtype(dtype) if dtype is not None else np.dtype(np.float32)
        want = np.full(size, fill, dtype=dt)
        assert t._data.dtype == want.dtype and t._data.shape == want.shape
        assert t._data.tobytes() == want.tobytes()  # bits: -0.0 stays -0.0
        assert t.grad_fn is None and not t.requires_grad and t._counter == [0]
        assert t._device is backend.parse_device("cpu") and t._data.flags.owndata


def test_full_dtype_follows_the_value_as_torch():
    for value in (7, 2.5, True):
        assert str(tg.full((2,), value).dtype) == str(torch.full((2,), value).dtype).split(".")[1]


def test_zeros_requires_grad_and_size_errors_as_before():
    t = tg.zeros(2, 3, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    with pytest.raises(RuntimeError, match="only floating dtypes can require grad"):
        tg.zeros(2, dtype=tg.long, requires_grad=True)
    with pytest.raises(RuntimeError, match="non-negative"):
        tg.zeros(2, -1)
    with pytest.raises(TypeError, match="non-negative ints"):
        tg.zeros(2.0, 3)
    with pytest.raises(TypeError, match="an integer is required"):  # numpy's, as before
        tg.zeros(True, 2)


def test_factories_follow_the_default_device():
    tg.set_default_device("sim:0")
    try:
        for t in (tg.zeros(2), tg.full((2,), 3.0), tg.randn(2), tg.tensor([1.0, 2.0])):
            assert t.device.type == "sim"
    finally:
        tg.set_default_device(None)
    assert tg.zeros(2).device.type == "cpu"


def test_randn_draws_the_generators_numbers():
    tg.manual_seed(3)
    got = tg.randn(5)._data
    tg.manual_seed(3)
    want = factories.generator().standard_normal((5,)).astype(np.float32)
    assert got.tobytes() == want.tobytes()
    assert tg.randn(2, requires_grad=True).requires_grad


# -- in-place ops outside grad mode ----------------------------------------------------------
def test_inplace_without_grad_writes_and_bumps_the_version():
    x = tg.tensor([1.0, 2.0])
    v = x._counter[0]
    x.add_(tg.tensor([0.5, 0.25]))
    x.mul_(2)
    assert x.tolist() == [3.0, 4.5] and x._counter[0] == v + 2 and x.grad_fn is None
    w = tg.tensor([1.0], requires_grad=True)
    with tg.no_grad():
        w.sub_(0.5)
    assert w.tolist() == [0.5] and w.grad_fn is None and w.is_leaf
    with pytest.raises(RuntimeError, match="cannot be written into"):
        tg.tensor([1, 2]).add_(tg.tensor([0.5, 0.5]))
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        w.add_(1.0)


# -- unsqueeze and axis checks ---------------------------------------------------------------
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_unsqueeze_places_the_axis_as_numpy(shape):
    x = np.zeros(shape)
    for d in range(-len(shape) - 1, len(shape) + 1):
        assert _expanded(shape, d) == np.expand_dims(x, d).shape
        assert tg.tensor(x).unsqueeze(d).shape == torch.tensor(x).unsqueeze(d).shape
    for d in (-len(shape) - 2, len(shape) + 1):
        with pytest.raises(IndexShapeError, match="out of range"):
            _expanded(shape, d)
    assert _expanded(shape, (0, -1)) == np.expand_dims(x, (0, -1)).shape


def test_axis_errors_still_name_the_shape():
    with pytest.raises(IndexShapeError, match=r"axis 3 is out of range for shape \(2, 3\)"):
        normalize_axes("sum", 3, 2, (2, 3))
    with pytest.raises(IndexShapeError, match="out of range for an input"):
        normalize_axes("sum", -3, 2)
    with pytest.raises(ShapeError, match=r"names an axis twice \(input shape \(2, 3\)\)"):
        normalize_axes("sum", (1, -1), 2, (2, 3))
    assert normalize_axes("sum", 1, 2) == (1,) and normalize_axes("sum", (-1, 0), 2) == (0, 1)


# -- indexing's view test, numpy scalars out of an op ----------------------------------------
def test_slices_of_a_view_are_views_of_its_base():
    data = tg.tensor(np.arange(20))
    train = data[:15]
    for piece in (train[2:6], train[tg.tensor(3) : tg.tensor(3) + 4], list(train)[4]):
        assert piece._counter is data._counter and piece._base is data
    data[4] = 100
    assert train[2:6].tolist() == [2, 3, 100, 5]
    copy = train[[1, 2]]
    assert copy._counter is not data._counter and copy._base is None
    a = np.arange(6)
    for out, src, want in (
        (a[1:], a, True),
        (a[1:][1:], a[1:], True),
        (a.copy(), a, False),
        (a[1:].reshape(5, 1), a[2:], True),
        (np.arange(3), a, False),
    ):
        assert dispatch._shares(out, src) is want is (dispatch._owner(out) is
                                                       dispatch._owner(src))  # fmt: skip


def test_numpy_scalars_become_0d_arrays():
    for value in (np.int64(3), np.float32(2.5), np.bool_(True), np.uint8(7)):
        out = dispatch._as_array(np, value)
        assert type(out) is np.ndarray and out.shape == () and out.dtype == value.dtype
        assert out.item() == value.item()
    i = tg.tensor(3)
    for t in (i + 8, i * 2, -i):
        assert type(t._data) is np.ndarray and t.dtype == np.int64 and t.shape == ()


# -- matmul's weight gradient as one product -------------------------------------------------
@pytest.mark.parametrize("trans_B", [False, True])
@pytest.mark.parametrize("shape", [(16, 16, 32), (2, 3, 5, 32), (1, 4, 32), (0, 3, 32)])
def test_shared_matrix_gradient_is_one_product_as_torch(shape, trans_B):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    w = rng.standard_normal((24, 32) if trans_B else (32, 24))
    g = rng.standard_normal(shape[:-1] + (24,))
    X, W = tg.tensor(x, requires_grad=True), tg.tensor(w, requires_grad=True)
    tg.matmul(X, W, trans_B=trans_B).backward(tg.tensor(g))
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    (tx @ (tw.T if trans_B else tw)).backward(torch.tensor(g))
    np.testing.assert_allclose(W.grad.numpy(), tw.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(X.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
    # the same product PyTorch computes: the rows stacked, one GEMM
    rows = x.reshape(-1, 32), g.reshape(-1, 24)
    want = rows[1].T @ rows[0] if trans_B else rows[0].T @ rows[1]
    assert W.grad.numpy().tobytes() == want.tobytes()
    # and what the batched products summed over the batch give, to rounding
    per_row = (np.swapaxes(x, -1, -2) @ g).reshape(-1, 32, 24).sum(0)
    np.testing.assert_allclose(W.grad.numpy(), per_row.T if trans_B else per_row, rtol=1e-10,
                               atol=1e-12)  # fmt: skip


def test_shared_matrix_gradient_float32_agrees_with_torch():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 16, 32)).astype(np.float32)
    lin, tlin = tg.nn.Linear(32, 96), torch.nn.Linear(32, 96)
    with tg.no_grad():
        lin.weight.copy_(tg.tensor(tlin.weight.detach().numpy()))
        lin.bias.copy_(tg.tensor(tlin.bias.detach().numpy()))
    lin(tg.tensor(x)).square().sum().backward()
    tlin(torch.tensor(x)).square().sum().backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), tlin.weight.grad.numpy(), rtol=1e-4,
                               atol=1e-3)  # fmt: skip


def test_shared_matrix_gradient_of_a_gradient():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4))
    X, W = tg.tensor(x, requires_grad=True), tg.tensor(w, requires_grad=True)
    (gw,) = tg.autograd.grad((tg.matmul(X, W, trans_B=True) ** 2).sum(), W, create_graph=True)
    (gw**2).sum().backward()
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    (tgw,) = torch.autograd.grad(((tx @ tw.T) ** 2).sum(), tw, create_graph=True)
    (tgw**2).sum().backward()
    np.testing.assert_allclose(gw.detach().numpy(), tgw.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(X.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(W.grad.numpy(), tw.grad.numpy(), rtol=1e-12)


def test_batched_operands_and_transposed_inputs_keep_the_batched_rule():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((3, 4, 5)), rng.standard_normal((3, 5, 2))
    A, B = tg.tensor(a, requires_grad=True), tg.tensor(b, requires_grad=True)
    tg.matmul(A, B).sum().backward()
    np.testing.assert_allclose(B.grad.numpy(), np.swapaxes(a, -1, -2) @ np.ones((3, 4, 2)))
    a2, w = rng.standard_normal((3, 5, 4)), rng.standard_normal((5, 2))  # trans_A: no fold
    A2, W = tg.tensor(a2, requires_grad=True), tg.tensor(w, requires_grad=True)
    tg.matmul(A2, W, trans_A=True).sum().backward()
    want = (a2 @ np.ones((3, 4, 2))).sum(0)
    np.testing.assert_allclose(W.grad.numpy(), want, rtol=1e-12)
    assert REGISTRY["matmul"].saves == (0, 1)
