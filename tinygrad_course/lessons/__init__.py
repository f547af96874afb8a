"""Helpers for the lesson notebooks: checks that answer at once, and every lesson's exercises.

Layer 11, the top (``docs/concepts/layers.md``; ``tests/test_import_circles.py`` checks it): it
may import anything below (the package, ``eager``, ``symbolic``, ``nn``, ``viz``, ``grading``
...); nothing imports it.

* :mod:`~tinygrad_course.lessons.checks`: ``check``, ``check_true``, ``check_gradient`` and the
  tally (``summary``): PASS / FAIL in words, colour and a symbol, each check counted once.
* :mod:`~tinygrad_course.lessons.exercise`: an :class:`Exercise` grades the learner's answer
  inside a guard (mistakes give a hint, never a traceback) and records the common wrong
  answers its check must reject.
* ``lesson00`` ... ``lesson17``: each lesson's exercises, imported by its notebook as ``ex``
  (by each of its notebooks for a lesson in parts: 09a, 09b and 09c share ``lesson09``)::

      from tinygrad_course.lessons import lesson01 as ex
      ex.central_difference.check(central_difference)

* :mod:`~tinygrad_course.lessons.recorded`: in the student edition, a cell stopped by an
  unwritten assignment says which one unlocks it and shows its recorded output (activated on
  import, in a Jupyter kernel, only where the edition's recordings exist).
* :mod:`~tinygrad_course.lessons.as_built`: the values of a learner's symbolic graph computed
  as it is built, and graphs recorded as data, so that the checks answer in a student edition
  before the symbolic engine (assignment A1) is written.
* :mod:`~tinygrad_course.lessons.notebooks`: the exercise convention (``lint_notebook``) and the
  ``.py`` / ``.ipynb`` pairs (``pair_problems``).
"""

from .checks import (
    FAIL,
    PASS,
    UNSOLVED,
    CheckResult,
    check,
    check_gradient,
    check_true,
    compare,
    gradient_mismatch,
    is_strict,
    notice,
    numeric_gradient,
    reset,
    results,
    set_strict,
    strict,
    summary,
)
from .exercise import Exercise, Verdict, Wrong
from .notebooks import SOLUTION_BEGIN, SOLUTION_END, lint_notebook, pair_problems
from .recorded import activate as _activate_recordings

__all__ = [
    "PASS",
    "FAIL",
    "UNSOLVED",
    "CheckResult",
    "check",
    "check_true",
    "check_gradient",
    "compare",
    "gradient_mismatch",
    "numeric_gradient",
    "notice",
    "set_strict",
    "strict",
    "is_strict",
    "results",
    "reset",
    "summary",
    "Exercise",
    "Verdict",
    "Wrong",
    "SOLUTION_BEGIN",
    "SOLUTION_END",
    "lint_notebook",
    "pair_problems",
    "LESSONS",
    "lesson_modules",
]

LESSONS = tuple(f"lesson{n:02d}" for n in range(18))


def lesson_modules() -> list:
    """Every lesson's exercise module, in order (each has ``EXERCISES``)."""
    import importlib  # noqa: PLC0415

    return [importlib.import_module(f"{__name__}.{name}") for name in LESSONS]


_activate_recordings()  # a no-op outside a student edition's Jupyter kernel
