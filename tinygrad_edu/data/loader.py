"""``DataLoader``: mini-batches of ``(X, y)`` as eager tensors, reshuffled every epoch.

Each pass (``for xb, yb in loader``) is one epoch. With ``shuffle=True`` the order of epoch
$e$ comes from a generator seeded with ``(seed, e)``, so a run is reproducible, every epoch
differs, and creating the loader anew restarts the sequence.

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

import math

import numpy as _np  # index bookkeeping

from ..eager.tensor import Tensor

__all__ = ["DataLoader"]


class DataLoader:
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
            from .. import backend  # noqa: PLC0415

            X = backend.to_device(X, device)
            y = None if y is None else backend.to_device(y, device)
        self.X, self.y = X, y
        self.batch_size, self.shuffle, self.seed = batch_size, shuffle, seed
        self.drop_last, self.as_tensors = drop_last, as_tensors
        self.epoch = 0  # epochs started so far

    def __len__(self) -> int:
        n = len(self.X)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def __iter__(self):
        n = len(self.X)
        if self.shuffle:
            order = _np.random.default_rng((self.seed, self.epoch)).permutation(n)
        else:
            order = None
        self.epoch += 1
        for b in range(len(self)):
            lo, hi = b * self.batch_size, min((b + 1) * self.batch_size, n)
            if order is None:
                xb = self.X[lo:hi]
                yb = None if self.y is None else self.y[lo:hi]
            else:
                idx = order[lo:hi]
                if not isinstance(self.X, _np.ndarray):
                    from .. import backend  # noqa: PLC0415

                    idx = backend.namespace_of(self.X).asarray(idx)
                xb = self.X[idx]
                yb = None if self.y is None else self.y[idx]
            if self.as_tensors:
                xb = Tensor(xb)
                yb = None if yb is None else Tensor(yb)
            yield xb if yb is None else (xb, yb)
