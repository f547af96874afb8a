"""The graded suites grade what they should (worth no points themselves).

- Every task with points has solution regions in the library (or is a test of given code, or
  names the tasks it ``uses``), and every region's task has tests: a region that moves, is
  renamed or disappears shows up here.
- A student at home: the visible suites, run in a fresh student edition, score at most 15%,
  only the tests of given code (``.0``) pass, every other test fails on the student's missing
  solution (a ``NotImplementedError`` raised by the code under test, never by a check), and
  the hidden tests are gone.
- The instructor guide's assignment tables are the suites' own numbers.

The autograder's side (the real zip: the reference scores 100%, the untouched edition at
most 15%, attacks fail) is ``tests/grading/test_autograder_attacks.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tinygrad_course.grading import tables
from tinygrad_course.grading.student import has_solution_markers

ROOT = Path(__file__).resolve().parents[2]
SUITES = [
    "tests/assignments/test_a1_symbolic.py",
    "tests/assignments/test_a2_eager.py",
    "tests/assignments/test_a3_training.py",
    "tests/assignments/test_a4_gpu.py",
    "tests/assignments/test_a5_strides.py",
    "tests/assignments/test_a6_softmax.py",
]
PLUGIN = ["-p", "no:tinygrad_edu_grading", "-p", "tinygrad_course.grading.pytest_plugin"]
FREE_TASKS = {"A1.0", "A2.0", "A3.0"}  # tests of given code: the only ones a student gets free
STUDENT_SHARE = 0.15


def _instructor_repository() -> bool:
    graph = ROOT / "tinygrad_edu" / "symbolic" / "graph.py"
    return graph.is_file() and has_solution_markers(graph.read_text(encoding="utf-8"))


pytestmark = pytest.mark.skipif(
    not _instructor_repository(),
    reason="the score check needs the instructor's repository (library with solution regions)",
)


@pytest.fixture(scope="module")
def collected(assignment_tests):
    return assignment_tests


def test_every_task_has_regions_and_every_region_has_tests(collected):
    regions = tables.regions(ROOT)
    graded: dict[str, list] = {}
    for t in collected:
        graded.setdefault(t["task"], []).append(t)
    for task, tests in graded.items():
        uses = {u for t in tests if t["uses"] is not None for u in t["uses"]}
        unknown = uses - set(regions)
        assert not unknown, f"{task} uses {sorted(unknown)}, which have no solution region"
        if task not in regions and not uses:
            assert task.endswith(".0"), (
                f"{task} has graded tests but no solution region in the library (was it moved "
                "or renamed?); tests of given code go in a task X.0, an integration task names "
                "the tasks it uses: task(..., uses=(...))"
            )
    for task in regions:
        tests = graded.get(task, [])
        assert any(t["visibility"] == "visible" for t in tests), (
            f"{task} has a solution region ({regions[task]}) but no visible graded test"
        )
        assert sum(t["points"] for t in tests) > 0


def _env(library: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env["PYTHONPATH"] = str(library)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def test_the_student_edition_at_home_scores_at_most_15_percent(tmp_path, student_edition):
    student, report = student_edition  # read only: the run below writes nothing into it
    assert "tinygrad_edu/symbolic/graph.py" in report["stripped"]
    # The student's library must win over the editable install of the reference.
    probe = subprocess.run(
        [sys.executable, "-c", "import tinygrad_edu, tinygrad_edu.symbolic, tinygrad_edu.nn, "
         "tinygrad_edu.optim; print(tinygrad_edu.__file__)"],
        cwd=student, env=_env(student), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert probe.returncode == 0, f"the student edition does not import:\n{probe.stderr}"
    assert Path(probe.stdout.strip()).resolve().is_relative_to(student.resolve())

    results = tmp_path / "results.json"
    cmd = [sys.executable, "-m", "pytest", *PLUGIN, "-p", "no:cacheprovider", "-q",
           "--gradescope", str(results), *SUITES]  # fmt: skip
    done = subprocess.run(cmd, cwd=student, env=_env(student), capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert results.is_file(), f"no results.json:\n{done.stdout[-3000:]}{done.stderr}"
    data = json.loads(results.read_text())
    maximum = sum(t["max_score"] for t in data["tests"])
    assert maximum > 0 and data["score"] <= STUDENT_SHARE * maximum, (
        f"the student edition scores {data['score']} of {maximum}: some graded test passes "
        "without the student's code"
    )
    task = {t["name"]: t["name"].split(" ", 1)[0] for t in data["tests"]}
    passed = [t["name"] for t in data["tests"] if t["status"] == "passed"]
    assert all(task[n] in FREE_TASKS for n in passed), f"passed without student code: {passed}"
    wrong = [
        t["name"] for t in data["tests"]
        if t["status"] != "passed"
        and not ("your code raised NotImplementedError" in t["output"]
                 and "write your solution here" in t["output"])
    ]  # fmt: skip
    assert not wrong, (
        "these fail for another reason than the student's missing solution (a check must not "
        f"call solution code itself; it checks what run() returns): {wrong}"
    )
    assert all(t["visibility"] == "visible" for t in data["tests"]), "hidden tests in the edition"


def test_the_instructor_guide_tables_match_the_suites(assignment_tests):
    guide = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    assert tables.BEGIN in guide and tables.END in guide, "the guide lost its generated block"
    current = guide[guide.index(tables.BEGIN) + len(tables.BEGIN) : guide.index(tables.END)]
    assert current.strip() == tables.markdown(ROOT, tests=assignment_tests).strip(), (
        "docs/instructors.md disagrees with the graded suites; regenerate its tables with "
        "`python -m tinygrad_course.grading.tables --write docs/instructors.md`"
    )
