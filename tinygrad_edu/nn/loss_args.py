"""Argument checks and reductions shared by the loss functions of ``nn.functional`` and
``nn.functional_losses`` (one place, so neither imports the other)."""

from __future__ import annotations

from ..eager.factories import as_tensor
from ..eager.tensor import Tensor

__all__ = ["_tensor_input", "_reduce", "_legacy", "_same_shape"]


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
