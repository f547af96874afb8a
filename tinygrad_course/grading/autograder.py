"""The trusted side of the autograder: grade one submission and write ``results.json``.

``run_autograder`` (from :mod:`tinygrad_course.grading.gradescope`) calls::

    python -m tgedu_grader.autograder --source SRC --submission SUB --results FILE

(``tgedu_grader`` is this package's grading modules, shipped in the zip) with ``PYTHONPATH``
also at the reference library in ``SRC/reference``. This process runs the graded suites with
pytest and never imports submitted code:

1. map the uploaded files onto the files students submit, by path
   (:mod:`tinygrad_course.grading.submission`);
2. for each set of tasks a test uses, build a **working copy**: the reference library
   compiled to bytecode without source, with the functions of those tasks spliced in from the
   submission (:mod:`tinygrad_course.grading.splice`), and the suite's probe modules;
3. run the tests: each probe call goes to a sandboxed child serving that working copy
   (:mod:`tinygrad_course.grading.sandbox`); the check stays here. Visible tests run first,
   then the hidden ones, one working copy at a time; between two children everything the
   sandbox user left behind is swept away;
4. write ``results.json`` (this process alone writes it, after every child is gone), with
   the file report at the top of the student's output, and print the instructor's log
   (all tests, hidden ones included) to stdout, which Gradescope shows instructors only.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .probe import SubmissionError, call_in_process, format_error, probe_name
from .pytest_plugin import GRADER, points_table, write_results
from .sandbox import (
    DEFAULT_USER,
    ProbeFailed,
    ProbeTimeout,
    Sandbox,
    SandboxConfig,
    SandboxDied,
    SandboxError,
    kill_descendants,
    runtime_files,
    sandbox_config,
    sweep,
)
from .splice import CombineError, MissingFunction, SubmittedSyntaxError, splice
from .submission import Mapping, map_submission

__all__ = ["Workspace", "Grader", "grade", "main", "MAX_TIMEOUTS"]

MAX_TIMEOUTS = 2  # calls of one working copy that may time out before the rest are not run
_COMPILE = """\
import json, py_compile, sys
errors = {}
for src, dst, dfile in json.load(sys.stdin):
    try:
        py_compile.compile(src, cfile=dst, dfile=dfile, doraise=True)
    except py_compile.PyCompileError as e:
        errors[src] = [str(e.msg).strip().splitlines()[-1],
                       getattr(e.exc_value, "lineno", None)]
json.dump(errors, sys.stdout)
"""


def _tree_modes(root: Path, gid: int | None = None) -> None:
    """Folders 0755, files 0644: readable by the sandbox user, writable by no one else.

    With ``gid`` (the sandbox user's group, as root): root's, in that group, 0750 and 0640,
    so that only that user reads it (``grade-batch`` grades several submissions at once,
    each slot as its own user: one student's code must not read another's working copy)."""
    dmode, fmode = (0o755, 0o644) if gid is None else (0o750, 0o640)
    for folder, _dirs, files in os.walk(root):
        for path in (folder, *(os.path.join(folder, name) for name in files)):
            if gid is not None:
                os.chown(path, 0, gid)
            os.chmod(path, dmode if path == folder else fmode)


class Workspace:
    """Working copies: the compiled library as the tests of one set of tasks should see it.

    Args:
        source: the unpacked autograder (``manifest.json``, ``reference/``, ``edition/``).
        manifest: its manifest.
        mapping: the submission's files.
        python: the children's interpreter (it also compiles their bytecode).
        root: a folder for this run (working copies, compiled files).
        gid: the sandbox user's group: only it may read the working copies (None: anyone).
    """

    def __init__(self, source: Path, manifest: dict, mapping: Mapping, python: str, root: Path,
                 gid: int | None = None):  # fmt: skip
        self.source, self.manifest, self.mapping = source, manifest, mapping
        self.python, self.root, self.gid = python, root, gid
        self.regions = {t: [tuple(p) for p in ps] for t, ps in manifest["regions"].items()}
        self.file_tasks: dict[str, set] = {}
        for task, places in self.regions.items():
            for file, _ in places:
                self.file_tasks.setdefault(file, set()).add(task)
        self.cache = root / "cache"
        self.cache.mkdir(mode=0o700)
        self.spliced: dict[tuple, dict] = {}
        self.problems: dict[tuple, str] = {}
        self._ids: dict[tuple, int] = {}
        self._compiled_reference = False

    def _library_files(self):
        ref = self.source / "reference"
        for pkg in self.manifest["packages"]:
            for path in sorted((ref / pkg).rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts:
                    yield path.relative_to(ref).as_posix()

    def _text(self, file: str) -> str:
        if file in self.mapping.texts:
            return self.mapping.texts[file]
        return (self.source / "edition" / file).read_text(encoding="utf-8")

    def prepare(self, keys) -> None:
        """Splice and compile what every key needs (one compiler process for all)."""
        ref = self.source / "reference"
        jobs = []
        if not self._compiled_reference:
            for rel in self._library_files():
                if rel.endswith(".py"):
                    jobs.append((str(ref / rel), str(self.cache / "ref" / (rel + "c")), rel))
            self._compiled_reference = True
        sources = {}
        for key in keys:
            if not key or key in self._ids:
                continue
            self._ids[key] = len(self._ids)
            kdir = self.cache / f"k{self._ids[key]}"
            files = sorted({f for t in key for f, _ in self.regions[t]})
            self.spliced[key] = {}
            for file in files:
                submitted = self._text(file)
                try:
                    sp = splice((ref / file).read_text(encoding="utf-8"), submitted,
                                set(key) & self.file_tasks[file], file)  # fmt: skip
                except SubmittedSyntaxError as e:
                    self.problems[key] = _syntax_message(e, self.file_tasks[file] & set(key))
                    break
                except MissingFunction as e:
                    self.problems[key] = f"{e} (your code for {e.task} was not graded)"
                    break
                except CombineError as e:
                    self.problems[key] = _not_your_fault(file, e, self.file_tasks[file] & set(key))
                    break
                src = kdir / "src" / file
                src.parent.mkdir(parents=True, exist_ok=True)
                src.write_text(sp.text, encoding="utf-8")
                sources[str(src)] = (key, file)
                self.spliced[key][file] = (sp, submitted)
                jobs.append((str(src), str(kdir / "pyc" / (file + "c")), file))
        if not jobs:
            return
        done = subprocess.run(
            [self.python, "-I", "-B", "-c", _COMPILE], input=json.dumps(jobs), text=True,
            capture_output=True, timeout=600,
        )  # fmt: skip
        if done.returncode != 0:
            raise SandboxError(f"compiling the working copies failed:\n{done.stderr[-2000:]}")
        for src, (msg, lineno) in json.loads(done.stdout or "{}").items():
            if src in sources:
                key, file = sources[src]
                sp, submitted = self.spliced[key][file]
                origin = sp.origin[lineno - 1] if lineno and 0 < lineno <= len(sp.origin) else None
                if origin is not None and origin[0] == "submitted":
                    line = submitted.splitlines()[origin[1] - 1].strip()[:200]
                    self.problems.setdefault(
                        key, f"your {file} does not compile, line {origin[1]}: {msg}\n    {line}"
                    )
                else:  # a line the grader put in: its fault, not the student's
                    self.problems.setdefault(key, _not_your_fault(file, msg, set(key)))
            else:
                raise SandboxError(f"the reference file {src} does not compile: {msg}")

    def workdir(self, key: tuple) -> Path:
        """A fresh working copy for ``key`` (a tuple of tasks whose student code is used)."""
        self.prepare([key])
        ref = self.source / "reference"
        work = self.root / f"w-{secrets.token_hex(8)}"
        work.mkdir()
        for rel in self._library_files():
            dst = work / (rel + "c" if rel.endswith(".py") else rel)
            dst.parent.mkdir(parents=True, exist_ok=True)
            src = self.cache / "ref" / (rel + "c") if rel.endswith(".py") else ref / rel
            shutil.copyfile(src, dst)
        if key in self._ids:
            pyc = self.cache / f"k{self._ids[key]}" / "pyc"
            for path in pyc.rglob("*.pyc"):
                shutil.copyfile(path, work / path.relative_to(pyc))
        for rel in self.manifest["probe_files"]:
            dst = work / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.source / rel, dst)
        _tree_modes(work, self.gid)
        return work

    def render(self, key: tuple, frames) -> list[str]:
        """Traceback lines for frames reported by the child, with source text from here."""
        lines = []
        spliced = self.spliced.get(key, {})
        probes = set(self.manifest["probe_files"])
        for file, line, func in frames:
            file, func = str(file), str(func)
            if file in spliced:
                sp, submitted = spliced[file]
                origin = sp.origin[line - 1] if 0 < line <= len(sp.origin) else ("?", 0)
                if origin[0] == "submitted":
                    text = submitted.splitlines()[origin[1] - 1].strip()
                    whose = "your " if file in self.mapping.texts else "starter code "
                    lines += [f"  {whose}{file}, line {origin[1]}, in {func}", f"    {text}"]
                    continue
                lines.append(f"  {file}, in {func} (course code)")
            elif file in probes:
                probe_lines = (self.source / file).read_text(encoding="utf-8").splitlines()
                text = probe_lines[line - 1].strip() if 0 < line <= len(probe_lines) else ""
                lines += [f"  {file}, line {line}, in {func}", f"    {text}"]
            elif file.endswith(".py") and not file.startswith("<"):
                lines.append(f"  {file}, in {func} (course code)")
        return lines


def _syntax_message(e: SubmittedSyntaxError, tasks) -> str:
    where = f", line {e.lineno}" if e.lineno else ""
    text = f"your {e.filename} does not parse{where}: {e.msg}"
    if e.line:
        text += f"\n    {e.line.strip()[:200]}"
    tasks = ", ".join(sorted(tasks))
    return text + f"\nThe tasks whose code lives in this file ({tasks}) score 0 until it parses."


def _not_your_fault(file: str, error, tasks) -> str:
    return (
        f"The autograder could not combine your {file} with the course's code to grade "
        f"{', '.join(sorted(tasks))}: a fault in the autograder, not in your file (it parses). "
        f"Your instructor can see the details ({error})."
    )


class Grader:
    """The pytest plugin of an autograder run: sends probe calls to sandboxed children.

    Registered under :data:`tinygrad_course.grading.pytest_plugin.GRADER`; the ``run`` fixture
    hands it every call. One child at a time: when the tests move on to another set of tasks,
    the previous child is killed and everything it left is swept away.
    """

    def __init__(self, workspace: Workspace, config: SandboxConfig, runtime: Path,
                 deadline: float, log=print):  # fmt: skip
        self.workspace, self.config, self.runtime = workspace, config, runtime
        self.deadline, self.log = deadline, log
        self.reap = False  # kill every leftover process below this one (set by grade())
        self.current: tuple | None = None
        self.sandbox: Sandbox | None = None
        self.workdir: Path | None = None
        self.timeouts: dict[tuple, int] = {}
        self._order: dict[tuple, int] = {}
        self.records: list = []
        self.collect_errors: list = []

    def uses(self, info: dict) -> tuple:
        if info.get("uses") is not None:
            return tuple(info["uses"])
        return (info["task"],) if info["task"] in self.workspace.regions else ()

    def key(self, info: dict) -> tuple:
        return self.uses(info)

    def sort_key(self, info):
        """See NOTE [One working copy at a time] in the pytest plugin."""
        if info is None:
            return (len(self._order) + 1, 0, 0)
        rank = self._order.setdefault(self.key(info), len(self._order))
        return (rank, info["visibility"] != "visible", info["order"])

    def pytest_collection_finish(self, session) -> None:
        keys = set()
        for item in session.items:
            info = next((v for k, v in item.user_properties if k == "tinygrad_edu_grading"), None)
            if info is not None:
                keys.add(self.uses(info))
        unknown = sorted({t for k in keys for t in k} - set(self.workspace.regions))
        if unknown:
            self.log(f"warning: task(uses=...) names tasks without solution regions: {unknown}")
        self.workspace.prepare(k for k in keys if not set(k) & set(unknown))

    def _sandbox_for(self, key: tuple) -> Sandbox:
        if self.current != key:
            self.close()
            self.workdir = self.workspace.workdir(key)
            self.sandbox = Sandbox(self.config, self.workdir, self.runtime,
                                   self.workspace.root / "scratch",
                                   log=self.workspace.root / "child.log")  # fmt: skip
            self.current = key
        return self.sandbox

    def close(self) -> None:
        if self.sandbox is not None:
            self.sandbox.close()
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
        self.sandbox = self.workdir = self.current = None
        sweep(self.config)
        if self.reap:
            kill_descendants()

    def call(self, item, info: dict, probe, kwargs: dict):
        uses = self.uses(info)
        if not uses:  # no student code involved: the reference answers, here
            return call_in_process(probe, kwargs)
        unknown = sorted(set(uses) - set(self.workspace.regions))
        if unknown:
            raise RuntimeError(f"{item.nodeid}: task(uses=...) names {unknown}, which have no "
                               "solution region")  # fmt: skip
        key = self.key(info)
        problem = self.workspace.problems.get(uses)
        if problem:
            raise SubmissionError(problem)
        module, name = probe_name(probe)
        if module.replace(".", "/") + ".py" not in self.workspace.manifest["probe_files"]:
            raise RuntimeError(f"{item.nodeid}: {module}.{name} is not in a probes module")
        if time.monotonic() > self.deadline:
            raise SubmissionError("not run: the autograder's time budget ran out")
        if self.timeouts.get(key, 0) >= MAX_TIMEOUTS:
            raise SubmissionError(
                f"not run: {MAX_TIMEOUTS} earlier tests of {', '.join(uses)} timed out"
            )
        timeout = info.get("timeout") or self.config.timeout
        sandbox = self._sandbox_for(key)
        try:
            return sandbox.call(module, name, kwargs, timeout)
        except ProbeFailed as e:
            frames = self.workspace.render(uses, e.error.get("frames") or [])
            raise SubmissionError(format_error(e.error, frames)) from None
        except ProbeTimeout:
            self.timeouts[key] = self.timeouts.get(key, 0) + 1
            raise SubmissionError(
                f"timed out: your code for {', '.join(uses)} ran longer than {timeout:g} s "
                "(an endless loop?)"
            ) from None
        except SandboxDied as e:
            self.log(f"{item.nodeid}: the child died: {e}\n{e.log[-1500:]}")
            raise SubmissionError(str(e)) from None

    def pytest_sessionfinish(self, session) -> None:
        self.close()
        board = session.config.pluginmanager.get_plugin("tinygrad_edu_grading_scoreboard")
        if board is not None:
            self.records, self.collect_errors = board.records(), board.collect_errors


class _Register:
    """Registers the grader under its well-known name once pytest is configured."""

    def __init__(self, grader: Grader):
        self.grader = grader

    def pytest_configure(self, config) -> None:
        config.pluginmanager.register(self.grader, GRADER)


def _subreaper() -> None:
    """Orphans of the sandbox come to this process (Linux), so none outlives the run."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def _lock_down(paths) -> None:
    """Only root may read the autograder's own folders (the hidden tests, the reference)."""
    if os.geteuid() != 0:
        return
    for path in paths:
        with contextlib.suppress(OSError):
            os.chmod(path, 0o700)


def _check_python(config: SandboxConfig, root: Path) -> None:
    """Fail early, and clearly, when the sandbox user cannot run the children's Python."""
    probe = root / "check"
    probe.mkdir()
    (probe / "ok.py").write_text("import numpy\ndef ok():\n    return numpy.__version__\n")
    _tree_modes(probe)
    try:
        with Sandbox(config, probe, root / "runtime", root / "scratch") as sb:
            sb.call("ok", "ok", {}, timeout=120)
    except (ProbeFailed, ProbeTimeout, SandboxDied, OSError) as e:
        raise SandboxError(
            f"the sandbox cannot run {config.python} as {config.user or 'this user'}: {e} "
            f"{getattr(e, 'log', '')[-500:]}. Use an interpreter (with numpy) that the sandbox "
            "user can read, e.g. a virtual environment outside /root."
        ) from None
    finally:
        shutil.rmtree(probe, ignore_errors=True)


def grade(source, submission, results, sandbox_python: str | None = None,
          user: str = DEFAULT_USER, mode: str = "auto", timeout: float = 30.0,
          budget: float = 1800.0, log=print) -> dict:  # fmt: skip
    """Grade the submission in ``submission`` with the autograder unpacked in ``source``.

    Writes ``results`` (Gradescope's ``results.json``) and returns its data. ``log`` gets the
    instructor's lines. See :mod:`tinygrad_course.grading.sandbox` for ``user`` and ``mode``.
    """
    import pytest  # noqa: PLC0415 - the autograder's venv has it; importing the module need not

    start = time.time()
    source, submission, results = Path(source), Path(submission), Path(results)
    _subreaper()
    results.parent.mkdir(parents=True, exist_ok=True)
    _lock_down([source, submission, results.parent])
    manifest = json.loads((source / "manifest.json").read_text(encoding="utf-8"))
    edition = source / "edition"
    starter = {f: (edition / f).read_text(encoding="utf-8")
               for f in manifest["submission_files"] if (edition / f).is_file()}  # fmt: skip
    mapping = map_submission(submission, manifest["submission_files"], starter)
    config = sandbox_config(sandbox_python or sys.executable, user, mode, timeout=timeout)
    log(config.describe())
    root = Path(tempfile.mkdtemp(prefix="tgedu-grade-"))
    os.chmod(root, 0o711)
    records, collect_errors = [], []
    try:
        runtime = root / "runtime"
        runtime.mkdir()
        for name, data in runtime_files().items():
            (runtime / name).write_bytes(data)
        _tree_modes(runtime)
        (root / "scratch").mkdir()
        os.chmod(root / "scratch", 0o711)
        _check_python(config, root)
        workspace = Workspace(source, manifest, mapping, config.python, root, config.gid)
        grader = Grader(workspace, config, runtime, time.monotonic() + budget, log)
        grader.reap = True
        args = ["-p", "no:cacheprovider", "-p", "no:tinygrad_edu_grading", "-p",
                f"{__package__}.pytest_plugin", "-q", "-W",
                "ignore::pytest.PytestAssertRewriteWarning", "--rootdir", str(source),
                "-c", str(source / "pytest.ini"), *manifest["tests"]]  # fmt: skip
        cwd = os.getcwd()
        os.chdir(source)
        try:
            pytest.main(args, plugins=[_Register(grader)])
        finally:
            os.chdir(cwd)
            grader.close()
        records, collect_errors = grader.records, grader.collect_errors
        header = mapping.report()
    except SandboxError as e:
        log(f"the sandbox is not usable: {e}")
        header = (
            "The autograder is not set up correctly, so nothing was graded (this is not your "
            "code's fault). Your instructor can see why in the autograder's log."
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    write_results(results, records, collect_errors, time.time() - start, header)
    log("\n".join(["", header, "", "all tests, hidden ones included:",
                   *points_table(records)]))  # fmt: skip
    if collect_errors:
        log("collection errors:\n" + "\n\n".join(collect_errors))
    return json.loads(results.read_text(encoding="utf-8"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__package__}.autograder")
    parser.add_argument("--source", required=True, help="the unpacked autograder")
    parser.add_argument("--submission", required=True, help="the student's files")
    parser.add_argument("--results", required=True, help="results.json to write")
    parser.add_argument("--sandbox-python", help="the children's interpreter")
    parser.add_argument("--sandbox-user", default=DEFAULT_USER)
    parser.add_argument("--sandbox", default="auto", choices=["auto", "user", "rlimits"])
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per probe call")
    parser.add_argument("--budget", type=float, default=1800.0, help="seconds for all calls")
    args = parser.parse_args(argv)
    grade(args.source, args.submission, args.results, args.sandbox_python, args.sandbox_user,
          args.sandbox, args.timeout, args.budget)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
