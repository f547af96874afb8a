"""A pytest plugin: every probe that runs student code answers what a hostile submission could.

In the autograder a probe runs in the sandbox, next to the submitted code, which can replace
the probe itself: whatever plain data it returns is the submission's choice. A check must
therefore fail unless the answer is right in full, never pass on an answer with parts
missing. This plugin stands in for the autograder's grader (it registers under
:data:`~tinygrad_course.grading.pytest_plugin.GRADER`): each probe call of a test that uses
student code gets the reference's honest answer, then shrunk (``--forge empty``: every list
and tuple emptied; ``--forge drop-last``: every list and tuple loses its last element; dicts
keep their keys, so a ``count`` still says what it said). Tests of given code (tasks without
a solution region and no ``uses``) get honest answers, as in the autograder.

Used by ``tests/grading/test_forged_answers.py``, which runs every way in one process::

    python -m tests.grading.forged_answers REPORT.json tests/assignments/test_a1_symbolic.py ...

or one way at a time::

    pytest -p tests.grading.forged_answers --forge empty --forge-report R.json tests/assignments
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from tinygrad_course.grading import tables, wire
from tinygrad_course.grading.probe import call_in_process
from tinygrad_course.grading.pytest_plugin import GRADER

__all__ = ["Forger", "shrink", "shift", "main", "HOW"]

HOW = ("empty", "drop-last", "constant", "zeros")


def shrink(value, how: str):
    """``value`` with every list and tuple emptied (``empty``) or cut by one (``drop-last``).

    >>> shrink({"count": 2, "grads": [1, (2, 3)]}, "drop-last")
    {'count': 2, 'grads': [1]}
    >>> shrink([[1, 2], 3], "empty")
    []
    """
    if isinstance(value, list | tuple):
        kept = [] if how == "empty" else list(value[:-1])
        return type(value)(shrink(v, how) for v in kept)
    if isinstance(value, dict):
        return {k: shrink(v, how) for k, v in value.items()}
    return value


def shift(value, to_zero: bool = False):
    """``value`` with every float (and float array) increased by one, or set to zero
    (``to_zero``): well formed, and wrong.

    >>> shift({"loss": 0.5, "steps": [np.zeros(2)], "count": 2})
    {'loss': 1.5, 'steps': [array([1., 1.])], 'count': 2}
    >>> shift([0.5, np.ones(2)], to_zero=True)
    [0.0, array([0., 0.])]
    """
    if isinstance(value, list | tuple):
        return type(value)(shift(v, to_zero) for v in value)
    if isinstance(value, dict):
        return {k: shift(v, to_zero) for k, v in value.items()}
    if isinstance(value, float) or (isinstance(value, np.ndarray | np.generic)
                                    and value.dtype.kind in "fc"):  # fmt: skip
        return value * 0 if to_zero else value + 1.0
    return value


class Forger:
    """The grader's stand-in: honest answers shrunk by ``how`` for tests of student code."""

    def __init__(self, how: str, regions) -> None:
        self.how, self.regions = how, set(regions)
        self.changed: set[str] = set()  # tests that got at least one forged answer
        self.first: dict = {}
        self.passed: set[str] = set()
        self.failed: set[str] = set()

    def pytest_runtest_logreport(self, report) -> None:
        if report.failed or (report.skipped and report.when != "teardown"):
            self.failed.add(report.nodeid)
        elif report.when == "call":
            self.passed.add(report.nodeid)

    def sort_key(self, info):
        return (-1,) if info is None else (info["order"],)

    def call(self, item, info, probe, kwargs):
        value = call_in_process(probe, kwargs)
        uses = info.get("uses")
        uses = tuple(uses) if uses is not None else ({info["task"]} & self.regions)
        if not uses:
            return value
        if self.how == "constant":  # one wrong answer, well formed, to every call of a test
            forged = self.first.setdefault(item.nodeid, shift(value))
        elif self.how == "zeros":
            forged = shift(value, to_zero=True)
        else:
            forged = shrink(value, self.how)
        if wire.encode(forged) != wire.encode(value):
            self.changed.add(item.nodeid)
        return forged


def pytest_addoption(parser) -> None:
    parser.addoption("--forge", choices=HOW, required=True, help="how answers are shrunk")
    parser.addoption("--forge-report", required=True, help="JSON file: the tests whose "
                     "answers were cut")  # fmt: skip


def pytest_configure(config) -> None:
    root = Path(__file__).resolve().parents[2]
    config.pluginmanager.register(Forger(config.getoption("forge"), tables.regions(root)), GRADER)


def pytest_sessionfinish(session) -> None:
    forger = session.config.pluginmanager.get_plugin(GRADER)
    report = {"forged": sorted(forger.changed), "passed": sorted(forger.passed - forger.failed)}
    with open(session.config.getoption("forge_report"), "w", encoding="utf-8") as f:
        json.dump(report, f)


def main(argv: list[str]) -> int:
    """Run the suites ``argv[1:]`` once per way of forging; write ``{how: report}`` to
    ``argv[0]`` (one process: the imports are paid once)."""
    import pytest  # noqa: PLC0415

    out, suites = argv[0], argv[1:]
    reports = {}
    with tempfile.TemporaryDirectory() as tmp:
        for how in HOW:
            path = f"{tmp}/{how}.json"
            pytest.main(["-p", "tests.grading.forged_answers", "--forge", how, "--forge-report",
                         path, "-p", "no:cacheprovider", "-q", "--no-header", "-p", "no:xdist",
                         *suites])  # fmt: skip
            with open(path, encoding="utf-8") as f:
                reports[how] = json.load(f)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(reports, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
