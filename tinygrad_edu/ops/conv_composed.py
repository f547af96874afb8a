"""Convolutions composed of ``conv2d`` (:mod:`.conv`): ``conv1d``, the transposed ones,
``unfold`` and ``fold``.

``conv1d`` is ``conv2d`` of a height-1 image; ``conv_transpose2d`` is ``conv2d``'s adjoint, the
op ``conv2d_input_grad`` (PyTorch's weight layout ``(C_in, C_out/groups, kH, kW)`` is exactly
the ``(O, C/groups, kH, kW)`` of the convolution it is the adjoint of); ``unfold`` is a grouped
``conv2d`` with a one-hot weight (each output channel copies one kernel position of one input
channel), and ``fold`` its adjoint, ``conv_transpose2d`` with the same weight.
"""

from __future__ import annotations

import numpy as _np  # the one-hot weight of unfold/fold

from .base import REGISTRY, ShapeError
from .conv import pair
from .layer_surface import (
    _const,
    _layer,
    _ndim_check,
    _one,
    _reshape,
    _via,
    declare_layer,
    known_shape,
)
from .surface import shape_of


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


declare_layer("conv1d", conv1d_layer)
declare_layer("conv_transpose2d", conv_transpose2d_layer)
declare_layer("conv_transpose1d", conv_transpose1d_layer)
declare_layer("unfold", unfold_layer)
declare_layer("fold", fold_layer)
