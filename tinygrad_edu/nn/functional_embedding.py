r"""``embedding_bag``, with PyTorch's name and arguments: the sums, means or maxima of bags of
embedding rows, composed of ``embedding``, ``index_add`` and ``amax`` (so its gradients come
from the op library). Re-exported by :mod:`tinygrad_edu.nn.functional`.
"""

from __future__ import annotations

import numpy as _np  # integer index tables (no math on tensors)

from ..eager.dispatch import FUNCTIONS
from ..eager.factories import zeros
from ..eager.tensor import Tensor
from .arguments import _tensor
from .functional_layers import embedding

_stack = FUNCTIONS["stack"]

__all__ = ["embedding_bag"]


# -- embedding_bag --------------------------------------------------------------------------------
def _int_list(name, what, t) -> list:
    if isinstance(t, Tensor):
        if t.is_floating_point():
            raise TypeError(f"{name}: {what} must be an integer tensor, got {t.dtype}")
        return [int(v) for v in _np.asarray(t.tolist()).reshape(-1)]
    return [int(v) for v in _np.asarray(t).reshape(-1)]


def _check_bag(name, w, idx, mode, per_sample_weights, padding_idx):
    """PyTorch's checks of ``embedding_bag``'s arguments; returns ``padding_idx`` made
    non-negative (or None)."""
    if w.dim() != 2:
        raise ValueError(f"{name}: weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{w.dim()}")  # fmt: skip
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"{name}: mode has to be one of sum, mean or max, got {mode!r}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"{name}: per_sample_weights was not None. per_sample_weights "
                                  f"is only supported for mode='sum' (got mode='{mode}')")
    if per_sample_weights is not None and tuple(per_sample_weights.shape) != tuple(idx.shape):
        raise ValueError(f"{name}: embedding_bag: If per_sample_weights "
                         f"({tuple(per_sample_weights.shape)}) is not None, then it must have "
                         f"the same shape as the input ({tuple(idx.shape)})")  # fmt: skip
    n_rows = w.shape[0]
    if padding_idx is not None:
        if not -n_rows <= padding_idx < n_rows:
            raise AssertionError(f"{name}: padding_idx {padding_idx} must be within "
                                 f"num_embeddings ({n_rows})")  # fmt: skip
        padding_idx %= n_rows
    return padding_idx


def _bag_starts(name, idx, offsets, include_last_offset) -> list:
    """Where each bag starts in the flattened ``idx``, and where the last one ends: B bags of
    L for a 2-D ``idx``, else ``offsets`` (checked as PyTorch does)."""
    if idx.dim() == 2:
        if offsets is not None:
            raise ValueError(f"{name}: if input is 2D, then offsets has to be None, as input is "
                             "treated is a mini-batch of fixed length sequences. However, "
                             f"found offsets of type {type(offsets).__name__}")  # fmt: skip
        B, L = idx.shape
        starts = [b * L for b in range(B)] + [B * L]
    elif idx.dim() == 1:
        if offsets is None:
            raise ValueError(f"{name}: offsets has to be a 1D Tensor but got None")
        if isinstance(offsets, Tensor) and offsets.dim() != 1:
            raise ValueError(f"{name}: offsets has to be a 1D Tensor, got shape "
                             f"{tuple(offsets.shape)}")  # fmt: skip
        starts = _int_list(name, "offsets", offsets)
        if starts and starts[0] != 0:
            raise RuntimeError(f"{name}: offsets[0] has to be 0, i.e., the first sequence in the "
                               f"mini-batch has to start from position 0. However, got "
                               f"{starts[0]}")  # fmt: skip
        if any(b < a for a, b in zip(starts, starts[1:])) or (starts and
                                                              starts[-1] > idx.shape[0]):
            raise RuntimeError(f"{name}: offsets must be non-decreasing and at most the input "
                               f"length {idx.shape[0]}, got {starts}")  # fmt: skip
        if not include_last_offset:
            starts = starts + [idx.shape[0]]
    else:
        raise ValueError(f"{name}: input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{idx.dim()}")  # fmt: skip
    return starts


def _bag_max(rows, starts, kept, w):
    """``mode="max"``: each bag's elementwise maximum of its kept rows (zeros when empty)."""
    n_bags = len(starts) - 1
    out = []
    for b in range(n_bags):
        sel = [j for j in range(starts[b], starts[b + 1]) if kept[j]]
        if sel:
            out.append(rows[Tensor(_np.asarray(sel), device=w.device)].amax(0))
        else:
            out.append(zeros(w.shape[1], dtype=w.dtype, device=w.device))
    return _stack(out) if out else zeros(0, w.shape[1], dtype=w.dtype, device=w.device)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None) -> Tensor:  # fmt: skip
    r"""The sum, mean or maximum of *bags* of rows of ``weight``, without building the
    (bag, row, dim) tensor in between: ``input`` (B, L) holds B bags of L indices, or ``input``
    is 1-D and ``offsets`` (B,) says where each bag starts. ``per_sample_weights`` (shaped
    like ``input``, ``mode="sum"`` only) scales each row; entries equal to ``padding_idx`` are
    left out (an empty bag gives zeros).

    >>> import tinygrad_edu as tg
    >>> w = tg.arange(6.0).reshape(3, 2)
    >>> embedding_bag(tg.tensor([0, 2, 1]), w, tg.tensor([0, 2]), mode="sum").tolist()
    [[4.0, 6.0], [2.0, 3.0]]
    """
    name = "embedding_bag"
    w = _tensor(name, "weight", weight)
    idx = _tensor(name, "input", input)
    padding_idx = _check_bag(name, w, idx, mode, per_sample_weights, padding_idx)
    starts = _bag_starts(name, idx, offsets, include_last_offset)
    n_rows = w.shape[0]
    flat = idx.reshape(-1)
    ids = _int_list(name, "input", flat)
    if ids and (min(ids) < 0 or max(ids) >= n_rows):
        bad = next(j for j, i in enumerate(ids) if not 0 <= i < n_rows)
        raise RuntimeError(f"{name}: Index {bad} of input takes value {ids[bad]} which is not "
                           f"in the valid range [0, {n_rows})")  # fmt: skip
    rows = embedding(flat, w, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)
    n_bags = len(starts) - 1
    bag_of = _np.zeros(len(ids), dtype=_np.int64)
    for b in range(n_bags):
        bag_of[starts[b]:starts[b + 1]] = b
    kept = _np.array([padding_idx is None or i != padding_idx for i in ids], dtype=bool)
    if mode == "max":
        return _bag_max(rows, starts, kept, w)
    scale = kept.astype(str(w.dtype))
    rows = rows * Tensor(scale[:, None], device=w.device)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    target = Tensor(bag_of, device=w.device)
    out = zeros(n_bags, w.shape[1], dtype=w.dtype, device=w.device).index_add(0, target, rows)
    if mode == "mean":
        counts = _np.bincount(bag_of[kept], minlength=n_bags)[:n_bags].astype(str(w.dtype))
        out = out / Tensor(_np.maximum(counts, 1)[:, None], device=w.device)
    return out
