"""``torch.nn.modules.normalization``'s path: LayerNorm, GroupNorm, RMSNorm,
the same classes as ``tg.nn``'s.

``from tinygrad_edu.nn.modules.normalization import LayerNorm`` works as PyTorch's import does;
the layers themselves live in :mod:`tinygrad_edu.nn`.
"""

from __future__ import annotations

from .. import GroupNorm, LayerNorm, RMSNorm

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm"]
