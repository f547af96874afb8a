"""``torch.nn.modules.dropout``'s path: the dropout layers, the same classes as ``tg.nn``'s.

``from tinygrad_edu.nn.modules.dropout import Dropout`` works as PyTorch's import does;
the layers themselves live in :mod:`tinygrad_edu.nn`.
"""

from __future__ import annotations

from .. import Dropout, Dropout1d, Dropout2d, Dropout3d

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d"]
