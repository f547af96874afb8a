"""``PixelShuffle`` and ``PixelUnshuffle``: channels moved into space and back (sub-pixel
convolution), with PyTorch's arguments.

>>> import tinygrad_edu as tg
>>> tg.nn.PixelShuffle(2)(tg.ones(1, 8, 3, 3)).shape
(1, 2, 6, 6)
"""

from __future__ import annotations

from . import functional as F
from .call import _Call

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(_Call):
    """``F.pixel_shuffle``: ``(*, C*r*r, H, W)`` -> ``(*, C, H*r, W*r)``."""

    fn = staticmethod(F.pixel_shuffle)

    def __init__(self, upscale_factor: int):
        super().__init__(upscale_factor=upscale_factor)


class PixelUnshuffle(_Call):
    """``F.pixel_unshuffle``: ``(*, C, H*r, W*r)`` -> ``(*, C*r*r, H, W)``."""

    fn = staticmethod(F.pixel_unshuffle)

    def __init__(self, downscale_factor: int):
        super().__init__(downscale_factor=downscale_factor)
