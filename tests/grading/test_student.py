"""Student editions: markers in .py files and notebooks, errors, and an edition that imports."""

import subprocess
import sys
import textwrap

import nbformat
import pytest

from tinygrad_edu.grading import student
from tinygrad_edu.grading.student import MarkerError, make_student_edition, strip_solutions

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
    done = subprocess.run([sys.executable, "-c", code], cwd=out, capture_output=True, text=True)
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


def test_real_repository_edition_imports(tmp_path):
    from pathlib import Path

    root = Path(student.__file__).resolve().parents[2]
    out = tmp_path / "edition"
    report = make_student_edition(root, out)
    assert not (out / ".git").exists() and not (out / ".venv").exists()
    assert "tinygrad_edu/grading/student.py" in report["copied"]  # its docstring markers are text
    code = "import tinygrad_edu, tinygrad_edu.grading.pytest_plugin; print(tinygrad_edu.__file__)"
    done = subprocess.run([sys.executable, "-c", code], cwd=out, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert str(out) in done.stdout
