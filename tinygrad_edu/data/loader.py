"""``DataLoader(X, y)``: mini-batches of ``(X, y)`` arrays as eager tensors, reshuffled every
epoch: the lessons' short form of :class:`tinygrad_edu.utils.data.DataLoader`.

It is PyTorch's ``DataLoader`` underneath (``tinygrad_edu.utils.data``), reading a dataset
that fetches a whole batch by one index array (the ``sampler=BatchSampler(...)``,
``batch_size=None`` idiom of PyTorch), so a batch is one slice or gather, not a stack of
single samples. Two things differ from the general loader, for the lessons: shuffling is on
by default, and the order of epoch $e$ comes from a generator seeded with ``(seed, e)``, so a
run is reproducible, every epoch differs, and creating the loader anew restarts the sequence.

>>> import numpy as np
>>> from tinygrad_edu.data import DataLoader
>>> X, y = np.arange(10, dtype=np.float32).reshape(5, 2), np.arange(5)
>>> loader = DataLoader(X, y, batch_size=2, shuffle=False)
>>> len(loader)
3
>>> [yb.tolist() for _, yb in loader]
[[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

import numpy as _np  # index bookkeeping

from .. import backend
from ..eager.tensor import Tensor
from ..utils import data as _data

__all__ = ["DataLoader"]


class _Arrays(_data.Dataset):
    """``X`` (and ``y``) fetched a batch at a time: ``ds[index array or slice]``."""

    def __init__(self, X, y, as_tensors: bool) -> None:
        self.X, self.y, self.as_tensors = X, y, as_tensors

    def __len__(self) -> int:
        return len(self.X)

    def __getitem__(self, idx):
        xb = self.X[idx]
        yb = None if self.y is None else self.y[idx]
        if self.as_tensors:
            xb = Tensor(xb)
            yb = None if yb is None else Tensor(yb)
        return xb if yb is None else (xb, yb)


class _EpochBatches(_data.Sampler):
    """The batches of one epoch: slices in order, or pieces of the permutation seeded with
    ``(seed, epoch)``; each pass counts one epoch on the loader."""

    def __init__(self, loader: DataLoader) -> None:
        self.loader = loader

    def __len__(self) -> int:
        n, b = len(self.loader.X), self.loader.batch_size
        return n // b if self.loader.drop_last else -(-n // b)

    def __iter__(self):
        ld = self.loader
        n, b = len(ld.X), ld.batch_size
        order = _np.random.default_rng((ld.seed, ld.epoch)).permutation(n) if ld.shuffle else None
        ld.epoch += 1
        for k in range(len(self)):
            lo, hi = k * b, min((k + 1) * b, n)
            if order is None:
                yield slice(lo, hi)
            elif isinstance(ld.X, _np.ndarray):
                yield order[lo:hi]
            else:
                yield backend.namespace_of(ld.X).asarray(order[lo:hi])


def _as_is(batch):
    return batch


class DataLoader(_data.DataLoader):
    """Iterate over ``(xb, yb)`` mini-batches.

    Args:
        X: inputs, an array (or tensor) whose first axis indexes the examples.
        y: targets with the same first axis (or None: the loader yields ``xb`` alone).
        batch_size: examples per batch.
        shuffle: a fresh random order every epoch (deterministic from ``seed``).
        seed: seeds the shuffling.
        drop_last: skip a final batch smaller than ``batch_size``.
        device: where the batches are made (``"cpu"``, ``"cuda"``); the whole data set is
            copied there once, so each batch is a slice on the device.
        as_tensors: yield eager tensors (default; ``requires_grad=False``) or raw backend
            arrays (for the symbolic engine's ``feed_dict`` or hand-written code).
    """

    # its epochs read batch_size, shuffle, seed and drop_last live: only the data is fixed
    _fixed_after_init = frozenset({"dataset", "sampler"})

    def __init__(self, X, y=None, batch_size: int = 32, shuffle: bool = True, seed: int = 0,
                 drop_last: bool = False, device=None, as_tensors: bool = True):  # fmt: skip
        X = X.data if isinstance(X, Tensor) else X
        y = y.data if isinstance(y, Tensor) else y
        if batch_size < 1:
            raise ValueError(f"DataLoader: batch_size must be >= 1, got {batch_size}")
        if y is not None and len(y) != len(X):
            raise ValueError(f"DataLoader: X has {len(X)} examples but y has {len(y)}; the first "
                             "axes must match")  # fmt: skip
        if device is not None:
            X = backend.to_device(X, device)
            y = None if y is None else backend.to_device(y, device)
        super().__init__(_Arrays(X, y, as_tensors), batch_size=None,
                         sampler=_EpochBatches(self), collate_fn=_as_is)  # fmt: skip
        self.X, self.y = X, y
        self.batch_size, self.shuffle, self.seed = batch_size, shuffle, seed
        self.drop_last, self.as_tensors = drop_last, as_tensors
        self.epoch = 0  # epochs started so far
