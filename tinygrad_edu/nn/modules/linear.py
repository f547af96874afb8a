"""``torch.nn.modules.linear``'s path: Linear, Identity, the same classes as ``tg.nn``'s.

``from tinygrad_edu.nn.modules.linear import Identity`` works as PyTorch's import does;
the layers themselves live in :mod:`tinygrad_edu.nn`.
"""

from __future__ import annotations

from .. import Identity, Linear

__all__ = ["Identity", "Linear"]
