r"""2-D convolution (NCHW) as **im2col** and one matrix product, and its derivative as
**col2im**.

``conv2d(x, w, b)`` with ``x`` of shape $(N, C, H, W)$ and ``w`` of shape
$(O, C/G, k_h, k_w)$ ($G$ groups) computes

$$y_{n,o,p,q} = b_o + \sum_{c,i,j} w_{o,c,i,j}\;
  x_{n,\,c,\; p s_h + i d_h - p_h,\; q s_w + j d_w - p_w}$$

(stride $s$, dilation $d$, zero padding $p$). *im2col* lays every receptive field out as a
column: ``cols`` has shape $(C k_h k_w,\; N \cdot OH \cdot OW)$, built from a sliding-window
*view* of the padded input (:func:`~tinygrad_edu.backend.windows.sliding_windows`) by one copy.
The convolution is then one matrix product ``w.reshape(O, -1) @ cols``. (On numpy arrays the
columns are built in two copies, and in float32 a few images at a time, each few multiplied as
soon as they are built: NOTE [im2col in cache-sized chunks].)

The derivative splits into two ops, each again an im2col product, so it can itself be
differentiated (second derivatives, in both engines):

* ``conv2d_weight_grad(x, g)``: $\partial L/\partial w = g \cdot \mathrm{cols}^\top$;
* ``conv2d_input_grad(g, w)``: $\partial L/\partial x = \mathrm{col2im}(w^\top g)$, where
  *col2im* adds each column back onto the pixels it was copied from (a loop over the
  $k_h k_w$ kernel offsets, each one strided add over the whole batch).

The three ops are closed under differentiation: for $y = \mathrm{conv}(x, w)$,
$\langle \mathrm{conv}(x, w), g\rangle = \langle x, \mathrm{input\_grad}(g, w)\rangle =
\langle w, \mathrm{weight\_grad}(x, g)\rangle$, so each op's derivative is one of the other two.

>>> import numpy as np
>>> from tinygrad_edu.ops import get_op
>>> x = np.arange(16.0).reshape(1, 1, 4, 4)
>>> w = np.ones((1, 1, 2, 2))
>>> get_op("conv2d").forward(np, x, w, stride=2)
array([[[[10., 18.],
         [42., 50.]]]])
"""

from __future__ import annotations

import numpy as _np  # the numpy fast paths below

from ..backend.windows import sliding_windows, window_count
from .base import NO_ONNX_GRAD, REGISTRY, Op, ShapeError, register
from .layer_surface import declare_layer, known_shape

__all__ = [
    "Conv2d",
    "Conv2dInputGrad",
    "Conv2dWeightGrad",
    "pair",
    "conv_output_hw",
    "im2col",
    "col2im",
    "contiguous",
    "pad_hw",
    "unbatched",
    "conv2d_layer",
]


def pair(opname: str, what: str, value, minimum: int = 1) -> tuple[int, int]:
    """``3`` -> ``(3, 3)``; ``(2, 1)`` stays; anything else (or below ``minimum``) is an error
    naming the op and the argument."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value, value)
    try:
        a, b = (int(v) for v in value)
        ok = all(int(v) == v for v in value)
    except (TypeError, ValueError):
        ok = False
    if not ok or a < minimum or b < minimum:
        raise ValueError(
            f"{opname}: {what} must be an int or a pair of ints >= {minimum}, got {value!r}"
        )
    return a, b


def _params(opname, kernel, stride, padding, dilation):
    return (
        pair(opname, "kernel_size", kernel),
        pair(opname, "stride", stride),
        pair(opname, "padding", padding, minimum=0),
        pair(opname, "dilation", dilation),
    )


def conv_output_hw(opname, xshape, kernel, stride, padding, dilation, what="") -> tuple[int, int]:
    """Output height and width of a sliding window over ``xshape``'s last two axes; a
    :class:`ShapeError` naming the op and the shapes when the (dilated) kernel is bigger than the
    padded input."""
    H, W = xshape[-2], xshape[-1]
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    eh, ew = dh * (kh - 1) + 1, dw * (kw - 1) + 1
    if eh > H + 2 * ph or ew > W + 2 * pw:
        dil = f", dilated to {eh}×{ew}" if (dh, dw) != (1, 1) else ""
        raise ShapeError(
            f"{opname}: the kernel {kh}×{kw}{dil}{what} is bigger than the padded input "
            f"{H + 2 * ph}×{W + 2 * pw} (input {tuple(xshape)}, padding {(ph, pw)}); use a "
            "smaller kernel, more padding, or a bigger input"
        )
    return window_count(H + 2 * ph, kh, sh, dh), window_count(W + 2 * pw, kw, sw, dw)


def _check(opname, xshape, wshape, stride, padding, dilation, groups):
    """Validate a convolution's shapes; returns ``(N, O, OH, OW)``."""
    if len(xshape) != 4 or len(wshape) != 4:
        raise ShapeError(
            f"{opname}: expects an input (N, C, H, W) and a weight (O, C/groups, kH, kW), got "
            f"shapes {tuple(xshape)} and {tuple(wshape)}; add a batch axis with "
            "x.reshape(1, *x.shape) for a single image"
        )
    if not isinstance(groups, int) or groups < 1:
        raise ValueError(f"{opname}: groups must be a positive int, got {groups!r}")
    N, C = xshape[0], xshape[1]
    O, Cg = wshape[0], wshape[1]
    if C != Cg * groups or O % groups:
        raise ShapeError(
            f"{opname}: input {tuple(xshape)} has {C} channels but the weight "
            f"{tuple(wshape)} with groups={groups} expects {Cg * groups} (C/groups = {Cg}), "
            f"and {O} output channels must divide into {groups} groups"
        )
    k = (wshape[2], wshape[3])
    what = f" (weight {tuple(wshape)})"
    oh, ow = conv_output_hw(opname, xshape, k, stride, padding, dilation, what)
    return N, O, oh, ow


def contiguous(xp, a):
    """``a`` as a C-contiguous array (a copy only when it is not one already)."""
    fn = getattr(xp, "ascontiguousarray", None)
    if fn is not None:
        return fn(a)
    return xp.reshape(xp.reshape(a, (-1,)), a.shape)  # strict namespaces: a row-major copy


def pad_hw(xp, x, padding, value=0.0):
    """``x`` with ``padding = (ph, pw)`` rows/columns of ``value`` on each side of the last two
    axes (no copy when there is no padding)."""
    ph, pw = padding
    if not ph and not pw:
        return x
    H, W = x.shape[-2], x.shape[-1]
    out = xp.full(tuple(x.shape[:-2]) + (H + 2 * ph, W + 2 * pw), value, dtype=x.dtype)
    out[..., ph : ph + H, pw : pw + W] = x
    return out


def im2col(xp, x, kernel, stride, padding, dilation):
    """Columns ``(C, kh, kw, N, OH, OW)`` of the padded ``x`` (N, C, H, W): every receptive
    field as one column, in one copy from a sliding-window view."""
    win = sliding_windows(xp, pad_hw(xp, x, padding), kernel, stride, dilation)  # N C OH OW kh kw
    # NOTE [im2col layout]: channels and kernel offsets first, then batch and pixels. With this
    # order the product w(O, C*kh*kw) @ cols is one plain matrix product, and col2im adds back
    # whole (N, OH, OW) blocks, one per (c, i, j).
    return contiguous(xp, xp.permute_dims(win, (1, 4, 5, 0, 2, 3)))


def col2im(xp, cols, xshape, stride, padding, dilation):
    """The adjoint of :func:`im2col`: ``cols`` of shape (C, kh, kw, N, OH, OW) added back onto
    the pixels each entry was copied from, giving an array of ``xshape`` (N, C, H, W).

    One strided add per kernel offset ``(i, j)`` (``kh * kw`` adds, each over the whole batch):
    overlapping windows add up, as the chain rule requires.
    """
    C, kh, kw, N, oh, ow = cols.shape
    H, W = xshape[-2], xshape[-1]
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    out = xp.zeros((C, N, H + 2 * ph, W + 2 * pw), dtype=cols.dtype)
    for i in range(kh):
        for j in range(kw):
            r, c = i * dh, j * dw
            rows, columns = slice(r, r + sh * (oh - 1) + 1, sh), slice(c, c + sw * (ow - 1) + 1, sw)
            out[:, :, rows, columns] += cols[:, i, j, ...]
    out = out[:, :, ph : ph + H, pw : pw + W]
    return contiguous(xp, xp.permute_dims(out, (1, 0, 2, 3)))


def _input_grad_unit_stride(xp, g, w, xshape, padding, dilation, groups):
    """``conv2d_input_grad`` for stride 1, with col2im done on flattened rows.

    NOTE [col2im on the padded grid]: with stride 1, output pixel ``(n, p, q)`` reads padded
    input pixel ``(n, p + i*dh, q + j*dw)`` for kernel offset ``(i, j)``. Put the output pixels
    on rows as wide as the padded input (``g`` zero-padded to ``(N, OH, Wp)``) and number them
    row by row: then col2im is two rounds of adds of long contiguous blocks instead of
    ``kh*kw`` strided ones. First the ``kw`` column offsets, each a shift ``j*dw`` of the flat
    index (the padded columns carry zeros, so what they carry across a row's end, or drop off
    the last one, is nothing); then the ``kh`` row offsets, each a shift ``i*dh*Wp`` within an
    image of ``Hp*Wp`` pixels. The product covers the padded columns too, but not the padded
    rows: for a 5x5 kernel on 14x14 that is 22% fewer columns than a grid of ``(N, Hp, Wp)``
    (measured: the ConvNet's second layer's input gradient 6.7 -> 5.9 ms).
    """
    N, C, H, W = xshape
    O, _, kh, kw = w.shape
    (ph, pw), (dh, dw) = padding, dilation
    Hp, Wp = H + 2 * ph, W + 2 * pw
    oh, ow = Hp - dh * (kh - 1), Wp - dw * (kw - 1)
    R = oh * Wp  # output slots per image
    gp = xp.zeros((O, N, oh, Wp), dtype=g.dtype)
    gp[:, :, :, :ow] = xp.permute_dims(g, (1, 0, 2, 3))
    cols = _group_matmul(xp, xp.reshape(w, (O, -1)), xp.reshape(gp, (O, N * R)), groups,
                         trans_a=True)  # fmt: skip  (C*kh*kw, N*R)
    cols = xp.reshape(cols, (C, kh, kw, N * R))
    if xp is _np and kw > 1:  # the copy of offset 0 and the add of offset 1 in one pass
        rows = _np.empty((C, kh, N * R), dtype=cols.dtype)
        rows[:, :, :dw] = cols[:, :, 0, :dw]
        _np.add(cols[:, :, 0, dw:], cols[:, :, 1, : N * R - dw], out=rows[:, :, dw:])
        first = 2
    else:
        rows = contiguous(xp, cols[:, :, 0, :])  # (C, kh, N*R): the column offsets summed
        first = 1
    for j in range(first, kw):
        rows[:, :, j * dw :] += cols[:, :, j, : N * R - j * dw]
    rows = xp.reshape(rows, (C, kh, N, R))
    out = xp.zeros((C, N, Hp * Wp), dtype=cols.dtype)
    for i in range(kh):
        out[:, :, i * dh * Wp : i * dh * Wp + R] += rows[:, i, :, :]
    out = xp.reshape(out, (C, N, Hp, Wp))[:, :, ph : ph + H, pw : pw + W]
    return contiguous(xp, xp.permute_dims(out, (1, 0, 2, 3)))


# NOTE [im2col in cache-sized chunks]: the column matrix of a convolution is 9-25 times its
# input (the ConvNet's second layer: 15.7 MB for a 1 MB input). Built whole, it is written out
# to memory by the im2col copy and read back by the product; built for a few images (the
# forward, whose product's columns are pixels) or a few channels (the weight gradient, whose
# product's rows are (channel, offset) pairs) at a time, it stays in the core's cache between
# the two. Each chunk's product has the whole product's inner dimension in the same order, so
# every output element is the same dot product. Whether BLAS also rounds it the same way depends
# on the kernel it picks for the product's size: OpenBLAS's float32 kernels give the same bits
# as one product on the ConvNet's and pytorch/examples mnist's layers (batches 24-100, the
# budgets used), but not on some tiny products, and its float64 kernel for a product's last
# columns rounds differently (a chunk of an odd number of the second layer's images differed
# in the last bit). So float32 chunks (agreeing with one product to float32 rounding,
# tests/ops/test_conv_chunks.py) and float64, like every other dtype, makes one chunk: the
# columns are built the same way (two copies, see _columns), the product is the plain path's,
# bit for bit. numpy only: on other namespaces (a GPU) one product over everything is the fast
# way, and they keep the plain path.
# Measured on the ConvNet's and mnist's layers (budgets 0.25-4 MiB): the forward's best is about
# one core's L2 cache; the weight gradient's products want more rows (one channel of a 3x3
# kernel is 9, too few for the GEMM's blocks), so a larger budget.
_CHUNK_BYTES = 1 << 20
_F32 = _np.dtype(_np.float32)
_WGRAD_CHUNK_BYTES = 4 << 20


def _padded_cn(x, padding):
    """``x`` (N, C, H, W) zero-padded and channel-major: (C, N, Hp, Wp), one small copy."""
    N, C, H, W = x.shape
    ph, pw = padding
    out = _np.zeros((C, N, H + 2 * ph, W + 2 * pw), dtype=x.dtype)
    out[:, :, ph : ph + H, pw : pw + W] = x.transpose(1, 0, 2, 3)
    return out


def _columns(xcn, kernel, stride, dilation, oh, ow):
    """im2col of a padded channel-major block ``xcn`` (C, N, Hp, Wp), possibly a view of a few
    channels or images: (C*kh*kw, N*oh*ow), rows (c, i, j) and columns (n, p, q) as
    :func:`im2col` lays them out.

    Two copies instead of one: first the ``kw`` column shifts of every row, (C, kw, N, Hp, ow),
    then the row shifts of those, in which one window offset of one image is a single run of
    ``oh*ow`` elements when the stride is 1. A single copy from the window view moves runs of
    ``ow`` elements (14 on the ConvNet's second layer), and its per-run cost dominated: the
    second layer's columns 2.7 -> 1.8 ms.
    """
    as_strided = _np.lib.stride_tricks.as_strided
    C, N, Hp, _ = xcn.shape
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    sc, sn, sr, sq = xcn.strides
    shifted = _np.ascontiguousarray(
        as_strided(xcn, (C, kw, N, Hp, ow), (sc, sq * dw, sn, sr, sq * sw), writeable=False)
    )
    tc, tj, tn, tr, tq = shifted.strides
    win = as_strided(shifted, (C, kh, kw, N, oh, ow), (tc, tr * dh, tj, tn, tr * sh, tq),
                     writeable=False)  # fmt: skip
    return _np.ascontiguousarray(win).reshape(C * kh * kw, N * oh * ow)


def _spans(total: int, per_item_bytes: int, budget: int, single_ok: bool = True):
    """``(start, stop)`` of the items (images or channels) to build columns for at once, about
    ``budget`` bytes of columns each (all at once for a budget of 0). ``single_ok=False`` when
    a chunk of one item would make the product a matrix-vector one (numpy calls another BLAS
    routine then): chunks of two or more, the last one overlapping its neighbour if need be."""
    if not budget:
        return [(0, total)]
    n = max(1, budget // max(1, per_item_bytes))
    n = min(total, n if single_ok else max(2, n))
    if n <= 0:  # an empty batch: one empty chunk
        return [(0, total)]
    spans = [(i, min(total, i + n)) for i in range(0, total, n)]
    if not single_ok and len(spans) > 1 and spans[-1][1] - spans[-1][0] == 1:
        spans[-1] = (total - 2, total)
    return spans


def _forward_chunked(x, w, b, k, s, p, d, groups, oh, ow):
    """``conv2d`` on numpy arrays, the columns built a few images at a time (NOTE [im2col in
    cache-sized chunks]); each chunk's product lands in the NCHW output by one small copy."""
    N, O, L = x.shape[0], w.shape[0], oh * ow
    wm = w.reshape(O, -1)
    xcn = _padded_cn(x, p)
    out = _np.empty((N, O, L), dtype=_np.result_type(x, w))
    budget = _CHUNK_BYTES if x.dtype == _F32 else 0  # other dtypes: one chunk (the NOTE)
    for n0, n1 in _spans(N, wm.shape[1] * groups * L * x.itemsize, budget, L > 1):
        cols = _columns(xcn[:, n0:n1], k, s, d, oh, ow)
        y = _group_matmul(_np, wm, cols, groups).reshape(O, n1 - n0, L).transpose(1, 0, 2)
        if b is None:
            out[n0:n1] = y
        else:  # the bias added on the way into the output (y + b, as the plain path adds it)
            _np.add(y, b.reshape(O, 1), out=out[n0:n1])
    return out.reshape(N, O, oh, ow)


def _weight_grad_chunked(x, g, wshape, k, s, p, d):
    """``conv2d_weight_grad`` (one group) on numpy arrays: ``cols @ g^T`` with the columns
    built a few channels at a time (NOTE [im2col in cache-sized chunks])."""
    N, O, oh, ow = g.shape
    kk = k[0] * k[1]
    gt = _np.ascontiguousarray(g.transpose(0, 2, 3, 1)).reshape(-1, O)
    xcn = _padded_cn(x, p)
    C = xcn.shape[0]
    out = _np.empty((C * kk, O), dtype=_np.result_type(x, g))
    budget = _WGRAD_CHUNK_BYTES if x.dtype == _F32 else 0
    for c0, c1 in _spans(C, kk * N * oh * ow * x.itemsize, budget, kk > 1):
        out[c0 * kk : c1 * kk] = _columns(xcn[c0:c1], k, s, d, oh, ow) @ gt
    return _np.ascontiguousarray(out.T).reshape(wshape)


def _grouped(xp, a, groups):
    """(G*R, K) -> (G, R, K): the leading axis split into groups (a view)."""
    return xp.reshape(a, (groups, a.shape[0] // groups, a.shape[1]))


def _group_matmul(xp, a, b, groups, trans_a=False, trans_b=False):
    """Per group ``op(a_g) @ op(b_g)`` for matrices whose leading axis holds the groups one
    after another, stacked back the same way: (G*R, ...) results.

    One plain 2-D product when ``groups == 1`` (numpy hands a transposed operand to BLAS as is;
    a batched product of one would copy it), a batched product otherwise."""
    if groups == 1:
        a = a.T if trans_a else a
        b = b.T if trans_b else b
        return xp.matmul(a, b)
    a, b = _grouped(xp, a, groups), _grouped(xp, b, groups)
    a = xp.matrix_transpose(a) if trans_a else a
    b = xp.matrix_transpose(b) if trans_b else b
    out = xp.matmul(a, b)
    return xp.reshape(out, (out.shape[0] * out.shape[1], out.shape[2]))


def _g_rows(xp, g):
    """The gradient (N, O, OH, OW) as a matrix (O, N*OH*OW), matching the im2col layout."""
    N, O, oh, ow = g.shape
    return xp.reshape(contiguous(xp, xp.permute_dims(g, (1, 0, 2, 3))), (O, N * oh * ow))


def _shaped(F, opname, args, shape, **attrs):
    """Call ``F.<opname>`` with a target shape given as a tuple (attribute) or, in the symbolic
    engine before shapes are known, as a node whose run-time shape to take (an extra input)."""
    fn = getattr(F, opname)
    if isinstance(shape, tuple):
        return fn(*args, shape=shape, **attrs)
    return fn(*args, shape, **attrs)


def _target(like, shape):
    return tuple(like.shape) if shape is None else tuple(shape)


class _ConvOp(Op):
    def _p(self, w_or_k, stride, padding, dilation):
        return _params(self.name, w_or_k, stride, padding, dilation)


@register
class Conv2d(_ConvOp):
    r"""``conv2d(x, w[, b], stride=1, padding=0, dilation=1, groups=1)``: im2col, then one
    matrix product (per group), plus the bias.

    $\partial L/\partial x$ = ``conv2d_input_grad(g, w)``,
    $\partial L/\partial w$ = ``conv2d_weight_grad(x, g)``,
    $\partial L/\partial b = \sum_{n,p,q} g_{n,o,p,q}$.
    """

    name, arity, saves = "conv2d", 2, (0, 1)
    torch_name = "ConvolutionBackward0"  # PyTorch's node name

    def forward(self, xp, x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
        k, s, p, d = self._p((w.shape[2], w.shape[3]), stride, padding, dilation)
        N, O, oh, ow = _check(self.name, x.shape, w.shape, s, p, d, groups)
        if xp is _np and x.dtype == w.dtype and (b is None or b.dtype == x.dtype):
            return _forward_chunked(x, w, b, k, s, p, d, groups, oh, ow)
        cols = im2col(xp, x, k, s, p, d)  # (C, kh, kw, N, OH, OW)
        cols = xp.reshape(cols, (cols.shape[0] * k[0] * k[1], -1))
        y = _group_matmul(xp, xp.reshape(w, (O, -1)), cols, groups)  # (O, N*OH*OW)
        if b is not None:
            y += xp.reshape(b, (O, 1))
        return contiguous(xp, xp.permute_dims(xp.reshape(y, (O, N, oh, ow)), (1, 0, 2, 3)))

    def shape(self, xshape, wshape, bshape=None, stride=1, padding=0, dilation=1, groups=1):
        _, s, p, d = self._p(tuple(wshape[2:4]) if len(wshape) == 4 else 1, stride, padding,
                             dilation)  # fmt: skip
        N, O, oh, ow = _check(self.name, xshape, wshape, s, p, d, groups)
        if bshape is not None and tuple(bshape) != (O,):
            raise ShapeError(
                f"conv2d: the bias has shape {tuple(bshape)}, but the weight {tuple(wshape)} "
                f"makes {O} output channels, so the bias must have shape ({O},)"
            )
        return (N, O, oh, ow)

    def vjp(self, F, g, inputs, out, shapes, needs, **attrs):
        x, w = inputs[0], inputs[1]
        gx = _shaped(F, "conv2d_input_grad", (g, w), shapes[0], **attrs) if needs[0] else None
        gw = _shaped(F, "conv2d_weight_grad", (x, g), shapes[1], **attrs) if needs[1] else None
        if len(inputs) < 3:
            return gx, gw
        gb = F.sum(g, axis=(0, 2, 3)) if needs[2] else None
        return gx, gw, gb

    def onnx(self, ex, node, args):
        kernel = ex.need_shape(node.inputs[1], "conv2d")[2:]
        win = ex.window(node, "conv2d", kernel)
        return ex.one("Conv", args, "conv", kernel_shape=list(kernel),
                         group=node.attrs.get("groups", 1), **win)  # fmt: skip


@register
class Conv2dInputGrad(_ConvOp):
    r"""``conv2d_input_grad(g, w, shape=x_shape)``: $\partial L/\partial x$ of ``conv2d`` for
    the output gradient ``g``: the columns $w^\top g$ added back by col2im (a *transposed
    convolution*).

    It is linear in ``g`` and in ``w``: its derivative for ``g`` is ``conv2d(gg, w)`` and for
    ``w`` is ``conv2d_weight_grad(gg, g)``.
    """

    name, arity, saves = "conv2d_input_grad", 2, (0, 1)
    onnx = NO_ONNX_GRAD

    def forward(self, xp, g, w, like=None, shape=None, stride=1, padding=0, dilation=1, groups=1):
        xshape = _target(like, shape)
        k, s, p, d = self._p((w.shape[2], w.shape[3]), stride, padding, dilation)
        N, O, oh, ow = _check(self.name, xshape, w.shape, s, p, d, groups)
        if s == (1, 1):
            return _input_grad_unit_stride(xp, g, w, xshape, p, d, groups)
        C = xshape[1]
        cols = _group_matmul(xp, xp.reshape(w, (O, -1)), _g_rows(xp, g), groups, trans_a=True)
        cols = xp.reshape(cols, (C, k[0], k[1], N, oh, ow))
        return col2im(xp, cols, xshape, s, p, d)

    def shape(self, gshape, wshape, like=None, shape=None, stride=1, padding=0, dilation=1,
              groups=1):  # fmt: skip
        xshape = tuple(like if shape is None else shape)
        _, s, p, d = self._p(1, stride, padding, dilation)
        want = _check(self.name, xshape, wshape, s, p, d, groups)
        if tuple(gshape) != want:
            raise ShapeError(
                f"conv2d_input_grad: the gradient has shape {tuple(gshape)}, but conv2d of an "
                f"input {xshape} with weight {tuple(wshape)} gives {want}"
            )
        return xshape

    def vjp(self, F, gg, inputs, out, shapes, needs, like=None, shape=None, **attrs):
        g, w = inputs[0], inputs[1]
        dg = F.conv2d(gg, w, **attrs) if needs[0] else None
        dw = _shaped(F, "conv2d_weight_grad", (gg, g), shapes[1], **attrs) if needs[1] else None
        return (dg, dw) + (None,) * (len(inputs) - 2)


@register
class Conv2dWeightGrad(_ConvOp):
    r"""``conv2d_weight_grad(x, g, shape=w_shape)``: $\partial L/\partial w$ of ``conv2d``,
    $g \cdot \mathrm{cols}(x)^\top$ (one matrix product per group).

    It is linear in ``x`` and in ``g``: its derivative for ``x`` is
    ``conv2d_input_grad(g, v)`` and for ``g`` is ``conv2d(x, v)``.
    """

    name, arity, saves = "conv2d_weight_grad", 2, (0, 1)
    onnx = NO_ONNX_GRAD

    def forward(self, xp, x, g, like=None, shape=None, stride=1, padding=0, dilation=1, groups=1):
        wshape = _target(like, shape)
        k, s, p, d = self._p((wshape[2], wshape[3]), stride, padding, dilation)
        _check(self.name, x.shape, wshape, s, p, d, groups)
        if xp is _np and groups == 1 and x.dtype == g.dtype:
            return _weight_grad_chunked(x, g, wshape, k, s, p, d)
        cols = im2col(xp, x, k, s, p, d)
        cols = xp.reshape(cols, (cols.shape[0] * k[0] * k[1], -1))
        if groups == 1:  # cols @ g^T, the faster orientation for OpenBLAS here (measured)
            gt = xp.reshape(contiguous(xp, xp.permute_dims(g, (0, 2, 3, 1))), (-1, g.shape[1]))
            return xp.reshape(contiguous(xp, xp.matmul(cols, gt).T), wshape)
        gw = _group_matmul(xp, _g_rows(xp, g), cols, groups, trans_b=True)  # (O, C/G*kh*kw)
        return xp.reshape(gw, wshape)

    def shape(self, xshape, gshape, like=None, shape=None, stride=1, padding=0, dilation=1,
              groups=1):  # fmt: skip
        wshape = tuple(like if shape is None else shape)
        _, s, p, d = self._p(1, stride, padding, dilation)
        want = _check(self.name, xshape, wshape, s, p, d, groups)
        if tuple(gshape) != want:
            raise ShapeError(
                f"conv2d_weight_grad: the gradient has shape {tuple(gshape)}, but conv2d of an "
                f"input {tuple(xshape)} with weight {wshape} gives {want}"
            )
        return wshape

    def vjp(self, F, v, inputs, out, shapes, needs, like=None, shape=None, **attrs):
        x, g = inputs[0], inputs[1]
        dx = _shaped(F, "conv2d_input_grad", (g, v), shapes[0], **attrs) if needs[0] else None
        dg = F.conv2d(x, v, **attrs) if needs[1] else None
        return (dx, dg) + (None,) * (len(inputs) - 2)


# -- the layer function (see tinygrad_edu.ops.layer_surface) ------------------------------------
def unbatched(opname: str, x, apply, batched_ndim: int = 4):
    """``(x, True)`` with a batch axis of 1 added when ``x`` is one example ``(C, H, W)``, as
    PyTorch accepts; ``(x, False)`` for a batch ``(N, C, H, W)`` (or an undeclared shape)."""
    shape = known_shape(x)
    if shape is None or len(shape) == batched_ndim:
        return x, False
    if len(shape) == batched_ndim - 1:
        return apply(REGISTRY["reshape"], x, shape=(1, *shape)), True
    raise ShapeError(f"{opname}: expects an input (N, C, H, W) or (C, H, W), got shape {shape}")


def _same_padding(engine, x, weight, s, d):
    """``padding="same"``: the padding that keeps H and W (an even kernel: PyTorch puts the
    extra row/column at the bottom/right, which needs a pad op first)."""
    if s != (1, 1):
        raise ValueError(
            f"conv2d: padding='same' is not supported for strided convolutions (stride {s}); "
            "give the padding as numbers"
        )
    wshape = known_shape(weight)
    if wshape is None:
        raise TypeError("conv2d: padding='same' needs the weight's shape; declare it, e.g. "
                        "Variable(name, shape=(O, C, kH, kW))")  # fmt: skip
    th, tw = (d[a] * (wshape[2 + a] - 1) for a in (0, 1))
    if th % 2 == 0 and tw % 2 == 0:
        return x, (th // 2, tw // 2)
    widths = (tw // 2, tw - tw // 2, th // 2, th - th // 2)
    return engine.apply(REGISTRY["pad"], x, pad=widths, value=0.0), 0


def conv2d_layer(engine):
    apply, value = engine.apply, engine.value
    op = REGISTRY["conv2d"]

    def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        r"""2-D convolution of ``input`` (N, C, H, W) with ``weight`` (O, C/groups, kH, kW),
        plus ``bias`` (O,):

        $$y_{n,o} = b_o + \sum_{c} w_{o,c} \star x_{n,c}$$

        ``padding`` is an int, a pair, ``"valid"`` (none) or ``"same"`` (output as big as the
        input; stride 1 only). Computed as im2col and one matrix product (``ops/conv.py``).

        >>> import tinygrad_edu as tg
        >>> x = tg.ones(1, 1, 3, 3)
        >>> conv2d(x, tg.ones(1, 1, 2, 2)).tolist()
        [[[[4.0, 4.0], [4.0, 4.0]]]]
        """
        x, w = value("conv2d", "input", input), value("conv2d", "weight", weight)
        x, single = unbatched("conv2d", x, apply)
        s, d = pair("conv2d", "stride", stride), pair("conv2d", "dilation", dilation)
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(f"conv2d: padding must be an int, a pair, 'valid' or 'same', "
                                 f"got {padding!r}")  # fmt: skip
            x, padding = (x, 0) if padding == "valid" else _same_padding(engine, x, w, s, d)
        p = pair("conv2d", "padding", padding, minimum=0)
        args = (x, w) if bias is None else (x, w, value("conv2d", "bias", bias))
        y = apply(op, *args, stride=s, padding=p, dilation=d, groups=int(groups))
        return apply(REGISTRY["reshape"], y, shape=tuple(y.shape[1:])) if single else y

    return conv2d


declare_layer("conv2d", conv2d_layer)
