"""Samplers: the order in which a ``DataLoader`` visits a map-style dataset's indices.

A sampler yields indices; a :class:`BatchSampler` groups another sampler's indices into
lists, one per batch. ``DataLoader(shuffle=True)`` is ``RandomSampler`` underneath; without
it, ``SequentialSampler``.

>>> import tinygrad_edu as tg
>>> from tinygrad_edu.utils.data import BatchSampler, RandomSampler, SequentialSampler
>>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
[[0, 1], [2, 3], [4]]
>>> sorted(RandomSampler(range(5), generator=tg.Generator().manual_seed(0)))
[0, 1, 2, 3, 4]
"""

from __future__ import annotations

import numpy as _np  # index arithmetic

from ...eager.random import numpy_generator

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]  # fmt: skip


class Sampler:
    """Base class: subclasses define ``__iter__`` (yielding indices) and, when they can,
    ``__len__``."""

    def __init__(self, data_source=None) -> None:
        pass

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _epoch_rng(generator) -> _np.random.Generator:
    """The numpy generator for one pass: ``generator``'s own stream, or (PyTorch's rule when
    none is given) a fresh one seeded by one draw from the default generator, so that
    ``tg.manual_seed`` makes every epoch's order reproducible."""
    if generator is not None:
        return numpy_generator(generator)
    return _np.random.default_rng(int(numpy_generator(None).integers(0, 2**63)))


class RandomSampler(Sampler):
    """The indices in a random order, a new one each pass.

    Args:
        data_source: the dataset (only its length is used).
        replacement: draw ``num_samples`` indices independently (with repeats).
        num_samples: how many indices per pass (default: the dataset's length; more than
            that without replacement runs through several permutations).
        generator: a :class:`~tinygrad_edu.Generator` for the order.
    """

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator=None) -> None:  # fmt: skip
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={replacement}")  # fmt: skip
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")  # fmt: skip

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, k = len(self.data_source), self.num_samples
        rng = _epoch_rng(self.generator)
        if self.replacement:  # drawn 32 at a time, as PyTorch does: num_samples may be huge
            for start in range(0, k, 32):
                yield from rng.integers(0, n, size=min(32, k - start)).tolist()
            return
        for _ in range(k // n):
            yield from rng.permutation(n).tolist()
        yield from rng.permutation(n)[: k % n].tolist()

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order, a new one each pass."""

    def __init__(self, indices, generator=None) -> None:
        self.indices, self.generator = indices, generator

    def __iter__(self):
        for i in _epoch_rng(self.generator).permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``
    (to balance classes, for example)."""

    def __init__(self, weights, num_samples: int, replacement: bool = True,
                 generator=None) -> None:  # fmt: skip
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")  # fmt: skip
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")  # fmt: skip
        w = _np.asarray(getattr(weights, "numpy", lambda: weights)(), dtype=_np.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{w.shape}")  # fmt: skip
        if (w < 0).any() or not _np.isfinite(w).all() or w.sum() <= 0:
            raise RuntimeError("WeightedRandomSampler: weights must be finite, non-negative "
                               "and not all zero")  # fmt: skip
        if not replacement and num_samples > int((w > 0).sum()):
            raise RuntimeError(f"WeightedRandomSampler: cannot draw {num_samples} samples "
                               f"without replacement from {int((w > 0).sum())} non-zero "
                               "weights")  # fmt: skip
        self.weights, self.num_samples = w, num_samples
        self.replacement, self.generator = replacement, generator

    def __iter__(self):
        p = self.weights / self.weights.sum()
        rng = _epoch_rng(self.generator)
        drawn = rng.choice(len(p), size=self.num_samples, replace=self.replacement, p=p)
        return iter(drawn.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Group ``sampler``'s indices into lists of ``batch_size`` (the last one shorter, or
    dropped with ``drop_last=True``)."""

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")  # fmt: skip
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")  # fmt: skip
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
