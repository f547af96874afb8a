r"""The pooling functions composed of ops already in the library (so their gradients come from
it), with PyTorch's names and arguments, re-exported by :mod:`tinygrad_edu.nn.functional`:

* ``max_pool3d``, ``avg_pool3d``: one 2-D pooling per offset of the kernel along the depth
  axis, the maximum (or the sum) of the results taken;
* ``max_unpool1d``, ``max_unpool2d``: the values written back at the indices
  ``max_pool*d(..., return_indices=True)`` returned, zeros elsewhere (a ``scatter``).

>>> import tinygrad_edu as tg
>>> import tinygrad_edu.nn.functional as F
>>> y, idx = F.max_pool2d(tg.tensor([[[[1.0, 5.0], [3.0, 2.0]]]]), 2, return_indices=True)
>>> idx.tolist(), F.max_unpool2d(y, idx, 2).tolist()
([[[[1]]]], [[[[0.0, 5.0], [0.0, 0.0]]]])
"""

from __future__ import annotations

import math

import numpy as _np  # integer index tables (no math on tensors)

from ..eager.dispatch import FUNCTIONS
from ..eager.factories import zeros
from ..eager.tensor import Tensor
from ..ops import ShapeError
from .arguments import _tensor, _tuple
from .functional_conv import _batched5, _depth_slices
from .functional_layers import avg_pool2d, max_pool2d, pad

_stack = FUNCTIONS["stack"]

__all__ = ["max_pool3d", "avg_pool3d", "max_unpool1d", "max_unpool2d"]


# -- 3-D pooling ----------------------------------------------------------------------------------
def _pool_depth(name, D, k, s, p, d, ceil_mode):
    """Output depth and the planes to add at the end (``ceil_mode``'s last window)."""
    if p > k // 2:
        raise ValueError(f"{name}: padding {p} must be at most half the kernel size {k}")
    span = D + 2 * p - d * (k - 1) - 1
    if span < 0:
        raise ShapeError(f"{name}: the window depth {k} is bigger than the padded input depth "
                         f"{D + 2 * p}")  # fmt: skip
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= D + p:
        out -= 1
    need = (out - 1) * s + d * (k - 1) + 1
    return out, max(p, need - D - p)


def _pool3d_args(name, kernel_size, stride, padding, dilation):
    k = _tuple(name, "kernel_size", kernel_size, 3)
    s = k if stride is None or stride == () or stride == [] else _tuple(name, "stride", stride, 3)
    return k, s, _tuple(name, "padding", padding, 3, minimum=0), _tuple(name, "dilation",
                                                                         dilation, 3)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False) -> Tensor:  # fmt: skip
    """The maximum of each ``kernel_size`` window of (N, C, D, H, W) (stride defaults to
    ``kernel_size``): ``max_pool2d`` of the planes each depth offset meets, then the
    elementwise maximum over the offsets.

    >>> import tinygrad_edu as tg
    >>> max_pool3d(tg.arange(8.0).reshape(1, 1, 2, 2, 2), 2).tolist()
    [[[[[7.0]]]]]
    """
    if return_indices:
        raise NotImplementedError("max_pool3d: return_indices=True is not supported (there is "
                                  "no max_unpool3d); use max_pool2d for indices")  # fmt: skip
    x, single = _batched5("max_pool3d", _tensor("max_pool3d", "input", input))
    k, s, p, d = _pool3d_args("max_pool3d", kernel_size, stride, padding, dilation)
    N, C, D, H, W = x.shape
    od, end = _pool_depth("max_pool3d", D, k[0], s[0], p[0], d[0], ceil_mode)
    if p[0] or end:
        x = pad(x, (0, 0, 0, 0, p[0], end), value=-math.inf)
    out = None
    for plane in _depth_slices(x, k[0], s[0], d[0], od):
        y = max_pool2d(plane, k[1:], s[1:], p[1:], d[1:], ceil_mode)
        out = y if out is None else out.maximum(y)
    oh, ow = out.shape[-2:]
    out = out.reshape(N, od, C, oh, ow).permute(0, 2, 1, 3, 4)
    return out.squeeze(0) if single else out


def _counts(size, k, s, p, n, include_pad):
    """Per output position along one axis: how many elements its window sums (PyTorch's
    rule: the window is cut at the padded end; padding counts only with ``include_pad``)."""
    out = []
    for o in range(n):
        start = o * s - p
        end = min(start + k, size + p)
        out.append(end - start if include_pad else min(end, size) - max(start, 0))
    return out


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None) -> Tensor:  # fmt: skip
    """The mean of each ``kernel_size`` window of (N, C, D, H, W): each window's sum (the sums
    of ``avg_pool2d`` with divisor 1 over the depth offsets) divided by its size, PyTorch's
    ``count_include_pad`` and ``divisor_override`` rules.

    >>> import tinygrad_edu as tg
    >>> avg_pool3d(tg.arange(8.0).reshape(1, 1, 2, 2, 2), 2).tolist()
    [[[[[3.5]]]]]
    """
    x, single = _batched5("avg_pool3d", _tensor("avg_pool3d", "input", input))
    k, s, p, _ = _pool3d_args("avg_pool3d", kernel_size, stride, padding, 1)
    if divisor_override is not None and (int(divisor_override) != divisor_override
                                         or divisor_override <= 0):  # fmt: skip
        raise ValueError(f"avg_pool3d: divisor_override must be a positive int, got "
                         f"{divisor_override!r}")  # fmt: skip
    N, C, D, H, W = x.shape
    od, end = _pool_depth("avg_pool3d", D, k[0], s[0], p[0], 1, ceil_mode)
    if p[0] or end:
        x = pad(x, (0, 0, 0, 0, p[0], end))
    total = None
    for plane in _depth_slices(x, k[0], s[0], 1, od):
        y = avg_pool2d(plane, k[1:], s[1:], p[1:], ceil_mode, True, 1)  # window sums
        total = y if total is None else total + y
    oh, ow = total.shape[-2:]
    total = total.reshape(N, od, C, oh, ow).permute(0, 2, 1, 3, 4)
    if divisor_override:
        out = total / float(divisor_override)
    else:
        sizes = [_counts(n, ki, si, pi, o, count_include_pad)
                 for n, ki, si, pi, o in zip((D, H, W), k, s, p, (od, oh, ow))]  # fmt: skip
        div = _np.einsum("i,j,k->ijk", *[_np.asarray(c, dtype=_np.float64) for c in sizes])
        out = total / Tensor(div.astype(str(total.dtype)), device=total.device)
    return out.squeeze(0) if single else out


# -- max_unpool -----------------------------------------------------------------------------------
def _unpool_size(name, in_sizes, k, s, p, output_size):
    """PyTorch's output size of max_unpool (``_unpool_output_size``): the inverse of the
    pooling's size rule, or ``output_size`` when it lies strictly within one stride of it."""
    nd = len(k)
    default = [(in_sizes[a] - 1) * s[a] + k[a] - 2 * p[a] for a in range(nd)]
    if output_size is None:
        return default
    out = [int(v) for v in output_size]
    if len(out) == nd + 2:
        out = out[2:]
    if len(out) != nd:
        raise ValueError(f"{name}: output_size should be a sequence containing {nd} or {nd + 2} "
                         f"elements, but it has a length of '{len(out)}'")  # fmt: skip
    for a in range(nd):
        lo, hi = default[a] - s[a], default[a] + s[a]
        if not lo < out[a] < hi:
            raise ValueError(f'{name}: invalid output_size "{tuple(out)}" (dim {a} must be '
                             f"between {lo} and {hi})")  # fmt: skip
    return out


def _max_unpool(name, nd, input, indices, kernel_size, stride, padding, output_size):
    x = _tensor(name, "input", input)
    idx = _tensor(name, "indices", indices)
    if x.dim() not in (nd + 1, nd + 2):
        raise ShapeError(f"{name}: expects an input with {nd + 1} or {nd + 2} axes, got shape "
                         f"{tuple(x.shape)}")  # fmt: skip
    if tuple(idx.shape) != tuple(x.shape):
        raise ShapeError(f"{name}: indices must have the input's shape {tuple(x.shape)}, got "
                         f"{tuple(idx.shape)}")  # fmt: skip
    if idx.is_floating_point() or str(idx.dtype) == "bool":
        raise RuntimeError(f"{name}: indices must be an int64 tensor (the second output of "
                           f"max_pool{nd}d(..., return_indices=True)), got {idx.dtype}")
    k = _tuple(name, "kernel_size", kernel_size, nd)
    s = k if stride is None or stride == () or stride == [] else _tuple(name, "stride", stride,
                                                                          nd)  # fmt: skip
    p = _tuple(name, "padding", padding, nd, minimum=0)
    sizes = _unpool_size(name, tuple(x.shape[-nd:]), k, s, p, output_size)
    plane = int(_np.prod(sizes))
    lead = tuple(x.shape[:-nd])
    flat_idx = idx.reshape(*lead, -1)
    if flat_idx.numel():
        lo, hi = int(flat_idx.min().item()), int(flat_idx.max().item())
        if lo < 0 or hi >= plane:
            bad = lo if lo < 0 else hi
            raise RuntimeError(f"{name}: Found an invalid max index: {bad} (output volumes are "
                               f"of size {'x'.join(map(str, sizes))})")  # fmt: skip
    out = zeros(*lead, plane, dtype=x.dtype, device=x.device)
    out = out.scatter(-1, flat_idx, x.reshape(*lead, -1))
    return out.reshape(*lead, *sizes)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:  # fmt: skip
    """The inverse of ``max_pool2d``: zeros of the pooled input's size, with each value of
    ``input`` written at its flat index ``h * W + w`` from ``indices`` (the gradient is read
    back from those places).

    >>> import tinygrad_edu as tg
    >>> max_unpool2d(tg.tensor([[[[4.0]]]]), tg.tensor([[[[2]]]]), 2).tolist()
    [[[[0.0, 0.0], [4.0, 0.0]]]]
    """
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding,
                       output_size)  # fmt: skip


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:  # fmt: skip
    """The inverse of ``max_pool1d``: zeros of the pooled input's length, with each value of
    ``input`` written at its index from ``indices``.

    >>> import tinygrad_edu as tg
    >>> max_unpool1d(tg.tensor([[[4.0, 5.0]]]), tg.tensor([[[1, 2]]]), 2).tolist()
    [[[0.0, 4.0, 5.0, 0.0]]]
    """
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding,
                       output_size)  # fmt: skip
