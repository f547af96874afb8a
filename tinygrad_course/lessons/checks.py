r"""Checks that answer at once: PASS or FAIL in words, colour and a symbol, with a hint.

A check shows one result. In a notebook it is a coloured box (green PASS, red FAIL, amber NOT
SOLVED YET) that also reads as plain text; elsewhere (a script, a doctest) it is printed::

    ✅ PASS  two plus two: 4
    ❌ FAIL  a slope: expected 3, got 2.5 (max abs error 0.5 > tolerance 4e-06)

The running tally (:func:`summary`) counts each check **once**, by name: running a check
again replaces its earlier result, so fixing an answer and re-running the cell makes the tally
right again.

In *strict* mode a failed check also raises ``AssertionError``, so a lesson run by the test
suite fails loudly. Strict mode is on when a check is called with ``strict=True``, or
:func:`set_strict` / :func:`strict` turned it on, or the environment variable
``TINYGRAD_EDU_STRICT`` is ``1`` (``0`` turns it off), or the code runs under pytest
(``PYTEST_CURRENT_TEST`` is set; a notebook kernel started by ``pytest --nbmake`` inherits it).

>>> check("two plus two", 2 + 2, 4, strict=False)
✅ PASS  two plus two: 4
True
>>> check("a slope", 2.5, 3.0, strict=False)
❌ FAIL  a slope: expected 3, got 2.5 (max abs error 0.5 > tolerance 4e-06)
False
"""

from __future__ import annotations

import contextlib
import html
import os
import sys
from collections.abc import Callable, Sequence

import numpy as np

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
]

PASS, FAIL, UNSOLVED = "pass", "fail", "unsolved"

# status -> (symbol, word, text colour, background, border)
_LOOK = {
    PASS: ("✅", "PASS", "#14532d", "#f0fdf4", "#15803d"),
    FAIL: ("❌", "FAIL", "#7f1d1d", "#fef2f2", "#b91c1c"),
    UNSOLVED: ("⏳", "NOT SOLVED YET", "#713f12", "#fefce8", "#a16207"),
}
_NOTICE = ("ⓘ", "NOTICE", "#1e3a8a", "#eff6ff", "#1d4ed8")

_strict: bool | None = None
_results: dict[str, CheckResult] = {}
_tries: dict[str, int] = {}  # failed checks in a row, per exercise (hints escalate with them)


# -- strict mode ------------------------------------------------------------------------------
def set_strict(flag: bool | None) -> None:
    """Make failed checks raise (True), only show (False), or follow the environment (None)."""
    global _strict
    _strict = None if flag is None else bool(flag)


@contextlib.contextmanager
def strict(flag: bool = True):
    """Strict mode (or not) inside a ``with`` block; the previous setting comes back after."""
    global _strict
    previous, _strict = _strict, bool(flag)
    try:
        yield
    finally:
        _strict = previous


def is_strict(override: bool | None = None) -> bool:
    """Whether a failed check raises: ``override``, else :func:`set_strict`'s flag, else the
    environment (``TINYGRAD_EDU_STRICT``, then whether pytest is running)."""
    if override is not None:
        return bool(override)
    if _strict is not None:
        return _strict
    env = os.environ.get("TINYGRAD_EDU_STRICT", "").strip().lower()
    if env:
        return env not in ("0", "false", "no", "off")
    return "PYTEST_CURRENT_TEST" in os.environ


# -- showing results --------------------------------------------------------------------------
def _in_notebook() -> bool:
    """True inside a Jupyter kernel (where a result is shown as a coloured box)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def _box(look, head: str, body: str, hint: str = "") -> str:
    symbol, word, color, background, border = look
    hint_html = f"<div><b>Hint:</b> {html.escape(hint)}</div>" if hint else ""
    return (
        f'<div class="tge-check tge-{word.lower().replace(" ", "-")}" style="color:{color};'
        f"background:{background};border-left:5px solid {border};padding:4px 10px;"
        f'margin:3px 0;font-family:sans-serif;font-size:14px;white-space:pre-wrap">'
        f"<span>{symbol}</span> <b>{word}</b>&nbsp; <b>{html.escape(head)}</b>"
        f"{': ' + html.escape(body) if body else ''}{hint_html}</div>"
    )


def _show(text: str, html_text: str) -> None:
    if _in_notebook():
        from IPython.display import display  # noqa: PLC0415

        display({"text/plain": text, "text/html": html_text}, raw=True)
    else:
        print(text)


def notice(text: str) -> None:
    """Show a notice (blue, "NOTICE"): something the learner should know about this cell."""
    _show(f"ⓘ NOTICE  {text}", _box(_NOTICE, text, ""))


class CheckResult:
    """What a check returns: true when it passed (``if check(...)``, ``assert check(...)``).

    ``status`` is ``"pass"``, ``"fail"`` or ``"unsolved"`` (the exercise still raises
    ``NotImplementedError``); ``hint`` says what to look at when it did not pass. The check has
    already shown its message, so a notebook shows nothing more for the returned value.
    """

    __slots__ = ("name", "status", "message", "hint")

    def __init__(self, name: str, status: str, message: str, hint: str = ""):
        self.name, self.status, self.message, self.hint = name, status, message, hint

    @property
    def passed(self) -> bool:
        return self.status == PASS

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return "True" if self.passed else "False"

    def _ipython_display_(self) -> None:
        pass  # the result was shown already

    @property
    def text(self) -> str:
        """The result as one plain-text line (and a hint line when there is a hint)."""
        symbol, word = _LOOK[self.status][:2]
        line = f"{symbol} {word}  {self.name}: {self.message}"
        return line + (f"\n   Hint: {self.hint}" if self.hint else "")


#: Set by ``lessons.recorded.activate`` in a student edition: tells whether a failing check is
#: explained by a cell above that an unwritten assignment stopped (checks do not import it).
blocked_hook = None


def _report(name: str, status: str, message: str, hint: str = "", strict_flag=None,
            learner: bool = False):  # fmt: skip
    """Record and show a check's result. ``learner``: the result judges the learner's own
    answer (an exercise's check), which no locked cell above explains: its FAIL is shown."""
    if status == FAIL and not learner and blocked_hook is not None and blocked_hook():
        # the student edition: a value a locked cell above would have made
        raise LookupError(f"{name}: a cell above could not run")
    result = CheckResult(name, status, message, hint)
    _results[name] = result  # a re-run replaces the earlier result (the tally counts it once)
    _show(result.text, _box(_LOOK[status], name, message, hint))
    if status != PASS and is_strict(strict_flag):
        raise AssertionError(result.text)
    return result


def results() -> list[tuple[str, bool]]:
    """The latest result of every check run so far, as ``(name, passed)`` pairs."""
    return [(name, r.passed) for name, r in _results.items()]


def reset() -> None:
    """Forget the checks run so far."""
    _results.clear()
    _tries.clear()


def summary(*lessons) -> str:
    """Show and return the tally: each check counted once, with what is still to do.

    Args:
        lessons: lesson exercise modules (``tinygrad_course.lessons.lesson01`` ...) whose
            exercises should be listed even if their check has not run yet, or single
            exercises (``ex.grow_static``): a lesson in parts (9a, 9b, 9c) shares one module,
            and each part's tally lists only the exercises that part holds.
    """
    single = [(lesson,) if hasattr(lesson, "check") else () for lesson in lessons]
    expected = [ex.name for lesson, one in zip(lessons, single, strict=True)
                for ex in getattr(lesson, "EXERCISES", one)]  # fmt: skip
    names = list(_results) + [n for n in expected if n not in _results]
    passed = sum(_results[n].passed for n in names if n in _results)
    todo = []
    for n in names:
        r = _results.get(n)
        if r is None:
            todo.append(f"{n} (not run yet)")
        elif r.status == UNSOLVED:
            todo.append(f"{n} (not solved yet)")
        elif not r.passed:
            todo.append(f"{n} (failed)")
    line = f"{passed} of {len(names)} checks passed"
    if todo:
        line += "; still to do: " + "; ".join(todo)
    elif names:
        line += ": all done"
    look = _LOOK[PASS] if names and not todo else _LOOK[UNSOLVED if todo else PASS]
    _show(f"{look[0]} {line}", _box(look, "Tally", line))
    return line


# -- values -----------------------------------------------------------------------------------
def _to_numpy(value):
    """Tensors, CuPy and other array-API arrays, lists and numbers -> numpy (else as is)."""
    if hasattr(value, "detach") and callable(value.detach):
        value = value.detach()  # a tensor that requires grad: its values, outside the graph
    if hasattr(value, "numpy") and callable(value.numpy):
        return np.asarray(value.numpy())
    if hasattr(value, "get") and hasattr(value, "__cuda_array_interface__"):
        return np.asarray(value.get())
    if hasattr(value, "__array_namespace__") and not isinstance(value, np.ndarray):
        try:
            return np.asarray(value)
        except (TypeError, ValueError):
            return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return np.asarray(value)
    if isinstance(value, (int, float, np.number, np.ndarray, list, tuple)) and not isinstance(
        value, bool
    ):
        if isinstance(value, np.ndarray):
            return value
        try:
            array = np.asarray(value)
            if array.dtype.kind in "iu":
                return array
            return np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            return value
    return value


def _fmt(value) -> str:
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return f"{value.item():.6g}"
        return np.array2string(value, precision=6, threshold=12, edgeitems=3, suppress_small=True)
    if isinstance(value, (float, np.floating)):
        return f"{value:.6g}"
    return repr(value)


def compare(got, expected, atol: float = 1e-6, rtol: float = 1e-6) -> tuple[bool, str]:
    r"""Compare a value with the expected one; returns ``(ok, message)`` and shows nothing.

    Numbers, lists, arrays and tensors are compared elementwise with
    $|got - expected| \le atol + rtol\,|expected|$ once the shapes agree; other values
    (strings, tuples of names, None) with ``==``.

    >>> compare([1.0, 2.0], [1.0, 2.0])
    (True, '[1. 2.]')
    >>> compare(None, 3.0)[1]
    'got None (expected 3); did the function return its answer?'
    """
    if got is None and expected is not None:
        return False, (f"got None (expected {_fmt(_to_numpy(expected))}); did the function "
                       "return its answer?")  # fmt: skip
    g, e = _to_numpy(got), _to_numpy(expected)
    if not (isinstance(g, np.ndarray) and isinstance(e, np.ndarray)):
        try:
            ok = bool(got == expected)
        except (TypeError, ValueError):
            ok = False
        return ok, (repr(got) if ok else f"expected {expected!r}, got {got!r}")
    if g.shape != e.shape:
        return False, f"expected shape {e.shape}, got shape {g.shape}"
    if g.dtype.kind not in "fciub" or e.dtype.kind not in "fciub":
        ok = bool(np.array_equal(g, e))
        return ok, (_fmt(g) if ok else f"expected {_fmt(e)}, got {_fmt(g)}")
    if g.dtype.kind in "iub" and e.dtype.kind in "iub":
        ok = bool(np.array_equal(g, e))
        return ok, (_fmt(g) if ok else f"expected {_fmt(e)}, got {_fmt(g)}")
    g64, e64 = g.astype(np.float64), e.astype(np.float64)
    if np.isnan(g64).any() and not np.isnan(e64).any():
        return False, f"got NaN values: {_fmt(g)} (expected {_fmt(e)})"
    err = np.abs(g64 - e64)
    tol = atol + rtol * np.abs(e64)
    if g.size == 0 or bool(np.all((err <= tol) | (np.isnan(g64) & np.isnan(e64)))):
        return True, _fmt(g)
    worst = int(np.nanargmax(err - tol))
    msg = (f"expected {_fmt(e)}, got {_fmt(g)} (max abs error {err.flat[worst]:.3g} > "
           f"tolerance {tol.flat[worst]:.3g})")  # fmt: skip
    if g.ndim:
        msg += f"; worst at index {tuple(int(i) for i in np.unravel_index(worst, g.shape))}"
    return False, msg


def check(
    name: str,
    got,
    expected,
    atol: float = 1e-6,
    rtol: float = 1e-6,
    hint: str = "",
    strict: bool | None = None,
) -> CheckResult:
    r"""Compare an answer with the expected value and say at once whether it is right.

    See :func:`compare` for how values are compared.

    Args:
        name: what is being checked, as the learner should read it.
        got: the answer.
        expected: the right answer (computed, not typed in, where possible).
        atol, rtol: absolute and relative tolerance for numbers.
        hint: what to look at when the answer is wrong.
        strict: raise AssertionError on failure (None: see :func:`is_strict`).

    Returns:
        A :class:`CheckResult`, true when the answer matches.

    >>> check("doubled", np.array([2.0, 4.0]), [2.0, 4.0], strict=False)
    ✅ PASS  doubled: [2. 4.]
    True

    Nothing to compare is never a pass: two empty lists agree only because the cell that
    should have filled them did not run.

    >>> check("losses", [], [], strict=False)
    ❌ FAIL  losses: nothing to compare: the value checked is empty, and so is the expected one
       Hint: the values were never computed: run the cells above that fill them (from the top)
    False
    """
    empty = {"the value checked": _is_empty(got), "the expected one": _is_empty(expected)}
    if any(empty.values()):
        which = [w for w, e in empty.items() if e]
        message = f"nothing to compare: {which[0]} is empty" + (
            ", and so is the expected one" if len(which) == 2 else "")  # fmt: skip
        return _report(name, FAIL, message, hint or "the values were never computed: run the "
                       "cells above that fill them (from the top)", strict)  # fmt: skip
    ok, message = compare(got, expected, atol, rtol)
    return _report(name, PASS if ok else FAIL, message, "" if ok else hint, strict)


def _is_empty(value) -> bool:
    """An empty list, tuple, dict, set or array (a tensor with no element): no value at all."""
    if isinstance(value, list | tuple | dict | set | frozenset | str):
        return len(value) == 0
    size = getattr(value, "size", None)
    if callable(size):  # a tensor: size() is its shape; numel() its element count
        numel = getattr(value, "numel", None)
        return callable(numel) and numel() == 0
    return isinstance(size, int) and size == 0


def check_true(name: str, condition, hint: str = "", strict: bool | None = None) -> CheckResult:
    """Check a yes/no fact (a comparison, an ``isinstance``); ``hint`` says what to look at
    when it is false.

    >>> check_true("3 is odd", 3 % 2 == 1, strict=False)
    ✅ PASS  3 is odd: yes
    True
    """
    ok = bool(condition)
    return _report(name, PASS if ok else FAIL, "yes" if ok else "no", "" if ok else hint, strict)


# -- gradients --------------------------------------------------------------------------------
def numeric_gradient(f: Callable, arrays: Sequence, eps: float = 1e-6) -> list[np.ndarray]:
    r"""Central differences of a scalar function of several float64 arrays.

    $$\frac{\partial f}{\partial x_i} \approx \frac{f(x + \epsilon e_i) - f(x - \epsilon e_i)}
    {2\epsilon}$$

    ``f`` is called as ``f(*arrays)`` (copies in float64) and must return a number.

    >>> numeric_gradient(lambda x: float((x ** 3).sum()), [np.array([1.0, 2.0])])
    [array([ 3., 12.])]
    """
    from tinygrad_edu.finite_diff import numeric_gradient as core  # the one numeric core

    return core(lambda xs: float(f(*xs)), arrays, eps)


def gradient_mismatch(
    fn: Callable,
    inputs: Sequence,
    grads: Sequence | None = None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-4,
) -> str | None:
    """What is wrong with the gradients of ``fn`` at ``inputs`` (None: they match central
    differences). See :func:`check_gradient` for the arguments."""
    import tinygrad_edu as tg  # local: keep `import tinygrad_course.lessons` light

    arrays = [np.array(_to_numpy(a), dtype=np.float64) for a in inputs]
    if grads is None:

        def call(*xs):
            return fn(*[tg.tensor(x, dtype="float64") for x in xs])
    else:
        call = fn  # fmt: skip
    out = _to_numpy(call(*arrays))
    from tinygrad_edu.finite_diff import random_projection  # noqa: PLC0415

    proj = random_projection(np.shape(out)) if np.size(out) != 1 and grads is None else None

    def scalar(*xs):
        y = np.asarray(_to_numpy(call(*xs)), dtype=np.float64)
        return float(y.sum() if proj is None else (y * proj).sum())

    numeric = numeric_gradient(scalar, arrays, eps)
    if grads is None:
        ts = [tg.tensor(a, requires_grad=True, dtype="float64") for a in arrays]
        y = fn(*ts)
        if not isinstance(y, tg.Tensor) or y.grad_fn is None:
            return ("the function's result has no grad_fn: build it from the tensors it is "
                    "given (tensor ops), not from numpy")  # fmt: skip
        (y if proj is None else (y * tg.tensor(proj, dtype=y.dtype)).sum()).backward()
        analytic = [np.zeros_like(a) if t.grad is None else _to_numpy(t.grad) for a, t in
                    zip(arrays, ts)]  # fmt: skip
    else:
        if len(grads) != len(arrays):
            return f"expected {len(arrays)} gradients (one per input), got {len(grads)}"
        analytic = [np.asarray(_to_numpy(g), dtype=np.float64) for g in grads]
    for i, (a, n) in enumerate(zip(analytic, numeric)):
        a = np.asarray(a, dtype=np.float64)
        if a.shape != n.shape:
            return f"gradient {i} has shape {a.shape}, but input {i} has shape {n.shape}"
        err = np.abs(a - n)
        bad = ~(err <= atol + rtol * np.abs(n))
        if bad.any():
            j = int(np.argmax(np.where(bad, err, -1)))
            where = f" at index {tuple(int(k) for k in np.unravel_index(j, a.shape))}" if a.ndim \
                else ""  # fmt: skip
            return (f"input {i}{where}: analytic {a.flat[j]:.8g}, numeric {n.flat[j]:.8g} "
                    f"(abs error {err.flat[j]:.3g})")  # fmt: skip
    return None


def check_gradient(
    fn: Callable,
    inputs: Sequence,
    grads: Sequence | None = None,
    name: str | None = None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    hint: str = "",
    strict: bool | None = None,
) -> CheckResult:
    r"""Check gradients of ``fn`` at ``inputs`` against central differences.

    Without ``grads``, ``fn`` is called with float64 eager tensors (``tg.tensor(...,
    requires_grad=True)``) and the gradients come from ``backward()``: this checks a function
    built from tensor ops, or a custom ``tg.Function``. With ``grads`` (hand-made derivatives,
    one per input), ``fn`` is called with float64 numpy arrays instead and those gradients are
    checked against those of the sum of its outputs (for an elementwise function, the
    derivative at each point). Without ``grads``, an output with several elements is reduced
    to $\sum_j p_j\,f_j(x)$ with fixed random weights $p$ before ``backward()``, so every
    element is checked (a plain sum would miss errors that cancel).

    Args:
        fn: the function, of one argument per input.
        inputs: the point (numbers, lists or arrays).
        grads: the gradients to check (None: compute them with ``backward()``).
        name: what the message calls the function (default: its ``__name__``).
        eps: the finite-difference step.
        atol, rtol: the tolerance.
        hint: what to look at when the gradients are wrong.
        strict: raise AssertionError on failure (None: see :func:`is_strict`).

    >>> check_gradient(lambda x: (x * x).sum(), [[1.0, 2.0]], strict=False)
    ✅ PASS  gradient of <lambda>: matches central differences (atol=1e-05, rtol=0.0001)
    True
    >>> check_gradient(lambda x: x ** 3, [2.0], grads=[12.0], name="x^3", strict=False)
    ✅ PASS  gradient of x^3: matches central differences (atol=1e-05, rtol=0.0001)
    True
    """
    label = f"gradient of {name or getattr(fn, '__name__', 'fn')}"
    problem = gradient_mismatch(fn, inputs, grads, eps, atol, rtol)
    if problem is None:
        message = f"matches central differences (atol={atol:g}, rtol={rtol:g})"
        return _report(label, PASS, message, "", strict)
    return _report(label, FAIL, problem, hint, strict)
