"""The house's numbers (issue #33): files and functions a reader can take in, an engine core
that reads like its lesson, and a short path from ``loss.backward()`` to the gradients."""

import ast
import inspect
import sys
from pathlib import Path

import numpy as np

import tinygrad_edu as tg

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("tinygrad_edu", "tinygrad_course")


def _python_files():
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def test_no_file_is_over_700_lines():
    long = {str(p.relative_to(ROOT)): n for p in _python_files()
            if (n := len(p.read_text().splitlines())) > 700}  # fmt: skip
    assert not long, f"split these files by concept: {long}"


def test_at_most_three_functions_are_over_80_lines():
    long = []
    for path in _python_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if node.end_lineno - node.lineno + 1 > 80:
                    long.append(f"{path.relative_to(ROOT)}:{node.name}")
    assert len(long) <= 3, long


def test_the_engine_core_is_at_most_250_lines_and_imports_nothing_around_it():
    core = ROOT / "tinygrad_edu" / "eager" / "engine.py"
    assert len(core.read_text().splitlines()) <= 250
    imported = set()
    for node in ast.walk(ast.parse(core.read_text())):
        if isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
            imported.update(a.name for a in node.names)
    around = {"engine_threads", "engine_hooks", "engine_errors", "engine_observer", "backward"}
    assert not {name.rsplit(".", 1)[-1] for name in imported} & around


def _backward_path(program) -> dict:
    """Every library function (file, first line, name) -> its length in lines, that one
    backward of ``program()`` runs, after a first backward (what every later one runs)."""
    program().backward()
    loss = program()
    seen = {}

    def tracer(frame, event, arg):
        code = frame.f_code
        if event == "call" and "/tinygrad_edu/" in code.co_filename:
            if not code.co_name.startswith("<"):  # a comprehension is counted in its function
                seen[(code.co_filename, code.co_firstlineno, code.co_name)] = code
        return None

    sys.settrace(tracer)
    try:
        loss.backward()
    finally:
        sys.settrace(None)
    return {key: len(inspect.getsourcelines(code)[0]) for key, code in seen.items()}


def _square_sum():
    x = tg.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    return (x * x).sum()


_MEASURE = """
import json, sys
sys.path.insert(0, sys.argv[1])
from tests.test_house import _backward_path, _square_sum
path = _backward_path(_square_sum)
print(json.dumps([[f, line, name, n] for (f, line, name), n in path.items()]))
"""


def test_the_backward_path_a_learner_reads_is_at_most_300_lines():
    """A plain CPU ``loss.backward()``: every function of the eager engine it runs, counted
    whole (docstrings and comments included), in a fresh process (where no device other than
    the CPU was ever used). The ops' derivative rules and the array library's helpers it calls
    are the op library's (lesson 1, docs/concepts/ops.md)."""
    import json
    import subprocess

    out = subprocess.run([sys.executable, "-c", _MEASURE, str(ROOT)], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout  # fmt: skip
    path = {(f, line, name): n for f, line, name, n in json.loads(out)}
    engine = {k: n for k, n in path.items() if "/tinygrad_edu/eager/" in k[0]}
    total = sum(engine.values())
    listing = "\n".join(f"{n:4d} {Path(f).name}:{line} {name}"
                        for (f, line, name), n in sorted(engine.items()))  # fmt: skip
    assert total <= 300, f"{total} lines:\n{listing}"
    assert any(name == "_evaluate" for _, _, name in engine), "the path runs the engine's core"
