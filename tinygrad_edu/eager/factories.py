"""Ways to make tensors, with PyTorch's names and dtype rules.

* ``tensor(data)`` always **copies**. Python data gets PyTorch's dtypes: ints int64, floats
  (and mixes) float32, bools bool; numpy arrays and scalars keep their dtype.
* ``as_tensor(data)`` and ``from_numpy(array)`` **share memory** with a numpy array (when the
  dtype and device already fit). A change made through the array shows in the tensor, and
  the other way round; but the array has no version counter, so a change made *through the
  array* is invisible to autograd's in-place check: do not modify it while a graph that saved
  the tensor may still run backward. (PyTorch behaves the same way.)
* ``zeros``, ``ones``, ``full``, ``empty``, ``arange``, ``linspace``, ``eye``, ``randn``,
  ``rand``, ``randint`` and the ``*_like`` forms. Random numbers come from one seeded generator
  (``manual_seed``), drawn on the CPU, so a seed gives the same numbers on every device.

>>> import numpy as np, tinygrad_edu as tg
>>> tg.tensor([1, 2]).dtype, tg.tensor([1.0, 2]).dtype, tg.arange(3).dtype
(dtype('int64'), dtype('float32'), dtype('int64'))
>>> a = np.zeros(2)
>>> t = tg.from_numpy(a)
>>> a[0] = 5.0
>>> t
tensor([5., 0.], dtype=float64)
"""

from __future__ import annotations

import numpy as _np

from .. import backend
from ..size import Size
from .convert import _legacy_data, _resolve_dtype
from .core import new_tensor as _new_tensor
from .random import default_generator, manual_seed, numpy_generator
from .tensor import Tensor

__all__ = [
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "randn", "rand",
    "randint", "arange", "linspace", "eye", "zeros_like", "ones_like", "full_like",
    "empty_like", "empty_strided", "randn_like", "rand_like", "manual_seed", "randperm",
    "randint_like",
    "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ByteTensor", "BoolTensor",
]  # fmt: skip

_rng = default_generator._rng  # reseeded in place by manual_seed: always the same object


def generator() -> _np.random.Generator:
    """The library's random generator (numpy's, on the CPU)."""
    return _rng


def _python_data(data):
    """Python data (nested lists, numbers, tensors inside lists) as a numpy array with
    PyTorch's default dtypes."""
    if isinstance(data, list | tuple):
        data = [_python_data(d) if isinstance(d, _NESTED) else d for d in data]
    elif isinstance(data, Tensor):
        return data.numpy(force=True)  # tg.tensor(t) copies t's values, as torch.tensor(t)
    try:
        arr = _np.asarray(data)
    except (ValueError, TypeError) as e:
        raise TypeError(f"tensor(): cannot make a tensor from {data!r:.80}: {e}") from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(
            f"tensor(): cannot make a tensor from {type(data).__name__} {data!r:.60}; give a "
            "number, a (nested) list of numbers, or an array"
        )
    if arr.dtype.kind == "f" and not isinstance(data, _np.generic):
        arr = arr.astype(backend.default_float(_np))  # Python floats: the default float dtype
    elif arr.dtype.kind in "iu" and not isinstance(data, _np.generic):
        arr = arr.astype(_np.int64)
    return arr


_NESTED = (list, tuple, Tensor)  # what _python_data converts first (a tuple: no Union per item)
_NUMBERS = frozenset({int, float, bool})


def _flat_numbers(data):
    """A flat list of Python numbers (``tg.tensor(encode(text))``: a million ints) as a new
    array with PyTorch's dtypes, or None for anything else.

    What :func:`_python_data` gives, without its pass over the items: that pass converts the
    lists and tensors inside a list first, and a flat list of numbers has none, so numpy reads
    the list as it is, in one call (a tensor among the numbers reads through its
    ``__array__``, as the pass would convert it). A list that is not one row of numbers
    (nested, ragged, a tensor that requires grad) returns None and takes the plain way, whose
    result or error is then the one the caller gets. The array is new, so ``astype`` need not
    copy it, and ``tensor()`` need not either."""
    if type(data) is not list or not data or type(data[0]) not in _NUMBERS:
        return None
    try:
        arr = _np.asarray(data)
    except (ValueError, TypeError, RuntimeError, OverflowError):
        return None
    if arr.ndim != 1 or arr.dtype.kind not in "biuf":
        return None
    if arr.dtype.kind == "f":
        return arr.astype(backend.default_float(_np), copy=False)
    return arr.astype(_np.int64, copy=False) if arr.dtype.kind in "iu" else arr


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new leaf tensor holding a **copy** of ``data``.

    Python ints become int64, floats float32 and bools bool (PyTorch's defaults); arrays,
    numpy scalars and tensors keep their dtype unless ``dtype`` says otherwise.

    >>> import tinygrad_edu as tg
    >>> tg.tensor([[1, 2], [3, 4]]).dtype, tg.tensor(2.5).shape
    (dtype('int64'), ())
    """
    if data is None:
        raise TypeError("tensor(): data is None; give a number, a list of numbers or an array")
    src = fresh = None
    if isinstance(data, Tensor):
        data, src = data._data, data._device
    if not hasattr(data, "shape") or isinstance(data, _np.generic):
        fresh = _flat_numbers(data)  # a new array: the copy below is not needed
        data = _python_data(data) if fresh is None else fresh
    src = src or backend.device_of(data)
    dev = backend.parse_device(device if device is not None else (_default_device(None) or src))
    arr = backend.to_device(data, dev, src=src)
    xp = backend.get_namespace(dev)
    dt = _resolve_dtype(arr, dtype)
    if dt is None or dt == arr.dtype:
        if not (arr is fresh and xp is _np):
            arr = xp.asarray(arr, copy=True)
    else:
        arr = xp.astype(arr, dt)
    return _wrap(arr, requires_grad, dev)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """``data`` as a tensor, **sharing memory** where it can: a tensor of the right dtype and
    device is returned as is, a numpy array is wrapped without a copy; anything else is
    copied as by :func:`tensor`."""
    if isinstance(data, Tensor):
        out = data.to(dtype=dtype) if dtype is not None else data
        return out.to(device) if device is not None else out
    if hasattr(data, "shape") and not isinstance(data, _np.generic):
        dt = _resolve_dtype(data, dtype)
        dev = backend.parse_device(device if device is not None else backend.device_of(data))
        if (dt is None or dt == data.dtype) and dev == backend.device_of(data):
            return Tensor(data, device=dev)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array) -> Tensor:
    """A tensor that **shares memory** with the numpy array ``array`` (same dtype)."""
    if not isinstance(array, _np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}; "
                        "use tg.tensor(...) for other data")  # fmt: skip
    return Tensor(array)


def _shape(shape):
    shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], tuple | list) else shape
    for d in shape:  # the common case, sizes that are non-negative ints, in one pass
        if type(d) is not int or d < 0:
            break
    else:
        return shape
    if not all(isinstance(d, int) for d in shape):
        raise TypeError(f"a size must be non-negative ints, got {shape!r}")
    if any(d < 0 for d in shape):  # an int of the wrong value: PyTorch's RuntimeError
        raise RuntimeError(f"a size must be non-negative ints, got {shape!r}; every dimension "
                           "is a count of elements (0 for an empty tensor)")
    return shape


def _sizes(op, sizes, size):
    """The shape of ``op(*sizes)`` or ``op(size=...)`` (PyTorch's keyword form,
    ``zeros(size=(2, 3))``): one of the two, as in PyTorch."""
    if size is None:
        if not sizes:  # PyTorch requires the size; zeros(()) is the way to a 0-d tensor
            raise TypeError(f'{op}() missing 1 required positional argument: "size"; give the '
                            f"shape: {op}(2, 3), {op}((2, 3)), or {op}(()) for a 0-d tensor")
        return _shape(sizes)
    if sizes:
        raise TypeError(f"{op}(): got the size twice, as {sizes!r} and size={size!r}; give "
                        f"one: {op}(2, 3) or {op}(size=(2, 3))")  # fmt: skip
    return _shape((size,) if isinstance(size, int) else (tuple(size),))


def _default(value):
    """PyTorch's dtype for a fill value: bool, int64 or the default float dtype."""
    if isinstance(value, bool):
        return "bool"
    return "int64" if isinstance(value, int) else backend.default_float(_np)


_CPU = backend.parse_device("cpu")


def _wrap(arr, requires_grad, device) -> Tensor:
    """``Tensor(arr, requires_grad=..., device=...)``; a numpy array on the CPU (``device``
    None, the default, or the CPU) that needs no gradient is wrapped directly, as
    ``Tensor(arr)`` would wrap it: a data loader makes a few small tensors per example."""
    if not requires_grad and type(arr) is _np.ndarray and (device is None or device is _CPU):
        return _new_tensor(arr, _CPU)
    return Tensor(arr, requires_grad=requires_grad, device=device)


def _default_device(device):
    """``device``, or the default device (``tg.set_default_device``) when it is None."""
    return device if device is not None else backend.default_device()


def full(size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of ``size`` holding ``fill_value`` (its dtype follows the value, as in
    PyTorch: ``full((2,), 7)`` is int64)."""
    return _full(size, fill_value, dtype, device, requires_grad, False)


def _full(size, fill_value, dtype, device, requires_grad, zero: bool) -> Tensor:
    """:func:`full`; ``zero``: ``fill_value`` is ``0.0`` (:func:`zeros`), so numpy's
    ``zeros`` (memory set to zero bits: +0.0, 0, False) makes the same array as its slower
    ``full``. A data loader makes a few small tensors per example, so this path is kept
    short: a numpy dtype without the name lookup, and the tensor wrapped as ``Tensor(data)``
    would on the CPU."""
    device = _default_device(device)
    xp = backend.get_namespace(device)
    dt = dtype or _default(fill_value)
    dt = _np.dtype(dt) if xp is _np and type(dt) is not str else _resolve_dtype(xp.zeros(()), dt)
    shape = _shape((size,) if isinstance(size, int) else tuple(size))
    if xp is not _np or device is not None:
        return Tensor(xp.full(shape, fill_value, dtype=dt), requires_grad=requires_grad,
                      device=device)  # fmt: skip
    data = _np.zeros(shape, dtype=dt) if zero else _np.full(shape, fill_value, dtype=dt)
    return _wrap(data, requires_grad, None)


def zeros(*sizes, size=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of zeros (float32 unless ``dtype``): ``zeros(2, 3)``, ``zeros((2, 3))`` or
    ``zeros(size=(2, 3))``."""
    return _full(_sizes("zeros", sizes, size), 0.0, dtype, device, requires_grad, True)


def ones(*sizes, size=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of ones (float32 unless ``dtype``), sized as :func:`zeros`."""
    return full(_sizes("ones", sizes, size), 1.0, dtype, device, requires_grad)


def empty(*sizes, size=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """An "uninitialised" tensor, sized as :func:`zeros`: zero-filled here (PyTorch leaves
    whatever the memory held)."""
    return full(_sizes("empty", sizes, size), 0.0, dtype, device, requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """PyTorch's ``empty_strided(size, stride)``: a tensor of ``size`` whose values are
    unspecified (zeros here). ``stride`` is checked (one non-negative int per dim, as
    PyTorch) but does not change the layout: every new tensor here is row-major, and code
    that only fills the result behaves the same."""
    size, stride = tuple(size), tuple(stride)
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in size + stride):
        raise TypeError(f"empty_strided(): size and stride must be sequences of ints, got "
                        f"size={size!r}, stride={stride!r}")  # fmt: skip
    if len(size) != len(stride):
        raise RuntimeError(f"empty_strided(): mismatch in length of strides and shape: size "
                           f"{size} has {len(size)} dims, stride {stride} has {len(stride)}; "
                           "give one stride per dim")  # fmt: skip
    if any(d < 0 for d in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"empty_strided(): sizes and strides must be non-negative, got "
                           f"size={size}, stride={stride}")  # fmt: skip
    return full(size, 0.0, dtype, device, requires_grad)


def _sampled(array, dtype, device, requires_grad):
    dt = _np.dtype(_resolve_dtype(array, dtype or backend.default_float(_np)))
    device = _default_device(device)
    return _wrap(array.astype(dt), requires_grad, device)


def randn(*sizes, size=None, generator=None, dtype=None, device=None,
          requires_grad=False) -> Tensor:  # fmt: skip
    """Standard normal samples (float32 unless ``dtype``), from ``generator`` (a
    :class:`~tinygrad_edu.Generator`) or the default one; sized as :func:`zeros`."""
    rng = numpy_generator(generator, "randn")
    return _sampled(rng.standard_normal(_sizes("randn", sizes, size)), dtype, device,
                    requires_grad)  # fmt: skip


def rand(*sizes, size=None, generator=None, dtype=None, device=None,
         requires_grad=False) -> Tensor:  # fmt: skip
    """Uniform samples in [0, 1), from ``generator`` or the default one."""
    rng = numpy_generator(generator, "rand")
    return _sampled(rng.random(_sizes("rand", sizes, size)), dtype, device, requires_grad)


def randint(low, high=None, size=None, dtype=None, device=None, requires_grad=False, *,
            generator=None) -> Tensor:  # fmt: skip
    """Integers uniform in [low, high) (``randint(high, size)`` starts at 0), int64."""
    if isinstance(high, tuple | list):  # randint(high, size), PyTorch's short form
        low, high, size = 0, low, high
    if size is None:  # as PyTorch: the size is required (randint(5) would be ambiguous)
        raise TypeError("randint() missing the size: give randint(high, size) or randint(low, "
                        "high, size), e.g. randint(10, (3,)); () for a 0-d tensor")
    if high is None:
        low, high = 0, low
    rng = numpy_generator(generator, "randint")
    return _sampled(rng.integers(low, high, _shape(tuple(size))), dtype or "int64", device,
                    requires_grad)  # fmt: skip


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``start, start + step, ...`` below ``end``: int64 for int arguments, else float32."""
    if end is None:
        start, end = 0, start
    ints = all(isinstance(v, int) for v in (start, end, step))
    values = _np.arange(start, end, step)
    return _sampled(values, dtype or ("int64" if ints else None), device, requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` (both included)."""
    return _sampled(_np.linspace(start, end, steps), dtype, device, requires_grad)


def eye(n: int, m=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _sampled(_np.eye(n, m), dtype, device, requires_grad)


def zeros_like(input, dtype=None, device=None, requires_grad=False) -> Tensor:
    return full(input.shape, 0, dtype or input.dtype, device or input.device, requires_grad)


def ones_like(input, dtype=None, device=None, requires_grad=False) -> Tensor:
    return full(input.shape, 1, dtype or input.dtype, device or input.device, requires_grad)


empty_like = zeros_like


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    return full(input.shape, fill_value, dtype or input.dtype, device or input.device,
                requires_grad)  # fmt: skip


def randn_like(input, dtype=None, device=None, requires_grad=False, *,
               generator=None) -> Tensor:  # fmt: skip
    """Standard normal samples shaped like ``input`` (its dtype and device unless given)."""
    return randn(input.shape, dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad, generator=generator)  # fmt: skip


def rand_like(input, dtype=None, device=None, requires_grad=False, *,
              generator=None) -> Tensor:  # fmt: skip
    """Uniform samples in [0, 1) shaped like ``input`` (its dtype and device unless given)."""
    return rand(input.shape, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad, generator=generator)  # fmt: skip


def randperm(n: int, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype``), from ``generator`` (a
    :class:`~tinygrad_edu.Generator`) or the default one."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise RuntimeError(f"randperm: n must be a non-negative int, got {n!r}")
    rng = numpy_generator(generator, "randperm")
    return _sampled(rng.permutation(n), dtype or "int64", device, requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, device=None,
                 requires_grad=False, generator=None) -> Tensor:  # fmt: skip
    """Integers uniform in [low, high) shaped like ``input`` (``randint_like(x, high)`` starts
    at 0), of ``input``'s dtype unless ``dtype``."""
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"randint_like: expects low < high, got low={low}, high={high}")
    rng = numpy_generator(generator, "randint_like")
    return _sampled(rng.integers(low, high, tuple(input.shape)), dtype or input.dtype,
                    device or input.device, requires_grad)  # fmt: skip


# -- PyTorch's legacy constructors: tg.FloatTensor([1, 2]), tg.LongTensor(2, 3) ---------------
class LegacyTensorType(type):
    """The type of ``tg.FloatTensor``, ``tg.LongTensor`` ... (PyTorch's ``torch.tensortype``).

    Calling one makes a plain :class:`Tensor` of its dtype on the CPU: ``FloatTensor([1, 2])``
    from data (converted, as ``LongTensor([1.7])`` truncates to 1), ``FloatTensor(2, 3)`` of a
    shape (zero-filled; PyTorch leaves it uninitialised), ``FloatTensor()`` an empty one, and
    ``FloatTensor(t)`` a tensor on ``t``'s memory when ``t`` already has the dtype. They are not
    subclasses of ``Tensor``: ``isinstance(x, tg.FloatTensor)`` checks that ``x`` is a float32
    tensor on the CPU, as in PyTorch (``isinstance(tg.tensor([1.0]), tg.FloatTensor)`` is True).
    ``x.type(tg.LongTensor)`` converts.
    """

    dtype: _np.dtype

    def __call__(cls, *data, device=None) -> Tensor:
        name = cls.__name__
        dev = backend.parse_device(device if device is not None else "cpu")
        if dev.type != "cpu":
            raise RuntimeError(
                f"{name}(): the legacy constructor makes CPU tensors, got device={device!r}; "
                f"use tg.tensor(data, dtype=tg.{cls.dtype.name}, device={device!r})"
            )
        if len(data) == 1 and isinstance(data[0], Tensor):
            t = data[0]
            if t.dtype != cls.dtype or t._device.type != "cpu":
                raise TypeError(
                    f"{name}(t): t is {t.dtype} on {t.device}, and {name} takes {cls.dtype} "
                    f"on the CPU; convert it first ({name}(t.cpu()) or "
                    f"{_CONVERT[cls.dtype.name]}), or copy it: tg.tensor(t, "
                    f"dtype=tg.{cls.dtype.name})"
                )
            return Tensor._make(t._data, counter=t._counter, device=t._device)  # shares memory
        if len(data) == 1 and isinstance(data[0], Size):
            data = tuple(data[0])  # a Size is a shape; a tuple is data
        try:
            arr = _np.asarray(_python_data(_legacy_data(data, cls.dtype)))
        except (TypeError, RuntimeError) as e:  # the messages of Tensor() and tensor()
            message = str(e).removeprefix("Tensor").removeprefix("tensor")
            raise type(e)(f"{name}{message}") from None
        return Tensor(arr.astype(cls.dtype), device=dev)  # a copy, as in PyTorch

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype and obj._device.type == "cpu"

    def __repr__(cls) -> str:
        return f"<class 'tinygrad_edu.{cls.__name__}'>"


_CONVERT = {"float32": "t.float()", "float64": "t.double()", "int64": "t.long()",
            "int32": "t.int()", "uint8": "t.to(tg.uint8)", "bool": "t.bool()"}  # fmt: skip


def _legacy_type(name: str, dtype: str) -> LegacyTensorType:
    doc = f"PyTorch's legacy ``torch.{name}``: a {dtype} CPU tensor (see LegacyTensorType)."
    return LegacyTensorType(name, (), {"dtype": _np.dtype(dtype), "__doc__": doc,
                                       "__module__": "tinygrad_edu"})  # fmt: skip


FloatTensor = _legacy_type("FloatTensor", "float32")
DoubleTensor = _legacy_type("DoubleTensor", "float64")
LongTensor = _legacy_type("LongTensor", "int64")
IntTensor = _legacy_type("IntTensor", "int32")
ByteTensor = _legacy_type("ByteTensor", "uint8")
BoolTensor = _legacy_type("BoolTensor", "bool")


# the op library's random ops draw from this module's generator (handed down, not imported up)
from ..ops import random as _random_ops  # noqa: E402

_random_ops.use_generator(generator)
