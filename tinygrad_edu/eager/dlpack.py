"""DLPack: share tensors with PyTorch, numpy and CuPy without copying.

DLPack is the array libraries' common way to hand over memory: the producer describes its
buffer (pointer, shape, strides, dtype, device) and the consumer wraps the same memory.

* :func:`from_dlpack` (``tg.from_dlpack(x)``) wraps the memory of any object with
  ``__dlpack__``: a PyTorch tensor, a numpy array, a CuPy array.
* ``Tensor.__dlpack__`` / ``Tensor.__dlpack_device__`` (implemented by :func:`to_dlpack` and
  :func:`dlpack_device`) let ``torch.from_dlpack(t)``, ``np.from_dlpack(t)`` and
  ``cupy.from_dlpack(t)`` wrap ours.

NOTE [Shared buffers and version counters]
    After ``t = tg.from_dlpack(x)`` (or ``x = torch.from_dlpack(t)``), ``t`` and ``x`` are two
    views of one buffer: a change made through either is seen by both, and nothing is copied
    in either direction. Each library keeps its *own* version counter, though, and neither
    sees the other's in-place ops. If a graph of ours saved ``t`` for backward and PyTorch then
    changes ``x`` in place (``x.add_(1)``, an optimizer step), our version check cannot notice:
    backward silently uses the new values. Protect yourself in one of three ways: make the
    in-place change on our side (``t.add_(1)`` under ``tg.no_grad()`` bumps our counter), finish
    the backward before the other library writes, or break the sharing with a copy
    (``tg.from_dlpack(x, copy=True)``, or ``t.clone()``).

>>> import numpy as np
>>> a = np.arange(3.0)
>>> t = from_dlpack(a)       # no copy: t and a share memory
>>> a[0] = 7.0
>>> t
tensor([7., 1., 2.], dtype=float64)
>>> b = np.from_dlpack(t)    # and back: b is the same memory again
>>> b[1] = -1.0
>>> a
array([ 7., -1.,  2.])
"""

from __future__ import annotations

import numpy as _np

from .. import backend
from . import core

__all__ = ["from_dlpack", "to_dlpack", "dlpack_device", "DLPACK_DEVICE_TYPES"]

# DLPack's device types (dlpack.h, DLDeviceType), for messages
DLPACK_DEVICE_TYPES = {
    1: "CPU",
    2: "CUDA",
    3: "CUDA pinned host",
    4: "OpenCL",
    7: "Vulkan",
    8: "Metal",
    9: "VPI",
    10: "ROCm",
    11: "ROCm pinned host",
    12: "extension",
    13: "CUDA managed",
    14: "oneAPI",
    15: "WebGPU",
    16: "Hexagon",
    17: "MAIA",
}
_CPU, _CUDA, _CUDA_MANAGED = 1, 2, 13


def _what(x) -> str:
    """``"torch.Tensor (float32, shape (2, 3))"``: the foreign object, for messages."""
    kind = f"{type(x).__module__.split('.')[0]}.{type(x).__name__}"
    dtype = str(getattr(x, "dtype", "?")).removeprefix("torch.")
    shape = tuple(getattr(x, "shape", ()) or ())
    return f"{kind} ({dtype}, shape {shape})"


def _device_of(x):
    """The device of a DLPack producer, as one of ours; a clear error for others."""
    try:
        kind, index = x.__dlpack_device__()
    except (AttributeError, ValueError, TypeError, RuntimeError) as e:
        raise backend.DeviceError(
            f"from_dlpack: cannot tell where the memory of {_what(x)} lives ({e}); "
            "tinygrad_edu shares CPU and CUDA memory only: move it to the CPU first "
            "(e.g. x.cpu() in PyTorch)"
        ) from e
    kind, index = int(kind), int(index)
    if kind == _CPU:
        return backend.parse_device("cpu")
    if kind in (_CUDA, _CUDA_MANAGED):
        return backend.parse_device(f"cuda:{index}")
    name = DLPACK_DEVICE_TYPES.get(kind, f"unknown (DLPack device type {kind})")
    raise backend.DeviceError(
        f"from_dlpack: {_what(x)} lives on a {name} device, which tinygrad_edu cannot use "
        "(it computes on the CPU with numpy and on CUDA GPUs with CuPy); move it first, "
        "e.g. x.cpu() in PyTorch"
    )


def _hint(x, err: Exception) -> str:
    text = f"{err} {getattr(x, 'dtype', '')}"
    if "bfloat16" in text or "Unsupported dtype" in text:
        return "numpy has no such dtype: convert it first, e.g. x.float() in PyTorch"
    if "conjugate" in text:
        return "resolve it first: x.resolve_conj() in PyTorch"
    if "negative" in text.lower():
        return "resolve it first: x.resolve_neg() in PyTorch"
    if "layout" in text or "sparse" in text:
        return "make it dense first: x.to_dense() in PyTorch"
    return "pass a dense array, or copy it first (e.g. x.contiguous() in PyTorch)"


def from_dlpack(x, *, copy: bool = False):
    """A tensor sharing the memory of ``x``, any object with ``__dlpack__`` (no copy).

    ``x`` may be a PyTorch tensor, a numpy or CuPy array, or one of our tensors. The result is
    a leaf that does not require grad (call ``.requires_grad_()`` to track it); it keeps
    ``x``'s dtype (bool and integer dtypes too), shape and strides (a transposed tensor stays
    a strided view of the same memory). **The memory is shared**: a change made through
    either library is seen by both; see NOTE [Shared buffers and version counters] for what
    that means for our version counter, and pass ``copy=True`` for an independent copy.

    Args:
        x: the object to wrap.
        copy: copy the values instead of sharing them.

    Raises:
        TypeError: ``x`` has no ``__dlpack__`` (for Python data, use ``tg.tensor``).
        RuntimeError: ``x`` is a PyTorch tensor that requires grad (PyTorch refuses to share
            those; pass ``x.detach()``), or numpy/CuPy cannot hold its dtype (bfloat16).
        DeviceError: ``x`` lives on a device other than the CPU or a CUDA GPU.

    >>> import torch
    >>> x = torch.zeros(2, 3)
    >>> t = from_dlpack(x.T)     # a strided view of x's memory
    >>> t.shape
    (3, 2)
    >>> x[0, 1] = 5.0            # PyTorch writes, we see it
    >>> t[1, 0].item()
    5.0
    """
    if isinstance(x, core.Tensor):  # ours: detach() shares memory and the version counter too
        return core.new_tensor(x._data.copy(), x._device) if copy else x.detach()
    if not hasattr(x, "__dlpack__"):
        raise TypeError(
            f"from_dlpack: expected an object with __dlpack__ (a PyTorch tensor, a numpy or "
            f"CuPy array), got {type(x).__name__}; for Python data use tg.tensor(...)"
        )
    if getattr(x, "requires_grad", False) is True:
        raise RuntimeError(
            f"from_dlpack: {_what(x)} requires grad, and PyTorch refuses to share such a tensor "
            "(the importer could change it behind autograd's back). Pass x.detach(): the same "
            "memory, outside PyTorch's graph; then call .requires_grad_() on our tensor if our "
            "engine should track it"
        )
    dev = _device_of(x)
    xp = backend.get_namespace(dev)  # a clear error without CuPy or a GPU
    try:
        arr = xp.from_dlpack(x)
    except (BufferError, RuntimeError, TypeError, ValueError) as e:
        raise RuntimeError(
            f"from_dlpack: {xp.__name__} could not take {_what(x)}: {str(e).rstrip('.')}; "
            + _hint(x, e)
        ) from e
    if copy:
        arr = arr.copy()
    return core.new_tensor(arr, dev)


def to_dlpack(t, stream=None, max_version=None, dl_device=None, copy=None):
    """``Tensor.__dlpack__``: the DLPack capsule of ``t``'s memory, for another library.

    The keyword arguments are the DLPack protocol's (a consumer passes them); they go to the
    array's own ``__dlpack__``.

    Raises:
        BufferError: ``t`` requires grad (as in PyTorch: export ``t.detach()``), or its memory
            is read-only or has negative strides (export ``t.clone()``).
    """
    if t.requires_grad:
        raise BufferError(
            "__dlpack__: this tensor requires grad, and a tensor our engine tracks is not "
            "shared (another library could change it behind autograd's back); share "
            "t.detach() instead: the same memory, outside the graph"
        )
    data = t._data
    if isinstance(data, _np.generic):
        # a numpy scalar (what numpy reductions return) has no __dlpack__: hold a 0-d array
        # from now on, so the memory we hand out is really this tensor's
        t._data = data = _np.asarray(data)
    flags = getattr(data, "flags", None)  # numpy's; CuPy's flags have no "writeable"
    if not getattr(flags, "writeable", True):
        raise BufferError(
            "__dlpack__: this tensor's memory is read-only (a broadcast view, or a read-only "
            "array), and DLPack consumers such as PyTorch would write into it; share "
            "t.clone() instead"
        )
    if any(s < 0 for s in getattr(data, "strides", ()) or ()):
        raise BufferError(
            f"__dlpack__: this tensor has negative strides {tuple(data.strides)} (a reversed "
            "slice such as t[::-1]), which PyTorch cannot take (it aborts the process); share "
            "t.clone() instead"
        )
    kwargs = {"stream": stream, "max_version": max_version, "dl_device": dl_device, "copy": copy}
    return data.__dlpack__(**{k: v for k, v in kwargs.items() if v is not None})


def dlpack_device(t) -> tuple:
    """``Tensor.__dlpack_device__``: ``(DLPack device type, index)``, e.g. ``(1, 0)`` for the
    CPU."""
    data = t._data
    if isinstance(data, _np.generic):
        return (_CPU, 0)
    kind, index = data.__dlpack_device__()
    return (int(kind), int(index))
