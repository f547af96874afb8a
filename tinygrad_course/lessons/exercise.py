"""An exercise: its check, the wrong answers learners give, and the hints that answer them.

Every exercise of a lesson is an :class:`Exercise` in that lesson's module
(``tinygrad_course.lessons.lesson01`` ...). The notebook's check cell calls ``.check(answer)``
with the learner's function (or value). The check runs the answer **inside a guard**: an
exception raised by the learner's code becomes a FAIL with a hint, never a traceback, and an
exercise the student edition left as ``raise NotImplementedError`` shows NOT SOLVED YET.

Hints come from three places, most specific first:

1. the exercise's ``grade`` function, which compares the answer with the expected result and
   with the results of anticipated mistakes (``Verdict(False, message, hint)``);
2. the exercise's ``hints``: ``(exception type, text in its message, hint)`` triples;
3. hints for mistakes any exercise can meet (:data:`COMMON_HINTS`: numpy functions on graph
   values, recursion on deep graphs, ...).

Every exercise records at least two common wrong answers (:class:`Wrong`); the test suite
feeds each to the check and asserts FAIL with that mistake's hint.

>>> ex = Exercise("0.0", "double it", lambda f: Verdict(f(2) == 4, f"f(2) = {f(2)}",
...               "multiply by 2"))
>>> ex.check(lambda x: x + x, strict=False)
✅ PASS  Exercise 0.0 — double it: f(2) = 4
True
>>> ex.check(lambda x: x * x * x, strict=False)
❌ FAIL  Exercise 0.0 — double it: f(2) = 8
   Hint: multiply by 2
False
"""

from __future__ import annotations

import traceback
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from .bounded import SECONDS, run_bounded
from .checks import (
    FAIL,
    PASS,
    UNSOLVED,
    CheckResult,
    _report,
    _results,
    _tries,
    compare,
    notice,
)
from .recorded import recorded_expected, unlock_message

__all__ = [
    "Exercise", "Verdict", "Wrong", "COMMON_HINTS", "grade_steps", "diagnose",
    "reference_solution",
]  # fmt: skip


class Verdict(NamedTuple):
    """What a grade function decides: ``ok``, a ``message`` (what was found) and a ``hint``
    (what to look at when not ok)."""

    ok: bool
    message: str
    hint: str = ""


class Wrong(NamedTuple):
    """A common wrong answer: what the mistake is, the answer itself, and a piece of text the
    check's hint must contain when it is given this answer."""

    what: str
    answer: Any
    hint: str


# (exception type name, text in the message, hint): mistakes any exercise can meet
COMMON_HINTS: tuple[tuple[str, str, str], ...] = (
    ("TypeError", "does not support ufuncs",
     "numpy functions (np.tanh, np.exp, np.sum ...) work on arrays, not on graph values: use "
     "the library's own, as a method (x.tanh(), x.exp(), x.sum()) or a function (tg.tanh, "
     "sym.tanh)"),
    ("RecursionError", "",
     "recursion went deeper than Python allows (about 1000 calls): walk the graph with an "
     "explicit stack, a list you append to and pop from, instead of a function calling itself"),
    ("AttributeError", "'numpy.ndarray' object has no attribute",
     "a numpy array is not a tensor or node: keep working with the library's values (or wrap "
     "the array with tg.tensor(...))"),
    ("NameError", "",
     "a name is not defined: run the cells above this one first (Run All, or Shift+Enter from "
     "the top)"),
)  # fmt: skip


# what a second and third failed try add when the exercise has no closer look for the mistake
_CLOSER_LOOK = (
    "work the check's smallest input by hand, on paper, and compare each step with what your "
    "code computes (print the intermediate values inside your function)",
    "reread the section just above the heading 'Exercise {number}': the rule it needs is "
    "written there; then change one thing at a time and run the check",
)


def _innermost(error: BaseException) -> tuple[str, int]:
    frames = traceback.extract_tb(error.__traceback__)
    return (frames[-1].name, frames[-1].lineno) if frames else ("?", 0)


class Exercise:
    """One exercise: its number and title, how to grade an answer, its wrong answers.

    Args:
        number: ``"1.2"`` (lesson 1, exercise 2).
        title: a few words.
        grade: ``grade(answer) -> Verdict``; may raise (the learner's code runs inside it).
        wrong: common wrong answers (at least two), each with the hint it must produce.
        hints: ``(exception type name, text in its message, hint)`` for anticipated errors.
        fallback: what teaching cells use while the exercise is not solved (see :meth:`use`).
        seconds: how long the answer may run in a check (see :meth:`check`).
        more: ``(text in the first hint, second hint, third hint)``: what the second and
            third failed try in a row add to a mistake's hint, each more specific than the
            one before and none the solution (see :meth:`check`); ``""`` matches any hint.
        expected: ``expected() -> data`` (numbers, lists, dicts of them): the values the
            grade compares with that the library computes (a ``backward()``), which a student
            edition cannot compute before the assignments are written. ``make-student``
            stores them (:func:`~tinygrad_course.lessons.recorded.record_expected`) so that
            the check answers on day one; the grade reads them with :meth:`values`.
    """

    def __init__(
        self,
        number: str,
        title: str,
        grade: Callable[[Any], Verdict],
        wrong: Sequence[Wrong] = (),
        hints: Sequence[tuple[str, str, str]] = (),
        fallback: Any = None,
        seconds: float = SECONDS,
        more: Sequence[tuple[str, str, str]] = (),
        expected: Callable[[], Any] | None = None,
    ):
        self.number, self.title, self.grade, self.seconds = number, title, grade, seconds
        self.wrong, self.hints, self.fallback = tuple(wrong), tuple(hints), fallback
        self.more, self.expected = tuple(more), expected

    def values(self):
        """What ``expected()`` gives: computed by the library, or, where an unwritten
        assignment stops that (a student edition on day one), as recorded when the edition
        was made. Without a recording the assignment's error goes on (NOT SOLVED YET, naming
        it)."""
        try:
            return self.expected()
        except NotImplementedError as error:
            if unlock_message(error) is None:
                raise
            stored = recorded_expected().get(self.number)
            if stored is None:
                raise
            return stored

    @property
    def name(self) -> str:
        """How results and the tally name this exercise."""
        return f"Exercise {self.number} — {self.title}"

    def __repr__(self) -> str:
        return f"<{self.name}>"

    def _hint_for(self, error: BaseException) -> str:
        kind, text = type(error).__name__, str(error)
        for name, needle, hint in self.hints + COMMON_HINTS:
            if name == kind and needle in text:
                return hint
        return "read the error above, fix the code in the exercise cell and run both cells again"

    def _evaluate(self, answer) -> tuple[str, str, str]:
        """Grade ``answer``: ``(status, message, hint)``; whatever it raises becomes a hint."""
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # overflow in a wrong answer
                verdict = self.grade(answer)
        except NotImplementedError as error:
            needs = unlock_message(error)
            if needs is not None:  # the library's own stub: the student edition, early on
                message = f"this check needs {needs}, which is not written yet"
                return UNSOLVED, message, f"write {needs.split(' (')[0]} first, then run " \
                    "this cell again"  # fmt: skip
            where, _ = _innermost(error)
            message = f"{where} still raises NotImplementedError"
            hint = "write your code in the exercise cell (between the comment lines), run it, " \
                "then run this cell again"  # fmt: skip
            return UNSOLVED, message, hint
        except MemoryError:
            raise  # the bound's own message says what happened
        except Exception as error:  # the learner's code failed: a hint, never a traceback
            where, line = _innermost(error)
            message = f"{type(error).__name__} in {where} (line {line}): {error}"
            return FAIL, message, self._hint_for(error)
        ok, message, hint = verdict
        if not ok and not hint:
            hint = "compare what you got with what was expected, line by line"
        return (PASS if ok else FAIL), message, ("" if ok else hint)

    def check(self, answer, strict: bool | None = None) -> CheckResult:
        """Grade ``answer``, show PASS / FAIL / NOT SOLVED YET with a hint, and record it.

        The learner's code runs inside this call, in a child process bounded in time
        (``seconds``) and memory (:func:`~tinygrad_course.lessons.bounded.run_bounded`): whatever
        it raises, an endless loop or a runaway allocation is turned into a result.
        """
        how, value, printed = run_bounded(lambda: self._evaluate(answer), self.seconds)
        if printed:
            print(printed, end="" if printed.endswith("\n") else "\n")
        if how == "ok":
            status, message, hint = value
        elif how == "raised":  # SystemExit, KeyboardInterrupt ... from the learner's code
            status, message = FAIL, f"{type(value).__name__}: {value}"
            hint = "the function stopped the check itself (exit(), sys.exit() ...): return " \
                "a value instead"  # fmt: skip
        else:  # timeout, memory, crashed
            message, _, hint = value.partition(": ")
            status = FAIL
        if status == FAIL:
            _tries[self.name] = tries = _tries.get(self.name, 0) + 1
            hint = self._escalate(hint, tries)
        elif status == PASS:
            _tries.pop(self.name, None)
        return _report(self.name, status, message, hint, strict)

    def _escalate(self, hint: str, tries: int) -> str:
        """The hint for the ``tries``-th failed check in a row: the first names the mistake;
        the second and third add a closer look at that mistake (the exercise's ``more``), or
        where to look when none is written for it; never the solution."""
        if tries < 2:
            return hint
        steps = next(((second, third) for needle, second, third in self.more
                      if needle in hint), _CLOSER_LOOK)  # fmt: skip
        extra = steps[min(tries, 3) - 2].format(number=self.number)
        return f"{hint}\n   Try {tries}, a closer look: {extra}" if hint else extra

    def solution(self) -> str | None:
        """Show the reference solution, once this exercise's check has passed.

        The reference is the lesson notebook's solution cell. A student edition holds none
        (its notebooks are stripped), so there it says so; and a cell that would show code
        solving a graded assignment task is never shown. Returns the text shown, or None.
        """
        if not self.solved:
            tries = _tries.get(self.name, 0)
            print(f"{self.name}: the reference solution opens once your check passes"
                  + (f" ({tries} failed tr{'y' if tries == 1 else 'ies'} so far)." if tries
                     else ". Run the check first."))  # fmt: skip
            return None
        text, why = reference_solution(self)
        if text is None:
            print(f"{self.name}: {why}")
            return None
        print(f"{self.name}: the reference solution ({why})\n\n{text}")
        return text

    @property
    def solved(self) -> bool:
        """Whether this exercise's check has passed (its latest run)."""
        result = _results.get(self.name)
        return result is not None and result.passed

    def use(self, answer):
        """What a teaching cell should use: ``answer`` once the check has passed, otherwise
        the fallback, with a visible notice (so a lesson runs top to bottom either way)."""
        if self.solved or self.fallback is None:
            return answer
        what = getattr(self.fallback, "__name__", "answer")
        notice(
            f"{self.name} is not solved yet, so this cell uses the reference {what}. "
            "Solve the exercise, run its check, then run this cell again to use yours."
        )
        return self.fallback


def reference_solution(exercise: Exercise, root=None) -> tuple[str | None, str]:
    """``(cell text, where)`` of ``exercise``'s solution cell in its lesson notebook, or
    ``(None, why not)``: a student edition (no solution regions), or a cell holding code of a
    graded task's solution (the library's own solution regions). ``root``: the folder holding
    ``notebooks/`` (default: the one next to this library)."""
    import importlib  # noqa: PLC0415
    import pathlib  # noqa: PLC0415
    import re  # noqa: PLC0415

    from ..grading.student import solution_regions  # noqa: PLC0415
    from .notebooks import solution_snippets  # noqa: PLC0415

    package = pathlib.Path(__file__).resolve().parents[1]
    lesson = int(exercise.number.split(".")[0])
    module = importlib.import_module(f"{__package__}.lesson{lesson:02d}")
    attr = next((k for k, v in vars(module).items() if v is exercise), None)
    notebooks = pathlib.Path(root if root is not None else package.parent) / "notebooks"
    found = sorted(notebooks.glob(f"{lesson:02d}_*.py"))
    if attr is None or not found:
        return None, "no lesson notebook found next to the library"
    text = found[0].read_text(encoding="utf-8")
    lines = text.splitlines()
    at = text[: max(text.find(f"ex.{attr}.check("), 0)].count("\n") + 1
    regions = [r for r in solution_regions(text, found[0].name) if r[1] < at]
    if not regions:
        return None, ("this edition holds no reference solutions (its notebooks are "
                      "stripped): ask your instructor, or compare notes with a classmate "
                      "who passed")  # fmt: skip
    begin, end, _ = regions[-1]
    first = max(n for n in range(begin, 0, -1) if lines[n - 1].startswith("# %%") or n == 1)
    last = next((n - 1 for n in range(end + 1, len(lines) + 1)
                 if lines[n - 1].startswith("# %%")), len(lines))  # fmt: skip
    cell = [line for line in lines[first:last] if not re.match(r"\s*# (BEGIN|END) SOLUTION",
                                                                 line)]  # fmt: skip
    cell_text = "\n".join(cell).strip("\n")
    flat = re.sub(r"\s+", " ", cell_text)
    # the graded tasks' solutions live in the library (and, for a course that grades its own
    # code, here): a cell that repeats one is not shown
    import tinygrad_edu  # noqa: PLC0415

    library = pathlib.Path(tinygrad_edu.__file__).resolve().parent
    graded = solution_snippets(p for folder in (library, package) for p in folder.rglob("*.py")
                               if "BEGIN SOLUTION A" in p.read_text(encoding="utf-8"))  # fmt: skip
    if any(snippet in flat for snippet in graded):
        return None, "its reference holds code of a graded assignment task: not shown"
    return cell_text, f"{found[0].parent.name}/{found[0].name}, lines {first + 1}-{last}"


def diagnose(
    got,
    expected,
    mistakes=(),
    hint: str = "",
    atol: float = 1e-6,
    rtol: float = 1e-6,
    what: str = "",
) -> Verdict:
    """Compare ``got`` with ``expected``; when it is wrong, recognise an anticipated mistake.

    Args:
        got, expected: the learner's value and the right one.
        mistakes: ``(value a mistake gives, hint for it)`` pairs, tried in order.
        hint: the hint when no mistake matches.
        atol, rtol: the tolerance (as in :func:`~tinygrad_course.lessons.check`).
        what: a prefix for the message ("at x = 2: ").
    """
    ok, message = compare(got, expected, atol, rtol)
    if ok:
        return Verdict(True, what + message)
    for value, mistake_hint in mistakes:
        try:
            same = compare(got, value, atol, rtol)[0]
        except Exception:  # noqa: BLE001 - a mistake's value that cannot be compared
            same = False
        if same:
            return Verdict(False, what + message, mistake_hint)
    return Verdict(False, what + message, hint)


def grade_steps(*steps: Callable[[], Verdict]) -> Verdict:
    """Run several grading steps; the first that fails decides (else the last message)."""
    verdict = Verdict(True, "")
    for step in steps:
        verdict = step()
        if not verdict.ok:
            return verdict
    return verdict
