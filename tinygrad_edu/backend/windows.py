r"""Sliding windows over the last two axes of an array: the view that im2col is made of.

``sliding_windows(xp, x, (kh, kw), stride, dilation)`` turns ``x`` of shape ``(..., H, W)``
into ``(..., OH, OW, kh, kw)``: element ``[..., p, q, i, j]`` is
``x[..., p*sh + i*dh, q*sw + j*dw]``. numpy and CuPy give it as a *view* (no copy: new strides
over the same memory, ``as_strided``); a namespace without stride tricks (the strict Array API)
gets the same values by stacking ``kh * kw`` strided slices.

This is the only namespace-specific piece the convolution and pooling ops need, so it lives
here in the backend and the ops stay namespace-agnostic.

>>> import numpy as np
>>> x = np.arange(16.0).reshape(1, 1, 4, 4)
>>> w = sliding_windows(np, x, (2, 2), (2, 2), (1, 1))
>>> w.shape, np.shares_memory(w, x)
((1, 1, 2, 2, 2, 2), True)
>>> w[0, 0, 1, 0]  # the window at output row 1, column 0
array([[ 8.,  9.],
       [12., 13.]])
"""

from __future__ import annotations

__all__ = ["sliding_windows", "window_count"]


def window_count(size: int, kernel: int, stride: int, dilation: int) -> int:
    """How many windows fit along an axis of ``size``: $\\lfloor (n - d(k-1) - 1)/s \\rfloor + 1$
    (0 or less when none fits)."""
    return (size - dilation * (kernel - 1) - 1) // stride + 1


def _as_strided(xp):
    """The namespace's ``as_strided`` (numpy, CuPy), or None."""
    tricks = getattr(getattr(xp, "lib", None), "stride_tricks", None)
    return getattr(tricks, "as_strided", None)


def sliding_windows(xp, x, kernel, stride, dilation):
    """``x`` of shape ``(..., H, W)`` as windows ``(..., OH, OW, kh, kw)``.

    Args:
        xp: the array namespace of ``x``.
        x: the (already padded) array.
        kernel, stride, dilation: pairs ``(rows, columns)``.

    Returns:
        A read-only view where the namespace has stride tricks (never write into it: windows
        overlap, so one memory cell appears in several places), else a new array.
    """
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    H, W = x.shape[-2], x.shape[-1]
    oh, ow = window_count(H, kh, sh, dh), window_count(W, kw, sw, dw)
    lead = tuple(x.shape[:-2])
    as_strided = _as_strided(xp)
    if as_strided is not None:
        *lead_strides, rs, cs = x.strides  # bytes, as numpy and CuPy count them
        return as_strided(
            x,
            shape=lead + (oh, ow, kh, kw),
            strides=(*lead_strides, rs * sh, cs * sw, rs * dh, cs * dw),
            **({"writeable": False} if xp.__name__ == "numpy" else {}),
        )
    parts = [
        x[..., i * dh : i * dh + sh * (oh - 1) + 1 : sh, j * dw : j * dw + sw * (ow - 1) + 1 : sw]
        for i in range(kh)
        for j in range(kw)
    ]
    stacked = xp.stack(parts, axis=-1)  # (..., OH, OW, kh*kw)
    return xp.reshape(stacked, lead + (oh, ow, kh, kw))
