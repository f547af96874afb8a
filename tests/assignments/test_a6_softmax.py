r"""Assignment A6: a fused kernel by hand (softmax's forward and backward as loops, lesson 17).

Tasks (the functions to write, in the library):

- A6.1 ``symbolic/static/handwritten.py`` ``softmax_forward(x, out)``: softmax over the last
  axis of a 2-D array, written into ``out``, one row at a time: the row's largest value,
  the sum of ``exp(x - max)``, then the values. No ``exp`` may overflow at large logits,
  and each element is read a few times, not once per element of its row.
- A6.2 ``symbolic/static/handwritten.py`` ``softmax_backward(y, g, out)``: the gradient with
  respect to softmax's input, ``y * (g - <g, y>)`` row by row, with the dot product computed
  once per row.

Your kernels get :class:`probes_a6.Grid` objects: arrays that hand out one element at a
time and count reads and writes (the memory traffic of lesson 17); the same functions must
also compile with numba where it is installed. The expected values are worked out here in
float64: the forward with numpy, the backward by central differences of the forward.
"""

import numpy as np
import pytest

from . import probes_a6 as probes

# a kernel may go over memory a few times per element (max, sum, values: 3 reads and a
# write), never once per element of its row
ACCESSES_PER_ELEMENT = 6


def _rows(shape, seed, scale=1.0, shift=0.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale + shift


def softmax_rows(x):
    """Softmax over the last axis, in numpy (the value the kernel's loops must give)."""
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def softmax_vjp(x, g, eps=1e-6):
    """d sum(g * softmax(x)) / dx by central differences, element by element."""
    out = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[index] += eps
        lo[index] -= eps
        out[index] = ((g * softmax_rows(hi)).sum() - (g * softmax_rows(lo)).sum()) / (2 * eps)
    return out


def _close(a, b, rtol=1e-9) -> bool:
    return np.allclose(a, b, rtol=rtol, atol=1e-12)


def _check_forward(got, x):
    want = softmax_rows(x)
    assert got["returned"] is None, (f"softmax_forward returned a {got['returned']}: write the "
                                     "result into out[r, c] and return nothing")  # fmt: skip
    out = got["out"]
    assert out.shape == want.shape
    error = got["error"] or ""
    bad = ~np.isfinite(out).all(axis=1)  # rows with nan or inf (or never written)
    biggest = x.max(axis=1)
    if error.startswith("OverflowError") or (bad & (biggest > 709)).any():
        raise AssertionError(
            f"softmax_forward overflowed at logits up to {x.max():.0f} ({error or 'nan'}): "
            "exp(1000.0) is too large for a float. Subtract each row's largest value before "
            "exp: softmax does not change, and the largest exponent is 0")
    if error.startswith("ZeroDivisionError") or (bad & (biggest < x.max() - 700)).any():
        raise AssertionError(
            "softmax_forward failed on rows whose values lie far below the array's largest "
            f"({error or 'nan'}): every exp of those rows underflowed to 0. Subtract each "
            "row's own largest value, not the whole array's")
    assert not error, f"softmax_forward raised {error}"
    assert not bad.any(), (f"{int(bad.sum())} rows of out hold nan or inf (or were never "
                           "written): write out[r, c] for every row and column")  # fmt: skip
    if x.shape[0] > 1 and _close(out, softmax_rows(x.T).T) and not _close(out, want):
        raise AssertionError("softmax_forward normalised each column: softmax is over the "
                             "last axis, each row of out sums to 1")  # fmt: skip
    e = np.exp(x - x.max(axis=1, keepdims=True))
    if _close(out, e) and not _close(e, want):
        raise AssertionError("each row of out must sum to 1: divide exp(x - max) by the "
                             "row's sum")  # fmt: skip
    np.testing.assert_allclose(out, want, rtol=1e-10, atol=1e-14,
                               err_msg=f"softmax of {x.shape[0]} rows of {x.shape[1]}")


def _check_backward(got, x, y, g):
    want = softmax_vjp(x, g)
    assert got["returned"] is None, (f"softmax_backward returned a {got['returned']}: write the "
                                     "result into out[r, c] and return nothing")  # fmt: skip
    out = got["out"]
    assert not got["error"], f"softmax_backward raised {got['error']}"
    untouched = int(np.isnan(out).sum())
    assert not untouched, (f"{untouched} of {out.size} elements of out were never written: "
                           "write out[r, c] for every row and column")  # fmt: skip
    if _close(out, y * g) and not _close(want, y * g, rtol=1e-6):
        raise AssertionError(
            "softmax_backward gave y * g: that is the Jacobian's diagonal part only. Each "
            "output of a row depends on every input of the row: subtract the row's dot "
            "product <g, y> from g first")
    by_column = y * (g - (g * y).sum(axis=0, keepdims=True))
    if _close(out, by_column) and not _close(want, by_column, rtol=1e-6):
        raise AssertionError(
            "softmax_backward summed g * y down each column: the dot product is over the row "
            "(the last axis), the axis softmax normalised")
    diagonal = y * g * (1 - y)
    if _close(out, diagonal) and not _close(want, diagonal, rtol=1e-6):
        raise AssertionError(
            "softmax_backward gave g * y * (1 - y), the derivative of each output by its own "
            "input only: the other inputs of the row change it too (-y_c y_k), which the "
            "row's dot product <g, y> adds up")
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-9,
                               err_msg="the gradient against central differences of softmax")


def _check_traffic(got, names, shape):
    elements = shape[0] * shape[1]
    counts = {n: got["traffic"][n]["reads"] + got["traffic"][n]["writes"] for n in names}
    total = sum(counts.values())
    assert total <= ACCESSES_PER_ELEMENT * elements, (
        f"the kernel made {total} reads and writes for {elements} elements ({counts}): "
        f"more than {ACCESSES_PER_ELEMENT} per element. Compute each row's totals once, "
        "keep them in a local variable, and reuse them for every column of the row")
    assert got["traffic"]["out"]["writes"] >= elements, got["traffic"]


# -- A6.1: softmax's forward -------------------------------------------------------------------
@pytest.mark.task("A6.1")
@pytest.mark.points(2)
def test_forward_gives_softmax_of_each_row(run):
    """softmax_forward: 3 rows of 5 values, each row of out positive and summing to 1"""
    x = _rows((3, 5), 0)
    _check_forward(run(probes.forward, x=x), x)


@pytest.mark.task("A6.1")
@pytest.mark.points(2)
def test_forward_does_not_overflow_at_large_logits(run):
    """softmax_forward: logits near +1000 in one row and -1000 in another"""
    x = np.vstack([_rows((1, 6), 1, 3.0, 1000.0), _rows((1, 6), 2, 3.0, -1000.0),
                   _rows((1, 6), 3)])  # fmt: skip
    _check_forward(run(probes.forward, x=x), x)


@pytest.mark.task("A6.1")
@pytest.mark.points(2)
def test_forward_reads_each_element_a_few_times(run):
    """softmax_forward: at most 6 reads and writes per element on 4 rows of 32"""
    x = _rows((4, 32), 4)
    got = run(probes.forward, x=x)
    _check_forward(got, x)
    assert got["traffic"]["x"]["writes"] == 0
    _check_traffic(got, ("x", "out"), x.shape)


@pytest.mark.task("A6.1")
@pytest.mark.points(1)
def test_forward_compiles_with_numba(run):
    """softmax_forward compiled by numba (as Python without numba): right values"""
    x, g = _rows((5, 7), 5), _rows((5, 7), 6)
    got = run(probes.with_numba, x=x, g=g)  # (as Python on numpy arrays without numba)
    how = "compiled by numba" if got["numba"] else "run on numpy arrays (numba not installed)"
    np.testing.assert_allclose(got["forward"], softmax_rows(x), rtol=1e-10, atol=1e-14,
                               err_msg=f"softmax_forward {how}")  # fmt: skip


# -- A6.2: softmax's backward ------------------------------------------------------------------
@pytest.mark.task("A6.2")
@pytest.mark.points(2)
def test_backward_matches_central_differences(run):
    """softmax_backward: 3 rows of 5, against central differences of softmax"""
    x, g = _rows((3, 5), 7), _rows((3, 5), 8)
    y = softmax_rows(x)
    _check_backward(run(probes.backward, y=y, g=g), x, y, g)


@pytest.mark.task("A6.2")
@pytest.mark.points(1)
def test_backward_ignores_a_constant_added_to_a_row_of_g(run):
    """softmax_backward: g and g plus a constant per row give one gradient (rows sum to 1)"""
    x, g = _rows((2, 6), 9), _rows((2, 6), 15)
    y = softmax_rows(x)
    shifted = g + np.array([[3.0], [-2.0]])
    first = run(probes.backward, y=y, g=g)
    _check_backward(first, x, y, g)
    second = run(probes.backward, y=y, g=shifted)
    _check_backward(second, x, y, shifted)
    np.testing.assert_allclose(second["out"], first["out"], rtol=1e-9, atol=1e-12,
                               err_msg="a constant added to a row of g changes no gradient")


@pytest.mark.task("A6.2")
@pytest.mark.points(2)
def test_backward_reads_each_element_a_few_times(run):
    """softmax_backward: at most 6 reads and writes per element on 4 rows of 32"""
    x, g = _rows((4, 32), 10), _rows((4, 32), 11)
    y = softmax_rows(x)
    got = run(probes.backward, y=y, g=g)
    _check_backward(got, x, y, g)
    _check_traffic(got, ("y", "g", "out"), x.shape)


@pytest.mark.task("A6.2")
@pytest.mark.points(1)
def test_backward_compiles_with_numba(run):
    """softmax_backward compiled by numba (as Python without numba): right values"""
    x, g = _rows((5, 7), 12), _rows((5, 7), 13)
    y = softmax_rows(x)
    _check_backward(run(probes.backward, y=y, g=g), x, y, g)  # (the Python kernel first)
    got = run(probes.with_numba, x=x, g=g)  # (as Python on numpy arrays without numba)
    how = "compiled by numba" if got["numba"] else "run on numpy arrays (numba not installed)"
    np.testing.assert_allclose(got["backward"], softmax_vjp(x, g), rtol=1e-6, atol=1e-9,
                               err_msg=f"softmax_backward {how}")  # fmt: skip


# BEGIN HIDDEN TESTS
SHAPES = [(1, 1), (4, 1), (1, 9), (6, 3), (2, 40)]


@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A6.1")
@pytest.mark.points(1)
@pytest.mark.parametrize("shape", SHAPES)
def test_forward_of_other_shapes(run, shape):
    """softmax_forward: {shape}, values spread over +-50"""
    x = _rows(shape, sum(shape), 25.0)
    got = run(probes.forward, x=x)
    _check_forward(got, x)
    _check_traffic(got, ("x", "out"), shape)


@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A6.1")
@pytest.mark.points(1)
def test_forward_of_equal_and_tied_values(run):
    """softmax_forward: a row of equal values, a row with its largest value twice"""
    x = np.array([[3.0, 3.0, 3.0, 3.0], [1.0, 7.0, -2.0, 7.0]])
    _check_forward(run(probes.forward, x=x), x)


@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A6.2")
@pytest.mark.points(1)
@pytest.mark.parametrize("shape", SHAPES)
def test_backward_of_other_shapes(run, shape):
    """softmax_backward: {shape}, against central differences"""
    x, g = _rows(shape, 2 * sum(shape), 2.0), _rows(shape, 3 * sum(shape))
    y = softmax_rows(x)
    got = run(probes.backward, y=y, g=g)
    _check_backward(got, x, y, g)
    _check_traffic(got, ("y", "g", "out"), shape)


@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A6.2")
@pytest.mark.points(1)
def test_backward_at_a_saturated_softmax(run):
    """softmax_backward: rows where one value takes almost all the weight"""
    x = np.array([[12.0, 0.0, -4.0, 1.0], [0.5, 0.4, 14.0, 0.3]])
    g = _rows(x.shape, 14)
    y = softmax_rows(x)
    _check_backward(run(probes.backward, y=y, g=g), x, y, g)
# END HIDDEN TESTS
