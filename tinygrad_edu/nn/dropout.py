r"""Dropout layers, with PyTorch's arguments: ``Dropout`` (each element),
``Dropout1d``/``2d``/``3d`` (whole channels) and ``AlphaDropout`` (SELU's). Each is the
identity in ``eval()`` mode.

>>> import tinygrad_edu as tg
>>> drop = tg.nn.Dropout(0.5)
>>> drop
Dropout(p=0.5, inplace=False)
>>> drop.eval()(tg.ones(3)).tolist()
[1.0, 1.0, 1.0]
"""

from __future__ import annotations

from ..eager.tensor import Tensor
from . import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout"]


class Dropout(Module):
    r"""In training mode, zero each element with probability ``p`` and scale the survivors by
    $1/(1-p)$, so the expected value is unchanged; in ``eval()`` mode, pass values through.
    ``inplace=True``: overwrite the input (in training) and return it, as PyTorch's."""

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"Dropout: dropout probability has to be between 0 and 1, but got "
                             f"{p}")  # fmt: skip
        self.p, self.inplace = p, inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"  # (PyTorch shows both)


class _DropoutChannels(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{type(self).__name__}: dropout probability has to be between 0 "
                             f"and 1, but got {p}")  # fmt: skip
        self.p, self.inplace = p, inplace

    def forward(self, x: Tensor) -> Tensor:
        return type(self).fn(x, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutChannels):
    """Zero whole channels of (N, C, L) in training (``F.dropout1d``)."""

    fn = staticmethod(F.dropout1d)


class Dropout2d(_DropoutChannels):
    """Zero whole channels of (N, C, H, W) in training (``F.dropout2d``)."""

    fn = staticmethod(F.dropout2d)


class Dropout3d(_DropoutChannels):
    """Zero whole channels of (N, C, D, H, W) in training (``F.dropout3d``)."""

    fn = staticmethod(F.dropout3d)


class AlphaDropout(Module):
    """SELU's dropout in training (see :func:`~tinygrad_edu.nn.functional.alpha_dropout`:
    inputs of mean 0 and variance 1 keep them); the identity in ``eval()`` mode."""

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if isinstance(p, bool) or not 0.0 <= float(p) <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = float(p), bool(inplace)

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
