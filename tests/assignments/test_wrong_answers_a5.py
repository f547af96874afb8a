"""Assignment A5's graded checks reject the mistakes students make with strides.

Each recorded wrong answer below replaces the library's function for its task, and the task's
graded tests (``test_a5_strides.py``, hidden ones included) run on it in this process: at
least one of them must fail (a check, or the code under test raising, as the autograder
reports it). The right answer passes every one of them, so a failure here is the wrong
answer's, not the suite's.
"""

from __future__ import annotations

import itertools
import math

import pytest

from tinygrad_edu.eager import anatomy

from . import test_a5_strides as suite


def _call(probe, **kwargs):
    """The ``run`` fixture's contract, in this process: whatever the code under test raises
    fails the test (the autograder reports it as the submission's error)."""
    try:
        return probe(**kwargs)
    except Exception as error:  # noqa: BLE001 - any error of the code under test
        raise AssertionError(f"{probe.__name__} raised {type(error).__name__}: {error}") from error


def graded_cases(module, task: str) -> list:
    """(test function, its arguments) for every collected case of ``task``'s graded tests in
    ``module``."""
    cases = []
    for name in sorted(dir(module)):
        fn = getattr(module, name)
        if not name.startswith("test_") or not callable(fn):
            continue
        marks = getattr(fn, "pytestmark", [])
        if not any(m.name == "task" and m.args[0] == task for m in marks):
            continue
        grids = [m for m in marks if m.name == "parametrize"]
        if not grids:
            cases.append((fn, {}))
            continue
        (grid,) = grids
        names = [n.strip() for n in grid.args[0].split(",")]
        cases += [(fn, dict(zip(names, values if len(names) > 1 else (values,))))
                  for values in grid.args[1]]  # fmt: skip
    return cases


def _cases(task: str) -> list:
    return graded_cases(suite, task)


def graded_failures(module, task: str, keep: int | None = None) -> list:
    """(test name, its arguments, its message cut to ``keep`` characters) for each case of
    ``task``'s graded tests in ``module`` that fails on the code as it is now."""
    failed = []
    for fn, kwargs in graded_cases(module, task):
        try:
            fn(_call, **kwargs)
        except AssertionError as error:
            failed.append((fn.__name__, kwargs, str(error)[:keep]))
    return failed


def _failures(task: str) -> list:
    return graded_failures(suite, task, keep=200)


# -- recorded wrong answers of A5.1 (_extent) ------------------------------------------------------
def _extent_n_times_stride(size, stride, offset):  # one stride too far along every dim
    return offset if 0 in size else offset + sum(n * s for n, s in zip(size, stride))


def _extent_last_cell(size, stride, offset):  # the last cell read, not one past it
    return offset if 0 in size else offset + sum((n - 1) * s for n, s in zip(size, stride))


def _extent_without_offset(size, stride, offset):
    return 0 if 0 in size else sum((n - 1) * s for n, s in zip(size, stride)) + 1


def _extent_as_numel(size, stride, offset):  # as if every window were contiguous
    return offset + math.prod(size)


def _extent_empty_forgotten(size, stride, offset):
    return offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1


# -- recorded wrong answers of A5.2 (_cells) -------------------------------------------------------
def _index_tuples(size, first_fastest=False):
    if not first_fastest:
        return list(itertools.product(*(range(n) for n in size)))
    return [t[::-1] for t in itertools.product(*(range(n) for n in reversed(size)))]


def _cells_column_major(xp, size, stride, offset):  # the first index fastest, Fortran's order
    cells = [offset + sum(i * s for i, s in zip(t, stride)) for t in _index_tuples(size, True)]
    return xp.asarray(cells, dtype=xp.int64)


def _cells_without_offset(xp, size, stride, offset):
    cells = [sum(i * s for i, s in zip(t, stride)) for t in _index_tuples(size)]
    return xp.asarray(cells, dtype=xp.int64)


def _cells_contiguous_strides(xp, size, stride, offset):  # the window's strides ignored
    return xp.arange(offset, offset + math.prod(size), dtype=xp.int64)


def _cells_each_once(xp, size, stride, offset):  # a set of cells: elements read twice lost
    cells = {offset + sum(i * s for i, s in zip(t, stride)) for t in _index_tuples(size)}
    return xp.asarray(sorted(cells), dtype=xp.int64)


def _cells_shaped_like_the_window(xp, size, stride, offset):  # not flattened
    cells = [offset + sum(i * s for i, s in zip(t, stride)) for t in _index_tuples(size)]
    return xp.reshape(xp.asarray(cells, dtype=xp.int64), tuple(size))


WRONG = [
    ("A5.1", "_extent", "n * stride instead of (n - 1) * stride", _extent_n_times_stride),
    ("A5.1", "_extent", "the last cell instead of one past it", _extent_last_cell),
    ("A5.1", "_extent", "the offset left out", _extent_without_offset),
    ("A5.1", "_extent", "the number of elements (contiguous assumed)", _extent_as_numel),
    ("A5.1", "_extent", "an empty window still reaches a cell", _extent_empty_forgotten),
    ("A5.2", "_cells", "column-major order", _cells_column_major),
    ("A5.2", "_cells", "the offset left out", _cells_without_offset),
    ("A5.2", "_cells", "contiguous strides assumed", _cells_contiguous_strides),
    ("A5.2", "_cells", "each cell once (a set)", _cells_each_once),
    ("A5.2", "_cells", "not flattened", _cells_shaped_like_the_window),
]


def test_the_reference_passes_every_graded_check():
    assert _cases("A5.1") and _cases("A5.2")
    for task in ("A5.1", "A5.2"):
        assert _failures(task) == [], task


@pytest.mark.parametrize("task, name, what, wrong", WRONG, ids=[w[2] for w in WRONG])
def test_a_recorded_wrong_answer_fails_a_graded_check(monkeypatch, task, name, what, wrong):
    monkeypatch.setattr(anatomy, name, wrong)
    assert _failures(task), f"{task}: the graded tests accept a wrong {name}: {what}"

