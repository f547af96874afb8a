"""Upsampling layers, with PyTorch's names and arguments: ``Upsample`` (``F.interpolate``),
``UpsamplingNearest2d`` and ``UpsamplingBilinear2d``.

>>> import tinygrad_edu as tg
>>> tg.nn.Upsample(scale_factor=2)(tg.ones(1, 1, 2, 2)).shape
(1, 1, 4, 4)
"""

from __future__ import annotations

from . import functional as F
from .call import _Call

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(_Call):
    """``F.interpolate`` with the arguments given here (``mode="nearest"`` by default)."""

    fn = staticmethod(F.interpolate)

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                 recompute_scale_factor=None):  # fmt: skip
        super().__init__(size=size, scale_factor=scale_factor, mode=mode,
                         align_corners=align_corners,
                         recompute_scale_factor=recompute_scale_factor)  # fmt: skip


class UpsamplingNearest2d(Upsample):
    """``Upsample(mode="nearest")``."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(mode="bilinear", align_corners=True)``, as PyTorch's."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
