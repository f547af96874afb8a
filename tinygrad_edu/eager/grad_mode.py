"""Grad modes: whether ops are recorded. Per thread; modes nest and restore on exit.

>>> import tinygrad_edu as tg
>>> x = tg.tensor([1.0], requires_grad=True)
>>> with tg.no_grad():
...     y = x * 2
>>> y.requires_grad
False
"""

from __future__ import annotations

import functools
import threading

__all__ = [
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "detect_anomaly",
    "is_anomaly_enabled",
]

class _State(threading.local):
    """Per-thread modes; a new thread starts with the class defaults."""

    grad = True
    anomaly = False


_state = _State()


def is_grad_enabled() -> bool:
    """True when ops are being recorded for backward (the default)."""
    return _state.grad


def is_anomaly_enabled() -> bool:
    """True inside ``detect_anomaly()``."""
    return _state.anomaly


class _Mode:
    """A context manager that sets a flag and restores the previous value; also a decorator."""

    _attr = "grad"
    _value = True

    def __enter__(self):
        self._prev = getattr(_state, self._attr, type(self)._default())
        setattr(_state, self._attr, self._value)
        return self

    def __exit__(self, *exc):
        setattr(_state, self._attr, self._prev)
        return False

    @staticmethod
    def _default():
        return True

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)._clone(self):
                return fn(*args, **kwargs)

        return wrapper

    def _clone(self):
        return self


class no_grad(_Mode):
    """Don't record ops (inference, optimizer updates). Context manager and decorator."""

    _value = False

    def _clone(self):
        return no_grad()


class enable_grad(_Mode):
    """Record ops again inside a ``no_grad`` block. Context manager and decorator."""

    _value = True

    def _clone(self):
        return enable_grad()


class set_grad_enabled(_Mode):
    """Turn recording on or off: takes effect at once, and as a context manager restores the
    previous mode on exit."""

    def __init__(self, mode: bool):
        self._value = bool(mode)
        self._prev = is_grad_enabled()
        _state.grad = self._value

    def __enter__(self):
        return self

    def _clone(self):
        return set_grad_enabled(self._value)


class detect_anomaly(_Mode):
    """Anomaly mode: each backward node records the forward traceback that created it; a
    backward error then shows that traceback, and a NaN produced by a node is an error naming
    the node. Slow: use it to debug."""

    _attr = "anomaly"
    _value = True

    @staticmethod
    def _default():
        return False

    def _clone(self):
        return detect_anomaly()
