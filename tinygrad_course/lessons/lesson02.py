"""Lesson 2's exercises: a graph and its gradients, predicting the Σ nodes, a second derivative.

>>> [ex.number for ex in EXERCISES]
['2.1', '2.2', '2.3']
"""

from __future__ import annotations

import numpy as np

from .as_built import as_built, later, run
from .checks import gradient_mismatch
from .exercise import NUMPY_ON_GRAPH, Exercise, Verdict, Wrong, diagnose

__all__ = ["EXERCISES", "build_loss", "predicted_adjoint_sums", "second_derivative"]


def _sym():
    from tinygrad_edu import symbolic  # noqa: PLC0415

    return symbolic


def _not_a_node(value) -> Verdict | None:
    if not isinstance(value, _sym().Node):
        return Verdict(False, f"returned a {type(value).__name__}, not a graph node",
                       "build the result from the Variables with the library's ops (+, *, "
                       ".exp(), .log(), reduce_sum) and return that node")  # fmt: skip
    return None


# -- 2.1 a graph and its gradients ------------------------------------------------------------
def _grade_build_loss(fn) -> Verdict:
    sym = _sym()
    a, b = sym.Variable("a"), sym.Variable("b")
    av, bv = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -0.5])
    with as_built({a: av, b: bv}) as built:  # q's value, where the Executor is unwritten
        q = fn(a, b)
    bad = _not_a_node(q)
    if bad:
        return bad
    (value,), engine = run([q], {a: av, b: bv}, built)
    ab = av * bv
    mistakes = [
        (np.sum(np.log1p(np.exp(ab))), "the a_i² term is missing"),
        (np.sum(ab + av**2), "log(1 + e^(ab)), not log(e^(ab)): add the 1 inside the log"),
        (np.log1p(np.exp(ab)) + av**2, "q is a number: sum the terms with reduce_sum"),
        (np.sum(np.log(np.exp(ab)) + 1 + av**2), "the 1 goes inside the log: log(1 + e^(ab))"),
    ]  # fmt: skip
    verdict = diagnose(
        value,
        np.sum(np.log1p(np.exp(ab)) + av**2),
        mistakes,
        "build q from its definition in the lesson, one operation at a time",
        atol=1e-9,
        what="q = ",
    )
    if not verdict.ok:
        return verdict
    if engine is not None:  # a student edition before A1: the learner's graph, not its gradient
        return Verdict(True, verdict.message + later(engine, "its gradient graph"))
    qa, qb = sym.gradients(q, [a, b])
    grads = sym.Executor([qa, qb]).run({a: av, b: bv})

    def forward(x, y):
        return sym.Executor([q]).run({a: x, b: y})[0]

    problem = gradient_mismatch(forward, [av, bv], grads=grads)
    if problem:
        return Verdict(False, f"the gradient graph: {problem}", "build q from the library's ops "
                       "only, so gradients() can differentiate every step")  # fmt: skip
    return Verdict(True, f"q = {value:.6g}; its gradient graph matches central differences")


def _loss(log_one=True, square=True, total=True):
    def build(a, b):
        inner = (a * b).exp()
        term = ((1 + inner) if log_one else inner).log()
        if square:
            term = term + a * a
        return _sym().reduce_sum(term) if total else term

    return build


build_loss = Exercise(
    "2.1", "a graph and its gradients", _grade_build_loss,
    wrong=[
        Wrong("the a² term left out", _loss(square=False), "the a_i² term is missing"),
        Wrong("log(e^(ab)) without the 1", _loss(log_one=False),
              "log(1 + e^(ab)), not log(e^(ab)): add the 1 inside the log"),
        Wrong("numpy's log on a node", lambda a, b: np.log(1 + (a * b).exp()),
              NUMPY_ON_GRAPH),
        Wrong("not summed", _loss(total=False), "q is a number: sum the terms with reduce_sum"),
    ],
)  # fmt: skip


# -- 2.2 predict the Σ nodes ------------------------------------------------------------------
def _counted_sums() -> int:
    sym = _sym()
    a, b, c = sym.Variable("a"), sym.Variable("b"), sym.Variable("c")
    u = a * b
    r = sym.reduce_sum(u * c + u + a * a)
    return sum(n.is_adjoint_sum for n in sym.topo_sort(sym.gradients(r, [a, b, c])))


def _grade_sums(fn) -> Verdict:
    guess = fn()
    if not isinstance(guess, (int, np.integer)) or isinstance(guess, bool):
        return Verdict(False, f"returned {guess!r}", "return a whole number (an int)")
    mistakes = [
        (2, "a is used three times: once by a * b and twice by a * a"),
        (7, "count additions, not uses: a value used k times needs k - 1 additions"),
        (1, "intermediate values count too, and a * a uses a twice"),
    ]
    return diagnose(
        int(guess),
        predicted_adjoint_sums.values(),  # recorded in a student edition, before A1 is written
        mistakes,
        "count the uses of a, b, c and u; a value used k times needs k - 1 additions",
        what="adjoint-sum nodes: ",
    )


predicted_adjoint_sums = Exercise(
    "2.2", "predict the Σ nodes", _grade_sums, expected=_counted_sums,
    wrong=[
        Wrong("a * a counted as one use", lambda: 2,
              "a is used three times: once by a * b and twice by a * a"),
        Wrong("every use counted", lambda: 7,
              "count additions, not uses: a value used k times needs k - 1 additions"),
        Wrong("a float", lambda: 3.0, "return a whole number (an int)"),
    ],
)  # fmt: skip


# -- 2.3 a second derivative ------------------------------------------------------------------
def _grade_second(fn) -> Verdict:
    sym = _sym()
    s = sym.Variable("s")
    y = s**3 * sym.exp(s)
    node = fn(y, s)
    if isinstance(node, (list, tuple)):
        return Verdict(False, f"returned a {type(node).__name__}",
                       "gradients() returns a list, one node per variable you asked "
                       "for: unpack the one node from it and return that node")  # fmt: skip
    bad = _not_a_node(node)
    if bad:
        return bad
    xs = np.array([-2.0, -0.5, 0.0, 1.0, 1.5])
    (got,) = sym.Executor([node]).run({s: xs})
    mistakes = [
        ((xs**3 + 3 * xs**2) * np.exp(xs), "that is the first derivative: call gradients "
         "again, on the gradient node"),
        ((xs**3 + 3 * xs**2) * np.exp(xs) * 2, "differentiate the first derivative, not y twice"),
    ]  # fmt: skip
    return diagnose(got, (xs**3 + 6 * xs**2 + 6 * xs) * np.exp(xs), mistakes,
                    "check the derivative at one point by hand: d/dx (x³eˣ) = (x³ + 3x²)eˣ, "
                    "and the second differentiates that", atol=1e-9,
                    what="d²/dx² x³eˣ at 5 points: ")  # fmt: skip


def _first_only(y, x):
    (dy,) = _sym().gradients(y, [x])
    return dy


def _as_list(y, x):
    (dy,) = _sym().gradients(y, [x])
    return _sym().gradients(dy, [x])


second_derivative = Exercise(
    "2.3", "a second derivative", _grade_second,
    wrong=[
        Wrong("only one gradients() call", _first_only,
              "that is the first derivative: call gradients again, on the gradient node"),
        Wrong("the list gradients() returns", _as_list,
              "gradients() returns a list, one node per variable you asked for: unpack the one "
              "node from it and return that node"),
    ],
)  # fmt: skip

EXERCISES = (build_loss, predicted_adjoint_sums, second_derivative)
