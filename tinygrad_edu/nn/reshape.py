"""``nn.Unflatten``: one dim of the input split into a shape (the inverse of ``nn.Flatten``).

>>> import tinygrad_edu as tg
>>> tg.nn.Unflatten(1, (2, 3))(tg.zeros(4, 6)).shape
(4, 2, 3)
"""

from __future__ import annotations

from ..eager.tensor import Tensor
from .module import Module

__all__ = ["Unflatten"]


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
