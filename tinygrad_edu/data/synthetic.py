r"""Toy 2-D classification sets, drawn on a plane in the lessons: moons and spirals.

Both return ``(X, y)`` with X float32 of shape (n, 2) and y int64 labels, and are deterministic
for a given ``seed``.

>>> from tinygrad_edu.data import make_moons, make_spirals
>>> X, y = make_moons(100, noise=0.1, seed=0)
>>> X.shape, y.dtype, int(y.sum())
((100, 2), dtype('int64'), 50)
>>> X, y = make_spirals(300, classes=3, seed=0)
>>> X.shape, sorted(set(y.tolist()))
((300, 2), [0, 1, 2])
"""

from __future__ import annotations

import numpy as _np

__all__ = ["make_moons", "make_spirals"]


def make_moons(n: int = 200, noise: float = 0.1, seed: int = 0):
    r"""Two interleaving half circles: class 0 on $(\cos t, \sin t)$, class 1 on
    $(1 - \cos t, \tfrac12 - \sin t)$ for $t \in [0, \pi]$, plus Gaussian noise of std
    ``noise``. Class 0 gets ``n // 2`` points (rounded up), class 1 the rest."""
    if n < 2:
        raise ValueError(f"make_moons: need n >= 2 points, got {n}")
    rng = _np.random.default_rng(seed)
    n0 = (n + 1) // 2
    n1 = n - n0
    t0 = _np.linspace(0, _np.pi, n0)
    t1 = _np.linspace(0, _np.pi, n1)
    X = _np.concatenate([_np.stack([_np.cos(t0), _np.sin(t0)], 1),
                         _np.stack([1 - _np.cos(t1), 0.5 - _np.sin(t1)], 1)])  # fmt: skip
    y = _np.concatenate([_np.zeros(n0, _np.int64), _np.ones(n1, _np.int64)])
    X = X + noise * rng.standard_normal(X.shape)
    order = rng.permutation(n)
    return X[order].astype(_np.float32), y[order]


def make_spirals(n: int = 300, classes: int = 3, noise: float = 0.2, seed: int = 0):
    r"""``classes`` arms of a spiral (CS231n's toy set): arm $k$ has radius $r \in [0, 1]$ and
    angle $\theta = 4r + 2\pi k/K$ plus Gaussian noise of std ``noise`` (radians). ``n`` points
    in all, shared as evenly as possible between the arms."""
    if classes < 2 or n < classes:
        raise ValueError(f"make_spirals: need classes >= 2 and n >= classes, got n={n}, "
                         f"classes={classes}")  # fmt: skip
    rng = _np.random.default_rng(seed)
    xs, ys = [], []
    for k in range(classes):
        m = n // classes + (1 if k < n % classes else 0)
        r = _np.linspace(0.0, 1.0, m)
        theta = 4 * r + 2 * _np.pi * k / classes + noise * rng.standard_normal(m)
        xs.append(_np.stack([r * _np.sin(theta), r * _np.cos(theta)], 1))
        ys.append(_np.full(m, k, _np.int64))
    X, y = _np.concatenate(xs), _np.concatenate(ys)
    order = rng.permutation(n)
    return X[order].astype(_np.float32), y[order]
