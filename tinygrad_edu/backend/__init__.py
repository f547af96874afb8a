"""Devices and array namespaces.

Layer 0, the bottom (``docs/concepts/layers.md``; ``tests/test_import_circles.py`` checks it):
it imports nothing of the package; everything else may import it.

A device name (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"sim:0"``) names an *array namespace*
(``xp``): numpy on the CPU, CuPy on CUDA GPUs. Nothing above this layer imports numpy or cupy
for math; it asks for ``xp`` here. CuPy is imported only when a CUDA device is first asked for.

NOTE [Simulated devices]
    ``"sim:0"``, ``"sim:1"``, ... compute with numpy but count as devices of their own for
    every rule above this layer: an op may not mix them with each other or with the CPU (the
    same error as cpu and cuda), ``.to()`` copies between them and is recorded in the graph,
    and the backward engine gives each its own ready queue and worker thread. Their arrays are
    plain numpy arrays, so nothing can tell their device from the array itself: the device lives
    on the tensor (``Tensor._device``) and on the backward node (``Node.device``), which is
    also how the engine learns a CUDA gradient's device. A machine without a GPU can so run,
    test and teach the per-device engine (lesson 5, ``docs/concepts/engine.md``).

>>> from tinygrad_edu.backend import get_namespace, parse_device
>>> parse_device("cuda:1")
Device(type='cuda', index=1)
>>> get_namespace("cpu").__name__, get_namespace("sim:1").__name__
('numpy', 'numpy')
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import Any

import numpy as _np

__all__ = [
    "Device",
    "DeviceError",
    "OutOfMemoryError",
    "parse_device",
    "get_namespace",
    "namespace_of",
    "device_of",
    "to_device",
    "to_numpy",
    "astype",
    "cuda_available",
    "use_cpu_namespace",
    "default_float",
    "set_default_float",
    "default_device",
    "set_default_device",
    "get_default_device",
    "device",
    "device_name",
    "is_floating",
]

GPU_INSTALL_HINT = 'pip install "tinygrad_edu[gpu]"'


class DeviceError(RuntimeError):
    """A device was named that this machine cannot provide."""


class OutOfMemoryError(RuntimeError, MemoryError):
    """A GPU allocation failed: the message names the device, the size asked for and what
    CuPy's memory pool holds (PyTorch's ``torch.cuda.OutOfMemoryError``, a RuntimeError;
    a MemoryError too, as CuPy's own error is)."""


@dataclass(frozen=True)
class Device:
    """A parsed device name: ``type`` is ``"cpu"``, ``"cuda"`` or ``"sim"`` (simulated, see
    NOTE [Simulated devices]); ``index`` the device number."""

    type: str
    index: int = 0

    def __str__(self) -> str:
        return "cpu" if self.type == "cpu" else f"{self.type}:{self.index}"


_CPU = Device("cpu")
_cache: dict[str, Device] = {}


def parse_device(device: str | Device | None) -> Device:
    """Turn ``"cpu"``, ``"cuda"`` or ``"cuda:N"`` into a :class:`Device`."""
    if device is None:
        return _CPU
    if isinstance(device, Device):
        return device
    hit = _cache.get(device)
    if hit is not None:
        return hit
    name = str(device).strip().lower()
    kind, _, idx = name.partition(":")
    if kind == "cpu" and not idx:
        dev = _CPU
    elif kind in ("cuda", "gpu", "sim"):
        if idx and not idx.isdigit():
            raise DeviceError(
                f"device {device!r}: the device index must be a number, e.g. '{kind}:0'"
            )
        dev = Device("sim" if kind == "sim" else "cuda", int(idx or 0))
    else:
        raise DeviceError(
            f"unknown device {device!r}: use 'cpu', 'cuda', 'cuda:N' or a simulated 'sim:N'"
        )
    _cache[device] = dev
    return dev


# The CPU namespace is numpy unless a test swaps in a strict array-API namespace.
_local = threading.local()


def _cpu_xp():
    return getattr(_local, "cpu_xp", _np)


@contextlib.contextmanager
def use_cpu_namespace(xp: Any):
    """Use ``xp`` (for example ``array_api_strict``) as the CPU namespace inside the block.

    The test suite runs the op suite a second time this way, so nothing numpy-only leaks into
    code that CuPy must run.
    """
    old = _cpu_xp()
    _local.cpu_xp = xp
    try:
        yield xp
    finally:
        _local.cpu_xp = old


def _import_cupy():
    try:
        import cupy  # noqa: PLC0415  (imported only when a GPU is asked for)
    except ImportError as e:
        raise DeviceError(
            f"a CUDA device was asked for, but CuPy is not installed; install it with "
            f"{GPU_INSTALL_HINT} (or use device='cpu')"
        ) from e
    if not _oom_hook:
        _install_oom_hook(cupy)
    return cupy


_oom_hook: list = []  # the allocator installed by _install_oom_hook, once per process


def _size(nbytes: int) -> str:
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.2f} {unit}"
    return f"{nbytes} bytes"


def _install_oom_hook(cupy) -> None:
    """Route CuPy's allocations through its default memory pool, as before, but turn a failed
    one into :class:`OutOfMemoryError` naming the device and the size.

    CuPy's own error says "Out of memory allocating N bytes" and nothing of which GPU, and it
    surfaces from whichever op happened to allocate; every array of every op is allocated
    here, so this one place covers them all. A program that installed an allocator of its own
    (``cupy.cuda.set_allocator``) keeps it: only the default pool is wrapped.
    """
    pool = cupy.get_default_memory_pool()
    _oom_hook.append(None)  # tried once, whatever happens below
    try:
        if cupy.cuda.get_allocator() != pool.malloc:
            return
    except Exception:  # an older CuPy without get_allocator: the pool is its default
        pass
    malloc = pool.malloc
    errors = (cupy.cuda.memory.OutOfMemoryError, cupy.cuda.runtime.CUDARuntimeError)

    def allocate(nbytes):
        try:
            return malloc(nbytes)
        except errors as e:
            if not isinstance(e, cupy.cuda.memory.OutOfMemoryError) and (
                "cudaErrorMemoryAllocation" not in str(e)
            ):
                raise
            dev = f"cuda:{cupy.cuda.runtime.getDevice()}"
            raise OutOfMemoryError(
                f"CUDA out of memory on {dev}: tried to allocate {_size(nbytes)} "
                f"({nbytes} bytes); tensors use {_size(pool.used_bytes())} and CuPy's pool "
                f"holds {_size(pool.total_bytes())} of this device. Free tensors that are no "
                "longer needed (del them), call tg.cuda.empty_cache(), or use smaller batches "
                f"({type(e).__name__}: {e})"
            ) from e

    cupy.cuda.set_allocator(allocate)
    _oom_hook[0] = allocate


def cuda_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    try:
        cupy = _import_cupy()
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def get_namespace(device: str | Device | None = "cpu"):
    """The array namespace (``xp``) that computes on ``device``."""
    dev = parse_device(device)
    if dev.type == "cpu":
        return _cpu_xp()
    if dev.type == "sim":
        return _np  # see NOTE [Simulated devices]
    # BEGIN SOLUTION A4.1
    cupy = _import_cupy()
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # CUDA driver missing or broken
        raise DeviceError(
            f"device {str(dev)!r}: CuPy is installed but no CUDA device is visible ({e}); "
            "use device='cpu' or run on a machine with an NVIDIA GPU"
        ) from e
    if dev.index >= count:
        raise DeviceError(
            f"device {str(dev)!r}: no CUDA device is visible at index {dev.index} "
            f"({count} visible); use 'cuda:0'..'cuda:{count - 1}'"
            if count
            else f"device {str(dev)!r}: CuPy is installed but no CUDA device is visible; "
            "use device='cpu'"
        )
    cupy.cuda.Device(dev.index).use()
    return cupy
    # END SOLUTION


def namespace_of(array: Any):
    """The namespace an array belongs to (numpy for numpy arrays and Python scalars)."""
    if isinstance(array, _np.ndarray | _np.generic):
        return _np
    ns = getattr(array, "__array_namespace__", None)
    if ns is not None:
        mod = type(array).__module__
        if mod.startswith("cupy"):
            import cupy  # noqa: PLC0415

            return cupy
        return ns()
    return _np


def device_of(array: Any) -> Device:
    """The :class:`Device` an array lives on."""
    if isinstance(array, _np.ndarray | _np.generic):
        return _CPU
    dev = getattr(array, "device", None)
    if type(array).__module__.startswith("cupy"):
        return Device("cuda", int(getattr(dev, "id", 0)))
    return _CPU


def to_device(array: Any, device: str | Device, src: str | Device | None = None):
    """Copy ``array`` to ``device`` (a no-op when it is already there).

    ``src`` names the device the array is on, when the array cannot tell (a simulated device's
    arrays are numpy arrays); by default it is read off the array.
    """
    dev = parse_device(device)
    src = device_of(array) if src is None else parse_device(src)
    if src == dev:
        return array
    if dev.type == "sim" or src.type == "sim":  # numpy on both sides: a transfer is a copy
        host = array.get() if hasattr(array, "get") else _np.asarray(array)
        return host.copy() if dev.type != "cuda" else get_namespace(dev).asarray(host)
    if dev.type == "cpu":
        return array.get() if hasattr(array, "get") else _np.asarray(array)
    xp = get_namespace(dev)
    return xp.asarray(array)


def astype(array, dtype):
    """``array`` converted to ``dtype`` (a copy), in any namespace: the array API's
    ``xp.astype`` where the namespace has it, else the array's own ``astype`` (CuPy)."""
    cast = getattr(namespace_of(array), "astype", None)
    return cast(array, dtype) if cast is not None else array.astype(dtype)


def to_numpy(array):
    """``array`` as a numpy array on the CPU, from any namespace (numpy itself is returned
    as is; CuPy copies from the GPU; other array-API arrays go through DLPack)."""
    if isinstance(array, _np.ndarray | _np.generic):
        return array
    if type(array).__module__.startswith("cupy"):
        return array.get()
    if hasattr(array, "__dlpack__"):
        return _np.from_dlpack(array)
    return _np.asarray(array)


_defaults = {"float": "float32", "device": None}  # set_default_dtype / set_default_device


def default_float(xp):
    """The default floating dtype of a namespace: float32, as in PyTorch, unless
    ``tg.set_default_dtype`` chose float64 (or float16)."""
    return getattr(xp, _defaults["float"])


def set_default_float(name: str) -> None:
    """Make ``name`` ("float16", "float32" or "float64") the default floating dtype."""
    _defaults["float"] = name


def default_device() -> Device | None:
    """The device factories use when given none (``tg.set_default_device``); None: the CPU,
    or wherever the data already is."""
    return _defaults["device"]


def set_default_device(device) -> None:
    """Make ``device`` (a name, a device, or None for the CPU) where factories such as
    ``tg.zeros``, ``tg.randn`` and ``tg.tensor`` put new tensors when not told (PyTorch's
    ``torch.set_default_device``). Layers' weights and ``tg.from_numpy`` are not affected."""
    _defaults["device"] = None if device is None else parse_device(device)


def get_default_device():
    """Where factories put new tensors (``device(type='cpu')`` unless changed)."""
    return device_name(_defaults["device"] or _CPU)


class device(str):  # noqa: N801  (PyTorch's name)
    """PyTorch's ``torch.device``: ``device("cuda")``, ``device("cuda", 1)``, ``device("cpu")``.

    It is a string (``"cuda:1"``), so it goes wherever a device name goes, compares equal to
    one, and ``x.device`` can be one too; ``.type`` and ``.index`` are PyTorch's
    (``device("cuda").index`` is None: the current device).

    >>> d = device("cuda", 1)
    >>> d, d.type, d.index, d == "cuda:1"
    (device(type='cuda', index=1), 'cuda', 1, True)
    >>> device("sim:1").type
    'sim'
    """

    __slots__ = ("type", "index")

    def __new__(cls, type, index=None):  # noqa: A002  (PyTorch's argument name)
        if isinstance(type, device) and index is None:
            return type
        if isinstance(type, Device):
            type, index = type.type, (None if type.type == "cpu" else type.index)
        if isinstance(type, int) and not isinstance(type, bool):  # device(0): cuda:0
            type, index = "cuda", type
        if not isinstance(type, str):
            raise TypeError(f"device(): expected a device name such as 'cpu' or 'cuda:0', got "
                            f"{type.__class__.__name__} {type!r}")  # fmt: skip
        name = type.strip().lower()
        if ":" in name:
            if index is not None:
                raise RuntimeError(f"device(): type {type!r} already names an index; pass "
                                   "either 'cuda:1' or ('cuda', 1)")  # fmt: skip
            name, _, idx = name.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: {type!r}")
            index = int(idx)
        if name not in ("cpu", "cuda", "sim", "gpu"):
            raise RuntimeError(f"Expected one of cpu, cuda, sim device type at start of device "
                               f"string: {type!r}")  # fmt: skip
        name = "cuda" if name == "gpu" else name
        if index is not None and (not isinstance(index, int) or index < 0):
            raise RuntimeError(f"Device index must not be negative, got {index!r}")
        parse_device(f"{name}:{index}" if index is not None else name)  # validate the name
        self = super().__new__(cls, name if index is None else f"{name}:{index}")
        self.type, self.index = name, index
        return self

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __reduce__(self):
        return (device, (self.type, self.index))


def device_name(dev: Device) -> device:
    """The :class:`device` (a string, ``"cpu"``, ``"cuda:0"``) naming ``dev``: what
    ``x.device`` returns, made once per Device object and kept on it (``x.device`` is read
    often)."""
    try:
        return dev.__dict__["_name"]
    except KeyError:
        name = device(str(dev))
        object.__setattr__(dev, "_name", name)  # a cache on a frozen dataclass
        return name


def is_floating(dtype) -> bool:
    """True for floating dtypes (float16/32/64) of any namespace.

    NOTE: the answer is cached per dtype (``str(dtype)`` costs a few microseconds, and every
    loss and factory asks); a dtype's answer never changes.
    """
    try:
        return _FLOATING[dtype]
    except (KeyError, TypeError):  # a dtype not seen yet (TypeError: an unhashable one)
        name = str(dtype)
        result = "float" in name and "complex" not in name
        try:
            _FLOATING[dtype] = result
        except TypeError:
            pass
        return result


_FLOATING: dict = {}
