"""``div(rounding_mode=)`` and one-argument ``where``, against PyTorch."""

import numpy as np
import pytest
import torch

import tinygrad_edu as tg


@pytest.mark.parametrize("mode", ["trunc", "floor"])
@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("float64", "float64"),
                                    ("int64", "int64"), ("int32", "int64"), ("int64", "float32")])
def test_div_rounding_values_dtypes(mode, dtypes):
    rng = np.random.default_rng(1)
    a = (rng.standard_normal(2000) * 20).astype(dtypes[0])
    b = (rng.standard_normal(2000) * 3).astype(dtypes[1])
    b[b == 0] = 1
    ours = tg.div(tg.tensor(a), tg.tensor(b), rounding_mode=mode)
    theirs = torch.div(torch.tensor(a), torch.tensor(b), rounding_mode=mode)
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    np.testing.assert_array_equal(tg.tensor(a).div(tg.tensor(b), rounding_mode=mode).numpy(),
                                  theirs.numpy())  # fmt: skip


def test_div_floor_is_pytorchs_exact_floor():
    """floor(1/0.1) of the rounded quotient is 10, PyTorch's (and Python's) floor is 9."""
    a, b = tg.tensor([1.0, -7.0, 7.0], dtype=tg.float64), tg.tensor([0.1, 2.0, -2.0],
                                                                    dtype=tg.float64)
    assert tg.div(a, b, rounding_mode="floor").tolist() == [9.0, -4.0, -4.0]


@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_div_rounding_gradient_is_zero(mode):
    a = tg.tensor([7.0, -7.0, 3.0], requires_grad=True)
    b = tg.tensor([2.0, 2.0, 4.0], requires_grad=True)
    y = tg.div(a, b, rounding_mode=mode)
    assert y.requires_grad
    (y * tg.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert a.grad.tolist() == [0.0, 0.0, 0.0] and b.grad.tolist() == [0.0, 0.0, 0.0]


def test_div_rounding_in_place_and_errors():
    x = tg.tensor([5.0, -3.0])
    x.div_(2, rounding_mode="floor")
    assert x.tolist() == [2.0, -2.0]
    x = tg.tensor([5.0, -3.0])
    x.div_(2, rounding_mode="trunc")
    assert x.tolist() == [2.0, -1.0]
    with pytest.raises(ValueError, match="rounding_mode"):
        tg.div(x, 2, rounding_mode="round")
    assert tg.div(tg.tensor([3.0]), 2, rounding_mode=None).tolist() == [1.5]


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 2), ()])
def test_where_one_argument_is_nonzero_as_tuple(shape):
    rng = np.random.default_rng(0)
    c = rng.integers(0, 2, shape)
    ours = tg.where(tg.tensor(c))
    theirs = torch.where(torch.tensor(c))
    assert isinstance(ours, tuple) and len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert str(o.dtype) == "int64"
        np.testing.assert_array_equal(o.numpy(), t.numpy())


def test_where_with_two_arguments_is_an_error():
    with pytest.raises(TypeError, match="where"):
        tg.where(tg.tensor([True]), tg.tensor([1.0]))


@pytest.mark.parametrize("v", [0, 3])
def test_nonzero_as_tuple_of_a_0d_tensor(v):
    """PyTorch reads a 0-d input as (1,): (tensor([0]),) or an empty index."""
    ours, theirs = tg.nonzero(tg.tensor(v), as_tuple=True), torch.nonzero(torch.tensor(v),
                                                                            as_tuple=True)
    assert [t.tolist() for t in ours] == [t.tolist() for t in theirs]
    assert [t.tolist() for t in tg.where(tg.tensor(v))] == [t.tolist() for t in theirs]
