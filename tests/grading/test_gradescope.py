"""Autograder zips: contents, modes, scripts that parse, and a simulated Gradescope run."""

import json
import os
import stat
import subprocess
import sys
import zipfile

import pytest

from tinygrad_edu.grading.copy_submission import match_target
from tinygrad_edu.grading.gradescope import build_autograder_zip

OPS = '''\
def square(x):
    # BEGIN SOLUTION A1.1
    return x * x
    # END SOLUTION


def cube(x):
    # BEGIN SOLUTION A1.2
    return x * x * x
    # END SOLUTION
'''

TESTS = '''\
import pytest

from toy.ops import cube, square


@pytest.mark.task("A1.1")
@pytest.mark.points(2)
def test_square():
    assert square(3) == 9


@pytest.mark.task("A1.2")
@pytest.mark.points(3)
def test_cube():
    assert cube(2) == 8


# BEGIN HIDDEN TESTS
@pytest.mark.task("A1.2")
@pytest.mark.hidden
@pytest.mark.points(5)
def test_cube_negative():
    assert cube(-2) == -8
# END HIDDEN TESTS
'''


@pytest.fixture
def repo(tmp_path):
    repo = tmp_path / "repo"
    (repo / "toy").mkdir(parents=True)
    (repo / "toy" / "__init__.py").write_text("")
    (repo / "toy" / "ops.py").write_text(OPS)
    (repo / "pyproject.toml").write_text('[project]\nname = "toy"\nversion = "0"\n')
    (repo / "tests" / "assignments").mkdir(parents=True)
    (repo / "tests" / "__init__.py").write_text("")
    (repo / "tests" / "assignments" / "__init__.py").write_text("")
    (repo / "tests" / "assignments" / "test_a1.py").write_text(TESTS)
    (repo / "tests" / "test_other.py").write_text("def test_not_graded():\n    pass\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.md").write_text("guide")
    return repo


def _unzip(repo, tmp_path):
    out = tmp_path / "autograder.zip"
    manifest = build_autograder_zip(repo, out)
    source = tmp_path / "ag" / "source"
    with zipfile.ZipFile(out) as zf:
        zf.extractall(source)
        modes = {i.filename: i.external_attr >> 16 for i in zf.infolist()}
    for name, mode in modes.items():  # extractall drops the modes; Gradescope's unzip keeps them
        os.chmod(source / name, stat.S_IMODE(mode))
    return out, manifest, source, modes


def test_zip_contents(repo, tmp_path):
    out, manifest, source, modes = _unzip(repo, tmp_path)
    assert manifest["submission_files"] == ["toy/ops.py"]
    assert manifest["tests"] == ["tests/assignments"]
    assert sorted(modes) == sorted(manifest["files"])
    assert set(manifest["files"]) == {
        "setup.sh", "run_autograder", "copy_submission.py", "manifest.json", "pytest.ini",
        "library/pyproject.toml", "library/toy/__init__.py", "library/toy/ops.py",
        "tests/__init__.py", "tests/assignments/__init__.py", "tests/assignments/test_a1.py",
    }  # fmt: skip
    for script in ("setup.sh", "run_autograder"):
        assert modes[script] & 0o111 == 0o111
        done = subprocess.run(["bash", "-n", str(source / script)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    assert modes["tests/assignments/test_a1.py"] & 0o111 == 0
    # the library is the student edition; the reference tests keep the hidden ones
    assert "x * x" not in (source / "library/toy/ops.py").read_text()
    assert "test_cube_negative" in (source / "tests/assignments/test_a1.py").read_text()
    assert "pip install -q -e" in (source / "setup.sh").read_text()
    assert json.loads((source / "manifest.json").read_text())["submission_files"] == ["toy/ops.py"]
    # reproducible: the same repository gives the same bytes
    again = tmp_path / "again.zip"
    build_autograder_zip(repo, again)
    assert again.read_bytes() == out.read_bytes()


def _run_autograder(source, tmp_path, submission_files):
    root = tmp_path / "ag"
    submission = root / "submission"
    submission.mkdir(parents=True)
    for rel, text in submission_files.items():
        (submission / rel).parent.mkdir(parents=True, exist_ok=True)
        (submission / rel).write_text(text)
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), AUTOGRADER_PYTHON=sys.executable)
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [str(source / "run_autograder")], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads((root / "results" / "results.json").read_text()), done.stdout


def test_simulated_submission_is_scored(repo, tmp_path):
    _, _, source, _ = _unzip(repo, tmp_path)
    student_ops = OPS.replace("return x * x * x", "return abs(x) ** 3")  # wrong for x < 0
    results, log = _run_autograder(
        source, tmp_path, {"ops.py": student_ops, "notes.txt": "hi", "tests/test_a1.py": "x"}
    )
    assert "used      ops.py -> toy/ops.py" in log
    assert "ignored   notes.txt" in log and "ignored   tests/test_a1.py" in log
    by_name = {t["name"].split("::")[-1]: t for t in results["tests"]}
    assert {k: (v["score"], v["max_score"]) for k, v in by_name.items()} == {
        "test_square": (2, 2), "test_cube": (3, 3), "test_cube_negative": (0, 5)
    }  # fmt: skip
    assert by_name["test_cube_negative"]["visibility"] == "after_published"
    assert (results["score"], results["max_score"]) == (5, 10)
    # the grading used the submitted file, not the instructor's solution
    assert "abs(x)" in (source / "library/toy/ops.py").read_text()


def test_unimportable_submission_still_leaves_results(repo, tmp_path):
    _, _, source, _ = _unzip(repo, tmp_path)
    results, _ = _run_autograder(source, tmp_path, {"toy/ops.py": "def square(x:\n"})
    assert results["score"] == 0
    assert "SyntaxError" in results["output"] or "could not" in results["output"]


def test_no_solution_markers_is_an_error(repo, tmp_path):
    (repo / "toy" / "ops.py").write_text("def square(x):\n    return x * x\n")
    with pytest.raises(ValueError, match="BEGIN SOLUTION"):
        build_autograder_zip(repo, tmp_path / "a.zip")
    with pytest.raises(FileNotFoundError, match="tests/missing"):
        build_autograder_zip(repo, tmp_path / "a.zip", tests=["tests/missing"])


def test_match_target():
    allowed = ["toy/ops.py", "toy/nn/ops.py", "toy/core.py"]
    assert match_target("repo/toy/nn/ops.py", allowed) == "toy/nn/ops.py"
    assert match_target("toy/ops.py", allowed) == "toy/ops.py"
    assert match_target("core.py", allowed) == "toy/core.py"
    assert match_target("ops.py", allowed) is None  # two allowed files have that name
    assert match_target("setup.py", allowed) is None
