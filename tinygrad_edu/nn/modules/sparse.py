"""``torch.nn.modules.sparse``'s path: Embedding, the same classes as ``tg.nn``'s.

``from tinygrad_edu.nn.modules.sparse import Embedding`` works as PyTorch's import does;
the layers themselves live in :mod:`tinygrad_edu.nn`.
"""

from __future__ import annotations

from .. import Embedding

__all__ = ["Embedding"]
