"""Ways to make tensors: ``tensor``, ``zeros``, ``ones``, ``full``, ``randn``, ``rand``,
``arange``, ``eye`` and the ``*_like`` forms. Random numbers come from one seeded generator
(``manual_seed``), drawn on the CPU, so a seed gives the same numbers on every device."""

from __future__ import annotations

import numpy as _np

from .. import backend
from .tensor import Tensor, tensor

__all__ = [
    "tensor", "zeros", "ones", "full", "randn", "rand", "arange", "eye",
    "zeros_like", "ones_like", "full_like", "randn_like", "rand_like", "manual_seed",
]  # fmt: skip

_rng = _np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    """Seed the generator behind ``randn``, ``rand``, dropout and data shuffling defaults."""
    global _rng
    _rng = _np.random.default_rng(seed)


def generator() -> _np.random.Generator:
    """The library's random generator (numpy's, on the CPU)."""
    return _rng


def _shape(shape):
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], tuple | list) else shape


def _make(array, dtype, device, requires_grad):
    dtype = dtype or "float32"
    return Tensor(array, requires_grad=requires_grad, dtype=dtype, device=device)


def full(shape, value, dtype=None, device=None, requires_grad=False) -> Tensor:
    xp = backend.get_namespace(device)
    dt = getattr(xp, dtype) if isinstance(dtype, str) else (dtype or xp.float32)
    data = xp.full(tuple(shape), value, dtype=dt)
    return Tensor(data, requires_grad=requires_grad, device=device)


def zeros(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
    return full(_shape(shape), 0, dtype, device, requires_grad)


def ones(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
    return full(_shape(shape), 1, dtype, device, requires_grad)


def randn(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Standard normal samples."""
    return _make(_rng.standard_normal(_shape(shape)), dtype, device, requires_grad)


def rand(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Uniform samples in [0, 1)."""
    return _make(_rng.random(_shape(shape)), dtype, device, requires_grad)


def arange(start, stop=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    if stop is None:
        start, stop = 0, start
    return _make(_np.arange(start, stop, step), dtype, device, requires_grad)


def eye(n: int, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _make(_np.eye(n), dtype, device, requires_grad)


def zeros_like(t, dtype=None, device=None, requires_grad=False) -> Tensor:
    return full(t.shape, 0, dtype or t.dtype, device or t.device, requires_grad)


def ones_like(t, dtype=None, device=None, requires_grad=False) -> Tensor:
    return full(t.shape, 1, dtype or t.dtype, device or t.device, requires_grad)


def full_like(t, value, dtype=None, device=None, requires_grad=False) -> Tensor:
    return full(t.shape, value, dtype or t.dtype, device or t.device, requires_grad)


def randn_like(t, dtype=None, device=None, requires_grad=False) -> Tensor:
    return randn(t.shape, dtype=dtype or t.dtype, device=device or t.device,
                 requires_grad=requires_grad)  # fmt: skip


def rand_like(t, dtype=None, device=None, requires_grad=False) -> Tensor:
    return rand(t.shape, dtype=dtype or t.dtype, device=device or t.device,
                requires_grad=requires_grad)  # fmt: skip
