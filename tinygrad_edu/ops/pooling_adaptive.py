"""Adaptive pools (PyTorch's windows that cut an axis into a given number of cells) and the
1-D pools, the 2-D ones of :mod:`.pooling` on a height-1 image."""

from __future__ import annotations

from .base import REGISTRY, ShapeError
from .layer_surface import _layer, _ndim_check, _one, _reshape, _via, declare_layer
from .pooling import avg_pool2d_layer
from .surface import shape_of


def adaptive_windows(n: int, out: int) -> list[tuple[int, int]]:
    """PyTorch's adaptive windows of an axis of ``n`` cut into ``out``: cell ``i`` spans
    ``floor(i*n/out)`` to ``ceil((i+1)*n/out)`` (they overlap where ``out`` does not divide
    ``n``)."""
    return [((i * n) // out, -((-(i + 1) * n) // out)) for i in range(out)]


def adaptive_sizes(opname: str, shape, output_size, nd: int) -> tuple[int, ...]:
    """``output_size`` (an int, or a tuple with ``None`` keeping that axis) for the last
    ``nd`` axes of ``shape``, checked."""
    if len(shape) not in (nd + 1, nd + 2):
        raise ShapeError(f"{opname}: expects an input with {nd + 1} or {nd + 2} axes, got shape "
                         f"{tuple(shape)}")  # fmt: skip
    sizes = (output_size,) * nd if isinstance(output_size, int) else tuple(output_size)
    if len(sizes) != nd:
        raise ValueError(f"{opname}: output_size must be an int or {nd} ints, got {output_size!r}")
    out = tuple(shape[-nd + a] if o is None else int(o) for a, o in enumerate(sizes))
    if any(o < 1 for o in out):
        raise ValueError(f"{opname}: output_size must be positive, got {output_size!r}")
    return out


def adaptive_pool(engine, x, shape, out_sizes, reduce: str):
    """Adaptive pooling over the last ``len(out_sizes)`` axes with ``reduce`` (``"mean"`` or
    ``"max"``): one axis at a time (a rectangle's mean is the mean of its rows' means, its
    maximum the maximum of theirs), each window a slice then a reduction, the cells joined."""
    apply, nd = engine.apply, len(out_sizes)
    for a, out in enumerate(out_sizes):
        axis = len(shape) - nd + a
        n = shape[axis]
        if n == out:
            continue
        cells = []
        for lo, hi in adaptive_windows(n, out):
            index = (slice(None),) * axis + (slice(lo, hi),)
            cells.append(apply(REGISTRY[reduce], apply(REGISTRY["getitem"], x, index=index),
                               axis=axis, keepdims=True))  # fmt: skip
        x = cells[0] if out == 1 else apply(REGISTRY["cat"], *cells, dim=axis)
    return x


def adaptive_avg_pool2d_layer(engine):
    avg_pool2d = avg_pool2d_layer(engine)

    def adaptive_avg_pool2d(input, output_size):
        """Average-pool to ``output_size`` (an int, a pair, ``None`` keeping that axis):
        output cell ``i`` averages input rows ``floor(i*H/oh)`` to ``ceil((i+1)*H/oh)``, as
        PyTorch's. When each side divides it is ``avg_pool2d`` with kernel = stride =
        input/output (the usual ``(1, 1)`` a global mean); otherwise windows of slices.

        >>> import tinygrad_edu as tg
        >>> adaptive_avg_pool2d(tg.ones(1, 2, 4, 4), 1).shape
        (1, 2, 1, 1)
        >>> adaptive_avg_pool2d(tg.arange(5.0).reshape(1, 1, 5), (1, 3)).tolist()
        [[[0.5, 2.0, 3.5]]]
        """
        x = engine.value("adaptive_avg_pool2d", "input", input)
        shape = shape_of("adaptive_avg_pool2d", x)
        oh, ow = adaptive_sizes("adaptive_avg_pool2d", shape, output_size, 2)
        H, W = shape[-2], shape[-1]
        if (oh, ow) == (1, 1):
            return engine.apply(REGISTRY["mean"], x, axis=(-2, -1), keepdims=True)
        if H % oh or W % ow:
            return adaptive_pool(engine, x, shape, (oh, ow), "mean")
        return avg_pool2d(x, (H // oh, W // ow))

    return adaptive_avg_pool2d


declare_layer("adaptive_avg_pool2d", adaptive_avg_pool2d_layer)


# -- 1-D pools: the 2-D ones of a height-1 image ----------------------------------------------
def _as_image(engine, name, input):
    """``input`` (N, C, L) or (C, L) as (N, C, 1, L), and the shape to return to."""
    x = engine.value(name, "input", input)
    xs = shape_of(name, x)
    single = _ndim_check(name, xs, 2, "(N, C, L)")
    x4 = _reshape(engine, x, (1, xs[0], 1, xs[1]) if single else (xs[0], xs[1], 1, xs[2]))
    return x4, single


def _back(engine, name, y, single):
    ys = shape_of(name, y)
    return _reshape(engine, y, (ys[1], ys[3]) if single else (ys[0], ys[1], ys[3]))


def max_pool1d_layer(engine):
    def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                   return_indices=False):  # fmt: skip
        """The maximum of each window of ``kernel_size`` along the last axis: ``max_pool2d``
        of a height-1 image.

        >>> import tinygrad_edu as tg
        >>> max_pool1d(tg.tensor([[[1.0, 5.0, 3.0, 2.0]]]), 2).tolist()
        [[[5.0, 3.0]]]
        """
        x, single = _as_image(engine, "max_pool1d", input)
        k = _one("max_pool1d", "kernel_size", kernel_size)
        s = k if stride is None or stride == () else _one("max_pool1d", "stride", stride)
        y = _via("max_pool1d", "max_pool2d of a height-1 image", max_pool2d, x, (1, k), (1, s),
                 (0, _one("max_pool1d", "padding", padding, 0)),
                 (1, _one("max_pool1d", "dilation", dilation)), ceil_mode,
                 return_indices)  # fmt: skip
        if return_indices:  # (values, flat indices): for one row h * W + w is w
            return tuple(_back(engine, "max_pool1d", t, single) for t in y)
        return _back(engine, "max_pool1d", y, single)

    max_pool2d = _layer(engine, "max_pool2d")
    return max_pool1d


def avg_pool1d_layer(engine):
    def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
                   count_include_pad=True):  # fmt: skip
        """The mean of each window of ``kernel_size`` along the last axis: ``avg_pool2d`` of a
        height-1 image.

        >>> import tinygrad_edu as tg
        >>> avg_pool1d(tg.tensor([[[1.0, 5.0, 3.0, 2.0]]]), 2).tolist()
        [[[3.0, 2.5]]]
        """
        x, single = _as_image(engine, "avg_pool1d", input)
        k = _one("avg_pool1d", "kernel_size", kernel_size)
        s = k if stride is None or stride == () else _one("avg_pool1d", "stride", stride)
        y = _via("avg_pool1d", "avg_pool2d of a height-1 image", avg_pool2d, x, (1, k), (1, s),
                 (0, _one("avg_pool1d", "padding", padding, 0)), ceil_mode,
                 count_include_pad)  # fmt: skip
        return _back(engine, "avg_pool1d", y, single)

    avg_pool2d = _layer(engine, "avg_pool2d")
    return avg_pool1d


# -- adaptive pools of 1-D and of the maximum -------------------------------------------------
def _adaptive(engine, name, nd, reduce, input, output_size):
    x = engine.value(name, "input", input)
    shape = shape_of(name, x)
    return adaptive_pool(engine, x, shape, adaptive_sizes(name, shape, output_size, nd), reduce)


def _no_indices(name, return_indices):
    if return_indices:
        raise NotImplementedError(f"{name}: return_indices=True is not supported (there is no "
                                  "max_unpool); the gradient already goes to each window's "
                                  "maximum")  # fmt: skip


def adaptive_avg_pool1d_layer(engine):
    def adaptive_avg_pool1d(input, output_size):
        """Adaptive average pooling of the last axis to ``output_size``: cell ``i`` of an axis
        of ``n`` averages ``floor(i*n/out)`` to ``ceil((i+1)*n/out)``, as PyTorch's.

        >>> import tinygrad_edu as tg
        >>> adaptive_avg_pool1d(tg.arange(5.0).reshape(1, 1, 5), 3).tolist()
        [[[0.5, 2.0, 3.5]]]
        """
        return _adaptive(engine, "adaptive_avg_pool1d", 1, "mean", input, output_size)

    return adaptive_avg_pool1d


def adaptive_max_pool1d_layer(engine):
    def adaptive_max_pool1d(input, output_size, return_indices=False):
        """Adaptive max pooling of the last axis (windows as ``adaptive_avg_pool1d``'s).

        >>> import tinygrad_edu as tg
        >>> adaptive_max_pool1d(tg.arange(5.0).reshape(1, 1, 5), 3).tolist()
        [[[1.0, 3.0, 4.0]]]
        """
        _no_indices("adaptive_max_pool1d", return_indices)
        return _adaptive(engine, "adaptive_max_pool1d", 1, "max", input, output_size)

    return adaptive_max_pool1d


def adaptive_max_pool2d_layer(engine):
    def adaptive_max_pool2d(input, output_size, return_indices=False):
        """Adaptive max pooling of the last two axes (windows as ``adaptive_avg_pool2d``'s);
        the maximum of a window is the maximum of its rows' maxima.

        >>> import tinygrad_edu as tg
        >>> adaptive_max_pool2d(tg.arange(9.0).reshape(1, 3, 3), 2).tolist()
        [[[4.0, 5.0], [7.0, 8.0]]]
        """
        _no_indices("adaptive_max_pool2d", return_indices)
        return _adaptive(engine, "adaptive_max_pool2d", 2, "max", input, output_size)

    return adaptive_max_pool2d


declare_layer("max_pool1d", max_pool1d_layer)
declare_layer("avg_pool1d", avg_pool1d_layer)
declare_layer("adaptive_avg_pool1d", adaptive_avg_pool1d_layer)
declare_layer("adaptive_max_pool1d", adaptive_max_pool1d_layer)
declare_layer("adaptive_max_pool2d", adaptive_max_pool2d_layer)
