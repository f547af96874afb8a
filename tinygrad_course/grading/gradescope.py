"""Gradescope autograder zips: ``tinygrad-edu gradescope-zip [REPO] [--out autograder.zip]``.

The zip holds, at its top level (Gradescope unpacks it to ``/autograder/source``):

- ``setup.sh``: run once, as root, when Gradescope builds the image. Installs what a bare
  Ubuntu 22.04/24.04 or Debian 12 lacks (``python3``, ``python3-venv`` when ``ensurepip`` is
  missing, ``useradd``, ``setpriv``), makes ``/autograder/venv`` with the library's
  dependencies (not the library itself), creates the sandbox user ``tgsandbox`` and checks
  that it can run the venv's Python.
- ``run_autograder``: run for each submission, as root. Runs the grader
  (:mod:`tinygrad_course.grading.autograder`, shipped in ``grader/`` as the package
  ``tgedu_grader``, so it grades any course, not only this library); if that cannot even
  start, it still leaves a ``results.json`` (score 0, and a message that the fault is not
  the student's).
- ``manifest.json``: the files students submit, the library's packages, the graded test
  paths, the probe modules, and where each task's solution lives
  (``{"A2.1": [["tinygrad_edu/eager/engine.py", "_count_dependencies"]], ...}``).
- ``reference/``: the instructor's library (solutions included); only root can read it.
- ``edition/``: the student edition of the submitted files (the starter code a student who
  did not submit a file is graded with).
- ``tests/...``: the graded suites, hidden tests included, with their ``__init__.py`` and
  ``conftest.py`` files and probe modules; ``pytest.ini``; ``requirements.txt``.

Every path can be moved by an environment variable, for trying the zip locally:
``AUTOGRADER_ROOT`` (default ``/autograder``), ``AUTOGRADER_SOURCE``,
``AUTOGRADER_SUBMISSION``, ``AUTOGRADER_RESULTS``, ``AUTOGRADER_PYTHON`` (the grader's
interpreter), ``AUTOGRADER_SANDBOX_PYTHON`` (the children's, default the same),
``AUTOGRADER_SANDBOX_USER``, ``AUTOGRADER_SANDBOX`` (``auto``, ``user`` or ``rlimits``),
``AUTOGRADER_TIMEOUT`` (seconds per probe call, default 30), ``AUTOGRADER_BUDGET`` (seconds
for the whole run; by default the zip's ``budget``, 540: Gradescope stops a run after 10
minutes unless its timeout is raised, and a run it stops has no ``results.json``).
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

from .splice import task_functions
from .student import _regions as _marker_regions
from .student import _walk, has_solution_markers, solution_regions, strip_solutions

__all__ = ["build_autograder_zip", "SETUP_SH", "RUN_AUTOGRADER", "DEFAULT_BUDGET",
           "add_arguments", "run"]  # fmt: skip

DEFAULT_BUDGET = 540  # seconds: within Gradescope's default timeout of 10 minutes

SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="${AUTOGRADER_SOURCE:-$ROOT/source}"
BASE_PYTHON="${AUTOGRADER_BASE_PYTHON:-python3}"
SANDBOX_USER="${AUTOGRADER_SANDBOX_USER:-tgsandbox}"
install() {
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
}
# Debian and Ubuntu move ensurepip into python3-venv: `python3 -m venv --help` works without
# it, making a venv does not. So check for ensurepip itself.
missing=()
command -v "$BASE_PYTHON" >/dev/null 2>&1 || missing+=(python3)
command -v useradd >/dev/null 2>&1 || missing+=(passwd)
command -v setpriv >/dev/null 2>&1 || missing+=(util-linux)
if [ ${#missing[@]} -gt 0 ]; then install "${missing[@]}"; fi
if ! "$BASE_PYTHON" -c "import ensurepip" >/dev/null 2>&1; then
  version="$("$BASE_PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  install python3-venv "python$version-venv"
fi
"$BASE_PYTHON" -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install -q --upgrade pip
"$ROOT/venv/bin/python" -m pip install -q -r "$SOURCE/requirements.txt"
# Submitted code runs as this user: it may read the venv, nothing else of the autograder's.
id -u "$SANDBOX_USER" >/dev/null 2>&1 || useradd --system --no-create-home \\
  --home-dir /nonexistent --shell /usr/sbin/nologin --user-group "$SANDBOX_USER"
chmod 0711 "$ROOT"
chmod -R go-rwx "$SOURCE"
chmod -R a+rX "$ROOT/venv"
setpriv --reuid="$SANDBOX_USER" --regid="$SANDBOX_USER" --clear-groups -- \\
  "$ROOT/venv/bin/python" -I -c "import numpy" \\
  || { echo "setup.sh: $SANDBOX_USER cannot run $ROOT/venv/bin/python with numpy" >&2; exit 1; }
echo "setup.sh: done"
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this for each submission, as root; it must leave $RESULTS/results.json.
set -uo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="${AUTOGRADER_SOURCE:-$ROOT/source}"
SUBMISSION="${AUTOGRADER_SUBMISSION:-$ROOT/submission}"
RESULTS="${AUTOGRADER_RESULTS:-$ROOT/results}"
PYTHON="${AUTOGRADER_PYTHON:-$ROOT/venv/bin/python}"
SANDBOX_PYTHON="${AUTOGRADER_SANDBOX_PYTHON:-$PYTHON}"
# Gradescope's own limit is 10 minutes unless raised (Autograder settings, up to 40): the
# grader stops calling probes in time to write results.json within this budget.
BUDGET="${AUTOGRADER_BUDGET:-@BUDGET@}"
mkdir -p "$RESULTS"
rm -f "$RESULTS/results.json"
# Submitted code runs as another user: it may read the children's Python (the venv), nothing
# else Gradescope keeps here (submission_metadata.json holds names, emails, earlier scores).
if [ "$(id -u)" = 0 ]; then
  for entry in "$ROOT"/*; do
    case "$SANDBOX_PYTHON" in "$entry"/*) continue ;; esac
    [ -e "$entry" ] && chmod go-rwx "$entry"
  done
fi
cd "$SOURCE" || exit 0
PYTHONPATH="$SOURCE/grader:$SOURCE/reference" PYTHONDONTWRITEBYTECODE=1 \\
  timeout --kill-after=30 "$BUDGET" \\
  "$PYTHON" -s -m tgedu_grader.autograder --source "$SOURCE" \\
  --submission "$SUBMISSION" --results "$RESULTS/results.json" \\
  --sandbox-python "$SANDBOX_PYTHON" \\
  --sandbox-user "${AUTOGRADER_SANDBOX_USER:-tgsandbox}" \\
  --sandbox "${AUTOGRADER_SANDBOX:-auto}" --timeout "${AUTOGRADER_TIMEOUT:-30}" \\
  --budget "$(( BUDGET - 120 ))"
status=$?
if [ ! -s "$RESULTS/results.json" ]; then
  echo "run_autograder: the grader ended with status $status and wrote no results"
  message="The autograder could not grade this submission (a fault in the autograder, not"
  message="$message in your code). Your instructor can see the details."
  printf '{"score": 0, "output": "%s", "output_format": "text", ' "$message" \\
    > "$RESULTS/results.json"
  printf '"stdout_visibility": "hidden", "tests": []}\\n' >> "$RESULTS/results.json"
fi
exit 0
"""

_PYTEST_INI = """\
[pytest]
# the graded suites; the plugin tinygrad_course.grading.pytest_plugin scores them
python_files = test_*.py
markers =
    gpu: needs a CUDA GPU and CuPy (skipped without one)
    slow: takes more than a few seconds
"""
_NOT_LIBRARY = ("tests", "notebooks", "docs", "benchmarks")
# the grader's own modules, shipped as the package ``tgedu_grader`` (standard library, numpy
# and pytest only: they must not need the course's library)
GRADER_MODULES = ("autograder", "child", "gitignore", "kernel_state", "notebook",
                  "page_cache", "probe", "pytest_plugin", "sandbox", "sandbox_config",
                  "sandbox_memory", "sandbox_sweep", "sandbox_users", "seccomp", "splice",
                  "student", "submission", "wire", "wrong_answers")
_GRADER_INIT = '''"""The autograder's grader: the sandboxed modules of tinygrad_course.grading."""
'''
_EXECUTABLE = 0o100755 << 16
_REGULAR = 0o100644 << 16


def _add(zf: zipfile.ZipFile, name: str, data: bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # reproducible zips
    info.external_attr = _EXECUTABLE if executable else _REGULAR
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, data)


def _test_files(repo: Path, tests) -> list[str]:
    """The test files to ship, with the __init__/conftest files of the folders above them."""
    files = set()
    for t in tests:
        path = repo / t
        if not path.exists():
            raise FileNotFoundError(f"gradescope-zip: the test path {t!r} is not in {repo}")
        if path.is_dir():
            files.update(str(Path(t) / rel) for rel in _walk(path, set()))
        else:
            files.add(str(Path(t)))
            # a test file named alone still needs the probe modules next to it
            files.update(str(p.relative_to(repo)) for p in path.parent.glob("probes*.py"))
        for parent in Path(t).parents:
            for name in ("__init__.py", "conftest.py"):
                if (repo / parent / name).is_file():
                    files.add(str(parent / name))
    return sorted(f.replace("\\", "/") for f in files)


_TASK_MARK = re.compile(r"mark\.task\(\s*[\"']([^\"']+)[\"'](?:\s*,\s*uses\s*=\s*([^)]*))?")


def _graded_tasks(repo: Path, test_files) -> set[str]:
    """The tasks the shipped test files grade (their ``task`` markers and what they use)."""
    found = set()
    for f in test_files:
        if Path(f).name.startswith("test") and f.endswith(".py"):
            for task, uses in _TASK_MARK.findall((repo / f).read_text(encoding="utf-8")):
                found.add(task)
                found.update(re.findall(r"[\"']([^\"']+)[\"']", uses or ""))
    return found


def _packages(repo: Path) -> list[str]:
    return sorted(
        p.name for p in repo.iterdir()
        if p.is_dir() and (p / "__init__.py").is_file() and p.name not in _NOT_LIBRARY
    )  # fmt: skip


def _solution_files(repo: Path, packages) -> list[str]:
    found = []
    for pkg in packages:
        for rel in _walk(repo / pkg, set()):
            if rel.suffix == ".py":
                text = (repo / pkg / rel).read_text(encoding="utf-8")
                if has_solution_markers(text):
                    found.append(f"{pkg}/{rel.as_posix()}")
    return sorted(found)


def _probe_files(repo: Path, test_files: list[str]) -> list[str]:
    """Probe modules (``probes*.py`` in the graded folders) and the package files above."""
    probes = [f for f in test_files if Path(f).name.startswith("probes") and f.endswith(".py")]
    files = set(probes)
    for f in probes:
        for parent in Path(f).parents:
            if str(parent) != "." and (repo / parent / "__init__.py").is_file():
                files.add((parent / "__init__.py").as_posix())
    for f in sorted(files):
        text = (repo / f).read_text(encoding="utf-8")
        if solution_regions(text, f, kind="HIDDEN TESTS"):
            raise ValueError(
                f"gradescope-zip: {f} has hidden tests, but probe modules run in the sandbox "
                "and are visible code; keep hidden arguments and checks in the test files"
            )
        if solution_regions(text, f):
            raise ValueError(f"gradescope-zip: {f} is a probe module with a solution region")
    return sorted(files)


def _requirements(repo: Path, extras: str) -> str:
    """The library's dependencies (with ``extras``) and pytest, for the autograder's venv."""
    deps, names = ["pytest>=8"], [e.strip() for e in extras.strip("[]").split(",") if e.strip()]
    pyproject = repo / "pyproject.toml"
    if pyproject.is_file():
        try:
            import tomllib  # noqa: PLC0415 - Python 3.11+
        except ImportError:  # pragma: no cover - Python 3.10: the dependencies only
            raise ValueError("gradescope-zip needs Python 3.11+ to read pyproject.toml") from None
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        deps += project.get("dependencies", [])
        for name in names:
            deps += project.get("optional-dependencies", {}).get(name, [])
    return "\n".join(deps) + "\n"


def build_autograder_zip(
    repo,
    out_zip,
    tests=("tests/assignments",),
    submission_files=None,
    extras: str = "",
    budget: int = DEFAULT_BUDGET,
) -> dict:
    """Build a Gradescope autograder zip for the repository ``repo``.

    Args:
        repo: the instructor's repository (with solutions and hidden tests).
        out_zip: the zip to write.
        tests: test files or folders, relative to ``repo``, that are graded.
        submission_files: paths relative to ``repo`` that students submit; by default every
            ``.py`` file of the library's packages with a ``# BEGIN SOLUTION`` region.
        extras: pip extras of the library to install in the autograder, e.g. ``"[viz]"``.
        budget: seconds ``run_autograder`` may take in all (at most Gradescope's timeout for
            the assignment: 10 minutes unless raised in its settings).

    Returns:
        The manifest (see the module docstring) and ``files``, every path in the zip.

    Raises:
        ValueError: nothing for students to submit, a region outside a function, two tasks in
            one function, or a probe module with hidden tests.
        FileNotFoundError: a test path or submission file that does not exist.
        MarkerError: from making the student edition.
    """
    repo = Path(repo).resolve()
    _check_budget(budget)
    tests = [str(t) for t in ([tests] if isinstance(tests, str) else tests)]
    test_files = _test_files(repo, tests)
    packages = _packages(repo)
    submission_files = _submitted(repo, packages, test_files, submission_files)
    manifest = {
        "version": 2,
        "submission_files": submission_files,
        "packages": packages,
        "tests": tests,
        "probe_files": _probe_files(repo, test_files),
        "regions": _regions(repo, submission_files),
    }
    names = _write_zip(out_zip, repo, manifest, test_files, extras, budget)
    return {**manifest, "files": names}


def _check_budget(budget) -> None:
    if not isinstance(budget, int) or isinstance(budget, bool) or not 240 <= budget <= 2400:
        raise ValueError(f"gradescope-zip: the budget is whole seconds from 240 to 2400 "
                         f"(Gradescope allows at most 40 minutes), got {budget!r}")  # fmt: skip


def _submitted(repo: Path, packages, test_files, submission_files) -> list[str]:
    """The files students submit: those named, or by default every file of the packages with
    a solution region whose tasks the shipped tests grade."""
    if submission_files is None:
        submission_files = _solution_files(repo, packages)
        graded = _graded_tasks(repo, test_files)
        if graded:  # a zip for some assignments only: students submit those files only
            submission_files = [
                f for f in submission_files
                if graded & set(task_functions((repo / f).read_text(encoding="utf-8"), f))
            ]  # fmt: skip
    submission_files = sorted(str(Path(f).as_posix()) for f in submission_files)
    if not submission_files:
        raise ValueError(
            "gradescope-zip: no file has a '# BEGIN SOLUTION' region, so students have nothing "
            "to submit; mark the solutions or name the files with --submission-file"
        )
    for f in submission_files:
        if not (repo / f).is_file():
            raise FileNotFoundError(f"gradescope-zip: submission file {f!r} is not in {repo}")
    return submission_files


def _regions(repo: Path, submission_files) -> dict:
    """task -> [[file, function], ...]: where each task's solution lives."""
    regions: dict[str, list] = {}
    for f in submission_files:
        for task, names in task_functions((repo / f).read_text(encoding="utf-8"), f).items():
            regions.setdefault(task, []).extend([f, q] for q in names)
    return dict(sorted(regions.items()))


def _reference_file(path: Path, name: str, graded: set) -> bytes:
    """A reference file as the zip ships it: the solutions of the tasks this zip grades (and
    of those they use) and no other. A zip for one assignment used to carry every
    assignment's solutions, which its sandbox could read."""
    data = path.read_bytes()
    if path.suffix != ".py":
        return data
    text = data.decode("utf-8")
    if not has_solution_markers(text):
        return data
    lines = text.splitlines(keepends=True)
    out, cursor, cut = [], 0, False
    for begin, end, kind, task, indent in _marker_regions(text, name):
        if kind != "SOLUTION" or task in graded or task == "solution":  # unnamed: kept
            continue
        out.extend(lines[cursor : begin - 1])
        newline = "\r\n" if lines[begin - 1].endswith("\r\n") else "\n"
        out.append(f'{indent}raise NotImplementedError("{task}: not graded by this '
                   f'autograder"){newline}')  # fmt: skip
        cursor, cut = end, True
    if not cut:
        return data
    out.extend(lines[cursor:])
    return "".join(out).encode("utf-8")


def _write_zip(out_zip, repo: Path, manifest: dict, test_files, extras, budget) -> list[str]:
    """Write the zip's files (see the module docstring); returns their names in order."""
    names = []
    edition = {f: strip_solutions((repo / f).read_text(encoding="utf-8"), f)
               for f in manifest["submission_files"]}  # fmt: skip
    with zipfile.ZipFile(out_zip, "w") as zf:

        def add(name, data, executable=False):
            _add(zf, name, data, executable)
            names.append(name)

        add("setup.sh", SETUP_SH.encode(), executable=True)
        run_autograder = RUN_AUTOGRADER.replace("@BUDGET@", str(budget))
        add("run_autograder", run_autograder.encode(), executable=True)
        add("manifest.json", (json.dumps(manifest, indent=2) + "\n").encode())
        add("pytest.ini", _PYTEST_INI.encode())
        add("requirements.txt", _requirements(repo, extras).encode())
        if (repo / "pyproject.toml").is_file():
            add("reference/pyproject.toml", (repo / "pyproject.toml").read_bytes())
        graded = _graded_tasks(repo, test_files) | set(manifest["regions"])
        for pkg in manifest["packages"]:  # the library and the course (graded tests use both)
            for rel in _walk(repo / pkg, set()):
                name = f"{pkg}/{rel.as_posix()}"
                add(f"reference/{name}", _reference_file(repo / pkg / rel, name, graded))
        for f, text in edition.items():
            add(f"edition/{f}", text.encode("utf-8"))
        add("grader/tgedu_grader/__init__.py", _GRADER_INIT.encode())
        here = Path(__file__).resolve().parent
        for name in GRADER_MODULES:
            add(f"grader/tgedu_grader/{name}.py", (here / f"{name}.py").read_bytes())
        for rel in test_files:
            add(rel, (repo / rel).read_bytes())
    return names


def add_arguments(parser) -> None:
    parser.add_argument("repo", nargs="?", default=".", help="the instructor's repository")
    parser.add_argument("--out", default="autograder.zip", help="the zip to write")
    parser.add_argument(
        "--tests", nargs="+", default=["tests/assignments"], help="graded test files or folders"
    )
    parser.add_argument(
        "--submission-file",
        action="append",
        dest="submission_files",
        help="a file students submit (repeatable; default: files with solution regions)",
    )
    parser.add_argument("--extras", default="", help='pip extras for the library, e.g. "[viz]"')
    parser.add_argument(
        "--no-verify", action="store_true",
        help="skip grading the reference and the starter code in the built zip",
    )
    parser.add_argument(
        "--budget", type=int, default=DEFAULT_BUDGET,
        help="seconds a run may take in all (default %(default)s; at most the assignment's "
        "Gradescope timeout: 10 minutes unless raised)",
    )  # fmt: skip


def run(args) -> int:
    from .splice import SpliceError
    from .student import MarkerError

    try:
        manifest = build_autograder_zip(
            args.repo, args.out, args.tests, args.submission_files, args.extras, args.budget
        )
    except (ValueError, FileNotFoundError, MarkerError, SpliceError) as e:
        print(e)
        return 1
    if not getattr(args, "no_verify", False):
        from .verify import VerifyError, verify_zip  # noqa: PLC0415

        print(f"checking {args.out}: grading the reference and the starter code in it ...")
        try:
            found = verify_zip(args.out, args.repo)
        except VerifyError as e:
            Path(args.out).unlink(missing_ok=True)
            print(f"{e}\n{args.out} was not kept.")
            return 1
        print(f"the reference scores {found.total:g} of {found.total:g} ({found.tests} tests), "
              f"the starter code {found.given:g} (given code only)")  # fmt: skip
        print(f"set the assignment's total in Gradescope to {found.total:g} points (tests "
              "skipped here, such as GPU tests, are not scored there either)")  # fmt: skip
    print(f"wrote {args.out} ({len(manifest['files'])} files); students submit:")
    for f in manifest["submission_files"]:
        print(f"  {f}")
    return 0
