"""Assignment A6's graded checks reject the mistakes students make writing softmax's kernels,
each with a message that names the mistake.

Each recorded wrong answer below replaces the library's kernel for its task, and the task's
graded tests (``test_a6_softmax.py``, hidden ones included) run on it in this process: at
least one of them must fail, and a failure's message must name the mistake (the words
recorded with it). The right answer passes every one of them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tinygrad_edu.symbolic.static import handwritten

from . import test_a6_softmax as suite
from .test_wrong_answers_a5 import graded_cases, graded_failures


def _cases(task: str) -> list:
    return graded_cases(suite, task)


def _failures(task: str) -> list:
    return graded_failures(suite, task)


# -- recorded wrong answers of A6.1 (softmax_forward) ---------------------------------------------
def _row_max(x, r):
    top = x[r, 0]
    for c in range(1, x.shape[1]):
        top = max(top, x[r, c])
    return top


def _forward_without_max(x, out):  # exp(1000.0) overflows
    for r in range(x.shape[0]):
        s = sum(math.exp(x[r, c]) for c in range(x.shape[1]))
        for c in range(x.shape[1]):
            out[r, c] = math.exp(x[r, c]) / s


def _forward_global_max(x, out):  # rows far below the array's largest underflow to 0
    top = max(_row_max(x, r) for r in range(x.shape[0]))
    for r in range(x.shape[0]):
        s = sum(math.exp(x[r, c] - top) for c in range(x.shape[1]))
        for c in range(x.shape[1]):
            out[r, c] = math.exp(x[r, c] - top) / s


def _forward_by_column(x, out):  # normalised over axis 0
    for c in range(x.shape[1]):
        top = max(x[r, c] for r in range(x.shape[0]))
        s = sum(math.exp(x[r, c] - top) for r in range(x.shape[0]))
        for r in range(x.shape[0]):
            out[r, c] = math.exp(x[r, c] - top) / s


def _forward_not_normalised(x, out):
    for r in range(x.shape[0]):
        top = _row_max(x, r)
        for c in range(x.shape[1]):
            out[r, c] = math.exp(x[r, c] - top)


def _forward_sum_per_element(x, out):  # right values, the row read again for every element
    for r in range(x.shape[0]):
        for c in range(x.shape[1]):
            top = _row_max(x, r)
            s = sum(math.exp(x[r, k] - top) for k in range(x.shape[1]))
            out[r, c] = math.exp(x[r, c] - top) / s


def _forward_returns_a_new_array(x, out):
    rows, cols = x.shape
    y = np.empty((rows, cols))
    for r in range(rows):
        top = _row_max(x, r)
        s = sum(math.exp(x[r, c] - top) for c in range(cols))
        for c in range(cols):
            y[r, c] = math.exp(x[r, c] - top) / s
    return y


def _forward_exp_into_x(x, out):  # the exponentials stored in the input
    for r in range(x.shape[0]):
        top = _row_max(x, r)
        for c in range(x.shape[1]):
            x[r, c] = math.exp(x[r, c] - top)
        s = sum(x[r, c] for c in range(x.shape[1]))
        for c in range(x.shape[1]):
            out[r, c] = x[r, c] / s


def _forward_numpy_on_a_row(x, out):  # a whole-array call: not a loop kernel
    e = np.exp(np.asarray(x) - np.max(x, axis=1, keepdims=True))
    out[:, :] = e / e.sum(axis=1, keepdims=True)


# -- recorded wrong answers of A6.2 (softmax_backward) --------------------------------------------
def _backward(y, g, out, rule):
    for r in range(y.shape[0]):
        dot = sum(g[r, k] * y[r, k] for k in range(y.shape[1]))
        for c in range(y.shape[1]):
            out[r, c] = rule(y[r, c], g[r, c], dot)


def _backward_without_the_sum(y, g, out):
    _backward(y, g, out, lambda yc, gc, dot: yc * gc)


def _backward_diagonal_only(y, g, out):
    _backward(y, g, out, lambda yc, gc, dot: gc * yc * (1 - yc))


def _backward_sign_flipped(y, g, out):
    _backward(y, g, out, lambda yc, gc, dot: yc * (gc + dot))


def _backward_by_column(y, g, out):  # the dot product down each column
    for c in range(y.shape[1]):
        dot = sum(g[r, c] * y[r, c] for r in range(y.shape[0]))
        for r in range(y.shape[0]):
            out[r, c] = y[r, c] * (g[r, c] - dot)


def _backward_dot_per_element(y, g, out):  # right values, the row read again per element
    for r in range(y.shape[0]):
        for c in range(y.shape[1]):
            dot = sum(g[r, k] * y[r, k] for k in range(y.shape[1]))
            out[r, c] = y[r, c] * (g[r, c] - dot)


WRONG = [
    ("A6.1", "softmax_forward", "no max subtracted (overflow)", _forward_without_max,
     "Subtract each row's largest value"),
    ("A6.1", "softmax_forward", "the whole array's max (underflow)", _forward_global_max,
     "not the whole array's"),
    ("A6.1", "softmax_forward", "normalised over the columns", _forward_by_column,
     "normalised each column"),
    ("A6.1", "softmax_forward", "not divided by the row's sum", _forward_not_normalised,
     "divide exp(x - max) by the row's sum"),
    ("A6.1", "softmax_forward", "the row's sum recomputed per element", _forward_sum_per_element,
     "Compute each row's totals once"),
    ("A6.1", "softmax_forward", "a new array returned", _forward_returns_a_new_array,
     "return nothing"),
    ("A6.1", "softmax_forward", "the exponentials written into x", _forward_exp_into_x,
     "writes only into out"),
    ("A6.1", "softmax_forward", "numpy on the whole array", _forward_numpy_on_a_row,
     "one element at a time"),
    ("A6.2", "softmax_backward", "y * g, the sum term missing", _backward_without_the_sum,
     "diagonal part only"),
    ("A6.2", "softmax_backward", "the Jacobian's diagonal only", _backward_diagonal_only,
     "its own input only"),
    ("A6.2", "softmax_backward", "the sum added, not subtracted", _backward_sign_flipped,
     "central differences"),
    ("A6.2", "softmax_backward", "the dot product down the columns", _backward_by_column,
     "summed g * y down each column"),
    ("A6.2", "softmax_backward", "the dot product recomputed per element",
     _backward_dot_per_element, "Compute each row's totals once"),
]  # fmt: skip


def test_the_reference_passes_every_graded_check():
    assert len(_cases("A6.1")) >= 8 and len(_cases("A6.2")) >= 8
    for task in ("A6.1", "A6.2"):
        assert _failures(task) == [], task


@pytest.mark.parametrize("task, name, what, wrong, named", WRONG, ids=[w[2] for w in WRONG])
def test_a_recorded_wrong_answer_fails_naming_the_mistake(monkeypatch, task, name, what, wrong,
                                                          named):  # fmt: skip
    monkeypatch.setattr(handwritten, name, wrong)
    failed = _failures(task)
    assert failed, f"{task}: the graded tests accept a wrong {name}: {what}"
    messages = [message for _, _, message in failed]
    assert any(named in m for m in messages), (what, messages[:3])


@pytest.mark.parametrize("task, name, what, wrong, named", WRONG, ids=[w[2] for w in WRONG])
def test_without_numba_no_check_passes_a_wrong_kernel_unseen(monkeypatch, task, name, what,
                                                             wrong, named):  # fmt: skip
    """The autograder's environment need not have numba: the checks that compile a kernel
    with it then run the kernel as Python on numpy arrays, and still check its values (they
    once passed whenever numba was missing, whatever the kernel, and a forged answer to the
    first probe made an unwritten A6.2 score that point)."""
    from tinygrad_edu.symbolic.static import kernels

    from . import probes_a6

    monkeypatch.setattr(kernels, "available", lambda: False)
    x = np.linspace(-3.0, 4.0, 35).reshape(5, 7)
    g = np.cos(np.arange(35.0)).reshape(5, 7)
    right = probes_a6.with_numba(x, g)
    monkeypatch.setattr(handwritten, name, wrong)
    try:
        got = probes_a6.with_numba(x, g)
        key = "forward" if task == "A6.1" else "backward"
        values_wrong = not np.allclose(got[key], right[key], rtol=1e-9, atol=1e-12)
    except Exception:  # noqa: BLE001 (a wrong kernel that raises on numpy arrays)
        values_wrong = True
    failed = {fn_name for fn_name, _, _ in _failures(task)}
    numba_tests = [fn.__name__ for fn, _ in _cases(task) if "numba" in fn.__name__]
    assert numba_tests, task
    if values_wrong:  # (a kernel with right values but too much traffic fails elsewhere)
        assert set(numba_tests) <= failed, (what, failed)
    assert failed, what
