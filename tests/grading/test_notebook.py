"""Notebook assignments: check() in the student's notebook, the notebook submitted and graded
in the sandbox with points and hidden tests (#26)."""

import json

import pytest

from tinygrad_course.grading.notebook import check, notebook_source
from tinygrad_course.grading.submission import map_submission

from . import notebook_course, toy


def test_a_notebooks_code_cells_become_its_module():
    text = notebook_course.to_ipynb(notebook_course.LESSON)
    module = notebook_source(text)
    assert "def softplus_grad(x, g):" in module and "# BEGIN SOLUTION T3.1" in module
    assert "# T3: the derivative" not in module  # markdown is not code
    nb = json.loads(text)
    nb["cells"].append({"cell_type": "code", "source": ["!pip install x\n", "%time y = 1"]})
    assert "# !pip install x\n# %time y = 1" in notebook_source(json.dumps(nb))
    assert notebook_source("x = 1\n") == "x = 1\n"  # a .py is itself


def test_a_submitted_notebook_is_graded_as_its_module(tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "nb_t3 (1).ipynb").write_text(notebook_course.to_ipynb(
        notebook_course.LESSON))  # fmt: skip
    m = map_submission(tmp_path, ["toy/nb_t3.py", "toy/ops.py"])
    assert m.used["toy/nb_t3.py"] == "work/nb_t3 (1).ipynb"
    assert "def softplus_grad" in m.texts["toy/nb_t3.py"]
    assert any("used the notebook" in n for n in m.notes)
    assert not any(n.startswith("Ignored") for n in m.notes)


def _notebook(repo, body):
    """Run the lesson's cells as a notebook would (``__name__ == "__main__"``)."""
    namespace = {"__name__": "__main__"}
    exec(compile(body, "notebook", "exec"), namespace)  # noqa: S102
    return namespace


def test_check_runs_the_visible_tests_on_the_notebooks_definitions(tmp_path, monkeypatch,
                                                                    capsys):  # fmt: skip
    repo = notebook_course.add(toy.make(tmp_path / "repo"))
    monkeypatch.chdir(repo)
    monkeypatch.syspath_prepend(str(repo))
    modules = __import__("sys").modules
    for name in [m for m in modules if m in ("toy", "tests") or m.startswith(("toy.", "tests."))]:
        monkeypatch.delitem(modules, name)  # the course's own "tests" package, not this one
    lesson = notebook_course.LESSON
    ns = _notebook(repo, lesson.replace('check("T3.1")', "RESULT = check('T3.1')"))
    assert ns["RESULT"] == (1, 1)
    out = capsys.readouterr().out
    assert "T3.1 test_softplus_grad: passed" in out and "1 of 1 visible tests pass" in out
    wrong = lesson.replace("return g / (1 + np.exp(-x))", "return g * np.exp(x)")
    ns = _notebook(repo, wrong.replace('check("T3.1")', "RESULT = check('T3.1')"))
    assert ns["RESULT"] == (0, 1)
    out = capsys.readouterr().out
    assert "FAILED" in out and "hint:" in out and "the sigmoid of x" in out
    # imported as a module (the autograder, tinygrad-edu grade), check() does nothing
    assert check("T3.1", module="toy.nb_t3", suite="tests/assignments/test_nb.py") is None


@pytest.mark.slow
def test_a_notebook_assignment_is_packaged_verified_and_graded(tmp_path, sandbox_setup,
                                                               capsys):  # fmt: skip
    from .test_gradescope import _grade, _scores, _zip_command  # noqa: PLC0415

    repo = notebook_course.add(toy.make(tmp_path / "repo"))
    out = tmp_path / "nb.zip"
    assert _zip_command(repo, out, "--tests", "tests/assignments/test_nb.py") == 0
    said = capsys.readouterr().out
    assert "to 5 points" in said and "toy/nb_t3.py" in said, said
    source = tmp_path / "ag" / "source"
    import os  # noqa: PLC0415
    import stat  # noqa: PLC0415
    import zipfile  # noqa: PLC0415

    with zipfile.ZipFile(out) as zf:
        zf.extractall(source)
        for info in zf.infolist():
            os.chmod(source / info.filename, stat.S_IMODE(info.external_attr >> 16))
    right = notebook_course.to_ipynb(notebook_course.LESSON)
    data, log = _grade(source, tmp_path, {"nb_t3.ipynb": right}, sandbox_setup, name="right")
    assert _scores(data) == notebook_course.POINTS, log
    naive = notebook_course.LESSON.replace("return g / (1 + np.exp(-x))",
                                           "return g * np.exp(x) / (1 + np.exp(x))")  # fmt: skip
    data, log = _grade(source, tmp_path, {"nb_t3.ipynb": notebook_course.to_ipynb(naive)},
                       sandbox_setup, name="naive")  # fmt: skip
    assert _scores(data) == {"T3.1": 2}, log  # the hidden test at x = 800 catches the overflow


def test_a_notebook_nested_100000_deep_is_read_not_a_crash(tmp_path):
    """A correct notebook whose metadata is nested 100,000 deep used to raise RecursionError
    out of the grader (0 for a correct answer). Its code cells are read; the rest is cut."""
    nb = json.loads(notebook_course.to_ipynb(notebook_course.LESSON))
    text = json.dumps(nb)
    deep = "[" * 100_000 + '"]{"' + "]" * 100_000  # a bracket inside a string is text
    text = text[:-1] + ', "extra": ' + deep + "}"
    (tmp_path / "nb_t3.ipynb").write_text(text)
    m = map_submission(tmp_path, ["toy/nb_t3.py"])
    assert "def softplus_grad" in m.texts["toy/nb_t3.py"]
    assert any("nested more than" in n for n in m.notes), m.notes


def test_a_notebook_that_is_not_json_is_the_students_clear_error(tmp_path):
    (tmp_path / "nb_t3.ipynb").write_text('{"cells": [')
    m = map_submission(tmp_path, ["toy/nb_t3.py"])
    assert "toy/nb_t3.py" in m.missing
    assert any("could not be read as a notebook" in n and "JSON" in n for n in m.notes), m.notes
