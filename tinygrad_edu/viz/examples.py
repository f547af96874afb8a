"""Example computations that run on both engines (operators only).

The seed example ``D = (A + B) * C; E = D @ (A + C)`` is the canonical picture of the project:
one computation, drawn as a tensor graph (symbolic) and as a backward-op graph (eager).

>>> import tinygrad_edu as tg
>>> ins = seed_inputs()
>>> E = seed(*(tg.tensor(ins[k]) for k in "ABC"))
>>> E.shape, E.name
((2, 2), 'E')
"""

from __future__ import annotations

import numpy as np

__all__ = ["seed", "seed_inputs", "EXAMPLES"]


def seed(A, B, C):
    """``D = (A + B) * C; E = D @ (A + C)`` for symbolic Nodes, eager Tensors or PyTorch tensors.

    ``A`` and ``C`` are each used twice (fan-out), so their gradients are sums of two
    contributions: an ``add`` node in the symbolic gradient graph, an input buffer in the eager
    engine. The results are named ``D`` and ``E`` for drawings.
    """
    D = (A + B) * C
    _name(D, "D")
    E = D @ (A + C)
    _name(E, "E")
    return E


def _name(value, name: str) -> None:
    """Label ``value`` for drawings; PyTorch tensors take no labels (drawings name them with
    ``names=``), so they are left as they are."""
    try:
        value.name = name
    except AttributeError:
        pass


def seed_inputs(n: int = 2, seed: int = 0) -> dict:
    """Default inputs for :func:`seed`: ``{"A", "B", "C"}`` -> small float32 ``n``×``n`` arrays
    with one-decimal values (easy to read in a drawing), the same for the same ``seed``."""
    rng = np.random.default_rng(seed)
    return {k: np.round(rng.uniform(-1, 1, (n, n)), 1).astype(np.float32) for k in "ABC"}


# name -> (function, default inputs)
EXAMPLES = {"seed": (seed, seed_inputs)}
