"""What a tensor has of devices and dtypes: ``to``/``cpu``/``cuda``, ``astype`` and its short
forms (``float()``, ``long()`` ...), DLPack, ``contiguous`` and the ``new_*`` factories.

:class:`Conversions` is a base class of :class:`~tinygrad_edu.eager.tensor.Tensor`; it reads the
class from :mod:`~tinygrad_edu.eager.core` (handed over at import), as the lower layers do.
"""

from __future__ import annotations

from .. import backend
from ..ops import REGISTRY
from . import core, grad_mode
from .convert import _is_device, _resolve_dtype, _to_array, _varargs
from .dispatch import apply_op
from .dlpack import dlpack_device, to_dlpack
from .node import ToCopyBackward

__all__ = ["Conversions"]

_ASTYPE = REGISTRY["astype"]


class Conversions:
    """Devices, dtypes and new tensors like this one (a base class of ``Tensor``)."""

    __slots__ = ()

    # -- devices and dtypes -------------------------------------------------------------------
    def to(self, *args, device=None, dtype=None, copy=False) -> core.Tensor:
        """This tensor on another device and/or dtype: ``to("cuda")``, ``to("sim:1")``,
        ``to(tg.float64)``, ``to("cpu", tg.float64)``, ``to(other)`` (other's device and dtype).

        A move is a copy recorded in the graph (``ToCopyBackward``), as in PyTorch: the result
        of moving a tensor that requires grad is not a leaf, and its gradient flows back to the
        original's device. To get a leaf on a device, make it there (``device=``), or move a
        module with ``model.to(device)``.
        """
        for a in args:
            if isinstance(a, core.Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, str | backend.Device) and _is_device(a):
                device = a
            else:
                dtype = a
        out = self if dtype is None else self.astype(dtype)
        dev = None if device is None else backend.parse_device(device)
        if dev is None or dev == out._device:
            return out.clone() if copy and out is self else out
        data = backend.to_device(out._data, dev, src=out._device)
        if not (out._requires_grad and grad_mode.is_grad_enabled()):
            return core.Tensor._make(data, device=dev)
        node = ToCopyBackward(core.edge(out), out._device, dev, (tuple(data.shape), data.dtype))
        if grad_mode.is_anomaly_enabled():
            node._record_trace()
        return core.Tensor._make(data, node, device=dev)

    def cpu(self) -> core.Tensor:
        return self.to("cpu")

    @property
    def is_cpu(self) -> bool:
        """True when this tensor lives on the CPU (PyTorch's ``x.is_cpu``)."""
        return self._device.type == "cpu"

    @property
    def is_cuda(self) -> bool:
        """True when this tensor lives on a CUDA GPU (PyTorch's ``x.is_cuda``); a simulated
        device (``"sim:0"``) is neither CUDA nor the CPU."""
        return self._device.type == "cuda"

    # -- DLPack: PyTorch, numpy and CuPy share our memory (see eager/dlpack.py) ----------------
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """This tensor's memory for ``torch.from_dlpack(t)``, ``np.from_dlpack(t)``... (shared,
        not copied; see NOTE [Shared buffers and version counters] in ``eager/dlpack.py``)."""
        return to_dlpack(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self) -> tuple:
        return dlpack_device(self)

    def cuda(self, index: int = 0) -> core.Tensor:
        return self.to(f"cuda:{index}")

    def astype(self, dtype) -> core.Tensor:
        """A copy converted to ``dtype`` (``ToCopyBackward0``). A conversion to an integer or
        bool dtype leaves the graph: such tensors cannot require grad (as in PyTorch)."""
        dt = _resolve_dtype(self._data, dtype)
        if dt == self.dtype:
            return self
        if backend.is_floating(dt):
            return apply_op(_ASTYPE, self, dtype=dt, src=self.dtype)
        with grad_mode.no_grad():
            return apply_op(_ASTYPE, self, dtype=dt, src=self.dtype)

    def type(self, dtype=None):
        return str(self.dtype) if dtype is None else self.astype(dtype)

    def float(self) -> core.Tensor:
        return self.astype("float32")

    def double(self) -> core.Tensor:
        return self.astype("float64")

    def half(self) -> core.Tensor:
        return self.astype("float16")

    def char(self) -> core.Tensor:
        return self.astype("int8")

    def byte(self) -> core.Tensor:
        return self.astype("uint8")

    def bfloat16(self) -> core.Tensor:
        """Not here: numpy, which holds every tensor's values, has no bfloat16."""
        raise TypeError(f"bfloat16(): this library has no bfloat16 (numpy has no such "
                        f"dtype); use x.half() (float16) or x.float() (float32) for this "
                        f"{self.dtype} tensor")  # fmt: skip

    def long(self) -> core.Tensor:
        return self.astype("int64")

    def int(self) -> core.Tensor:
        return self.astype("int32")

    def bool(self) -> core.Tensor:
        return self.astype("bool")

    def contiguous(self) -> core.Tensor:
        """This tensor when its memory is in row-major order, else a copy that is."""
        flags = getattr(self._data, "flags", None)
        if flags is None or flags.c_contiguous:
            return self
        out = self.clone()  # a copy keeps the layout (numpy's order "K"): lay it out row-major
        if not out._data.flags.c_contiguous:
            out._data = backend.namespace_of(out._data).ascontiguousarray(out._data)
        return out

    def is_contiguous(self) -> bool:
        flags = getattr(self._data, "flags", None)
        return flags is None or bool(flags.c_contiguous)

    def new_tensor(self, data, dtype=None, requires_grad=False) -> core.Tensor:
        """A new leaf holding a copy of ``data``, with this tensor's dtype (unless ``dtype``)
        and device."""
        if data is None:
            raise TypeError("new_tensor(): data is None; give a number, a list of numbers or "
                            "an array")  # fmt: skip
        dt = _resolve_dtype(self._data, dtype) or self.dtype
        arr = _to_array(data, dt, self._device)
        arr = backend.namespace_of(arr).asarray(arr, dtype=dt, copy=True)
        return core.Tensor(arr, requires_grad=requires_grad, device=self._device)

    def new_full(self, size, fill_value, dtype=None, requires_grad=False) -> core.Tensor:
        """A tensor of ``size`` holding ``fill_value``, with this tensor's dtype (unless
        ``dtype``) and device."""
        shape = (size,) if isinstance(size, int) else tuple(size)
        if not all(isinstance(d, int) and d >= 0 for d in shape):
            raise TypeError(f"new_full(): a size must be non-negative ints, got {size!r}")
        dt = _resolve_dtype(self._data, dtype) or self.dtype
        xp = backend.namespace_of(self._data)
        data = xp.full(shape, fill_value, dtype=dt)
        return core.Tensor(data, requires_grad=requires_grad, device=self._device)

    def new_zeros(self, *size, dtype=None, requires_grad=False) -> core.Tensor:
        return self.new_full(_varargs(size), 0, dtype, requires_grad)

    def new_ones(self, *size, dtype=None, requires_grad=False) -> core.Tensor:
        return self.new_full(_varargs(size), 1, dtype, requires_grad)

    new_empty = new_zeros
