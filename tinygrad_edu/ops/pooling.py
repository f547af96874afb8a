r"""Pooling over the last two axes (``(N, C, H, W)`` or ``(C, H, W)``): ``max_pool2d`` and
``avg_pool2d``, with the ops their derivatives are made of.

Each output pixel looks at a $k_h \times k_w$ window (stride $s$, padding $p$, dilation $d$
for max pooling). The kernels loop over the $k_h k_w$ window *offsets*, never over pixels:
offset $(i, j)$ of every window at once is one strided slice of the padded input.

* ``max_pool2d``: $y = \max$ over the window. The gradient goes to the window's maximum, the
  first one in row-major order on ties (as PyTorch): ``max_pool2d_grad(x, g)``. That op is
  linear in ``g`` (and flat in ``x``); its derivative picks the gradient at each window's
  maximum, ``max_pool2d_select(x, v)``, whose derivative is ``max_pool2d_grad`` again.
* ``avg_pool2d``: $y = \frac1{n}\sum$ over the window, where $n$ counts the padding or not
  (``count_include_pad``). Its derivative ``avg_pool2d_grad(g)`` spreads each $g/n$ back over
  the window; the two ops are each other's adjoints.

>>> import numpy as np
>>> from tinygrad_edu.ops import get_op
>>> x = np.array([[[[1., 2.], [3., 4.]]]])
>>> get_op("max_pool2d").forward(np, x, kernel_size=2), get_op("avg_pool2d").forward(np, x, 2)
(array([[[[4.]]]]), array([[[[2.5]]]]))
"""

from __future__ import annotations

import numpy as _np  # the tiling fast paths below

from ..backend.windows import sliding_windows
from .base import NO_ONNX_GRAD, REGISTRY, Op, ShapeError, register
from .conv import contiguous, pad_hw, pair
from .layer_surface import declare_layer
from .surface import shape_of

__all__ = [
    "MaxPool2d",
    "MaxPool2dGrad",
    "MaxPool2dSelect",
    "AvgPool2d",
    "AvgPool2dGrad",
    "pool_output_hw",
]


def _pool_size(opname, size, k, s, p, d, ceil_mode) -> int:
    """PyTorch's pooling output size along one axis (with ``ceil_mode``'s last partial window,
    which must start inside the input or its left padding)."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _params(opname, kernel_size, stride, padding, dilation):
    k = pair(opname, "kernel_size", kernel_size)
    s = k if stride is None or stride == () or stride == [] else pair(opname, "stride", stride)
    p = pair(opname, "padding", padding, minimum=0)
    d = pair(opname, "dilation", dilation)
    if p[0] > k[0] // 2 or p[1] > k[1] // 2:
        raise ValueError(
            f"{opname}: padding {p} must be at most half the kernel size {k} (PyTorch's rule: "
            "a window may never lie entirely in the padding); use less padding"
        )
    return k, s, p, d


def pool_output_hw(opname, xshape, k, s, p, d, ceil_mode=False) -> tuple[int, int]:
    """``(OH, OW)`` of a pooling window over ``xshape``; a :class:`ShapeError` naming the op and
    the shapes when the (dilated) window is bigger than the padded input."""
    if len(xshape) not in (3, 4):
        raise ShapeError(
            f"{opname}: expects an input (N, C, H, W) or (C, H, W), got shape {tuple(xshape)}"
        )
    H, W = xshape[-2], xshape[-1]
    eh, ew = d[0] * (k[0] - 1) + 1, d[1] * (k[1] - 1) + 1
    if eh > H + 2 * p[0] or ew > W + 2 * p[1]:
        dil = f", dilated to {eh}×{ew}" if d != (1, 1) else ""
        raise ShapeError(
            f"{opname}: the window {k[0]}×{k[1]}{dil} is bigger than the padded input "
            f"{H + 2 * p[0]}×{W + 2 * p[1]} (input {tuple(xshape)}, padding {p}); use a smaller "
            "kernel_size, more padding, or a bigger input"
        )
    return (
        _pool_size(opname, H, k[0], s[0], p[0], d[0], ceil_mode),
        _pool_size(opname, W, k[1], s[1], p[1], d[1], ceil_mode),
    )


def _padded(xp, x, k, s, p, d, oh, ow, value):
    """``x`` padded by ``p`` on each side, and on the bottom/right as far as the last
    (``ceil_mode``) window reaches."""
    H, W = x.shape[-2], x.shape[-1]
    need_h = (oh - 1) * s[0] + d[0] * (k[0] - 1) + 1
    need_w = (ow - 1) * s[1] + d[1] * (k[1] - 1) + 1
    extra_h = max(0, need_h - (H + 2 * p[0]))
    extra_w = max(0, need_w - (W + 2 * p[1]))
    if not (extra_h or extra_w):
        return pad_hw(xp, x, p, value)
    out = xp.full(
        tuple(x.shape[:-2]) + (H + 2 * p[0] + extra_h, W + 2 * p[1] + extra_w), value, dtype=x.dtype
    )
    out[..., p[0] : p[0] + H, p[1] : p[1] + W] = x
    return out


def _offsets(k, s, d, oh, ow):
    """For each window offset (i, j), in row-major order, the index of that offset in every
    window at once: a pair of strided slices of the padded input."""
    for i in range(k[0]):
        for j in range(k[1]):
            r, c = i * d[0], j * d[1]
            yield (
                Ellipsis,
                slice(r, r + s[0] * (oh - 1) + 1, s[0]),
                slice(c, c + s[1] * (ow - 1) + 1, s[1]),
            )


def _crop(a, p, H, W):
    return a[..., p[0] : p[0] + H, p[1] : p[1] + W]


def _neg_inf(xp, dtype):
    return -float("inf") if "float" in str(dtype) else xp.iinfo(dtype).min


class _Pool(Op):
    def _geometry(self, xshape, kernel_size, stride, padding, dilation, ceil_mode):
        k, s, p, d = _params(self.name, kernel_size, stride, padding, dilation)
        return (k, s, p, d) + pool_output_hw(self.name, xshape, k, s, p, d, ceil_mode)


def _window_columns(xp, a, k, s, d):
    """The windows of ``a`` (..., H, W) laid out offset-major, ``(kh*kw, ..., OH, OW)``: one
    copy from the sliding-window view, after which every step works on whole contiguous
    blocks (one per window offset)."""
    win = sliding_windows(xp, a, k, s, d)  # (..., OH, OW, kh, kw), a view
    n = win.ndim
    cols = contiguous(xp, xp.permute_dims(win, (n - 2, n - 1) + tuple(range(n - 2))))
    return xp.reshape(cols, (k[0] * k[1],) + tuple(cols.shape[2:]))


def _scatter(xp, gcols, shape, k, s, d, oh, ow):
    """The adjoint of :func:`_window_columns`: ``gcols`` (kh*kw, ..., OH, OW) added back onto
    an array of ``shape`` (the padded input's), one strided write per window offset. Windows
    that do not overlap (stride >= the dilated kernel) write disjoint places, so each offset
    is a plain assignment, and when they tile the whole array nothing needs zeroing first
    (measured: faster than one transposing copy, whose innermost run would be kw elements)."""
    eh, ew = d[0] * (k[0] - 1) + 1, d[1] * (k[1] - 1) + 1
    disjoint = s[0] >= eh and s[1] >= ew
    tiles = disjoint and (oh * s[0], ow * s[1]) == tuple(shape[-2:]) and tuple(s) == tuple(k)
    out = xp.empty(shape, dtype=gcols.dtype) if tiles else xp.zeros(shape, dtype=gcols.dtype)
    for n, ix in enumerate(_offsets(k, s, d, oh, ow)):
        if disjoint:
            out[ix] = gcols[n, ...]
        else:
            out[ix] += gcols[n, ...]
    return out


# NOTE [Tiling max-pool on numpy]
# The usual max-pool (kernel == stride, no padding, no dilation: ``nn.MaxPool2d(2)``) has windows
# that tile the input without overlap, so the input viewed as (..., OH, kh, OW, kw) (a view:
# only axes are split) holds every window, and offset (i, j) of all windows is ``[..., i, :,
# j]``, the very strided slice :func:`_offsets` gives. The forward is then the same chain of
# ``maximum`` over the same slices in the same order, written into one array instead of a new
# one per offset. The gradient copies the windows offset-major once (contiguous blocks are
# several times faster to compare than stride-2 slices), compares each offset's block with the
# window maxima and writes ``g`` times the first-maximum mask straight into the gradient's
# view, without the boolean mask of all offsets, its conversion and the scatter. The mask is the
# same (``==`` treats -0 and +0 alike and no NaN equals anything, whichever the maximum is), the
# products are the same ``g * 1`` and ``g * 0``, so the results are the same bits
# (tests/ops/test_pooling_tiles.py compares them with the general code). numpy arrays only,
# rows and columns past the last whole window (floor mode) get zero as before; anything else
# (padding, dilation, overlap, ceil_mode's partial windows, other namespaces) takes the general
# code.
def _tiles(xp, x, k, s, p, d, oh, ow):
    """``x`` viewed as (..., OH, kh, OW, kw) when its windows tile it (NOTE [Tiling max-pool on
    numpy]), else None."""
    if xp is not _np or not isinstance(x, _np.ndarray) or x.ndim not in (3, 4):
        return None
    if tuple(s) != tuple(k) or tuple(p) != (0, 0) or tuple(d) != (1, 1):
        return None
    H, W = x.shape[-2:]
    if oh * k[0] > H or ow * k[1] > W or oh == 0 or ow == 0:
        return None  # (ceil_mode's partial last window)
    v = x[..., : oh * k[0], : ow * k[1]]
    return v.reshape(tuple(x.shape[:-2]) + (oh, k[0], ow, k[1]))


def _tile_max(xv, k):
    """The window maxima of a tiled view: ``maximum`` over the offsets in row-major order, as
    :meth:`_MaxPool._windows` computes them."""
    offs = [(i, j) for i in range(k[0]) for j in range(k[1])]
    if len(offs) == 1:
        return xv[..., 0, :, 0]
    out = _np.maximum(xv[..., 0, :, 0], xv[..., offs[1][0], :, offs[1][1]])
    for i, j in offs[2:]:
        _np.maximum(out, xv[..., i, :, j], out=out)
    return out


class _MaxPool(_Pool):
    def _windows(self, xp, x, kernel_size, stride, padding, dilation, ceil_mode):
        """The padded input, its window maxima and the offset slices."""
        k, s, p, d, oh, ow = self._geometry(
            x.shape, kernel_size, stride, padding, dilation, ceil_mode
        )
        xpad = _padded(xp, x, k, s, p, d, oh, ow, _neg_inf(xp, x.dtype))
        idx = list(_offsets(k, s, d, oh, ow))
        out = xpad[idx[0]]
        for ix in idx[1:]:
            out = xp.maximum(out, xpad[ix])
        return xpad, out, idx, (k, s, p, d, oh, ow)

    def _tiled_grad(self, x, g, kernel_size, stride, padding, dilation, ceil_mode):
        """``max_pool2d_grad`` when the windows tile ``x`` (NOTE [Tiling max-pool on numpy]),
        else None."""
        if not isinstance(g, _np.ndarray) or g.dtype.kind not in "fc":
            return None
        k, s, p, d, oh, ow = self._geometry(
            x.shape, kernel_size, stride, padding, dilation, ceil_mode
        )
        xv = _tiles(_np, x, k, s, p, d, oh, ow)
        if xv is None or g.shape != tuple(x.shape[:-2]) + (oh, ow):
            return None
        lead = x.ndim - 2  # the window offsets first, each a contiguous (..., OH, OW) block
        perm = (lead + 1, lead + 3) + tuple(range(lead)) + (lead, lead + 2)
        cols = _np.ascontiguousarray(xv.transpose(perm))
        m = _tile_max(cols.transpose(tuple(range(2, lead + 2)) + (lead + 2, 0, lead + 3, 1)), k)
        whole = (oh * k[0], ow * k[1]) == tuple(x.shape[-2:])
        out = (_np.empty if whole else _np.zeros)(x.shape, dtype=g.dtype)
        ov = out[..., : oh * k[0], : ow * k[1]].reshape(xv.shape)
        offs = [(i, j) for i in range(k[0]) for j in range(k[1])]
        free = None  # windows whose first maximum is still to come
        for n, (i, j) in enumerate(offs):
            hit = _np.equal(cols[i, j], m)
            if free is None:
                free = _np.logical_not(hit) if n + 1 < len(offs) else None
            else:
                _np.logical_and(hit, free, out=hit)
                if n + 1 < len(offs):
                    _np.greater(free, hit, out=free)  # free and not hit
            _np.multiply(hit, g, out=ov[..., i, :, j])  # (the order of MaxPool2dGrad's product)
        return out

    def _first_max(self, xp, x, kernel_size, stride, padding, dilation, ceil_mode):
        """The padded input, its window columns and a boolean mask of the same shape marking
        each window's first maximum (row-major order within the window, as PyTorch)."""
        k, s, p, d, oh, ow = self._geometry(
            x.shape, kernel_size, stride, padding, dilation, ceil_mode
        )
        xpad = _padded(xp, x, k, s, p, d, oh, ow, _neg_inf(xp, x.dtype))
        cols = _window_columns(xp, xpad, k, s, d)
        hits = cols == xp.max(cols, axis=0)
        # NOTE [First maximum]: after a ReLU whole windows are 0, a tie; the gradient must go to
        # one element only, the first, or the pooled gradient would be counted several times
        seen = hits[0, ...]
        for n in range(1, hits.shape[0]):
            hit = hits[n, ...]
            hits[n, ...] = hit & ~seen
            seen = seen | hit
        return xpad, cols, hits, (k, s, p, d, oh, ow)


@register
class MaxPool2d(_MaxPool):
    r"""``max_pool2d(x, kernel_size, stride=kernel_size, padding=0, dilation=1,
    ceil_mode=False)``: the maximum of each window (padding counts as $-\infty$).

    $\partial L/\partial x$ = ``max_pool2d_grad(x, g)``: each window's gradient goes to its
    (first) maximum.
    """

    name, saves = "max_pool2d", (0,)
    torch_name = "MaxPool2DWithIndicesBackward0"  # PyTorch's node name

    def forward(self, xp, x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
        k, s, p, d, oh, ow = self._geometry(
            x.shape, kernel_size, stride, padding, dilation, ceil_mode
        )
        xv = _tiles(xp, x, k, s, p, d, oh, ow)
        if xv is not None:  # NOTE [Tiling max-pool on numpy]
            return _tile_max(xv, k)
        return self._windows(xp, x, kernel_size, stride, padding, dilation, ceil_mode)[1]

    def shape(self, xshape, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
        oh, ow = self._geometry(xshape, kernel_size, stride, padding, dilation, ceil_mode)[4:]
        return tuple(xshape[:-2]) + (oh, ow)

    def vjp(self, F, g, inputs, out, shapes, needs, **attrs):
        return (F.max_pool2d_grad(inputs[0], g, **attrs),)

    def onnx(self, ex, node, args):
        kernel = pair("max_pool2d", "kernel_size", node.attrs["kernel_size"])
        win = ex.window(node, "max_pool2d", kernel)
        return ex.one("MaxPool", args, "max_pool", kernel_shape=list(kernel),
                         ceil_mode=int(bool(node.attrs.get("ceil_mode"))), **win)  # fmt: skip


@register
class MaxPool2dGrad(_MaxPool):
    r"""``max_pool2d_grad(x, g, ...)``: zeros shaped like ``x`` with each window's gradient
    ``g`` added at the window's first maximum (a scatter-add; windows may overlap).

    Linear in ``g``, flat in ``x``: its derivative for ``g`` is ``max_pool2d_select(x, gg)``.
    """

    name, arity, saves = "max_pool2d_grad", 2, (0,)
    onnx = NO_ONNX_GRAD

    def forward(self, xp, x, g, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
        if xp is _np:  # NOTE [Tiling max-pool on numpy]
            out = self._tiled_grad(x, g, kernel_size, stride, padding, dilation, ceil_mode)
            if out is not None:
                return out
        xpad, cols, first, (k, s, p, d, oh, ow) = self._first_max(
            xp, x, kernel_size, stride, padding, dilation, ceil_mode
        )
        gcols = xp.astype(first, g.dtype) * g  # (kh*kw, ..., OH, OW): g at each first maximum
        return _crop(_scatter(xp, gcols, xpad.shape, k, s, d, oh, ow), p, *x.shape[-2:])

    def shape(self, xshape, gshape, kernel_size, stride=None, padding=0, dilation=1,
              ceil_mode=False):  # fmt: skip
        oh, ow = self._geometry(xshape, kernel_size, stride, padding, dilation, ceil_mode)[4:]
        want = tuple(xshape[:-2]) + (oh, ow)
        if tuple(gshape) != want:
            raise ShapeError(
                f"max_pool2d_grad: the gradient has shape {tuple(gshape)}, but max_pool2d of "
                f"an input {tuple(xshape)} gives {want}"
            )
        return tuple(xshape)

    def vjp(self, F, gg, inputs, out, shapes, needs, **attrs):
        return (None, F.max_pool2d_select(inputs[0], gg, **attrs) if needs[1] else None)


@register
class MaxPool2dSelect(_MaxPool):
    r"""``max_pool2d_select(x, v, ...)``: for each window of ``x``, the value of ``v`` (shaped
    like ``x``) at the window's first maximum. ``max_pool2d(x)`` is ``max_pool2d_select(x, x)``.

    Linear in ``v``, flat in ``x``: its derivative for ``v`` is ``max_pool2d_grad(x, g)``.
    """

    name, arity, saves = "max_pool2d_select", 2, (0,)
    onnx = NO_ONNX_GRAD

    def forward(self, xp, x, v, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
        xpad, cols, first, (k, s, p, d, oh, ow) = self._first_max(
            xp, x, kernel_size, stride, padding, dilation, ceil_mode
        )
        vcols = _window_columns(xp, _padded(xp, v, k, s, p, d, oh, ow, 0), k, s, d)
        return xp.sum(xp.astype(first, v.dtype) * vcols, axis=0)

    def shape(self, xshape, vshape, kernel_size, stride=None, padding=0, dilation=1,
              ceil_mode=False):  # fmt: skip
        if tuple(vshape) != tuple(xshape):
            raise ShapeError(
                f"max_pool2d_select: x and v must have one shape, got {tuple(xshape)} and "
                f"{tuple(vshape)}"
            )
        oh, ow = self._geometry(xshape, kernel_size, stride, padding, dilation, ceil_mode)[4:]
        return tuple(xshape[:-2]) + (oh, ow)

    def vjp(self, F, g, inputs, out, shapes, needs, **attrs):
        return (None, F.max_pool2d_grad(inputs[0], g, **attrs) if needs[1] else None)


def _divisor(xp, dtype, H, W, k, s, p, oh, ow, count_include_pad, divisor_override):
    """What each window's sum is divided by: a number, or an (OH, OW) array where windows
    differ (padding not counted, or a ``ceil_mode`` window cut by the edge), as PyTorch does."""
    if divisor_override:
        return float(divisor_override)

    def counts(size, k_, s_, p_, n):
        full, inside = [], []
        for o in range(n):
            start = o * s_ - p_
            end = min(start + k_, size + p_)
            full.append(end - start)
            inside.append(min(end, size) - max(start, 0))
        return full if count_include_pad else inside

    rows, cols = counts(H, k[0], s[0], p[0], oh), counts(W, k[1], s[1], p[1], ow)
    if len(set(rows)) == 1 and len(set(cols)) == 1:
        return float(rows[0] * cols[0])
    return xp.asarray([[r * c for c in cols] for r in rows], dtype=dtype)


class _AvgPool(_Pool):
    def _setup(self, xp, xshape, dtype, kernel_size, stride, padding, ceil_mode,
               count_include_pad, divisor_override):  # fmt: skip
        k, s, p, d, oh, ow = self._geometry(xshape, kernel_size, stride, padding, 1, ceil_mode)
        div = _divisor(xp, dtype, xshape[-2], xshape[-1], k, s, p, oh, ow, count_include_pad,
                       divisor_override)  # fmt: skip
        return k, s, p, d, oh, ow, div

    def _out_shape(self, xshape, kernel_size, stride, padding, ceil_mode):
        oh, ow = self._geometry(xshape, kernel_size, stride, padding, 1, ceil_mode)[4:]
        return tuple(xshape[:-2]) + (oh, ow)


@register
class AvgPool2d(_AvgPool):
    r"""``avg_pool2d(x, kernel_size, stride=kernel_size, padding=0, ceil_mode=False,
    count_include_pad=True, divisor_override=None)``: each window's mean (zero padding).

    $\partial L/\partial x$ = ``avg_pool2d_grad(g)``: $g/n$ spread over each window.
    """

    name, torch_name = "avg_pool2d", "AvgPool2DBackward0"  # PyTorch's node name

    def forward(self, xp, x, kernel_size, stride=None, padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):  # fmt: skip
        k, s, p, d, oh, ow, div = self._setup(
            xp, x.shape, x.dtype, kernel_size, stride, padding, ceil_mode, count_include_pad,
            divisor_override,
        )
        xpad = _padded(xp, x, k, s, p, d, oh, ow, 0)
        idx = list(_offsets(k, s, d, oh, ow))
        total = xpad[idx[0]]
        for ix in idx[1:]:
            total = total + xpad[ix]
        return total / div

    def shape(self, xshape, kernel_size, stride=None, padding=0, ceil_mode=False,
              count_include_pad=True, divisor_override=None):  # fmt: skip
        return self._out_shape(xshape, kernel_size, stride, padding, ceil_mode)

    def vjp(self, F, g, inputs, out, shapes, needs, **attrs):
        shape = shapes[0]
        if isinstance(shape, tuple):
            return (F.avg_pool2d_grad(g, shape=shape, **attrs),)
        return (F.avg_pool2d_grad(g, shape, **attrs),)

    def onnx(self, ex, node, args):
        a = node.attrs
        if a.get("divisor_override") is not None:
            raise NotImplementedError("to_onnx: avg_pool2d's divisor_override has no ONNX form")
        kernel = pair("avg_pool2d", "kernel_size", a["kernel_size"])
        win = ex.window(node, "avg_pool2d", kernel)
        del win["dilations"]
        return ex.one("AveragePool", args, "avg_pool", kernel_shape=list(kernel),
                         ceil_mode=int(bool(a.get("ceil_mode"))),
                         count_include_pad=int(bool(a.get("count_include_pad", True))),
                         **win)  # fmt: skip


@register
class AvgPool2dGrad(_AvgPool):
    r"""``avg_pool2d_grad(g, shape=x_shape, ...)``: each window's ``g / n`` added back onto the
    window's pixels. It is the adjoint of ``avg_pool2d`` (and its derivative is
    ``avg_pool2d``)."""

    name = "avg_pool2d_grad"
    onnx = NO_ONNX_GRAD

    def forward(self, xp, g, like=None, shape=None, kernel_size=1, stride=None, padding=0,
                ceil_mode=False, count_include_pad=True, divisor_override=None):  # fmt: skip
        xshape = tuple(like.shape) if shape is None else tuple(shape)
        k, s, p, d, oh, ow, div = self._setup(
            xp, xshape, g.dtype, kernel_size, stride, padding, ceil_mode, count_include_pad,
            divisor_override,
        )
        share = g / div
        H, W = xshape[-2], xshape[-1]
        gpad = _padded(xp, xp.zeros(xshape, dtype=g.dtype), k, s, p, d, oh, ow, 0)
        for ix in _offsets(k, s, d, oh, ow):
            gpad[ix] += share
        return _crop(gpad, p, H, W)

    def shape(self, gshape, like=None, shape=None, kernel_size=1, stride=None, padding=0,
              ceil_mode=False, count_include_pad=True, divisor_override=None):  # fmt: skip
        xshape = tuple(like if shape is None else shape)
        want = self._out_shape(xshape, kernel_size, stride, padding, ceil_mode)
        if tuple(gshape) != want:
            raise ShapeError(
                f"avg_pool2d_grad: the gradient has shape {tuple(gshape)}, but avg_pool2d of "
                f"an input {xshape} gives {want}"
            )
        return xshape

    def vjp(self, F, gg, inputs, out, shapes, needs, like=None, shape=None, **attrs):
        return (F.avg_pool2d(gg, **attrs),) + (None,) * (len(inputs) - 1)


# -- the layer functions (see tinygrad_edu.ops.layer_surface) -----------------------------------
def _kernel_stride(name, kernel_size, stride):
    k = pair(name, "kernel_size", kernel_size)
    s = k if stride is None or stride == () or stride == [] else pair(name, "stride", stride)
    return k, s


def max_pool2d_layer(engine):
    apply, value = engine.apply, engine.value
    op = REGISTRY["max_pool2d"]

    def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                   return_indices=False):  # fmt: skip
        """The maximum of each ``kernel_size`` window (stride defaults to ``kernel_size``); the
        gradient goes to each window's first maximum, as in PyTorch. With ``return_indices``
        also the flat index (``h * W + w``) of each maximum, what ``max_unpool2d`` takes.

        >>> import tinygrad_edu as tg
        >>> max_pool2d(tg.tensor([[[[1.0, 5.0], [3.0, 2.0]]]]), 2).tolist()
        [[[[5.0]]]]
        """
        x = value("max_pool2d", "input", input)
        k, s = _kernel_stride("max_pool2d", kernel_size, stride)
        attrs = dict(kernel_size=k, stride=s,
                     padding=pair("max_pool2d", "padding", padding, minimum=0),
                     dilation=pair("max_pool2d", "dilation", dilation),
                     ceil_mode=bool(ceil_mode))  # fmt: skip
        out = apply(op, x, **attrs)
        if not return_indices:
            return out
        return out, _argmax_indices(engine, x, attrs)

    return max_pool2d


def _argmax_indices(engine, x, attrs):
    """``return_indices=True``: for each window, the flat index ``h * W + w`` (within its own
    H x W plane) of the window's first maximum, as PyTorch's (an int64 tensor shaped like the
    output, no gradient). It is ``max_pool2d_select`` of ``x`` and of a plane numbering each
    pixel, so it picks exactly the element whose value ``max_pool2d`` returned."""
    apply = engine.apply
    shape = shape_of("max_pool2d", x)
    H, W = shape[-2], shape[-1]
    plane = engine.indices([[h * W + w for w in range(W)] for h in range(H)], x)
    plane = apply(REGISTRY["astype"], plane, dtype="float64", src="int64")
    plane = apply(REGISTRY["broadcast_to"], plane, shape=tuple(shape))
    where = apply(REGISTRY["max_pool2d_select"], x, plane, **attrs)
    where = apply(REGISTRY["astype"], where, dtype="int64", src="float64")
    return apply(REGISTRY["floor_divide"], where, 1)  # not differentiable: no grad, as PyTorch


def avg_pool2d_layer(engine):
    apply, value = engine.apply, engine.value
    op = REGISTRY["avg_pool2d"]

    def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
                   count_include_pad=True, divisor_override=None):  # fmt: skip
        """The mean of each ``kernel_size`` window (stride defaults to ``kernel_size``). With
        ``count_include_pad`` (the default) padded zeros count in the mean.

        >>> import tinygrad_edu as tg
        >>> avg_pool2d(tg.tensor([[[[1.0, 5.0], [3.0, 3.0]]]]), 2).tolist()
        [[[[3.0]]]]
        """
        x = value("avg_pool2d", "input", input)
        k, s = _kernel_stride("avg_pool2d", kernel_size, stride)
        if divisor_override is not None and (int(divisor_override) != divisor_override
                                             or divisor_override <= 0):  # fmt: skip
            raise ValueError(f"avg_pool2d: divisor_override must be a positive int, got "
                             f"{divisor_override!r}")  # fmt: skip
        return apply(op, x, kernel_size=k, stride=s,
                     padding=pair("avg_pool2d", "padding", padding, minimum=0),
                     ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
                     divisor_override=divisor_override)  # fmt: skip

    return avg_pool2d


declare_layer("max_pool2d", max_pool2d_layer)
declare_layer("avg_pool2d", avg_pool2d_layer)
