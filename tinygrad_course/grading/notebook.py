"""Notebook assignments: the student works in a notebook, checks each question in it, and
submits the notebook; the autograder grades it like any other file.

A notebook assignment is a jupytext lesson (``# %%`` cells) that lives as a module of the
course's package, e.g. ``acts/nb_a6.py``: its graded functions hold solution regions (inside
the function, one task per function, as everywhere), and a cell after each question calls
:func:`check`::

    # %%
    def softplus_grad(x, g):
        # BEGIN SOLUTION A6.1
        return g / (1 + np.exp(-x))
        # END SOLUTION

    # %%
    check("A6.1")

- In the student's notebook, ``check("A6.1")`` runs the visible tests of task A6.1 on the
  definitions the notebook holds now and prints each test's result, with the check's own
  message (its hint) for a failure.
- Imported as a module (the autograder, the instructor's ``tinygrad-edu grade``), ``check``
  does nothing: the module is graded by the suite, in the sandbox, with hidden tests.
- Students submit the notebook (``nb_a6.ipynb``): :func:`notebook_source` turns its code
  cells back into the module (IPython ``%``/``!`` lines commented out), which the grader
  maps onto ``acts/nb_a6.py``.

The student edition strips the lesson like any jupytext file (``make-student``).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
import types
from pathlib import Path

__all__ = ["check", "notebook_source", "configure", "NotebookError"]

_CONFIG: dict[str, str] = {}


def configure(module: str, suite: str) -> None:
    """Name the module the notebook stands for and the suite that checks it (call once, in
    the notebook's first cell). Relative suite paths are taken from the current folder or
    any folder above it."""
    _CONFIG.update(module=module, suite=suite)


MAX_DEPTH = 32  # nesting a notebook's cells need: 4 levels; metadata a little more
MAX_CHARS = 64 << 20
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


class NotebookError(ValueError):
    """A notebook that cannot be read (too large, or not JSON); the message says why."""


def _prune(text: str, depth: int = MAX_DEPTH) -> tuple[str, int]:
    """``text`` with every JSON array or object nested deeper than ``depth`` replaced by
    ``null``, and how many were replaced.

    ``json.loads`` recurses once per level: a notebook nested 100,000 deep raises
    RecursionError (or worse) before any cell is read. Cells sit 4 levels down, so what is
    cut is metadata or outputs, never code. Strings are masked first (a bracket inside one
    is text), keeping every offset."""
    masked = _STRING.sub(lambda m: '"' + " " * (len(m.group()) - 2) + '"', text)
    cuts, level, start = [], 0, 0
    for m in _BRACKET.finditer(masked):
        if m.group() in "[{":
            level += 1
            if level == depth + 1:
                start = m.start()
        else:
            if level == depth + 1:
                cuts.append((start, m.end()))
            level -= 1
    if not cuts:
        return text, 0
    parts, at = [], 0
    for a, b in cuts:
        parts += [text[at:a], "null"]
        at = b
    parts.append(text[at:])
    return "".join(parts), len(cuts)


def notebook_source(text: str, notes: list | None = None) -> str:
    """The Python module of a notebook: an ``.ipynb`` document's code cells, each after a
    ``# %%`` line, IPython's ``%`` and ``!`` lines commented out; a jupytext ``.py`` as it
    is.

    >>> nb = {"cells": [{"cell_type": "markdown", "source": ["# Title"]},
    ...                 {"cell_type": "code", "source": ["%matplotlib inline\\n", "x = 1"]}]}
    >>> print(notebook_source(json.dumps(nb)))
    # %%
    # %matplotlib inline
    x = 1
    <BLANKLINE>
    """
    if len(text) > MAX_CHARS:
        raise NotebookError(f"the notebook has {len(text)} characters; the limit is {MAX_CHARS}")
    if not text.lstrip().startswith("{"):
        return text  # a jupytext .py
    text, cut = _prune(text)
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise NotebookError(f"it is not a valid notebook (JSON error: {e}); open it in "
                            "Jupyter, save it and upload it again") from None  # fmt: skip
    except RecursionError:  # not reached after _prune; kept so no notebook crashes the grader
        raise NotebookError("it is nested too deeply to read") from None
    if cut and notes is not None:
        notes.append(f"Note: {cut} part(s) of the notebook nested more than {MAX_DEPTH} levels "
                     "deep (metadata or outputs, never code cells) were ignored.")  # fmt: skip
    if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
        return text
    parts = []
    for cell in doc["cells"]:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        lines = [("# " + ln if ln.lstrip().startswith(("%", "!")) else ln)
                 for ln in source.splitlines()]  # fmt: skip
        parts.append("# %%\n" + "\n".join(lines).rstrip() + "\n")
    return "\n".join(parts)


def _suite(path: str) -> Path:
    p = Path(path)
    if p.is_absolute():
        return p
    for folder in [Path.cwd(), *Path.cwd().parents]:
        if (folder / p).exists():
            return folder / p
    raise FileNotFoundError(f"check(): no {path} in this folder or any above it")


class _Select:
    """A pytest plugin: keep the tests of one task; record each one's outcome."""

    def __init__(self, task: str):
        self.task, self.results = task, []

    def pytest_collection_modifyitems(self, config, items):
        def visible(item):
            points = item.get_closest_marker("points")
            seen = points.kwargs.get("visibility", "visible") if points else "visible"
            return item.get_closest_marker("hidden") is None and seen == "visible"

        keep = [i for i in items if (m := i.get_closest_marker("task"))
                and m.args[:1] == (self.task,) and visible(i)]  # fmt: skip
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":
            crash = getattr(report.longrepr, "reprcrash", None)
            message = crash.message if crash is not None else str(report.longrepr or "")
            self.results.append((report.nodeid.split("::")[-1], report.outcome, message))


def check(task: str, module: str | None = None, suite: str | None = None):
    """Run the visible tests of ``task`` on the calling notebook's definitions; print each
    result (a failure with its message: the check's hint). Does nothing when the caller is
    an imported module rather than a notebook. Returns (passed, total), or None."""
    caller = sys._getframe(1).f_globals
    if caller.get("__name__") != "__main__":
        return None  # imported: graded by the suite, not here
    module = module or _CONFIG.get("module")
    suite = suite or _CONFIG.get("suite")
    if not module or not suite:
        raise ValueError("check(): call configure(module=..., suite=...) first, in the "
                         "notebook's first cell")  # fmt: skip
    import pytest  # noqa: PLC0415

    live = types.ModuleType(module)
    live.__dict__.update({k: v for k, v in caller.items() if not k.startswith("__")})
    saved = {name: sys.modules.get(name) for name in (module,)}
    parent, _, leaf = module.rpartition(".")
    parent_module = sys.modules.get(parent) if parent else None
    old_attr = getattr(parent_module, leaf, None) if parent_module else None
    sys.modules[module] = live
    if parent_module is not None:
        setattr(parent_module, leaf, live)
    select = _Select(task)
    try:
        with contextlib.redirect_stdout(io.StringIO()) as said:  # pytest's own report
            code = pytest.main(
                ["-q", "-p", "no:cacheprovider", "-p", "no:tinygrad_edu_grading", "-p",
                 "tinygrad_course.grading.pytest_plugin", "-W",
                 "ignore::pytest.PytestAssertRewriteWarning", str(_suite(suite))],
                plugins=[select],
            )  # fmt: skip
        if code not in (0, 1, 5):  # 5: nothing collected
            print(said.getvalue()[-3000:])
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old
        if parent_module is not None:
            setattr(parent_module, leaf, old_attr)
    passed = sum(1 for _, outcome, _ in select.results if outcome == "passed")
    if not select.results:
        print(f"{task}: no visible test checks this task")
        return (0, 0)
    for name, outcome, message in select.results:
        mark = "passed" if outcome == "passed" else "FAILED"
        print(f"{task} {name}: {mark}")
        if outcome != "passed":
            print("    hint: " + message.strip().replace("\n", "\n    "))
    print(f"{task}: {passed} of {len(select.results)} visible tests pass")
    return (passed, len(select.results))
