r"""The layer functions of a CNN (and of sequence models), with PyTorch's names and arguments:
``conv2d``, ``max_pool2d``, ``avg_pool2d``, ``adaptive_avg_pool2d``, ``pad``, ``batch_norm``,
``layer_norm``, ``embedding``, ``dropout``. Re-exported by :mod:`tinygrad_edu.nn.functional`.

Each is generated from its one declaration beside its op (``ops/conv.py``, ``ops/pool.py``,
``ops/pad.py``, ``ops/norm.py``, ``ops/embedding.py``, ``ops/nn.py``; see
:mod:`tinygrad_edu.ops.layer_surface`), the same declaration that gives the symbolic engine's
``symbolic.conv2d`` and the rest, so both engines take the same arguments. What is the eager
engine's own is :data:`ENGINE`: values become tensors, and PyTorch's side effects (running
statistics, ``max_norm``, in-place dropout) change the tensors in place.

>>> import tinygrad_edu as tg
>>> import tinygrad_edu.nn.functional as F
>>> x = tg.randn(2, 3, 8, 8)
>>> w = tg.randn(4, 3, 3, 3, requires_grad=True)
>>> y = F.max_pool2d(F.conv2d(x, w, padding=1).relu(), 2)
>>> y.shape, y.grad_fn
((2, 4, 4, 4), <MaxPool2DWithIndicesBackward0 #...>)
"""

from __future__ import annotations

import numpy as _np  # Python lists of indices -> integer arrays (no math)

from .. import backend
from ..eager.factories import generator
from ..eager.grad_mode import no_grad
from ..eager.tensor import Tensor, apply_op
from ..ops.layer_surface import Engine, generate_layers

__all__ = [
    "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "pad", "batch_norm",
    "layer_norm", "embedding", "dropout", "ENGINE", "LAYERS",
]  # fmt: skip
__all__ += [  # composed of the ops above (tinygrad_edu.ops.more_layers)
    "conv1d", "conv_transpose1d", "conv_transpose2d", "unfold", "fold", "adaptive_avg_pool1d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "group_norm", "instance_norm", "rms_norm",
    "dropout1d", "dropout2d", "interpolate", "dropout3d", "max_pool1d", "avg_pool1d",
    "pixel_shuffle", "pixel_unshuffle",
]  # fmt: skip


def _value(name: str, what: str, x) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return Tensor(x)
    raise TypeError(f"{name}: {what} must be a tensor, got {type(x).__name__}")


def _full_like(x: Tensor, v: float) -> Tensor:
    return Tensor(backend.namespace_of(x._data).full_like(x._data, v))


def _index(x: Tensor, ints) -> object:
    return backend.namespace_of(x._data).asarray(ints)


def _indices(ints, like: Tensor) -> Tensor:
    return Tensor(ints if hasattr(ints, "shape") else _np.asarray(ints), device=like.device)


def _update_running_stats(x, running_mean, running_var, momentum) -> None:
    """PyTorch's update: an exponential moving average of the batch mean and of the
    *unbiased* batch variance (``n / (n - 1)`` times the biased one used to normalise)."""
    axes = (0,) + tuple(range(2, x.ndim))
    n = x.numel() // x.shape[1]
    with no_grad():  # tensor ops, in place: tg.compile records the update as it records any
        x = x.detach()
        mean = x.mean(dim=axes)
        var = x.var(dim=axes, unbiased=False) * (n / max(n - 1, 1))
        m = float(momentum)
        for stat, batch in ((running_mean, mean), (running_var, var)):
            stat.copy_((1 - m) * stat + m * batch.to(stat.dtype))


def _renorm_rows(idx, w, max_norm, norm_type) -> None:
    xp = backend.namespace_of(w._data)
    unique = getattr(xp, "unique_values", None) or xp.unique  # numpy 2, the Array API; CuPy
    rows = unique(xp.reshape(idx._data, (-1,)))
    with no_grad():
        sel = w._data[rows]
        norms = xp.sum(xp.abs(sel) ** norm_type, axis=1) ** (1.0 / norm_type)
        scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        w._data[rows] = sel * xp.astype(scale[:, None], w.dtype)
        w._counter[0] += 1


def _dropout_mask(x: Tensor, p: float) -> Tensor:
    keep = generator().random(x.shape) >= p
    scale = (keep / (1 - p)) if p < 1 else keep * 0.0
    return Tensor(scale.astype(str(x.dtype)), device=x.device)


#: What the eager engine hands the layer templates (:class:`.layer_surface.Engine`).
ENGINE = Engine(name="eager", apply=apply_op, value=_value, full_like=_full_like, index=_index,
               indices=_indices, update_running_stats=_update_running_stats,
               renorm_rows=_renorm_rows, dropout_mask=_dropout_mask,
               mul_=lambda x, y: x.mul_(y))  # fmt: skip

#: name -> the eager layer function
LAYERS = generate_layers(ENGINE)
conv2d = LAYERS["conv2d"]
max_pool2d = LAYERS["max_pool2d"]
avg_pool2d = LAYERS["avg_pool2d"]
adaptive_avg_pool2d = LAYERS["adaptive_avg_pool2d"]
pad = LAYERS["pad"]
batch_norm = LAYERS["batch_norm"]
layer_norm = LAYERS["layer_norm"]
embedding = LAYERS["embedding"]
dropout = LAYERS["dropout"]
conv1d = LAYERS["conv1d"]
conv_transpose1d = LAYERS["conv_transpose1d"]
conv_transpose2d = LAYERS["conv_transpose2d"]
unfold = LAYERS["unfold"]
fold = LAYERS["fold"]
adaptive_avg_pool1d = LAYERS["adaptive_avg_pool1d"]
adaptive_max_pool1d = LAYERS["adaptive_max_pool1d"]
adaptive_max_pool2d = LAYERS["adaptive_max_pool2d"]
group_norm = LAYERS["group_norm"]
instance_norm = LAYERS["instance_norm"]
rms_norm = LAYERS["rms_norm"]
dropout1d = LAYERS["dropout1d"]
dropout2d = LAYERS["dropout2d"]
interpolate = LAYERS["interpolate"]
dropout3d = LAYERS["dropout3d"]
max_pool1d = LAYERS["max_pool1d"]
avg_pool1d = LAYERS["avg_pool1d"]
pixel_shuffle = LAYERS["pixel_shuffle"]
pixel_unshuffle = LAYERS["pixel_unshuffle"]

__test__ = dict(LAYERS)  # their docstrings' examples run with this module's
