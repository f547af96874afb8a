"""The ``out=`` keyword of the ``tg.`` functions (``tg.exp(x, out=y)``), added once to every
generated function rather than op by op.

``out`` receives the result in place: same shape, it is overwritten (its views see the new
values); another shape, it is resized, with PyTorch's deprecation warning when it held
elements. The result is cast to ``out``'s dtype when PyTorch allows it (within a kind or
upwards: int into float, float64 into float32, never float into int). As in PyTorch, a call
with ``out=`` is not recorded for autograd: an argument that requires grad is an error while
grad mode is on.

>>> import tinygrad_edu as tg
>>> y = tg.zeros(3)
>>> tg.add(tg.tensor([1.0, 2.0, 3.0]), 1, out=y) is y, y
(True, tensor([2., 3., 4.]))
"""

from __future__ import annotations

import functools
import warnings

import numpy as _np  # dtype rules

from .. import backend
from . import core, grad_mode

__all__ = ["with_out"]


def _requires_grad(values) -> bool:
    for v in values:
        if isinstance(v, core.Tensor) and v.requires_grad:
            return True
        if isinstance(v, list | tuple) and _requires_grad(v):
            return True
    return False


def _write(name: str, result, out):
    if not isinstance(out, core.Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if out._device != result._device:
        raise RuntimeError(f"{name}(): Expected out tensor to have device {result.device}, but "
                           f"got {out.device} instead")  # fmt: skip
    src, dst = _np.dtype(str(result.dtype)), _np.dtype(str(out.dtype))
    if src != dst and not (_np.can_cast(src, dst, "same_kind") or src.kind == "b"):
        raise RuntimeError(f"{name}(): result type {src} can't be cast to the desired output "
                           f"type {dst}")  # fmt: skip
    xp = backend.namespace_of(out._data)
    data = result._data if src == dst else backend.astype(result._data, out.dtype)
    if out.shape == result.shape:
        out._data[...] = data
    else:
        if out.numel():
            warnings.warn(f"{name}(): An output with one or more elements was resized since it "
                          f"had shape {list(out.shape)}, which does not match the required "
                          f"output shape {list(result.shape)}. This behavior is deprecated, "
                          "and in a future PyTorch release outputs will not be resized unless "
                          "they have zero elements. You can explicitly reuse an out tensor t "
                          "by resizing it, inplace, to zero elements with t.resize_(0).",
                          UserWarning, stacklevel=3)  # fmt: skip
        out._data = xp.asarray(data, copy=True)
    out._counter[0] += 1
    return out


def with_out(fn):
    """``fn`` with PyTorch's ``out=`` keyword (see the module docstring)."""
    name = fn.__name__

    @functools.wraps(fn)
    def call(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if grad_mode.is_grad_enabled() and (
            _requires_grad(args) or _requires_grad(kwargs.values()) or _requires_grad(
                out if isinstance(out, list | tuple) else (out,))
        ):  # fmt: skip
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires "
                               "grad.")  # fmt: skip
        result = fn(*args, **kwargs)
        if isinstance(result, core.Tensor):
            if isinstance(out, list | tuple):
                raise TypeError(f"{name}(): argument 'out' must be Tensor, not "
                                f"{type(out).__name__}")  # fmt: skip
            return _write(name, result, out)
        if isinstance(result, tuple) and hasattr(result, "_fields"):  # (values, indices)
            if not isinstance(out, list | tuple) or len(out) != len(result):
                raise TypeError(f"{name}(): argument 'out' must be a tuple of "
                                f"{len(result)} tensors ({', '.join(result._fields)})")
            return type(result)(*(_write(name, r, o) for r, o in zip(result, out)))
        raise TypeError(f"{name}() got an unexpected keyword argument 'out'")

    return call
