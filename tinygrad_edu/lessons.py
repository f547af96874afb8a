r"""Helpers for the lesson notebooks: checks that answer at once, and the exercise convention.

An exercise in a lesson notebook is two cells. The first holds the learner's code, with the
reference solution between marker comments; the student edition (``tinygrad-edu
make-student``) replaces everything between the markers with ``raise NotImplementedError``::

    def derivative_of_square(x):
        # BEGIN SOLUTION
        return 2 * x
        # END SOLUTION

The second cell, *after* the solution cell and never inside it, checks the answer::

    check("d(x^2)/dx at x=3", derivative_of_square(3.0), 6.0)

A check prints one line, ✅ when the answer matches and ❌ with what was expected and what was
got otherwise, and returns whether it passed. In *strict* mode a failed check also raises
``AssertionError``, so a notebook run by the test suite fails loudly. Strict mode is on when

- a check is called with ``strict=True``, or :func:`set_strict` was called with True, or
- the environment variable ``TINYGRAD_EDU_STRICT`` is ``1`` (``0`` turns it off), or
- the code runs under pytest (``PYTEST_CURRENT_TEST`` is set; a notebook kernel started by
  ``pytest --nbmake`` inherits it).

>>> check("two plus two", 2 + 2, 4, strict=False)
✅ two plus two: 4
True
>>> check("a slope", 2.5, 3.0, strict=False)
❌ a slope: expected 3, got 2.5 (max abs error 0.5 > tolerance 4e-06)
False
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Sequence

import numpy as np

__all__ = [
    "SOLUTION_BEGIN",
    "SOLUTION_END",
    "CheckResult",
    "check",
    "check_true",
    "check_gradient",
    "numeric_gradient",
    "set_strict",
    "strict",
    "is_strict",
    "results",
    "reset",
    "summary",
    "lint_notebook",
    "pair_problems",
]

SOLUTION_BEGIN = "# BEGIN SOLUTION"
SOLUTION_END = "# END SOLUTION"

_strict: bool | None = None
_results: list[tuple[str, bool]] = []


# -- strict mode ------------------------------------------------------------------------------
def set_strict(flag: bool | None) -> None:
    """Make failed checks raise (True), only print (False), or follow the environment (None)."""
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


def results() -> list[tuple[str, bool]]:
    """Every check run so far, as ``(name, passed)`` pairs in order."""
    return list(_results)


def reset() -> None:
    """Forget the checks run so far."""
    _results.clear()


def summary() -> str:
    """Print and return a one-line tally of the checks run so far."""
    passed = sum(ok for _, ok in _results)
    failed = [name for name, ok in _results if not ok]
    line = f"{passed} of {len(_results)} checks passed"
    if failed:
        line += " (still to do: " + ", ".join(failed) + ")"
    elif _results:
        line += " 🎉"
    print(line)
    return line


class CheckResult:
    """What a check returns: true when it passed (``if check(...)``, ``assert check(...)``).

    The check has already printed its message, so a notebook shows nothing more for it.
    """

    __slots__ = ("name", "passed", "message")

    def __init__(self, name: str, passed: bool, message: str):
        self.name, self.passed, self.message = name, passed, message

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return "True" if self.passed else "False"

    def _ipython_display_(self) -> None:
        pass  # the message was printed already


def _report(name: str, ok: bool, message: str, strict_flag: bool | None) -> CheckResult:
    _results.append((name, ok))
    line = f"{'✅' if ok else '❌'} {name}: {message}"
    print(line)
    if not ok and is_strict(strict_flag):
        raise AssertionError(line)
    return CheckResult(name, ok, line)


# -- values -----------------------------------------------------------------------------------
def _to_numpy(value):
    """Tensors, CuPy arrays, lists and numbers -> numpy (anything else is returned as is)."""
    if hasattr(value, "numpy") and callable(value.numpy):
        return np.asarray(value.numpy())
    if hasattr(value, "get") and hasattr(value, "__cuda_array_interface__"):
        return np.asarray(value.get())
    if isinstance(value, (int, float, np.number, np.ndarray, list, tuple)) and not isinstance(
        value, bool
    ):
        try:
            dtype = None if isinstance(value, np.ndarray) else np.float64
            return np.asarray(value, dtype=dtype)
        except (TypeError, ValueError):
            return value
    return value


def _fmt(value) -> str:
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return f"{value.item():.6g}"
        return np.array2string(value, precision=6, threshold=20, suppress_small=True)
    if isinstance(value, (float, np.floating)):
        return f"{value:.6g}"
    return repr(value)


def check(
    name: str,
    got,
    expected,
    atol: float = 1e-6,
    rtol: float = 1e-6,
    strict: bool | None = None,
) -> CheckResult:
    r"""Compare an answer with the expected value and say at once whether it is right.

    Numbers, lists, numpy arrays and tensors are compared elementwise with
    $|got - expected| \le atol + rtol\,|expected|$ after checking that the shapes agree; other
    values (strings, tuples of names, None) are compared with ``==``.

    Args:
        name: what is being checked, as the learner should read it.
        got: the learner's answer.
        expected: the right answer (computed, not typed in, where possible).
        atol, rtol: absolute and relative tolerance for numbers.
        strict: raise AssertionError on failure (None: see :func:`is_strict`).

    Returns:
        A :class:`CheckResult`, true when the answer matches.

    >>> import numpy as np
    >>> check("doubled", np.array([2.0, 4.0]), [2.0, 4.0], strict=False)
    ✅ doubled: [2. 4.]
    True
    """
    if got is None:
        return _report(name, False, f"got None (expected {_fmt(_to_numpy(expected))}); "
                                    "did the cell above return its answer?", strict)  # fmt: skip
    g, e = _to_numpy(got), _to_numpy(expected)
    if not (isinstance(g, np.ndarray) and isinstance(e, np.ndarray)):
        ok = bool(got == expected)
        msg = repr(got) if ok else f"expected {expected!r}, got {got!r}"
        return _report(name, ok, msg, strict)
    if g.shape != e.shape:
        return _report(name, False, f"expected shape {e.shape}, got shape {g.shape}", strict)
    if g.dtype.kind not in "fciub" or e.dtype.kind not in "fciub":
        ok = bool(np.array_equal(g, e))
        return _report(name, ok, _fmt(g) if ok else f"expected {_fmt(e)}, got {_fmt(g)}", strict)
    g64, e64 = g.astype(np.float64), e.astype(np.float64)
    if np.isnan(g64).any() and not np.isnan(e64).any():
        return _report(name, False, f"got NaN values: {_fmt(g)} (expected {_fmt(e)})", strict)
    err = np.abs(g64 - e64)
    tol = atol + rtol * np.abs(e64)
    if g.size == 0 or bool(np.all((err <= tol) | (np.isnan(g64) & np.isnan(e64)))):
        return _report(name, True, _fmt(g), strict)
    worst = int(np.nanargmax(err - tol))
    msg = (f"expected {_fmt(e)}, got {_fmt(g)} (max abs error {err.flat[worst]:.3g} > "
           f"tolerance {tol.flat[worst]:.3g})")  # fmt: skip
    if g.ndim:
        msg += f"; worst at index {tuple(int(i) for i in np.unravel_index(worst, g.shape))}"
    return _report(name, False, msg, strict)


def check_true(
    name: str, condition, hint: str = "", strict: bool | None = None
) -> CheckResult:
    """Check a yes/no fact (a comparison, an ``isinstance``); ``hint`` says what to look at
    when it is false.

    >>> check_true("3 is odd", 3 % 2 == 1, strict=False)
    ✅ 3 is odd: yes
    True
    """
    ok = bool(condition)
    return _report(name, ok, "yes" if ok else ("no" + (f": {hint}" if hint else "")), strict)


# -- gradients --------------------------------------------------------------------------------
def numeric_gradient(f: Callable, arrays: Sequence, eps: float = 1e-6) -> list[np.ndarray]:
    r"""Central differences of a scalar function of several float64 arrays.

    $$\frac{\partial f}{\partial x_i} \approx \frac{f(x + \epsilon e_i) - f(x - \epsilon e_i)}
    {2\epsilon}$$

    ``f`` is called as ``f(*arrays)`` (copies in float64) and must return a number.

    >>> numeric_gradient(lambda x: float((x ** 3).sum()), [np.array([1.0, 2.0])])
    [array([ 3., 12.])]
    """
    from .grading.gradcheck import numeric_gradient as core  # the one numeric core

    return core(lambda xs: float(f(*xs)), arrays, eps)


def check_gradient(
    fn: Callable,
    inputs: Sequence,
    grads: Sequence | None = None,
    name: str | None = None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    strict: bool | None = None,
) -> CheckResult:
    r"""Check gradients of ``fn`` at ``inputs`` against central differences.

    Without ``grads``, ``fn`` is called with float64 eager tensors (``tg.tensor(...,
    requires_grad=True)``) and the gradients come from ``backward()``: this checks a function
    built from tensor ops, or a custom ``tg.Function``. With ``grads`` (the learner's hand-made
    derivatives, one per input), ``fn`` is called with float64 numpy arrays instead and those
    gradients are checked against those of the sum of its outputs (for an elementwise
    function, the derivative at each point). Without ``grads``, an output with several elements
    is reduced to $\sum_j p_j\,f_j(x)$ with fixed random weights $p$ before ``backward()``, so
    every element is checked (a plain sum would miss errors that cancel).

    Args:
        fn: the function, of one argument per input.
        inputs: the point (numbers, lists or arrays).
        grads: the gradients to check (None: compute them with ``backward()``).
        name: what the message calls the function (default: its ``__name__``).
        eps: the finite-difference step.
        atol, rtol: the tolerance.
        strict: raise AssertionError on failure (None: see :func:`is_strict`).

    >>> check_gradient(lambda x: (x * x).sum(), [[1.0, 2.0]], strict=False)
    ✅ gradient of <lambda>: matches central differences (atol=1e-05, rtol=0.0001)
    True
    >>> check_gradient(lambda x: x ** 3, [2.0], grads=[12.0], name="x^3", strict=False)
    ✅ gradient of x^3: matches central differences (atol=1e-05, rtol=0.0001)
    True
    """
    import tinygrad_edu as tg  # local: keep `import tinygrad_edu.lessons` light

    label = f"gradient of {name or getattr(fn, '__name__', 'fn')}"
    arrays = [np.array(_to_numpy(a), dtype=np.float64) for a in inputs]
    if grads is None:
        def call(*xs):
            return fn(*[tg.tensor(x, dtype="float64") for x in xs])
    else:
        call = fn
    out = _to_numpy(call(*arrays))
    from .grading.gradcheck import random_projection  # noqa: PLC0415

    proj = random_projection(np.shape(out)) if np.size(out) != 1 and grads is None else None

    def scalar(*xs):
        y = np.asarray(_to_numpy(call(*xs)), dtype=np.float64)
        return float(y.sum() if proj is None else (y * proj).sum())

    numeric = numeric_gradient(scalar, arrays, eps)
    if grads is None:
        ts = [tg.tensor(a, requires_grad=True, dtype="float64") for a in arrays]
        y = fn(*ts)
        if not isinstance(y, tg.Tensor) or y.grad_fn is None:
            hint = "build it from the tensors it is given (tensor ops), not from numpy"
            return _report(label, False, f"the function's result has no grad_fn: {hint}", strict)
        (y if proj is None else (y * tg.tensor(proj, dtype=y.dtype)).sum()).backward()
        analytic = [np.zeros_like(a) if t.grad is None else _to_numpy(t.grad) for a, t in
                    zip(arrays, ts)]  # fmt: skip
    else:
        if len(grads) != len(arrays):
            return _report(label, False, f"expected {len(arrays)} gradients (one per input), "
                           f"got {len(grads)}", strict)  # fmt: skip
        analytic = [np.asarray(_to_numpy(g), dtype=np.float64) for g in grads]
    for i, (a, n) in enumerate(zip(analytic, numeric)):
        a = np.asarray(a, dtype=np.float64)
        if a.shape != n.shape:
            return _report(label, False, f"gradient {i} has shape {a.shape}, but input {i} has "
                           f"shape {n.shape}", strict)  # fmt: skip
        err = np.abs(a - n)
        bad = ~(err <= atol + rtol * np.abs(n))
        if bad.any():
            j = int(np.argmax(np.where(bad, err, -1)))
            where = f" at index {tuple(int(k) for k in np.unravel_index(j, a.shape))}" if a.ndim \
                else ""  # fmt: skip
            return _report(label, False, f"input {i}{where}: analytic {a.flat[j]:.8g}, numeric "
                           f"{n.flat[j]:.8g} (abs error {err.flat[j]:.3g})", strict)  # fmt: skip
    return _report(label, True, f"matches central differences (atol={atol:g}, rtol={rtol:g})",
                   strict)


# -- notebooks --------------------------------------------------------------------------------
def _is_marker(line: str, marker: str) -> bool:
    """``# BEGIN SOLUTION``, optionally followed by a label (``# BEGIN SOLUTION A1.3``)."""
    return line == marker or line.startswith(marker + " ")


def lint_notebook(notebook) -> list[str]:
    """Problems with a lesson notebook's exercises (an empty list when there are none).

    Checks the convention: markers come in ``# BEGIN SOLUTION`` / ``# END SOLUTION`` pairs in
    code cells, no solution cell calls ``check*`` itself (the student edition would lose the
    check), and each solution cell is followed, later in the notebook, by a cell that does.

    Args:
        notebook: a path to an ``.ipynb`` file, or the notebook as a dict.
    """
    if not isinstance(notebook, dict):
        with open(notebook, encoding="utf-8") as fh:
            notebook = json.load(fh)
    cells = notebook.get("cells", [])
    problems = []
    pending = None
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        lines = [line.strip() for line in source.splitlines()]
        begins = sum(_is_marker(line, SOLUTION_BEGIN) for line in lines)
        ends = sum(_is_marker(line, SOLUTION_END) for line in lines)
        calls_check = "check(" in source or "check_gradient(" in source or "check_true(" in source
        if begins != ends:
            problems.append(f"cell {index}: {begins} '{SOLUTION_BEGIN}' but {ends} "
                            f"'{SOLUTION_END}' markers")  # fmt: skip
        if begins:
            if calls_check:
                problems.append(f"cell {index}: a solution cell also calls a check; move the "
                                "check into its own cell after it")  # fmt: skip
            if pending is not None:
                problems.append(f"cell {pending}: solution cell has no check cell after it")
            pending = index
        elif calls_check:
            pending = None
    if pending is not None:
        problems.append(f"cell {pending}: solution cell has no check cell after it")
    return problems


def _cell_texts(cells) -> list[tuple[str, str]]:
    return [(c["cell_type"], "".join(c["source"]) if isinstance(c["source"], list)
             else c["source"]) for c in cells]  # fmt: skip


def pair_problems(source) -> list[str]:
    """Differences between a lesson's ``.py`` source and its paired ``.ipynb`` (empty: in sync).

    A lesson is a jupytext percent-format ``.py`` file, the source of truth, paired with an
    ``.ipynb`` that keeps the executed outputs. After editing the ``.py``, run
    ``jupytext --sync notebooks/NN_name.py`` and execute the notebook in place
    (``jupyter nbconvert --to notebook --execute --inplace notebooks/NN_name.ipynb``).

    Args:
        source: the path of the ``.py`` file (the notebook is the same path with ``.ipynb``).
    """
    import pathlib  # noqa: PLC0415

    import jupytext  # noqa: PLC0415  (the notebooks extra)

    source = pathlib.Path(source)
    notebook = source.with_suffix(".ipynb")
    if not notebook.is_file():
        return [f"{notebook.name} is missing: run `jupytext --sync {source}`"]
    with open(notebook, encoding="utf-8") as fh:
        nb = json.load(fh)
    problems = []
    formats = nb.get("metadata", {}).get("jupytext", {}).get("formats")
    if formats != "ipynb,py:percent":
        problems.append(f"{notebook.name} is not paired (jupytext formats {formats!r}); run "
                        f"`jupytext --set-formats ipynb,py:percent {notebook}`")  # fmt: skip
    want, got = _cell_texts(jupytext.read(source).cells), _cell_texts(nb.get("cells", []))
    for i, (w, g) in enumerate(zip(want, got)):
        if w != g:
            first = w[1].splitlines()[0] if w[1] else "(empty)"
            problems.append(f"cell {i} ({w[0]}, starting {first!r}) differs in {notebook.name}")
    if len(want) != len(got):
        problems.append(f"{source.name} has {len(want)} cells, {notebook.name} has {len(got)}")
    if problems:
        problems.append(f"run `jupytext --sync {source}`, then execute the notebook in place")
    return problems
