"""No graded check passes on an answer a submission forged without solving the task.

In the autograder a probe runs next to the submitted code, which can replace the probe: the
plain data that comes back is the submission's choice. So every check of the graded suites
must fail on an answer that is incomplete or wrong, however well formed. The suites are run
with ``forged_answers.py`` standing in for the grader, once per way of forging (lists emptied
or cut by one, one wrong answer given to every call of a test, every number zero), and no
test that received a forged answer may pass.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tinygrad_course.grading import compare_gradients

from . import forged_answers

ROOT = Path(__file__).resolve().parents[2]
SUITES = sorted(  # the graded suites (test_a1_symbolic.py, ...), not the suite checks
    str(p.relative_to(ROOT)) for p in (ROOT / "tests/assignments").glob("test_a[0-9]_*.py")
)


def _instructor_repository() -> bool:
    graph = ROOT / "tinygrad_edu" / "symbolic" / "graph.py"
    return graph.is_file() and "# BEGIN SOLUTION" in graph.read_text(encoding="utf-8")


def test_doctests():
    import doctest  # noqa: PLC0415

    assert doctest.testmod(forged_answers).failed == 0


def test_a_short_list_of_gradients_fails():
    numeric = [np.ones(2), np.zeros(3)]
    compare_gradients([np.ones(2), np.zeros(3)], numeric)
    for short in ([], [np.ones(2)]):
        with pytest.raises(AssertionError, match=r"gradients for 2 inputs"):
            compare_gradients(short, numeric)
    for wrong in (None, "abc", {"a": 1}, 3.0):
        with pytest.raises(AssertionError, match="expected a list of 2 gradients"):
            compare_gradients(wrong, numeric)


@pytest.mark.skipif(not _instructor_repository(), reason="needs the reference solutions")
def test_no_check_passes_a_forged_answer(tmp_path):
    report = tmp_path / "forged.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env.update(PYTHONPATH=str(ROOT), PYTHONDONTWRITEBYTECODE="1")
    cmd = [sys.executable, "-m", "tests.grading.forged_answers", str(report), *SUITES]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert report.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    reports = json.loads(report.read_text())
    assert sorted(reports) == sorted(forged_answers.HOW)
    fooled = {}
    for how, got in reports.items():
        forged, passed = set(got["forged"]), set(got["passed"])
        assert len(forged) >= 40, f"{how}: only {len(forged)} tests got forged answers"
        assert passed, f"{how}: no test passed at all: the run is broken\n{done.stdout[-3000:]}"
        if passed & forged:
            fooled[how] = sorted(passed & forged)
    assert not fooled, f"these checks pass on forged answers: {fooled}"
