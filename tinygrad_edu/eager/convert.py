"""What a tensor is made of, from what users give: Python data and arrays into a tensor's
array (``Tensor(data)``, PyTorch's legacy ``Tensor(*sizes)``), dtype names into dtypes, device
names into devices, and indices (``x[t]``, ``x[[0, 2]]``) into array indices.

Below ``tensor.py``: it reads the ``Tensor`` class from :mod:`~tinygrad_edu.eager.core`.
"""

from __future__ import annotations

import numpy as _np

from .. import backend
from . import core, grad_mode

__all__: list = []


def _legacy_data(args, dtype):
    """The data of PyTorch's legacy constructor: ``Tensor(data)``, or ``Tensor(*sizes)`` (ints)
    for a tensor of that shape, or ``Tensor()`` for an empty one."""
    if len(args) == 1 and not _is_size(args[0]):
        if isinstance(args[0], float | bool | complex):
            raise TypeError(
                f"Tensor(): data must be a sequence (got {type(args[0]).__name__}), as in "
                f"PyTorch; use tg.tensor({args[0]!r}) for a 0-d tensor, or tg.Tensor([...])"
            )
        return args[0]
    bad = [a for a in args if not _is_size(a)]
    if bad:
        raise TypeError(
            f"Tensor(*sizes): every size must be an int, got {bad[0]!r} in {args}; pass the "
            "data as one argument (tg.Tensor([1, 2])), or requires_grad/dtype/device by keyword"
        )
    if any(a < 0 for a in args):
        raise RuntimeError(f"Tensor(*sizes): negative dimension in {args}")
    return _np.zeros(tuple(int(a) for a in args) or (0,), dtype=dtype or _np.float32)


def _is_size(a) -> bool:
    return isinstance(a, int) and not isinstance(a, bool) or isinstance(a, _np.integer)


def _varargs(shape):
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], tuple | list) else shape


def _is_device(name) -> bool:
    try:
        backend.parse_device(name)
        return True
    except backend.DeviceError:
        return False


def _raw_index(index, t):
    """An index with tensors and lists as arrays; an all-int index gets a trailing ``...``
    so that ``x[0]`` of a vector is a 0-d view, as in PyTorch (numpy would copy a scalar)."""
    parts = index if isinstance(index, tuple) else (index,)
    out = []
    for p in parts:
        if isinstance(p, core.Tensor):
            tensor, p = p, p._data
            if p.ndim == 0 and not backend.is_floating(p.dtype) and p.dtype != bool:
                # a value read: through .item() while tg.compile traces (which sees it)
                p = int(tensor.item()) if grad_mode._state.trace is not None else int(p)
        elif isinstance(p, list):
            p = backend.namespace_of(t._data).asarray(p)
        out.append(p)
    if all(isinstance(p, int) for p in out):
        out.append(Ellipsis)
    return tuple(out) if len(out) > 1 or isinstance(index, tuple) else out[0]


def _device_of(data):
    if isinstance(data, core.Tensor):
        return data._device
    return backend.device_of(data) if hasattr(data, "shape") else "cpu"


_LEGACY_NAMES = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
                 "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16",
                 "CharTensor": "int8", "ByteTensor": "uint8", "BoolTensor": "bool"}  # fmt: skip


def _resolve_dtype(like, dtype):
    """A dtype given as a name (``"float32"``), a numpy type (``tg.float32``) or a dtype."""
    if dtype is None:
        return None
    xp = backend.namespace_of(like)
    if isinstance(dtype, str):
        name = dtype.removeprefix("torch.")
        name = _LEGACY_NAMES.get(name, name)  # x.type("torch.LongTensor")
        if not hasattr(xp, name):
            raise TypeError(f"unknown dtype {dtype!r}; use e.g. 'float32', 'int64', 'bool'")
        return getattr(xp, name)
    return _np.dtype(dtype) if xp is _np else dtype


def _to_array(data, dtype, dev):
    """Python data -> float32 (bools stay bool); arrays keep their dtype unless told."""
    if isinstance(data, core.Tensor):
        data = data._data
    xp = backend.get_namespace(dev)
    if dtype is not None and isinstance(dtype, str):
        dtype = getattr(xp, dtype)
    if not hasattr(data, "shape"):  # Python data
        probe = _np.asarray(data)
        if probe.dtype.kind not in "biuf":
            raise TypeError(
                f"cannot make a tensor from {type(data).__name__} {data!r:.60}; give numbers, "
                "nested lists of numbers, or an array"
            )
        if dtype is None:
            dtype = xp.bool if probe.dtype == _np.bool_ else backend.default_float(xp)
        return (
            xp.asarray(_np.asarray(data), dtype=dtype)
            if dev.type == "cpu"
            else xp.asarray(data, dtype=dtype)
        )
    arr = backend.to_device(data, dev)
    return arr if dtype is None or arr.dtype == dtype else xp.astype(arr, dtype)
