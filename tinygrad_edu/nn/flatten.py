"""``nn.Flatten`` (a run of dims joined into one) and ``nn.Unflatten`` (one dim split into a
shape, the inverse), as PyTorch's.

>>> import tinygrad_edu as tg
>>> tg.nn.Flatten()(tg.zeros(4, 2, 3)).shape
(4, 6)
>>> tg.nn.Unflatten(1, (2, 3))(tg.zeros(4, 6)).shape
(4, 2, 3)
"""

from __future__ import annotations

import math

from ..eager.tensor import Tensor
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flattens axes ``start_dim`` .. ``end_dim`` into one (by default every axis after the
    first: (N, 16, 7, 7) -> (N, 784)), as PyTorch's ``nn.Flatten``."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        n = x.ndim
        start, end = self.start_dim % max(n, 1), self.end_dim % max(n, 1)
        if n == 0 or start > end:
            if n == 0:
                return x.reshape(1)
            raise ValueError(
                f"Flatten: start_dim {self.start_dim} comes after end_dim {self.end_dim} for an "
                f"input of shape {x.shape}"
            )
        shape = x.shape[:start] + (math.prod(x.shape[start : end + 1]),) + x.shape[end + 1 :]
        return x.reshape(*shape)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim ``dim`` into ``unflattened_size`` (one entry may be -1), as PyTorch's
    ``nn.Unflatten``."""

    def __init__(self, dim: int, unflattened_size):
        super().__init__()
        if not isinstance(unflattened_size, list | tuple):
            raise TypeError(f"Unflatten: unflattened_size must be a tuple or list of ints, got "
                            f"{unflattened_size!r}")  # fmt: skip
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        shape = tuple(input.shape)
        d = self.dim % max(len(shape), 1)
        return input.reshape(*shape[:d], *self.unflattened_size, *shape[d + 1 :])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
