"""PyTorch's ``torch.utils.data``: datasets, samplers and the ``DataLoader``, with PyTorch's
names, defaults and batching rules.

Part of ``utils`` (layer 4 (``docs/concepts/layers.md``; ``tests/test_import_circles.py``
checks it)): it may import ``eager`` and ``backend``.

>>> import tinygrad_edu as tg
>>> from tinygrad_edu.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(tg.arange(10).reshape(5, 2), tg.arange(5))
>>> loader = DataLoader(ds, batch_size=2)        # no shuffling unless asked, as in PyTorch
>>> [yb.tolist() for xb, yb in loader]
[[0, 1], [2, 3], [4]]
"""

from .collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "Subset",
    "ChainDataset",
    "random_split", "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
    "WeightedRandomSampler", "BatchSampler", "DataLoader", "default_collate", "default_convert",
    "get_worker_info",
]  # fmt: skip
