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

from .base import Op, ShapeError, register

__all__ = ["Pad", "pad_widths"]


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
