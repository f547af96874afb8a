"""``_Call``: the base of the layers that call one function of :mod:`tinygrad_edu.nn.functional`
with the arguments they were made with (``Unfold``/``Fold``, the adaptive and 1-D pools,
``Upsample``, ``PixelShuffle``): the arguments are attributes, read at each call, and the
``repr`` lists them."""

from __future__ import annotations

from ..eager.tensor import Tensor
from .module import Module

__all__ = ["_Call"]


class _Call(Module):
    """A module that calls one function with the arguments it was made with."""

    def __init__(self, **kwargs):
        super().__init__()
        self._names = tuple(kwargs)
        for k, v in kwargs.items():
            setattr(self, k, v)

    def _arguments(self) -> dict:
        return {k: getattr(self, k) for k in self._names}  # read now: they may be changed

    def forward(self, x: Tensor) -> Tensor:
        return type(self).fn(x, **self._arguments())

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self._arguments().items())
