"""PyTorch's ``torch.utils``: here, :mod:`tinygrad_edu.utils.data` (datasets, samplers,
``DataLoader``)."""

from . import data

__all__ = ["data"]
