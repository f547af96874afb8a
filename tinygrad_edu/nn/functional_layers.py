r"""The layer functions of a CNN (and of sequence models), with PyTorch's names and arguments:
``conv2d``, ``max_pool2d``, ``avg_pool2d``, ``adaptive_avg_pool2d``, ``pad``, ``batch_norm``,
``layer_norm``, ``embedding``. Re-exported by :mod:`tinygrad_edu.nn.functional`.

Each is a thin layer over one op of the op library (``ops/conv.py``, ``ops/pool.py``,
``ops/pad.py``, ``ops/norm.py``, ``ops/embedding.py``): it checks and normalises the
arguments, then applies the op, so the forward, the shape rule and the derivative are the
library's, in both engines.

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
from ..eager.grad_mode import no_grad
from ..eager.tensor import Tensor, apply_op
from ..ops import REGISTRY, ShapeError
from ..ops.conv import pair

__all__ = [
    "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "pad", "batch_norm",
    "layer_norm", "embedding",
]  # fmt: skip


def _tensor(name: str, what: str, x) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return Tensor(x)
    raise TypeError(f"{name}: {what} must be a tensor, got {type(x).__name__}")


def _unbatched(name, x, batched_ndim=4):
    """PyTorch accepts one image (C, H, W) as well as a batch (N, C, H, W)."""
    if x.ndim == batched_ndim - 1:
        return x.reshape(1, *x.shape), True
    if x.ndim != batched_ndim:
        raise ShapeError(
            f"{name}: expects an input (N, C, H, W) or (C, H, W), got shape {x.shape}"
        )
    return x, False


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    r"""2-D convolution of ``input`` (N, C, H, W) with ``weight`` (O, C/groups, kH, kW), plus
    ``bias`` (O,):

    $$y_{n,o} = b_o + \sum_{c} w_{o,c} \star x_{n,c}$$

    ``padding`` is an int, a pair, ``"valid"`` (none) or ``"same"`` (output as big as the
    input; stride 1 only). Computed as im2col and one matrix product (``ops/conv.py``).

    >>> import tinygrad_edu as tg
    >>> x = tg.ones(1, 1, 3, 3)
    >>> conv2d(x, tg.ones(1, 1, 2, 2)).tolist()
    [[[[4.0, 4.0], [4.0, 4.0]]]]
    """
    x = _tensor("conv2d", "input", input)
    w = _tensor("conv2d", "weight", weight)
    x, single = _unbatched("conv2d", x)
    s, d = pair("conv2d", "stride", stride), pair("conv2d", "dilation", dilation)
    if isinstance(padding, str):
        x, padding = _string_padding(x, w, padding, s, d)
    p = pair("conv2d", "padding", padding, minimum=0)
    args = (x, w) if bias is None else (x, w, _tensor("conv2d", "bias", bias))
    y = apply_op(REGISTRY["conv2d"], *args, stride=s, padding=p, dilation=d, groups=int(groups))
    return y.reshape(*y.shape[1:]) if single else y


def _string_padding(x, w, mode, s, d):
    if mode == "valid":
        return x, 0
    if mode != "same":
        raise ValueError(f"conv2d: padding must be an int, a pair, 'valid' or 'same', got {mode!r}")
    if s != (1, 1):
        raise ValueError(
            f"conv2d: padding='same' is not supported for strided convolutions (stride {s}); "
            "give the padding as numbers"
        )
    totals = [d[a] * (w.shape[2 + a] - 1) for a in (0, 1)]
    if all(t % 2 == 0 for t in totals):
        return x, (totals[0] // 2, totals[1] // 2)
    # an even kernel: PyTorch puts the extra row/column at the bottom/right
    (th, tw) = totals
    widths = (tw // 2, tw - tw // 2, th // 2, th - th // 2)
    return pad(x, widths), 0


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False) -> Tensor:  # fmt: skip
    """The maximum of each ``kernel_size`` window (stride defaults to ``kernel_size``); the
    gradient goes to each window's first maximum, as in PyTorch.

    >>> import tinygrad_edu as tg
    >>> max_pool2d(tg.tensor([[[[1.0, 5.0], [3.0, 2.0]]]]), 2).tolist()
    [[[[5.0]]]]
    """
    if return_indices:
        raise NotImplementedError(
            "max_pool2d: return_indices=True is not supported (there is no max_unpool2d); "
            "the gradient already goes to each window's maximum"
        )
    x = _tensor("max_pool2d", "input", input)
    k, s = _pool_args("max_pool2d", kernel_size, stride)
    return apply_op(REGISTRY["max_pool2d"], x, kernel_size=k, stride=s,
                    padding=pair("max_pool2d", "padding", padding, minimum=0),
                    dilation=pair("max_pool2d", "dilation", dilation),
                    ceil_mode=bool(ceil_mode))  # fmt: skip


def _pool_args(name, kernel_size, stride):
    k = pair(name, "kernel_size", kernel_size)
    s = k if stride is None or stride == () or stride == [] else pair(name, "stride", stride)
    return k, s


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None) -> Tensor:  # fmt: skip
    """The mean of each ``kernel_size`` window (stride defaults to ``kernel_size``). With
    ``count_include_pad`` (the default) padded zeros count in the mean.

    >>> import tinygrad_edu as tg
    >>> avg_pool2d(tg.tensor([[[[1.0, 5.0], [3.0, 3.0]]]]), 2).tolist()
    [[[[3.0]]]]
    """
    x = _tensor("avg_pool2d", "input", input)
    k, s = _pool_args("avg_pool2d", kernel_size, stride)
    if divisor_override is not None and (int(divisor_override) != divisor_override
                                         or divisor_override <= 0):  # fmt: skip
        raise ValueError(f"avg_pool2d: divisor_override must be a positive int, got "
                         f"{divisor_override!r}")  # fmt: skip
    return apply_op(REGISTRY["avg_pool2d"], x, kernel_size=k, stride=s,
                    padding=pair("avg_pool2d", "padding", padding, minimum=0),
                    ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
                    divisor_override=divisor_override)  # fmt: skip


def adaptive_avg_pool2d(input, output_size) -> Tensor:
    """Average-pool to ``output_size`` (an int, a pair, ``None`` keeping that axis). Supported
    when each input side is a multiple of its output side (then it is ``avg_pool2d`` with
    kernel = stride = input/output), which covers the usual ``(1, 1)`` global average pool.
    """
    x = _tensor("adaptive_avg_pool2d", "input", input)
    H, W = x.shape[-2], x.shape[-1]
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    oh, ow = (H if output_size[0] is None else output_size[0],
              W if output_size[1] is None else output_size[1])  # fmt: skip
    if oh < 1 or ow < 1 or H % oh or W % ow:
        raise NotImplementedError(
            f"adaptive_avg_pool2d: output size {(oh, ow)} does not divide the input size "
            f"{(H, W)} (input {x.shape}); only whole windows are supported: pick an output "
            "size that divides the input, or use avg_pool2d"
        )
    if (oh, ow) == (1, 1):
        return x.mean(axis=(-2, -1), keepdims=True)
    return avg_pool2d(x, (H // oh, W // ow))


def pad(input, pad, mode: str = "constant", value=None) -> Tensor:
    """Pad the last axes; ``pad`` lists (before, after) amounts from the last axis backwards
    (``(left, right, top, bottom)`` for an image). ``mode``: ``"constant"`` (with ``value``,
    default 0; negative amounts crop), ``"reflect"``, ``"replicate"`` or ``"circular"``.

    >>> import tinygrad_edu as tg
    >>> pad(tg.tensor([[1.0, 2.0, 3.0]]), (2, 1), mode="reflect").tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]
    """
    x = _tensor("pad", "input", input)
    widths = _pad_amounts(pad)
    if mode == "constant":
        return apply_op(REGISTRY["pad"], x, pad=widths, value=0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise ValueError(
            f"pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', got {mode!r}"
        )
    if value not in (None, 0):
        raise ValueError(f"pad: value is only used with mode='constant' (mode={mode!r})")
    if len(widths) % 2 or len(widths) // 2 > x.ndim - 1:
        raise ValueError(
            f"pad: mode {mode!r} pads at most the last {x.ndim - 1} axes of an input of shape "
            f"{x.shape} with (before, after) pairs, got pad {widths}"
        )
    xp = backend.namespace_of(x.data)
    for k in range(len(widths) // 2):
        axis = x.ndim - 1 - k
        before, after = widths[2 * k], widths[2 * k + 1]
        if before == after == 0:
            continue
        n = x.shape[axis]
        idx = _pad_index(mode, n, before, after, x.shape)
        index = (Ellipsis, xp.asarray(idx)) + (slice(None),) * k
        x = x[index]
    return x


def _pad_amounts(pad) -> tuple[int, ...]:
    try:
        if all(int(p) == p and not isinstance(p, bool) for p in pad):
            return tuple(int(p) for p in pad)
    except (TypeError, ValueError):
        pass
    raise ValueError(f"pad: pad must be a tuple of ints (before, after for each padded axis, "
                     f"last axis first), got {pad!r}")  # fmt: skip


def _pad_index(mode, n, before, after, shape):
    if min(before, after) < 0:
        raise ValueError(f"pad: mode {mode!r} needs non-negative pad amounts, got {before, after}")
    if mode == "reflect" and max(before, after) >= n:
        raise ValueError(
            f"pad: reflect padding of {max(before, after)} needs an axis longer than that "
            f"(size {n}, input {shape})"
        )
    if mode == "circular" and max(before, after) > n:
        raise ValueError(f"pad: circular padding of {max(before, after)} exceeds the axis size {n}")
    out = []
    for i in range(-before, n + after):
        if mode == "replicate":
            out.append(min(max(i, 0), n - 1))
        elif mode == "circular":
            out.append(i % n)
        else:  # reflect: mirror without repeating the edge
            j = i
            while j < 0 or j >= n:
                j = -j if j < 0 else 2 * (n - 1) - j
            out.append(j)
    return out


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5) -> Tensor:  # fmt: skip
    r"""Normalise each channel (axis 1) of ``input`` (N, C), (N, C, L) or (N, C, H, W).

    In training (``training=True``) the batch's mean and (biased) variance are used, and the
    running statistics, when given, are updated in place as PyTorch does:
    $\hat\mu \leftarrow (1-m)\hat\mu + m\,\mu_B$ and
    $\hat\sigma^2 \leftarrow (1-m)\hat\sigma^2 + m\,\frac{n}{n-1}\sigma_B^2$ (the unbiased
    variance; $m$ = ``momentum``). In evaluation the running statistics are used.

    >>> import tinygrad_edu as tg
    >>> x = tg.tensor([[1.0], [3.0]])
    >>> rm, rv = tg.zeros(1), tg.ones(1)
    >>> batch_norm(x, rm, rv, training=True, eps=0.0).tolist()
    [[-1.0], [1.0]]
    >>> rm.numpy().round(4), rv.numpy().round(4)  # mean 2, unbiased variance 2, momentum 0.1
    (array([0.2], dtype=float32), array([1.1], dtype=float32))
    """
    x = _tensor("batch_norm", "input", input)
    if x.ndim < 2:
        raise ShapeError(f"batch_norm: expects an input (N, C, ...), got shape {x.shape}")
    C = x.shape[1]
    stats = [s for s in (running_mean, running_var) if s is not None]
    for s in stats:
        if not isinstance(s, Tensor) or s.shape != (C,):
            raise ShapeError(
                f"batch_norm: running statistics must be tensors of shape ({C},) for an input "
                f"{x.shape}; got {getattr(s, 'shape', type(s).__name__)}"
            )
    if len(stats) == 1:
        raise ValueError("batch_norm: give both running_mean and running_var, or neither")
    if not training and not stats:
        raise ValueError(
            "batch_norm: running_mean and running_var must be given in evaluation mode "
            "(training=False); pass training=True to use the batch's statistics"
        )
    if weight is None and bias is not None:
        weight = Tensor(backend.namespace_of(bias.data).ones_like(bias.data))
    if bias is None and weight is not None:
        bias = Tensor(backend.namespace_of(weight.data).zeros_like(weight.data))
    affine = weight is not None
    args = [x] + ([weight, bias] if affine else [])
    if training:
        if stats:
            _update_running_stats(x, running_mean, running_var, momentum)
    else:
        args += [running_mean, running_var]
    return apply_op(REGISTRY["batch_norm"], *args, training=bool(training), affine=affine,
                    eps=float(eps), ndim=x.ndim)  # fmt: skip


def _update_running_stats(x, running_mean, running_var, momentum) -> None:
    """PyTorch's update: an exponential moving average of the batch mean and of the
    *unbiased* batch variance (``n / (n - 1)`` times the biased one used to normalise)."""
    xp = backend.namespace_of(x.data)
    axes = (0,) + tuple(range(2, x.ndim))
    n = x.numel() // x.shape[1]
    with no_grad():
        mean = xp.mean(x.data, axis=axes)
        var = xp.var(x.data, axis=axes) * (n / max(n - 1, 1))
        m = float(momentum)
        for stat, batch in ((running_mean, mean), (running_var, var)):
            stat.data[...] = (1 - m) * stat.data + m * xp.astype(batch, stat.dtype)
            stat._version[0] += 1


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5) -> Tensor:
    r"""Normalise over the last axes (``normalized_shape``), then scale by ``weight`` and shift
    by ``bias`` (both of ``normalized_shape``):
    $y = \frac{x - \mu}{\sqrt{\sigma^2+\epsilon}}\gamma + \beta$ per example.

    >>> import tinygrad_edu as tg
    >>> layer_norm(tg.tensor([[1.0, 3.0]]), (2,), eps=0.0).tolist()
    [[-1.0, 1.0]]
    """
    x = _tensor("layer_norm", "input", input)
    norm = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(norm)
    if k == 0 or k > x.ndim or x.shape[x.ndim - k :] != norm:
        raise ShapeError(
            f"layer_norm: normalized_shape {norm} must equal the last axes of the input, whose "
            f"shape is {x.shape}"
        )
    if weight is None and bias is not None:
        weight = Tensor(backend.namespace_of(bias.data).ones_like(bias.data))
    args = [x] + [t for t in (weight, bias) if t is not None]
    return apply_op(REGISTRY["layer_norm"], *args, normalized_ndim=k, eps=float(eps))


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False) -> Tensor:  # fmt: skip
    """Rows of ``weight`` (num_embeddings, embedding_dim) picked by the integer ``input``;
    the result has shape ``input.shape + (embedding_dim,)``. ``padding_idx`` names a row that
    gets no gradient; ``max_norm`` renormalises (in place, as PyTorch) the rows looked up
    whose ``norm_type``-norm exceeds it.

    >>> import tinygrad_edu as tg
    >>> embedding(tg.tensor([2, 0], dtype="int64"), tg.tensor([[0.0], [1.0], [2.0]])).tolist()
    [[2.0], [0.0]]
    """
    if scale_grad_by_freq or sparse:
        raise NotImplementedError(
            "embedding: scale_grad_by_freq and sparse gradients are not supported; the gradient "
            "is a dense table"
        )
    w = _tensor("embedding", "weight", weight)
    idx = input if isinstance(input, Tensor) else Tensor(
        input if hasattr(input, "shape") else _np.asarray(input), device=w.device
    )
    if w.ndim != 2:
        raise ShapeError(f"embedding: the weight must be 2-D (num, dim), got shape {w.shape}")
    if padding_idx is not None:
        V = w.shape[0]
        if not -V <= padding_idx < V:
            raise ValueError(f"embedding: padding_idx {padding_idx} is out of range for {V} rows")
        padding_idx = int(padding_idx) % V
    if max_norm is not None:
        _renorm_rows(idx, w, float(max_norm), float(norm_type))
    return apply_op(REGISTRY["embedding"], idx, w, padding_idx=padding_idx)


def _renorm_rows(idx, w, max_norm, norm_type) -> None:
    xp = backend.namespace_of(w.data)
    unique = getattr(xp, "unique_values", None) or xp.unique  # numpy 2, the Array API; CuPy
    rows = unique(xp.reshape(idx.data, (-1,)))
    with no_grad():
        sel = w.data[rows]
        norms = xp.sum(xp.abs(sel) ** norm_type, axis=1) ** (1.0 / norm_type)
        scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        w.data[rows] = sel * xp.astype(scale[:, None], w.dtype)
        w._version[0] += 1
