"""``tg.cuda``: PyTorch's ``torch.cuda`` functions that scripts probe before choosing a device.

``is_available()`` is True exactly when the CuPy backend can run (CuPy imports and sees a
GPU), so the usual ``device = "cuda" if tg.cuda.is_available() else "cpu"`` runs on the CPU
here and on CuPy where a GPU is present.

Random numbers for every device are drawn by the one CPU generator (see
:mod:`tinygrad_edu.eager.random`), so ``cuda.manual_seed`` has nothing of its own to seed: it
is accepted and does nothing; ``tg.manual_seed`` seeds everything.

>>> import tinygrad_edu as tg
>>> device = "cuda" if tg.cuda.is_available() else "cpu"
>>> tg.ones(2, device=device).device == device
True
"""

from __future__ import annotations

from . import backend

__all__ = [
    "is_available", "device_count", "current_device", "set_device", "get_device_name",
    "synchronize", "empty_cache", "manual_seed", "manual_seed_all", "is_initialized",
    "is_bf16_supported", "memory_allocated", "max_memory_allocated", "device",
    "OutOfMemoryError",
]  # fmt: skip

device = backend.device
OutOfMemoryError = backend.OutOfMemoryError  # a failed GPU allocation names device and size


def __getattr__(name):
    if name == "amp":  # torch.cuda.amp.GradScaler / autocast: the same as tg.amp's
        from . import amp

        return amp
    raise AttributeError(f"module 'tinygrad_edu.cuda' has no attribute {name!r}")


def is_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    return backend.cuda_available()


def device_count() -> int:
    """The number of CUDA devices CuPy sees (0 without CuPy or a GPU)."""
    if not is_available():
        return 0
    return int(backend._import_cupy().cuda.runtime.getDeviceCount())


def _need_cuda(what: str):
    if not is_available():
        raise RuntimeError(f"cuda.{what}: no CUDA device is available (CuPy is missing or sees "
                           f"no GPU; install it with {backend.GPU_INSTALL_HINT}); check "
                           "tg.cuda.is_available() first")  # fmt: skip
    return backend._import_cupy()


def current_device() -> int:
    """The index of the current CUDA device."""
    return int(_need_cuda("current_device").cuda.runtime.getDevice())


def set_device(device) -> None:
    """Make ``device`` (an index or ``"cuda:N"``) the current CUDA device."""
    dev = backend.parse_device(device if not isinstance(device, int) else f"cuda:{device}")
    _need_cuda("set_device").cuda.Device(dev.index).use()


def get_device_name(device=None) -> str:
    """The GPU's name, e.g. ``"NVIDIA H100 80GB HBM3"``."""
    cupy = _need_cuda("get_device_name")
    index = current_device() if device is None else backend.parse_device(
        device if not isinstance(device, int) else f"cuda:{device}").index  # fmt: skip
    name = cupy.cuda.runtime.getDeviceProperties(index)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def synchronize(device=None) -> None:
    """Wait for all work on the GPU to finish (nothing to wait for without one)."""
    if is_available():
        backend._import_cupy().cuda.runtime.deviceSynchronize()


def empty_cache() -> None:
    """Return CuPy's cached, unused GPU memory to the driver."""
    if is_available():
        backend._import_cupy().get_default_memory_pool().free_all_blocks()


def memory_allocated(device=None) -> int:
    """Bytes of GPU memory in use by tensors (0 without a GPU)."""
    if not is_available():
        return 0
    return int(backend._import_cupy().get_default_memory_pool().used_bytes())


def max_memory_allocated(device=None) -> int:
    """CuPy's memory pool size: the most GPU memory held at once (0 without a GPU)."""
    if not is_available():
        return 0
    return int(backend._import_cupy().get_default_memory_pool().total_bytes())


def manual_seed(seed) -> None:
    """Accepted for PyTorch scripts; does nothing (see the module docstring)."""


manual_seed_all = manual_seed


def is_initialized() -> bool:
    return is_available()


def is_bf16_supported() -> bool:
    """bfloat16 is not one of this library's dtypes."""
    return False
