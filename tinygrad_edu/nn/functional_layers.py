r"""The layer functions of a CNN (and of sequence models), with PyTorch's names and arguments:
``conv2d``, ``max_pool2d``, ``avg_pool2d``, ``adaptive_avg_pool2d``, ``pad``, ``batch_norm``,
``layer_norm``, ``embedding``, ``dropout``. Re-exported by :mod:`tinygrad_edu.nn.functional`.

Each is generated from its one declaration beside its op (``ops/conv.py``, ``ops/pooling.py``,
``ops/padding.py``, ``ops/normalization.py``, ``ops/embedding.py``, ``ops/dropout.py``; see
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

import functools
import math
import warnings

import numpy as _np  # Python lists of indices -> integer arrays (no math)

from .. import backend
from ..eager.factories import generator
from ..eager.grad_mode import no_grad
from ..eager.tensor import Tensor, apply_op
from ..ops import REGISTRY
from ..ops.layer_surface import Engine, generate_layers
from .arguments import _needs_float, _same_dtype, _tensor

__all__ = [
    "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "pad", "batch_norm",
    "layer_norm", "embedding", "dropout", "ENGINE", "LAYERS",
]  # fmt: skip
# composed of the ops above (ops/conv.py, pooling.py, normalization.py, dropout.py, upsampling.py)
__all__ += [
    "conv1d", "conv_transpose1d", "conv_transpose2d", "unfold", "fold", "adaptive_avg_pool1d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "group_norm", "instance_norm", "rms_norm",
    "dropout1d", "dropout2d", "interpolate", "dropout3d", "max_pool1d", "avg_pool1d",
    "pixel_shuffle", "pixel_unshuffle", "alpha_dropout",
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


def _dropout_mask(x: Tensor, p: float, shape=None) -> Tensor:
    """The kept elements' scale, ``1/(1-p)`` or 0, in ``x``'s dtype and device, of ``shape``
    (``x.shape`` unless given: a channel dropout draws one value per channel)."""
    keep = generator().random(x.shape if shape is None else shape) >= p
    scale = (keep / (1 - p)) if p < 1 else keep * 0.0
    return Tensor(scale.astype(str(x.dtype)), device=x.device)


#: What the eager engine hands the layer templates (:class:`.layer_surface.Engine`).
ENGINE = Engine(name="eager", apply=apply_op, value=_value, full_like=_full_like, index=_index,
               indices=_indices, update_running_stats=_update_running_stats,
               renorm_rows=_renorm_rows, dropout_mask=_dropout_mask,
               mul_=lambda x, y: x.mul_(y))  # fmt: skip

#: name -> the eager layer function
LAYERS = generate_layers(ENGINE)


# -- what the eager functions check before the shared templates run -----------------------------
def _checked_conv(name):
    """``LAYERS[name]`` after PyTorch's dtype check: input, weight and bias of one dtype."""
    plain = LAYERS[name]

    @functools.wraps(plain)
    def conv(input, weight, bias=None, *args, **kwargs):
        _same_dtype(name, input, weight, bias)
        return plain(input, weight, bias, *args, **kwargs)

    return conv


for _name in ("conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d"):
    LAYERS[_name] = _checked_conv(_name)

_plain_dropout = LAYERS["dropout"]


@functools.wraps(_plain_dropout)
def _dropout(input, p=0.5, training=True, inplace=False):
    if training and 0 < p < 1 and math.prod(getattr(input, "shape", ())) != 0:
        _needs_float("dropout", input, "dropout (which scales the kept elements by 1/(1-p))")
    return _plain_dropout(input, p, training, inplace)


LAYERS["dropout"] = _dropout


def _channel_dropout(name: str, nd: int):
    """PyTorch's ``dropout1d``/``2d``/``3d``: zero whole channels, i.e. one draw for each
    (sample, channel) pair of an input read as ``(N, C, *spatial)``.

    As in PyTorch, the number of dims decides what a channel is: ``dropout1d`` takes 2-D
    ``(C, L)`` or 3-D ``(N, C, L)`` inputs only; ``dropout2d`` warns for any input but 3-D or
    4-D, and reads a 3-D input as ``(N, C, L)`` (with a warning; use ``dropout1d`` for that);
    ``dropout3d`` warns for any input but 4-D or 5-D and reads every input but a 5-D one as
    unbatched (``(C, D, H, W)``). A 2-D input to ``dropout2d`` is ``(N, C)``: its elements are
    dropped one by one."""
    template = LAYERS[name]

    @functools.wraps(template)
    def channel_dropout(input, p=0.5, training=True, inplace=False):
        x = _value(name, "input", input)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{name}: dropout probability has to be between 0 and 1, but "
                             f"got {p}")  # fmt: skip
        dims, fits = x.ndim, (nd + 1, nd + 2)
        if nd == 1 and dims not in fits:
            raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {dims}D "
                               f"input of shape {x.shape}. dropout1d drops channels of (C, L) "
                               "or (N, C, L) inputs; for elementwise dropout use F.dropout")
        if dims not in fits:
            warnings.warn(f"{name}: Received a {dims}-D input to {name}, which is deprecated "
                          "and will result in an error in a future release. To retain the "
                          f"behavior and silence this warning, please use dropout instead "
                          f"({name} expects {nd + 1}D or {nd + 2}D inputs)", UserWarning,
                          stacklevel=2)  # fmt: skip
        if nd == 2 and dims == 3:
            warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                          "channel-wise 1D dropout behavior is desired - input is interpreted "
                          "as shape (N, C, L), where C is the channel dim. To maintain the 1D "
                          "channel-wise dropout behavior, please switch to using dropout1d "
                          "instead.", UserWarning, stacklevel=2)  # fmt: skip
        if not training or p == 0 or x.numel() == 0:
            return x
        # the input as (N, C, ...): an unbatched one (dropout1d's 2-D, dropout3d's all but
        # 5-D) has N = 1 in front; dropout2d takes every input as batched
        shape = x.shape if nd == 2 or dims == nd + 2 else (1,) + x.shape
        if p == 1:
            mask = _dropout_mask(x, 1.0, (1,) * dims)
        else:
            if len(shape) < 2:
                raise RuntimeError(f"{name}: Feature dropout requires at least 2 dimensions in "
                                   f"the input, got shape {x.shape}; use F.dropout to drop "
                                   "single elements")  # fmt: skip
            _needs_float(name, x, f"{name} (which scales the kept channels by 1/(1-p))")
            mask_shape = shape[:2] + (1,) * (len(shape) - 2)
            mask = _dropout_mask(x, p, mask_shape[len(shape) - dims :])
        return x.mul_(mask) if inplace else apply_op(_MUL, x, mask)

    return channel_dropout


_MUL = REGISTRY["mul"]
for _name, _nd in (("dropout1d", 1), ("dropout2d", 2), ("dropout3d", 3)):
    LAYERS[_name] = _channel_dropout(_name, _nd)
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

# -- alpha_dropout: SELU's dropout, a composite -------------------------------------------------
#: SELU's negative saturation value, $-\lambda\alpha$
_SELU_ALPHA = 1.7580993408473766


def alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    r"""Dropout for self-normalising (SELU) networks: a dropped element is set to SELU's
    saturation value $-\lambda\alpha$ instead of 0, and the result is mapped by $a x + b$ so
    that inputs of mean 0 and variance 1 keep them:

    $$a = \left((1 - p)(1 + p\,\lambda^2\alpha^2)\right)^{-1/2}, \qquad
      y = a\,(m\,x + (1 - m)(-\lambda\alpha)) + a\,\lambda\alpha\,p$$

    with $m$ the keep mask ($P(m = 1) = 1 - p$), PyTorch's formula. Outside training (the
    default for the function, as in PyTorch) it returns ``input``.

    >>> import tinygrad_edu as tg
    >>> x = tg.randn(4)
    >>> alpha_dropout(x) is x
    True
    """
    x = _tensor("alpha_dropout", "input", input)
    if isinstance(p, bool) or not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return x
    if p == 1:
        out = x * 0.0
    else:
        keep = generator().random(tuple(x.shape)) >= p
        a = 1.0 / math.sqrt((_SELU_ALPHA**2 * p + 1) * (1 - p))
        noise = Tensor((keep * a).astype(str(x.dtype)), device=x.device)
        shift = Tensor(((keep - 1.0) * _SELU_ALPHA * a + _SELU_ALPHA * a * p).astype(
            str(x.dtype)), device=x.device)  # fmt: skip
        out = x * noise + shift
    if inplace:
        return x.copy_(out)
    return out


__test__ = {**LAYERS, "alpha_dropout": alpha_dropout}  # their examples run with this module's
