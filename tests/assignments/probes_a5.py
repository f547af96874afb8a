"""Probes of assignment A5 (strided views): they run your code and return plain data.

Called by the graded tests (``test_a5_strides.py``) through the ``run`` fixture (see
``probes_a1.py``). A window is ``(size, stride, offset)`` in elements, as PyTorch's
``x.as_strided(size, stride, storage_offset)`` takes it.
"""

import numpy as np

import tinygrad_edu as tg
from tinygrad_edu.eager import anatomy  # (its functions looked up on each call)

__all__ = ["extent", "extents", "cells", "view", "refused", "view_grad"]


def extent(size, stride, offset):
    """``_extent``: how far into its storage a window reaches."""
    return int(anatomy._extent(tuple(size), tuple(stride), int(offset)))


def extents(windows):
    """``_extent`` of each ``[size, stride, offset]`` in ``windows``."""
    return [extent(*w) for w in windows]


def cells(size, stride, offset):
    """``_cells`` on numpy: the storage cell each element of the window reads, in order."""
    got = anatomy._cells(np, tuple(size), tuple(stride), int(offset))
    got = np.asarray(got)
    return {"cells": [int(c) for c in got.reshape(-1)], "shape": list(got.shape),
            "dtype": str(got.dtype)}  # fmt: skip


def view(values, size, stride, offset):
    """``tg.tensor(values).as_strided(size, stride, offset)``: its values, and whether it is a
    view of the same memory (a write into the base shows through it)."""
    base = tg.tensor(np.asarray(values, dtype=np.float64))
    v = base.as_strided(tuple(size), tuple(stride), int(offset))
    before = v.numpy().copy()
    with tg.no_grad():
        base.add_(1000.0)
    return {"values": before, "after_write": v.numpy().copy(), "shape": list(v.shape),
            "stride": list(v.stride()), "offset": int(v.storage_offset()),
            "is_view": bool(v._is_view())}  # fmt: skip


def refused(n, size, stride, offset):
    """``as_strided`` on a storage of ``n`` elements: the error it raised (type, message), or
    None when it made the view."""
    base = tg.tensor(np.arange(n, dtype=np.float64))
    try:
        base.as_strided(tuple(size), tuple(stride), int(offset))
    except NotImplementedError:
        raise
    except Exception as error:  # noqa: BLE001 - the error itself is the answer
        return {"type": type(error).__name__, "message": str(error)}
    return None


def view_grad(n, size, stride, offset, weights, double=False):
    """The gradient of ``sum(weights * x.as_strided(size, stride, offset))`` with respect to
    ``x`` (``n`` elements); with ``double``, also the gradient of ``sum(g * g)`` with respect
    to the weights through ``create_graph=True`` (the backward's own backward)."""
    x = tg.tensor(np.linspace(-1.0, 1.0, n), requires_grad=True)
    w = tg.tensor(np.asarray(weights, dtype=np.float64), requires_grad=True)
    y = (x.as_strided(tuple(size), tuple(stride), int(offset)) * w).sum()
    (g,) = tg.autograd.grad(y, [x], create_graph=double)
    out = {"grad": g.detach().numpy().copy()}
    if double:
        (gw,) = tg.autograd.grad((g * g).sum(), [w])
        out["grad_of_grad"] = gw.numpy().copy()
    return out
