r"""More layer functions, each composed of existing ops (so their gradients are those ops'):
``conv1d``, ``conv_transpose2d``/``conv_transpose1d``, ``unfold``/``fold`` (im2col and its
adjoint), the adaptive pools of 1-D and of the maximum, ``group_norm``, ``instance_norm``,
``rms_norm``, ``dropout1d``/``dropout2d`` and ``interpolate``. Declared once for both engines
(see :mod:`tinygrad_edu.ops.layer_surface`).

* ``conv1d`` is ``conv2d`` of a height-1 image; ``conv_transpose2d`` is ``conv2d``'s adjoint,
  the op ``conv2d_input_grad`` (PyTorch's weight layout ``(C_in, C_out/groups, kH, kW)`` is
  exactly the ``(O, C/groups, kH, kW)`` of the convolution it is the adjoint of);
* ``unfold`` is a grouped ``conv2d`` with a one-hot weight (each output channel copies one
  kernel position of one input channel), and ``fold`` its adjoint, ``conv_transpose2d`` with
  the same weight;
* ``group_norm`` and ``instance_norm`` are ``layer_norm`` of the input reshaped to
  ``(N, groups, -1)`` (``(N, C, -1)``), then the per-channel affine;
* ``interpolate`` gathers rows (nearest) or blends two gathered rows per axis with constant
  weights (linear, bilinear), axis by axis.

>>> import tinygrad_edu as tg
>>> import tinygrad_edu.nn.functional as F
>>> F.interpolate(tg.tensor([[[1.0, 2.0]]]), scale_factor=2).tolist()
[[[1.0, 1.0, 2.0, 2.0]]]
"""

from __future__ import annotations

import math

import numpy as _np  # index and weight tables (constants of the graph), no math on values

from .base import REGISTRY, ShapeError
from .conv import pair
from .layer_surface import declare_layer, known_shape, side_effect_error
from .pool import adaptive_pool, adaptive_sizes
from .surface import shape_of

__all__ = ["adaptive_sizes"]


def _reshape(engine, x, shape):
    return engine.apply(REGISTRY["reshape"], x, shape=tuple(shape))


def _const(engine, x, values):
    """``values`` as a constant of ``x``'s dtype and device (no gradient)."""
    dtype = getattr(x, "dtype", None)
    arr = _np.asarray(values, dtype=str(dtype) if dtype is not None else "float32")
    return engine.indices(arr, x)


def _via(opname, how, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with a shape error renamed: it names ``opname`` and how it is
    computed (``conv1d`` as ``conv2d`` of a height-1 image: the shapes are the 4-D ones)."""
    try:
        return fn(*args, **kwargs)
    except ShapeError as e:
        raise ShapeError(f"{opname} (computed as {how}): {e}") from e


def _ndim_check(opname, shape, nd, what):
    """True for one example (``nd`` axes), False for a batch (``nd + 1``), else an error."""
    if len(shape) not in (nd, nd + 1):
        raise ShapeError(f"{opname}: expects an input {what} (with or without the batch axis), "
                         f"got shape {tuple(shape)}")  # fmt: skip
    return len(shape) == nd


def _one(opname, what, value, minimum=1):
    """An int, or a 1-tuple of one, at least ``minimum``."""
    if isinstance(value, (tuple, list)) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{opname}: {what} must be an int >= {minimum} (or a 1-tuple), got "
                         f"{value!r}")  # fmt: skip
    return value


# -- convolutions --------------------------------------------------------------------------------
def conv1d_layer(engine):
    def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        """1-D convolution of ``input`` (N, C, L) with ``weight`` (O, C/groups, K): ``conv2d``
        of a height-1 image. ``padding`` is an int, ``"valid"`` or ``"same"``.

        >>> import tinygrad_edu as tg
        >>> conv1d(tg.tensor([[[1.0, 2.0, 3.0]]]), tg.ones(1, 1, 2)).tolist()
        [[[3.0, 5.0]]]
        """
        x = engine.value("conv1d", "input", input)
        w = engine.value("conv1d", "weight", weight)
        xs = shape_of("conv1d", x)
        single = _ndim_check("conv1d", xs, 2, "(N, C, L)")
        wshape = known_shape(w)
        if wshape is not None and len(wshape) != 3:
            raise ShapeError(f"conv1d: weight must be (out_channels, in_channels/groups, "
                             f"kernel_size), got shape {wshape}")  # fmt: skip
        x4 = _reshape(engine, x, (1, xs[0], 1, xs[1]) if single else (xs[0], xs[1], 1, xs[2]))
        w4 = _reshape(engine, w, (wshape[0], wshape[1], 1, wshape[2]))
        p = padding if isinstance(padding, str) else (0, _one("conv1d", "padding", padding, 0))
        y = _via("conv1d", "conv2d of a height-1 image", conv2d, x4, w4, bias,
                 stride=(1, _one("conv1d", "stride", stride)), padding=p,
                 dilation=(1, _one("conv1d", "dilation", dilation)), groups=groups)  # fmt: skip
        ys = shape_of("conv1d", y)
        return _reshape(engine, y, (ys[1], ys[3]) if single else (ys[0], ys[1], ys[3]))

    conv2d = _layer(engine, "conv2d")
    return conv1d


def _layer(engine, name):
    from .layer_surface import LAYERS  # noqa: PLC0415

    return LAYERS[name](engine)


def _transposed(engine, opname, x, w, bias, stride, padding, output_padding, groups, dilation):
    """``conv_transpose2d`` of a batch ``x`` (N, C_in, H, W), all parameters pairs."""
    xs, ws = shape_of(opname, x), known_shape(w)
    if ws is None or len(ws) != 4:
        raise ShapeError(f"{opname}: weight must be (in_channels, out_channels/groups, kH, kW), "
                         f"got shape {ws}")  # fmt: skip
    if ws[0] != xs[1]:
        raise ShapeError(f"{opname}: the input has {xs[1]} channels (shape {tuple(xs)}) but the "
                         f"weight {tuple(ws)} expects {ws[0]} (weight.shape[0])")  # fmt: skip
    if ws[0] % groups:
        raise ValueError(f"{opname}: in_channels {ws[0]} is not divisible by groups={groups}")
    for a in (0, 1):
        if not 0 <= output_padding[a] < max(stride[a], dilation[a]):
            raise ValueError(
                f"{opname}: output_padding {output_padding} must be smaller than the stride "
                f"{stride} or the dilation {dilation}"
            )
    out = tuple((xs[2 + a] - 1) * stride[a] - 2 * padding[a] + dilation[a] * (ws[2 + a] - 1)
                + output_padding[a] + 1 for a in (0, 1))  # fmt: skip
    if min(out) < 1:
        raise ShapeError(f"{opname}: the output size {out} is too small (input {tuple(xs)}, "
                         f"weight {tuple(ws)}, stride {stride}, padding {padding})")  # fmt: skip
    y = engine.apply(REGISTRY["conv2d_input_grad"], x, w, shape=(xs[0], ws[1] * groups, *out),
                     stride=stride, padding=padding, dilation=dilation, groups=groups)  # fmt: skip
    if bias is not None:
        b = engine.value(opname, "bias", bias)
        y = engine.apply(REGISTRY["add"], y, _reshape(engine, b, (1, -1, 1, 1)))
    return y


def conv_transpose2d_layer(engine):
    def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                         groups=1, dilation=1):  # fmt: skip
        r"""The transposed convolution ("deconvolution") of ``input`` (N, C_in, H, W) with
        ``weight`` (C_in, C_out/groups, kH, kW): the adjoint of ``conv2d`` (what carries its
        output gradient back to its input), output side
        $(H-1)s - 2p + d(k-1) + \text{output\_padding} + 1$.

        >>> import tinygrad_edu as tg
        >>> conv_transpose2d(tg.ones(1, 1, 2, 2), tg.ones(1, 1, 2, 2)).tolist()
        [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]
        """
        name = "conv_transpose2d"
        x, w = engine.value(name, "input", input), engine.value(name, "weight", weight)
        xs = shape_of(name, x)
        single = _ndim_check(name, xs, 3, "(N, C_in, H, W)")
        if single:
            x = _reshape(engine, x, (1, *xs))
        y = _transposed(engine, name, x, w, bias, pair(name, "stride", stride),
                        pair(name, "padding", padding, minimum=0),
                        pair(name, "output_padding", output_padding, minimum=0), int(groups),
                        pair(name, "dilation", dilation))  # fmt: skip
        return _reshape(engine, y, shape_of(name, y)[1:]) if single else y

    return conv_transpose2d


def conv_transpose1d_layer(engine):
    def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                         groups=1, dilation=1):  # fmt: skip
        """The transposed 1-D convolution: ``conv_transpose2d`` of a height-1 image.

        >>> import tinygrad_edu as tg
        >>> conv_transpose1d(tg.ones(1, 1, 2), tg.ones(1, 1, 2)).tolist()
        [[[1.0, 2.0, 1.0]]]
        """
        name = "conv_transpose1d"
        x, w = engine.value(name, "input", input), engine.value(name, "weight", weight)
        xs, ws = shape_of(name, x), known_shape(w)
        single = _ndim_check(name, xs, 2, "(N, C_in, L)")
        if ws is None or len(ws) != 3:
            raise ShapeError(f"{name}: weight must be (in_channels, out_channels/groups, "
                             f"kernel_size), got shape {ws}")  # fmt: skip
        x4 = _reshape(engine, x, (1, xs[0], 1, xs[1]) if single else (xs[0], xs[1], 1, xs[2]))
        y = _transposed(engine, name, x4, _reshape(engine, w, (ws[0], ws[1], 1, ws[2])), bias,
                        (1, _one(name, "stride", stride)), (0, _one(name, "padding", padding, 0)),
                        (0, _one(name, "output_padding", output_padding, 0)), int(groups),
                        (1, _one(name, "dilation", dilation)))  # fmt: skip
        ys = shape_of(name, y)
        return _reshape(engine, y, (ys[1], ys[3]) if single else (ys[0], ys[1], ys[3]))

    return conv_transpose1d


def _one_hot_kernel(engine, x, channels, k):
    """The weight ``(C*kH*kW, 1, kH, kW)`` of ``unfold``: channel ``c*kH*kW + q`` picks
    kernel position ``q`` of input channel ``c``."""
    K = k[0] * k[1]
    eye = _np.eye(K).reshape(K, 1, k[0], k[1])
    return _const(engine, x, _np.tile(eye, (channels, 1, 1, 1)))


def unfold_layer(engine):
    def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
        """im2col: the ``kernel_size`` windows of ``input`` (N, C, H, W) as columns,
        ``(N, C*kH*kW, L)`` with ``L`` windows (``nn.Unfold``); a grouped ``conv2d`` with a
        one-hot weight, so its gradient is ``fold``.

        >>> import tinygrad_edu as tg
        >>> unfold(tg.arange(4.0).reshape(1, 1, 2, 2), 1).tolist()
        [[[0.0, 1.0, 2.0, 3.0]]]
        """
        x = engine.value("unfold", "input", input)
        xs = shape_of("unfold", x)
        single = _ndim_check("unfold", xs, 3, "(N, C, H, W)")
        if single:
            x, xs = _reshape(engine, x, (1, *xs)), (1, *xs)
        k = pair("unfold", "kernel_size", kernel_size)
        y = _via("unfold", "a grouped conv2d with a one-hot weight", conv2d, x,
                 _one_hot_kernel(engine, x, xs[1], k), stride=pair("unfold", "stride", stride),
                 padding=pair("unfold", "padding", padding, minimum=0),
                 dilation=pair("unfold", "dilation", dilation), groups=xs[1])  # fmt: skip
        ys = shape_of("unfold", y)
        return _reshape(engine, y, (ys[1], -1) if single else (ys[0], ys[1], -1))

    conv2d = _layer(engine, "conv2d")
    return unfold


def fold_layer(engine):
    def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
        """col2im, ``unfold``'s adjoint: columns ``(N, C*kH*kW, L)`` summed back into an
        image ``(N, C, *output_size)`` (overlapping windows add up; ``nn.Fold``).

        >>> import tinygrad_edu as tg
        >>> fold(tg.ones(1, 4, 4), 3, 2).tolist()
        [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]
        """
        x = engine.value("fold", "input", input)
        xs = shape_of("fold", x)
        single = _ndim_check("fold", xs, 2, "(N, C*kH*kW, L)")
        if single:
            x, xs = _reshape(engine, x, (1, *xs)), (1, *xs)
        k, out = pair("fold", "kernel_size", kernel_size), pair("fold", "output_size", output_size)
        s, p = pair("fold", "stride", stride), pair("fold", "padding", padding, minimum=0)
        d = pair("fold", "dilation", dilation)
        K = k[0] * k[1]
        blocks = [(out[a] + 2 * p[a] - d[a] * (k[a] - 1) - 1) // s[a] + 1 for a in (0, 1)]
        if xs[1] % K or min(blocks) < 1 or blocks[0] * blocks[1] != xs[2]:
            raise RuntimeError(
                f"fold: input of shape {tuple(xs)} does not fit: dim 1 must be a multiple of "
                f"kH*kW = {K} and dim 2 the number of windows, {blocks[0]}*{blocks[1]}, of "
                f"output_size {out} with kernel_size {k}, stride {s}, padding {p}, dilation {d}"
            )
        C = xs[1] // K
        g = _reshape(engine, x, (xs[0], xs[1], *blocks))
        y = engine.apply(REGISTRY["conv2d_input_grad"], g, _one_hot_kernel(engine, x, C, k),
                         shape=(xs[0], C, *out), stride=s, padding=p, dilation=d,
                         groups=C)  # fmt: skip
        return _reshape(engine, y, shape_of("fold", y)[1:]) if single else y

    return fold


# -- 1-D pools and pixel shuffles ---------------------------------------------------------------
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


def _shuffle(engine, name, input, r, up):
    x = engine.value(name, "input", input)
    xs = tuple(shape_of(name, x))
    what = "upscale_factor" if up else "downscale_factor"
    if isinstance(r, bool) or not isinstance(r, int) or r < 1:
        raise ValueError(f"{name}: {what} must be a positive int, got {r!r}")
    if len(xs) < 3:
        raise RuntimeError(f"{name}: expects an input (*, C, H, W), got shape {xs}")
    *lead, C, H, W = xs
    n = len(lead)
    if up:
        if C % (r * r):
            raise RuntimeError(f"{name}: the channels ({C}, shape {xs}) must be divisible by "
                               f"upscale_factor**2 = {r * r}")  # fmt: skip
        y = _reshape(engine, x, (*lead, C // (r * r), r, r, H, W))
        y = engine.apply(REGISTRY["permute"], y, axes=(*range(n), n, n + 3, n + 1, n + 4, n + 2))
        return _reshape(engine, y, (*lead, C // (r * r), H * r, W * r))
    if H % r or W % r:
        raise RuntimeError(f"{name}: height and width ({H}, {W}; shape {xs}) must be divisible "
                           f"by downscale_factor = {r}")  # fmt: skip
    y = _reshape(engine, x, (*lead, C, H // r, r, W // r, r))
    y = engine.apply(REGISTRY["permute"], y, axes=(*range(n), n, n + 2, n + 4, n + 1, n + 3))
    return _reshape(engine, y, (*lead, C * r * r, H // r, W // r))


def pixel_shuffle_layer(engine):
    def pixel_shuffle(input, upscale_factor):
        """``(*, C*r*r, H, W)`` -> ``(*, C, H*r, W*r)``: each group of ``r*r`` channels
        becomes an ``r``-by-``r`` block of pixels (a reshape and a permute).

        >>> import tinygrad_edu as tg
        >>> pixel_shuffle(tg.arange(4.0).reshape(1, 4, 1, 1), 2).tolist()
        [[[[0.0, 1.0], [2.0, 3.0]]]]
        """
        return _shuffle(engine, "pixel_shuffle", input, upscale_factor, True)

    return pixel_shuffle


def pixel_unshuffle_layer(engine):
    def pixel_unshuffle(input, downscale_factor):
        """``pixel_shuffle`` undone: ``(*, C, H*r, W*r)`` -> ``(*, C*r*r, H, W)``.

        >>> import tinygrad_edu as tg
        >>> pixel_unshuffle(tg.arange(4.0).reshape(1, 1, 2, 2), 2).flatten().tolist()
        [0.0, 1.0, 2.0, 3.0]
        """
        return _shuffle(engine, "pixel_unshuffle", input, downscale_factor, False)

    return pixel_unshuffle


# -- adaptive pools ------------------------------------------------------------------------------
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


# -- normalisation -------------------------------------------------------------------------------
def _affine(engine, opname, y, weight, bias, channels_axis_shape):
    channels = shape_of(opname, y)[1]
    for what, v in (("weight", weight), ("bias", bias)):
        vs = None if v is None else known_shape(engine.value(opname, what, v))
        if vs is not None and vs != (channels,):
            raise RuntimeError(f"{opname}: expected {what} of shape ({channels},), one per "
                               f"channel of the input {tuple(shape_of(opname, y))}, got {vs}")
    if weight is not None:
        w = _reshape(engine, engine.value(opname, "weight", weight), channels_axis_shape)
        y = engine.apply(REGISTRY["mul"], y, w)
    if bias is not None:
        b = _reshape(engine, engine.value(opname, "bias", bias), channels_axis_shape)
        y = engine.apply(REGISTRY["add"], y, b)
    return y


def group_norm_layer(engine):
    def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
        """Normalise each example's channels in ``num_groups`` groups (over the group's
        channels and the pixels), then scale and shift per channel: ``layer_norm`` of the
        input reshaped to ``(N, num_groups, -1)``.

        >>> import tinygrad_edu as tg
        >>> group_norm(tg.tensor([[[1.0], [3.0]]]), 1, eps=0.0).tolist()
        [[[-1.0], [1.0]]]
        """
        x = engine.value("group_norm", "input", input)
        shape = shape_of("group_norm", x)
        if len(shape) < 2 or shape[1] % int(num_groups):
            raise RuntimeError(f"group_norm: expected an input (N, C, *) with C divisible by "
                               f"num_groups={num_groups}, got shape {tuple(shape)}")  # fmt: skip
        y = engine.apply(REGISTRY["layer_norm"], _reshape(engine, x, (shape[0], num_groups, -1)),
                         normalized_ndim=1, eps=float(eps))  # fmt: skip
        y = _reshape(engine, y, shape)
        return _affine(engine, "group_norm", y, weight, bias, (1, -1) + (1,) * (len(shape) - 2))

    return group_norm


def instance_norm_layer(engine):
    def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                      use_input_stats=True, momentum=0.1, eps=1e-5):  # fmt: skip
        """Normalise each channel of each example over its pixels (``InstanceNorm1d/2d``):
        ``layer_norm`` of the input reshaped to ``(N, C, -1)``, then the per-channel affine.

        >>> import tinygrad_edu as tg
        >>> instance_norm(tg.tensor([[[1.0, 3.0]]]), eps=0.0).tolist()
        [[[-1.0, 1.0]]]
        """
        x = engine.value("instance_norm", "input", input)
        shape = shape_of("instance_norm", x)
        if running_mean is not None or running_var is not None or not use_input_stats:
            raise NotImplementedError(
                "instance_norm: running statistics (track_running_stats=True) are not "
                "supported; use PyTorch's default track_running_stats=False"
            )
        if len(shape) < 3:
            raise ShapeError(f"instance_norm: expects an input (N, C, *) with at least one "
                             f"spatial axis, got shape {tuple(shape)}")  # fmt: skip
        y = engine.apply(REGISTRY["layer_norm"], _reshape(engine, x, (shape[0], shape[1], -1)),
                         normalized_ndim=1, eps=float(eps))  # fmt: skip
        y = _reshape(engine, y, shape)
        return _affine(engine, "instance_norm", y, weight, bias,
                       (1, -1) + (1,) * (len(shape) - 2))  # fmt: skip

    return instance_norm


def rms_norm_layer(engine):
    def rms_norm(input, normalized_shape, weight=None, eps=None):
        r"""$y = x / \sqrt{\mathrm{mean}(x^2) + \epsilon}\cdot w$ over the last
        ``normalized_shape`` axes; ``eps`` defaults to the dtype's machine epsilon, as
        PyTorch's.

        >>> import tinygrad_edu as tg
        >>> rms_norm(tg.tensor([[3.0, -3.0]]), (2,), eps=0.0).tolist()
        [[1.0, -1.0]]
        """
        x = engine.value("rms_norm", "input", input)
        shape = shape_of("rms_norm", x)
        ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        if not ns or tuple(shape[len(shape) - len(ns):]) != ns or len(ns) > len(shape):
            raise RuntimeError(f"rms_norm: normalized_shape {list(ns)} must be the last axes of "
                               f"the input, got shape {tuple(shape)}")  # fmt: skip
        if eps is None:
            dtype = getattr(x, "dtype", None)
            eps = float(_np.finfo(str(dtype) if dtype is not None else "float32").eps)
        apply = engine.apply
        ms = apply(REGISTRY["mean"], apply(REGISTRY["mul"], x, x),
                   axis=tuple(range(-len(ns), 0)), keepdims=True)  # fmt: skip
        y = apply(REGISTRY["mul"], x, apply(REGISTRY["rsqrt"], apply(REGISTRY["add"], ms,
                                                                     float(eps))))  # fmt: skip
        if weight is not None:
            y = apply(REGISTRY["mul"], y, engine.value("rms_norm", "weight", weight))
        return y

    return rms_norm


# -- channel dropout -----------------------------------------------------------------------------
def _dropout_channels_layer(name, nd):
    def template(engine):
        def dropout_channels(input, p=0.5, training=True, inplace=False):
            x = engine.value(name, "input", input)
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"{name}: dropout probability has to be between 0 and 1, "
                                 f"but got {p}")  # fmt: skip
            shape = shape_of(name, x)
            if len(shape) not in (nd + 1, nd + 2):
                raise ShapeError(f"{name}: expects an input with {nd + 1} or {nd + 2} axes "
                                 f"(channels, then {nd} spatial), got shape {tuple(shape)}")
            if not training or p == 0.0:
                return x
            spatial = tuple(range(-nd, 0))
            like = engine.apply(REGISTRY["mean"], x, axis=spatial, keepdims=True)
            mask = engine.dropout_mask(like, p)
            if inplace:
                if engine.mul_ is None:
                    raise side_effect_error(engine, name, "inplace=True", "pass inplace=False")
                return engine.mul_(x, mask)
            return engine.apply(REGISTRY["mul"], x, mask)

        dropout_channels.__doc__ = (
            f"Zero whole channels (each ``(N, C)`` {nd}-D map) with probability ``p`` and scale "
            "the rest by ``1/(1-p)``, in training (``training=True``, the default of the "
            "function); the identity otherwise."
        )
        return dropout_channels

    return template


# -- interpolate ---------------------------------------------------------------------------------
_MODES = {"nearest": None, "linear": 1, "bilinear": 2, "trilinear": 3, "nearest-exact": None}


def _source(out, n, scale, align_corners, mode):
    """The source coordinate of each output position along an axis (PyTorch's formulas)."""
    i = _np.arange(out, dtype=_np.float64)
    if mode == "nearest":
        return _np.minimum(_np.floor(i * scale), n - 1).astype(_np.int64)
    if mode == "nearest-exact":
        return _np.minimum(_np.floor((i + 0.5) * scale), n - 1).astype(_np.int64)
    if align_corners:
        return i * ((n - 1) / (out - 1)) if out > 1 else _np.zeros(out)
    return _np.maximum((i + 0.5) * scale - 0.5, 0.0)


def interpolate_layer(engine):
    def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                    recompute_scale_factor=None, antialias=False):  # fmt: skip
        """Resize the spatial axes of ``input`` (N, C, ...) to ``size`` or by
        ``scale_factor``: ``mode`` ``"nearest"`` (and ``"nearest-exact"``) copies the source
        pixel, ``"linear"``/``"bilinear"``/``"trilinear"`` blends the two nearest along each
        axis, with PyTorch's ``align_corners`` (default False: pixel centres).

        >>> import tinygrad_edu as tg
        >>> interpolate(tg.tensor([[[0.0, 1.0]]]), size=3, mode="linear",
        ...             align_corners=True).tolist()
        [[[0.0, 0.5, 1.0]]]
        """
        x = engine.value("interpolate", "input", input)
        shape = shape_of("interpolate", x)
        nd = len(shape) - 2
        if mode not in _MODES:
            raise NotImplementedError(f"interpolate: mode {mode!r} is not supported; use one of "
                                      f"{sorted(_MODES)}")  # fmt: skip
        if nd < 1:
            raise ValueError(f"interpolate: expects an input (N, C, *spatial), got shape "
                             f"{tuple(shape)}")  # fmt: skip
        if _MODES[mode] is not None and _MODES[mode] != nd:
            raise NotImplementedError(
                f"interpolate: mode {mode!r} needs a {_MODES[mode] + 2}-D input, got "
                f"{nd + 2}-D (shape {tuple(shape)})"
            )
        if _MODES[mode] is None and align_corners is not None:
            raise ValueError("interpolate: align_corners option can only be set with the "
                             "interpolating modes: linear | bilinear | trilinear")  # fmt: skip
        if antialias:
            raise NotImplementedError("interpolate: antialias=True is not supported")
        if (size is None) == (scale_factor is None):
            raise ValueError("interpolate: either size or scale_factor should be defined "
                             "(and not both)")  # fmt: skip
        spatial = shape[2:]
        if size is not None:
            out = (size,) * nd if isinstance(size, int) else tuple(size)
            if len(out) != nd:
                raise ValueError(f"interpolate: size {size!r} must have {nd} elements for an "
                                 f"input of shape {tuple(shape)}")  # fmt: skip
            scales = [n / o for n, o in zip(spatial, out)]
        else:
            sf = (scale_factor,) * nd if isinstance(scale_factor, (int, float)) \
                else tuple(scale_factor)  # fmt: skip
            if len(sf) != nd:
                raise ValueError(f"interpolate: scale_factor {scale_factor!r} must have {nd} "
                                 f"elements for an input of shape {tuple(shape)}")  # fmt: skip
            out = tuple(int(math.floor(n * f)) for n, f in zip(spatial, sf))
            scales = [n / o if recompute_scale_factor else 1.0 / f
                      for n, o, f in zip(spatial, out, sf)]  # fmt: skip
        if min(out) < 1:
            raise ValueError(f"interpolate: the output size {out} must be positive")
        apply = engine.apply
        for a in range(nd):
            axis = 2 + a
            if out[a] == spatial[a] and (mode.startswith("nearest") or scales[a] == 1.0):
                continue
            src = _source(out[a], spatial[a], scales[a], bool(align_corners), mode)
            lead = (slice(None),) * axis
            if mode.startswith("nearest"):
                x = apply(REGISTRY["getitem"], x, index=lead + (engine.index(x, src),))
                continue
            i0 = _np.minimum(_np.floor(src).astype(_np.int64), spatial[a] - 1)
            i1 = _np.minimum(i0 + 1, spatial[a] - 1)
            lam = (src - i0).reshape((-1,) + (1,) * (nd - 1 - a))
            x0 = apply(REGISTRY["getitem"], x, index=lead + (engine.index(x, i0),))
            x1 = apply(REGISTRY["getitem"], x, index=lead + (engine.index(x, i1),))
            x = apply(REGISTRY["add"], apply(REGISTRY["mul"], x0, _const(engine, x, 1.0 - lam)),
                      apply(REGISTRY["mul"], x1, _const(engine, x, lam)))  # fmt: skip
        return x

    return interpolate


declare_layer("conv1d", conv1d_layer)
declare_layer("conv_transpose2d", conv_transpose2d_layer)
declare_layer("conv_transpose1d", conv_transpose1d_layer)
declare_layer("unfold", unfold_layer)
declare_layer("fold", fold_layer)
declare_layer("adaptive_avg_pool1d", adaptive_avg_pool1d_layer)
declare_layer("adaptive_max_pool1d", adaptive_max_pool1d_layer)
declare_layer("adaptive_max_pool2d", adaptive_max_pool2d_layer)
declare_layer("group_norm", group_norm_layer)
declare_layer("instance_norm", instance_norm_layer)
declare_layer("rms_norm", rms_norm_layer)
declare_layer("dropout1d", _dropout_channels_layer("dropout1d", 1))
declare_layer("dropout2d", _dropout_channels_layer("dropout2d", 2))
declare_layer("dropout3d", _dropout_channels_layer("dropout3d", 3))
declare_layer("max_pool1d", max_pool1d_layer)
declare_layer("avg_pool1d", avg_pool1d_layer)
declare_layer("pixel_shuffle", pixel_shuffle_layer)
declare_layer("pixel_unshuffle", pixel_unshuffle_layer)
declare_layer("interpolate", interpolate_layer)
