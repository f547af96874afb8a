"""``DataLoader``: batches from a dataset, with PyTorch's arguments and defaults.

``DataLoader(dataset, batch_size=1, shuffle=False)`` visits a map-style dataset's indices in
order (``SequentialSampler``), or in a new random order each epoch with ``shuffle=True``
(``RandomSampler``, seeded from ``generator`` or the default generator), groups them in
batches of ``batch_size`` (``BatchSampler``; ``drop_last`` drops a short last batch), fetches
the samples and collates them with ``collate_fn`` (``default_collate``). An
:class:`~tinygrad_edu.utils.data.IterableDataset` is read as a stream and batched in order.

NOTE [num_workers runs in-process]
    PyTorch's ``num_workers > 0`` loads batches in worker processes. Here every value of
    ``num_workers`` loads in the calling process, in the same order, and gives the same
    batches as ``num_workers=0`` (never an error). Nothing is duplicated for an
    ``IterableDataset`` (there is one reader), ``get_worker_info()`` is None, and
    ``worker_init_fn`` is not called (there are no workers to initialise).
    ``pin_memory`` is accepted and changes nothing (arrays are not pinned).

>>> import tinygrad_edu as tg
>>> from tinygrad_edu.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(tg.arange(6).float(), tg.arange(6))
>>> loader = DataLoader(ds, batch_size=4, shuffle=True, generator=tg.Generator().manual_seed(0))
>>> len(loader), sorted(i for _, yb in loader for i in yb.tolist())
(2, [0, 1, 2, 3, 4, 5])
"""

from __future__ import annotations

import numpy as _np  # batch indices

from .collate import default_collate, default_convert
from .dataset import IterableDataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info"]

# what PyTorch refuses to change on a made loader (its sampler and batching depend on them)
_FIXED = frozenset({"batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                    "persistent_workers"})  # fmt: skip


def get_worker_info():
    """None: batches are always loaded in the calling process (NOTE [num_workers runs
    in-process])."""
    return None


class DataLoader:
    """Iterate over batches of ``dataset`` (see the module docstring).

    Args:
        dataset: a map-style dataset (``__getitem__``, ``__len__``) or an
            ``IterableDataset``.
        batch_size: samples per batch (None: no batching, each sample is yielded alone).
        shuffle: a new random order every epoch (map-style datasets only).
        sampler: the order of indices (instead of ``shuffle``).
        batch_sampler: yields whole lists of indices (instead of ``batch_size``,
            ``shuffle``, ``sampler`` and ``drop_last``).
        num_workers: accepted; loading stays in-process (NOTE [num_workers runs in-process]).
        collate_fn: turns a list of samples into a batch (default: ``default_collate``).
        pin_memory: accepted, no effect.
        drop_last: drop the last batch when it is smaller than ``batch_size``.
        timeout, worker_init_fn, multiprocessing_context, prefetch_factor,
            persistent_workers, pin_memory_device, in_order: accepted for PyTorch's
            signature; checked as PyTorch checks them.
        generator: the :class:`~tinygrad_edu.Generator` behind ``shuffle``.
    """

    _fixed_after_init = _FIXED

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0, collate_fn=None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:  # fmt: skip
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")  # fmt: skip
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing. let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")  # fmt: skip
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        iterable = isinstance(dataset, IterableDataset)
        if iterable:
            for name, value in (("shuffle", shuffle), ("sampler", sampler),
                                ("batch_sampler", batch_sampler)):  # fmt: skip
                if value not in (None, False):
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                     f"{name} option, but got {name}={value}")  # fmt: skip
        elif not hasattr(dataset, "__getitem__"):
            raise TypeError(f"DataLoader: dataset must be a map-style dataset (__getitem__ and "
                            f"__len__) or an IterableDataset, got {type(dataset).__name__}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")  # fmt: skip
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")  # fmt: skip
        if sampler is None and not iterable:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))  # fmt: skip
        if batch_size is not None and batch_sampler is None:
            if iterable:
                BatchSampler([], batch_size, drop_last)  # PyTorch's checks of the two values
            else:
                batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self._auto_collation = batch_size is not None or batch_sampler is not None
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.num_workers, self.collate_fn, self.pin_memory = num_workers, collate_fn, pin_memory
        self.timeout, self.worker_init_fn = timeout, worker_init_fn
        self.multiprocessing_context, self.generator = multiprocessing_context, generator
        self.prefetch_factor, self.persistent_workers = prefetch_factor, persistent_workers
        self.pin_memory_device, self.in_order = pin_memory_device, in_order
        self._initialized = True

    def __setattr__(self, name, value) -> None:
        if getattr(self, "_initialized", False) and name in self._fixed_after_init:
            raise ValueError(f"{name} attribute should not be set after {type(self).__name__} "
                             "is initialized")  # fmt: skip
        super().__setattr__(name, value)

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)  # a TypeError when the stream has no length, as in PyTorch
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler if self._auto_collation else self.sampler)

    def __iter__(self):
        if isinstance(self.dataset, IterableDataset):
            return self._iter_stream()
        if self._auto_collation:
            return (self._fetch(indices) for indices in self.batch_sampler)
        return (self.collate_fn(self.dataset[i]) for i in self.sampler)

    def _fetch(self, indices):
        ds = self.dataset
        if (self.collate_fn is default_collate and type(ds).__getitem__ is TensorDataset.__getitem__
                and all(hasattr(t, "grad_fn") for t in ds.tensors)):  # fmt: skip
            # one gather per tensor gives what stacking each sample's rows would: the same
            # values, dtype and graph, without a tensor per sample
            idx = _np.asarray(indices, dtype=_np.int64)
            return [t[idx] for t in ds.tensors]
        getitems = getattr(ds, "__getitems__", None)
        data = getitems(indices) if getitems else [ds[i] for i in indices]
        return self.collate_fn(data)

    def _iter_stream(self):
        if self.batch_size is None:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)
