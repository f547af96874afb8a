"""Hostile and clumsy submissions for the autograder tests (#12).

Each builder writes one submission folder from the instructor's repository (``repo``) and
its student edition (``edition``). The attack code is what a student could upload: it runs
wherever the autograder runs submitted code.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

__all__ = ["SUBMISSIONS", "solution_files", "file_tasks", "HIDDEN_MARK", "FORGED"]

FORGED = "FORGED BY THE SUBMISSION"
HIDDEN_MARK = "PEEK"

_FORGE_ATEXIT = '''

# --- an attack: rewrite results.json at exit, and from a process that outlives the grader
import atexit as _atexit
import glob as _glob
import json as _json
import os as _os
import sys as _sys
import time as _time


def _targets():
    paths = {"/autograder/results/results.json"}
    for i, arg in enumerate(_sys.argv):
        if arg in ("--gradescope", "--results") and i + 1 < len(_sys.argv):
            paths.add(_sys.argv[i + 1])
    for value in _os.environ.values():
        if "results" in value and value.startswith("/"):
            paths.add(value.rstrip("/") + "/results.json")
    for cmdline in _glob.glob("/proc/[0-9]*/cmdline"):
        try:
            parts = open(cmdline, "rb").read().split(b"\\0")
        except OSError:
            continue
        for k, part in enumerate(parts):
            text = part.decode("utf-8", "replace")
            if text.endswith("results.json"):
                paths.add(text)
            if text == "--results" and k + 1 < len(parts):
                paths.add(parts[k + 1].decode("utf-8", "replace"))
    return paths


def _forge():
    tests = [{"name": "everything", "score": 999, "max_score": 999, "status": "passed"}]
    data = {"score": 999, "output": "FORGED BY THE SUBMISSION", "tests": tests}
    for path in _targets():
        try:
            with open(path, "w") as f:
                _json.dump(data, f)
        except OSError:
            pass


_atexit.register(_forge)
if not _os.environ.get("_FORGER_CHILD"):
    _os.environ["_FORGER_CHILD"] = "1"
    try:
        if _os.fork() == 0:
            _os.setsid()
            if _os.fork() == 0:
                for _ in range(40):
                    _time.sleep(0.25)
                    _forge()
            _os._exit(0)
    except OSError:
        pass
'''

_FORGE_PYTEST = '''

# --- an attack: make pytest report every test as passed, and numpy's checks pass
try:
    import _pytest.reports as _reports

    _original = _reports.TestReport.from_item_and_call

    def _passed(cls, item, call):
        report = _original(item, call)
        report.outcome, report.longrepr = "passed", None
        return report

    _reports.TestReport.from_item_and_call = classmethod(_passed)
except Exception:
    pass
import numpy.testing as _npt

_npt.assert_allclose = lambda *args, **kwargs: None
_npt.assert_array_equal = lambda *args, **kwargs: None
'''

_FORGE_ANSWERS = '''

# --- an attack: answer the graded probes with well-formed forgeries instead of running them
import importlib as _importlib

_real_import_module = _importlib.import_module


def _forged(probe):
    def answer(*args, **kwargs):
        if probe.__name__ == "vjp":
            return {"count": len(kwargs.get("inputs", ())), "grads": []}
        if probe.__name__ in ("symbolic_gradients", "symbolic_second_derivatives", "backward",
                              "optimize", "execute"):
            return []
        return probe(*args, **kwargs)

    answer._forged = True
    return answer


def _forging_import_module(name, package=None):
    module = _real_import_module(name, package)
    if name.startswith("tests.assignments.probes"):
        for attr, value in list(vars(module).items()):
            if callable(value) and getattr(value, "__module__", "") == name:
                if not getattr(value, "_forged", False):
                    setattr(module, attr, _forged(value))
    return module


_importlib.import_module = _forging_import_module
'''

_PEEK = '''

# --- an attack: look for the hidden tests and the reference solutions, and show them
def _peek():
    import glob, os, re

    roots = {"/autograder", os.getcwd()}
    for key, value in os.environ.items():
        if key.startswith("AUTOGRADER") and value.startswith("/"):
            roots.add(value)
    for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            parts = open(cmdline, "rb").read().split(b"\\0")
        except OSError:
            continue
        for k, part in enumerate(parts[:-1]):
            if part in (b"--source", b"--submission", b"--results"):
                roots.add(os.path.dirname(parts[k + 1].decode("utf-8", "replace")))
    here = os.path.dirname(os.path.abspath(__file__))
    for _ in range(4):
        roots.add(here)
        here = os.path.dirname(here)
    found, seen = [], set()
    for root in sorted(roots):
        if not os.path.isdir(root) or root in ("/", "/proc", "/sys", "/usr", "/dev"):
            continue
        for folder, dirs, files in os.walk(root):
            if folder.count(os.sep) - root.count(os.sep) > 4:
                dirs[:] = []
            for name in files:
                path = os.path.join(folder, name)
                if not name.endswith(".py") or path in seen:
                    continue
                seen.add(path)
                try:
                    text = open(path, encoding="utf-8", errors="replace").read()
                except OSError:
                    continue
                if "BEGIN HIDDEN TESTS" in text:
                    hidden = text[text.index("BEGIN HIDDEN TESTS"):]
                    found.append("hidden " + " ".join(re.findall(r"def (test_\\w+)", hidden)))
                if "# BEGIN SOLUTION A" in text:
                    start = text.index("# BEGIN SOLUTION A")
                    found.append("solution " + text[start:start + 300])
    for root in sorted(roots):  # what Gradescope puts next to the submission
        try:
            with open(os.path.join(root, "submission_metadata.json")) as f:
                found.append("metadata " + f.read(80))
        except OSError:
            pass
    return "PEEK found %d: %s" % (len(found), " | ".join(found))


print(_peek())
'''


def _peek_body(indent: str) -> str:
    return f"{indent}raise RuntimeError(_peek())\n"


def solution_files(repo: Path) -> list[str]:
    """Library files with solution regions (the files students submit)."""
    from tinygrad_course.grading.student import has_solution_markers  # noqa: PLC0415

    out = []
    for path in sorted((repo / "tinygrad_edu").rglob("*.py")):
        if has_solution_markers(path.read_text(encoding="utf-8")):
            out.append(path.relative_to(repo).as_posix())
    return out


def file_tasks(repo: Path) -> dict[str, set]:
    """File -> the tasks whose solution regions it holds."""
    return {
        f: set(re.findall(r"^\s*# BEGIN SOLUTION (\S+)", (repo / f).read_text(), re.M))
        for f in solution_files(repo)
    }


def _region(text: str, task: str) -> tuple[int, int, str]:
    """(start, end) character offsets of the body of the first region of ``task``."""
    m = re.search(rf"^([ \t]*)# BEGIN SOLUTION {re.escape(task)}\n", text, re.M)
    end = text.index("# END SOLUTION", m.end())
    end = text.rindex("\n", 0, end) + 1
    return m.end(), end, m.group(1)


def _write(folder: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def _files(root: Path, names) -> dict[str, str]:
    return {f: (root / f).read_text(encoding="utf-8") for f in names}


def reference(repo, edition, out):
    return _write(out, _files(repo, solution_files(repo)))


def edition_untouched(repo, edition, out):
    return _write(out, _files(edition, solution_files(repo)))


def hostile(repo, edition, out):
    """The untouched edition, plus every trick to score without solving or to see what is
    hidden: rewrite results.json at exit and from a process that outlives the grader, patch
    pytest's reports and numpy's checks, answer the probes with well-formed forgeries (empty
    gradients, empty histories), and look for the hidden tests, the reference and
    submission_metadata.json (topo_sort, A1.1, raises what it found, so a visible test shows
    it)."""
    files = _files(edition, solution_files(repo))
    files["tinygrad_edu/symbolic/graph.py"] += _FORGE_ATEXIT
    for f in ("tinygrad_edu/symbolic/graph.py", "tinygrad_edu/nn/functional.py"):
        files[f] += _FORGE_PYTEST
    for f in files:  # every task's child answers with forgeries
        if f != "tinygrad_edu/symbolic/graph.py":
            files[f] += _FORGE_ANSWERS
    graph = "tinygrad_edu/symbolic/graph.py"
    files[graph] = re.sub(
        r'^([ \t]*)raise NotImplementedError\("A1\.1: [^"]*"\)\n',
        lambda m: _peek_body(m.group(1)), files[graph] + _PEEK, count=1, flags=re.M,
    )  # fmt: skip
    return _write(out, files)


def endless_loop(repo, edition, out):
    """The reference, except that mse_loss (A3.2) never returns."""
    files = _files(repo, solution_files(repo))
    f = "tinygrad_edu/nn/functional.py"
    start, end, indent = _region(files[f], "A3.2")
    files[f] = files[f][:start] + f"{indent}while True:\n{indent}    pass\n" + files[f][end:]
    return _write(out, files)


SYNTAX_FILE = "tinygrad_edu/ops/arithmetic.py"


def syntax_error(repo, edition, out):
    """The reference, with one file that does not parse."""
    files = _files(repo, solution_files(repo))
    start, _, indent = _region(files[SYNTAX_FILE], "A1.3")
    broken = f"{indent}return (g if needs[0] else None,,)\n"
    files[SYNTAX_FILE] = files[SYNTAX_FILE][:start] + broken + files[SYNTAX_FILE][start:]
    return _write(out, files)


def whole_repository(repo, edition, out):
    """The whole repository (tests, docs, every __init__.py), two folders deep."""
    from tinygrad_course.grading.student import _walk  # noqa: PLC0415

    dest = out / "upload" / "tinygrad_edu-main"
    for rel in _walk(repo, set()):
        if rel.parts[0] in ("notebooks", "site") or rel.suffix in (".ipynb", ".png", ".npz"):
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(repo / rel, dest / rel)
    return out


RENAMED = "graph (1).py"


def renamed_file(repo, edition, out):
    """The reference as single files, graph.py saved by a browser as ``graph (1).py``."""
    files = {}
    for f in solution_files(repo):
        name = Path(f).name
        files[RENAMED if name == "graph.py" else name] = (repo / f).read_text()
    return _write(out, files)


DERIVATIVE_TASKS = ("A1.3", "A1.4", "A1.5", "A1.6", "A1.7")

_FD_VJP = '''

# --- no calculus: the same rule for every op, central differences of its forward computation
_FD_ARGS = ("self", "F", "g", "inputs", "out", "shapes", "needs", "_FD_ARGS")


def _fd_vjp(op, g, inputs, needs, attrs, h=1e-6):
    import numpy as np

    xs = [np.array(x, dtype=np.float64) for x in inputs]
    g = np.asarray(g, dtype=np.float64)
    grads = []
    for k, x in enumerate(xs):
        if not needs[k]:
            grads.append(None)
            continue
        grad = np.zeros_like(x)
        flat, gflat = x.reshape(-1), grad.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + h
            plus = float(np.sum(g * op.forward(np, *xs, **attrs)))
            flat[i] = old - h
            minus = float(np.sum(g * op.forward(np, *xs, **attrs)))
            flat[i] = old
            gflat[i] = (plus - minus) / (2 * h)
        grads.append(grad)
    return grads
'''


def _derivative_rules_replaced(repo, out, call: str, helper: str):
    """The reference with the body of every derivative rule (A1.3 to A1.7) replaced by
    ``call`` (given the rule's keyword attributes as ``_kw``) and ``helper`` appended."""
    files = _files(repo, solution_files(repo))
    for f, text in files.items():
        changed = False
        for task in DERIVATIVE_TASKS:
            while re.search(rf"^[ \t]*# BEGIN SOLUTION {re.escape(task)}\n", text, re.M):
                start, _, indent = _region(text, task)
                m = re.search(rf"^[ \t]*# BEGIN SOLUTION {re.escape(task)}\n", text, re.M)
                body = (f"{indent}_kw = {{k: v for k, v in dict(locals()).items() "
                        f"if k not in _FD_ARGS}}\n"
                        f"{indent}return {call}\n")  # fmt: skip
                close = text.index("\n", text.index("# END SOLUTION", start)) + 1
                text = text[: m.start()] + body + text[close:]
                changed = True
        if changed:
            files[f] = text + helper
    return _write(out, files)


def finite_difference(repo, edition, out):
    """The reference, except that every derivative rule (A1.3 to A1.7) is one generic
    finite-difference ``vjp``: no calculus at all. It must earn nothing on those tasks."""
    return _derivative_rules_replaced(repo, out, "_fd_vjp(self, g, inputs, needs, _kw)", _FD_VJP)


_CS_VJP = '''

# --- no calculus: the complex step, with each op's forward computation kept aside at import
# (so that nothing the grader wraps later sees it called)
import numpy as _cs_np

_CS_ARGS = ("self", "F", "g", "inputs", "out", "shapes", "needs", "_FD_ARGS")
_FD_ARGS = _CS_ARGS
_CS_FORWARD = {_c: _c.forward for _c in list(globals().values())
               if isinstance(_c, type) and "forward" in vars(_c)}


def _cs_vjp(op, g, inputs, needs, attrs, h=1e-100):
    np = _cs_np
    forward = _CS_FORWARD.get(type(op), type(op).forward)
    xs = [np.array(x, dtype=np.complex128) for x in inputs]
    g = np.asarray(g, dtype=np.float64)
    grads = []
    for k, x in enumerate(xs):
        if not needs[k]:
            grads.append(None)
            continue
        grad = np.zeros(x.shape, dtype=np.float64)
        flat, gflat = x.reshape(-1), grad.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + 1j * h
            gflat[i] = float(np.sum(g * forward(op, np, *xs, **attrs)).imag) / h
            flat[i] = old
        grads.append(grad)
    return grads
'''


def complex_step(repo, edition, out):
    """#35 hole 3: every derivative rule is the complex step on the op's forward computation
    kept aside at import, exact to the last digits; counting calls of the forward inside
    the child missed it, and it scored all of A1.3-A1.7. It must earn nothing on those."""
    return _derivative_rules_replaced(repo, out, "_cs_vjp(self, g, inputs, needs, _kw)", _CS_VJP)


SUBMISSIONS = {
    "reference": reference,
    "edition": edition_untouched,
    "hostile": hostile,
    "endless_loop": endless_loop,
    "syntax_error": syntax_error,
    "whole_repository": whole_repository,
    "renamed_file": renamed_file,
    "finite_difference": finite_difference,
    "complex_step": complex_step,
}
