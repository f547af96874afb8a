"""Datasets: what a ``DataLoader`` reads from.

A **map-style** dataset has ``__getitem__(i)`` and ``__len__``; an **iterable** one
(:class:`IterableDataset`) has ``__iter__`` and yields samples as a stream.

>>> import tinygrad_edu as tg
>>> from tinygrad_edu.utils.data import TensorDataset, random_split
>>> ds = TensorDataset(tg.arange(10).reshape(5, 2), tg.arange(5))
>>> ds[1]
(tensor([2, 3]), tensor(1))
>>> train, test = random_split(ds, [0.8, 0.2], generator=tg.Generator().manual_seed(0))
>>> len(train), len(test)
(4, 1)
"""

from __future__ import annotations

import bisect
import math

import numpy as _np  # index permutations

from ...eager.random import numpy_generator

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]  # fmt: skip


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__(index)`` and usually ``__len__``.
    ``a + b`` concatenates two datasets."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream: subclasses define ``__iter__``. A ``DataLoader`` batches
    what it yields, in order (no shuffling, no sampler). ``a + b`` chains two streams into a
    :class:`ChainDataset`."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __add__(self, other) -> ChainDataset:
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Several iterable datasets one after another: iterating it iterates each in turn (the
    list is read when iteration starts, so it is lazy, as PyTorch's). ``len`` is the sum of
    the parts' lengths, where they have one."""

    def __init__(self, datasets) -> None:
        self.datasets = datasets

    def _check(self, d):
        if not isinstance(d, IterableDataset):
            raise AssertionError(f"ChainDataset only supports IterableDataset, got a "
                                 f"{type(d).__name__}; use ConcatDataset for map-style "
                                 "datasets")  # fmt: skip

    def __iter__(self):
        for d in self.datasets:
            self._check(d)
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            self._check(d)
            total += len(d)
        return total


class TensorDataset(Dataset):
    """Samples are rows of tensors that share their first dimension: ``ds[i]`` is
    ``(t0[i], t1[i], ...)``.

    Args:
        *tensors: tensors (or arrays) with the same size of the first dimension.
    """

    def __init__(self, *tensors) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        for i, t in enumerate(tensors):
            if not hasattr(t, "shape"):
                raise TypeError(f"TensorDataset: argument {i} is a {type(t).__name__}, not a "
                                "tensor; make it one with tg.tensor(...)")  # fmt: skip
        sizes = [t.shape[0] if len(t.shape) else None for t in tensors]
        if None in sizes or any(s != sizes[0] for s in sizes):
            shapes = ", ".join(str(tuple(t.shape)) for t in tensors)
            raise ValueError(f"Size mismatch between tensors: TensorDataset needs the same "
                             f"first dimension in every tensor, got shapes {shapes}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class StackDataset(Dataset):
    """Samples of several datasets side by side: ``StackDataset(a, b)[i] == (a[i], b[i])``, or
    a dict with ``StackDataset(x=a, y=b)``."""

    def __init__(self, *args, **kwargs) -> None:
        if args and kwargs:
            raise ValueError("StackDataset takes datasets as positional or as keyword "
                             "arguments, not both")  # fmt: skip
        self.datasets = args or kwargs
        parts = list(args) if args else list(kwargs.values())
        if not parts:
            raise ValueError("StackDataset needs at least one dataset")
        lengths = {len(d) for d in parts}
        if len(lengths) != 1:
            raise ValueError(f"Size mismatch between datasets: lengths {sorted(lengths)}")
        self._length = lengths.pop()

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset):
    """Several map-style datasets one after another."""

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(_np.cumsum([len(d) for d in self.datasets]).tolist())

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int):
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index += len(self)
        if index >= len(self):
            raise IndexError(f"index {index} is out of range for a dataset of length {len(self)}")
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset, indices) -> None:
        self.dataset = dataset
        self.indices = [int(i) for i in indices]

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset, lengths, generator=None) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random subsets of the given ``lengths``.

    ``lengths`` are counts that sum to ``len(dataset)``, or fractions that sum to 1 (the
    counts are then floored and the remainder handed out one by one, round-robin, as PyTorch
    does). The permutation comes from ``generator`` (default: the default generator).
    """
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        counts = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError(f"Sum of input lengths ({sum(lengths)}) does not equal the length of "
                         f"the input dataset ({n})")  # fmt: skip
    order = numpy_generator(generator).permutation(n).tolist()
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, order[start:start + length]))
        start += length
    return out
