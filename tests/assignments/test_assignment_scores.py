"""The graded suites score what they should: full marks on this repository (the reference
solutions), almost nothing on its student edition.

Not a graded test itself (no points): it runs the suites A1-A4 in subprocesses, the way
``tinygrad-edu grade --gradescope`` and the Gradescope autograder do, and reads the
``results.json`` they write.

How skipped tests count: a test skipped before it runs (a ``skipif`` marker: the GPU tests of
A4 without CuPy or a GPU) is left out of both the score and ``max_score`` by the grading
plugin itself; the check asserts that nothing else was skipped.

Outside the instructor's repository (in a student edition, or in an autograder zip, where
the tests sit apart from the library) there are no solutions to check, and the tests skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tinygrad_edu.grading.student import has_solution_markers, make_student_edition

ROOT = Path(__file__).resolve().parents[2]
SUITES = [
    "tests/assignments/test_a1_symbolic.py",
    "tests/assignments/test_a2_eager.py",
    "tests/assignments/test_a3_training.py",
    "tests/assignments/test_a4_gpu.py",
]
PLUGIN = ["-p", "no:tinygrad_edu_grading", "-p", "tinygrad_edu.grading.pytest_plugin"]
FREE_TASKS = {"A1.0", "A2.0", "A3.0"}  # tests of given code: the only ones a student gets free
STUDENT_SHARE = 0.15


def _instructor_repository() -> bool:
    graph = ROOT / "tinygrad_edu" / "symbolic" / "graph.py"
    return graph.is_file() and has_solution_markers(graph.read_text(encoding="utf-8"))


pytestmark = pytest.mark.skipif(
    not _instructor_repository(),
    reason="the score check needs the instructor's repository (library with solution regions)",
)


def _env(library: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env["PYTHONPATH"] = str(library)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _run(cmd, cwd: Path, library: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        cmd, cwd=cwd, env=_env(library), capture_output=True, text=True, timeout=timeout
    )


def _grade(repo: Path, results: Path) -> dict:
    """Run the graded suites of ``repo`` against ``repo``'s library; the results.json data."""
    cmd = [sys.executable, "-m", "pytest", *PLUGIN, "-p", "no:cacheprovider", "-q"]
    cmd += ["--gradescope", str(results), *SUITES]
    proc = _run(cmd, repo, repo)
    assert results.is_file(), f"no results.json was written:\n{proc.stdout[-3000:]}{proc.stderr}"
    return json.loads(results.read_text(encoding="utf-8"))


def _split(data: dict):
    """(tests that count, skipped tests, score, max): skipped tests count for neither."""
    skipped = [t for t in data["tests"] if t["output"].startswith("skipped:")]
    counted = [t for t in data["tests"] if not t["output"].startswith("skipped:")]
    return counted, skipped, sum(t["score"] for t in counted), sum(t["max_score"] for t in counted)


def _task(test: dict) -> str:
    return test["name"].split(":", 1)[0]


def _check_skips(skipped):
    for t in skipped:
        assert "test_a4_gpu.py" in t["name"], f"only GPU tests may be skipped: {t['name']}"
        assert "CUDA GPU" in t["output"], f"a skip must say why: {t['output']!r}"


def test_reference_solutions_score_full_marks(tmp_path):
    data = _grade(ROOT, tmp_path / "results.json")
    counted, skipped, score, maximum = _split(data)
    _check_skips(skipped)
    assert len(data["tests"]) >= 20, f"only {len(data['tests'])} graded tests"
    assert all(t["max_score"] > 0 for t in counted), "every graded test is worth points"
    assert all(t["max_score"] == 0 for t in skipped), "a skipped test counts for nothing"
    tasks = {_task(t) for t in data["tests"]}
    for a in ("A1", "A2", "A3", "A4"):
        assert any(task.startswith(a + ".") for task in tasks), f"no graded test for {a}"
    failed = [f"{t['name']}\n{t['output'][:1500]}" for t in counted if t["status"] != "passed"]
    assert not failed, "graded tests fail on the reference solutions:\n" + "\n\n".join(failed)
    assert maximum > 0 and score == maximum, f"reference score {score} of {maximum}"
    # the plugin's own totals leave the skipped tests out
    assert data["score"] == score
    assert data["max_score"] == maximum


def test_student_edition_scores_at_most_15_percent(tmp_path):
    student = tmp_path / "student"
    report = make_student_edition(ROOT, student)
    assert "tinygrad_edu/symbolic/graph.py" in report["stripped"]
    assert not (student / ".venv").exists(), "the edition must not copy the virtualenv"

    # The student's library must win over the editable install of the reference.
    probe = _run(
        [sys.executable, "-c", "import tinygrad_edu, tinygrad_edu.symbolic, tinygrad_edu.nn, "
         "tinygrad_edu.optim; print(tinygrad_edu.__file__)"],
        student, student, timeout=120,
    )  # fmt: skip
    assert probe.returncode == 0, f"the student edition does not import:\n{probe.stderr}"
    where = Path(probe.stdout.strip()).resolve()
    assert where.is_relative_to(student.resolve()), f"imported the library from {where}"

    data = _grade(student, tmp_path / "results.json")
    counted, skipped, score, maximum = _split(data)
    _check_skips(skipped)
    assert maximum > 0
    assert score <= STUDENT_SHARE * maximum, (
        f"the student edition scores {score} of {maximum} (more than {STUDENT_SHARE:.0%}): "
        "some graded test passes without the student's code"
    )
    passed = [t for t in counted if t["status"] == "passed"]
    assert all(_task(t) in FREE_TASKS for t in passed), (
        "only tests of given code may pass in the student edition, but these did: "
        + ", ".join(t["name"] for t in passed if _task(t) not in FREE_TASKS)
    )
    unsolved = [t for t in counted if t["status"] != "passed"]
    assert unsolved and all("write your solution here" in t["output"] for t in unsolved), (
        "every failing test should fail on a missing solution (NotImplementedError), not on a "
        "broken test: "
        + "; ".join(t["name"] for t in unsolved if "write your solution here" not in t["output"])
    )
    hidden = set(_test_names(ROOT)) - set(_test_names(student))
    assert hidden, "the student edition should lack the hidden tests"
    ran = {t["name"].rsplit("::", 1)[-1].split("[")[0] for t in data["tests"]}
    assert not ran & hidden, f"hidden tests ran in the student edition: {sorted(ran & hidden)}"


def _test_names(repo: Path) -> list[str]:
    """Names of the test functions written in ``repo``'s graded suites."""
    names = []
    for rel in SUITES:
        for line in (repo / rel).read_text(encoding="utf-8").splitlines():
            if line.startswith("def test_"):
                names.append(line[len("def ") : line.index("(")])
    return names
