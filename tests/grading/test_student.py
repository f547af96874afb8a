"""Student editions: markers in .py files and notebooks, errors, and an edition that imports."""

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from tinygrad_course.grading import student
from tinygrad_course.grading.student import MarkerError, make_student_edition, strip_solutions

CORE = '''\
"""A toy module. The markers in this docstring are text, not regions:

    # BEGIN SOLUTION
    # END SOLUTION
"""


def double(x):
    """Twice x."""
    # BEGIN SOLUTION T1
    y = x + x
    return y
    # END SOLUTION


class Box:
    def area(self, w, h):
        if w < 0:
            raise ValueError("negative")
        # BEGIN SOLUTION
        return w * h
        # END SOLUTION


VALUE = 3
'''

TESTS = '''\
from toy.core import double


def test_visible():
    assert double(2) == 4


# BEGIN HIDDEN TESTS
def test_hidden():
    assert double(-1) == -2
# END HIDDEN TESTS
'''


def _repo(tmp_path):
    repo = tmp_path / "repo"
    (repo / "toy").mkdir(parents=True)
    (repo / "toy" / "__init__.py").write_text("from .core import VALUE, Box, double\n")
    (repo / "toy" / "core.py").write_text(CORE)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_toy.py").write_text(TESTS)
    (repo / "README.md").write_text("# BEGIN SOLUTION\nmarkdown is copied as it is\n")
    for skipped in (".git", ".venv", "__pycache__", "toy.egg-info", "build"):
        (repo / skipped).mkdir()
        (repo / skipped / "junk.py").write_text("# BEGIN SOLUTION\n")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("Write `double`."),
        nbformat.v4.new_code_cell("# BEGIN SOLUTION T2\nanswer = 42\n# END SOLUTION\nprint(1)"),
        nbformat.v4.new_code_cell("!echo magic\nprint(answer)"),
    ]
    nb.cells[2].outputs = [nbformat.v4.new_output("stream", text="42\n")]
    nb.cells[2].execution_count = 2
    (repo / "lesson.ipynb").write_text(nbformat.writes(nb))
    plain = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
    (repo / "plain.ipynb").write_text(nbformat.writes(plain))
    return repo


def test_strip_solutions_keeps_indentation_and_task():
    out = strip_solutions(CORE, "core.py")
    assert '    raise NotImplementedError("T1: write your solution here")\n' in out
    assert '        raise NotImplementedError("solution: write your solution here")\n' in out
    assert "x + x" not in out and "w * h" not in out
    assert "    # BEGIN SOLUTION\n    # END SOLUTION\n" in out  # docstring text untouched
    assert out.count("\n") == CORE.count("\n") - 5
    assert 'raise ValueError("negative")' in out  # code outside the region stays


def test_hidden_tests_are_removed():
    out = strip_solutions(TESTS, "test_toy.py")
    assert "test_hidden" not in out and "HIDDEN" not in out
    assert "def test_visible" in out


@pytest.mark.parametrize(
    "source, line, words",
    [
        ("def f():\n    # BEGIN SOLUTION\n    pass\n", 2, "never closed"),
        ("def f():\n    pass\n    # END SOLUTION\n", 3, "without a BEGIN"),
        ("def f():\n    # BEGIN SOLUTION\n    # BEGIN SOLUTION\n", 3, "cannot nest"),
        ("def f():\n    # BEGIN SOLUTION\n    # BEGIN HIDDEN TESTS\n", 3, "cannot nest"),
        ("def f():\n    # BEGIN SOLUTION\n    # END HIDDEN TESTS\n", 3, "expected END SOLUTION"),
        ("def f():\n    # BEGIN SOLUTION\n    pass\n    # END SOLUTION A1\n", 4, "no name"),
    ],
)
def test_unbalanced_markers_name_file_and_line(source, line, words):
    with pytest.raises(MarkerError, match=f"mod.py, line {line}: .*{words}"):
        strip_solutions(source, "mod.py")


def test_module_level_region_and_broken_result_are_errors():
    with pytest.raises(MarkerError, match="not inside a function"):
        strip_solutions("# BEGIN SOLUTION\nX = 1\n# END SOLUTION\n", "mod.py")
    with pytest.raises(MarkerError, match="does not compile"):
        strip_solutions("def f():\n# BEGIN HIDDEN TESTS\n    pass\n# END HIDDEN TESTS\n", "m.py")


def test_make_student_edition(tmp_path):
    repo = _repo(tmp_path)
    out = tmp_path / "student"
    report = make_student_edition(repo, out)
    assert report["stripped"] == ["lesson.ipynb", "tests/test_toy.py", "toy/core.py"]
    assert report["copied"] == ["README.md", "plain.ipynb", "toy/__init__.py"]
    for skipped in (".git", ".venv", "__pycache__", "toy.egg-info", "build"):
        assert not (out / skipped).exists()
    assert (out / "README.md").read_text() == (repo / "README.md").read_text()
    assert (out / "plain.ipynb").read_bytes() == (repo / "plain.ipynb").read_bytes()
    nb = nbformat.reads((out / "lesson.ipynb").read_text(), as_version=4)
    expected = 'raise NotImplementedError("T2: write your solution here")\nprint(1)'
    assert nb.cells[1].source == expected
    assert nb.cells[2].source.startswith("!echo magic")
    assert nb.cells[2].outputs == [] and nb.cells[2].execution_count is None
    assert nb.cells[0].source == "Write `double`."
    # the edition imports (function bodies raise), and its visible test fails as it should
    code = textwrap.dedent(
        """
        import toy
        assert toy.VALUE == 3
        try:
            toy.double(2)
        except NotImplementedError as e:
            print(e)
        """
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # the shared edition stays as made
    done = subprocess.run([sys.executable, "-c", code], cwd=out, env=env, capture_output=True,
                          text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "T1: write your solution here"
    done = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "")  # the instructor's version does not raise


def test_errors_write_nothing_and_name_every_file(tmp_path):
    repo = _repo(tmp_path)
    (repo / "toy" / "bad.py").write_text("def f():\n    # BEGIN SOLUTION\n    pass\n")
    (repo / "toy" / "worse.py").write_text("def g():\n    # END SOLUTION\n")
    with pytest.raises(MarkerError) as info:
        make_student_edition(repo, tmp_path / "student")
    assert "toy/bad.py, line 2" in str(info.value) and "toy/worse.py, line 2" in str(info.value)
    assert not (tmp_path / "student").exists()


def test_existing_output_needs_force(tmp_path):
    repo = _repo(tmp_path)
    out = tmp_path / "student"
    out.mkdir()
    (out / "old.txt").write_text("old")
    with pytest.raises(FileExistsError, match="--force"):
        make_student_edition(repo, out)
    make_student_edition(repo, out, force=True)
    assert not (out / "old.txt").exists() and (out / "toy" / "core.py").exists()


def test_cli_run(tmp_path, capsys):
    import argparse

    repo = _repo(tmp_path)
    parser = argparse.ArgumentParser()
    student.add_arguments(parser)
    assert student.run(parser.parse_args([str(repo)])) == 0
    assert (tmp_path / "repo-student" / "toy" / "core.py").exists()
    assert "3 files stripped" in capsys.readouterr().out
    assert student.run(parser.parse_args([str(repo)])) == 1  # exists: refuses
    assert "--force" in capsys.readouterr().out


def test_gitignore_is_honoured(tmp_path):
    repo = _repo(tmp_path)
    (repo / ".gitignore").write_text("out/\n*.log\n!keep.log\n/secret.txt\n")
    (repo / "sub").mkdir()
    (repo / "sub" / ".gitignore").write_text("local.py\n")
    for rel in ("out/report.txt", "x.log", "keep.log", "secret.txt", "sub/secret.txt",
                "sub/local.py", "sub/kept.py", "toy/out/inner.txt"):  # fmt: skip
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("data\n")
    out = tmp_path / "student"
    make_student_edition(repo, out)
    for gone in ("out", "x.log", "secret.txt", "sub/local.py", "toy/out"):
        assert not (out / gone).exists(), gone
    for kept in ("keep.log", "sub/secret.txt", "sub/kept.py", ".gitignore", "sub/.gitignore"):
        assert (out / kept).exists(), kept


def test_build_scripts_are_never_copied(tmp_path):
    repo = _repo(tmp_path)
    generator = repo / "notebooks" / "_build" / "make_01.py"
    generator.parent.mkdir(parents=True)
    generator.write_text(
        'CELL = """\n# BEGIN SOLUTION\nanswer = 42\n# END SOLUTION\n"""\n'
    )
    out = tmp_path / "student"
    make_student_edition(repo, out)
    assert not (out / "notebooks" / "_build").exists()
    assert "answer = 42" not in "".join(p.read_text() for p in out.rglob("*.py"))


JUPYTEXT = """\
# ---
# jupyter:
#   jupytext:
#     text_representation:
#       format_name: percent
# ---

# %% [markdown]
# Write `square`.

# %%
# BEGIN SOLUTION L1
def square(x):
    return x * x
# END SOLUTION

# %%
print(square(3))
"""


def test_jupytext_sources_are_stripped_like_notebook_cells(tmp_path):
    repo = _repo(tmp_path)
    (repo / "notebooks").mkdir()
    (repo / "notebooks" / "01_lesson.py").write_text(JUPYTEXT)
    out = tmp_path / "student"
    report = make_student_edition(repo, out)
    assert "notebooks/01_lesson.py" in report["stripped"]
    text = (out / "notebooks" / "01_lesson.py").read_text()
    assert "x * x" not in text
    assert 'raise NotImplementedError("L1: write your solution here")' in text
    compile(text, "01_lesson.py", "exec")
    assert student.is_jupytext(JUPYTEXT) and not student.is_jupytext(CORE)


def test_widget_state_and_solution_outputs_are_dropped(tmp_path):
    repo = _repo(tmp_path)
    for name in ("lesson.ipynb", "plain.ipynb"):
        nb = nbformat.reads((repo / name).read_text(), as_version=4)
        nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"x": "y" * 100}}
        nb.cells[-1].outputs = [nbformat.v4.new_output("stream", text="shown\n")]
        (repo / name).write_text(nbformat.writes(nb))
    out = tmp_path / "student"
    make_student_edition(repo, out)
    lesson = nbformat.reads((out / "lesson.ipynb").read_text(), as_version=4)
    plain = nbformat.reads((out / "plain.ipynb").read_text(), as_version=4)
    assert "widgets" not in lesson.metadata and "widgets" not in plain.metadata
    assert all(c.outputs == [] for c in lesson.cells if c.cell_type == "code")
    assert plain.cells[-1].outputs[0]["text"] == "shown\n"  # no solution here: outputs stay


def _sources(path) -> list[str]:
    """The texts a file holds: a notebook's cells (and outputs), or the file itself."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix != ".ipynb":
        return [text]
    nb = nbformat.reads(text, as_version=4)
    out = [c.source for c in nb.cells]
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            out.append(str(o.get("text", "")) + json.dumps(o.get("data", {})))
    return out


def _unmarked(text: str) -> set[str]:
    """Lines outside BEGIN/END SOLUTION markers, wherever the markers are (strings too)."""
    out, inside = set(), False
    for line in text.splitlines():
        if re.search(r"#\s*BEGIN SOLUTION", line):
            inside = True
        elif re.search(r"#\s*END SOLUTION", line):
            inside = False
        elif not inside:
            out.add(line.strip())
    return out


def _split(source: str, where: str) -> tuple[set, set]:
    """(significant lines inside solution regions, lines outside them)."""
    lines = source.splitlines()
    try:
        regions = student.solution_regions(source, where)
    except student.MarkerError:
        regions = []
    inside_numbers = {n for begin, end, _ in regions for n in range(begin, end + 1)}
    inside = {ln.strip() for n, ln in enumerate(lines, 1) if n in inside_numbers}
    outside = {ln.strip() for n, ln in enumerate(lines, 1) if n not in inside_numbers}
    return {ln for ln in inside if len(ln) >= 16 and not ln.startswith("#")}, outside


def test_real_repository_edition_imports_and_holds_no_solution(student_edition):
    from pathlib import Path

    root = Path(student.__file__).resolve().parents[2]
    out, report = student_edition  # the session's: read only
    assert not (out / ".git").exists() and not (out / ".venv").exists()
    # its docstring markers are text
    assert "tinygrad_course/grading/student.py" in report["copied"]
    code = ("import tinygrad_edu, tinygrad_course.grading.pytest_plugin; "
            "print(tinygrad_edu.__file__)")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # the shared edition stays as made
    done = subprocess.run([sys.executable, "-c", code], cwd=out, env=env, capture_output=True,
                          text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert str(out) in done.stdout
    assert not (out / "notebooks" / "_build").exists(), "build scripts hold solutions"
    # no line of any solution (library, lessons) anywhere in the edition
    solutions, own = set(), {}
    for rel in report["stripped"]:
        outside = set()
        for k, source in enumerate(_sources(root / rel)):
            inside, out_ = _split(source, f"{rel}:{k}")
            solutions |= inside
            outside |= out_
        own[rel] = outside
    assert len(solutions) > 50, "the library should have solution regions"
    leaks = []
    for path in out.rglob("*"):
        if not path.is_file() or path.suffix not in (".py", ".ipynb", ".md", ".txt", ".json"):
            continue
        rel = path.relative_to(out).as_posix()
        if rel not in own:  # copied as it is: its lines, less any marked solution (in a string)
            own[rel] = {ln for src in _sources(root / rel) for ln in _unmarked(src)}
        lines = {ln.strip() for src in _sources(path) for ln in src.splitlines()}
        leaks += [f"{rel}: {line}" for line in sorted((solutions & lines) - own[rel])]
        if path.suffix == ".ipynb":
            nb = json.loads(path.read_text(encoding="utf-8"))
            assert "widgets" not in nb.get("metadata", {}), f"{rel} keeps widget state"
    assert not leaks, "solution text in the student edition:\n" + "\n".join(leaks[:20])
    # the visible tests check behaviour; they ship no reference implementation
    for suite in (out / "tests" / "assignments").glob("test_*.py"):
        text = suite.read_text()
        assert "import heapq" not in text and "_reference(" not in text, suite.name


def test_waits_for_names_another_tasks_stub_only():
    from tinygrad_course.grading.pytest_plugin import waits_for

    def stub(task):
        raise NotImplementedError(f"{task}: write your solution here")

    try:
        try:
            stub("A1.6")
        except NotImplementedError as e:  # as the engine re-raises it, naming the node
            raise NotImplementedError("A1.6: write your solution here\n\n(raised in "
                                      "SumBackward0 during backward)") from e  # fmt: skip
    except NotImplementedError as e:
        wrapped = e
    assert waits_for(wrapped, {"task": "A2.2"}) == "A1.6"
    assert waits_for(wrapped, {"task": "A1.6"}) is None  # the task's own stub: a failure
    assert waits_for(wrapped, {"task": "A3.5", "uses": ("A1.6",)}) is None
    assert waits_for(ValueError("A1.6: write your solution here"), {"task": "A2.2"}) is None


def test_a2_grades_at_home_without_a1_as_the_autograder_does(tmp_path):
    """A2.1-A2.5 written, A1 not: `tinygrad-edu grade` once gave 5/24, A2.2-A2.5 failing on
    A1.6's stub, where the autograder (the reference for every other task) gives full marks.
    At home the tests that reach another task's stub wait for it, named, out of the score."""
    from pathlib import Path

    from tinygrad_course.grading.splice import splice, task_functions

    root = Path(student.__file__).resolve().parents[2]
    out = tmp_path / "edition"
    make_student_edition(root, out)
    for path in (root / "tinygrad_edu" / "eager").glob("*.py"):
        reference = path.read_text(encoding="utf-8")
        if "BEGIN SOLUTION A2" not in reference:
            continue
        rel = path.relative_to(root)
        keep = {t for t in task_functions(reference) if not t.startswith("A2.")}
        (out / rel).write_text(splice(reference, (out / rel).read_text(encoding="utf-8"),
                                      keep=keep).text, encoding="utf-8")  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(out), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-m", "tinygrad_course", "grade",
                           "tests/assignments/test_a2_eager.py"], cwd=out, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    assert "failed" not in done.stdout and "NotImplementedError" not in done.stdout
    assert re.search(r"tests of A2\.2, A2\.3, A2\.4, A2\.5 wait for A1\.6, which is not "
                     r"written yet", done.stdout), done.stdout[-3000:]  # fmt: skip
    assert "the reference A1.6" in done.stdout
    assert re.search(r"^A2\.1\s+2\s+2\s+3 / 3$", done.stdout, re.M), done.stdout[-3000:]


def test_the_student_handout_lists_every_task_and_ships_in_the_edition(student_edition):
    """STUDENT.md, linked from the README: each graded task of the library, its file and its
    functions, and the command that checks it."""
    from pathlib import Path

    from tinygrad_course.grading.splice import task_functions

    root = Path(student.__file__).resolve().parents[2]
    out, report = student_edition
    handout = (out / "STUDENT.md").read_text(encoding="utf-8")
    assert "STUDENT.md" in report["copied"]
    assert "(STUDENT.md)" in (out / "README.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(): line for line in handout.splitlines()
            if re.match(r"\| A\d", line)}  # fmt: skip
    tasks = {}
    for path in (root / "tinygrad_edu").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "BEGIN SOLUTION A" in text:
            for task, functions in task_functions(text).items():
                tasks.setdefault(task, []).append((path.relative_to(root).as_posix(), functions))
    assert set(tasks) <= set(rows), sorted(set(tasks) - set(rows))
    for task, places in tasks.items():
        for rel, functions in places:
            assert f"`{rel}`" in rows[task] or Path(rel).name in rows[task], (task, rel)
            assert any(f"`{f}`" in rows[task] for f in functions), (task, functions)
    order = [t for t in rows]
    assert order == sorted(order, key=lambda t: [int(n) for n in re.findall(r"\d+", t)])
    for suite in sorted((out / "tests" / "assignments").glob("test_a[0-9]_*.py")):
        assert f"tinygrad-edu grade tests/assignments/{suite.name}" in handout, suite.name
    assert "wait for" in handout and "each task alone" in handout


# -- what is meant for instructors, and an edition made whole or not at all --------------------


def _with_instructor_material(repo):
    """The repository of :func:`_repo` with the instructors' guide, a page with a section for
    instructors, the site's nav naming the guide, and a students' README."""
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.md").write_text("<!-- instructors only -->\n\n# Guide\nhidden tests\n")
    (repo / "docs" / "lessons.md").write_text(
        "# Lessons\nfor everyone\n\n<!-- BEGIN INSTRUCTORS ONLY -->\n## For instructors\n"
        "the markers\n<!-- END INSTRUCTORS ONLY -->\n\nthe end\n"
    )
    (repo / "mkdocs.yml").write_text(
        "nav:\n  - Lessons: lessons.md\n  - Guide: guide.md  # instructors only\n"
    )
    (repo / "README.student.md").write_text("# Your edition\nstart with lesson 0\n")
    (repo / "tools").mkdir()
    (repo / "tools" / "walk.py").write_text("# instructors only\nprint('splices answers')\n")
    (repo / "tools" / "plain.py").write_text("print('# instructors only')\n")
    return repo


def test_instructor_material_stays_out_of_the_edition(tmp_path):
    repo = _with_instructor_material(_repo(tmp_path))
    out = tmp_path / "student"
    report = make_student_edition(repo, out)
    assert report["left_out"] == ["docs/guide.md", "tools/walk.py"]
    assert not (out / "docs" / "guide.md").exists() and not (out / "tools" / "walk.py").exists()
    assert (out / "tools" / "plain.py").exists()  # the marker counts on the first line only
    lessons = (out / "docs" / "lessons.md").read_text()
    assert lessons == "# Lessons\nfor everyone\n\n\nthe end\n"
    assert (out / "mkdocs.yml").read_text() == "nav:\n  - Lessons: lessons.md\n"
    # the students' README takes the instructor's place, under the usual name
    assert (out / "README.md").read_text() == "# Your edition\nstart with lesson 0\n"
    assert not (out / "README.student.md").exists()
    assert "README.md" in report["copied"] and "docs/lessons.md" in report["stripped"]


@pytest.mark.parametrize(("text", "words"), [
    ("<!-- BEGIN INSTRUCTORS ONLY -->\nx\n", "line 1: <!-- BEGIN INSTRUCTORS ONLY --> is never"),
    ("x\n<!-- END INSTRUCTORS ONLY -->\n", "line 2: <!-- END INSTRUCTORS ONLY --> without"),
    ("<!-- BEGIN INSTRUCTORS ONLY -->\n<!-- BEGIN INSTRUCTORS ONLY -->\n", "line 2: <!-- BEGIN"),
])  # fmt: skip
def test_unbalanced_instructor_blocks_name_file_and_line(tmp_path, text, words):
    repo = _repo(tmp_path)
    (repo / "page.md").write_text(text)
    with pytest.raises(MarkerError, match=re.escape(f"page.md, {words}")):
        make_student_edition(repo, tmp_path / "student")
    assert not (tmp_path / "student").exists()


def _leftovers(folder):
    """What a run left beside the edition's folder: temporary folders, half editions."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".student"))


@pytest.mark.parametrize("error", [RuntimeError("a lesson failed"), KeyboardInterrupt()])
def test_a_failed_run_leaves_no_half_written_edition(tmp_path, error):
    """A run that fails while recording the lessons (a missing package in a kernel, Ctrl-C)
    once left the files it had copied, which the next run refused without --force."""
    repo = _repo(tmp_path)
    (repo / "notebooks").mkdir()
    out = tmp_path / "student"

    def record(src, dst):
        assert any(dst.parent.rglob("core.py"))  # the edition was being written
        raise error

    with pytest.raises(type(error)):
        make_student_edition(repo, out, record=record)
    assert not out.exists() and _leftovers(tmp_path) == []
    make_student_edition(repo, out)  # the next run needs no --force
    assert (out / "toy" / "core.py").is_file()


def test_a_failed_forced_run_keeps_the_old_edition(tmp_path):
    repo = _repo(tmp_path)
    (repo / "notebooks").mkdir()
    out = tmp_path / "student"
    make_student_edition(repo, out)
    (out / "toy" / "mine.txt").write_text("the edition students already have")

    def record(src, dst):
        raise RuntimeError("a lesson failed")

    with pytest.raises(RuntimeError):
        make_student_edition(repo, out, force=True, record=record)
    assert (out / "toy" / "mine.txt").is_file() and _leftovers(tmp_path) == []
    make_student_edition(repo, out, force=True)
    assert not (out / "toy" / "mine.txt").exists() and _leftovers(tmp_path) == []


def test_an_edition_inside_the_repository_does_not_copy_its_temporary_folder(tmp_path):
    repo = _repo(tmp_path)
    (repo / ".student.abc.partial").mkdir()  # what a killed run (SIGKILL) leaves
    (repo / ".student.abc.partial" / "stale.py").write_text("x = 1\n")
    report = make_student_edition(repo, repo / "student")
    assert not any("stale.py" in rel or "student/" in rel for rel in report["copied"])


# -- the lessons' recorded wrong answers: none of their code reaches the edition ----------------
LESSON = '''\
"""A lesson's exercises."""

from .exercise import Exercise, Wrong


def _reference(x, eps=1e-6):
    # BEGIN SOLUTION
    return x / (2 * eps)
    # END SOLUTION


_reference.__name__ = "answer"


def _halved(x, eps=1e-6):
    return _divide(x, eps)


def _divide(x, eps):  # only the wrong answer above calls it
    return x / eps


def _factory(two=True):
    def answer(x, eps=1e-6):
        return x / ((2 if two else 1) * eps)

    return answer


def _grade(fn):
    return fn(1.0) == _given(1.0)


def _given(x):  # the check's own helper, which a wrong answer also calls
    return x / 2e-6


@decorated
def _decorated_wrong(x, eps=1e-6):
    return x * eps


ex = Exercise(
    "1.1", "a title", _grade,
    wrong=[
        Wrong("divided by eps", _halved, "twice the right value"),
        Wrong("one eps", _factory(two=False), "how far apart are the points?"),
        Wrong("précédence", lambda x, eps=1e-6: (x
                                                 / 2 * eps), "precedence: '/ 2 * eps'"),
        Wrong(what="keywords", answer=_decorated_wrong, hint="times eps"),
        Wrong("the check's helper", lambda x: _given(x) + 1, "off by one"),
        Wrong("already a stand-in", ..., "left as it is"),
    ],
    fallback=_reference,
)
'''


def test_the_edition_ships_no_code_of_a_recorded_wrong_answer():
    """Many recorded wrong answers are the solution with one token changed: the edition keeps
    their ``what`` and ``hint``, writes ``...`` for the answer, and removes the definitions only
    they used (a factory whose default flags build the solution with them); what anything else
    uses (the fallback, the grade) stays."""
    import ast

    from tinygrad_course.grading.wrong_answers import strip_wrong_answers, wrong_answer_nodes

    text = strip_wrong_answers(strip_solutions(LESSON, "lesson01.py"), "lesson01.py")
    tree = ast.parse(text)
    answers = wrong_answer_nodes(tree)
    assert len(answers) == 6
    assert all(isinstance(a, ast.Constant) and a.value is ... for a in answers)
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert defined == {"_reference", "_grade", "_given"}  # the fallback's stub, the check's own
    assert '_reference.__name__ = "answer"' in text  # what dresses a kept definition up stays
    for gone in ("lambda", "_factory", "_divide", "@decorated", "x / eps", "x * eps"):
        assert gone not in text, gone
    for kept in ('Wrong("divided by eps", ..., "twice the right value")',
                 'Wrong("précédence", ..., "precedence',  # a column after a multibyte character
                 'Wrong(what="keywords", answer=..., hint="times eps")', "fallback=_reference"):
        assert kept in text, kept  # fmt: skip
    assert "\n\n\n\n" not in text  # a removed definition takes its blank lines with it
    compile(text, "lesson01.py", "exec")
    # a module that does not import Wrong, or does not parse, is left as it is
    other = LESSON.replace("from .exercise import Exercise, Wrong", "from .x import Exercise")
    assert strip_wrong_answers(other) == other
    assert strip_wrong_answers("Wrong(1, 2, 3\n") == "Wrong(1, 2, 3\n"


def test_make_student_strips_the_wrong_answers_of_a_lesson_module(tmp_path):
    repo = _repo(tmp_path)
    (repo / "toy" / "lesson01.py").write_text(LESSON, encoding="utf-8")
    out = tmp_path / "student"
    report = make_student_edition(repo, out)
    assert "toy/lesson01.py" in report["stripped"]
    text = (out / "toy" / "lesson01.py").read_text(encoding="utf-8")
    assert "_factory" not in text and 'Wrong("one eps", ..., "how far apart' in text


def test_a_helper_another_lesson_imports_stays_unless_only_its_wrong_answers_use_it():
    """Lesson 5 imports lesson 3's helpers: one it uses in its check stays in lesson 3, one
    only its wrong answers used goes from both (lesson 5's import of it too)."""
    from tinygrad_course.grading.wrong_answers import strip_wrong_answers_in

    three = ("from .exercise import Wrong\n\n\ndef _counts(x):\n    return x\n\n\n"
             "def _graphs():\n    return []\n\n\nW = [Wrong('a', lambda x: _counts(x) + 1, 'h'),"
             " Wrong('b', lambda: _graphs(), 'h')]\n")  # fmt: skip
    five = ("from .exercise import Wrong\nfrom .lesson03 import _counts, _graphs\n\n\n"
            "def _grade(fn):\n    return _graphs()\n\n\n"
            "W = [Wrong('c', lambda x: _counts(x) * 2, 'h')]\n")  # fmt: skip
    out = strip_wrong_answers_in({"lesson03.py": three, "lesson05.py": five, "other.py": "x"})
    assert "def _counts" not in out["lesson03.py"] and "def _graphs" in out["lesson03.py"]
    assert "from .lesson03 import _graphs\n" in out["lesson05.py"]
    assert out["other.py"] == "x"
    for text in out.values():
        compile(text, "<edition>", "exec")


def test_a_stubbed_cell_ends_as_the_cell_did_so_the_lessons_two_files_stay_paired(tmp_path):
    """A solution region that ends a notebook cell (no newline after END) becomes a raise with
    no newline either: an extra one made every lesson's ``.ipynb`` differ from its ``.py`` by
    a blank line, and JupyterLab's pairing refused a lesson whose ``.ipynb`` was the newer."""
    import jupytext

    root = Path(__file__).resolve().parents[2]
    assert student.strip_solutions("def f():\n    # BEGIN SOLUTION T1\n    return 1\n"
                                   "    # END SOLUTION", check=False).endswith("here\")")
    lesson = root / "notebooks" / "03_ops_as_nodes.ipynb"
    out = tmp_path / "student"
    out.mkdir()
    for path in (lesson, lesson.with_suffix(".py")):
        text = path.read_text("utf-8")
        strip = student.strip_solutions if path.suffix == ".py" else student.strip_notebook
        (out / path.name).write_text(strip(text) or text, "utf-8")
    from_nb = jupytext.read(out / lesson.name)
    from_py = jupytext.read(out / lesson.with_suffix(".py").name)
    cells = [(c.cell_type, c.source) for c in from_nb.cells]
    assert cells == [(c.cell_type, c.source) for c in from_py.cells]
    assert any("write your solution here" in source for _, source in cells)
