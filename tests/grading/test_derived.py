"""Derived or measured, decided in the grader from the rule's graph (#35, hole 3).

Counting calls of an op's forward inside the sandbox missed a submission that kept each
forward aside at import and took the complex step with it. A rule now also runs on graph
nodes (``probes_a1.vjp_graph``) and the graph it builds is evaluated here
(:mod:`tinygrad_course.grading.derived`). These tests run the probe in this process, as the
``run`` fixture does at home, with rules patched in, and answer with forged graphs as a child
could.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.assignments import probes_a1 as probes
from tests.assignments import test_a1_symbolic as a1
from tinygrad_course.grading import complex_step_gradient, random_projection
from tinygrad_course.grading.derived import MAX_ELEMENTS, NotDerived, evaluate_rule_graph
from tinygrad_course.grading.probe import call_in_process
from tinygrad_edu.ops import get_op


def _run(probe, **kwargs):
    return call_in_process(probe, kwargs)


def _evaluate(opname, arrays, graph, needs=None, **attrs):
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    out = np.asarray(get_op(opname).forward(np, *arrays, **attrs))
    g = np.asarray(random_projection(out.shape, seed=3))
    leaves = {f"x{i}": a for i, a in enumerate(arrays)} | {"g": g, "out": out}
    needs = needs or [True] * len(arrays)
    watched = [a if n else None for a, n in zip(arrays, needs)]
    return evaluate_rule_graph(graph, leaves, watched, opname), g


def _graph(opname, shapes, needs=None, **attrs):
    return _run(probes.vjp_graph, op=opname, shapes=shapes, needs=needs, attrs=attrs)


CASES = [
    ("add", [(3, 1), (1, 4)], {}),
    ("mul", [(4,), (2, 3, 4)], {}),
    ("exp", [(3, 4)], {}),
    ("log", [(3, 4)], {}),
    ("matmul", [(4, 3), (5, 4)], {"trans_A": True, "trans_B": True}),
    ("sum", [(2, 3, 4)], {"axis": (0, 2), "keepdims": False}),
    ("softmax_cross_entropy", [(5, 4), (5, 4)], {}),
]


@pytest.mark.parametrize("opname, shapes, attrs", CASES, ids=[c[0] for c in CASES])
def test_the_reference_rules_graphs_give_exact_gradients(opname, shapes, attrs):
    rng = np.random.default_rng(0)
    graph = _graph(opname, shapes, **attrs)
    arrays = [rng.uniform(0.2, 2.0, s) for s in shapes]
    if opname == "softmax_cross_entropy":
        arrays[1] = np.eye(4)[rng.integers(0, 4, size=5)]  # labels: rows that sum to one
    grads, g = _evaluate(opname, arrays, graph, **attrs)
    op = get_op(opname)
    forward = a1.COMPLEX_FORWARD.get(opname, lambda *v: op.forward(np, *v, **attrs))
    exact = complex_step_gradient(lambda v: forward(*v), arrays, projection=g)
    for got, want in zip(grads, exact):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
    assert all(isinstance(r[0], str) for r in graph["rows"])


def _patched(monkeypatch, opname, vjp):
    monkeypatch.setattr(type(get_op(opname)), "vjp", vjp)


def test_finite_differences_on_nodes_are_refused(monkeypatch):
    """A rule that builds exp(x + h) - exp(x - h) on nodes evaluates the forward near x."""

    def vjp(self, F, g, inputs, out, shapes, needs):
        (x,) = inputs
        return ((F.exp(x + 1e-6) - F.exp(x - 1e-6)) / 2e-6 * g,)

    _patched(monkeypatch, "exp", vjp)
    graph = _graph("exp", [(3, 4)])
    with pytest.raises(NotDerived, match="moved a little"):
        _evaluate("exp", [np.full((3, 4), 0.5)], graph)


def test_a_perturbation_in_one_element_or_relative_is_refused(monkeypatch):
    """Moving one element by any step, or every element by a factor near 1."""
    bump = np.zeros((3, 4))
    bump[1, 2] = 0.5

    def one_element(self, F, g, inputs, out, shapes, needs):
        (x,) = inputs
        return ((F.log(x + bump) - F.log(x)) / 0.5 * g,)

    def relative(self, F, g, inputs, out, shapes, needs):
        (x,) = inputs
        return ((F.log(x * 1.0000001) - F.log(x)) / (x * 1e-7) * g,)

    for rule in (one_element, relative):
        _patched(monkeypatch, "log", rule)
        with pytest.raises(NotDerived, match="moved a little"):
            _evaluate("log", [np.full((3, 4), 0.5)], _graph("log", [(3, 4)]))


def test_the_complex_step_in_a_graph_is_refused():
    """A forged graph: exp(x0 + 1e-100j); a complex constant is refused outright, and so is
    any complex value (a cast to complex)."""
    rows = [["placeholder", [], {}, "x0"], ["constant", [], {}, np.asarray(1e-100j)],
            ["add", [0, 1], {}, None], ["exp", [2], {}, None]]  # fmt: skip
    x = np.full((2,), 0.5)
    with pytest.raises(NotDerived, match="complex"):
        evaluate_rule_graph({"rows": rows, "grads": [3]}, {"x0": x}, [x], "exp")
    rows = [["placeholder", [], {}, "x0"], ["astype", [0], {"dtype": "complex128"}, None]]
    with pytest.raises(NotDerived, match="complex|not one of"):
        evaluate_rule_graph({"rows": rows, "grads": [1]}, {"x0": x}, [x], "exp")


@pytest.mark.parametrize(
    "rows, grads, match",
    [
        ([["add", [0, 1], {}, None]], [0], "does not come before"),
        ([["placeholder", [], {}, "/etc/passwd"]], [0], "not one of the rule's arguments"),
        ([["placeholder", [], {}, "x0"], ["uniform_random", [0], {}, None]], [1], "not one of"),
        ([["constant", [], {}, "text"]], [0], "not a number"),
        ([["placeholder", [], {}, "x0"]], [7], "not a graph node"),
        ([["placeholder", [], {}, "x0"],
          ["broadcast_to", [0], {"shape": (1 << 12, 1 << 12, 4)}, None]], [1], "elements"),
        ([["placeholder", [], {}, "x0"]] * 20_001, [0], "nodes"),
    ],
    ids=["forward-reference", "unknown-leaf", "op-not-allowed", "text-constant",
         "dangling-gradient", "huge-broadcast", "too-many-rows"],
)  # fmt: skip
def test_a_forged_or_malformed_graph_is_the_rules_failure(rows, grads, match):
    x = np.full((4,), 0.5)
    with pytest.raises(NotDerived, match=match):
        evaluate_rule_graph({"rows": rows, "grads": grads}, {"x0": x}, [x], "exp")
    assert MAX_ELEMENTS < (1 << 12) * (1 << 12) * 4


def test_a_graph_cannot_change_a_leaf_in_place():
    """The leaves the graph reads are copies no op can write: the grader's arrays (and the
    point it checks at) stay as they were."""
    x = np.full((4,), 0.5)
    rows = [["placeholder", [], {}, "x0"], ["exp", [0], {}, None]]
    grads = evaluate_rule_graph({"rows": rows, "grads": [1]}, {"x0": x}, [x], "exp")
    assert not grads[0].flags.writeable or grads[0] is not x
    with pytest.raises(ValueError):
        evaluate_rule_graph({"rows": rows, "grads": [1]}, {"x0": x}, [x], "exp")[0][0] = 1.0
    assert np.all(x == 0.5)


def test_a_table_of_the_known_points_fails_at_unseen_points(monkeypatch):
    """The test's points are in its source (the student has it): a child that answers with a
    graph looking its inputs up in a table of those points is exact there, and wrong at the
    points drawn afresh, which it never sees."""
    seen = {}

    def forged_graph(op, shapes, needs=None, attrs=None):
        # where(equal(x, p_k), exact_k, ...) over the points the test will use
        rows = [["placeholder", [], {}, "x0"], ["placeholder", [], {}, "g"]]
        rows.append(["mul", [1, 1], {}, None])  # a fallback: wrong everywhere
        last = 2
        for point in seen["points"]:
            p = len(rows)
            rows += [["constant", [], {}, point], ["equal", [0, p], {}, None],
                     ["exp", [p], {}, None], ["mul", [p + 2, 1], {}, None],
                     ["where", [p + 1, p + 3, last], {}, None]]  # fmt: skip
            last = p + 4
        return {"rows": rows, "grads": [last]}

    rng = np.random.default_rng(a1.zlib.crc32(b"exp 1"))
    first = a1._rng(5).uniform(0.2, 2.0, size=(3, 4))
    seen["points"] = [first] + [a1.DOMAINS["exp"](rng, (3, 4)) for _ in range(a1.EXTRA_POINTS)]

    def run(probe, **kwargs):
        if probe is probes.vjp_graph:
            return forged_graph(**kwargs)
        return _run(probe, **kwargs)

    with pytest.raises(AssertionError, match="exact to 1e-12"):
        a1.check_rule(run, "exp", [first], domain="exp")


def test_a_rule_that_measures_on_arrays_and_builds_another_graph_fails(monkeypatch):
    """A rule that tells arrays from nodes: on arrays the complex step (numpy's log kept
    aside), exact to the last digits; on nodes some graph that is not the derivative. Points
    need both, so the measured half earns nothing (a correct graph would be the derivation)."""
    log = np.log

    def vjp(self, F, g, inputs, out, shapes, needs):
        (x,) = inputs
        if isinstance(x, np.ndarray):
            grad = np.zeros(x.shape)
            for i in range(x.size):
                step = np.array(x, dtype=np.complex128)
                step.flat[i] += 1e-100j
                grad.flat[i] = np.sum(g * log(step)).imag / 1e-100
            return (grad,)
        return (g * out,)

    _patched(monkeypatch, "log", vjp)
    with pytest.raises(AssertionError, match="on graph nodes.*exact to 1e-12"):
        a1.check_rule(_run, "log", [np.full((3, 4), 0.5) + np.arange(12).reshape(3, 4)],
                      domain="positive")  # fmt: skip


def test_the_complex_step_with_the_forward_kept_aside_earns_nothing(monkeypatch):
    """The submission of #35's hole 3, in this process: the forward kept aside (no wrapper
    sees it called), the complex step exact to the last digits. It cannot run on nodes."""
    forward = type(get_op("exp")).forward

    def vjp(self, F, g, inputs, out, shapes, needs):
        x = np.array(inputs[0], dtype=np.complex128)
        grad = np.zeros(x.shape)
        for i in range(x.size):
            step = x.copy()
            step.flat[i] += 1e-100j
            grad.flat[i] = np.sum(g * forward(self, np, step)).imag / 1e-100
        return (grad,)

    _patched(monkeypatch, "exp", vjp)
    with pytest.raises(AssertionError, match="graph nodes"):
        a1.check_rule(_run, "exp", [np.full((3, 4), 0.5)], domain="exp")


def test_a_graph_that_would_keep_the_grader_busy_is_refused_before_it_runs():
    """A lost grade for everyone: a forged graph of large matrix products would hold the
    grader (which grades every test of the submission, and in grade-batch the next ones).
    The work of each node is counted from the shape rules before it is computed."""
    x = np.ones((1000, 1000))
    rows = [["placeholder", [], {}, "x0"], ["matmul", [0, 0], {}, None]]
    with pytest.raises(NotDerived, match="reads and writes more than"):
        evaluate_rule_graph({"rows": rows, "grads": [1]}, {"x0": x}, [None], "matmul")
