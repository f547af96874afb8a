"""``tg.Size``: PyTorch's ``torch.Size``, a tuple of dimension sizes.

>>> import tinygrad_edu as tg
>>> s = tg.Size([2, 3])
>>> s, s.numel(), s == (2, 3), isinstance(s, tuple)
(Size([2, 3]), 6, True, True)
"""

from __future__ import annotations

import math

__all__ = ["Size"]


class Size(tuple):
    """A tuple of non-negative ints with ``numel()``; slicing and ``+`` keep the type."""

    __slots__ = ()

    def __new__(cls, sizes=()):
        dims = []
        for i, d in enumerate(sizes):
            if hasattr(d, "item") and getattr(d, "ndim", 0) == 0:
                d = d.item()  # a numpy integer or a one-element tensor
            if isinstance(d, bool) or not isinstance(d, int) or d < 0:
                raise TypeError(f"Size: dimension {i} must be a non-negative int, got {d!r}")
            dims.append(d)
        return super().__new__(cls, dims)

    def numel(self) -> int:
        """The number of elements of a tensor of this size."""
        return math.prod(self)

    def __getitem__(self, key):
        out = super().__getitem__(key)
        return Size(out) if isinstance(key, slice) else out

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __repr__(self) -> str:
        return f"Size({list(self)})"
