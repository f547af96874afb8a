r"""More layer functions of ``tg.nn.functional``, with PyTorch's names and arguments, each a
composite of ops already in the library (so their gradients come from it):

* ``conv3d``, ``max_pool3d``, ``avg_pool3d``: one 2-D convolution (or pooling) per offset
  of the kernel along the depth axis, the results added (or their maximum taken);
* ``max_unpool1d``, ``max_unpool2d``: the values written back at the indices
  ``max_pool*d(..., return_indices=True)`` returned, zeros elsewhere (a ``scatter``);
* ``alpha_dropout`` (SELU's dropout), ``embedding_bag`` (sums, means or maxima of bags of
  embedding rows), ``bilinear`` ($y_k = x_1^\top W_k x_2 + b_k$);
* ``affine_grid`` and ``grid_sample`` (4-D: sampling an image at arbitrary points, the
  spatial-transformer pair);
* ``ctc_loss`` lives in :mod:`tinygrad_edu.nn.ctc`.

>>> import tinygrad_edu as tg
>>> import tinygrad_edu.nn.functional as F
>>> F.conv3d(tg.ones(1, 1, 3, 3, 3), tg.ones(1, 1, 2, 2, 2)).shape
(1, 1, 2, 2, 2)
>>> y, idx = F.max_pool2d(tg.tensor([[[[1.0, 5.0], [3.0, 2.0]]]]), 2, return_indices=True)
>>> idx.tolist(), F.max_unpool2d(y, idx, 2).tolist()
([[[[1]]]], [[[[0.0, 5.0], [0.0, 0.0]]]])
"""

from __future__ import annotations

import math
import warnings

import numpy as _np  # integer index tables (no math on tensors)

from ..eager.dispatch import FUNCTIONS
from ..eager.factories import generator, zeros
from ..eager.tensor import Tensor
from ..ops import ShapeError
from .ctc import ctc_loss
from .functional_layers import avg_pool2d, conv2d, embedding, max_pool2d, pad

_stack = FUNCTIONS["stack"]

__all__ = [
    "conv3d", "max_pool3d", "avg_pool3d", "max_unpool1d", "max_unpool2d", "alpha_dropout",
    "embedding_bag", "bilinear", "affine_grid", "grid_sample", "ctc_loss",
]  # fmt: skip


def _tuple(name: str, what: str, value, n: int, minimum: int = 1) -> tuple:
    """``2`` -> ``(2, 2, 2)`` for ``n == 3``; a sequence of ``n`` ints stays; else an error."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,) * n
    try:
        out = tuple(int(v) for v in value)
        ok = len(out) == n and all(int(v) == v for v in value)
    except (TypeError, ValueError):
        ok = False
    if not ok or min(out) < minimum:
        raise ValueError(f"{name}: {what} must be an int or {n} ints >= {minimum}, got {value!r}")
    return out


def _tensor(name: str, what: str, x) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: argument '{what}' must be a Tensor, not {type(x).__name__}")
    return x


def _batched5(name: str, x: Tensor) -> tuple[Tensor, bool]:
    """``x`` as (N, C, D, H, W) and whether a batch axis was added to a (C, D, H, W) input."""
    if x.dim() == 4:
        return x.unsqueeze(0), True
    if x.dim() != 5:
        raise ShapeError(f"{name}: expects an input (N, C, D, H, W) or (C, D, H, W), got "
                         f"shape {tuple(x.shape)}")  # fmt: skip
    return x, False


def _depth_slices(x: Tensor, k: int, s: int, d: int, od: int):
    """For each kernel offset ``i`` along depth, the input planes it meets in every output
    position: ``x[:, :, i*d :: s]`` (``od`` of them), laid out as a batch of images
    (N*od, C, H, W) for a 2-D op."""
    N, C, _, H, W = x.shape
    for i in range(k):
        start = i * d
        part = x[:, :, start:start + s * (od - 1) + 1:s]
        yield part.permute(0, 2, 1, 3, 4).reshape(N * od, C, H, W)


def _window_count(size: int, k: int, s: int, d: int) -> int:
    return (size - d * (k - 1) - 1) // s + 1


# -- conv3d ---------------------------------------------------------------------------------------
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    r"""3-D convolution of ``input`` (N, C, D, H, W) with ``weight`` (O, C/groups, kD, kH, kW),
    plus ``bias`` (O,):

    $$y_{n,o,z} = b_o + \sum_{i < k_D} \mathrm{conv2d}(x_{n,:,z s_D + i d_D}, w_{o,:,i})$$

    one ``conv2d`` per depth offset $i$ of the kernel, over all output depths at once, the
    results added. ``padding`` is an int, a triple, ``"valid"`` or ``"same"`` (stride 1).

    >>> import tinygrad_edu as tg
    >>> conv3d(tg.ones(1, 1, 2, 2, 2), tg.ones(1, 1, 2, 2, 2)).tolist()
    [[[[[8.0]]]]]
    """
    x, w = _tensor("conv3d", "input", input), _tensor("conv3d", "weight", weight)
    x, single = _batched5("conv3d", x)
    if w.dim() != 5:
        raise ShapeError(f"conv3d: weight must be (O, C/groups, kD, kH, kW), got shape "
                         f"{tuple(w.shape)}")  # fmt: skip
    s = _tuple("conv3d", "stride", stride, 3)
    d = _tuple("conv3d", "dilation", dilation, 3)
    if not isinstance(groups, int) or groups < 1:
        raise ValueError(f"conv3d: groups must be a positive int, got {groups!r}")
    N, C = x.shape[:2]
    O, Cg, kd, kh, kw = w.shape
    if C != Cg * groups or O % groups:
        raise ShapeError(f"conv3d: input {tuple(x.shape)} has {C} channels but the weight "
                         f"{tuple(w.shape)} with groups={groups} expects {Cg * groups}, and "
                         f"{O} output channels must divide into {groups} groups")  # fmt: skip
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise ValueError(f"conv3d: padding must be an int, a triple, 'valid' or 'same', got "
                             f"{padding!r}")  # fmt: skip
        if padding == "same" and s != (1, 1, 1):
            raise RuntimeError("conv3d: padding='same' is not supported for strided "
                               "convolutions; give the padding as numbers")  # fmt: skip
        if padding == "same":  # PyTorch puts an odd extra plane at the end
            total = [di * (ki - 1) for di, ki in zip(d, (kd, kh, kw))]
            widths = []
            for t in reversed(total):
                widths += [t // 2, t - t // 2]
            x = pad(x, tuple(widths))
        p = (0, 0, 0)
    else:
        p = _tuple("conv3d", "padding", padding, 3, minimum=0)
        if p[0]:
            x = pad(x, (0, 0, 0, 0, p[0], p[0]))
    D = x.shape[2]
    if d[0] * (kd - 1) + 1 > D:
        raise ShapeError(f"conv3d: the kernel depth {kd} (dilation {d[0]}) is bigger than the "
                         f"padded input depth {D} (input {tuple(input.shape)})")  # fmt: skip
    od = _window_count(D, kd, s[0], d[0])
    total = None
    for i, plane in enumerate(_depth_slices(x, kd, s[0], d[0], od)):
        y = conv2d(plane, w[:, :, i], None, s[1:], p[1:], d[1:], groups)
        total = y if total is None else total + y
    oh, ow = total.shape[-2:]
    out = total.reshape(N, od, O, oh, ow).permute(0, 2, 1, 3, 4)
    if bias is not None:
        b = _tensor("conv3d", "bias", bias)
        if tuple(b.shape) != (O,):
            raise ShapeError(f"conv3d: the bias has shape {tuple(b.shape)}, but the weight "
                             f"{tuple(w.shape)} makes {O} output channels")  # fmt: skip
        out = out + b.reshape(1, O, 1, 1, 1)
    return out.squeeze(0) if single else out


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


# -- alpha_dropout --------------------------------------------------------------------------------
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


# -- embedding_bag --------------------------------------------------------------------------------
def _int_list(name, what, t) -> list:
    if isinstance(t, Tensor):
        if t.is_floating_point():
            raise TypeError(f"{name}: {what} must be an integer tensor, got {t.dtype}")
        return [int(v) for v in _np.asarray(t.tolist()).reshape(-1)]
    return [int(v) for v in _np.asarray(t).reshape(-1)]


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
        out = []
        for b in range(n_bags):
            sel = [j for j in range(starts[b], starts[b + 1]) if kept[j]]
            if sel:
                out.append(rows[Tensor(_np.asarray(sel), device=w.device)].amax(0))
            else:
                out.append(zeros(w.shape[1], dtype=w.dtype, device=w.device))
        return _stack(out) if out else zeros(0, w.shape[1], dtype=w.dtype, device=w.device)
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


# -- bilinear -------------------------------------------------------------------------------------
def bilinear(input1, input2, weight, bias=None) -> Tensor:
    r"""$y_k = x_1^\top W_k\, x_2 + b_k$ for ``weight`` (out, in1, in2): every output is a
    bilinear form of the two inputs (``input1`` (..., in1), ``input2`` (..., in2)). Computed
    as one product ``x1 @ W`` (all forms at once) and a sum against ``x2``.

    >>> import tinygrad_edu as tg
    >>> bilinear(tg.ones(1, 2), tg.ones(1, 3), tg.ones(4, 2, 3)).tolist()
    [[6.0, 6.0, 6.0, 6.0]]
    """
    x1, x2 = _tensor("bilinear", "input1", input1), _tensor("bilinear", "input2", input2)
    w = _tensor("bilinear", "weight", weight)
    if w.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional (out, in1, in2), got "
                           f"shape {tuple(w.shape)}")  # fmt: skip
    out_f, in1, in2 = w.shape
    if x1.dim() == 0 or x1.dim() != x2.dim() or tuple(x1.shape[:-1]) != tuple(x2.shape[:-1]):
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{tuple(x1.shape)} and {tuple(x2.shape)}")  # fmt: skip
    if x1.shape[-1] != in1 or x2.shape[-1] != in2:
        raise RuntimeError(f"bilinear(): input sizes {x1.shape[-1]} and {x2.shape[-1]} do not "
                           f"match the weight {tuple(w.shape)} (in1={in1}, in2={in2})")
    t = x1 @ w.permute(1, 0, 2).reshape(in1, out_f * in2)  # (..., out*in2)
    t = t.reshape(*x1.shape[:-1], out_f, in2)
    y = (t * x2.unsqueeze(-2)).sum(-1)
    if bias is not None:
        b = _tensor("bilinear", "bias", bias)
        if tuple(b.shape) != (out_f,):
            raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                               f"{tuple(b.shape)} but weight makes {out_f} outputs")
        y = y + b
    return y


# -- affine_grid and grid_sample ------------------------------------------------------------------
_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the old "
                  "behavior is desired. See the documentation of grid_sample for details.")


def _base_line(n: int, align_corners: bool):
    """The normalised coordinates of ``n`` pixel centres (``align_corners``: the corner
    pixels' centres at -1 and 1; else the image's edges at -1 and 1)."""
    if n <= 1:
        return _np.zeros(max(n, 0))
    line = _np.linspace(-1.0, 1.0, n)
    return line if align_corners else line * (n - 1) / n


def affine_grid(theta, size, align_corners=None) -> Tensor:
    r"""The sampling grid (N, H, W, 2) of the affine maps ``theta`` (N, 2, 3) for an output of
    ``size`` (N, C, H, W): each output pixel's normalised $(x, y)$ mapped by
    $\theta\,(x, y, 1)^\top$. Feed it to :func:`grid_sample`.

    >>> import tinygrad_edu as tg
    >>> eye = tg.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> affine_grid(eye, (1, 1, 1, 2), align_corners=True).tolist()
    [[[[-1.0, 0.0], [1.0, 0.0]]]]
    """
    t = _tensor("affine_grid", "theta", theta)
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if not t.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {t.dtype}")
    size = tuple(int(v) for v in size)
    if len(size) == 5:
        raise NotImplementedError("affine_grid: 3-D (volumetric) grids are not supported; "
                                  "size must be (N, C, H, W)")  # fmt: skip
    if len(size) != 4:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if t.dim() != 3 or tuple(t.shape[1:]) != (2, 3):
        raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                         f"{size}. Got {tuple(t.shape)}.")  # fmt: skip
    if t.shape[0] != size[0]:
        raise RuntimeError(f"affine_grid: theta holds {t.shape[0]} matrices but size asks for "
                           f"a batch of {size[0]} (size {size})")  # fmt: skip
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    N, _, H, W = size
    xs, ys = _base_line(W, align_corners), _base_line(H, align_corners)
    base = _np.stack([_np.broadcast_to(xs[None, :], (H, W)), _np.broadcast_to(ys[:, None], (H, W)),
                      _np.ones((H, W))], axis=-1).reshape(1, H * W, 3)  # fmt: skip
    base = Tensor(base.astype(str(t.dtype)), device=t.device)
    return (base @ t.transpose(1, 2)).reshape(N, H, W, 2)


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    r"""Sample ``input`` (N, C, H, W) at the points of ``grid`` (N, H_out, W_out, 2), given as
    normalised $(x, y)$ in $[-1, 1]$ ($x$ along the width): the output is (N, C, H_out,
    W_out). ``mode`` ``"bilinear"`` weighs the four neighbouring pixels (the gradient reaches
    the grid through the weights), ``"nearest"`` takes the closest one. ``padding_mode``
    ``"zeros"`` reads 0 outside the image, ``"border"`` the nearest edge pixel.

    >>> import tinygrad_edu as tg
    >>> img = tg.arange(4.0).reshape(1, 1, 2, 2)
    >>> grid_sample(img, tg.zeros(1, 1, 1, 2), align_corners=True).tolist()
    [[[[1.5]]]]
    """
    x, g = _tensor("grid_sample", "input", input), _tensor("grid_sample", "grid", grid)
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")  # fmt: skip
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")  # fmt: skip
    if mode == "bicubic" or padding_mode == "reflection":
        raise NotImplementedError("grid_sample: mode='bicubic' and padding_mode='reflection' "
                                  "are not supported; use 'bilinear'/'nearest' and "
                                  "'zeros'/'border'")  # fmt: skip
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if x.dim() == 5:
        raise NotImplementedError("grid_sample: 5-D (volumetric) input is not supported")
    if x.dim() != 4 or g.dim() != 4 or g.shape[-1] != 2 or g.shape[0] != x.shape[0]:
        raise RuntimeError(f"grid_sample: expects an input (N, C, H, W) and a grid (N, H_out, "
                           f"W_out, 2) with the same N, got {tuple(x.shape)} and "
                           f"{tuple(g.shape)}")  # fmt: skip
    N, C, H, W = x.shape
    _, Ho, Wo, _ = g.shape
    ix = _unnormalize(g[..., 0], W, align_corners)  # (N, Ho, Wo)
    iy = _unnormalize(g[..., 1], H, align_corners)
    if padding_mode == "border":
        ix, iy = ix.clamp(0, W - 1), iy.clamp(0, H - 1)
    flat = x.reshape(N, C, H * W)

    def read(cx: Tensor, cy: Tensor) -> Tensor:
        """The pixels at integer coordinates (as float tensors, no gradient), 0 outside."""
        inside = (cx >= 0) & (cx <= W - 1) & (cy >= 0) & (cy <= H - 1)
        at = (cy.clamp(0, H - 1) * W + cx.clamp(0, W - 1)).long().reshape(N, 1, Ho * Wo)
        vals = flat.gather(2, at.expand(N, C, Ho * Wo)).reshape(N, C, Ho, Wo)
        return vals * inside.unsqueeze(1).to(x.dtype)

    if mode == "nearest":
        rx, ry = ix.round(), iy.round()  # rounding has a zero derivative: so has the grid's,
        zero = (rx - rx.detach() + ry - ry.detach()).unsqueeze(1)  # which PyTorch returns
        return read(rx.detach(), ry.detach()) + zero
    x0, y0 = ix.detach().floor(), iy.detach().floor()
    wx1, wy1 = (ix - x0).unsqueeze(1), (iy - y0).unsqueeze(1)
    wx0, wy0 = 1 - wx1, 1 - wy1
    return (read(x0, y0) * wx0 * wy0 + read(x0 + 1, y0) * wx1 * wy0
            + read(x0, y0 + 1) * wx0 * wy1 + read(x0 + 1, y0 + 1) * wx1 * wy1)  # fmt: skip
