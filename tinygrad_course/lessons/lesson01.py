"""Lesson 1's exercises: the central difference, a derivative by the chain rule, one neuron.

>>> [ex.number for ex in EXERCISES]
['1.1', '1.2', '1.3']
"""

from __future__ import annotations

import numpy as np

from .checks import gradient_mismatch
from .exercise import Exercise, Verdict, Wrong, diagnose

__all__ = ["EXERCISES", "central_difference", "dh_dx", "neuron_gradients"]


# -- 1.1 the central difference ---------------------------------------------------------------
def _reference_central_difference(f, x, eps=1e-6):
    """Exercise 1.1's answer, for the teaching cells until the learner's passes (the student
    edition holds no copy: its markers strip it)."""
    # BEGIN SOLUTION
    return (f(x + eps) - f(x - eps)) / (2 * eps)
    # END SOLUTION


_reference_central_difference.__name__ = "central_difference"


def _grade_central_difference(fn) -> Verdict:
    def cube(x):
        return x**3

    xs = np.linspace(-2.0, 2.0, 5)
    # at x = 2 with eps = 0.1 the central difference of x^3 is 12 + eps^2 = 12.01 exactly, and
    # every mistake differs clearly: forward 12.61, /eps 24.02, *eps 0.0601, eps ignored 12.0
    # (the anticipated mistakes are central_difference's recorded wrong answers: the check
    # recognises them; a formula for each here would be the solution with one token changed)
    eps, x0 = 0.1, 2.0
    verdict = diagnose(fn(cube, x0, eps), 12.01, [],
                       "compare with the formula in the lesson, term by term, at eps=0.1",
                       atol=1e-9, what="x^3 at 2 with eps=0.1: ")  # fmt: skip
    if not verdict.ok:
        return verdict
    got = fn(np.sin, xs.copy())
    verdict = diagnose(got, np.cos(xs), [], "make it work for arrays: use numpy operations "
                       "on x as a whole, no Python loop or float()", atol=1e-8,
                       what="sin at 5 points (an array): ")  # fmt: skip
    if not verdict.ok:
        return verdict
    return Verdict(True, "12.01 for x^3 at 2 (eps=0.1), cos(x) for sin on an array of 5 points")


central_difference = Exercise(
    "1.1", "the central difference", _grade_central_difference,
    more=[
        ("forward difference",
         "a central difference evaluates f at two points placed symmetrically around x",
         "with points x - eps and x + eps, the slope between them is the rise over the run: "
         "how far apart are they?"),
        ("twice the right value",
         "the two points x - eps and x + eps are 2·eps apart, not eps",
         "divide the difference of the two values by the whole distance between the two points"),
        ("use the eps argument",
         "the check calls your function with eps=0.1; a step written as a number ignores it",
         "every step and the divisor must be written with the name eps"),
        ("precedence",
         "a / b * c is (a / b) * c in Python",
         "put the whole divisor in parentheses"),
    ],
    wrong=[
        Wrong("the forward difference", lambda f, x, eps=1e-6: (f(x + eps) - f(x)) / eps,
              "that is the forward difference: it steps one way only, so its error is of order "
              "eps"),
        Wrong("divided by eps", lambda f, x, eps=1e-6: (f(x + eps) - f(x - eps)) / eps,
              "twice the right value: how far apart are the two points you step to?"),
        Wrong("eps ignored (a fixed step)",
              lambda f, x, eps=1e-6: (f(x + 1e-6) - f(x - 1e-6)) / 2e-6,
              "that is the exact derivative, not the central difference with the eps you are "
              "given (0.1 here): use the eps argument, not a step of your own"),
        Wrong("'/ 2 * eps' (precedence)",
              lambda f, x, eps=1e-6: (f(x + eps) - f(x - eps)) / 2 * eps,
              "operator precedence: '/ 2 * eps' divides by 2 and then multiplies by eps"),
    ],
    fallback=_reference_central_difference,
)  # fmt: skip


# -- 1.2 a derivative by the chain rule -------------------------------------------------------
def _h(x):
    return np.exp(-(x**2) / 2) * np.tanh(x)


_DH_POINTS = (-1.5, -0.3, 0.0, 0.7, 2.0)


def _reference_dh_dx(x):
    """Exercise 1.2's answer (stripped from the student edition, whose check compares with
    its values at the check's points, recorded when the edition is made)."""
    # BEGIN SOLUTION
    gauss = np.exp(-(x**2) / 2)
    return -x * gauss * np.tanh(x) + gauss * (1 - np.tanh(x) ** 2)
    # END SOLUTION


def _dh_dx_expected() -> list:
    return _reference_dh_dx(np.array(_DH_POINTS)).tolist()


def _grade_dh_dx(fn) -> Verdict:
    points = np.array(_DH_POINTS)
    got = fn(points.copy())
    problem = None
    if np.shape(got) == points.shape:
        problem = gradient_mismatch(_h, [points], grads=[got])
    # the anticipated mistakes are dh_dx's recorded wrong answers: the check recognises them
    verdict = diagnose(got, np.array(dh_dx.values()), [], "differentiate each factor and "
                       "combine them with the product rule", atol=1e-7,
                       what="at x = [-1.5, -0.3, 0, 0.7, 2]: ")  # fmt: skip
    if verdict.ok and problem is None:
        return Verdict(True, "matches central differences at 5 points")
    return verdict


dh_dx = Exercise(
    "1.2", "a derivative by the chain rule", _grade_dh_dx, expected=_dh_dx_expected,
    more=[
        ("product rule",
         "(u·v)' = u'·v + u·v': your answer has one of the two terms",
         "u = e^(-x²/2) and v = tanh(x): write u' and v' on their own first, then add both "
         "products"),
        ("inner derivative",
         "e^(g(x)) differentiates to e^(g(x))·g'(x): what is g'(x) for g(x) = -x²/2?",
         "check the factor multiplying e^(-x²/2) in the first term: it comes from g'(x)"),
        ("squared",
         "tanh' is written with tanh itself: 1 minus tanh squared",
         "compare your tanh' at x = 1 with (tanh(1 + 1e-6) - tanh(1 - 1e-6)) / 2e-6"),
    ],
    wrong=[
        Wrong("only one term of the product rule",
              lambda x: np.exp(-(x**2) / 2) * (1 - np.tanh(x) ** 2),
              "product rule: both factors depend on x, so (uv)' = u'v + uv'; you have only u v'"),
        Wrong("the inner derivative forgotten",
              lambda x: -np.exp(-(x**2) / 2) * np.tanh(x)
              + np.exp(-(x**2) / 2) * (1 - np.tanh(x) ** 2),
              "chain rule: e^(-x²/2) is e raised to a function of x, so its derivative carries the "
              "derivative of that inner function, which is missing here"),
        Wrong("tanh' as 1 - tanh", lambda x: -x * np.exp(-(x**2) / 2) * np.tanh(x)
              + np.exp(-(x**2) / 2) * (1 - np.tanh(x)),
              "tanh' is written with tanh squared: yours uses tanh itself, not its square"),
    ],
)  # fmt: skip


# -- 1.3 one neuron ---------------------------------------------------------------------------
def _neuron_autograd(x, w, b, t):
    import tinygrad_edu as tg  # noqa: PLC0415

    wt = tg.tensor(w, requires_grad=True, dtype="float64")
    bt = tg.tensor(b, requires_grad=True, dtype="float64")
    (((wt * x + bt).sigmoid() - t) ** 2).backward()
    return wt.grad.item(), bt.grad.item()


_NEURON_POINTS = [(1.5, -0.4, 0.2, 1.0), (-0.7, 1.3, -0.5, 0.0)]


def _neuron_expected() -> list:
    """backward()'s (dL/dw, dL/db) at each point (recorded in a student edition: on day one
    its engine is the student's unwritten A2)."""
    return [list(_neuron_autograd(*point)) for point in _NEURON_POINTS]


def _grade_neuron(fn) -> Verdict:
    expected = neuron_gradients.values()
    for (x, w, b, t), want in zip(_NEURON_POINTS, expected, strict=True):
        got = fn(x, w, b, t)
        if not (isinstance(got, (tuple, list)) and len(got) == 2):
            return Verdict(False, f"returned {got!r}", "return a pair: (dL_dw, dL_db)")
        got = tuple(float(np.asarray(v)) for v in got)
        # the anticipated mistakes are neuron_gradients's recorded wrong answers: the check
        # recognises them (a formula for each here would spell the solution's factors)
        verdict = diagnose(got, tuple(want), [],
                           "chain rule: multiply the derivatives of each step from L back "
                           "to w (and to b), one factor per step",
                           atol=1e-10, what=f"at x={x}, w={w}, b={b}, t={t}: ")  # fmt: skip
        if not verdict.ok:
            return verdict
    return Verdict(True, "matches backward() at two points")


def _neuron(scale_dl=1.0, sigmoid=True, times_x=True, swap=False):
    def answer(x, w, b, t):
        s = 1 / (1 + np.exp(-(w * x + b)))
        dz = scale_dl * (s - t) * (s * (1 - s) if sigmoid else 1.0)
        pair = (dz * (x if times_x else 1.0), dz)
        return pair[::-1] if swap else pair

    return answer


neuron_gradients = Exercise(
    "1.3", "one neuron, by hand", _grade_neuron, expected=_neuron_expected,
    more=[
        ("factor 2",
         "L = (y - t)²: differentiate the square before anything else",
         "dL/dy is twice (y - t); every later factor multiplies it"),
        ("σ'(z)",
         "y = σ(z), so dL/dz = dL/dy · dy/dz: dy/dz is not 1",
         "σ'(z) is written with y itself: y times (1 - y)"),
        ("in that order",
         "the check unpacks your result as dL_dw, dL_db = ...",
         "dL/dw is the one with x in it: return it first"),
        ("multiply dL/dz by x",
         "z depends on w through its product with x: dz/dw is x, and dz/db is 1",
         "dL/dw is dL/dz times dz/dw; dL/db is dL/dz times dz/db"),
    ],
    wrong=[
        Wrong("the factor 2 of the square forgotten", _neuron(scale_dl=1.0),
              "d(y - t)²/dy = 2 (y - t): the factor 2 is missing"),
        Wrong("the sigmoid's derivative forgotten", _neuron(2.0, sigmoid=False),
              "the sigmoid's derivative σ'(z) = σ(z)(1 - σ(z)) is missing"),
        Wrong("dL/dw and dL/db swapped", _neuron(2.0, swap=True),
              "the pair is (dL/dw, dL/db), in that order"),
        Wrong("the x of dL/dw forgotten", _neuron(2.0, times_x=False),
              "∂z/∂w = x: multiply dL/dz by x for dL/dw"),
    ],
)  # fmt: skip

EXERCISES = (central_difference, dh_dx, neuron_gradients)
