"""The eager core (eager/core.py): the class handed over, one constructor, new_tensor/new_full."""

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
from tinygrad_edu.eager import core, functional
from tinygrad_edu.eager.tensor import Tensor

FIELDS = ("_data", "_device", "_requires_grad", "_grad_fn", "_output_nr", "_counter", "_grad",
          "_base")  # fmt: skip


def test_the_class_and_the_functional_were_handed_over():
    assert core.Tensor is Tensor is tg.Tensor
    assert core.F is functional.TENSOR_F


@pytest.mark.parametrize("make", [
    lambda: tg.Tensor([1.0, 2.0]),
    lambda: Tensor._make(np.ones(2)),
    lambda: tg.tensor([1.0, 2.0]) * 2,  # apply_op, not recorded
    lambda: tg.tensor([1.0, 2.0], requires_grad=True) * 2,  # apply_op, recorded
    lambda: tg.tensor([1.0, 2.0, 3.0])[:2],  # apply_op, a view
    lambda: tg.tensor([1.0, 2.0]).detach(),
])  # fmt: skip
def test_every_way_of_making_a_tensor_sets_every_field(make):
    t = make()
    for name in FIELDS:
        getattr(t, name)  # an unset slot raises AttributeError
    assert t._requires_grad == (t._grad_fn is not None)
    assert isinstance(t._counter, list)


def test_a_view_shares_the_version_counter_and_a_result_does_not():
    x = tg.tensor([1.0, 2.0, 3.0])
    assert x[:2]._counter is x._counter and x[:2]._base is x
    assert (x * 2)._counter is not x._counter


def test_new_tensor_copies_with_this_tensors_dtype_as_pytorch():
    x, tx = tg.tensor([1, 2], dtype=tg.float64), torch.tensor([1, 2], dtype=torch.float64)
    a = np.array([1.0, 2.0], dtype=np.float32)
    t = x.new_tensor(a)
    a[0] = 9.0
    assert t.tolist() == tx.new_tensor([1.0, 2.0]).tolist() == [1.0, 2.0]
    assert str(t.dtype) == "float64" and not t.requires_grad
    assert x.new_tensor([3], dtype="int32").dtype == np.int32
    assert x.new_tensor([3.0], requires_grad=True).is_leaf
    with pytest.raises(TypeError, match="new_tensor"):
        x.new_tensor(None)


def test_new_full_and_new_zeros_as_pytorch():
    x, tx = tg.tensor([1.0], dtype=tg.float64), torch.tensor([1.0], dtype=torch.float64)
    assert x.new_full((2, 3), 7).tolist() == tx.new_full((2, 3), 7).tolist()
    assert str(x.new_full((2,), 7).dtype) == "float64"
    assert x.new_zeros(2, 3).shape == tuple(tx.new_zeros(2, 3).shape)
    assert x.new_ones((2,)).tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="new_full.*non-negative"):
        x.new_full((-1,), 1.0)
