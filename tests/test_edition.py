"""``tinygrad-edu make-student`` as the instructor guide has it run, and the edition it makes as
a student first meets it: what it checks before writing, what it prints, the README and site
a student gets, and the install the README's one command makes (``make lessons``)."""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

import nbformat
import pytest

from tinygrad_course.lessons import edition

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"

# what the instructor's README and guide say that a student must not be told or shown
INSTRUCTOR_WORDS = ("shows every solution", "Instructors make the edition", "make-student",
                    "instructor guide", "hidden tests are", "gradescope-zip")  # fmt: skip


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    edition.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_make_student_says_what_to_install_before_writing_anything(tmp_path, monkeypatch, capsys):
    """In a venv with only the notebooks extra, make-student once died after seconds in a raw
    kernel traceback (``No module named 'graphviz'``), leaving a half-written edition."""
    monkeypatch.setitem(edition.LESSON_MODULES, "no_such_module_for_lessons", "no-such-package")
    monkeypatch.setenv("PATH", str(tmp_path))  # no Graphviz `dot` on it
    out = tmp_path / "course-student"
    assert edition.run(_args(str(ROOT), "--out", str(out))) == 1
    said = capsys.readouterr().out
    assert "nothing written" in said and not out.exists()
    assert "no-such-package" in said and 'pip install -e ".[lessons]"' in said
    assert "`dot`" in said and "apt-get install graphviz" in said and "brew install" in said
    assert "--no-record" in said


def _lessons_extra() -> set[str]:
    """The distributions the lessons extra names (lower case, ``-`` for ``_``)."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]  # fmt: skip
    return {re.split(r"[<>=\[ ]", req)[0].lower().replace("_", "-") for req in extras["lessons"]}


# modules whose distribution has another name, or comes with one the extra names
PROVIDED_BY = {"PIL": "pillow", "IPython": "ipykernel", "array_api_strict": "array-api-strict"}


def test_what_make_student_checks_is_what_the_lessons_extra_installs():
    """Every package the recording needs is in the lessons extra, which is what the message
    tells the instructor to install."""
    names = _lessons_extra()
    for module in edition.LESSON_MODULES:
        assert PROVIDED_BY.get(module, module).lower() in names, module
    assert edition.missing() == [], "this test run has everything installed"


_STDLIB = set(sys.stdlib_module_names)


def _unguarded_imports(path: Path) -> set[str]:
    """Top-level modules a lesson imports outside a ``try`` or an ``if`` (``if HAS_GPU:
    import cupy``): what it cannot run without."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    guarded = {id(n) for t in ast.walk(tree) if isinstance(t, ast.Try | ast.If)
               for b in t.body for n in ast.walk(b)}  # fmt: skip
    found = set()
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found - _STDLIB - {"tinygrad_edu", "tinygrad_course", "numpy"}


@pytest.mark.parametrize("lesson", sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]*_*.py")))
def test_the_lessons_extra_has_what_each_lesson_imports(lesson):
    """`make lessons` installs the lessons extra alone: a lesson importing a package only
    another extra installs (array_api_strict, once only in dev) stops at that cell."""
    names = _lessons_extra()
    for module in _unguarded_imports(NOTEBOOKS / lesson):
        assert PROVIDED_BY.get(module, module).lower() in names, (
            f"{lesson} imports {module}, which the lessons extra does not install"
        )
        assert module in edition.LESSON_MODULES, f"make-student does not check for {module}"
    assert "torch" not in names, "PyTorch is added apart (make pytorch), CPU build"


def test_notebook_kernels_do_not_warn_about_tcp_on_the_terminal(tmp_path, capfd):
    """Each lesson's kernel once printed "Kernel is running over TCP without encryption" on
    the instructor's terminal: 17 times per make-student."""
    from tinygrad_course.lessons.notebooks import execute_notebook

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("print(6 * 7)"),
        nbformat.v4.new_code_cell("import sys; print('real trouble', file=sys.stderr)"),
    ])  # fmt: skip
    done = execute_notebook(json.loads(nbformat.writes(nb)), tmp_path, timeout=120)
    texts = ["".join(cell["outputs"][0]["text"]) for cell in done["cells"]]
    assert texts[0] == "42\n" and "real trouble" in texts[1]  # what cells print comes back
    err = capfd.readouterr().err
    assert "without encryption" not in err and "WARNING" not in err, err


def test_lessons_start_with_the_longest_when_run_side_by_side(tmp_path):
    from tinygrad_course.lessons.recorded import _committed_seconds

    timed = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")])
    timed.cells[0].metadata["execution"] = {
        "iopub.execute_input": "2026-01-01T00:00:00.5Z",
        "shell.execute_reply": "2026-01-01T00:00:03Z",
    }
    (tmp_path / "a.ipynb").write_text(nbformat.writes(timed))
    (tmp_path / "b.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook()))
    assert _committed_seconds(tmp_path / "a.ipynb") == 2.5
    assert _committed_seconds(tmp_path / "b.ipynb") == float("inf")  # unknown: started first


# -- the edition a student gets ---------------------------------------------------------------


def test_the_edition_readme_is_the_students(student_edition):
    """The edition's README was the instructor's ("opening notebooks/ here shows every
    solution"); it is the students': the edition, lesson 0, the assignments, checking work."""
    out, report = student_edition
    readme = (out / "README.md").read_text(encoding="utf-8")
    for words in INSTRUCTOR_WORDS:
        assert words not in readme, words
    for words in (
        "make lessons",
        "notebooks/00_setup.ipynb",
        "STUDENT.md",
        "tinygrad-edu grade",
        "make pytorch",
        "download.pytorch.org/whl/cpu",
        'pip install -e ".[lessons]"',
    ):
        assert words in readme, words
    for link in re.findall(r"\]\(([^)#]+)", readme):
        assert (out / link).exists(), f"the README links to {link}, not in the edition"
    assert not (out / "README.student.md").exists()


def test_the_edition_site_has_no_instructor_page(student_edition):
    out, report = student_edition
    assert "docs/instructors.md" in report["left_out"]
    assert not (out / "docs" / "instructors.md").exists()
    for page in (out / "docs").rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        assert "For instructors" not in text and "instructors only" not in text.lower(), page
    nav = (out / "mkdocs.yml").read_text(encoding="utf-8")
    assert "instructors.md" not in nav and "Instructor guide" not in nav
    # the instructor's own site keeps its guide
    assert "instructors.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


def test_the_edition_readme_in_the_instructors_repository_is_not_the_instructors():
    """README.student.md is the edition's README: the instructor's README points to the guide,
    the students' to the lessons."""
    assert "make-student" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make-student" not in (ROOT / "README.student.md").read_text(encoding="utf-8")


def test_a_lesson_that_fails_while_recorded_is_named_and_nothing_is_written(
    tmp_path, monkeypatch, capsys
):
    """A lesson that fails in its kernel (a cell timing out on a busy machine) ended
    make-student in a raw traceback; it names the lesson and the cell's error, and writes
    nothing."""
    from tinygrad_course.lessons import notebooks, recorded

    repo = tmp_path / "repo"
    (repo / "notebooks").mkdir(parents=True)
    for name in ("00_first", "01_second"):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
        (repo / "notebooks" / f"{name}.ipynb").write_text(nbformat.writes(nb))

    def fails_on_the_second(notebook, cache_dir, timeout=300):
        if notebook.name.startswith("01"):
            raise TimeoutError("A cell timed out while it was being executed")
        return notebook

    monkeypatch.setattr(notebooks, "executed_student_edition", fails_on_the_second)
    out = tmp_path / "course-student"
    args = _args(str(repo), "--out", str(out), "--jobs", "1")
    monkeypatch.setattr(edition, "missing", lambda record=True: [])
    assert edition.run(args) == 1
    said = capsys.readouterr().out
    assert "nothing written" in said and "01_second.ipynb stopped" in said
    assert "A cell timed out" in said and "Traceback" not in said
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["repo"]
    assert recorded.RecordingError.__mro__[1] is RuntimeError


def test_a_cell_waits_only_for_the_assignment_that_stopped_it(capsys):
    """Lesson 7 on a CPU-only machine: the GPU error cell stops on A4.1 (optional there); a
    later training cell stopped by A3.1 once said that what it left unfinished waits for A4.1
    too (every assignment pending then), so each cell after it asked the student for A4.1."""
    from types import SimpleNamespace

    from tinygrad_course.lessons.recorded import Unlocker

    unlocker = Unlocker(shell=None, recordings={})

    def stopped(source: str, task: str) -> None:
        unlocker.pre_run_cell(SimpleNamespace(raw_cell=source))
        text = unlocker.explain(NotImplementedError(f"{task}: write your solution here"), source)
        unlocker._replace(text, source)

    stopped("show_error('cuda', lambda: backend.get_namespace('cuda'))", "A4.1")
    stopped("model = Linear(2, 1)\nloss = model(x).sum()", "A3.1")
    assert unlocker.partial == {"model": {"A3.1"}, "loss": {"A3.1"}}
    unlocker.pre_run_cell(SimpleNamespace(raw_cell="print(loss)"))
    capsys.readouterr()
    unlocker.stand_in()
    said = capsys.readouterr().out
    assert "reads loss" in said and "needs A3.1" in said and "A4.1" not in said


def test_an_answer_cell_whose_function_takes_an_unfinished_name_still_runs():
    """Lesson 1 on day one: a cell stopped by A2.1 leaves ``x`` half made, and the answer cell
    ``def central_difference(f, x, eps)`` was stood in for (its parameter read as that ``x``),
    so the student's function was never defined and the check showed its recording."""
    from types import SimpleNamespace

    from tinygrad_course.lessons.recorded import Unlocker

    unlocker = Unlocker(shell=None, recordings={})
    stopped = "x = tg.tensor([1.0])\ny = f(x)"
    unlocker.pre_run_cell(SimpleNamespace(raw_cell=stopped))
    unlocker._replace(unlocker.explain(NotImplementedError("A2.1: write your solution here"),
                                       stopped), stopped)  # fmt: skip
    assert unlocker.partial == {"x": {"A2.1"}, "y": {"A2.1"}}
    answer = "def central_difference(f, x, eps=1e-6):\n    return (f(x + eps) - f(x)) / eps"
    assert unlocker._waits_for(answer) == frozenset()
    assert unlocker._waits_for("def g(a):\n    return a * y") == {"A2.1"}  # a global it reads
    assert unlocker._waits_for("print(x)") == {"A2.1"}


def test_an_exercises_fail_is_shown_where_a_cell_above_waits(monkeypatch, capsys):
    """On day one a cell above an exercise waits for an assignment; a value check there is
    explained by it (its recording is shown), but a wrong answer to the exercise is the
    student's own: it showed the check's recording (NOT SOLVED YET) in place of its hint."""
    from tinygrad_course.lessons import checks, lesson01

    monkeypatch.setattr(checks, "blocked_hook", lambda: True)
    checks.reset()
    wrong = lesson01.central_difference.wrong[1]  # divided by eps
    got = lesson01.central_difference.check(wrong.answer, strict=False)
    assert got.status == checks.FAIL and got.hint == wrong.hint
    assert "Hint: " + wrong.hint in capsys.readouterr().out
    with pytest.raises(LookupError, match="a cell above could not run"):
        checks.check(1.0, 2.0, "a value a stopped cell would have made", strict=False)
    checks.reset()
