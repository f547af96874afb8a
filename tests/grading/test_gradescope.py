"""Autograder zips on a toy course: contents, scripts, and simulated Gradescope runs.

The runs go through the zip's own ``run_autograder`` with ``/autograder`` moved to a
temporary folder, with the session's sandbox (``conftest.py``): as root the children run as
a separate user; otherwise with limits only.
"""

import json
import os
import stat
import subprocess
import zipfile
from pathlib import Path

import pytest

from tinygrad_course.grading import kernel_state
from tinygrad_course.grading.gradescope import GRADER_MODULES, build_autograder_zip

from . import toy

FULL = sum(toy.POINTS.values())


@pytest.fixture
def repo(tmp_path):
    return toy.make(tmp_path / "repo")


@pytest.fixture
def source(repo, tmp_path):
    out = tmp_path / "autograder.zip"
    build_autograder_zip(repo, out)
    source = tmp_path / "ag" / "source"
    with zipfile.ZipFile(out) as zf:
        zf.extractall(source)
        for info in zf.infolist():  # extractall drops the modes; Gradescope's unzip keeps them
            os.chmod(source / info.filename, stat.S_IMODE(info.external_attr >> 16))
    return source


def test_zip_contents(repo, tmp_path):
    out = tmp_path / "autograder.zip"
    manifest = build_autograder_zip(repo, out)
    assert manifest["submission_files"] == ["toy/more.py", "toy/ops.py"]
    assert manifest["regions"] == {
        "T1.1": [["toy/ops.py", "square"]], "T1.2": [["toy/ops.py", "cube"]],
        "T2.1": [["toy/more.py", "Poly.value"]],
    }  # fmt: skip
    assert manifest["probe_files"] == [
        "tests/__init__.py", "tests/assignments/__init__.py", "tests/assignments/probes_toy.py"
    ]  # fmt: skip
    assert manifest["packages"] == ["toy"] and manifest["tests"] == ["tests/assignments"]
    with zipfile.ZipFile(out) as zf:
        modes = {i.filename: i.external_attr >> 16 for i in zf.infolist()}
        read = {name: zf.read(name).decode() for name in modes}
    assert sorted(modes) == sorted(manifest["files"])
    assert set(modes) == {
        "setup.sh", "run_autograder", "manifest.json", "pytest.ini", "requirements.txt",
        "reference/pyproject.toml", "reference/toy/__init__.py", "reference/toy/ops.py",
        "reference/toy/more.py", "edition/toy/ops.py", "edition/toy/more.py",
        "tests/__init__.py", "tests/assignments/__init__.py", "tests/assignments/test_toy.py",
        "tests/assignments/probes_toy.py", "grader/tgedu_grader/__init__.py",
    } | {f"grader/tgedu_grader/{m}.py" for m in GRADER_MODULES}  # fmt: skip
    for script in ("setup.sh", "run_autograder"):
        assert modes[script] & 0o111 == 0o111
        done = subprocess.run(["bash", "-n"], input=read[script], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    assert modes["tests/assignments/test_toy.py"] & 0o111 == 0
    assert "return x * x" in read["reference/toy/ops.py"]  # only root may read it
    assert "return x * x" not in read["edition/toy/ops.py"]
    assert 'raise NotImplementedError("T1.1' in read["edition/toy/ops.py"]
    assert "test_cube_negative" in read["tests/assignments/test_toy.py"]
    assert read["requirements.txt"].split() == ["pytest>=8", "numpy"]
    commands = [ln for ln in read["setup.sh"].splitlines() if not ln.lstrip().startswith("#")]
    assert not any("venv --help" in ln for ln in commands)
    assert any("import ensurepip" in ln for ln in commands)
    again = tmp_path / "again.zip"  # reproducible: the same repository gives the same bytes
    build_autograder_zip(repo, again)
    assert again.read_bytes() == out.read_bytes()
    # the run fits Gradescope's default timeout (10 minutes) unless told otherwise
    assert 'BUDGET="${AUTOGRADER_BUDGET:-540}"' in read["run_autograder"]
    build_autograder_zip(repo, again, budget=1800)
    with zipfile.ZipFile(again) as zf:
        assert 'BUDGET="${AUTOGRADER_BUDGET:-1800}"' in zf.read("run_autograder").decode()
    for bad in (100, 5000, 600.5):
        with pytest.raises(ValueError, match="budget"):
            build_autograder_zip(repo, again, budget=bad)


def _grade(source, tmp_path, files: dict, setup, name="sub", raw=None, **extra):
    root = source.parent
    submission = tmp_path / "submissions" / name
    submission.mkdir(parents=True)
    for rel, text in files.items():
        (submission / rel).parent.mkdir(parents=True, exist_ok=True)
        (submission / rel).write_text(text)
    for rel, data in (raw or {}).items():  # names that need not be UTF-8
        with open(os.path.join(os.fsencode(submission), rel), "wb") as f:
            f.write(data)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "AUTOGRADER"))}
    env.pop("PYTHONPATH", None)
    env.update(setup.env(0))
    env.update(AUTOGRADER_ROOT=str(root), AUTOGRADER_SUBMISSION=str(submission),
               AUTOGRADER_RESULTS=str(tmp_path / "results" / name), AUTOGRADER_TIMEOUT="3")
    env.update(extra)
    done = subprocess.run([str(source / "run_autograder")], env=env, capture_output=True,
                          text=True, errors="replace", timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "results" / name / "results.json").read_text())
    return data, done.stdout + done.stderr


def _scores(data) -> dict:
    out = {}
    for t in data["tests"]:
        task = t["name"].split(" ", 1)[0]
        out[task] = out.get(task, 0) + t["score"]
    return out


def test_the_reference_scores_full_marks(source, tmp_path, sandbox_setup):
    metadata = source.parent / "submission_metadata.json"  # Gradescope's, world-readable
    metadata.write_text('{"users": [{"email": "student@example.edu"}]}')
    os.chmod(metadata, 0o644)
    data, log = _grade(source, tmp_path, {"ops.py": toy.OPS, "more.py": toy.MORE},
                       sandbox_setup)  # fmt: skip
    if os.geteuid() == 0:  # only root may read what sits next to the submission now
        assert stat.S_IMODE(metadata.stat().st_mode) & 0o077 == 0
    assert data["score"] == FULL, log
    assert _scores(data) == toy.POINTS
    assert [t["name"] for t in data["tests"]][:3] == [
        "T1.0 given(x) = x + 1", "T1.1 square of [1, 2, 3]", "T1.2 cube of [1, 2]"
    ]  # fmt: skip
    hidden = [t for t in data["tests"] if t["name"] == "T1.2 cube of negative numbers"]
    assert hidden and hidden[0]["visibility"] == "after_published"
    assert "toy/ops.py  <-  ops.py" in data["output"]
    assert "1 more tests (5 points) show their results once grades are published" in data[
        "output"
    ]
    assert "Tests you can see now" in data["output"] and "T1.2" in data["output"]
    assert sandbox_setup.python in log  # the instructor's log says how children ran


def test_faults_cost_only_their_own_task(source, tmp_path, sandbox_setup):
    """An endless loop in square, a wrong cube, and more.py that does not parse."""
    ops = toy.OPS.replace("    return x * x\n", "    while True:\n        pass\n")
    ops = ops.replace("return x * square(x)", "return abs(x) * x * x")  # wrong for x < 0
    more = toy.MORE.replace("return self.k * cube(x)", "return self.k * cube(x)+")
    data, log = _grade(source, tmp_path, {"toy/ops.py": ops, "toy/more.py": more},
                       sandbox_setup)  # fmt: skip
    scores = _scores(data)
    # cube's own tests use the reference square: the endless loop costs square only
    assert scores == {"T1.0": 1, "T1.1": 0, "T1.2": 3, "T2.1": 0, "T2.2": 0}, log
    failed = [t for t in data["tests"] if t["status"] == "failed"]
    out = {t["name"].split(" ", 1)[0]: t["output"] for t in failed}
    assert "timed out" in out["T1.1"] and "3 s" in out["T1.1"]
    assert "toy/more.py does not parse, line 12" in out["T2.1"]
    assert "return self.k * cube(x)+" in out["T2.1"]
    assert "does not parse" in out["T2.2"]
    # the hidden test says what kind of difference, never the reference's values (-8, -0.125)
    assert "values differ" in out["T1.2"] and "stay hidden" in out["T1.2"], out["T1.2"]
    assert "0.125" not in out["T1.2"] and "tolerance" not in out["T1.2"]


def test_tabs_score_and_a_compile_error_names_its_line(source, tmp_path, sandbox_setup):
    """A file indented with tabs loses nothing; one that parses but does not compile says
    which line of the student's file (#26: "does not compile" had no line number)."""
    ops = toy.OPS.replace("    ", "\t")
    more = toy.MORE.replace("        return self.k * cube(x)\n",
                            "        nonlocal k\n        return self.k * cube(x)\n")
    data, log = _grade(source, tmp_path, {"toy/ops.py": ops, "toy/more.py": more},
                       sandbox_setup)  # fmt: skip
    scores = _scores(data)
    assert scores == {"T1.0": 1, "T1.1": 2, "T1.2": 8, "T2.1": 0, "T2.2": 0}, log
    out = {t["name"].split(" ", 1)[0]: t["output"] for t in data["tests"] if t["score"] == 0}
    line = more.splitlines().index("        nonlocal k") + 1
    assert f"your toy/more.py does not compile, line {line}" in out["T2.1"], out["T2.1"]
    assert "nonlocal k" in out["T2.1"] and "does not parse" not in _all(data)


def test_results_json_is_strict_utf8_whatever_the_file_names(source, tmp_path, sandbox_setup):
    """Non-UTF-8 file names put lone surrogates ("\\udcff") into results.json (#26)."""
    raw = {b"notes-\xff\xfe.txt": b"x", b"ops\xe9.py": toy.OPS.encode(), b"\xff.py": b"\xff"}
    data, log = _grade(source, tmp_path, {"ops.py": toy.OPS, "more.py": toy.MORE},
                       sandbox_setup, raw=raw)  # fmt: skip
    assert data["score"] == FULL, log
    blob = (tmp_path / "results" / "sub" / "results.json").read_bytes()
    text = blob.decode("utf-8")  # strict: no lone surrogate can be encoded
    assert "\\udc" not in text.lower() and "\udcff" not in text
    assert json.loads(text) == data


def _all(data) -> str:
    return json.dumps(data)


def test_missing_files_and_unused_uploads_are_reported(source, tmp_path, sandbox_setup):
    ops = toy.OPS.replace("return x * x", "return x ** 2")
    files = {"ops (2).py": ops, "notes.txt": "hi", "tests/test_toy.py": "x = 1\n"}
    data, _ = _grade(source, tmp_path, files, sandbox_setup)
    assert _scores(data) == {"T1.0": 1, "T1.1": 2, "T1.2": 8, "T2.1": 0, "T2.2": 0}
    out = data["output"]
    assert "used ops (2).py as toy/ops.py" in out and "Name it ops.py" in out
    assert "Ignored 2 file(s)" in out and "notes.txt" in out
    assert "Not submitted" in out and "toy/more.py" in out
    poly = next(t for t in data["tests"] if t["name"].startswith("T2.1"))
    assert "T2.1: write your solution here" in poly["output"]
    assert "your toy/more.py" not in poly["output"]  # the starter code, not theirs


def test_a_submission_cannot_forge_or_peek(source, tmp_path, sandbox_setup):
    attack = '''
import atexit, glob, json, os

def _forge():
    for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            parts = open(cmdline, "rb").read().split(b"\\0")
        except OSError:
            continue
        for k, part in enumerate(parts[:-1]):
            if part == b"--results":
                try:
                    json.dump({"score": 999, "tests": []}, open(parts[k + 1], "w"))
                except OSError:
                    pass

atexit.register(_forge)


def _peek():
    found = []
    for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            parts = open(cmdline, "rb").read().split(b"\\0")
        except OSError:
            continue
        for k, part in enumerate(parts[:-1]):
            if part == b"--source":
                path = parts[k + 1].decode() + "/tests/assignments/test_toy.py"
                try:
                    found.append(open(path).read())
                except OSError as e:
                    found.append(type(e).__name__)
    return " ".join(found)
'''
    ops = toy.OPS.replace("    return x * x\n", "    raise RuntimeError(_peek())\n") + attack
    data, _ = _grade(source, tmp_path, {"ops.py": ops, "more.py": toy.MORE}, sandbox_setup)
    assert data["score"] == FULL - 2 and "999" not in json.dumps(data)
    square = next(t for t in data["tests"] if t["name"].startswith("T1.1"))
    assert "your code raised RuntimeError" in square["output"]
    assert "your toy/ops.py, line " in square["output"]  # its own line, from its own file
    if not sandbox_setup.privileged:
        pytest.skip(f"the privilege drop is not checked: {sandbox_setup.reason}")
    # the grader's command line is readable (its --source then refused), or, with a /proc
    # of the child's own (hidepid=2), not even listed
    assert "PermissionError" in square["output"] or "--mount" in kernel_state.namespaces()
    assert "cube_negative" not in json.dumps(data)


def test_results_when_the_grader_cannot_start(source, tmp_path, sandbox_setup):
    data, log = _grade(source, tmp_path, {"ops.py": toy.OPS}, sandbox_setup,
                       AUTOGRADER_PYTHON="/bin/false")  # fmt: skip
    assert data["score"] == 0 and data["tests"] == []
    assert "not in your code" in data["output"]
    assert "wrote no results" in log


def test_a_sandbox_that_cannot_run_is_reported_not_graded(source, tmp_path, sandbox_setup):
    data, log = _grade(source, tmp_path, {"ops.py": toy.OPS}, sandbox_setup,
                       AUTOGRADER_SANDBOX_PYTHON="/nonexistent/python")  # fmt: skip
    assert data["score"] == 0 and data["tests"] == []
    assert "not set up correctly" in data["output"] and "nonexistent" in log


def test_no_solution_markers_is_an_error(repo, tmp_path):
    for f in ("ops.py", "more.py"):
        text = (repo / "toy" / f).read_text()
        (repo / "toy" / f).write_text(text.replace("# BEGIN SOLUTION", "# begin"))
    with pytest.raises(ValueError, match="BEGIN SOLUTION"):
        build_autograder_zip(repo, tmp_path / "a.zip")
    with pytest.raises(FileNotFoundError, match="tests/missing"):
        build_autograder_zip(repo, tmp_path / "a.zip", tests=["tests/missing"])


def test_probe_modules_may_not_hide_tests(repo, tmp_path):
    probes = repo / "tests" / "assignments" / "probes_toy.py"
    probes.write_text(probes.read_text() + "# BEGIN HIDDEN TESTS\nX = 1\n# END HIDDEN TESTS\n")
    with pytest.raises(ValueError, match="probe modules run in the sandbox"):
        build_autograder_zip(repo, tmp_path / "a.zip")


# -- setup.sh on a bare Debian/Ubuntu (stubs stand in for apt-get, python3, useradd) -------

STUB_PYTHON = """#!/usr/bin/env bash
# a python3 whose ensurepip exists only once "python3-venv" was installed
case "$*" in
  *"import ensurepip"*) [ -f "$STATE/venv-installed" ] ;;
  *"sys.version_info"*) echo 3.12 ;;
  "-m venv "*) mkdir -p "$3/bin" && cp "$0" "$3/bin/python" ;;
  *) echo "python3 $*" >> "$STATE/log" ;;
esac
"""

STUB_APT = """#!/usr/bin/env bash
echo "apt-get $*" >> "$STATE/log"
case "$*" in *python3-venv*) touch "$STATE/venv-installed" ;; esac
"""


@pytest.mark.parametrize("bare", [True, False], ids=["bare image", "ensurepip present"])
def test_setup_sh_installs_venv_support_only_when_ensurepip_is_missing(tmp_path, bare):
    from tinygrad_course.grading.gradescope import SETUP_SH

    bin_, state = tmp_path / "bin", tmp_path / "state"
    bin_.mkdir()
    state.mkdir()
    stubs = {"python3": STUB_PYTHON, "apt-get": STUB_APT,
             "useradd": 'echo "useradd $*" >> "$STATE/log"\n',
             "id": "exit 1\n", "setpriv": 'echo "setpriv $*" >> "$STATE/log"\n'}  # fmt: skip
    for name, body in stubs.items():
        (bin_ / name).write_text(body if body.startswith("#!") else "#!/usr/bin/env bash\n" + body)
        (bin_ / name).chmod(0o755)
    if not bare:
        (state / "venv-installed").touch()
    root = tmp_path / "ag"
    (root / "source").mkdir(parents=True)
    env = dict(PATH=f"{bin_}:/usr/bin:/bin", STATE=str(state), AUTOGRADER_ROOT=str(root))
    done = subprocess.run(["bash", "-c", SETUP_SH], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    log = (state / "log").read_text()
    if bare:
        assert "apt-get install -y -qq --no-install-recommends python3-venv python3.12-venv" in log
    else:
        assert "apt-get" not in log
    assert "pip install -q -r" in log and "useradd --system" in log
    assert "setpriv --reuid=tgsandbox" in log and "import numpy" in log
    assert stat.S_IMODE((root / "source").stat().st_mode) == 0o700


GPU_TESTS = '''\
import pytest


@pytest.mark.task("T9.1")
@pytest.mark.points(6)
@pytest.mark.skipif(True, reason="needs a CUDA GPU and CuPy")
def test_on_the_gpu(run):
    """the GPU"""
'''

HELPER_TESTS = '''\
import pytest

from .helpers_extra import EXPECTED
from . import probes_toy as probes


@pytest.mark.task("T1.1")
@pytest.mark.points(1)
def test_square_again(run):
    """square of 3"""
    assert float(run(probes.call, name="square", x=3.0)) == EXPECTED
'''

FREE_POINTS = '''\
import pytest

from . import probes_toy as probes


@pytest.mark.task("T1.1")
@pytest.mark.points(4)
def test_square_returns_something(run):
    """square returns something"""
    try:
        run(probes.call, name="square", x=3.0)
    except Exception:
        pass
'''


def _zip_command(repo, out, *extra):
    import argparse  # noqa: PLC0415

    from tinygrad_course.grading import gradescope  # noqa: PLC0415

    parser = argparse.ArgumentParser()
    gradescope.add_arguments(parser)
    return gradescope.run(parser.parse_args([str(repo), "--out", str(out), *extra]))


@pytest.mark.slow
def test_gradescope_zip_grades_what_it_built_and_prints_the_total(repo, tmp_path, capsys):
    """The total to set in Gradescope is what the reference scores in the built zip: the
    skipped GPU test is not in it; a test file named alone brings its probe module along."""
    (repo / "tests" / "assignments" / "test_gpu.py").write_text(GPU_TESTS)
    out = tmp_path / "a.zip"
    assert _zip_command(repo, out) == 0, capsys.readouterr().out
    said = capsys.readouterr().out
    assert f"set the assignment's total in Gradescope to {FULL} points" in said, said
    assert "the starter code 1 (given code only)" in said and out.is_file()
    # the case: --tests naming only the test file left out probes_toy.py
    one = tmp_path / "one.zip"
    assert _zip_command(repo, one, "--tests", "tests/assignments/test_toy.py") == 0
    said = capsys.readouterr().out
    assert f"Gradescope to {FULL} points" in said, said
    with zipfile.ZipFile(one) as zf:
        assert "tests/assignments/probes_toy.py" in zf.namelist()


@pytest.mark.slow
def test_a_zip_that_cannot_grade_is_refused_naming_the_cause(repo, tmp_path, capsys):
    folder = repo / "tests" / "assignments"
    (folder / "helpers_extra.py").write_text("EXPECTED = 9.0\n")
    (folder / "test_extra.py").write_text(HELPER_TESTS)
    out = tmp_path / "extra.zip"
    assert _zip_command(repo, out, "--tests", "tests/assignments/test_extra.py") == 1
    said = capsys.readouterr().out
    assert "tests.assignments.helpers_extra" in said and "not in the zip" in said, said
    assert not out.exists(), "a zip that cannot grade must not be left behind"
    (folder / "test_extra.py").unlink()
    (folder / "test_free.py").write_text(FREE_POINTS)
    assert _zip_command(repo, out) == 1
    said = capsys.readouterr().out
    assert "the starter code earns points of T1.1" in said, said
    assert not out.exists()
    # a module only this machine has: Gradescope's venv installs the pyproject's dependencies
    (folder / "test_free.py").write_text("from tinygrad_course.grading import numeric_gradient\n")
    assert _zip_command(repo, out) == 1
    said = capsys.readouterr().out
    assert "the tests import tinygrad_course (in tests/assignments/test_free.py)" in said, said
    assert "does not install" in said and not out.exists()


def test_a_zip_for_one_assignment_asks_only_for_its_files(repo, tmp_path):
    """--tests naming one assignment's suite: students submit that assignment's files only
    (they used to get every assignment's empty stubs to submit too)."""
    folder = repo / "tests" / "assignments"
    only_ops = toy.TESTS.split("@pytest.mark.task(\"T2.1\")")[0]
    (folder / "test_ops_only.py").write_text(only_ops)
    manifest = build_autograder_zip(repo, tmp_path / "one.zip",
                                    tests=["tests/assignments/test_ops_only.py"])  # fmt: skip
    assert manifest["submission_files"] == ["toy/ops.py"]
    assert set(manifest["regions"]) == {"T1.1", "T1.2"}
    # its sandbox reads the reference: it holds no other assignment's solution (it did)
    with zipfile.ZipFile(tmp_path / "one.zip") as zf:
        more = zf.read("reference/toy/more.py").decode()
        ops = zf.read("reference/toy/ops.py").decode()
    solution = toy.MORE.split("# BEGIN SOLUTION T2.1")[1].split("# END SOLUTION")[0].strip()
    assert solution and solution not in more and "T2.1: not graded" in more
    assert ops == (repo / "toy" / "ops.py").read_text()  # what it grades stays whole
    every = build_autograder_zip(repo, tmp_path / "all.zip")
    assert every["submission_files"] == ["toy/more.py", "toy/ops.py"]


def test_the_grader_modules_ship_every_module_they_import():
    """The zip's grader package is GRADER_MODULES copied from tinygrad_course/grading: a module
    they import from their own package (``from .x import``) must be in the list too."""
    import ast

    from tinygrad_course.grading import gradescope

    folder = Path(gradescope.__file__).parent
    missing = set()
    for name in gradescope.GRADER_MODULES:
        tree = ast.parse((folder / f"{name}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                if node.module.split(".")[0] not in gradescope.GRADER_MODULES:
                    missing.add((name, node.module))
    assert not missing, f"add these to GRADER_MODULES: {sorted(missing)}"
