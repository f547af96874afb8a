"""Gradescope autograder zips: ``tinygrad-edu gradescope-zip [REPO] [--out autograder.zip]``.

The zip holds, at its top level (Gradescope unpacks it to ``/autograder/source``):

- ``setup.sh``: run once when Gradescope builds the image; makes a virtual environment in
  ``/autograder/venv`` and installs the library copy (editable) and pytest into it.
- ``run_autograder``: run for each submission; copies the student's files from
  ``/autograder/submission`` over the library copy (only the files with solution regions,
  listed in ``manifest.json``), runs pytest on the reference tests with
  ``--gradescope /autograder/results/results.json``, and writes a zero-score
  ``results.json`` with pytest's output if pytest could not write one (say, a submitted file
  that does not import).
- ``copy_submission.py``, ``manifest.json`` (``submission_files``, ``tests``), ``pytest.ini``.
- ``library/``: the student edition of the repository (solutions replaced, hidden tests out),
  so a file the student does not submit scores nothing.
- ``tests/...``: the graded suites as the instructor wrote them, hidden tests included, with the
  ``__init__.py``/``conftest.py`` files of the folders above them.

Every path can be moved by an environment variable, for trying the zip locally:
``AUTOGRADER_ROOT`` (default ``/autograder``), ``AUTOGRADER_SOURCE``, ``AUTOGRADER_SUBMISSION``,
``AUTOGRADER_RESULTS``, ``AUTOGRADER_PYTHON``.
"""

from __future__ import annotations

import json
import tempfile
import zipfile
from pathlib import Path

from .student import _walk, has_solution_markers, make_student_edition

__all__ = ["build_autograder_zip", "SETUP_SH", "RUN_AUTOGRADER", "add_arguments", "run"]

SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder image.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="${AUTOGRADER_SOURCE:-$ROOT/source}"
BASE_PYTHON="${AUTOGRADER_BASE_PYTHON:-python3}"
if ! "$BASE_PYTHON" -m venv --help >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
fi
"$BASE_PYTHON" -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install -q --upgrade pip
"$ROOT/venv/bin/python" -m pip install -q -e "$SOURCE/library{extras}" pytest
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this for each submission; it must leave $RESULTS/results.json behind.
set -uo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="${AUTOGRADER_SOURCE:-$ROOT/source}"
SUBMISSION="${AUTOGRADER_SUBMISSION:-$ROOT/submission}"
RESULTS="${AUTOGRADER_RESULTS:-$ROOT/results}"
PYTHON="${AUTOGRADER_PYTHON:-$ROOT/venv/bin/python}"
mkdir -p "$RESULTS"
rm -f "$RESULTS/results.json"
LOG="$(mktemp)"
"$PYTHON" "$SOURCE/copy_submission.py" "$SUBMISSION" "$SOURCE/library" \\
  "$SOURCE/manifest.json" 2>&1 | tee "$LOG"
cd "$SOURCE"
export PYTHONPATH="$SOURCE/library${PYTHONPATH:+:$PYTHONPATH}"
"$PYTHON" -m pytest -p no:cacheprovider -p no:tinygrad_edu_grading \\
  -p tinygrad_edu.grading.pytest_plugin --gradescope "$RESULTS/results.json" \\
  {tests} 2>&1 | tee -a "$LOG"
if [ ! -s "$RESULTS/results.json" ]; then
  "$PYTHON" - "$LOG" "$RESULTS/results.json" <<'EOF'
import json, sys
log = open(sys.argv[1], encoding="utf-8", errors="replace").read()
text = "The tests could not run (score 0). The end of the log:\\n" + log[-4000:]
json.dump({"score": 0, "output": text, "tests": []}, open(sys.argv[2], "w"), indent=2)
EOF
fi
rm -f "$LOG"
exit 0
"""

_PYTEST_INI = "[pytest]\n# the graded suites; the plugin tinygrad_edu.grading scores them\n"
_LIBRARY_EXCLUDE = ("tests", "notebooks", "docs", "benchmarks")
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
        for parent in Path(t).parents:
            for name in ("__init__.py", "conftest.py"):
                if (repo / parent / name).is_file():
                    files.add(str(parent / name))
    return sorted(f.replace("\\", "/") for f in files)


def _solution_files(repo: Path) -> list[str]:
    found = []
    for rel in _walk(repo, set()):
        if rel.suffix == ".py" and rel.parts[0] not in _LIBRARY_EXCLUDE:
            if has_solution_markers((repo / rel).read_text(encoding="utf-8")):
                found.append(rel.as_posix())
    return found


def build_autograder_zip(
    repo,
    out_zip,
    tests=("tests/assignments",),
    submission_files=None,
    extras: str = "",
    library_exclude=_LIBRARY_EXCLUDE,
) -> dict:
    """Build a Gradescope autograder zip for the repository ``repo``.

    Args:
        repo: the instructor's repository (with solutions and hidden tests).
        out_zip: the zip to write.
        tests: test files or folders, relative to ``repo``, that are graded.
        submission_files: paths relative to ``repo`` that students submit; by default every
            ``.py`` file outside tests/notebooks/docs/benchmarks with a ``# BEGIN SOLUTION``.
        extras: pip extras for the library, e.g. ``"[viz]"``.
        library_exclude: top-level folders left out of the library copy.

    Returns:
        The manifest: ``{"submission_files": [...], "tests": [...], "files": [...]}``, where
        ``files`` lists every path in the zip.

    Raises:
        ValueError: when there is nothing for students to submit.
        FileNotFoundError: a test path that does not exist.
        MarkerError: from making the student edition.
    """
    repo = Path(repo).resolve()
    tests = [str(t) for t in ([tests] if isinstance(tests, str) else tests)]
    test_files = _test_files(repo, tests)
    if submission_files is None:
        submission_files = _solution_files(repo)
    submission_files = sorted(str(Path(f).as_posix()) for f in submission_files)
    if not submission_files:
        raise ValueError(
            "gradescope-zip: no file has a '# BEGIN SOLUTION' region, so students have nothing "
            "to submit; mark the solutions or name the files with --submission-file"
        )
    for f in submission_files:
        if not (repo / f).is_file():
            raise FileNotFoundError(f"gradescope-zip: submission file {f!r} is not in {repo}")
    manifest = {"submission_files": submission_files, "tests": tests}
    names = []
    with tempfile.TemporaryDirectory() as tmp:
        edition = Path(tmp) / "edition"
        make_student_edition(repo, edition)
        with zipfile.ZipFile(out_zip, "w") as zf:

            def add(name, data, executable=False):
                _add(zf, name, data, executable)
                names.append(name)

            add("setup.sh", SETUP_SH.replace("{extras}", extras).encode(), executable=True)
            quoted = " ".join(f"'{t}'" for t in tests)
            script = RUN_AUTOGRADER.replace("{tests}", quoted)
            add("run_autograder", script.encode(), executable=True)
            add("copy_submission.py", Path(__file__).with_name("copy_submission.py").read_bytes())
            add("manifest.json", (json.dumps(manifest, indent=2) + "\n").encode())
            add("pytest.ini", _PYTEST_INI.encode())
            for rel in _walk(edition, set()):
                if rel.parts[0] not in library_exclude:
                    add(f"library/{rel.as_posix()}", (edition / rel).read_bytes())
            for rel in test_files:
                add(rel, (repo / rel).read_bytes())
    return {**manifest, "files": names}


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


def run(args) -> int:
    from .student import MarkerError

    try:
        manifest = build_autograder_zip(
            args.repo, args.out, args.tests, args.submission_files, args.extras
        )
    except (ValueError, FileNotFoundError, MarkerError) as e:
        print(e)
        return 1
    print(f"wrote {args.out} ({len(manifest['files'])} files); students submit:")
    for f in manifest["submission_files"]:
        print(f"  {f}")
    return 0
