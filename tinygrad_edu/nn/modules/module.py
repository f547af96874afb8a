"""``torch.nn.modules.module``'s path: Module, the base class, the same classes as ``tg.nn``'s.

``from tinygrad_edu.nn.modules.module import Module`` works as PyTorch's import does;
the layers themselves live in :mod:`tinygrad_edu.nn`.
"""

from __future__ import annotations

from .. import Module

__all__ = ["Module"]
