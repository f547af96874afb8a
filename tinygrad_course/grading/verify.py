"""``gradescope-zip`` checks what it built before it reports success.

An autograder zip that cannot grade is worse than none: a test file whose probe module was
left out imports nothing, and a correct submission scores 0 with 0 tests. So the built zip is
unpacked into a temporary ``/autograder`` and graded twice by its own ``run_autograder``,
with resource limits only (this is the instructor's code, not a student's):

- the **reference** (the repository's own submitted files) must score full marks, with at
  least one test, every test passing and no test file failing to load;
- the **starter code** (the student edition of the submitted files) may pass only tests of
  tasks without solution regions (the given code's points).

The total the reference can score there is the total to set in Gradescope: tests skipped by a
marker (the GPU tests on a machine without a GPU, like Gradescope's) are left out of it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["VerifyError", "Verified", "verify_zip"]


class VerifyError(ValueError):
    """The built zip does not grade as it must; the message names the cause."""


@dataclass(frozen=True)
class Verified:
    """What the check found: the total Gradescope can score, the given code's points, and
    the number of tests graded there."""

    total: float
    given: float
    tests: int


def _unzip(zip_path: Path, dest: Path) -> None:
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(dest)
        for info in zf.infolist():
            os.chmod(dest / info.filename, stat.S_IMODE(info.external_attr >> 16) or 0o644)


def _grade(root: Path, name: str, files: dict[str, bytes], timeout: float) -> tuple[dict, str]:
    submission = root / f"submission-{name}"
    for rel, data in files.items():
        (submission / rel).parent.mkdir(parents=True, exist_ok=True)
        (submission / rel).write_bytes(data)
    results = root / f"results-{name}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AUTOGRADER_", "PYTEST"))}
    env.pop("PYTHONPATH", None)
    env.update(
        AUTOGRADER_ROOT=str(root), AUTOGRADER_SUBMISSION=str(submission),
        AUTOGRADER_RESULTS=str(results), AUTOGRADER_PYTHON=sys.executable,
        AUTOGRADER_SANDBOX_PYTHON=sys.executable, AUTOGRADER_SANDBOX="rlimits",
        AUTOGRADER_TIMEOUT=str(timeout),
    )  # fmt: skip
    done = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env,
                          capture_output=True, text=True, errors="replace",
                          stdin=subprocess.DEVNULL)  # fmt: skip
    log = done.stdout + done.stderr
    try:
        data = json.loads((results / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise VerifyError(f"gradescope-zip: grading the {name} wrote no results ({e})\n"
                          f"{log[-3000:]}") from None  # fmt: skip
    return data, log


def _cause(log: str) -> str:
    """The likeliest cause of tests that could not load or run, from the grader's log."""
    missing = sorted(set(re.findall(r"No module named '([\w.]+)'", log)))
    if missing:
        return (
            f"the tests import {', '.join(missing)}, which is not in the zip: give --tests the "
            "folder of the suite (or name the probe module too), so every module a test "
            "imports is shipped"
        )
    errors = re.findall(r"^E\s+(\w+Error: .*)$", log, re.M)
    if errors:
        return f"a test file could not be loaded: {errors[0][:300]}"
    return "see the grader's log below"


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _uninstalled_imports(source: Path, manifest: dict) -> dict[str, str]:
    """Top-level modules the shipped test files import that Gradescope's venv would lack:
    module -> the first test file importing it. The venv has the standard library and what
    ``requirements.txt`` names; the grader's path has the zip's packages and ``tests``. (Here
    the check's own interpreter may have more, so a missing one would not show when graded.)"""
    import ast  # noqa: PLC0415
    from importlib.metadata import packages_distributions  # noqa: PLC0415

    wanted = set()
    for line in (source / "requirements.txt").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line)
        if m:
            wanted.add(_norm(m.group(1)))
    dists = packages_distributions()
    ok = set(sys.stdlib_module_names) | set(manifest.get("packages", [])) | {"tests"}
    shipped = {p.split("/")[0] for p in manifest.get("probe_files", [])}
    found: dict[str, str] = {}
    for path in sorted(source.rglob("*.py")):
        rel = path.relative_to(source).as_posix()
        if not rel.startswith(tuple(f"{t}/" for t in shipped | {"tests"})):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except SyntaxError:
            continue  # pytest reports it
        for node in tree.body:  # module level: a guarded import (try, a function) may fail
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top in ok or top in found:
                    continue
                if not any(_norm(d) in wanted for d in dists.get(top, [top])):
                    found[top] = rel
    return found


def _task(test: dict) -> str:
    return str(test.get("name", "")).split(" ", 1)[0]


def verify_zip(zip_path, repo, timeout: float = 60.0, log=print) -> Verified:
    """Grade the reference and the starter code inside the built zip ``zip_path``.

    Raises:
        VerifyError: the reference does not score full marks (naming the failing tests, or
            the module the tests import that the zip lacks), no test ran, or the starter code
            earns points of a task with solution regions.
    """
    zip_path, repo = Path(zip_path).resolve(), Path(repo).resolve()
    root = Path(tempfile.mkdtemp(prefix="tgedu-verify-"))
    try:
        source = root / "source"
        _unzip(zip_path, source)
        manifest = json.loads((source / "manifest.json").read_text(encoding="utf-8"))
        lacking = _uninstalled_imports(source, manifest)
        if lacking:
            listed = ", ".join(f"{m} (in {f})" for m, f in sorted(lacking.items()))
            raise VerifyError(
                f"gradescope-zip: the tests import {listed}, which the autograder does not "
                "install: it installs only the dependencies in your pyproject.toml (and "
                "--extras). Add the distribution that provides it there (for "
                "tinygrad_course.grading's checks: tinygrad_edu)"
            )
        files = manifest["submission_files"]
        reference = {f: (repo / f).read_bytes() for f in files}
        data, text = _grade(root, "reference", reference, timeout)
        tests = data.get("tests", [])
        total = sum(t.get("max_score", 0) for t in tests)
        loaded = "could not be loaded" not in data.get("output", "")
        failed = [t for t in tests if t.get("status") != "passed"]
        if not tests or not loaded:
            why = "no test ran" if not tests else "some test files could not be loaded"
            hint = _cause(text)
            if not tests and "skipped" in text and "No module named" not in text:
                hint = ("every test was skipped here (GPU tests skip without a GPU: build this "
                        "zip on the GPU machine that grades it, or with --no-verify)")  # fmt: skip
            raise VerifyError(f"gradescope-zip: the reference solution graded in the built zip: "
                              f"{why}; {hint}\n{text[-3000:]}")  # fmt: skip
        if failed or data.get("score") != total:
            names = "\n".join(f"  {t['name']}: {t.get('output', '')[:300]}" for t in failed[:10])
            raise VerifyError(
                f"gradescope-zip: the reference solution scores {data.get('score')} of {total} "
                f"in the built zip; {_cause(text)}. Failing:\n{names}"
            )
        starter = {f: (source / "edition" / f).read_bytes() for f in files}
        got, _ = _grade(root, "starter", starter, timeout)
        regions = set(manifest["regions"])
        earned = sorted({_task(t) for t in got.get("tests", []) if t.get("score", 0) > 0}
                        & regions)  # fmt: skip
        if earned:
            raise VerifyError(
                f"gradescope-zip: the starter code earns points of {', '.join(earned)}, tasks "
                "students must solve: a test passes without the solution (check what it "
                "asserts, or move a region)"
            )
        given = sum(t.get("score", 0) for t in got.get("tests", []))
        return Verified(total, given, len(tests))
    finally:
        shutil.rmtree(root, ignore_errors=True)
