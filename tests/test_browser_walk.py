# instructors only
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


# -- --answers: typing the exercises' answers --------------------------------------------------
_LESSON = """# ---
# jupyter: {}
# ---

# %%
from tinygrad_course.lessons import lesson01 as ex

# %% [markdown]
# ### Exercise 1.1 — central difference

# %%
def forward_difference(f, x, eps=1e-6):
    return (f(x + eps) - f(x)) / eps


def central_difference(f, x, eps=1e-6):
    # BEGIN SOLUTION
    return (f(x + eps) - f(x - eps)) / (2 * eps)
    # END SOLUTION


# %% [markdown]
# The check tries it on x³.

# %%
ex.central_difference.check(central_difference)

# %%
ex.unanswered.check(nothing_above)
"""


def test_a_lessons_exercises_are_read_from_its_source(walk):
    module, found = walk.lesson_exercises(_LESSON)
    assert module == "lesson01"
    assert [(f["attr"], f["name"]) for f in found] == [("central_difference", "central_difference"),
                                                       ("unanswered", "nothing_above")]  # fmt: skip
    reference = found[0]["reference"]
    assert "SOLUTION" not in reference and "# %%" not in reference
    assert reference.startswith("def forward_difference(f, x, eps=1e-6):")
    assert reference.endswith("    return (f(x + eps) - f(x - eps)) / (2 * eps)")
    assert found[1]["reference"] is None  # no solution cell between the two checks


def test_the_typed_cell_replaces_only_the_stubbed_definition(walk):
    stub = ("def forward_difference(f, x, eps=1e-6):\n    return (f(x + eps) - f(x)) / eps\n\n\n"
            "def central_difference(f, x, eps=1e-6):\n"
            "    raise NotImplementedError(\"E1.1: write your solution here\")")  # fmt: skip
    wrong = "def central_difference(f, x, eps=1e-06):\n    return 0"
    typed = walk.typed_cell(stub, "central_difference", wrong)
    assert typed == stub.split("\n\n\ndef central")[0] + "\n\n\n" + wrong
    # a class stays, the assignment that binds the name is replaced, what follows it stays
    stub = "class C:\n    pass\n\n\nanswer = C.apply\nprint(answer)"
    assert walk.typed_cell(stub, "answer", "answer = _f(False)") == \
        "class C:\n    pass\n\n\nanswer = _f(False)\n\n\nprint(answer)"  # fmt: skip
    assert walk.typed_cell("x = 1", "answer", "answer = 2") == "x = 1\n\n\nanswer = 2"


def test_a_wrong_answers_code_is_built_from_its_module(walk):
    module = "tinygrad_course.lessons.lesson99"
    sources = {module: '''from __future__ import annotations

import numpy as np

from .exercise import Exercise, Wrong
from .lesson98 import _shared


def _helper(x):
    return np.abs(x)


def _walk(root):
    """A wrong answer."""
    return _walk(root) if root else _helper(_shared(root))


_walk.__name__ = "walk"


def _factory(k=2):
    return lambda x: x * k


ex = Exercise("99.1", "t", None, wrong=[
    Wrong("a lambda", lambda x, eps=1e-6: _helper(x) / eps, "h1"),
    Wrong("a function", _walk, "h2"),
    Wrong("a factory", _factory(k=3), "h3"),
])
''', "tinygrad_course.lessons.lesson98": '''from .exercise import Wrong


def _shared(r):
    return r
'''}  # fmt: skip
    code = walk.wrong_answer_code(module, sources.get)
    assert [c["what"] for c in code] == ["a lambda", "a function", "a factory"]
    assert [c["kind"] for c in code] == ["lambda", "function", "value"]
    first = walk.typed_definition("answer", code[0])
    assert first == ("import numpy as np\n\n\ndef _helper(x):\n    return np.abs(x)\n\n\n"
                     "def answer(x, eps=1e-06):\n    return _helper(x) / eps")  # fmt: skip
    second = walk.typed_definition("answer", code[1])
    # renamed, its call to itself too; another lesson's private helper comes as its code
    assert "def answer(root):" in second and "return answer(root) if root" in second
    assert "def _shared(r):" in second and "lesson98" not in second and "_walk" not in second
    assert second.index("def _helper") < second.index("def answer")
    assert walk.typed_definition("answer", code[2]).endswith("\n\n\nanswer = _factory(k=3)")
    namespace = {}
    exec(walk.typed_definition("answer", code[0]), namespace)  # it runs as typed
    assert namespace["answer"](-2.0, eps=0.5) == 4.0


@pytest.mark.slow
def test_the_typed_wrong_answers_make_the_recorded_mistakes(walk):
    """Every recorded wrong answer of the course, as the walk types it (its code from the
    lesson's module), gives the check the outcome the recorded answer itself gives."""
    import contextlib
    import io

    from tinygrad_course import lessons

    def read(module):
        path = ROOT.joinpath(*module.split(".")).with_suffix(".py")
        return path.read_text(encoding="utf-8") if path.is_file() else None

    count = 0
    for module in lessons.lesson_modules():
        code = walk.wrong_answer_code(module.__name__, read)
        wrongs = [(ex, w) for ex in module.EXERCISES for w in ex.wrong]
        assert [c["what"] for c in code] == [w.what for _, w in wrongs]
        for (ex, wrong), c in zip(wrongs, code, strict=True):
            namespace = {}
            exec(compile(walk.typed_definition("answer", c), "<typed>", "exec"), namespace)
            with contextlib.redirect_stdout(io.StringIO()):
                typed, recorded = ex._evaluate(namespace["answer"]), ex._evaluate(wrong.answer)
            got = (typed.status, typed.hint, typed.step)
            assert got == (recorded.status, recorded.hint, recorded.step), (ex.number, wrong.what)
            count += 1
    assert count >= 150


def test_the_plan_holds_every_exercise_and_wrong_answer(walk):
    from tests.test_lesson_states import WAITING
    from tinygrad_course import lessons

    names = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]*_*.py"))
    plans, problems = walk.answer_plan(ROOT, names, WAITING)
    assert problems == []
    exercises = [e for plan in plans.values() for e in plan]
    modules = lessons.lesson_modules()
    assert sorted(e["number"] for e in exercises) == \
        sorted(ex.number for m in modules for ex in m.EXERCISES)  # fmt: skip
    assert sum(len(e["wrong"]) for e in exercises) == \
        sum(len(ex.wrong) for m in modules for ex in m.EXERCISES)  # fmt: skip
    assert {e["number"]: e["waits"] for e in exercises if e["waits"]} == WAITING
    assert all(e["reference"] and w["hint"] and w["code"] for e in exercises for w in e["wrong"])


_NAME = "Exercise 1.1 — central difference"


def test_a_checks_verdict_is_read_from_the_page(walk):
    text = (f"❌ FAIL\u00a0 {_NAME}: at x = 2: got 24.0\nHint: twice the right value: how far "
            "apart are the two points you step to?\n   Try 2, a closer look: by hand")  # fmt: skip
    assert walk.read_verdict(text, _NAME) == {
        "status": "fail", "message": "at x = 2: got 24.0",
        "hint": "twice the right value: how far apart are the two points you step to?\n"
                "   Try 2, a closer look: by hand"}  # fmt: skip
    assert walk.read_verdict(f"✅ PASS  {_NAME}: 12.000001", _NAME) == \
        {"status": "pass", "message": "12.000001", "hint": ""}  # fmt: skip
    waits = (f"⏳ NOT SOLVED YET  {_NAME}: this check needs assignment A1.1 (`topo_sort`), "
             "which is not written yet\nHint: write A1.1 first")  # fmt: skip
    assert walk.read_verdict(waits, _NAME)["status"] == "not-solved-yet"
    assert walk.read_verdict(text, "Exercise 1.2 — h'") is None  # another exercise's box


def test_a_wrong_answer_must_be_rejected_with_its_own_hint(walk):
    own = "twice the right value: how far apart are the two points you step to?"

    def verdict(status, message="m", hint=""):
        return {"status": status, "message": message, "hint": hint}

    assert walk.judge(verdict("fail", hint=own), own) is None
    assert walk.judge(verdict("fail", hint=own + "\n   Try 3, a closer look: reread"), own) is None
    assert "PASSES" in walk.judge(verdict("pass"), own)
    other = walk.judge(verdict("fail", hint="compare what you got with what was expected"), own)
    assert other.startswith("rejected with another hint: 'compare what you got")
    assert walk.judge(verdict("fail", hint=own + " (and more)"), own) is not None
    needs = "this check needs assignment A1.1 (`topo_sort`), which is not written yet"
    assert walk.judge(verdict("not-solved-yet", needs), own) is None  # its code calls A1.1
    assert walk.judge(verdict("not-solved-yet", "f still raises NotImplementedError"), own)
    assert walk.judge(None, own) == "no check result shown"
    # the right answer: PASS, or for an exercise waiting for an assignment, that one named
    assert walk.judge(verdict("pass")) is None
    assert "shows FAIL" in walk.judge(verdict("fail", "got 3", "look again"))
    assert walk.judge(verdict("not-solved-yet", needs), waits="A1.1") is None
    assert "not 'needs assignment A1.1'" in walk.judge(verdict("pass"), waits="A1.1")
    assert walk.judge(verdict("not-solved-yet", needs.replace("A1.1", "A2.1")), waits="A1.1")
    # every assignment written: nothing may wait, a wrong answer FAILs with its own hint
    assert "shows NOT-SOLVED-YET" in walk.judge(verdict("not-solved-yet", needs), own,
                                                complete=True)  # fmt: skip
    assert walk.judge(verdict("fail", hint=own), own, complete=True) is None
    assert walk.judge(verdict("pass"), waits="A1.1", complete=True) is None
    assert "shows NOT-SOLVED-YET" in walk.judge(verdict("not-solved-yet", needs), waits="A1.1",
                                                complete=True)  # fmt: skip


def test_the_answers_report_counts_and_lists_problems(walk):
    rows = [{"exercise": "1.1", "answer": "divided by eps", "right": False, "status": "fail",
             "problem": None},
            {"exercise": "1.1", "answer": "forward", "right": False, "status": "pass",
             "problem": "a wrong answer PASSES: 12"},
            {"exercise": "2.3", "answer": "one pass", "right": False, "status": "not-solved-yet",
             "problem": None},
            {"exercise": "1.1", "answer": "the reference answer", "right": True, "status": "pass",
             "problem": None},
            {"exercise": "2.3", "answer": "the reference answer", "right": True,
             "status": "not-solved-yet", "problem": None}]  # fmt: skip
    text = walk.answers_text([{"lesson": "01_derivatives", "answers": rows}])
    assert "answers typed: 3 wrong, 2 right" in text
    assert "rejected with their own hint: 1\n" in text
    assert "waiting for an assignment (NOT SOLVED YET naming it): 1\n" in text
    assert "right answers passing: 1\n" in text and "waiting for their assignment: 1\n" in text
    listed = "problems: 1:\n    01_derivatives Exercise 1.1 (forward): a wrong answer PASSES: 12"
    assert listed in text
