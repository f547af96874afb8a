r"""Padding layers, with PyTorch's names and arguments: ``ZeroPad1d``/``2d``,
``ConstantPad1d``/``2d``, ``ReflectionPad1d``/``2d``, ``ReplicationPad1d``/``2d`` and
``CircularPad1d``/``2d``, each ``F.pad`` with its mode.

>>> import tinygrad_edu as tg
>>> from tinygrad_edu import nn
>>> nn.ReflectionPad1d(2)(tg.tensor([[[1.0, 2.0, 3.0]]])).tolist()
[[[3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]]]
"""

from __future__ import annotations

from ..eager.tensor import Tensor
from . import functional as F
from .module import Module

__all__ = [
    "ZeroPad1d", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d",
    "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d", "CircularPad1d", "CircularPad2d",
]  # fmt: skip


class _Pad(Module):
    """``F.pad(x, padding, mode, value)``: an int pads every side of the last ``nd`` axes."""

    mode, value = "constant", 0.0

    def __init__(self, padding):
        super().__init__()
        if isinstance(padding, int):
            padding = (padding,) * (2 * self.nd)
        padding = tuple(padding)
        if len(padding) != 2 * self.nd:
            raise ValueError(f"{type(self).__name__}: padding must be an int or {2 * self.nd} "
                             f"ints, got {padding!r}")  # fmt: skip
        self.padding = padding

    def forward(self, x: Tensor) -> Tensor:
        if self.mode == "constant":
            return F.pad(x, self.padding, value=self.value)
        return F.pad(x, self.padding, mode=self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}" + (f", value={self.value}" if self.mode == "constant" else "")


def _pad_class(name, nd, mode, doc):
    cls = type(name, (_Pad,), {"nd": nd, "mode": mode, "__doc__": doc})
    cls.__module__ = __name__
    return cls


ZeroPad1d = _pad_class("ZeroPad1d", 1, "constant", "Pad the last axis with zeros.")
ZeroPad2d = _pad_class("ZeroPad2d", 2, "constant", "Pad the last two axes with zeros.")
ReflectionPad1d = _pad_class("ReflectionPad1d", 1, "reflect", "Pad the last axis by reflection.")
ReflectionPad2d = _pad_class("ReflectionPad2d", 2, "reflect",
                             "Pad the last two axes by reflection.")
ReplicationPad1d = _pad_class("ReplicationPad1d", 1, "replicate",
                              "Pad the last axis with its edge values.")
ReplicationPad2d = _pad_class("ReplicationPad2d", 2, "replicate",
                              "Pad the last two axes with their edge values.")
CircularPad1d = _pad_class("CircularPad1d", 1, "circular", "Pad the last axis circularly.")
CircularPad2d = _pad_class("CircularPad2d", 2, "circular", "Pad the last two axes circularly.")


class _ConstantPad(_Pad):
    def __init__(self, padding, value: float):
        super().__init__(padding)
        self.value = value


class ConstantPad1d(_ConstantPad):
    """Pad the last axis with ``value``."""

    nd = 1


class ConstantPad2d(_ConstantPad):
    """Pad the last two axes with ``value``."""

    nd = 2
