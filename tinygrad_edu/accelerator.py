"""``tg.accelerator``: PyTorch's device-neutral accelerator API (PyTorch >= 2.6), which newer
tutorials use to pick a device:

>>> import tinygrad_edu as tg
>>> device = tg.accelerator.current_accelerator().type if tg.accelerator.is_available() else "cpu"
>>> device in ("cpu", "cuda")
True

The only accelerator here is a CUDA GPU through CuPy (see :mod:`tinygrad_edu.cuda`).
"""

from __future__ import annotations

from . import backend, cuda

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "set_device_index", "synchronize"]  # fmt: skip


def is_available() -> bool:
    """True when a CUDA GPU can be used (CuPy sees one)."""
    return cuda.is_available()


def current_accelerator(check_available: bool = False):
    """``device("cuda")`` when a GPU is available, else None (PyTorch's answer without one)."""
    return backend.device("cuda") if cuda.is_available() else None


def device_count() -> int:
    return cuda.device_count()


def current_device_index() -> int:
    return cuda.current_device()


def set_device_index(device) -> None:
    cuda.set_device(device)


def synchronize(device=None) -> None:
    cuda.synchronize(device)
