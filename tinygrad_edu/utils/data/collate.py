"""``default_collate``: how a ``DataLoader`` turns a list of samples into one batch, by
PyTorch's rules.

* tensors are stacked along a new first dimension (numpy arrays become tensors first);
* Python floats become a float64 tensor, ints an int64 tensor, bools a bool tensor, numpy
  scalars a tensor of their dtype; strings stay a list;
* a dict is collated key by key; a named tuple field by field;
* tuples and lists are collated position by position, and a tuple sample gives a **list**
  (``[xb, yb]``: PyTorch's backward-compatible choice; ``for xb, yb in loader`` works alike).

>>> import tinygrad_edu as tg
>>> from tinygrad_edu.utils.data import default_collate
>>> default_collate([(tg.tensor([1.0, 2.0]), 0), (tg.tensor([3.0, 4.0]), 1)])
[tensor([[1., 2.],
 [3., 4.]]), tensor([0, 1])]
>>> default_collate([{"x": 1.5}, {"x": 2.5}])
{'x': tensor([1.5, 2.5], dtype=float64)}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as _np  # what numpy data looks like

from ... import backend
from ...eager.dispatch import FUNCTIONS
from ...eager.factories import as_tensor, tensor
from ...eager.tensor import Tensor

__all__ = ["default_collate", "default_convert"]

_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
          "found {}")  # fmt: skip


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _stack(batch: list[Tensor]) -> Tensor:
    shape = batch[0].shape
    for i, t in enumerate(batch):
        if t.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(shape)} at entry 0 and {list(t.shape)} at entry {i} "
                               "(default_collate stacks the samples of a batch; give them one "
                               "shape, or pass a collate_fn that pads them)")  # fmt: skip
    dev = batch[0]._device
    if any(t.requires_grad or t._device != dev for t in batch):
        return FUNCTIONS["stack"](batch, 0)  # the op: recorded, or its device error
    xp = backend.namespace_of(batch[0]._data)  # plain data: stack the arrays directly
    return Tensor._make(xp.stack([t._data for t in batch]), device=dev)


def default_collate(batch):
    """Collate a list of samples into a batch (see the module docstring for the rules)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack(batch)
    if isinstance(elem, _np.ndarray | _np.generic):
        if elem.dtype.kind in "USO":
            raise TypeError(_ERROR.format(elem.dtype))
        if isinstance(elem, _np.ndarray) and elem.ndim > 0:
            return _stack([as_tensor(b) for b in batch])
        return tensor(_np.asarray(batch, dtype=elem.dtype))
    if isinstance(elem, float):
        return tensor(batch, dtype="float64")
    if isinstance(elem, int):  # bools too: tensor() keeps them bool
        return tensor(batch)
    if isinstance(elem, str | bytes):
        return batch
    if isinstance(elem, Mapping):
        out = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(out) if type(elem) is not dict else out
        except TypeError:
            return out
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(s) for s in zip(*batch)]  # (tuples: strings stay tuples)
        if isinstance(elem, tuple):
            return columns  # PyTorch: a list, for backward compatibility
        try:
            return type(elem)(columns) if type(elem) is not list else columns
        except TypeError:
            return columns
    raise TypeError(_ERROR.format(type(elem)))


def default_convert(data):
    """What a ``DataLoader`` does to each sample when it does not batch (``batch_size=None``):
    numpy arrays become tensors, containers are converted inside, the rest is kept."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, _np.ndarray | _np.generic):
        return data if data.dtype.kind in "USO" else as_tensor(data)
    if isinstance(data, Mapping):
        out = {k: default_convert(v) for k, v in data.items()}
        try:
            return type(data)(out) if type(data) is not dict else out
        except TypeError:
            return out
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, Sequence) and not isinstance(data, str | bytes):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data
