"""Probes of assignment A6 (softmax's kernels by hand): they run your code and return plain data.

Called by the graded tests (``test_a6_softmax.py``) through the ``run`` fixture (see
``probes_a1.py``). Your kernels get their arrays as :class:`Grid` objects: 2-D arrays that
hand out one element at a time (``x[r, c]``), as a kernel reads memory, and count every
read and write. A kernel that slices a row, calls a numpy or library function on a whole
array, or writes into an input fails on them with a message that says so: that is work a
loop kernel does itself, element by element.
"""

import numpy as np

from tinygrad_edu.symbolic.static import handwritten  # (its functions looked up on each call)

__all__ = ["Grid", "forward", "backward", "with_numba"]


class Grid:
    """A 2-D float64 array seen one element at a time, its reads and writes counted.

    ``g[r, c]`` reads one element (a Python float), ``g[r, c] = v`` writes one (only into the
    kernel's ``out``); ``g.shape`` is ``(rows, columns)``. Anything else (a slice, ``len``,
    iterating, numpy on the whole grid) raises a ``TypeError`` naming the kernel's argument.
    """

    def __init__(self, values, name: str, writable: bool = False):
        self._a = np.array(values, dtype=np.float64)
        self.shape = self._a.shape
        self.dtype = self._a.dtype
        self.name, self.writable = name, writable
        self.reads = self.writes = 0

    def _index(self, index):
        if not (isinstance(index, tuple) and len(index) == 2 and all(
                isinstance(i, int | np.integer) and not isinstance(i, bool) for i in index)):
            raise TypeError(f"{self.name}[{index!r}]: a kernel reads and writes one element at a "
                            f"time, {self.name}[r, c] with two ints (no slices, no whole "
                            "rows): loop over the columns instead")  # fmt: skip
        r, c = int(index[0]), int(index[1])
        if not (0 <= r < self.shape[0] and 0 <= c < self.shape[1]):
            raise IndexError(f"{self.name}[{r}, {c}] is outside its {self.shape[0]} rows and "
                             f"{self.shape[1]} columns (negative indices are out too)")
        return r, c

    def __getitem__(self, index):
        r, c = self._index(index)
        self.reads += 1
        return float(self._a[r, c])

    def __setitem__(self, index, value):
        if not self.writable:
            raise TypeError(f"the kernel wrote into {self.name}, its input: a kernel writes "
                            "only into out (the caller's inputs must stay as they were)")
        r, c = self._index(index)
        self.writes += 1
        self._a[r, c] = float(value)

    def __array__(self, *args, **kwargs):
        raise TypeError(f"numpy was called on the whole of {self.name}: a loop kernel reads "
                        f"{self.name}[r, c] one element at a time")  # fmt: skip

    def __len__(self):
        raise TypeError(f"len({self.name}): use {self.name}.shape (rows, columns), as numba does")

    def __iter__(self):
        raise TypeError(f"iterating over {self.name}: loop over range({self.name}.shape[0]) "
                        f"and index {self.name}[r, c]")  # fmt: skip

    def values(self):
        return self._a.copy()


def _traffic(grids) -> dict:
    return {g.name: {"reads": g.reads, "writes": g.writes} for g in grids}


def _ran(kernel, grids) -> dict:
    """Run ``kernel``; an arithmetic error (``math.exp`` overflowing, a division by a sum
    that underflowed to 0) is part of the answer, for the test to name the mistake."""
    error = result = None
    try:
        result = kernel()
    except ArithmeticError as e:  # (any other error is the submission's, reported as such)
        error = f"{type(e).__name__}: {e}"
    return {"out": grids[-1].values(), "traffic": _traffic(grids), "error": error,
            "returned": None if result is None else type(result).__name__}  # fmt: skip


def forward(x):
    """``softmax_forward`` on the rows of ``x``: the values written into ``out`` (``nan``
    where nothing was written) and each argument's reads and writes."""
    gx = Grid(x, "x")
    out = Grid(np.full(np.shape(x), np.nan), "out", writable=True)
    return _ran(lambda: handwritten.softmax_forward(gx, out), [gx, out])


def backward(y, g):
    """``softmax_backward`` for the forward's result ``y`` and the gradient ``g``: ``out``'s
    values and each argument's reads and writes."""
    gy, gg = Grid(y, "y"), Grid(g, "g")
    out = Grid(np.full(np.shape(y), np.nan), "out", writable=True)
    return _ran(lambda: handwritten.softmax_backward(gy, gg, out), [gy, gg, out])


def with_numba(x, g):
    """Both kernels compiled by numba (``handwritten.compiled``) and run on numpy arrays, or,
    where numba is not installed, run as plain Python on numpy arrays: ``{"numba": whether
    numba compiled them, "forward": ..., "backward": ...}``. They run as Python first (on
    grids), so an unwritten kernel says so before numba sees it."""
    forward(x)
    from tinygrad_edu.symbolic.static import kernels

    numba = kernels.available()
    compile_ = handwritten.compiled if numba else (lambda fn: fn)
    x = np.ascontiguousarray(x, dtype=np.float64)
    y = np.full_like(x, np.nan)
    compile_(handwritten.softmax_forward)(x, y)
    dx = np.full_like(x, np.nan)
    compile_(handwritten.softmax_backward)(y, np.asarray(g, dtype=np.float64), dx)
    return {"numba": numba, "forward": y, "backward": dx}
