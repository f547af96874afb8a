"""``load_digits``: the bundled 8x8 handwritten digits, whole or split into train and test.

The split is stratified: each digit class is shuffled with ``seed`` and the first
``round(test_fraction * count)`` of its images go to the test set, so both parts keep the
class balance and the same seed always gives the same split.
"""

from __future__ import annotations

import os

import numpy as _np  # data files and index bookkeeping

__all__ = ["load_digits", "DIGITS_PATH"]

DIGITS_PATH = os.path.join(os.path.dirname(__file__), "digits.npz")


def _raw():
    with _np.load(DIGITS_PATH, allow_pickle=False) as f:
        return f["images"], f["labels"]


def load_digits(split: str | None = None, test_fraction: float = 0.2, seed: int = 0,
                normalize: bool = True):  # fmt: skip
    """The digits as ``(X, y)``: X float32 of shape (n, 64), y int64 class labels 0..9.

    Args:
        split: None for all 1,797 images, ``"train"`` or ``"test"`` for one part of a
            stratified split.
        test_fraction: the share of each class that goes to the test part.
        seed: shuffles each class before the split (and the order of the returned rows).
        normalize: scale pixel values from 0..16 to [0, 1] (else keep 0..16, as float32).

    >>> X, y = load_digits("test", test_fraction=0.5)
    >>> len(y), sorted(set(y.tolist())) == list(range(10))
    (898, True)
    """
    if split not in (None, "train", "test"):
        raise ValueError(f"load_digits: split must be None, 'train' or 'test', got {split!r}")
    if not 0 < test_fraction < 1:
        raise ValueError(f"load_digits: test_fraction must be in (0, 1), got {test_fraction}")
    images, labels = _raw()
    X = images.reshape(len(images), -1).astype(_np.float32)
    if normalize:
        X /= 16.0
    y = labels.astype(_np.int64)
    if split is None:
        return X, y
    rng = _np.random.default_rng(seed)
    train_idx, test_idx = [], []
    for c in range(10):
        idx = _np.flatnonzero(y == c)
        idx = idx[rng.permutation(len(idx))]
        k = int(round(test_fraction * len(idx)))
        test_idx.append(idx[:k])
        train_idx.append(idx[k:])
    pick = _np.concatenate(test_idx if split == "test" else train_idx)
    pick = pick[rng.permutation(len(pick))]  # mix the classes
    return X[pick], y[pick]
