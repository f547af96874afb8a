r"""Softmax's forward and backward written by hand as loop kernels (assignment A6, lesson 17).

The fusing backend (:mod:`~tinygrad_edu.symbolic.static.fusion`) writes its kernels from the
graph; here the same kind of kernel is written by a person, as in a CUDA or Triton course:
one row of a 2-D array at a time, each element read from memory as few times as the
computation allows, every intermediate value kept in a local variable (a register), never
in a whole array of its own.

A kernel takes its arrays and writes its result into ``out`` (allocated by the caller, as
the generated kernels' ``o`` arguments are). It uses only what numba compiles: ``x.shape``,
``x[r, c]`` of one element, ``range``, ``math.exp`` and plain arithmetic on floats. The same
function then runs as Python (slow, but anywhere) and, where numba is installed, as machine
code (:func:`compiled`).

- :func:`softmax_forward`: ``out[r, c] = exp(x[r, c] - m_r) / sum_k exp(x[r, k] - m_r)``,
  with ``m_r`` the row's largest value: subtracting it changes nothing mathematically and
  keeps ``exp`` from overflowing at large logits.
- :func:`softmax_backward`: given ``y = softmax(x)`` and ``g = dL/dy``,
  ``dL/dx[r, c] = y[r, c] (g[r, c] - sum_k g[r, k] y[r, k])``: softmax's Jacobian
  ``diag(y) - y yᵀ`` applied to ``g``, one row at a time, without forming it.

>>> import numpy as np
>>> x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
>>> y = softmax(x)
>>> np.round(y, 4).tolist()
[[0.09, 0.2447, 0.6652], [0.3333, 0.3333, 0.3333]]
>>> np.allclose(softmax_grad(y, np.ones_like(y)), 0.0)  # a softmax row always sums to 1
True
"""

from __future__ import annotations

import math  # noqa: F401 - the kernels' own namespace (math.exp), as numba reads it

import numpy as np

from . import kernels

__all__ = ["softmax_forward", "softmax_backward", "compiled", "softmax", "softmax_grad"]


def softmax_forward(x, out):
    """Softmax over the last axis of the 2-D array ``x`` (rows × columns), written into
    ``out`` (same shape): each row of ``out`` is positive and sums to 1.

    Subtract each row's largest value before ``exp`` (``exp(1000.0)`` overflows); read each
    element of ``x`` a few times at most (a pass for the max, one for the sum, one for the
    result: never once per element of its row), and keep no array of intermediate values."""
    # BEGIN SOLUTION A6.1
    rows, cols = x.shape
    for r in range(rows):
        biggest = x[r, 0]
        for c in range(1, cols):
            v = x[r, c]
            if v > biggest:
                biggest = v
        denominator = 0.0
        for c in range(cols):
            denominator += math.exp(x[r, c] - biggest)
        for c in range(cols):
            out[r, c] = math.exp(x[r, c] - biggest) / denominator
    # END SOLUTION


def softmax_backward(y, g, out):
    """The gradient of a loss with respect to softmax's input, written into ``out``: ``y`` is
    the forward's result, ``g`` the loss's gradient with respect to ``y`` (both rows ×
    columns). For each row, ``out = y * (g - <g, y>)`` where ``<g, y>`` is the row's dot
    product: compute that once per row, then one pass for the result."""
    # BEGIN SOLUTION A6.2
    rows, cols = y.shape
    for r in range(rows):
        weighted = 0.0
        for c in range(cols):
            weighted += g[r, c] * y[r, c]
        for c in range(cols):
            out[r, c] = y[r, c] * (g[r, c] - weighted)
    # END SOLUTION


_jitted: dict = {}


def compiled(kernel):
    """``kernel`` compiled by numba (``numba.njit``), or ``kernel`` itself where numba is not
    installed. Compiled once per function object (rewriting the function in a notebook makes
    a new one, compiled again)."""
    if not kernels.available():
        return kernel
    hit = _jitted.get(kernel)
    if hit is None:
        import numba  # noqa: PLC0415 - the optional `fuse` extra

        hit = _jitted[kernel] = numba.njit(error_model="numpy")(kernel)
    return hit


def _rows(a, what: str) -> np.ndarray:
    a = np.asarray(a)
    if a.ndim != 2 or a.dtype.kind != "f":
        raise ValueError(f"softmax kernel: {what} must be a 2-D float array (rows × columns), "
                         f"got shape {a.shape} and dtype {a.dtype}: reshape it to "
                         "(-1, columns) and cast with astype(np.float64)")  # fmt: skip
    if a.shape[1] == 0:
        raise ValueError(f"softmax kernel: {what} has no columns (shape {a.shape}): a softmax "
                         "row needs at least one value")  # fmt: skip
    return np.ascontiguousarray(a)


def softmax(x) -> np.ndarray:
    """Softmax over the last axis of the 2-D float array ``x``, by :func:`softmax_forward`
    (compiled with numba where it is installed)."""
    x = _rows(x, "x")
    out = np.empty_like(x)
    compiled(softmax_forward)(x, out)
    return out


def softmax_grad(y, g) -> np.ndarray:
    """The gradient with respect to softmax's input, by :func:`softmax_backward`: ``y`` is
    softmax's result, ``g`` the gradient with respect to it (2-D float arrays of one shape)."""
    y, g = _rows(y, "y"), _rows(g, "g")
    if y.shape != g.shape or y.dtype != g.dtype:
        raise ValueError(f"softmax kernel: y and g must match, got y {y.shape} {y.dtype} and "
                         f"g {g.shape} {g.dtype}: g is the gradient with respect to y, of its "
                         "shape and dtype")  # fmt: skip
    out = np.empty_like(y)
    compiled(softmax_backward)(y, g, out)
    return out
