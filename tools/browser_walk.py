# instructors only
"""Walk the student edition's lessons in a real browser, in every state a student passes through.

The lesson-state tests (``tests/test_lesson_states.py``) run the edition's lessons with
nbclient; this script runs them as a student does: JupyterLab on a fresh student edition,
each lesson opened in headless Chromium (a 900 px wide window), *Run All Cells* through
JupyterLab's own command, then what the page shows is read back: the cells that ran, the
tracebacks, the checks' PASS / FAIL / NOT SOLVED YET boxes, the notices, the widest picture.

The states: day one (no assignment written), then the assignments written in the course's
order (A1, A1-A2, ... A1-A6), each made by splicing the reference solutions of the tasks
written into the edition's stubs (``grading.splice``), as the state tests do. Day one and
the last state run every lesson; a state in between runs the lessons whose last run named
one of its new tasks (a notice "This cell needs assignment A2.1 ..." or a check's "this check
needs assignment ..."): a lesson that named none of them stops where it stopped before, and
running it again would cost minutes for nothing.

Run it from the instructor's repository (it needs the reference solutions, the ``lessons``
extra, Graphviz, JupyterLab, Chromium and ``pip install playwright``)::

    python tools/browser_walk.py --out browser-walk            # every state
    python tools/browser_walk.py --states "day one" --lessons 05 06
    python tools/browser_walk.py --answers --out browser-walk-answers

``--answers`` walks two states, day one and every assignment written, and, once a lesson has
run, answers its exercises in the page as a student does: each recorded wrong answer
(``Wrong(...)`` in the instructor's lesson module, its code made into the cell a student types:
:func:`wrong_answer_code`, :func:`typed_definition`, :func:`typed_cell`) and then the reference
answer are typed into the exercise's answer cell, that cell and the check run with Shift+Enter,
and the check's box is read (:func:`read_verdict`, :func:`judge`): a wrong answer must be
rejected with the hint recorded for its mistake, the reference must pass (or, on day one only,
name the assignment it waits for; with every assignment written nothing may wait).

It writes ``walk.json``, ``walk.txt`` (one line per state and lesson, then the problems) and
a screenshot of the end of each lesson (``STATE/NN_name.png``) to ``--out``, and exits 1
when it found a problem. It is a maintainer's tool, not part of ``make test``: the report's
reading (:func:`summarize`) is tested in ``tests/test_browser_walk.py``.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDTH = 900  # the window's width: a picture wider than this does not fit a laptop's half screen
CHROMIUM = "/usr/bin/chromium"
ANSWER_TIMEOUT = 90.0  # seconds for a typed answer and its check (a check's answer runs 20 s)

_COUNT = re.compile(r"\[(\d+)\]")
_NEEDS = re.compile(r"\bneeds? (?:assignment )?(A\d+\.\d+(?:(?:, | and )A\d+\.\d+)*)")
_TASK = re.compile(r"A\d+\.\d+")
_EXERCISE = re.compile(r"^Exercise (\d+\.\d+) —")


# -- reading what the page showed -----------------------------------------------------------
def execution_count(prompt: str) -> int | None:
    """The number in a cell's prompt (``[12]:``), None for ``[ ]:`` or ``[*]:``."""
    match = _COUNT.search(prompt or "")
    return int(match.group(1)) if match else None


def _first_line(source: str) -> str:
    lines = [line for line in source.splitlines() if line.strip()]
    return lines[0][:100] if lines else ""


def summarize(cells: list[dict], written=(), day_one=()) -> dict:
    """What one lesson's page showed after *Run All*, and the problems in it.

    Args:
        cells: one dict per cell, as the page reports it (:data:`_READ_PAGE`): ``type``
            (``code`` or ``markdown``), ``source``, ``prompt`` (``[3]:``), ``errors`` (the
            text of each stderr output), ``checks`` (``{"kind", "name", "text"}`` per check
            box: ``pass``, ``fail``, ``not-solved-yet`` or ``notice``), ``warnings`` (the
            output lines that show a ``...Warning:``), ``images``
            (``{"natural", "shown"}`` widths in px) and ``overflow`` (``{"scroll",
            "client"}`` per output wider than its area).
        written: the tasks written in this state (``"A2.1"`` ...).
        day_one: the exercises that answer before any assignment is written (``"5.2"`` ...).

    Returns:
        ``cells_run`` and ``cells_total`` (code cells with source), ``not_run``,
        ``tracebacks``, ``stderr`` (other error-stream output), ``warnings`` (a ``...Warning:``
        line in any output: no recorded lesson shows one), ``checks`` (count per kind),
        ``exercises`` (number -> status and message), ``named`` (the assignment tasks a
        notice or a check said it needs), ``widest_picture`` and ``problems`` (one line each,
        the cell's index and first line named).
    """
    written, day_one = set(written), set(day_one)
    out = {"cells_run": 0, "cells_total": 0, "not_run": [], "tracebacks": [], "stderr": [],
           "checks": {"pass": 0, "fail": 0, "not-solved-yet": 0, "notice": 0},
           "exercises": {}, "named": [], "notices": [], "warnings": [], "widest_picture": None,
           "problems": [], "notes": []}  # fmt: skip
    named = set()

    def problem(index, cell, what):
        out["problems"].append(f"cell {index} ({_first_line(cell.get('source', ''))!r}): {what}")

    for index, cell in enumerate(cells):
        if cell.get("type") != "code" or not cell.get("source", "").strip():
            continue  # JupyterLab runs no empty cell
        out["cells_total"] += 1
        if execution_count(cell.get("prompt", "")) is None:
            out["not_run"].append(index)
            running = "*" in (cell.get("prompt") or "")
            problem(index, cell, "still running" if running else "not run")
        else:
            out["cells_run"] += 1
        for text in cell.get("errors", []):
            if "Traceback" in text or re.search(r"^\w+(Error|Exception)\b", text, re.M):
                out["tracebacks"].append({"cell": index, "text": text[-2000:]})
                last = [line for line in text.strip().splitlines() if line.strip()]
                problem(index, cell, f"traceback: {last[-1][:200] if last else ''}")
            else:
                out["stderr"].append({"cell": index, "text": text[-500:]})
        for line in dict.fromkeys(cell.get("warnings", [])):  # none in any recorded lesson
            out["warnings"].append({"cell": index, "text": line[:300]})
            problem(index, cell, f"a warning: {line.strip()[:200]}")
        for box in cell.get("checks", []):
            kind, name, text = box.get("kind", ""), box.get("name", ""), box.get("text", "")
            if name == "Tally":
                continue  # the running count, not a check
            out["checks"][kind] = out["checks"].get(kind, 0) + 1
            found = {t for match in _NEEDS.findall(text) for t in _TASK.findall(match)}
            if kind == "notice":
                out["notices"].append({"cell": index, "text": text[:300]})
            named |= found
            for task in sorted(found & written):
                problem(index, cell, f"says it needs {task}, which is written in this state")
            exercise = _EXERCISE.match(name)
            if exercise and kind != "notice":  # a notice may name an exercise: not its check
                number = exercise.group(1)
                out["exercises"][number] = {"status": kind, "message": text[:300]}
                if kind == "pass":  # no state answers an exercise: a pass is on no answer
                    problem(index, cell, f"Exercise {number} passes with no answer written")
                elif kind == "not-solved-yet" and found and number in day_one:
                    problem(index, cell, f"Exercise {number} answers on day one, but its check "
                                         f"waits for {', '.join(sorted(found))}")  # fmt: skip
            if kind == "fail":
                problem(index, cell, f"FAIL: {text[:200]}")
        for image in cell.get("images", []):
            widest = out["widest_picture"]
            if widest is None or image.get("natural", 0) > widest["natural"]:
                out["widest_picture"] = {"cell": index, "natural": image.get("natural", 0),
                                         "shown": image.get("shown", 0)}  # fmt: skip
            if image.get("natural", 0) > WIDTH:
                problem(index, cell, f"a picture {image['natural']} px wide (the window is "
                                     f"{WIDTH} px)")  # fmt: skip
        for wide in cell.get("overflow", []):  # a note: the window, not the picture, is small
            out["notes"].append(f"cell {index} ({_first_line(cell.get('source', ''))!r}): an "
                                f"output scrolls sideways ({wide.get('scroll')} px shown in "
                                f"{wide.get('client')} px)")  # fmt: skip
    out["named"] = sorted(named)
    return out


def lessons_to_run(state_tasks, last_named: dict[str, list], lessons) -> list[str]:
    """The lessons a state in between must run: those whose last run named one of the tasks
    newly written in it (``state_tasks``). Others stop where they stopped before."""
    new = set(state_tasks)
    return [name for name in lessons if new & set(last_named.get(name, ()))]


def course_states(tasks) -> list[tuple[str, tuple[str, ...]]]:
    """Day one, then each assignment written in turn: ``[("day one", ()), ("A1", (A1's
    tasks)), ("A1-A2", ...), ...]``, assignments and tasks in natural order."""

    def key(task):
        return tuple(int(p) for p in re.findall(r"\d+", task))

    tasks = sorted(set(tasks), key=key)
    assignments = sorted({t.split(".")[0] for t in tasks}, key=key)
    states, written = [("day one", ())], ()
    for assignment in assignments:
        written += tuple(t for t in tasks if t.split(".")[0] == assignment)
        name = assignment if assignment == assignments[0] else f"{assignments[0]}-{assignment}"
        states.append((name, written))
    return states


def report_text(states: list[dict]) -> str:
    """The short text report: one line per state and lesson, then every problem."""
    lines = []
    for state in states:
        written = ", ".join(state["written"]) or "nothing"
        lines.append(f"== {state['name']} (written: {written})")
        for lesson in state["lessons"]:
            checks = " ".join(f"{k} {v}" for k, v in lesson["checks"].items() if v)
            widest = lesson["widest_picture"]
            run = f"{lesson['cells_run']:>3}/{lesson['cells_total']:<3}"
            lines.append(
                f"  {lesson['lesson']:<24} cells {run}"
                f" tracebacks {len(lesson['tracebacks'])}  checks: {checks or '-'}"
                f"  widest picture {widest['natural'] if widest else '-'} px"
                f"  {lesson['seconds']:.0f} s"
            )
    lines.append("")
    found = [(s["name"], lesson["lesson"], p) for s in states for lesson in s["lessons"]
             for p in lesson["problems"]]  # fmt: skip
    lines.append(f"{len(found)} problems" + (":" if found else ""))
    lines += [f"  [{state}] {lesson} {p}" for state, lesson, p in found]
    notes: dict[tuple[str, str], list[str]] = {}  # the same output in several states: once
    for state in states:
        for lesson in state["lessons"]:
            for note in lesson.get("notes", []):
                notes.setdefault((lesson["lesson"], note), []).append(state["name"])
    if notes:
        lines.append(f"{len(notes)} notes (outputs wider than the notebook's column):")
        lines += [f"  {lesson} {note} [{', '.join(where)}]"
                  for (lesson, note), where in notes.items()]  # fmt: skip
    return "\n".join(lines) + "\n"


# -- typing the exercises' answers (--answers) -----------------------------------------------
_EX_MODULE = re.compile(r"^from tinygrad_course\.lessons import (\w+) as ex\b", re.M)
_CHECK_CELL = re.compile(r"^ex\.(\w+)\.check\((\w+)\)", re.M)
_MARKER = re.compile(r"^\s*# (BEGIN|END) SOLUTION\b")
_TRIES = re.compile(r"\n\s*Try \d+, a closer look: ")


def _py_cells(py_text: str) -> list[tuple[str, str]]:
    """A jupytext percent-format source as ``(kind, text)`` cells (``code`` or ``markdown``),
    each without its ``# %%`` line and the blank lines around it, as the notebook holds it."""
    cells = []
    for part in re.split(r"(?m)^(?=# %%)", py_text)[1:]:
        head, _, body = part.partition("\n")
        cells.append(("markdown" if "[markdown]" in head else "code", body.strip("\n")))
    return cells


def lesson_exercises(py_text: str) -> tuple[str | None, list[dict]]:
    """The exercise module a lesson's ``.py`` imports as ``ex`` and its exercises in the
    notebook's order: ``attr`` (``ex.ATTR.check``), ``name`` (what the check is given, which
    the answer cell defines) and ``reference`` (the instructor's answer cell, markers removed;
    None when no cell above holds a solution)."""
    module = _EX_MODULE.search(py_text)
    found, answer = [], None
    for kind, text in _py_cells(py_text):
        if kind != "code":
            continue
        check = _CHECK_CELL.search(text)
        if check:
            found.append({"attr": check.group(1), "name": check.group(2), "reference": answer})
            answer = None
        elif "# BEGIN SOLUTION" in text:
            answer = "\n".join(line for line in text.splitlines() if not _MARKER.match(line))
    return (module.group(1) if module else None), found


def _binds(statement: ast.stmt) -> set[str]:
    """The names a module-level statement binds (a definition, an assignment, an import)."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {statement.name}
    if isinstance(statement, ast.Assign | ast.AnnAssign):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return {n.id for t in targets for n in ast.walk(t)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}  # fmt: skip
    if isinstance(statement, ast.Import | ast.ImportFrom):
        return {(a.asname or a.name).split(".")[0] for a in statement.names}
    return set()


def _free_names(node: ast.AST) -> set[str]:
    """The names ``node`` reads that it does not bind itself (its parameters and the names
    it assigns are its own): what it needs from the module around it."""
    loaded, bound = set(), set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            (loaded if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n is not node:
            bound.add(n.name)
    return loaded - bound


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".")[: -node.level]
    return ".".join(package + ([node.module] if node.module else []))


class _Helpers:
    """The module-level code a wrong answer needs, gathered from its module (and, for a
    private name it imports from a sibling module, from that one) in an order that runs:
    what a definition uses comes before it."""

    def __init__(self, read):
        self.read, self.parsed, self.out = read, {}, []
        self.visited, self.emitted = set(), set()  # (module, name); what self.out holds

    def _module(self, module: str):
        if module not in self.parsed:
            text = self.read(module)
            tree = ast.parse(text) if text is not None else None
            index = {}
            for statement in tree.body if tree else ():
                for name in _binds(statement):
                    index[name] = statement
            self.parsed[module] = (text, tree, index)
        return self.parsed[module]

    def need(self, module: str, names) -> None:
        for name in sorted(names):
            self._visit(module, name)

    def _visit(self, module: str, name: str) -> None:
        text, tree, index = self._module(module)
        statement = index.get(name)
        if statement is None or (module, name) in self.visited:
            return  # a builtin, or a name the answer binds itself
        self.visited.add((module, name))
        if isinstance(statement, ast.Import):
            alias = next(a for a in statement.names if (a.asname or a.name).split(".")[0] == name)
            self._emit(("import", alias.name, alias.asname), ast.unparse(ast.Import([alias])))
            return
        if isinstance(statement, ast.ImportFrom):
            alias = next(a for a in statement.names if (a.asname or a.name) == name)
            source = _absolute(module, statement)
            if source == "__future__":
                return
            if alias.name.startswith("_") and "Wrong" in self._module(source)[2]:
                # another lesson's private helper: the edition may not hold it, so its code
                self._visit(source, alias.name)
                if name != alias.name:
                    self._emit(("alias", name), f"{name} = {alias.name}")
                return
            self._emit(("from", source, alias.name, name),
                       ast.unparse(ast.ImportFrom(source, [alias], 0)))  # fmt: skip
            return
        first = min([statement.lineno] + [d.lineno for d in
                                          getattr(statement, "decorator_list", [])])  # fmt: skip
        if ("code", module, first) in self.emitted:
            return  # one statement binding several names
        self.need(module, _free_names(statement) - {name})
        lines = text.splitlines()
        code = [line for line in lines[first - 1 : statement.end_lineno] if not _MARKER.match(line)]
        self._emit(("code", module, first), "\n".join(code))
        for other in tree.body:  # what dresses it up: `_f.__name__ = "f"`
            if isinstance(other, ast.Assign) and all(
                    isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                    and t.value.id == name for t in other.targets):  # fmt: skip
                self._emit(("code", module, other.lineno), ast.get_source_segment(text, other))

    def _emit(self, key, code: str) -> None:
        if key not in self.emitted:
            self.emitted.add(key)
            self.out.append(code)

    def text(self) -> str:
        imports = [c for c in self.out if c.startswith(("import ", "from "))]
        rest = [c for c in self.out if c not in imports]
        return "\n".join(imports) + ("\n\n\n" if imports and rest else "") + "\n\n\n".join(rest)


def wrong_answer_code(module: str, read) -> list[dict]:
    """The code of each recorded wrong answer (``Wrong(what, answer, hint)``) of a lesson's
    exercise module, in source order: ``what``, ``answer`` (the answer expression's source),
    ``kind`` (``lambda``, ``function``: a function the module defines, or ``value``) and
    ``helpers`` (the imports and definitions it needs). ``read(module name)`` gives a
    module's source (None: not one of ours). See :func:`typed_definition`."""
    from tinygrad_course.grading.wrong_answers import wrong_answer_nodes  # noqa: PLC0415

    text = read(module)
    tree = ast.parse(text)
    found = []
    answers = {id(a) for a in wrong_answer_nodes(tree)}
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and any(id(a) in answers for a in n.args[1:2])]  # fmt: skip
    index = {name: s for s in tree.body for name in _binds(s)}
    for call in sorted(calls, key=lambda n: (n.lineno, n.col_offset)):
        answer = call.args[1]
        what = call.args[0].value if isinstance(call.args[0], ast.Constant) else None
        helpers = _Helpers(read)
        entry = {"what": what, "answer": ast.get_source_segment(text, answer)}
        if isinstance(answer, ast.Lambda):
            entry.update(kind="lambda", args=ast.unparse(answer.args),
                         body=ast.unparse(answer.body))  # fmt: skip
            helpers.need(module, _free_names(answer))
        elif (
            isinstance(answer, ast.Name)
            and isinstance(index.get(answer.id), ast.FunctionDef)
            and not index[answer.id].decorator_list
        ):
            statement = index[answer.id]
            entry.update(kind="function", function=answer.id,
                         source=ast.get_source_segment(text, statement))  # fmt: skip
            helpers.need(module, _free_names(statement) - {answer.id})
        else:
            entry.update(kind="value")
            helpers.need(module, _free_names(answer))
        entry["helpers"] = helpers.text()
        found.append(entry)
    return found


def typed_definition(name: str, wrong: dict) -> str:
    """The code a student types to define ``name`` as a recorded wrong answer
    (:func:`wrong_answer_code`): the helpers it needs, then a ``def name(...)`` for a lambda
    or a function of the module (renamed, its calls to itself too), else ``name = <answer>``."""
    if wrong["kind"] == "lambda":
        own = f"def {name}({wrong['args']}):\n    return {wrong['body']}"
    elif wrong["kind"] == "function":
        own = re.sub(rf"(?<![\w.]){re.escape(wrong['function'])}\b", name, wrong["source"])
    else:
        own = f"{name} = {wrong['answer']}"
    return (wrong["helpers"] + "\n\n\n" if wrong["helpers"] else "") + own


def typed_cell(stub: str, name: str, definition: str) -> str:
    """The answer cell as a student leaves it: the edition's cell (``stub``) with its
    definition of ``name`` (the last module-level statement binding it) replaced by
    ``definition``; the cell's other code stays. Appended when the cell binds no ``name``."""
    try:
        body = ast.parse(stub).body
    except SyntaxError:
        body = []
    binding = [s for s in body if name in _binds(s)]
    if not binding:
        return stub.rstrip("\n") + "\n\n\n" + definition
    statement = binding[-1]
    lines = stub.splitlines()
    first = min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", [])])
    before = "\n".join(lines[: first - 1]).rstrip("\n")
    after = "\n".join(lines[statement.end_lineno :]).strip("\n")
    return "\n\n\n".join(part for part in (before, definition, after) if part)


def read_verdict(text: str, name: str) -> dict | None:
    """A check box's status, message and hint from its text as the page shows it
    (``❌ FAIL  Exercise 1.1 — title: message`` then ``Hint: ...``), or None when ``text`` is
    not the check of exercise ``name``."""
    text = text.replace("\u00a0", " ").strip()
    match = re.match(r"(\S+)\s+(PASS|FAIL|NOT SOLVED YET|NOTICE)\s+", text)
    if not match or not text[match.end() :].startswith(name):
        return None
    rest = text[match.end() + len(name) :]
    rest = rest[2:] if rest.startswith(": ") else rest.lstrip(":")
    message, _, hint = rest.partition("\nHint: ")
    return {"status": match.group(2).lower().replace(" ", "-"), "message": message.strip(),
            "hint": hint.strip()}  # fmt: skip


def judge(verdict: dict | None, hint: str | None = None, waits: str | None = None,
          complete: bool = False) -> str | None:
    """What is wrong with a check's verdict (:func:`read_verdict`), or None when it is right.

    A wrong answer (``hint``: the hint recorded for its mistake) must FAIL with that hint
    (a second or third try in a row adds its closer look after it), or, where its code calls
    an unwritten assignment, be NOT SOLVED YET naming it. The right answer (``hint`` None)
    must PASS, or, for an exercise that waits for an assignment (``waits``: ``"A1.1"``), be
    NOT SOLVED YET naming that one. ``complete``: every assignment is written, so nothing
    may wait: each wrong answer FAILs with its own hint and the right answer PASSes."""
    if verdict is None:
        return "no check result shown"
    status, message = verdict["status"], verdict["message"]
    needs = re.search(r"needs assignment (A\d+\.\d+)", message)
    if hint is None:  # the right answer
        if waits and not complete:
            if status == "not-solved-yet" and needs and needs.group(1) == waits:
                return None
            return f"the right answer shows {status.upper()} ({message[:150]}), not 'needs " \
                f"assignment {waits}'"  # fmt: skip
        if status == "pass":
            return None
        return f"the right answer shows {status.upper()}: {message[:150]} / {verdict['hint'][:150]}"
    if status == "pass":
        return f"a wrong answer PASSES: {message[:150]}"
    if status == "not-solved-yet" and needs and not complete:
        return None
    if status != "fail":
        return f"a wrong answer shows {status.upper()}: {message[:150]}"
    shown = _TRIES.split(verdict["hint"], maxsplit=1)[0].strip()
    if shown != hint.strip():
        return f"rejected with another hint: {shown[:200]!r} (its own: {hint[:120]!r})"
    return None


def answer_plan(root: Path, lessons, waiting: dict) -> tuple[dict[str, list[dict]], list[str]]:
    """What ``--answers`` types in each lesson (``notebooks/NAME.py`` of the instructor's
    repository ``root``): its exercises in the notebook's order, each with ``number``,
    ``attr``, ``name`` (the answer cell defines it), ``name_shown`` (the check's title),
    ``waits`` (the assignment it waits for on day one, from ``waiting``), ``reference`` (the
    instructor's answer cell) and ``wrong`` (each recorded wrong answer's ``what``, ``hint``
    and the ``code`` a student types for it). Also the problems met making it (a wrong answer
    whose code is not found)."""
    import importlib  # noqa: PLC0415

    def read(module: str) -> str | None:
        path = root.joinpath(*module.split(".")).with_suffix(".py")
        return path.read_text(encoding="utf-8") if path.is_file() else None

    plans, problems, codes = {}, [], {}
    for name in lessons:
        py = root / "notebooks" / f"{name}.py"
        module_name, exercises = lesson_exercises(py.read_text(encoding="utf-8")) \
            if py.is_file() else (None, [])  # fmt: skip
        if not module_name or not exercises:
            continue
        module = importlib.import_module(f"tinygrad_course.lessons.{module_name}")
        if module.__name__ not in codes:
            code = wrong_answer_code(module.__name__, read)
            wrongs = [(ex.number, w) for ex in module.EXERCISES for w in ex.wrong]
            if [c["what"] for c in code] != [w.what for _, w in wrongs]:
                problems.append(f"{module.__name__}: the Wrong(...) calls in its source are not "
                                "its exercises' wrong answers, in order")  # fmt: skip
            codes[module.__name__] = {}
            for (number, wrong), c in zip(wrongs, code, strict=False):
                codes[module.__name__].setdefault(number, []).append((wrong, c))
        plan = []
        for found in exercises:
            ex = getattr(module, found["attr"], None)
            if ex is None:
                problems.append(f"{name}: ex.{found['attr']} is no exercise of {module_name}")
                continue
            wrong = [{"what": w.what, "hint": w.hint, "code": typed_definition(found["name"], c)}
                     for w, c in codes[module.__name__].get(ex.number, [])]  # fmt: skip
            plan.append({**found, "number": ex.number, "name_shown": ex.name,
                         "waits": waiting.get(ex.number), "wrong": wrong})  # fmt: skip
        plans[name] = plan
    return plans, problems


def answers_text(lessons: list[dict]) -> str:
    """The ``--answers`` part of the report: the counts, then a line per problem."""
    rows = [dict(r, lesson=lesson["lesson"]) for lesson in lessons
            for r in lesson.get("answers") or ()]  # fmt: skip
    wrong = [r for r in rows if not r.get("right")]
    right = [r for r in rows if r.get("right")]
    ok = [r for r in wrong if not r["problem"]]
    lines = [
        f"answers typed: {len(wrong)} wrong, {len(right)} right",
        f"  wrong answers rejected with their own hint: "
        f"{sum(r.get('status') == 'fail' for r in ok)}",
        f"  wrong answers waiting for an assignment (NOT SOLVED YET naming it): "
        f"{sum(r.get('status') == 'not-solved-yet' for r in ok)}",
        f"  right answers passing: "
        f"{sum(r.get('status') == 'pass' and not r['problem'] for r in right)}",
        f"  right answers waiting for their assignment: "
        f"{sum(r.get('status') == 'not-solved-yet' and not r['problem'] for r in right)}",
    ]
    bad = [r for r in rows if r["problem"]]
    lines.append(f"  problems: {len(bad)}" + (":" if bad else ""))
    lines += [f"    {r['lesson']} Exercise {r['exercise']} ({r['answer']}): {r['problem']}"
              for r in bad]  # fmt: skip
    return "\n".join(lines) + "\n"


# -- the edition and its states -------------------------------------------------------------
def make_edition(folder: Path) -> tuple[Path, dict]:
    """The student edition as the instructor guide makes it (``tinygrad-edu make-student``,
    which records the lessons' outputs), and its stubbed library files as made."""
    out = folder / "course-student"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "tinygrad_course", "make-student", str(ROOT),
                           "--out", str(out)], env=env, capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"make-student failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    stubbed = {rel: (out / rel).read_text(encoding="utf-8") for rel in _library_files()}
    return out, stubbed


def _library_files() -> list[str]:
    from tinygrad_course.grading.tables import regions

    return sorted({rel for places in regions(ROOT).values() for rel, _ in places})


def write_state(out: Path, stubbed: dict, written) -> None:
    """The edition with the reference solution of each task in ``written``, stubs elsewhere
    (as ``tests/test_lesson_states.py`` makes its states)."""
    from tinygrad_course.grading.splice import splice, task_functions

    for rel, text in stubbed.items():
        reference = (ROOT / rel).read_text(encoding="utf-8")
        unwritten = set(task_functions(reference)) - set(written)
        (out / rel).write_text(splice(reference, text, keep=unwritten).text, encoding="utf-8")


# -- JupyterLab -----------------------------------------------------------------------------
_SETTINGS = {
    # every cell attached to the page, so that what is read is laid out (the default,
    # contentVisibility, skips the layout of cells out of view)
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    # the lessons' files stay as made: nothing saved between states
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },  # fmt: skip
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A JupyterLab server on the edition, its kernels importing the edition's library."""

    def __init__(self, edition: Path, scratch: Path):
        self.token, self.port = secrets.token_hex(16), _free_port()
        settings = scratch / "settings"
        for rel, value in _SETTINGS.items():
            (settings / rel).parent.mkdir(parents=True, exist_ok=True)
            (settings / rel).write_text(json.dumps(value), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
        env.update(PYTHONPATH=str(edition), PYTHONDONTWRITEBYTECODE="1",
                   JUPYTER_CONFIG_DIR=str(scratch / "config"),
                   JUPYTER_RUNTIME_DIR=str(scratch / "runtime"))  # fmt: skip
        env.pop("TINYGRAD_EDU_STRICT", None)  # as a student runs it: checks only show
        jupyter = Path(sys.executable).with_name("jupyter")
        self.log = open(scratch / "lab.log", "w")  # noqa: SIM115
        self.process = subprocess.Popen(
            [str(jupyter), "lab", "--no-browser", f"--port={self.port}", "--ip=127.0.0.1",
             f"--ServerApp.token={self.token}", f"--ServerApp.root_dir={edition}",
             "--LabApp.expose_app_in_browser=True", f"--LabApp.user_settings_dir={settings}",
             *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []),
             f"--LabApp.workspaces_dir={scratch / 'workspaces'}"],
            cwd=edition, env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.base = f"http://127.0.0.1:{self.port}"
        try:
            self._wait(scratch)
        except BaseException:
            self.close()
            raise

    def _wait(self, scratch: Path) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                urllib.request.urlopen(f"{self.base}/api/status?token={self.token}", timeout=2)
                return
            except OSError:
                time.sleep(0.5)
        self.log.flush()
        log = (scratch / "lab.log").read_text(encoding="utf-8", errors="replace")
        how = "stopped" if self.process.poll() is not None else "did not answer in 120 s"
        raise SystemExit(f"jupyter lab {how}:\n{log[-3000:]}")

    def close(self) -> None:
        if self.log.closed:
            return
        self.process.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


_OPEN = """async (path) => {
  const app = window.jupyterapp;
  const panel = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  await panel.context.ready;
  await panel.sessionContext.ready;
  app.shell.activateById(panel.id);
  return panel.id;
}"""

# not awaited: the walk polls, so that a cell that never ends meets the lesson's timeout
_RUN_ALL = "() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }"

_STATUS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const prompts = [...panel.node.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
  return {kernel: kernel ? kernel.status : 'none',
          running: prompts.filter(p => p.textContent.includes('*')).length};
}"""

# per cell (every cell, or those whose indices are given): what a student sees (see summarize)
_READ_PAGE = r"""(only) => {
  const panel = window.jupyterapp.shell.currentWidget;
  const cells = panel.content.widgets.filter((_, i) => !only || only.includes(i));
  return cells.map(cell => {
    const node = cell.node;
    const code = cell.model.type === 'code';
    const outputs = [...node.querySelectorAll('.jp-OutputArea-output')];
    return {
      type: cell.model.type,
      source: cell.model.sharedModel.getSource(),
      prompt: code ? (node.querySelector('.jp-InputArea-prompt') || {}).textContent || '' : '',
      errors: outputs.filter(o => o.dataset.mimeType === 'application/vnd.jupyter.stderr')
                     .map(o => o.innerText),
      checks: [...node.querySelectorAll('.tge-check')].map(box => {
        const kind = [...box.classList].find(c => c.startsWith('tge-') && c !== 'tge-check');
        const heads = box.querySelectorAll(':scope > b');
        return {kind: kind ? kind.slice(4) : '', name: heads.length > 1 ? heads[1].innerText : '',
                text: box.innerText};
      }),
      images: [...node.querySelectorAll('.jp-OutputArea-output img, .jp-OutputArea-output svg')]
        .filter(i => !i.closest('.tge-check'))
        .map(i => ({natural: i.naturalWidth || Math.round(i.getBoundingClientRect().width),
                    shown: Math.round(i.getBoundingClientRect().width)})),
      warnings: outputs.filter(o => !o.querySelector('.tge-check'))
        .flatMap(o => o.innerText.split('\n').filter(l => /\b[A-Z]\w*Warning: /.test(l))),
      overflow: outputs.filter(o => o.scrollWidth > o.clientWidth + 2)
                       .map(o => ({scroll: o.scrollWidth, client: o.clientWidth})),
    };
  });
}"""

_CLOSE = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.sessionContext.shutdown();
  panel.context.model.dirty = false;
  panel.dispose();
}"""


def walk_lesson(page, name: str, shot: Path, timeout: float, then=None):
    """Open ``notebooks/NAME.ipynb``, run all its cells, wait for the kernel, read the page
    and save a screenshot of its end: (cells as read, seconds, finished in time, what
    ``then(page, cells)`` gave: it runs, when Run All finished, before the lesson closes)."""
    page.evaluate(_OPEN, f"notebooks/{name}.ipynb")
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.sessionContext"
                           ".session.kernel.status === 'idle'", timeout=120_000)  # fmt: skip
    start = time.monotonic()
    page.evaluate(_RUN_ALL)
    idle, finished = 0, False
    while time.monotonic() - start < timeout:
        time.sleep(1.0)
        status = page.evaluate(_STATUS)
        idle = idle + 1 if status["kernel"] == "idle" and status["running"] == 0 else 0
        if idle >= 3:  # idle for three polls in a row: Run All has reached the end
            finished = True
            break
    seconds = time.monotonic() - start
    page.wait_for_timeout(500)  # the last outputs' pictures load
    cells = page.evaluate(_READ_PAGE)
    after = then(page, cells) if then is not None and finished else None
    page.evaluate("() => { const w = window.jupyterapp.shell.currentWidget.content.widgets; "
                  "w[w.length - 1].node.scrollIntoView({block: 'end'}); }")  # fmt: skip
    page.wait_for_timeout(300)
    shot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shot))
    page.evaluate(_CLOSE)
    return cells, seconds, finished, after


_MARK = """([answer, check]) => {
  const cells = window.jupyterapp.shell.currentWidget.content.widgets;
  cells.forEach(c => c.node.removeAttribute('data-walk'));
  cells[answer].node.setAttribute('data-walk', 'answer');
  cells[check].node.setAttribute('data-walk', 'check');
}"""

_SOURCE = """(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].model.sharedModel
  .getSource()"""

_SET_SOURCE = """([i, text]) => window.jupyterapp.shell.currentWidget.content.widgets[i].model
  .sharedModel.setSource(text)"""

_PROMPT = """(i) => (window.jupyterapp.shell.currentWidget.content.widgets[i].node
  .querySelector('.jp-InputArea-prompt') || {}).textContent || ''"""


def _type_and_check(page, answer: int, check: int, text: str, timeout: float) -> dict:
    """Replace the answer cell's text with ``text`` as a student does (click into its editor,
    select all, type), run it and then the check cell with Shift+Enter, wait for the check's
    new result and read both cells. ``typed``: whether the editor took the text as typed
    (else it is set through the notebook's model, and the walk says so)."""
    page.evaluate(_MARK, [answer, check])
    page.locator("[data-walk=answer] .cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(text)
    typed = page.evaluate(_SOURCE, answer) == text
    if not typed:
        page.evaluate(_SET_SOURCE, [answer, text])
    before = execution_count(page.evaluate(_PROMPT, check))
    page.keyboard.press("Shift+Enter")  # runs the answer cell
    page.locator("[data-walk=check] .cm-content").click()
    page.keyboard.press("Shift+Enter")  # and the check
    start, finished = time.monotonic(), False
    while time.monotonic() - start < timeout:
        page.wait_for_timeout(250)
        count = execution_count(page.evaluate(_PROMPT, check))
        status = page.evaluate(_STATUS)
        if count not in (None, before) and status["kernel"] == "idle" and not status["running"]:
            finished = True
            break
    if not finished:  # what a student does with a cell that does not end
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:interrupt-kernel')")
        page.wait_for_timeout(3000)
    page.wait_for_timeout(200)  # the last output's box is drawn
    answer_cell, check_cell = page.evaluate(_READ_PAGE, [answer, check])
    return {"typed": typed, "finished": finished, "seconds": time.monotonic() - start,
            "answer": answer_cell, "check": check_cell}  # fmt: skip


def answer_exercises(page, cells: list[dict], plan: list[dict], timeout: float,
                     complete: bool = False) -> list[dict]:
    """In a lesson that has run (``cells`` as read), for each exercise of ``plan``
    (:func:`answer_plan`): type each recorded wrong answer into its answer cell and run it
    with its check, then the reference answer; one result per answer, with its ``problem``
    (None when the check answered as it must, :func:`judge`; ``complete``: every assignment
    is written)."""
    results = []
    for exercise in plan:
        check = next((i for i, c in enumerate(cells) if c.get("type") == "code" and re.search(
            rf"^ex\.{exercise['attr']}\.check\(", c.get("source", ""), re.M)), None)  # fmt: skip
        answer = None if check is None else next(
            (i for i in range(check - 1, -1, -1) if cells[i].get("type") == "code"
             and exercise["name"] in _cell_binds(cells[i].get("source", ""))), None)  # fmt: skip
        base = {"exercise": exercise["number"]}
        if answer is None:
            results.append({**base, "answer": "-", "problem": "no answer cell or check cell found "
                            f"for ex.{exercise['attr']} in the page"})  # fmt: skip
            continue
        stub = cells[answer]["source"]
        tries = [(w["what"], typed_cell(stub, exercise["name"], w["code"]), w["hint"])
                 for w in exercise["wrong"]]  # fmt: skip
        tries.append(("the reference answer", exercise["reference"], None))
        for what, text, hint in tries:
            entry = {**base, "answer": what, "right": hint is None}
            if text is None:
                results.append({**entry, "problem": "no code to type"})
                continue
            got = _type_and_check(page, answer, check, text, timeout)
            shown = exercise["name_shown"]
            box = next((b for b in got["check"]["checks"] if b.get("name") == shown), None)
            verdict = read_verdict(box["text"], shown) if box else None
            problem = judge(verdict, hint, exercise["waits"], complete)
            raised = [
                t
                for t in got["answer"]["errors"] + got["check"]["errors"]
                if "Traceback" in t or re.search(r"^\w+(Error|Exception)\b", t, re.M)
            ]
            if raised:
                last = [line for line in raised[0].strip().splitlines() if line.strip()]
                problem = f"a traceback: {last[-1][:200] if last else ''}"
            elif not got["finished"]:
                problem = f"the check did not finish in {timeout:.0f} s"
            elif not got["typed"]:
                problem = (problem + "; " if problem else "") + "the editor did not take the " \
                    "typed text (set through the notebook's model)"  # fmt: skip
            results.append({**entry, **(verdict or {}), "problem": problem,
                            "seconds": round(got["seconds"], 1)})  # fmt: skip
    return results


def _cell_binds(source: str) -> set[str]:
    try:
        return set().union(*(_binds(s) for s in ast.parse(source).body))
    except SyntaxError:
        return set()


def walk_state(edition: Path, scratch: Path, lessons, out: Path, written, day_one,
               timeout: float, state: str, chromium: str = CHROMIUM,
               plans: dict | None = None, complete: bool = False) -> list[dict]:  # fmt: skip
    """Walk ``lessons`` in one JupyterLab on the edition as it stands; with ``plans``
    (:func:`answer_plan`), type each lesson's answers once it has run (in its kernel);
    ``complete``: ``written`` is every assignment (see :func:`judge`)."""
    from playwright.sync_api import sync_playwright

    lab = Lab(edition, scratch)
    results = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": WIDTH, "height": 1000})
            page.goto(f"{lab.base}/lab?reset&token={lab.token}")
            page.wait_for_function("() => window.jupyterapp && window.jupyterapp.started"
                                   " !== undefined", timeout=120_000)  # fmt: skip
            page.evaluate("async () => { await window.jupyterapp.started; "
                          "await window.jupyterapp.restored; "
                          "window.jupyterapp.shell.collapseLeft(); }")  # fmt: skip
            for name in lessons:
                shot = out / _slug(state) / f"{name}.png"
                then = None
                if plans and plans.get(name):

                    def then(page, cells, plan=plans[name]):
                        return answer_exercises(page, cells, plan, ANSWER_TIMEOUT, complete)

                cells, seconds, finished, answers = walk_lesson(page, name, shot, timeout, then)
                summary = summarize(cells, written, day_one)
                if not finished:
                    summary["problems"].insert(0, f"Run All did not finish in {timeout:.0f} s")
                summary.update(lesson=name, seconds=round(seconds, 1),
                               screenshot=str(shot.relative_to(out)))  # fmt: skip
                if then is not None:
                    summary["answers"] = answers if answers is not None else [
                        {"exercise": "-", "answer": "-", "problem": "no answer typed: Run All "
                         "did not finish"}]  # fmt: skip
                results.append(summary)
                typed = summary.get("answers") or []
                print(
                    f"  {name}: {summary['cells_run']}/{summary['cells_total']} cells, "
                    f"{len(summary['problems'])} problems, {seconds:.0f} s"
                    + (
                        f"; {len(typed)} answers typed, "
                        f"{sum(bool(a['problem']) for a in typed)} problems"
                        if typed
                        else ""
                    ),
                    flush=True,
                )
            browser.close()
    finally:
        lab.close()
    return results


def _slug(state: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "_", state).strip("_")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="browser-walk", help="the report's folder")
    parser.add_argument("--states", nargs="*", help="only these states (default: all)")
    parser.add_argument("--lessons", nargs="*", help="only the lessons whose names start so")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per lesson")
    parser.add_argument("--chromium", default=CHROMIUM, help="the browser's executable")
    parser.add_argument("--answers", action="store_true",
                        help="day one and every assignment written: type every recorded wrong "
                             "answer and the reference answer into each exercise and read its "
                             "check")  # fmt: skip
    args = parser.parse_args(argv)
    # a stopped walk (kill, Ctrl-C) still stops its JupyterLab and deletes its edition
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.path.insert(0, str(ROOT))
    from tests.test_lesson_states import DAY_ONE, WAITING
    from tinygrad_course.grading.tables import regions

    if not _library_files():
        raise SystemExit("no solution regions here: run this in the instructor's repository")
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    lessons = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
    if args.lessons:
        lessons = [n for n in lessons if n.startswith(tuple(args.lessons))]
    states = course_states(regions(ROOT))
    every_task = states[-1][1]
    if args.answers:  # day one (the edition as given), then every assignment written
        states = [states[0], states[-1]]
    if args.states:
        states = [s for s in states if s[0] in args.states]
    plans, plan_problems = None, []
    if args.answers:
        plans, plan_problems = answer_plan(ROOT, lessons, WAITING)
        lessons = [n for n in lessons if plans.get(n)]
    report, last_named = [], {}
    with tempfile.TemporaryDirectory(prefix="browser-walk-") as tmp:
        edition, stubbed = make_edition(Path(tmp))
        # the lessons as made, with their times: JupyterLab's jupytext refuses a notebook
        # newer than its paired .py when the two differ
        notebooks = {p: (p.read_bytes(), p.stat()) for p in (edition / "notebooks").iterdir()
                     if p.suffix in (".ipynb", ".py")}  # fmt: skip
        for index, (state, written) in enumerate(states):
            first_or_last = state == "day one" or index == len(states) - 1
            new = tuple(t for t in written if t not in (states[index - 1][1] if index else ()))
            run = lessons if first_or_last or not last_named else \
                lessons_to_run(new, last_named, lessons)  # fmt: skip
            print(f"{state}: {len(run)} lessons", flush=True)
            write_state(edition, stubbed, written)
            for path, (data, stat) in notebooks.items():
                path.write_bytes(data)
                os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
            scratch = Path(tmp) / f"lab-{index}"
            results = walk_state(edition, scratch, run, out, written, DAY_ONE, args.timeout,
                                 state, args.chromium, plans,
                                 complete=written == every_task) if run else []  # fmt: skip
            for lesson in results:
                last_named[lesson["lesson"]] = lesson["named"]
            report.append({"name": state, "written": list(written), "lessons": results,
                           "skipped": [n for n in lessons if n not in run]})  # fmt: skip
            (out / "walk.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    text = report_text(report)
    if args.answers:
        walked = [lesson for s in report for lesson in s["lessons"]]
        text += "\n" + answers_text(walked) + "".join(f"  {p}\n" for p in plan_problems)
    (out / "walk.txt").write_text(text, encoding="utf-8")
    print(text)
    typed_wrong = any(a["problem"] for s in report for lesson in s["lessons"]
                      for a in lesson.get("answers") or ())  # fmt: skip
    found = any(lesson["problems"] for s in report for lesson in s["lessons"])
    return 1 if found or typed_wrong or plan_problems else 0


if __name__ == "__main__":
    sys.exit(main())
