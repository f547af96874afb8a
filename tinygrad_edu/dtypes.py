"""PyTorch's dtype names (``tg.float32``, ``tg.long`` ...), as the numpy scalar types that
numpy and CuPy arrays use: ``x.dtype == tg.float32`` and ``tg.zeros(2, dtype=tg.int64)`` work
as in PyTorch.

>>> import tinygrad_edu as tg
>>> tg.tensor([1, 2]).dtype == tg.long, tg.ones(2).dtype == tg.float
(True, True)
"""

from __future__ import annotations

import numpy as _np  # the dtype objects themselves

__all__ = [
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
    "bool", "half", "float", "double", "short", "int", "long", "dtype", "set_default_dtype",
    "get_default_dtype", "is_floating_point", "finfo", "iinfo",
]  # fmt: skip

float16 = half = _np.float16
float32 = float = _np.float32
float64 = double = _np.float64
int8 = _np.int8
int16 = short = _np.int16
int32 = int = _np.int32
int64 = long = _np.int64
uint8 = _np.uint8
bool = _np.bool_


# -- the default floating dtype and facts about dtypes (PyTorch's functions) ------------------
dtype = _np.dtype  # isinstance(x.dtype, tg.dtype)

_FLOATS = {_np.dtype(t).name: t for t in (_np.float16, _np.float32, _np.float64)}


def set_default_dtype(d) -> None:
    """Make ``d`` (``tg.float64``, ``tg.float32`` or ``tg.float16``) the dtype of Python
    floats, ``randn``/``zeros``/... and new layers' weights. Only floating dtypes, as in
    PyTorch.

    >>> import tinygrad_edu as tg
    >>> tg.set_default_dtype(tg.float64)
    >>> tg.tensor([1.5]).dtype, tg.nn.Linear(2, 1).weight.dtype
    (dtype('float64'), dtype('float64'))
    >>> tg.set_default_dtype(tg.float32)
    """
    from . import backend  # noqa: PLC0415

    try:
        name = _np.dtype(d.removeprefix("torch.") if isinstance(d, str) else d).name
    except TypeError:
        name = None
    if name not in _FLOATS:
        raise TypeError(f"set_default_dtype: only floating-point types are supported as the "
                        f"default type, got {d!r}; use tg.float32 or tg.float64")  # fmt: skip
    backend.set_default_float(name)


def get_default_dtype():
    """The default floating dtype (``tg.float32`` unless :func:`set_default_dtype` changed
    it)."""
    from . import backend  # noqa: PLC0415

    return _FLOATS[_np.dtype(backend.default_float(_np)).name]


def is_floating_point(input) -> bool:
    """True when ``input``'s dtype is a floating type."""
    return _np.dtype(input.dtype).kind == "f"


def finfo(type=None):  # noqa: A002  (PyTorch's argument name)
    """Machine limits of a floating dtype (``eps``, ``max``, ``min``, ``tiny``, ``bits``):
    numpy's ``finfo``, for the default dtype when none is given."""
    return _np.finfo(get_default_dtype() if type is None else type)


def iinfo(type):  # noqa: A002
    """Machine limits of an integer dtype (``min``, ``max``, ``bits``)."""
    return _np.iinfo(type)
