r"""``pad(x, pad, value=0)``: constant padding of the last axes, in PyTorch's notation.

``pad`` lists (before, after) amounts from the **last** axis backwards:
``(left, right)`` pads the last axis, ``(left, right, top, bottom)`` the last two, and so on.
Negative amounts crop. The derivative of padding by ``p`` is padding by ``-p`` (cropping
where it padded, zero-padding where it cropped), so one op is its own derivative's op.

>>> import numpy as np
>>> from tinygrad_edu.ops import get_op
>>> get_op("pad").forward(np, np.ones((1, 2)), pad=(1, 2))
array([[0., 1., 1., 0., 0.]])
>>> get_op("pad").forward(np, np.arange(5.0), pad=(-1, -2))
array([1., 2.])
"""

from __future__ import annotations

from .base import REGISTRY, Op, ShapeError, register
from .layer_surface import declare_layer
from .surface import shape_of

__all__ = ["Pad", "pad_widths", "pad_layer"]


def pad_widths(opname: str, shape, pad) -> list[tuple[int, int]]:
    """PyTorch's flat ``pad`` tuple as one ``(before, after)`` pair per axis of ``shape``
    (first axis first); errors name the op, the shape and the pad."""
    try:
        ok = len(pad) % 2 == 0 and all(int(p) == p and not isinstance(p, bool) for p in pad)
        pad = tuple(int(p) for p in pad)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(
            f"pad: pad must be a tuple of ints with an even length (before, after for each "
            f"padded axis, last axis first), got {pad!r}"
        )
    ndim = len(shape)
    if len(pad) // 2 > ndim:
        raise ShapeError(
            f"{opname}: pad {pad} pads {len(pad) // 2} axes, but the input shape "
            f"{tuple(shape)} has only {ndim}"
        )
    widths = [(0, 0)] * ndim
    for k in range(len(pad) // 2):
        widths[ndim - 1 - k] = (pad[2 * k], pad[2 * k + 1])
    for axis, ((b, a), d) in enumerate(zip(widths, shape)):
        if d + b + a < 0:
            raise ShapeError(
                f"{opname}: pad {pad} crops axis {axis} of shape {tuple(shape)} to a negative "
                f"size ({d} {b:+d} {a:+d}); crop less"
            )
    return widths


@register
class Pad(Op):
    r"""Constant padding (``value``) of the last axes; negative amounts crop.

    $\partial L/\partial x$ = ``pad(g, -pad)``: the gradient cropped back (and zero-padded where
    the forward cropped).
    """

    name, torch_name = "pad", "ConstantPadNdBackward0"  # PyTorch's node name

    def forward(self, xp, x, pad, value=0.0):
        widths = pad_widths(self.name, x.shape, pad)
        crop = tuple(slice(max(-b, 0), d - max(-a, 0)) for (b, a), d in zip(widths, x.shape))
        inner = x[crop]
        shape = tuple(d + b + a for (b, a), d in zip(widths, x.shape))
        out = xp.full(shape, value, dtype=x.dtype)  # always a new array, never a view
        put = tuple(slice(max(b, 0), max(b, 0) + n) for (b, _), n in zip(widths, inner.shape))
        out[put] = inner
        return out

    def shape(self, xshape, pad, value=0.0):
        widths = pad_widths(self.name, xshape, pad)
        return tuple(d + b + a for (b, a), d in zip(widths, xshape))

    def vjp(self, F, g, inputs, out, shapes, needs, pad, value=0.0):
        return (F.pad(g, pad=tuple(-int(p) for p in pad)),)

    def onnx(self, ex, node, args):
        widths = pad_widths("pad", ex.need_shape(node.inputs[0], "pad"), node.attrs["pad"])
        pads = [b for b, _ in widths] + [a for _, a in widths]
        value = ex.const(node.attrs.get("value", 0.0), "pad_value",
                           ex.dtype(node.inputs[0]) or "float32")  # fmt: skip
        return ex.one("Pad", [args[0], ex.const(pads, "pads", "int64"), value], "pad")


# -- the layer function (see tinygrad_edu.ops.layer_surface) ------------------------------------
def _pad_amounts(pad) -> tuple[int, ...]:
    try:
        if all(int(p) == p and not isinstance(p, bool) for p in pad):
            return tuple(int(p) for p in pad)
    except (TypeError, ValueError):
        pass
    raise ValueError(f"pad: pad must be a tuple of ints (before, after for each padded axis, "
                     f"last axis first), got {pad!r}")  # fmt: skip


def _pad_index(mode, n, before, after, shape) -> list:
    """The source position of each position of one padded axis (``reflect``, ``replicate``,
    ``circular``)."""
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


def pad_layer(engine):
    apply = engine.apply
    op, getitem = REGISTRY["pad"], REGISTRY["getitem"]

    def pad(input, pad, mode="constant", value=None):
        """Pad the last axes; ``pad`` lists (before, after) amounts from the last axis
        backwards (``(left, right, top, bottom)`` for an image). ``mode``: ``"constant"``
        (with ``value``, default 0; negative amounts crop), ``"reflect"``, ``"replicate"`` or
        ``"circular"``.

        >>> import tinygrad_edu as tg
        >>> pad(tg.tensor([[1.0, 2.0, 3.0]]), (2, 1), mode="reflect").tolist()
        [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]
        """
        x = engine.value("pad", "input", input)
        widths = _pad_amounts(pad)
        if not isinstance(mode, str):
            raise TypeError(
                f"pad: mode must be a string, got {mode!r}; the arguments are PyTorch's, "
                f"pad(input, pad, mode='constant', value=None): for a fill value pass "
                f"value={mode!r}"
            )
        if mode == "constant":
            return apply(op, x, pad=widths, value=0.0 if value is None else value)
        if mode not in ("reflect", "replicate", "circular"):
            raise ValueError(
                f"pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', got {mode!r}"
            )
        if value not in (None, 0):
            raise ValueError(f"pad: value is only used with mode='constant' (mode={mode!r})")
        shape = shape_of("pad", x)
        if len(widths) % 2 or len(widths) // 2 > len(shape) - 1:
            raise ValueError(
                f"pad: mode {mode!r} pads at most the last {len(shape) - 1} axes of an input of "
                f"shape {shape} with (before, after) pairs, got pad {widths}"
            )
        for k in range(len(widths) // 2):
            axis = len(shape) - 1 - k
            before, after = widths[2 * k], widths[2 * k + 1]
            if before == after == 0:
                continue
            idx = _pad_index(mode, shape[axis], before, after, shape)
            x = apply(getitem, x, index=(Ellipsis, engine.index(x, idx)) + (slice(None),) * k)
        return x

    return pad


declare_layer("pad", pad_layer)
