"""The lessons a student runs between assignments: every partial state, not only day one.

A student writes the graded tasks one at a time, in the course's order or not. In each such
state the student edition's lessons must run to their end: a cell that reaches a task still
unwritten says which task unlocks it and shows its recording, and so does every later cell
that needs what it would have made. A stub reached inside the backward engine's loop is
re-raised by the engine naming the node (the stub's error is the ``__cause__``), which once
made the unlocker lose the task, and the next cell's ``NameError`` stopped *Run All*.

The states are made by splicing the reference solution of the tasks written into the
edition's stubs (``grading.splice``), as the autograder does for one task.
"""

import ast
import json
from pathlib import Path

import pytest

import tinygrad_edu as tg
from tinygrad_course.lessons import LESSONS as LESSON_MODULES
from tinygrad_course.lessons import lesson_modules
from tinygrad_course.lessons.recorded import (
    Unlocker,
    _still_stub,
    _stub_frame,
    _where,
    cell_key,
    stub_task,
)

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
CACHE = ROOT / ".cache" / "lessons"  # executed lessons, reused between runs

# the tasks a backward pass in the eager engine can reach: the engine (A2.1, A2.2, A2.5), the
# tensor's gradient accumulation (A2.3), hooks (A2.4) and the ops' derivative rules (A1.3-A1.7)
A1 = ("A1.3", "A1.4", "A1.5", "A1.6", "A1.7")
A2 = ("A2.1", "A2.2", "A2.3", "A2.4", "A2.5")
STATES = {
    "day one": (),
    **{f"{t} alone": (t,) for t in A2},
    "A1 alone": A1,
    **{f"A2.1-A2.{k} in order": A2[:k] for k in range(2, 6)},
    "A1 and A2": A1 + A2,
    "A2.5, A2.4 (out of order)": ("A2.5", "A2.4"),
    "A2.3, A2.1 (out of order)": ("A2.3", "A2.1"),
    "A2.2 and A1 (out of order)": ("A2.2", *A1),
}
# the lessons whose cells reach the engine's stubs before they are written, each run in every
# state: 03 (the stepper over a hand-made graph) and 05 (the engine itself)
LESSONS = ("03_ops_as_nodes", "05_backward_engine")


def _engine_stub_error(monkeypatch, module, name, task):
    """The error a backward raises when ``module.name`` is the stub of ``task``."""

    def stub(*args, **kwargs):
        raise NotImplementedError(f"{task}: write your solution here")

    stub.__name__ = name
    monkeypatch.setattr(module, name, stub)
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(NotImplementedError) as info:
        (x * x).sum().backward()
    return info.value


def test_a_stub_inside_the_engine_loop_keeps_its_task(monkeypatch, tmp_path):
    """The engine re-raises the stub's error naming the node; the unlocker still finds the
    stub's own function (the one the student writes), not the engine loop that re-raised."""
    from tinygrad_edu.eager import engine

    error = _engine_stub_error(monkeypatch, engine, "_evaluate", "A2.2")
    assert "during backward" in str(error)  # the engine's wrapper, the stub its cause
    assert stub_task(error) == "A2.2"
    assert _where(error).startswith("`stub` in ")
    path, name = _stub_frame(error)
    assert (Path(path).name, name) == ("test_lesson_states.py", "stub")
    # the unlocker keeps the task pending while the stub is unwritten: a cell below that fails
    # on a name the stopped cell would have made is explained
    stub_file = tmp_path / "engine.py"
    stub_file.write_text("def stub(node):\n    raise NotImplementedError("
                         "'A2.2: write your solution here')\n")  # fmt: skip
    unlock = Unlocker(None, {cell_key("stepper.draw(0)"): []})
    unlock.explain(error, "stepper = record(L)")
    unlock.stubs["A2.2"] = (str(stub_file), "stub")
    unlock.pre_run_cell()
    assert "it needs A2.2" in unlock.explain(NameError("name 'stepper' is not defined"),
                                             "stepper.draw(0)")  # fmt: skip
    stub_file.write_text("def stub(node):\n    return node\n")  # written: the task is done
    unlock.pre_run_cell()
    assert unlock.pending == {}


def test_the_stub_frame_is_the_stubs_function_for_every_engine_task(monkeypatch):
    """Before the fix, ``_stub_frame`` named ``_run_on_caller`` for a stub in the loop."""
    from tinygrad_edu.eager import engine

    error = _engine_stub_error(monkeypatch, engine, "_evaluate", "A2.2")
    path, name = _stub_frame(error)
    assert name == "stub" and _still_stub(path, name)


def _library_files():
    return sorted(p.relative_to(ROOT) for p in (ROOT / "tinygrad_edu").rglob("*.py")
                  if "BEGIN SOLUTION A" in p.read_text(encoding="utf-8"))  # fmt: skip


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    """The student edition, with the recordings of :data:`LESSONS` (cached between runs), and
    its stubbed files as made (to restore between states)."""
    from tinygrad_course.grading.student import make_student_edition
    from tinygrad_course.lessons.notebooks import executed_student_edition
    from tinygrad_course.lessons.recorded import RECORDED_DIR

    out = tmp_path_factory.mktemp("states") / "course-student"
    make_student_edition(ROOT, out)
    folder = out / "notebooks" / RECORDED_DIR
    folder.mkdir()
    for name in LESSONS:
        executed = executed_student_edition(NOTEBOOKS / f"{name}.ipynb", CACHE)
        done = json.loads(executed.read_text(encoding="utf-8"))
        cells = {cell_key(c["source"]): c.get("outputs", []) for c in done["cells"]
                 if c["cell_type"] == "code" and c.get("outputs")}  # fmt: skip
        (folder / f"{name}.json").write_text(json.dumps({"lesson": name, "cells": cells}))
    stubbed = {rel: (out / rel).read_text(encoding="utf-8") for rel in _library_files()}
    return out, stubbed


def _write_state(edition, written):
    """The edition with the reference solution of each task in ``written``, stubs elsewhere."""
    from tinygrad_course.grading.splice import splice, task_functions

    out, stubbed = edition
    for rel, text in stubbed.items():
        reference = (ROOT / rel).read_text(encoding="utf-8")
        unwritten = set(task_functions(reference)) - set(written)
        (out / rel).write_text(splice(reference, text, keep=unwritten).text, encoding="utf-8")


def _text(done) -> str:
    outputs = [o for c in done["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    assert not [o for o in outputs if o["output_type"] == "error"]
    parts, last = [], None
    for o in outputs:
        text = "".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
        stream = o.get("name") if o["output_type"] == "stream" else None
        if stream is not None and stream == last:  # one print the kernel sent in two pieces
            parts[-1] += text
        else:
            parts.append(text)
        last = stream
    return "\n".join(parts)


@pytest.mark.slow
@pytest.mark.parametrize("written", STATES.values(), ids=list(STATES))
def test_the_engine_lessons_run_to_their_end_in_every_partial_state(edition, written):
    from tinygrad_course.lessons.notebooks import execute_notebook

    _write_state(edition, written)
    out = edition[0]
    for name in LESSONS:
        nb = json.loads((out / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))
        # no bytecode: the files change between states within the same second
        done = execute_notebook(nb, out / "notebooks", root=out, timeout=120,
                                env={"PYTHONDONTWRITEBYTECODE": "1"})  # fmt: skip
        text = _text(done)
        assert all(c["execution_count"] for c in done["cells"] if c["cell_type"] == "code")
        assert "write your solution here" not in text, (name, written)
        assert "❌" not in text, (name, written)
        needed = set(A1 + A2) - set(written)
        for task in set(A1 + A2) & set(written):  # a written task is never named as missing
            assert f"needs assignment {task} " not in text, (name, task)
        if not needed & {"A2.1", "A2.2"}:  # the engine runs: the lesson's own cells live
            assert "This cell needs assignment A2.1" not in text


def test_the_recorded_module_doctests():
    import doctest

    from tinygrad_course.lessons import recorded

    assert doctest.testmod(recorded).failed == 0


def test_a_check_on_empty_values_never_passes(capsys):
    """Two empty lists agree; a check on them once printed PASS for losses never computed."""
    from tinygrad_course.lessons import FAIL, check

    for got, expected in (([], []), ([], [1.0]), ([1.0], ()), (tg.zeros(0), tg.zeros(0))):
        result = check("losses of the two engines", got, expected, strict=False)
        assert result.status == FAIL and "nothing to compare" in result.message
        assert "never computed" in result.hint
    assert check("one loss", [0.5], [0.5], strict=False)
    assert capsys.readouterr().out.count("✅ PASS") == 1


_PARTIAL = [
    "import tinygrad_edu as tg\nimport tinygrad_course.lessons\nfrom tinygrad_course.lessons "
    "import check\nx = tg.tensor([1.0, 2.0], requires_grad=True)",
    # stops at its first backward (A2.1), its list still empty
    "losses = []\nfor step in range(3):\n    (x * x).sum().backward()\n"
    "    losses.append(float(x.grad.sum()))",
    "check('losses, step by step', losses, losses)",
    "print('live', x.shape)",
    "for loss in losses:\n    print('loss', loss)",
]


def test_a_cell_reading_what_a_stopped_cell_left_shows_its_recording(edition):
    """Lesson 06's comparison and lesson 07's loss table once ran live on the empty lists a
    stopped cell left, printing PASS on nothing, or nothing at all."""
    from tinygrad_course.lessons.notebooks import execute_notebook
    from tinygrad_course.lessons.recorded import RECORDED_DIR

    _write_state(edition, ())
    out = edition[0]
    recordings = {cell_key(_PARTIAL[1]): [{"output_type": "stream", "name": "stdout",
                                          "text": "recorded losses 6.0 6.0 6.0\n"}],
                  cell_key(_PARTIAL[2]): [{"output_type": "stream", "name": "stdout",
                                          "text": "recorded check of 3 losses\n"}]}  # fmt: skip
    (out / "notebooks" / RECORDED_DIR / "99_partial.json").write_text(
        json.dumps({"cells": recordings}), encoding="utf-8")  # fmt: skip
    nb = {"cells": [{"cell_type": "code", "source": c, "metadata": {}, "outputs": [],
                     "execution_count": None} for c in _PARTIAL],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}  # fmt: skip
    done = execute_notebook(nb, out / "notebooks", root=out, timeout=120)
    texts = [_text({"cells": [c]}) for c in done["cells"]]
    assert "needs assignment A2.1" in texts[1] and "recorded losses" in texts[1]
    assert "PASS" not in texts[2] and "nothing to compare" not in texts[2]
    assert "reads losses, which a cell above could not finish (it needs A2.1)" in texts[2]
    assert "recorded check of 3 losses" in texts[2]
    assert texts[3].strip() == "live (2,)"  # a cell that reads only whole values runs live
    # no recording: says why it cannot run, and runs nothing
    assert "reads losses" in texts[4] and "run the lesson again from the top" in texts[4]
    assert "loss " not in texts[4].replace("reads losses", "")


# Run in a student edition's interpreter (the library's assignments unwritten): each exercise
# checked with the right answer, the solution cell of the instructor's lesson (argv[1]), with
# the lesson's imports and its earlier exercises' answers; prints the numbers that pass. Each
# recorded wrong answer is taken from the instructor's lesson module (the edition ships none
# of their code: its answers are ``...``), run in the edition, and checked there.
_DAY_ONE = r"""
import ast, contextlib, importlib, io, json, sys, types
from pathlib import Path
from tinygrad_course import lessons
from tinygrad_course.lessons.exercise import reference_solution
from tinygrad_course.lessons.notebooks import lesson_notebooks
root = Path(sys.argv[1])
lessons.set_strict(False)
try:  # as lessons 12-14 import it in their kernel: a check's child process then has it
    import torch
except ImportError:
    pass


# the instructor's lesson modules, as a package beside the edition's (a lesson imports
# another's helpers), run with the edition's library
package = types.ModuleType("tinygrad_course.instructors")
package.__path__ = [str(root / "tinygrad_course" / "lessons")]
sys.modules[package.__name__] = package


def instructors(module):
    return importlib.import_module(f"{package.__name__}.{module.__name__.rsplit('.', 1)[1]}")


passed, other, wrong, shipped = [], {}, {}, []
for module in lessons.lesson_modules():
    lesson = int(module.EXERCISES[0].number.split(".")[0])
    sources = [p.read_text(encoding="utf-8")  # the lesson's notebook, or each of its parts
               for p in lesson_notebooks(root / "notebooks", lesson, ".py")]
    names = {"ex": module}
    for node in (node for source in sources for node in ast.parse(source).body):
        if isinstance(node, ast.Import | ast.ImportFrom):
            exec(compile(ast.Module([node], []), "<imports>", "exec"), names)
    own = instructors(module)
    for ex, mine in zip(module.EXERCISES, own.EXERCISES, strict=True):
        attr = next(k for k, v in vars(module).items() if v is ex)
        text, why = reference_solution(ex, root=root)
        try:
            if text is None:  # a reference holding a graded task's code is not shown
                raise LookupError(why)
            exec(text, names)
            with contextlib.redirect_stdout(io.StringIO()):
                result = ex.check(names[attr], strict=False)
        except Exception as e:
            other[ex.number] = f"{type(e).__name__}: {e}"
        else:
            if result.passed:
                passed.append(ex.number)
            else:
                other[ex.number] = f"{result.status}: {result.message}"
        assert [w.what for w in ex.wrong] == [w.what for w in mine.wrong], ex.number
        for w, answer in zip(ex.wrong, mine.wrong, strict=True):
            if w.answer is not ...:
                shipped.append(f"{ex.number} {w.what}")
            lessons.reset()  # each a first try
            with contextlib.redirect_stdout(io.StringIO()):
                got = ex.check(answer.answer, strict=False)
            wrong[f"{ex.number} {w.what}"] = [got.status, got.hint == w.hint, got.message]
print(json.dumps({"passed": passed, "other": other, "wrong": wrong, "shipped": shipped}))
"""

# the exercises a right answer passes on day one; each other one still needs an assignment
# written first (NOT SOLVED YET names it) because its answer calls one: gradients() (2.3, 8.1,
# 9.1), tg.grad (10.3), the nn layers and backward (13.2). A check that runs the learner's
# symbolic graph reads the values computed as it was built (lessons.as_built), and one that
# hands the learner a graph the engine makes rebuilds it from the edition's recording. 15
# before the checks compared with recorded values, 19 before they recorded the references'
# values too, 27 before the values as built.
DAY_ONE = ["0.1", "1.1", "1.2", "1.3", "2.1", "2.2", "3.1", "3.2", "4.1", "4.2", "4.3", "5.1",
           "5.2", "6.1", "6.2", "7.1", "8.2", "8.3", "9.2", "9.3", "10.1", "10.2", "11.1", "11.2",
           "11.3", "12.1", "12.2", "13.1", "14.1", "14.2", "15.1", "15.2", "16.1", "16.2", "17.1",
           "17.2"]  # fmt: skip
# the exercises whose answer itself calls an unwritten assignment: they wait for it
WAITING = {"2.3": "A1.1", "8.1": "A1.1", "9.1": "A1.1", "10.3": "A2.1", "13.2": "A3.1"}


@pytest.fixture(scope="module")
def recorded_edition(tmp_path_factory):
    """A student edition with the exercises' expected values and the outcomes of their
    recorded wrong answers stored (``record_expected``), as ``make-student`` writes it."""
    from tinygrad_course.grading.student import make_student_edition
    from tinygrad_course.lessons.recorded import record_expected

    out = tmp_path_factory.mktemp("recorded") / "course-student"
    make_student_edition(ROOT, out)
    record_expected(out / "notebooks")
    return out


def _run_exercises(tmp_path, pythonpath, cwd) -> dict:
    """What :data:`_DAY_ONE` finds with ``pythonpath`` (the library and the course it runs)."""
    import os
    import subprocess
    import sys

    script = tmp_path / "day_one.py"
    script.write_text(_DAY_ONE, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(pythonpath), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, str(script), str(ROOT)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# names a recorded wrong answer calls that are not its code: what the lesson gives (the
# lesson's block, shown in the notebook) and the library's symbolic package
GIVEN = {"lesson08": {"_ad"}, "lesson10": {"block"}}


def _body(node) -> str:
    return ast.dump(ast.Module(node.body, []))


@pytest.mark.slow
def test_the_edition_ships_no_code_of_a_recorded_wrong_answer(recorded_edition):
    """Many recorded wrong answers are the solution with one token changed (lesson 1's central
    difference divided by eps, 11.1's size without its + 1, 9.3's peak with one flag changed,
    lesson 2's factory whose default flags build the answer): the edition keeps their what
    and hint, and ships none of their code, not as a lambda, a named function, a factory, or
    a helper they call, nor inside a grade function that computes a mistake's value with it."""
    from tinygrad_course.grading.wrong_answers import wrong_answer_nodes

    counted = 0
    for name in LESSON_MODULES:
        ours = ast.parse((ROOT / "tinygrad_course" / "lessons" / f"{name}.py").read_text("utf-8"))
        theirs = ast.parse((recorded_edition / "tinygrad_course" / "lessons" /
                            f"{name}.py").read_text("utf-8"))  # fmt: skip
        defined = {n.name: n for n in ast.walk(ours)
                   if isinstance(n, ast.FunctionDef | ast.ClassDef)}  # fmt: skip
        shipped = {n.name: _body(n) for n in ast.walk(theirs)
                   if isinstance(n, ast.FunctionDef | ast.ClassDef)}  # fmt: skip
        lambdas = {ast.dump(n) for n in ast.walk(theirs) if isinstance(n, ast.Lambda)}
        answers = wrong_answer_nodes(ours)
        assert [ast.dump(a) for a in wrong_answer_nodes(theirs)] == \
            [ast.dump(ast.Constant(...))] * len(answers), name  # fmt: skip
        for answer in answers:
            counted += 1
            assert not isinstance(answer, ast.Lambda) or ast.dump(answer) not in lambdas, \
                (name, answer.lineno)  # fmt: skip
            called = {n.id for n in ast.walk(answer) if isinstance(n, ast.Name)} & set(defined)
            for helper in called - GIVEN.get(name, set()):
                # a reference the answer calls ships as its stub (markers strip its body)
                assert shipped.get(helper) != _body(defined[helper]), (name, helper)
    assert counted >= 150


@pytest.mark.slow
def test_exercises_answer_on_day_one(recorded_edition, tmp_path):
    """A right answer that calls no unwritten graded function passes in the student edition
    before any assignment is written: the checks whose expected values come from the engine
    compare with values recorded when the edition was made."""
    found = _run_exercises(tmp_path, recorded_edition, recorded_edition)
    assert found["shipped"] == []  # the edition's wrong answers are all stand-ins
    assert found["passed"] == DAY_ONE, found
    assert len(found["passed"]) == len(DAY_ONE) == 36
    assert set(found["other"]) == set(WAITING), found["other"]
    for number, why in found["other"].items():  # each waits for a named assignment
        assert f"this check needs assignment {WAITING[number]} " in why, (number, why)
    # every recorded wrong answer of an exercise that answers on day one, written by a
    # student (its code from the instructor's module), is rejected there with its own hint:
    # the edition holds none of their code, so the check knows each mistake from what it gave
    # when the edition was made; only a wrong answer that itself calls an unwritten assignment
    # waits for it
    day_one = {k: v for k, v in found["wrong"].items() if k.split(" ")[0] in DAY_ONE}
    assert len(day_one) >= 100
    for key, (status, own_hint, message) in day_one.items():
        assert (status == "fail" and own_hint) or "needs assignment" in message, (key, message)


@pytest.mark.slow
def test_recorded_mistakes_keep_their_hints_once_every_assignment_is_written(
        recorded_edition, tmp_path):  # fmt: skip
    """The edition's course with the whole library (every assignment written): every exercise
    passes with its right answer, and every recorded wrong answer, written by a student, is
    rejected with its own hint, known from what it gave when the edition was made."""
    mixed = tmp_path / "written"
    mixed.mkdir()
    (mixed / "tinygrad_course").symlink_to(recorded_edition / "tinygrad_course")
    (mixed / "tinygrad_edu").symlink_to(ROOT / "tinygrad_edu")
    found = _run_exercises(tmp_path, mixed, recorded_edition)
    assert found["shipped"] == []
    # every exercise passes, but those whose reference holds a graded task's code (not shown,
    # so not run here)
    assert all("not shown" in why for why in found["other"].values()), found["other"]
    assert len(found["passed"]) + len(found["other"]) == \
        sum(len(m.EXERCISES) for m in lesson_modules()) and len(found["other"]) <= 4  # fmt: skip
    assert len(found["wrong"]) >= 150
    for key, (status, own_hint, message) in found["wrong"].items():
        assert status == "fail" and own_hint, (key, status, message)
