"""The browser walk's reading of a lesson's page (``tools/browser_walk.py``): the browser part
needs JupyterLab and Chromium and is run by hand; what it concludes from the page is tested
here, on cells as the page reports them."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def walk():
    path = ROOT / "tools" / "browser_walk.py"
    spec = importlib.util.spec_from_file_location("browser_walk", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # imports no browser: playwright only when walking
    return module


def _code(source, prompt="[1]:", **outputs):
    return {"type": "code", "source": source, "prompt": prompt, "errors": [], "checks": [],
            "images": [], "overflow": [], **outputs}  # fmt: skip


def _box(kind, name, text):
    return {"kind": kind, "name": name, "text": text}


def test_execution_counts(walk):
    assert walk.execution_count("[12]:") == 12
    assert walk.execution_count("[ ]:") is None
    assert walk.execution_count("[*]:") is None
    assert walk.execution_count("") is None


def test_cells_not_run_and_tracebacks_are_problems(walk):
    cells = [
        {"type": "markdown", "source": "# Lesson", "prompt": ""},
        _code("import tinygrad_edu as tg"),
        _code("   \n", prompt="[ ]:"),  # empty: JupyterLab runs no empty cell
        _code("x = tg.ones(3)\ny = x.sum()", prompt="[ ]:"),
        _code("loop()", prompt="[*]:"),
        _code(
            "f()",
            errors=[
                "---\nNameError    Traceback (most recent call last)\n"
                "NameError: name 'f' is not defined"
            ],
        ),  # fmt: skip
        _code("warn()", errors=["/tmp/x.py:3: UserWarning: slow\n  warn()"]),
    ]
    got = walk.summarize(cells)
    assert (got["cells_run"], got["cells_total"]) == (3, 5)
    assert got["not_run"] == [3, 4]
    assert [t["cell"] for t in got["tracebacks"]] == [5]
    assert [s["cell"] for s in got["stderr"]] == [6]  # a warning is no traceback
    assert got["problems"] == [
        "cell 3 ('x = tg.ones(3)'): not run",
        "cell 4 ('loop()'): still running",
        "cell 5 ('f()'): traceback: NameError: name 'f' is not defined",
    ]


def test_checks_are_counted_and_judged(walk):
    waits = "⏳ NOT SOLVED YET  Exercise 5.2 — a rule: this check needs assignment A2.1 (...)"
    cells = [_code("ex.a.check(a)", checks=[
        _box("pass", "Exercise 1.1 — slope", "✅ PASS  Exercise 1.1 — slope: 3"),
        _box("not-solved-yet", "Exercise 5.2 — a rule", waits),
        _box("not-solved-yet", "Exercise 6.1 — loop", "⏳ NOT SOLVED YET  Exercise 6.1 — "
             "loop: this check needs assignment A3.1 (`linear` in nn/functional.py)"),
        _box("not-solved-yet", "Exercise 7.1 — own", "⏳ NOT SOLVED YET  Exercise 7.1 — own: "
             "f still raises NotImplementedError"),
        _box("notice", "This cell needs assignment A1.8 (`gradients`), which is not written yet",
             "ⓘ NOTICE  This cell needs assignment A1.8 (`gradients`), which is not written"),
        _box("pass", "losses of the two engines", "✅ PASS  losses of the two engines: 3"),
        _box("fail", "the schedule", "❌ FAIL  the schedule: expected 3, got 2"),
        _box("not-solved-yet", "Tally", "⏳ NOT SOLVED YET  Tally: 1 of 4 checks passed"),
    ])]  # fmt: skip
    got = walk.summarize(cells, written=("A1.8",), day_one=("5.2", "1.1"))
    assert got["checks"] == {"pass": 2, "fail": 1, "not-solved-yet": 3, "notice": 1}
    assert got["named"] == ["A1.8", "A2.1", "A3.1"]
    assert {n: e["status"] for n, e in got["exercises"].items()} == {
        "1.1": "pass",
        "5.2": "not-solved-yet",
        "6.1": "not-solved-yet",
        "7.1": "not-solved-yet",
    }
    problems = "\n".join(got["problems"])
    assert "Exercise 1.1 passes with no answer written" in problems
    assert "Exercise 5.2 answers on day one, but its check waits for A2.1" in problems
    assert "6.1" not in problems and "7.1" not in problems  # waits as it should / unanswered
    assert "says it needs A1.8, which is written in this state" in problems
    assert "FAIL: ❌ FAIL  the schedule" in problems
    assert "losses of the two engines" not in problems and "Tally" not in problems
    assert len(got["problems"]) == 4


def test_pictures(walk):
    cells = [_code("draw(a)", images=[{"natural": 640, "shown": 640}]),
             _code("draw(b)", images=[{"natural": 1200, "shown": 780}, {"natural": 10}],
                   overflow=[{"scroll": 900, "client": 760}])]  # fmt: skip
    got = walk.summarize(cells)
    assert got["widest_picture"] == {"cell": 1, "natural": 1200, "shown": 780}
    assert got["problems"] == ["cell 1 ('draw(b)'): a picture 1200 px wide (the window is 900 px)"]
    assert got["notes"] == ["cell 1 ('draw(b)'): an output scrolls sideways (900 px shown in "
                            "760 px)"]  # fmt: skip
    assert walk.summarize([_code("x = 1")])["widest_picture"] is None


def test_the_course_states_write_the_assignments_in_order(walk):
    tasks = ["A2.1", "A1.10", "A1.2", "A6.1", "A2.2", "A1.1"]
    assert walk.course_states(tasks) == [
        ("day one", ()),
        ("A1", ("A1.1", "A1.2", "A1.10")),
        ("A1-A2", ("A1.1", "A1.2", "A1.10", "A2.1", "A2.2")),
        ("A1-A6", ("A1.1", "A1.2", "A1.10", "A2.1", "A2.2", "A6.1")),
    ]
    from tinygrad_course.grading.tables import regions

    states = walk.course_states(regions(ROOT))  # the course's own: A1 to A6
    assert [name for name, _ in states] == ["day one", "A1", "A1-A2", "A1-A3", "A1-A4",
                                            "A1-A5", "A1-A6"]  # fmt: skip
    assert set(states[-1][1]) == set(regions(ROOT))


def test_a_state_in_between_runs_the_lessons_that_waited_for_it(walk):
    named = {"03_ops": ["A2.1"], "05_engine": ["A1.8", "A2.2"], "06_training": ["A3.1"],
             "00_setup": []}  # fmt: skip
    lessons = ["00_setup", "03_ops", "05_engine", "06_training", "07_gpu"]
    assert walk.lessons_to_run(("A2.1", "A2.2"), named, lessons) == ["03_ops", "05_engine"]
    assert walk.lessons_to_run(("A5.1",), named, lessons) == []


def test_the_text_report_lists_every_problem(walk):
    lesson = walk.summarize([_code("f()", prompt="[ ]:")])
    lesson.update(lesson="05_engine", seconds=3.2)
    text = walk.report_text([{"name": "day one", "written": [], "lessons": [lesson]}])
    assert "05_engine" in text and "cells   0/1" in text
    assert "1 problems:\n  [day one] 05_engine cell 0 ('f()'): not run" in text


def test_a_warning_shown_is_a_problem_once_per_line(walk):
    line = "/ed/tinygrad_edu/ops/promotion.py:35: UserWarning: You are comparing a dtype"
    got = walk.summarize([_code("ex.a.check(a)", warnings=[line, line]), _code("ok()")])
    assert got["problems"] == [f"cell 0 ('ex.a.check(a)'): a warning: {line}"]
    assert got["warnings"] == [{"cell": 0, "text": line}]


def test_a_note_seen_in_several_states_is_listed_once(walk):
    wide = _code("draw()", overflow=[{"scroll": 900, "client": 720}])
    states = []
    for name in ("day one", "A1"):
        lesson = walk.summarize([wide])
        lesson.update(lesson="00_setup", seconds=1.0)
        states.append({"name": name, "written": [], "lessons": [lesson]})
    text = walk.report_text(states)
    assert "0 problems\n1 notes" in text
    assert (
        "00_setup cell 0 ('draw()'): an output scrolls sideways (900 px shown in 720 px) "
        "[day one, A1]" in text
    )
