"""Recorded outputs: the student edition's lessons run to their end before any assignment is
written.

In the student edition the library's graded functions are stubs (``raise
NotImplementedError("A2.1: write your solution here")``), and most lessons call them: the
backward engine (A2.1), ``gradients()`` (A1.8) ... So that a student can read every lesson
from the first day, ``tinygrad-edu make-student`` runs each lesson once against the full
library (its own exercises left unsolved, as the student gets them) and stores what every
cell showed in ``notebooks/.recorded/NN_name.json`` (:func:`record_lessons`).

In the student's kernel (the lessons import ``tinygrad_course.lessons``, which calls
:func:`activate`), a cell that stops on an unwritten assignment does not show a traceback and
does not stop *Run All*: a notice says which assignment unlocks it (task, function and file),
then the cell's recorded output follows. A later cell that fails only because an earlier one
could not run (a name it would have defined) is shown the same way. Once the student writes
the assignment and runs the cell again, it runs live. Any other error is shown as usual.

Nothing here holds a solution: recordings are outputs (numbers, pictures), keyed by a digest
of the cell's source.

>>> stub_task(NotImplementedError("A2.1: write your solution here"))
'A2.1'
>>> stub_task(ValueError("A2.1: write your solution here")) is None
True
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import symtable
import sys
import traceback
from datetime import datetime
from pathlib import Path

from . import checks
from .checks import notice
from .notebooks import lesson_notebooks

__all__ = [
    "RECORDED_DIR",
    "stub_task",
    "unlock_message",
    "cell_key",
    "load_recordings",
    "record_lessons",
    "RecordingError",
    "record_expected",
    "recorded_expected",
    "recorded_mistakes",
    "recorded_notebook",
    "activate",
    "blocked",
    "Unlocker",
]

RECORDED_DIR = ".recorded"  # under the edition's notebooks/ folder
EXPECTED_FILE = "expected.json"  # in RECORDED_DIR: the exercises' expected values
MISTAKES_FILE = "mistakes.json"  # in RECORDED_DIR: what each recorded wrong answer gives
_STUB = re.compile(r"^(\S+): write your solution here$")
# what a lesson exercise's stand-in raises where the edition holds no reference answer to run
# in its place (:meth:`~tinygrad_course.lessons.exercise.Exercise.use`): ``E1.1``
_EXERCISE_TASK = re.compile(r"^E(\d+\.\d+)$")


def stub_task(error: BaseException | None) -> str | None:
    """The task (``"A2.1"``) whose stub raised ``error`` (or an error it led to), else None."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, NotImplementedError):
            match = _STUB.match(str(error))
            if match:
                return match.group(1)
        error = error.__cause__ or error.__context__
    return None


def _is_assignment(task: str) -> bool:
    """A graded assignment's task (``A2.1``), not a lesson exercise's unnamed region nor the
    stand-in for an exercise's answer (``E1.1``)."""
    return task != "solution" and not _EXERCISE_TASK.match(task)


def _needed(task: str, error: BaseException) -> str:
    """How a notice names what unlocks a cell: an assignment (its function and file) or the
    learner's answer to a lesson exercise."""
    exercise = _EXERCISE_TASK.match(task)
    if exercise:
        return f"your answer to Exercise {exercise.group(1)} (solve it and run its check)"
    return f"assignment {task} ({_where(error)})"


def _named(tasks) -> str:
    """How a notice names the tasks a cell waits for: ``A2.1`` as it is, an exercise's
    stand-in ``E14.1`` as ``Exercise 14.1`` (the stand-in's code means nothing to a learner).

    >>> _named({"E14.1", "A2.1"})
    'A2.1, Exercise 14.1'
    """
    return ", ".join(f"Exercise {m.group(1)}" if (m := _EXERCISE_TASK.match(task)) else task
                     for task in sorted(tasks))  # fmt: skip


def _solved(task: str) -> bool:
    """Whether ``task`` is an exercise's stand-in whose exercise has passed its check since."""
    exercise = _EXERCISE_TASK.match(task)
    if not exercise:
        return False
    head = f"Exercise {exercise.group(1)} —"
    return any(name.startswith(head) and result.passed
               for name, result in checks._results.items())  # fmt: skip


def unlock_message(error: BaseException) -> str | None:
    """``assignment A2.1 (`_count_dependencies` in tinygrad_edu/eager/engine.py)`` when
    ``error`` comes from an unwritten assignment's stub, else None."""
    task = stub_task(error)
    if task is None or task == "solution":
        return None
    return _needed(task, error)


def _stub_error(error: BaseException) -> BaseException:
    """The stub's own error in the chain that ``error`` ends (``__cause__`` and
    ``__context__``): the one whose message is exactly the stub's. The engine re-raises an
    error from a node's code as a new one naming the node (its ``__cause__`` is the
    original), so the outer error's last frame is the engine loop, not the stub."""
    seen, chain = set(), error
    while chain is not None and id(chain) not in seen:
        seen.add(id(chain))
        if isinstance(chain, NotImplementedError) and _STUB.match(str(chain)):
            return chain
        chain = chain.__cause__ or chain.__context__
    return error


def _where(error: BaseException) -> str:
    """```gradients`` in tinygrad_edu/symbolic/gradients.py``: the function whose stub raised
    (the innermost frame of the stub's own error: the stub's ``raise`` is the function's
    whole body)."""
    frames = traceback.extract_tb(_stub_error(error).__traceback__)
    if not frames:
        return "a library function"
    parts = Path(frames[-1].filename).parts
    top = len(parts) - 1 - parts[::-1].index("tinygrad_edu") if "tinygrad_edu" in parts else -1
    return f"`{frames[-1].name}` in {'/'.join(parts[top:])}"


def _stub_frame(error: BaseException) -> tuple[str, str]:
    """``(file, function)`` of the stub that raised ``error`` (or an error it led to): what
    :meth:`Unlocker.pre_run_cell` reads to learn whether the stub has been written since."""
    frames = traceback.extract_tb(_stub_error(error).__traceback__)
    return (frames[-1].filename, frames[-1].name) if frames else ("", "")


def _still_stub(path: str, name: str) -> bool:
    """Whether the function ``name`` in the file ``path`` is still an unwritten stub."""
    import ast  # noqa: PLC0415

    try:
        text = Path(path).read_text(encoding="utf-8")
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            if "write your solution here" in (ast.get_source_segment(text, node) or ""):
                return True
    return False


def cell_key(source: str | list) -> str:
    """The digest a cell's recording is stored under (its source, trailing space ignored)."""
    text = "".join(source) if isinstance(source, list) else source
    return hashlib.sha256(text.rstrip().encode("utf-8")).hexdigest()[:20]


def _committed_seconds(notebook: Path) -> float:
    """How long the lesson took when its notebook was last executed (the cells' timing
    metadata), or infinity when it does not say: what :func:`record_lessons` starts first."""
    try:
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        times = [t for c in cells for k, t in c.get("metadata", {}).get("execution", {}).items()
                 if k in ("iopub.execute_input", "shell.execute_reply")]  # fmt: skip
        first, last = (datetime.fromisoformat(t.replace("Z", "+00:00")) for t in (min(times),
                                                                                  max(times)))
        return (last - first).total_seconds()
    except (OSError, ValueError, KeyError, TypeError):
        return float("inf")


class RecordingError(RuntimeError):
    """A lesson that failed while its outputs were being recorded (the lesson named, the
    cell's error in the message)."""


def _failed(notebook: Path, error: Exception) -> RecordingError:
    return RecordingError(
        f"{notebook.name} stopped while its outputs were being recorded (it must run to its "
        f"end against the full library):\n{error}"
    )


def _executed_lessons(notebooks: list[Path], cache: Path, timeout: int, jobs: int) -> list:
    """The executed student edition of each lesson (paths, in the order given), run ``jobs``
    at a time, the longest first, each in a process of its own (whose kernel a Ctrl-C stops
    as it does a lone run's).

    Raises:
        RecordingError: a lesson that failed (after the lessons already running finish)."""
    from .notebooks import executed_student_edition  # noqa: PLC0415

    if jobs <= 1 or len(notebooks) <= 1:
        done = []
        for nb in notebooks:
            try:
                done.append(executed_student_edition(nb, cache, timeout))
            except Exception as e:
                raise _failed(nb, e) from e
        return done
    import concurrent.futures  # noqa: PLC0415
    import multiprocessing  # noqa: PLC0415

    order = sorted(notebooks, key=_committed_seconds, reverse=True)
    context = multiprocessing.get_context("spawn")  # no copy of this process's threads
    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context) as pool:
        futures = {nb: pool.submit(executed_student_edition, nb, cache, timeout) for nb in order}
        try:
            for future in concurrent.futures.as_completed(futures.values()):
                if future.exception() is not None:
                    nb = next(n for n, f in futures.items() if f is future)
                    raise _failed(nb, future.exception()) from future.exception()
            return [futures[nb].result() for nb in notebooks]
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)  # the lessons not started never start
            raise


def record_lessons(notebooks_src, notebooks_dst, timeout: int = 900,
                   jobs: int | None = None) -> list[Path]:  # fmt: skip
    """Run each lesson's student edition against this (full) library and store its outputs.

    Args:
        notebooks_src: the instructor's ``notebooks/`` folder (``NN_name.ipynb`` lessons, and
            the parts ``NNa_name.ipynb`` of a lesson in parts).
        notebooks_dst: the edition's ``notebooks/`` folder; recordings go to its
            ``.recorded/`` subfolder, one JSON file per lesson.
        timeout: seconds a cell may run (generous: lesson 14 trains a GPT, which on a busy
            machine, beside the other lessons, takes minutes).
        jobs: lessons run at a time (default: the CPU count, at most 4). One lesson (the
            GPT's training) takes most of the time, so the others run beside it.

    Returns:
        The lessons' recording files written (the exercises' expected values go beside them,
        :func:`record_expected`).

    Raises:
        RecordingError: a lesson that did not run to its end.
    """
    src, dst = Path(notebooks_src), Path(notebooks_dst) / RECORDED_DIR
    cache = src.parent / ".cache" / "lessons"
    notebooks = lesson_notebooks(src)  # NN_name.ipynb, and a lesson's parts NNa_name.ipynb
    jobs = min(4, os.cpu_count() or 1) if jobs is None else jobs
    written = []
    for notebook, path in zip(notebooks, _executed_lessons(notebooks, cache, timeout, jobs)):
        done = json.loads(path.read_text("utf-8"))
        cells = {
            cell_key(c["source"]): c.get("outputs", [])
            for c in done["cells"]
            if c["cell_type"] == "code" and c.get("outputs")
        }
        dst.mkdir(parents=True, exist_ok=True)
        out = dst / f"{notebook.stem}.json"
        out.write_text(json.dumps({"lesson": notebook.stem, "cells": cells}) + "\n", "utf-8")
        written.append(out)
    record_expected(notebooks_dst)  # the exercises' expected values, beside the lessons'
    return written


def record_expected(notebooks_dst) -> Path:
    """Store every exercise's expected values (``Exercise(expected=...)``), computed by this
    (full) library, in the edition's ``notebooks/.recorded/expected.json``: the checks of a
    student edition compare with them while the assignments that compute them are unwritten.
    They are values (numbers), not code: nothing a student could run as a solution."""
    from . import lesson_modules  # noqa: PLC0415

    exercises = [ex for module in lesson_modules() for ex in module.EXERCISES]
    values = {ex.number: ex.expected() for ex in exercises if ex.expected is not None}
    out = Path(notebooks_dst) / RECORDED_DIR / EXPECTED_FILE
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(values, sort_keys=True) + "\n", encoding="utf-8")
    # what each recorded wrong answer gives where the check stops (its step, value and
    # message): the check recognises a learner's mistake by it even where the wrong answer
    # cannot run yet (it calls an unwritten assignment, or a reference the edition lacks)
    mistakes = {ex.number: [_plain(o) for o in ex.mistake_outcomes()] for ex in exercises}
    (out.parent / MISTAKES_FILE).write_text(json.dumps(mistakes, sort_keys=True) + "\n",
                                            encoding="utf-8")  # fmt: skip
    return out


def _plain(outcome):
    """A failed grade's ``(step, value, message)`` as JSON data, or None."""
    if outcome is None:
        return None

    def plain(value):
        if hasattr(value, "tolist"):
            return value.tolist()
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return value

    return [outcome.step, plain(outcome.got), outcome.message]


def recorded_expected(folder=None) -> dict:
    """The exercises' expected values stored in this edition (``{}`` where there are none:
    the instructor's repository)."""
    if folder is None:
        folder = Path(__file__).resolve().parents[2] / "notebooks" / RECORDED_DIR
    path = Path(folder) / EXPECTED_FILE
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


def recorded_mistakes(folder=None) -> dict:
    """What each exercise's recorded wrong answers gave when this edition was made
    (:func:`record_expected`): ``{number: [[step, value, message] or None, ...]}``, ``{}``
    where there are none."""
    if folder is None:
        folder = Path(__file__).resolve().parents[2] / "notebooks" / RECORDED_DIR
    path = Path(folder) / MISTAKES_FILE
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


def load_recordings(folder) -> dict[str, list]:
    """Every recording under ``folder`` (a ``.recorded`` folder), merged: key -> outputs."""
    merged: dict[str, list] = {}
    for path in sorted(Path(folder).glob("*.json")):
        if path.name in (EXPECTED_FILE, MISTAKES_FILE):
            continue
        merged.update(json.loads(path.read_text(encoding="utf-8"))["cells"])
    return merged


def recorded_notebook(notebook, recordings: dict) -> dict:
    """The student edition of ``notebook`` with each cell's recorded outputs filled in (what
    the edition's own site publishes, where the library cannot run the lessons)."""
    from .notebooks import student_edition  # noqa: PLC0415

    nb = student_edition(notebook)
    count = 0
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            count += 1
            cell["outputs"] = recordings.get(cell_key(cell["source"]), [])
            cell["execution_count"] = count
            for output in cell["outputs"]:
                if "execution_count" in output:
                    output["execution_count"] = count
    return nb


def _show_outputs(outputs: list) -> None:
    from IPython.display import publish_display_data  # noqa: PLC0415

    for output in outputs:
        kind = output.get("output_type")
        if kind == "stream":
            text = output.get("text", "")
            stream = sys.stderr if output.get("name") == "stderr" else sys.stdout
            stream.write("".join(text) if isinstance(text, list) else text)
            stream.flush()
        elif kind in ("display_data", "execute_result"):
            data = {k: "".join(v) if isinstance(v, list) else v
                    for k, v in output.get("data", {}).items()}  # fmt: skip
            data.pop("application/vnd.jupyter.widget-view+json", None)
            publish_display_data(data, output.get("metadata", {}))


class Unlocker:
    """The kernel side: turns a cell stopped by an unwritten assignment into a notice and the
    cell's recorded output (see the module's docstring). One per kernel (:func:`activate`)."""

    def __init__(self, shell, recordings: dict):
        self.shell, self.recordings = shell, recordings
        self.pending: dict[str, str] = {}  # task -> where, for cells that could not run
        self.stubs: dict[str, tuple[str, str]] = {}  # task -> (file, function) of its stub
        self.caught: dict[str, BaseException] = {}  # stubs' errors the cell caught itself
        self.locked = False  # the current cell was shown from its recording
        # name -> the tasks it waits for: names a stopped cell assigns, which hold what the
        # cell made before it stopped (an empty list of losses ...) or an older value
        self.partial: dict[str, frozenset[str]] = {}
        # the tasks that stopped the current cell: its names wait for these alone (a cell
        # stopped by A2.1 does not wait for the GPU assignment a cell above stopped on)
        self.stopped_by: frozenset[str] = frozenset()

    def explain(self, error: BaseException, source: str) -> str | None:
        """The notice for a failed cell, or None when the error is the student's own."""
        task = stub_task(error)
        outputs = self.recordings.get(cell_key(source))
        if task == "solution":
            return None  # the lesson's own exercise: its check cell says NOT SOLVED YET
        if task is not None:
            self.pending[task] = _where(error)
            self.stubs[task] = _stub_frame(error)
            self.stopped_by = frozenset({task})
            head = (f"This cell needs {_needed(task, error)}, which is not "
                    f"{'written' if _is_assignment(task) else 'solved'} yet.")  # fmt: skip
        elif self.pending and outputs is not None:
            self.stopped_by = self._waits_for(source) or frozenset(self.pending)
            tasks = _named(self.stopped_by)
            head = (f"This cell uses something a cell above could not make (it needs "
                    f"{tasks}).")  # fmt: skip
        else:
            return None
        if outputs is None:
            return head + " Write it, then run the lesson again from the top."
        return (head + " Below is what this cell showed when your edition was made; once "
                "you have written it, run the cell again to see it live.")

    def _replace(self, notice_text: str, source: str) -> None:
        """Show the notice and the cell's recording in place of what it printed live."""
        from IPython.display import clear_output  # noqa: PLC0415

        self.locked = True
        tasks = self.stopped_by or frozenset(self.pending)
        self.partial.update(dict.fromkeys(_assigned(source), tasks))
        if cell_key(source) in self.recordings:
            clear_output()  # what the cell printed before it stopped: the recording replaces it
        notice(notice_text)
        _show_outputs(self.recordings.get(cell_key(source), []))

    def handle(self, shell, etype, value, tb, tb_offset=None):
        """IPython's custom exception handler (``set_custom_exc``)."""
        source = getattr(self, "_source", "")
        notice_text = self.explain(value, source)
        if notice_text is None:
            return shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        self._replace(notice_text, source)
        return None

    def _waits_for(self, source: str) -> frozenset[str]:
        """The tasks that the unfinished names a cell reads wait for."""
        return frozenset().union(*(self.partial[n] for n in _loaded(source) & set(self.partial)))

    def pre_run_cell(self, info=None) -> None:
        self._source = getattr(info, "raw_cell", "") or ""
        self.locked, self.stopped_by = False, frozenset()
        for task in [t for t, (path, name) in self.stubs.items()
                     if _solved(t) or not _still_stub(path, name)]:  # fmt: skip
            self.pending.pop(task, None)  # written since: cells that need it run live
            self.stubs.pop(task)

    def post_run_cell(self, result=None) -> None:
        source = getattr(self, "_source", "")
        caught, self.caught = self.caught, {}
        if caught and not self.locked and cell_key(source) in self.recordings:
            # the cell's own `except` (NotImplementedError is a RuntimeError) caught a stub's
            # error in place of the one it demonstrates: show what it showed when recorded
            for task, error in caught.items():
                self.pending[task], self.stubs[task] = _where(error), _stub_frame(error)
            task, error = next(iter(caught.items()))
            self.stopped_by = frozenset(caught)
            self._replace(f"This cell needs {_needed(task, error)}, which is not "
                          "written yet (the cell caught its error in place of the one it "
                          "shows). Below is what this cell showed when your edition was made; "
                          "once you have written it, run the cell again to see it live.",
                          source)  # fmt: skip
        if self.locked and result is not None:
            result.error_in_exec = None  # the cell is explained: Run All goes on
        elif not self.locked and (result is None or result.error_in_exec is None):
            for name in _assigned(source):  # this cell ran to its end: its names hold values
                self.partial.pop(name, None)
        self.locked = False

    def stand_in(self) -> None:
        """Run in place of a cell that reads what a stopped cell left unfinished (see
        :class:`_SkipPartial`): the notice, and the cell's recording where there is one."""
        source = getattr(self, "_source", "")
        names = sorted(_loaded(source) & set(self.partial))
        self.stopped_by = self._waits_for(source)
        tasks = _named(self.stopped_by)
        head = (f"This cell reads {', '.join(names)}, which a cell above could not finish (it "
                f"needs {tasks}): running it now would compute on what that cell left half "
                "made.")  # fmt: skip
        if cell_key(source) in self.recordings:
            head += (" Below is what this cell showed when your edition was made; once you have "
                     "written it, run the lesson again from the top to see it live.")  # fmt: skip
        else:
            head += " Write it, then run the lesson again from the top."
        self._replace(head, source)


_active: Unlocker | None = None


def _parse(source: str):
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def _assigned(source: str) -> set[str]:
    """The names a cell binds at its top level (assignments, loops, ``with ... as``, imports,
    functions and classes it defines), not those local to a function it defines.

    >>> sorted(_assigned("xs = []\\nfor x in range(3):\\n    xs.append(x)\\ndef f(a):\\n    b = a"))
    ['f', 'x', 'xs']
    """
    tree, names = _parse(source), set()
    if tree is None:
        return names
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        todo.extend(ast.iter_child_nodes(node))
    return names


def _loaded(source: str) -> set[str]:
    """The names a cell reads and does not bind itself (what it takes from cells above): read
    at its top level, or as globals inside a function or class it defines. A function's own
    parameters and locals are not read from above: an answer cell's ``def f(x)`` does not
    read a half-made ``x`` of the lesson (it was once stood in for, and the answer never ran).

    >>> sorted(_loaded("def slope(f, x, eps):\\n    return (f(x + eps) - f(x)) / eps\\nprint(y)"))
    ['print', 'y']
    >>> sorted(_loaded("def g(a):\\n    return a * w\\nw = 2"))
    []
    """
    if _parse(source) is None:
        return set()
    read, todo = set(), [symtable.symtable(source, "<cell>", "exec")]
    while todo:
        table = todo.pop()
        top = table.get_type() == "module"
        read |= {s.get_name() for s in table.get_symbols()
                 if s.is_referenced() and (top or s.is_global())}  # fmt: skip
        todo.extend(table.get_children())
    return read - _assigned(source)


class _SkipPartial(ast.NodeTransformer):
    """An IPython AST transformer: a cell that reads a name a stopped cell left unfinished
    (:attr:`Unlocker.partial`) is replaced by :meth:`Unlocker.stand_in`, so that it neither
    runs on an empty list nor reports a check on it (two empty lists agree)."""

    def visit_Module(self, node):
        unlocker = _active
        if unlocker is None or not unlocker.partial:
            return node
        if not _loaded(getattr(unlocker, "_source", "")) & set(unlocker.partial):
            return node
        call = ast.parse(f"__import__({__name__!r}, fromlist=['_active'])._active.stand_in()")
        node.body = call.body
        return ast.fix_missing_locations(node)


def _caught() -> None:
    """Called first in every ``except`` block of a lesson cell (see :class:`_WatchExcept`):
    notes an unwritten assignment's error that the cell's own handler caught."""
    error = sys.exc_info()[1]
    task = stub_task(error)
    if _active is not None and task is not None and task != "solution":
        _active.caught.setdefault(task, error)


class _WatchExcept(ast.NodeTransformer):
    """An IPython AST transformer: each ``except`` body of a cell first calls :func:`_caught`
    (on the same line, so tracebacks keep their line numbers)."""

    def visit_ExceptHandler(self, node):
        self.generic_visit(node)
        call = ast.parse(f"__import__({__name__!r}, fromlist=['_caught'])._caught()").body[0]
        first = node.body[0]
        for part in ast.walk(call):
            if "lineno" in part._attributes:
                part.lineno = part.end_lineno = first.lineno
                part.col_offset = part.end_col_offset = first.col_offset
        node.body.insert(0, call)
        return node


def blocked() -> bool:
    """Whether a failing check in the running cell is explained by an unwritten assignment:
    a cell above was stopped by one, and this cell has a recording (its check then shows as
    recorded instead of a FAIL the student did not cause)."""
    unlocker = _active
    if unlocker is None or not unlocker.pending:
        return False
    return cell_key(getattr(unlocker, "_source", "")) in unlocker.recordings


def activate(folder=None) -> Unlocker | None:
    """Install the :class:`Unlocker` in this Jupyter kernel when recordings exist (only in a
    student edition: ``notebooks/.recorded`` next to the package); otherwise do nothing.

    Args:
        folder: the recordings' folder (default: the edition's ``notebooks/.recorded``, or
            ``.recorded`` in the current folder, where the kernel of a lesson starts).
    """
    global _active
    if _active is not None:
        return _active
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or not hasattr(shell, "set_custom_exc"):
        return None
    if folder is None:
        here = Path(__file__).resolve().parents[2] / "notebooks" / RECORDED_DIR
        folder = here if here.is_dir() else Path.cwd() / RECORDED_DIR
    if not Path(folder).is_dir():
        return None
    _active = Unlocker(shell, load_recordings(folder))
    shell.set_custom_exc((Exception,), _active.handle)
    shell.ast_transformers.append(_WatchExcept())
    shell.ast_transformers.append(_SkipPartial())
    shell.events.register("pre_run_cell", _active.pre_run_cell)
    shell.events.register("post_run_cell", _active.post_run_cell)
    checks.blocked_hook = blocked  # a FAIL a locked cell above explains shows as recorded
    return _active
