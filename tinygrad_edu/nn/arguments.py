"""Argument checks shared by ``nn.functional``, its concept modules (``functional_losses``,
``functional_layers``, ``functional_conv`` ...) and the layers: the losses' reductions, the
dtype checks of the layers, the tensor and tuple arguments (one place, so that these modules
need not import each other)."""

from __future__ import annotations

from .. import backend
from ..eager.factories import as_tensor
from ..eager.tensor import Tensor

__all__ = ["_tensor_input", "_reduce", "_legacy", "_same_shape", "_to_dtype", "_same_dtype",
           "_needs_float", "_tensor", "_tuple"]  # fmt: skip

#: the Tensor method that converts to a dtype (``.to(tg.<dtype>)`` for the others)
_METHODS = {"float32": ".float()", "float64": ".double()", "float16": ".half()",
            "bfloat16": ".bfloat16()"}  # fmt: skip


def _to_dtype(dtype) -> str:
    """The call that converts a tensor to ``dtype``: ``".float()"`` for float32 ..."""
    return _METHODS.get(str(dtype), f".to(tg.{dtype})")


def _same_dtype(name: str, input, weight, bias=None, *, owner: str = "weight") -> None:
    """PyTorch's RuntimeError when a layer's ``input`` and its ``weight`` (or ``bias``) differ
    in dtype (a float64 or integer input into float32 weights): nothing is converted
    silently. ``owner`` names what can be converted instead of the input (``"model"`` for a
    module, ``"weight"`` for a function)."""
    x_dtype = getattr(input, "dtype", None)
    for what, other in (("weight", weight), ("bias", bias)):
        o_dtype = getattr(other, "dtype", None)
        if x_dtype is None or o_dtype is None or x_dtype == o_dtype:
            continue
        fix = f"x{_to_dtype(o_dtype)}"
        if backend.is_floating(x_dtype):
            fix += f" or {owner if what == 'weight' else what}{_to_dtype(x_dtype)}"
        raise RuntimeError(f"{name}: input is {x_dtype} but the {what} is {o_dtype}; they must "
                           f"have the same dtype: convert one: {fix}")  # fmt: skip


def _needs_float(name: str, input, why: str) -> None:
    """PyTorch's RuntimeError for an integer or bool ``input`` to an op whose result must be
    floating (``why`` says what needs it)."""
    dtype = getattr(input, "dtype", None)
    if dtype is not None and not backend.is_floating(dtype) and "complex" not in str(dtype):
        raise RuntimeError(f"{name}: input is {dtype}, but {why} needs a floating dtype (the "
                           "result cannot be stored as an integer); convert first: x.float()")


def _tensor_input(name: str, x) -> Tensor:
    if isinstance(x, Tensor):
        return x
    raise TypeError(
        f"{name}: input must be a Tensor, got {type(x).__module__}.{type(x).__name__}; wrap it "
        "first: tg.tensor(x) (a copy) or tg.from_numpy(x) (shared memory)"
    )


def _reduce(name, loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{name}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _legacy(reduction, size_average, reduce):
    """PyTorch's deprecated ``size_average``/``reduce`` flags, as a ``reduction``."""
    if size_average is None and reduce is None:
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        return reduction
    if reduce is False:
        return "none"
    return "sum" if size_average is False else "mean"


def _same_shape(name, input, target):
    t = as_tensor(target, dtype=input.dtype)
    if t.shape != input.shape:
        raise ValueError(
            f"{name}: input has shape {input.shape} but target has {t.shape}; they must match "
            "(PyTorch would broadcast them with a warning; here it is an error)"
        )
    return t


def _tuple(name: str, what: str, value, n: int, minimum: int = 1) -> tuple:
    """``2`` -> ``(2, 2, 2)`` for ``n == 3``; a sequence of ``n`` ints stays; else an error."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,) * n
    try:
        out = tuple(int(v) for v in value)
        ok = len(out) == n and all(int(v) == v for v in value)
    except (TypeError, ValueError):
        ok = False
    if not ok or min(out) < minimum:
        raise ValueError(f"{name}: {what} must be an int or {n} ints >= {minimum}, got {value!r}")
    return out


def _tensor(name: str, what: str, x) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: argument '{what}' must be a Tensor, not {type(x).__name__}")
    return x
