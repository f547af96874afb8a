"""Lesson 4's exercises: one function in two engines, a data-dependent loop, which form.

>>> [ex.number for ex in EXERCISES]
['4.1', '4.2', '4.3']
"""

from __future__ import annotations

import numpy as np

from .as_built import as_built, later, run
from .checks import gradient_mismatch
from .exercise import NUMPY_ON_GRAPH, Exercise, Verdict, Wrong, diagnose

__all__ = ["EXERCISES", "model", "halve_until_small", "which_form"]

_DETOUR = ("stay with tensor ops (*, +, /, .tanh(), .sum()): going through numpy (.numpy(), "
           "np.*, tg.tensor(...)) cuts the graph, and backward() cannot reach x")  # fmt: skip


# -- 4.1 one function, two engines ------------------------------------------------------------
def _grade_model(fn) -> Verdict:
    import tinygrad_edu as tg  # noqa: PLC0415
    from tinygrad_edu import symbolic as sym  # noqa: PLC0415

    x_val, w_val = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.3, -0.7])
    xv, wv = sym.Variable("x"), sym.Variable("w")
    with as_built({xv: x_val, wv: w_val}) as built:  # m's value, where the Executor is unwritten
        node = fn(xv, wv)
    if not isinstance(node, sym.Node):
        return Verdict(
            False,
            f"with Variables it returned a {type(node).__name__}",
            "use only operators and methods, so Variables give a graph node",
        )
    (value,), engine = run([node], {xv: x_val, wv: w_val}, built)
    t = np.tanh(x_val * w_val)
    mistakes = [
        (np.sum(t * x_val), "the w_i² term is missing"),
        (t * x_val + w_val**2, "m is a number: end with .sum()"),
        (np.sum(t + w_val**2), "tanh(x_i w_i) is multiplied by x_i"),
    ]
    verdict = diagnose(
        value,
        np.sum(t * x_val + w_val**2),
        mistakes,
        "build m from its definition in the lesson, one operation at a time",
        atol=1e-9,
        what="m = ",
    )
    if not verdict.ok:
        return verdict
    if engine is not None:  # a student edition before A1: the forward values in both engines
        eager = np.asarray(fn(tg.tensor(x_val), tg.tensor(w_val)).numpy(), dtype=np.float64)
        if not np.allclose(eager, value, rtol=1e-12, atol=1e-12):
            return Verdict(False, f"the eager engine gives m = {np.round(eager, 6)}, the "
                           f"symbolic one {value:.6g}", _DETOUR)  # fmt: skip
        return Verdict(True, f"m = {value:.6g} in both engines" + later(
            engine, "the gradients (symbolic = eager = central differences)",
            "assignments A1 and A2 are written"))
    gx, gw = sym.Executor(sym.gradients(node, [xv, wv])).run({xv: x_val, wv: w_val})
    xt, wt = tg.tensor(x_val, requires_grad=True), tg.tensor(w_val, requires_grad=True)
    fn(xt, wt).backward()
    ok = np.allclose(gx, xt.grad.numpy(), atol=1e-10) and np.allclose(gw, wt.grad.numpy(),
                                                                      atol=1e-10)  # fmt: skip
    if not ok:
        return Verdict(False, "the symbolic and eager gradients differ", _DETOUR)
    problem = gradient_mismatch(fn, [x_val, w_val])
    if problem:
        return Verdict(False, problem, _DETOUR)
    return Verdict(True, f"m = {value:.6g}; symbolic = eager = central differences")


model = Exercise(
    "4.1", "one function, two engines", _grade_model,
    wrong=[
        Wrong("numpy's tanh", lambda x, w: (np.tanh(x * w) * x + w**2).sum(), NUMPY_ON_GRAPH),
        Wrong("the w² term left out", lambda x, w: ((x * w).tanh() * x).sum(),
              "the w_i² term is missing"),
        Wrong("not summed", lambda x, w: (x * w).tanh() * x + w**2,
              "m is a number: end with .sum()"),
    ],
)  # fmt: skip


# -- 4.2 a data-dependent loop ----------------------------------------------------------------
_SUM_Y = ("your loop stops at the sum of y, which negative entries shrink: the size that decides "
          "is the sum of squares Σ y²")  # fmt: skip
_SUM_ABS = ("your loop stops at the sum of |y|, which is larger than the sum of squares for "
            "entries under 1: the size that decides is Σ y²")  # fmt: skip


def _grade_halve(fn) -> Verdict:
    import tinygrad_edu as tg  # noqa: PLC0415

    # [0.6, 0.6] and [0.9, 0.9, 0.9] tell the sum of squares from the sum of |y| (or of y):
    # Σy² = 0.72 < 1 <= Σ|y| = 1.2, and 2.43 -> 0.61 (one halving) while 2.7 -> 1.35 -> 0.68
    cases = [(np.array([3.0, -4.0]), 3), (np.array([0.3, 0.4]), 0),
             (np.array([0.5, 2.0, -1.0]), 2), (np.array([0.6, 0.6]), 0),
             (np.array([0.9, 0.9, 0.9]), 1)]  # fmt: skip
    for x_val, halvings in cases:
        x = tg.tensor(x_val, requires_grad=True)
        y = fn(x)
        if not isinstance(y, tg.Tensor) or (y is not x and y.grad_fn is None):
            return Verdict(False, f"for x = {x_val}: the result has no grad_fn", _DETOUR)
        # the forward pass decides how many halvings ran (y = x / 2^n); the gradient, once the
        # engine is written, must agree with it
        got = np.asarray(y.detach().numpy(), dtype=np.float64) / x_val
        mistakes = [
            (np.full(x_val.shape, 2.0 ** -(halvings > 0)), "repeat while the condition holds: a "
             "while loop, not an if"),
            (np.full(x_val.shape, 2.0 ** -_count(x_val, lambda y: np.abs(y).sum())), _SUM_ABS),
            (np.full(x_val.shape, 2.0 ** -_count(x_val, lambda y: y.sum())), _SUM_Y),
        ]  # fmt: skip
        verdict = diagnose(
            got,
            np.full(x_val.shape, 2.0**-halvings),
            mistakes,
            f"{halvings} halvings were expected here: count by hand how often Σ y² ≥ 1 holds "
            "before y is small",
            what=f"y / x at x = {x_val}: ",
        )
        if not verdict.ok:
            return verdict
        problem = _gradient_disagrees(x, y, got)
        if problem:
            return Verdict(False, f"for x = {x_val}: {problem}", _DETOUR)
    return Verdict(True, f"y = x / 2^n with the right n for {len(cases)} inputs, and its "
                   "gradient (where the engine is written) agrees")  # fmt: skip


def _gradient_disagrees(x, y, ratio) -> str | None:
    """Whether backward through ``y`` gives d(Σy)/dx other than ``ratio``; None where it
    agrees or where the engine is an unwritten assignment (a student edition's first day)."""
    from .recorded import stub_task  # noqa: PLC0415

    try:
        y.sum().backward()
    except NotImplementedError as error:
        if stub_task(error) is None:
            raise
        return None
    grad = np.zeros_like(ratio) if x.grad is None else x.grad.numpy()
    if np.allclose(grad, ratio):
        return None
    return f"d(Σy)/dx is {np.round(grad, 4)}, not y / x = {np.round(ratio, 4)}"


def _count(x_val, size) -> int:
    """How many halvings a loop on ``size(y) >= 1`` makes (the near misses of 4.2)."""
    y, n = np.array(x_val, dtype=np.float64), 0
    while size(y) >= 1.0 and n < 60:
        y, n = y / 2, n + 1
    return n


def _halve(condition, loop=True):
    def answer(x):
        y = x
        while condition(y):
            y = y / 2
            if not loop:
                break
        return y

    return answer


def _halve_via_numpy(x):
    import tinygrad_edu as tg  # noqa: PLC0415

    y = x
    while (y * y).sum().item() >= 1.0:
        y = tg.tensor(y.detach().numpy() / 2)
    return y


halve_until_small = Exercise(
    "4.2", "a data-dependent loop, eagerly", _grade_halve,
    wrong=[
        Wrong("the condition on Σ y instead of Σ y²", _halve(lambda y: y.sum().item() >= 1.0),
              _SUM_Y),
        Wrong("the condition on Σ |y| instead of Σ y²",
              _halve(lambda y: y.abs().sum().item() >= 1.0),
              _SUM_ABS),
        Wrong("if instead of while", _halve(lambda y: (y * y).sum().item() >= 1.0, loop=False),
              "repeat while the condition holds: a while loop, not an if"),
        Wrong("halving through numpy", _halve_via_numpy,
              "stay with tensor ops (*, +, /, .tanh(), .sum()): going through numpy (.numpy(), "
              "np.*, tg.tensor(...)) cuts the graph, and backward() cannot reach x"),
    ],
)  # fmt: skip


# -- 4.3 which form? --------------------------------------------------------------------------
_FORMS = {
    "beam_search": ("eager", "how many steps run depends on the values (when each sentence "
                    "ends): only eager runs such data-dependent control flow directly"),
    "export_onnx": ("symbolic", "another runtime needs the computation as data, a graph it can "
                    "load without Python: that is the symbolic form"),
    "debug_print": ("eager", "only eager has the values while the forward pass runs"),
    "plan_memory": ("symbolic", "planning before running needs the whole graph in advance"),
}  # fmt: skip


def _grade_forms(fn) -> Verdict:
    answers = fn()
    if not isinstance(answers, dict):
        return Verdict(
            False,
            f"returned a {type(answers).__name__}",
            'return a dict: each situation\'s name -> "eager" or "symbolic"',
        )
    for key, (form, reason) in _FORMS.items():
        got = answers.get(key)
        if got not in ("eager", "symbolic"):
            return Verdict(False, f"{key}: {got!r}", 'answer "eager" or "symbolic" for every '
                           "situation")  # fmt: skip
        if got != form:
            return Verdict(False, f"{key}: {got!r} is not the form that handles it directly",
                           reason)  # fmt: skip
    return Verdict(True, "all four situations matched to their form")


which_form = Exercise(
    "4.3", "which form?", _grade_forms,
    wrong=[
        Wrong("everything eager", lambda: dict.fromkeys(_FORMS, "eager"),
              "another runtime needs the computation as data, a graph it can load without "
              "Python: that is the symbolic form"),
        Wrong("everything symbolic", lambda: dict.fromkeys(_FORMS, "symbolic"),
              "how many steps run depends on the values (when each sentence ends): only eager "
              "runs such data-dependent control flow directly"),
        Wrong("a list", lambda: ["eager", "symbolic", "eager", "symbolic"],
              'return a dict: each situation\'s name -> "eager" or "symbolic"'),
    ],
)  # fmt: skip

EXERCISES = (model, halve_until_small, which_form)
