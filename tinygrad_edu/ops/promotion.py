r"""PyTorch's type promotion: the dtype of ``a + b`` when ``a`` and ``b`` differ.

numpy and PyTorch agree when both operands have one dtype, and on a float array met by a
Python number. They disagree elsewhere, and the eager engine follows PyTorch:

* **Categories first.** bool < integer < floating. A result takes the highest category present;
  an integer array met by a float array becomes that float dtype (numpy widens to float64).
* **Python numbers are weak.** They only raise the category: ``int64 tensor + 0.5`` is the
  default float, float32 (numpy: float64), and ``float32 tensor * 2.0`` stays float32. numpy
  scalars (``np.float64(2.0)``) count as Python numbers, as in PyTorch.
* **0-d arrays are weaker than arrays with dimensions.** ``float32 (3,) + float64 ()`` is
  float32 (numpy: float64); a 0-d array of a higher category still raises it.
* **True division of integers** gives the default float, float32 (numpy: float64).

>>> import numpy as np
>>> from tinygrad_edu.ops.promotion import result_type
>>> np.dtype(result_type(np, np.arange(3), 0.5)).name  # numpy: float64
'float32'
>>> np.dtype(result_type(np, np.ones(2, np.float32), np.float64(2))).name  # numpy: float64
'float32'
"""

from __future__ import annotations

import numpy as _np  # type checks only (a numpy scalar is a weak operand)

__all__ = ["result_type", "torch_result", "category", "can_cast", "floating"]

_BOOL, _INT, _FLOAT = 0, 1, 2
# dtype type -> {dtype: category}: one table per kind of dtype object, so that a numpy dtype
# and another namespace's (array_api_strict's float32 hashes like numpy's) never meet in one
# table, whose lookup would compare them (array_api_strict warns on that comparison)
_CATEGORIES: dict = {}


def category(dtype) -> int:
    """0 for bool, 1 for integers, 2 for floating dtypes (of any namespace)."""
    table = _CATEGORIES.get(type(dtype))
    if table is None:
        table = _CATEGORIES[type(dtype)] = {}
    hit = table.get(dtype)
    if hit is None:
        name = str(dtype)
        hit = _FLOAT if "float" in name else _BOOL if "bool" in name else _INT
        table[dtype] = hit
    return hit


def can_cast(src, dst) -> bool:
    """PyTorch's rule for writing a result of dtype ``src`` into a tensor of dtype ``dst``
    in place: never to a lower category (float into int, int into bool)."""
    return category(src) <= category(dst)


def _promote(xp, a, b):
    if a is None:
        return b
    if b is None or a == b:
        return a
    ca, cb = category(a), category(b)
    if ca != cb:
        return a if ca > cb else b
    return xp.result_type(a, b)


def _weak_dtype(xp, x):
    """The dtype a Python (or numpy) scalar stands for: PyTorch's defaults."""
    if isinstance(x, bool):
        return xp.bool
    if isinstance(x, int):
        return xp.int64
    if isinstance(x, float):
        return xp.float32
    cat = category(x.dtype)  # a numpy scalar
    return xp.float32 if cat == _FLOAT else xp.int64 if cat == _INT else xp.bool


def result_type(xp, *operands, floating: bool = False):
    """PyTorch's result dtype for an elementwise op on ``operands`` (arrays and scalars).

    With ``floating=True`` (true division), an integer or bool result becomes float32.
    """
    dims = zero = weak = None
    for x in operands:
        shape = getattr(x, "shape", None)
        if shape is None or isinstance(x, _np.generic):  # numpy scalars are weak too
            weak = _promote(xp, weak, _weak_dtype(xp, x))
        elif len(shape):
            dims = _promote(xp, dims, x.dtype)
        else:
            zero = _promote(xp, zero, x.dtype)
    out = _combine(xp, dims, _combine(xp, zero, weak))
    if floating and category(out) != _FLOAT:
        return xp.float32
    return out


def _combine(xp, higher, lower):
    """c10's ``combine_categories``: a weaker participant only ever raises the category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if category(higher) == _FLOAT:
        return higher
    if category(higher) == _BOOL or category(lower) == _FLOAT:
        return _promote(xp, higher, lower)
    return higher


def torch_result(xp, out, a, b, floating: bool = False):
    """``out``, computed by the array library from ``a`` and ``b``, in PyTorch's dtype.

    The common case (one dtype throughout) is one comparison; only mixed dtypes pay for
    :func:`result_type`.
    """
    dt = getattr(out, "dtype", None)
    if dt is None:  # two Python numbers (constants of the symbolic engine): stay numbers
        return out
    da, db = getattr(a, "dtype", dt), getattr(b, "dtype", dt)
    # NOTE: ``is`` first: numpy's dtype ``==`` converts its operand before comparing, and the
    # same dtype object is the common case (about 0.3% of a small op; costs a longer test)
    if (da is dt or da == dt) and (db is dt or db == dt):
        return out  # (integer division lands here only if the library already gave floats)
    want = result_type(xp, a, b, floating=floating)
    return out if want == dt else xp.astype(out, want)


def floating(xp, x):
    """``x`` itself when it is floating, else ``x`` as float32, PyTorch's default float: what
    ``exp``, ``sqrt``, ``sigmoid`` ... of an integer or bool tensor compute in (numpy would
    give float64).

    >>> import numpy as np
    >>> floating(np, np.arange(3)).dtype, floating(np, np.ones(2)).dtype
    (dtype('float32'), dtype('float64'))
    """
    dt = getattr(x, "dtype", None)
    if dt is None or category(dt) == _FLOAT:
        return x
    return xp.astype(x, xp.float32)
