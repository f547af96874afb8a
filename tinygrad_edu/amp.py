"""``tg.amp``: PyTorch's automatic mixed precision names, ``autocast`` and ``GradScaler``.

``autocast`` is accepted and computes nothing differently: ops here run in their inputs'
dtypes (float32 stays float32), so code written for mixed precision runs in full precision.

``GradScaler`` is PyTorch's loss scaler for float16 training: ``scale(loss)`` multiplies the
loss by a large factor so that small float16 gradients do not underflow, ``step(optimizer)``
divides the gradients back (``unscale_``) and skips the step when any is inf or NaN, and
``update()`` halves the factor after such a step or doubles it after ``growth_interval``
clean ones. As in PyTorch, a scaler made for CUDA on a machine without a GPU warns and turns
itself off (every call passes through), so the usual training loop runs on the CPU.

>>> import tinygrad_edu as tg
>>> scaler = tg.amp.GradScaler("cpu", init_scale=1024.0)
>>> w = tg.nn.Parameter([1.0])
>>> opt = tg.optim.SGD([w], lr=0.1)
>>> with tg.autocast(device_type="cpu", dtype=tg.float16):
...     loss = (w * w).sum()
>>> scaler.scale(loss).backward()
>>> w.grad.item()                       # the scaled gradient: 2 * 1024
2048.0
>>> scaler.step(opt); scaler.update()   # unscaled before the step: w = 1 - 0.1 * 2
>>> round(w.item(), 4), scaler.get_scale()
(0.8, 1024.0)
"""

from __future__ import annotations

import contextlib
import math
import warnings

from . import backend
from .eager.tensor import Tensor

__all__ = ["autocast", "GradScaler"]


class autocast(contextlib.ContextDecorator):  # noqa: N801  (PyTorch's name)
    """Accepted for PyTorch's mixed-precision code; changes no dtype (see the module
    docstring). Works as a context manager and as a decorator."""

    def __init__(self, device_type: str = "cuda", dtype=None, enabled: bool = True,
                 cache_enabled=None) -> None:  # fmt: skip
        self.device_type, self.fast_dtype, self.enabled = device_type, dtype, enabled

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False


class GradScaler:
    """Loss scaling for float16 training (see the module docstring).

    Args:
        device: "cuda" (PyTorch's default; turns itself off without a GPU) or "cpu".
        init_scale: the first scale factor.
        growth_factor, backoff_factor: multiply the scale after ``growth_interval`` clean
            steps, or after a step with inf/NaN gradients.
        growth_interval: clean steps between growths.
        enabled: False makes every method pass through.
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:  # fmt: skip
        if enabled and backend.parse_device(device).type == "cuda" and not backend.cuda_available():
            warnings.warn("GradScaler is enabled, but CUDA is not available. Disabling.",
                          UserWarning, stacklevel=2)  # fmt: skip
            enabled = False
        self._enabled, self._scale = enabled, float(init_scale)
        self._growth_factor, self._backoff_factor = growth_factor, backoff_factor
        self._growth_interval, self._growth_tracker = growth_interval, 0
        self._unscaled: dict = {}  # id(optimizer) -> found inf/NaN, for this step

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        """The current factor (1.0 when disabled)."""
        return self._scale if self._enabled else 1.0

    def scale(self, outputs):
        """``outputs`` (a tensor, or a list/tuple of them) times the scale factor."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, list | tuple):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs * self._scale

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale, in place (once per step), and note
        whether any is inf or NaN."""
        if not self._enabled:
            return
        if id(optimizer) in self._unscaled:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")  # fmt: skip
        found = False
        inv = 1.0 / self._scale
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad._data
                g *= inv
                p.grad._counter[0] += 1
                xp = backend.namespace_of(g)
                found = found or not bool(xp.all(xp.isfinite(g)))
        self._unscaled[id(optimizer)] = found

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless done already) and run ``optimizer.step()``, unless a gradient is
        inf or NaN; returns what the step returned (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if id(optimizer) not in self._unscaled:
            self.unscale_(optimizer)
        if self._unscaled[id(optimizer)]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None) -> None:
        """Adjust the scale for the next step (or set it to ``new_scale``)."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if isinstance(new_scale, Tensor) else new_scale)
        elif any(self._unscaled.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale = min(self._scale * self._growth_factor, math.inf)
                self._growth_tracker = 0
        self._unscaled = {}

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}  # fmt: skip

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        self._scale = float(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._growth_tracker = state_dict["_growth_tracker"]
