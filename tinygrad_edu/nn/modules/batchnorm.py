"""``torch.nn.modules.batchnorm``'s path: BatchNorm1d/2d/3d (and their base class ``_BatchNorm``),
the same classes as ``tg.nn``'s.

``from tinygrad_edu.nn.modules.batchnorm import BatchNorm1d`` works as PyTorch's import does;
the layers themselves live in :mod:`tinygrad_edu.nn`.
"""

from __future__ import annotations

from .. import BatchNorm1d, BatchNorm2d, BatchNorm3d
from ..normalization import _BatchNorm

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "_BatchNorm"]
