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
    "bool", "half", "float", "double", "short", "int", "long",
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
