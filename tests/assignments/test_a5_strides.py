r"""Assignment A5: strided views (a tensor as a window on its storage, lesson 16).

Tasks (the functions to write, in the library):

- A5.1 ``eager/anatomy.py`` ``_extent``: how far into its storage a window ``(size, stride,
  offset)`` reaches (one past the last element it reads; ``offset`` for an empty window).
  ``x.as_strided`` uses it to refuse a window that reads past the storage.
- A5.2 ``eager/anatomy.py`` ``_cells``: the storage element that each element of a window
  reads, ``offset + i_0 * stride_0 + ... + i_{n-1} * stride_{n-1}``, in the window's
  row-major order. ``as_strided``'s backward uses it to add each gradient element into the
  storage element it came from (an element read twice gets both).

The same arithmetic as needle's ``NDArray.as_strided``/``compact`` and minitorch's
``index_to_position``. Each test runs a probe (``probes_a5.py``) on your code through the
``run`` fixture; the expected numbers are worked out here element by element.
"""

import itertools

import numpy as np
import pytest

from . import probes_a5 as probes


def every_cell(size, stride, offset) -> list:
    """The cells a window reads, one index tuple at a time (row-major: the last index
    fastest)."""
    return [offset + sum(i * s for i, s in zip(index, stride))
            for index in itertools.product(*(range(n) for n in size))]  # fmt: skip


def reach(size, stride, offset) -> int:
    cells = every_cell(size, stride, offset)
    return max(cells) + 1 if cells else offset


def grad_by_hand(n, size, stride, offset, weights) -> np.ndarray:
    """d sum(w * x.as_strided(...)) / dx for a base ``x`` that is its own storage: each weight
    lands on the element it multiplied, summed where the window reads an element twice."""
    g = np.zeros(n)
    for cell, w in zip(every_cell(size, stride, offset), np.ravel(weights)):
        g[cell] += w
    return g


# windows: (size, stride, offset), over a storage of at least reach() elements
CONTIGUOUS = [((3, 4), (4, 1), 0), ((2, 3, 4), (12, 4, 1), 0), ((5,), (1,), 7)]
TRANSPOSED = [((4, 3), (1, 4), 0), ((3, 2), (1, 4), 1), ((2, 2, 3), (1, 6, 2), 1)]
OVERLAPPING = [((3, 4), (0, 1), 2), ((3, 3), (1, 1), 0), ((2, 3), (2, 0), 1), ((4,), (0,), 3)]
EMPTY = [((0,), (1,), 0), ((3, 0), (4, 1), 5), ((0, 2), (0, 0), 2)]
SCALAR = [((), (), 0), ((), (), 4)]


def _check_extents(got, windows):
    want = [reach(*w) for w in windows]
    assert isinstance(got, list) and len(got) == len(want), got
    for (size, stride, offset), g, w in zip(windows, got, want):
        assert g == w, (f"a window of size {size}, stride {stride}, offset {offset} reaches "
                        f"{w} elements into its storage; _extent said {g}")  # fmt: skip


def _check_cells(got, size, stride, offset):
    want = every_cell(size, stride, offset)
    assert got["shape"] == [len(want)], (f"_cells returns one cell per element of the window, "
                                         f"a vector of {len(want)}: got shape {got['shape']}")
    assert got["dtype"] == "int64", f"cells are int64 indices, got {got['dtype']}"
    assert got["cells"] == want, (f"window size {size}, stride {stride}, offset {offset}: "
                                  f"expected the cells {want}, got {got['cells']}")  # fmt: skip


def _storage_for(size, stride, offset) -> int:
    return reach(size, stride, offset) + 2  # a little more than the window needs


def _check_view(got, values, size, stride, offset):
    base = np.asarray(values, dtype=np.float64)
    want = np.asarray([base[c] for c in every_cell(size, stride, offset)]).reshape(size)
    assert got["shape"] == list(size) and got["stride"] == list(stride), got
    assert got["offset"] == offset and got["is_view"], got
    np.testing.assert_array_equal(got["values"], want, err_msg="the view's values")
    np.testing.assert_array_equal(got["after_write"], want + 1000.0,
                                  err_msg="a write into the base shows through the view")


def _check_refused(got, storage, size, stride, offset):
    assert got is not None, (f"a window of size {size}, stride {stride}, offset {offset} "
                             f"reads element {reach(size, stride, offset) - 1}, past a storage "
                             f"of {storage}: as_strided must refuse it")  # fmt: skip
    assert got["type"] == "RuntimeError" and "as_strided" in got["message"], got


def _check_grad(got, n, size, stride, offset, weights, double=False):
    want = grad_by_hand(n, size, stride, offset, weights)
    np.testing.assert_allclose(got["grad"], want, rtol=0, atol=1e-12,
                               err_msg=f"the gradient of as_strided{size, stride, offset}")
    if double:  # d sum(g*g)/dw: each weight's gradient is 2 g[its cell]
        cells = every_cell(size, stride, offset)
        want_w = np.asarray([2 * want[c] for c in cells]).reshape(size)
        np.testing.assert_allclose(got["grad_of_grad"], want_w, rtol=0, atol=1e-12,
                                   err_msg="the gradient of the gradient (create_graph=True)")


def _weights(size, seed=0):
    return np.random.default_rng(seed).integers(-5, 6, size=size).astype(np.float64)


# -- A5.1: how far a window reaches ------------------------------------------------------------
@pytest.mark.task("A5.1")
@pytest.mark.points(1)
def test_extent_of_contiguous_and_transposed_windows(run):
    """_extent: contiguous and transposed windows, with offsets"""
    windows = CONTIGUOUS + TRANSPOSED
    _check_extents(run(probes.extents, windows=windows), windows)


@pytest.mark.task("A5.1")
@pytest.mark.points(1)
def test_extent_of_overlapping_empty_and_0_dim_windows(run):
    """_extent: stride 0, overlapping, empty and 0-dim windows"""
    windows = OVERLAPPING + EMPTY + SCALAR
    _check_extents(run(probes.extents, windows=windows), windows)


@pytest.mark.task("A5.1")
@pytest.mark.points(1)
def test_as_strided_takes_the_whole_storage_and_refuses_one_more(run):
    """as_strided: a window up to the storage's last element is a view; one more is refused"""
    values = np.arange(12.0)
    assert run(probes.refused, n=12, size=(3, 4), stride=(4, 1), offset=0) is None, (
        "a 3x4 window with strides (4, 1) reads elements 0..11 of a 12-element storage: "
        "as_strided must accept it")  # fmt: skip
    got = run(probes.view, values=values, size=(3, 4), stride=(4, 1), offset=0)
    _check_view(got, values, (3, 4), (4, 1), 0)
    for size, stride, offset in [((3, 4), (4, 1), 1), ((2, 7), (6, 1), 0), ((13,), (1,), 0)]:
        got = run(probes.refused, n=12, size=size, stride=stride, offset=offset)
        _check_refused(got, 12, size, stride, offset)


# -- A5.2: the cells a window reads ------------------------------------------------------------
@pytest.mark.task("A5.2")
@pytest.mark.points(1)
@pytest.mark.parametrize("size, stride, offset", CONTIGUOUS)
def test_cells_of_a_contiguous_window_and_its_transpose(run, size, stride, offset):
    """_cells: contiguous window {size}, stride {stride}, offset {offset}, and its transpose"""
    _check_cells(run(probes.cells, size=size, stride=stride, offset=offset), size, stride, offset)
    # the same cells in another order (a 1-dim window: read twice, as expand(2, n) does)
    other = (size[::-1], stride[::-1]) if len(size) > 1 else ((2, *size), (0, *stride))
    _check_cells(run(probes.cells, size=other[0], stride=other[1], offset=offset), *other,
                 offset)  # fmt: skip


@pytest.mark.task("A5.2")
@pytest.mark.points(1)
@pytest.mark.parametrize("size, stride, offset", TRANSPOSED)
def test_cells_of_a_transposed_window_in_row_major_order(run, size, stride, offset):
    """_cells: transposed window {size}, stride {stride}, offset {offset}"""
    _check_cells(run(probes.cells, size=size, stride=stride, offset=offset), size, stride, offset)


@pytest.mark.task("A5.2")
@pytest.mark.points(1)
def test_as_strided_backward_sums_where_a_window_overlaps(run):
    """as_strided backward: an overlapping window's gradient is summed per element"""
    n, size, stride, offset = 8, (3, 3), (1, 1), 1  # a sliding window: elements read 3 times
    w = _weights(size, 1)
    _check_grad(run(probes.view_grad, n=n, size=size, stride=stride, offset=offset, weights=w),
                n, size, stride, offset, w)  # fmt: skip


# BEGIN HIDDEN TESTS
@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A5.2")
@pytest.mark.points(1)
@pytest.mark.parametrize("size, stride, offset", OVERLAPPING + EMPTY + SCALAR)
def test_cells_of_overlapping_empty_and_0_dim_windows(run, size, stride, offset):
    """_cells: window {size}, stride {stride}, offset {offset}"""
    _check_cells(run(probes.cells, size=size, stride=stride, offset=offset), size, stride, offset)


@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A5.2")
@pytest.mark.points(1)
@pytest.mark.parametrize("size, stride, offset", TRANSPOSED + OVERLAPPING[:3])
def test_as_strided_backward_and_its_backward(run, size, stride, offset):
    """as_strided backward and double backward: window {size}, stride {stride}"""
    n = _storage_for(size, stride, offset)
    w = _weights(size, 2)
    got = run(probes.view_grad, n=n, size=size, stride=stride, offset=offset, weights=w,
              double=True)  # fmt: skip
    _check_grad(got, n, size, stride, offset, w, double=True)


@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A5.1")
@pytest.mark.points(1)
@pytest.mark.parametrize("size, stride, offset", TRANSPOSED + OVERLAPPING[:2])
def test_as_strided_views_of_a_storage_just_large_enough(run, size, stride, offset):
    """as_strided: a storage exactly as large as window {size}, stride {stride} needs"""
    n = reach(size, stride, offset)
    values = np.arange(n, dtype=np.float64) * 3 + 1
    _check_view(run(probes.view, values=values, size=size, stride=stride, offset=offset),
                values, size, stride, offset)  # fmt: skip
    bigger = [(tuple(s + (i == 0) for i, s in enumerate(size)), stride, offset)]
    for sz, st, off in bigger:
        if reach(sz, st, off) > n:
            _check_refused(run(probes.refused, n=n, size=sz, stride=st, offset=off), n, sz, st,
                           off)  # fmt: skip
# END HIDDEN TESTS
