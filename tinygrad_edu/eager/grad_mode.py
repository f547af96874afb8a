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
import inspect
import threading

__all__ = [
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "detect_anomaly",
    "set_detect_anomaly",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
    "set_anomaly_enabled",
    "inference_mode",
    "is_inference_mode_enabled",
]

class _State(threading.local):
    """Per-thread modes; a new thread starts with the class defaults."""

    grad = True
    anomaly = False
    check_nan = True  # in anomaly mode, a NaN a backward node returns is an error
    inference = False  # inside inference_mode(): new tensors are inference tensors
    trace = None  # a tg.compile tracer recording the ops of this thread (compiler/trace.py)


_state = _State()

# NOTE [Rare modes]: anomaly detection, inference mode and a tg.compile tracer are on in some
# thread only rarely, but the dispatcher (and ``core.init_tensor``, for inference mode) would
# read their thread-local flags for every op (a thread-local attribute costs far more to read
# than a module global). So they are set through
# :func:`set_mode`, which also counts how many of them are on in any thread; while the count
# (``RARE[0]``) is 0, the dispatcher does not read them.
RARE = [0]
_rare_lock = threading.Lock()


def _on(value) -> bool:
    return value is not None and value is not False


def set_mode(attr: str, value) -> None:
    """Set this thread's ``grad``, ``check_nan``, ``anomaly``, ``inference`` or ``trace`` (see
    NOTE [Rare modes])."""
    if attr in ("grad", "check_nan"):  # not rare: read only where they matter
        setattr(_state, attr, value)
        return
    with _rare_lock:
        RARE[0] += _on(value) - _on(getattr(_state, attr))
        setattr(_state, attr, value)


def set_trace(tracer) -> None:
    """This thread's tg.compile tracer (None: none): the dispatcher hands it every op."""
    set_mode("trace", tracer)


def is_grad_enabled() -> bool:
    """True when ops are being recorded for backward (the default)."""
    return _state.grad


def is_anomaly_enabled() -> bool:
    """True inside ``detect_anomaly()`` (or after ``set_anomaly_enabled(True)``)."""
    return _state.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode turns a NaN returned by a backward node into an error (PyTorch's
    ``torch.is_anomaly_check_nan_enabled``; True unless ``check_nan=False`` was asked for)."""
    return _state.check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly mode on or off for this thread, at once (PyTorch's
    ``torch.set_anomaly_enabled``). See :class:`detect_anomaly`."""
    for name, value in (("enabled", enabled), ("check_nan", check_nan)):
        if not isinstance(value, bool):
            raise TypeError(f"set_anomaly_enabled(): argument {name!r} must be bool, not "
                            f"{type(value).__name__}")  # fmt: skip
    set_mode("anomaly", enabled)
    set_mode("check_nan", check_nan)


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()``."""
    return _state.inference


class _Mode:
    """A context manager that sets a flag and restores the previous value on exit; also a
    decorator, of plain functions and of generator functions (each resume of the generator
    runs under the mode, and the caller's mode is back between resumes)."""

    _attr = "grad"
    _value = True

    def __enter__(self):
        self._prev = getattr(_state, self._attr)
        set_mode(self._attr, self._value)
        return self

    def __exit__(self, *exc):
        set_mode(self._attr, self._prev)
        return False

    def _clone(self):
        return type(self)()

    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(self, fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self._clone():  # a fresh manager per call: calls may nest or overlap
                return fn(*args, **kwargs)

        return wrapper


class _BareDecorator(_Mode):
    """Also usable without parentheses: ``@no_grad`` as well as ``@no_grad()``."""

    def __new__(cls, orig_func=None):
        self = super().__new__(cls)
        return self if orig_func is None else self(orig_func)


def _wrap_generator(mode, fn):
    @functools.wraps(fn)
    def generator(*args, **kwargs):
        gen = fn(*args, **kwargs)
        try:
            with mode._clone():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with mode._clone():
                        gen.close()
                    raise
                except BaseException as e:
                    with mode._clone():
                        response = gen.throw(e)
                else:
                    with mode._clone():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value

    return generator


class no_grad(_BareDecorator):
    """Don't record ops (inference, optimizer updates). Context manager and decorator
    (``@tg.no_grad`` or ``@tg.no_grad()``)."""

    _value = False


class enable_grad(_BareDecorator):
    """Record ops again inside a ``no_grad`` block. Context manager and decorator."""

    _value = True


class inference_mode(_Mode):
    """PyTorch's ``inference_mode(mode=True)``: ``no_grad()``, and every tensor made inside
    it (except a view or ``detach()`` of a tensor made outside) is an *inference tensor*,
    which an op recorded for backward may not save: it is an error, as in PyTorch (compute
    with ``x.clone()``, a normal tensor, instead). With ``mode=False``: ``enable_grad()``,
    and new tensors are normal ones again."""

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode):  # bare @inference_mode
            self.__init__(True)
            return self(mode)
        return self

    def __init__(self, mode=True):
        self._value = not mode

    def __enter__(self):
        self._prev_inference = _state.inference
        set_mode("inference", not self._value)
        return super().__enter__()

    def __exit__(self, *exc):
        set_mode("inference", self._prev_inference)
        return super().__exit__(*exc)

    def _clone(self):
        return inference_mode(not self._value)


class set_grad_enabled(_Mode):
    """Turn recording on or off: as a function call it takes effect at once; as a context
    manager it restores the previous mode on exit; as a decorator it leaves the mode alone
    until the decorated function runs."""

    def __init__(self, mode: bool):
        self._value = bool(mode)
        self._prev = is_grad_enabled()
        _state.grad = self._value

    def __enter__(self):
        return self

    def __call__(self, fn):
        _state.grad = self._prev  # decorating must not change the mode (PyTorch does the same)
        return super().__call__(fn)

    def _clone(self):
        return set_grad_enabled(self._value)


class detect_anomaly(_Mode):
    """Anomaly mode: each backward node records the forward traceback that created it; a
    backward error then shows that traceback, and (with ``check_nan=True``, the default) a
    NaN returned by a node is an error naming the node. Whether a backward checks for NaN is
    decided by the mode at the ``backward()`` call. Slow: use it to debug."""

    _attr = "anomaly"
    _value = True

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan

    def __enter__(self):
        self._prev_check_nan = _state.check_nan
        set_mode("check_nan", bool(self.check_nan))
        return super().__enter__()

    def __exit__(self, *exc):
        set_mode("check_nan", self._prev_check_nan)
        return super().__exit__(*exc)

    def _clone(self):
        return detect_anomaly(self.check_nan)


class set_detect_anomaly:
    """PyTorch's ``torch.autograd.set_detect_anomaly(mode, check_nan=True)``: turns anomaly
    mode on or off at once; used as a context manager, it restores the previous mode on exit.

    >>> import tinygrad_edu as tg
    >>> with tg.autograd.set_detect_anomaly(True, check_nan=False):
    ...     tg.is_anomaly_enabled(), tg.is_anomaly_check_nan_enabled()
    (True, False)
    >>> tg.is_anomaly_enabled(), tg.is_anomaly_check_nan_enabled()
    (False, True)
    """

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev, self.prev_check_nan = _state.anomaly, _state.check_nan
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        set_anomaly_enabled(self.prev, self.prev_check_nan)
        return False
