"""An exercise: its check, the wrong answers learners give, and the hints that answer them.

Every exercise of a lesson is an :class:`Exercise` in that lesson's module
(``tinygrad_course.lessons.lesson01`` ...). The notebook's check cell calls ``.check(answer)``
with the learner's function (or value). The check runs the answer **inside a guard**: an
exception raised by the learner's code becomes a FAIL with a hint, never a traceback, and an
exercise the student edition left as ``raise NotImplementedError`` shows NOT SOLVED YET.

Every exercise records the common wrong answers learners give (:class:`Wrong`, at least
two), each with the diagnosis of *its* mistake. When the check rejects an answer, it asks
which of them the answer repeats: the grade of each recorded wrong answer is what that
mistake produces (the value found where the grade stopped, or the error it raised), and an
answer that stops at the same place with the same value (within the check's tolerance) or
the same error made that mistake, so the hint shown is that mistake's diagnosis. Otherwise
the hint comes from, most specific first:

1. the exercise's ``grade`` function, which may recognise a mistake of its own
   (``Verdict(False, message, hint)``), or describes how the value differs from the right
   one without giving it (:func:`diagnose`: shape, sign, a constant factor or offset, which
   entries);
2. the exercise's ``hints``: ``(exception type, text in its message, hint)`` triples;
3. hints for mistakes any exercise can meet (:data:`COMMON_HINTS`: numpy functions on graph
   values, recursion on deep graphs, ...).

The test suite feeds every recorded wrong answer to its check and asserts FAIL with exactly
that mistake's hint, and that no hint quotes the reference solution.

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

import contextlib
import functools
import io
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
    _to_numpy,
    _tries,
    compare,
    notice,
)
from .recorded import (
    _still_stub,
    recorded_expected,
    recorded_mistakes,
    stub_task,
    unlock_message,
)

__all__ = [
    "Exercise", "Verdict", "Wrong", "COMMON_HINTS", "grade_steps", "diagnose",
    "describe_difference", "reference_solution", "NUMPY_ON_GRAPH", "DEEP_RECURSION",
]  # fmt: skip


class Verdict(NamedTuple):
    """What a grade function decides: ``ok``, a ``message`` (what was found) and a ``hint``
    (what to look at when not ok). ``step`` and ``got`` say where the grade stopped and the
    value the answer gave there (:func:`diagnose` fills them in): two answers that stop at
    the same step with the same value made the same mistake, whatever their messages say."""

    ok: bool
    message: str
    hint: str = ""
    step: str | None = None
    got: Any = None


class Wrong(NamedTuple):
    """A common wrong answer: what the mistake is, the answer itself, and the diagnosis of
    that mistake: the hint the check shows to an answer that makes it (never the solution).

    In a student edition the answer is ``...``: many wrong answers are the solution with one
    token changed, so the edition ships none of their code (``make-student`` writes ``...``
    in their place, :mod:`~tinygrad_course.grading.wrong_answers`), and the check knows each
    mistake from what it gave when the edition was made (:meth:`Exercise.mistake_outcomes`)."""

    what: str
    answer: Any
    hint: str


class _Outcome(NamedTuple):
    """What grading one answer found: its status, message and hint, and where it stopped
    with what value (a failed step and the value there, or an error's type and text)."""

    status: str
    message: str
    hint: str
    step: str | None = None
    got: Any = None

    def same_mistake(self, other: _Outcome) -> bool:
        """Whether two failed answers made the same mistake: the same step with the same
        value (within a tight tolerance), or, where the grade names no step, the same
        message."""
        if self.status != FAIL or other.status != FAIL:
            return False
        if self.step is not None and self.step == other.step:
            if self.got is None or other.got is None:
                return self.message == other.message
            return _same_value(self.got, other.got)
        return self.step is None and other.step is None and self.message == other.message


def _same_value(a, b) -> bool:
    """Whether two values an answer gave are the same (numbers within a tight tolerance;
    tuples and lists, which may hold arrays of different shapes, item by item)."""
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b, strict=True))
    try:
        return compare(a, b, atol=1e-9, rtol=1e-6)[0]
    except Exception:  # noqa: BLE001 - values that cannot be compared differ
        return False


def _portable(value):
    """``value`` as plain data (numbers, strings, arrays) that travels back from the bounded
    child process by pickle, or None when it cannot (a graph node, a function)."""
    value = _to_numpy(value)
    if isinstance(value, (np.ndarray, int, float, complex, str, bool, np.generic)):
        return value
    if isinstance(value, (list, tuple)):
        items = [_portable(v) for v in value]
        return None if any(v is None for v in items) else tuple(items)
    return None


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
# the diagnoses of two of them, for the recorded wrong answers that make them
NUMPY_ON_GRAPH, DEEP_RECURSION = COMMON_HINTS[0][2], COMMON_HINTS[1][2]


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
        self._mistakes: dict[int, _Outcome] = {}  # recorded wrong answer -> what it gives

    def values(self):
        """What ``expected()`` gives: computed by the library and the lesson's reference, or,
        where an unwritten assignment stops that (a student edition on day one) or the
        reference is not there (a student edition holds none), as recorded when the edition
        was made. Without a recording the assignment's error goes on (NOT SOLVED YET, naming
        it)."""
        try:
            return self.expected()
        except NotImplementedError as error:
            if stub_task(error) is None:
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

    def _evaluate(self, answer) -> _Outcome:
        """Grade ``answer``; whatever it raises becomes a hint."""
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # overflow in a wrong answer
                verdict = self.grade(answer)
        except NotImplementedError as error:
            needs = unlock_message(error)
            if needs is not None:  # the library's own stub: the student edition, early on
                message = f"this check needs {needs}, which is not written yet"
                return _Outcome(UNSOLVED, message, f"write {needs.split(' (')[0]} first, then "
                                "run this cell again")  # fmt: skip
            where, _ = _innermost(error)
            message = f"{where} still raises NotImplementedError"
            hint = "write your code in the exercise cell (between the comment lines), run it, " \
                "then run this cell again"  # fmt: skip
            return _Outcome(UNSOLVED, message, hint)
        except MemoryError:
            raise  # the bound's own message says what happened
        except Exception as error:  # the learner's code failed: a hint, never a traceback
            where, line = _innermost(error)
            message = f"{type(error).__name__} in {where} (line {line}): {error}"
            return _Outcome(FAIL, message, self._hint_for(error), f"raised "
                            f"{type(error).__name__}", str(error))  # fmt: skip
        verdict = Verdict(*verdict)
        if verdict.ok:
            return _Outcome(PASS, verdict.message, "")
        hint = verdict.hint or "compare what you got with what was expected, line by line"
        return _Outcome(FAIL, verdict.message, hint, verdict.step, _portable(verdict.got))

    def mistake_outcomes(self) -> list[_Outcome | None]:
        """What each recorded wrong answer gives, graded in this process (its prints
        swallowed) and kept once it fails; where it cannot be graded yet (it calls an
        unwritten assignment, or a reference a student edition lacks) or a student edition
        holds none of its code (``...``), what it gave when the edition was made
        (:func:`~tinygrad_course.lessons.recorded.record_expected`), else None."""
        stored = None
        for index, wrong in enumerate(self.wrong):
            if index in self._mistakes:
                continue
            known = None
            if wrong.answer is not ...:  # ...: an edition's, which ships no wrong answer's code
                with contextlib.redirect_stdout(io.StringIO()), \
                        contextlib.redirect_stderr(io.StringIO()):  # fmt: skip
                    try:
                        known = self._evaluate(wrong.answer)
                    except Exception:  # noqa: BLE001 - a grade that cannot run here
                        known = None
            if known is not None and known.status == FAIL:
                self._mistakes[index] = known
                continue
            if stored is None:
                stored = recorded_mistakes().get(self.number) or []
            if index < len(stored) and stored[index] is not None:
                step, got, message = stored[index]
                self._mistakes[index] = _Outcome(FAIL, message, "", step, got)
        return [self._mistakes.get(index) for index in range(len(self.wrong))]

    def _recorded_mistake(self, outcome: _Outcome) -> Wrong | None:
        """The recorded wrong answer whose mistake ``outcome`` repeats, if any."""
        for wrong, known in zip(self.wrong, self.mistake_outcomes(), strict=True):
            if known is not None and outcome.same_mistake(known):
                return wrong
        return None

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
            status, message, hint = value[:3]
            mistake = self._recorded_mistake(value) if status == FAIL else None
            if mistake is not None:
                hint = mistake.hint
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
        # the learner's answer, graded on the check's own inputs: a FAIL is theirs, even where
        # a cell above waits for an assignment (it once showed that cell's recording instead)
        return _report(self.name, status, message, hint, strict, learner=True)

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
        if _stripped(self.fallback):  # a student edition: no reference to run in its place
            notice(
                f"{self.name} is not solved yet, and this edition holds no reference {what}: "
                "the cells that use it show what they showed when the edition was made. Solve "
                "the exercise, run its check, then run this cell again to use yours."
            )
            return _stand_in(self.fallback, self.number)
        notice(
            f"{self.name} is not solved yet, so this cell uses the reference {what}. "
            "Solve the exercise, run its check, then run this cell again to use yours."
        )
        return self.fallback


def _stripped(fallback) -> bool:
    """Whether ``fallback`` is a reference the student edition left as a stub."""
    code = getattr(fallback, "__code__", None)
    if code is None:
        return False
    return _still_stub(code.co_filename, code.co_name)


def _stand_in(fallback, number: str):
    """What teaching cells get in place of a reference the edition does not hold: it raises
    the stub error of the exercise's answer (``E1.1``), which a student edition's kernel
    turns into a notice and the cell's recorded output (:mod:`.recorded`)."""

    @functools.wraps(fallback)
    def stand_in(*args, **kwargs):
        raise NotImplementedError(f"E{number}: write your solution here")

    return stand_in


def reference_solution(exercise: Exercise, root=None) -> tuple[str | None, str]:
    """``(cell text, where)`` of ``exercise``'s solution cell in its lesson notebook, or
    ``(None, why not)``: a student edition (no solution regions), or a cell holding code of a
    graded task's solution (the library's own solution regions). ``root``: the folder holding
    ``notebooks/`` (default: the one next to this library)."""
    import importlib  # noqa: PLC0415
    import pathlib  # noqa: PLC0415
    import re  # noqa: PLC0415

    from ..grading.student import solution_regions  # noqa: PLC0415
    from .notebooks import lesson_notebooks, solution_snippets  # noqa: PLC0415

    package = pathlib.Path(__file__).resolve().parents[1]
    lesson = int(exercise.number.split(".")[0])
    module = importlib.import_module(f"{__package__}.lesson{lesson:02d}")
    attr = next((k for k, v in vars(module).items() if v is exercise), None)
    notebooks = pathlib.Path(root if root is not None else package.parent) / "notebooks"
    # a lesson in parts (09a, 09b, ...): the part whose cells check this exercise
    parts = lesson_notebooks(notebooks, lesson, ".py")
    found = [p for p in parts if f"ex.{attr}.check(" in p.read_text(encoding="utf-8")] or parts
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
    """Compare ``got`` with ``expected``; when it is wrong, recognise an anticipated mistake,
    or else say how the two differ (:func:`describe_difference`), never what the right value
    is made of.

    Args:
        got, expected: the learner's value and the right one.
        mistakes: ``(value a mistake gives, hint for it)`` pairs, tried in order.
        hint: where to look when no mistake matches (added after the difference); a pointer
            to the lesson, never the formula.
        atol, rtol: the tolerance (as in :func:`~tinygrad_course.lessons.check`).
        what: a prefix for the message ("at x = 2: "); it also names the step of the grade
            (:attr:`Verdict.step`).
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
            return Verdict(False, what + message, mistake_hint, what, got)
    difference = describe_difference(got, expected, atol, rtol)
    return Verdict(False, what + message, f"{difference}; {hint}" if hint else difference, what,
                   got)  # fmt: skip


def describe_difference(got, expected, atol: float = 1e-6, rtol: float = 1e-6) -> str:
    """How a wrong value differs from the right one, in words that do not give the right one
    away: the shape, the sign, a constant factor or offset, or which entries are off.

    >>> describe_difference([2.0, 4.0], [1.0, 2.0])
    'every entry is 2 times the right one: a factor is missing or extra'
    >>> describe_difference([1.0, -2.0, 3.0], [1.0, 2.0, 3.0])
    '1 of 3 entries is off (at index 1), the others are right: what sets it apart?'
    >>> describe_difference(np.zeros((2, 3)), np.zeros((3, 2)))
    'your value has shape (2, 3) where (3, 2) is expected: check the axes you reduce or stack'
    """
    if got is None:
        return "your function returned nothing: end it with return"
    g, e = _to_numpy(got), _to_numpy(expected)
    numeric = "fciub"
    if not (isinstance(g, np.ndarray) and isinstance(e, np.ndarray)) or \
            g.dtype.kind not in numeric or e.dtype.kind not in numeric:  # fmt: skip
        if type(got) is not type(expected) and not isinstance(g, np.ndarray):
            return (f"your value is a {type(got).__name__} where a "
                    f"{type(expected).__name__} is expected")  # fmt: skip
        return "your value is not the one expected: compare them piece by piece"
    if g.shape != e.shape:
        return (f"your value has shape {g.shape} where {e.shape} is expected: check the axes "
                "you reduce or stack")  # fmt: skip
    g, e = g.astype(np.complex128 if "c" in g.dtype.kind + e.dtype.kind else np.float64), \
        e.astype(np.complex128 if "c" in g.dtype.kind + e.dtype.kind else np.float64)  # fmt: skip
    if np.isnan(g).any() and not np.isnan(e).any():
        return "your value holds NaN: a division by zero, or the log or sqrt of a negative?"
    off = ~np.isclose(g, e, atol=atol, rtol=rtol)
    entries = "your value" if g.ndim == 0 else "every entry"
    nonzero = np.abs(e) > atol
    if nonzero.any() and not (np.abs(g[~nonzero]) > atol).any():
        ratios = (g[nonzero] / e[nonzero]).real
        if np.allclose(ratios, ratios.flat[0], rtol=1e-6):
            ratio = float(ratios.flat[0])
            if np.isclose(ratio, -1.0):
                return f"{entries} has the opposite sign: a minus sign is missing or extra"
            return (f"{entries} is {ratio:.4g} times the right one: a factor is missing "
                    "or extra")  # fmt: skip
    shift = (g - e).real
    if g.size > 1 and np.allclose(shift, shift.flat[0], rtol=1e-6, atol=atol):
        return (f"every entry is off by the same {float(shift.flat[0]):.4g}: a term added to "
                "every entry is missing or extra")  # fmt: skip
    if g.ndim and 0 < off.sum() < off.size:
        where = [tuple(int(i) for i in index) if g.ndim > 1 else int(index[0])
                 for index in np.argwhere(off)[:3]]  # fmt: skip
        at = ", ".join(str(w) for w in where) + (", ..." if off.sum() > 3 else "")
        count = int(off.sum())
        return (f"{count} of {off.size} entries {'is' if count == 1 else 'are'} off (at index "
                f"{at}), the others are right: what sets {'it' if count == 1 else 'them'} "
                "apart?")  # fmt: skip
    if g.ndim == 0:
        return (f"your value is off by {float(shift):.4g} (no constant factor explains it): work "
                "the smallest case by hand and compare each step")  # fmt: skip
    return ("every entry is off, by no common factor or offset: work the smallest case by hand "
            "and compare each step")


def grade_steps(*steps: Callable[[], Verdict]) -> Verdict:
    """Run several grading steps; the first that fails decides (else the last message)."""
    verdict = Verdict(True, "")
    for step in steps:
        verdict = step()
        if not verdict.ok:
            return verdict
    return verdict
