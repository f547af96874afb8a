r"""Layer functions that build symbolic nodes: ``conv2d``, ``max_pool2d``, ``avg_pool2d``,
``pad``, ``batch_norm``, ``layer_norm``, ``embedding`` (PyTorch's argument names).

They build the same ops as ``tinygrad_edu.nn.functional`` applies eagerly, so
:func:`~tinygrad_edu.symbolic.gradients` differentiates them (to any order) like every op.

>>> import numpy as np
>>> from tinygrad_edu.symbolic import Executor, Variable, gradients
>>> from tinygrad_edu.symbolic import conv2d, max_pool2d
>>> x = Variable("x", shape=(2, 1, 6, 6))
>>> w = Variable("w", shape=(4, 1, 3, 3))
>>> y = max_pool2d(conv2d(x, w, padding=1).relu(), 2)
>>> y.shape
(2, 4, 3, 3)
>>> (dw,) = gradients(y.sum(), [w])
>>> dw.shape
(4, 1, 3, 3)
"""

from __future__ import annotations

from ..ops.conv import pair
from .node import Node, apply_op

__all__ = [
    "conv2d", "max_pool2d", "avg_pool2d", "pad", "batch_norm", "layer_norm", "embedding",
]  # fmt: skip


def conv2d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1) -> Node:
    r"""2-D convolution (NCHW) of ``x`` with ``w`` (O, C/groups, kH, kW), plus ``b`` (O,):
    im2col and one matrix product (``ops/conv.py``). ``padding`` is an int or a pair."""
    attrs = dict(stride=pair("conv2d", "stride", stride),
                 padding=pair("conv2d", "padding", padding, minimum=0),
                 dilation=pair("conv2d", "dilation", dilation), groups=int(groups))  # fmt: skip
    args = (x, w) if b is None else (x, w, b)
    return apply_op("conv2d", *args, **attrs)


def _pool(name, kernel_size, stride):
    k = pair(name, "kernel_size", kernel_size)
    return k, (k if stride is None else pair(name, "stride", stride))


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False) -> Node:
    """The maximum of each window (stride defaults to ``kernel_size``)."""
    k, s = _pool("max_pool2d", kernel_size, stride)
    return apply_op("max_pool2d", x, kernel_size=k, stride=s,
                    padding=pair("max_pool2d", "padding", padding, minimum=0),
                    dilation=pair("max_pool2d", "dilation", dilation),
                    ceil_mode=bool(ceil_mode))  # fmt: skip


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None) -> Node:  # fmt: skip
    """The mean of each window (stride defaults to ``kernel_size``)."""
    k, s = _pool("avg_pool2d", kernel_size, stride)
    return apply_op("avg_pool2d", x, kernel_size=k, stride=s,
                    padding=pair("avg_pool2d", "padding", padding, minimum=0),
                    ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
                    divisor_override=divisor_override)  # fmt: skip


def pad(x, pad, value=0.0) -> Node:
    """Constant padding of the last axes; ``pad`` = (before, after) pairs from the last axis
    backwards, as in PyTorch (negative amounts crop)."""
    return apply_op("pad", x, pad=tuple(int(p) for p in pad), value=value)


def batch_norm(x, weight=None, bias=None, running_mean=None, running_var=None,
               training=True, eps=1e-5, ndim=None) -> Node:  # fmt: skip
    """Normalise each channel (axis 1) with the batch's statistics (``training``) or with
    ``running_mean``/``running_var`` (evaluation). ``ndim``, the rank of ``x``, is needed only
    when ``x``'s shape is not declared. (Updating running statistics is left to the caller:
    a symbolic graph has no side effects.)"""
    if ndim is None:
        if x.shape is None:
            raise ValueError(
                f"batch_norm: the rank of {x.name!r} is unknown; declare its shape "
                "(Variable(name, shape=...)) or pass ndim=, e.g. ndim=4 for (N, C, H, W)"
            )
        ndim = len(x.shape)
    if (weight is None) != (bias is None):
        raise ValueError("batch_norm: give both weight and bias, or neither")
    if not training and (running_mean is None or running_var is None):
        raise ValueError("batch_norm: evaluation (training=False) needs running_mean and "
                         "running_var")  # fmt: skip
    affine = weight is not None
    args = [x] + ([weight, bias] if affine else [])
    if not training:
        args += [running_mean, running_var]
    return apply_op("batch_norm", *args, training=bool(training), affine=affine,
                    eps=float(eps), ndim=int(ndim))  # fmt: skip


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5) -> Node:
    """Normalise over the last ``len(normalized_shape)`` axes, then scale and shift."""
    k = 1 if isinstance(normalized_shape, int) else len(tuple(normalized_shape))
    if weight is None and bias is not None:
        weight = apply_op("ones_like", bias)
    args = [x] + [t for t in (weight, bias) if t is not None]
    return apply_op("layer_norm", *args, normalized_ndim=k, eps=float(eps))


def embedding(indices, weight, padding_idx=None) -> Node:
    """Rows of ``weight`` (V, D) picked by integer ``indices``: shape ``indices.shape + (D,)``."""
    return apply_op("embedding", indices, weight, padding_idx=padding_idx)
