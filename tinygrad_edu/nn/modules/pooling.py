"""``torch.nn.modules.pooling``'s path: the pooling layers, the same classes as ``tg.nn``'s.

``from tinygrad_edu.nn.modules.pooling import MaxPool1d`` works as PyTorch's import does;
the layers themselves live in :mod:`tinygrad_edu.nn`.
"""

from __future__ import annotations

from .. import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
)

__all__ = [
    "MaxPool1d",
    "MaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
]
