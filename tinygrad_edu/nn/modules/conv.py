"""``torch.nn.modules.conv``'s path: the convolutions, the same classes as ``tg.nn``'s.

``from tinygrad_edu.nn.modules.conv import Conv1d`` works as PyTorch's import does;
the layers themselves live in :mod:`tinygrad_edu.nn`.
"""

from __future__ import annotations

from .. import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d

__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]
