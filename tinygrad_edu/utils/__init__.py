"""PyTorch's ``torch.utils``: here, :mod:`tinygrad_edu.utils.data` (datasets, samplers,
``DataLoader``).

Layer 4 (``docs/concepts/layers.md``; ``tests/test_import_circles.py`` checks it), over the
eager engine: it may import ``eager`` and ``backend``, never ``nn``, ``optim``, ``data`` or
anything above.
"""

from . import data

__all__ = ["data"]
