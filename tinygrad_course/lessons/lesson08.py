"""Lesson 8's exercises: a gradient graph in CSE599W's names, a tiny ONNX runtime, the
Executor's order by hand.

>>> [ex.number for ex in EXERCISES]
['8.1', '8.2', '8.3']
"""

from __future__ import annotations

import numpy as np

from .as_built import graph_data, rebuilt
from .exercise import DEEP_RECURSION, NUMPY_ON_GRAPH, Exercise, Verdict, Wrong, diagnose

__all__ = ["EXERCISES", "q_and_gradients", "run_listing", "topo_order", "KERNELS"]


def _ad():
    from tinygrad_edu.symbolic import cse599w  # noqa: PLC0415

    return cse599w


# -- 8.1 a gradient graph ---------------------------------------------------------------------
def _grade_q(fn) -> Verdict:
    a_val, b_val = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -0.5])
    got = fn(a_val.copy(), b_val.copy())
    if not (isinstance(got, (list, tuple)) and len(got) == 3):
        return Verdict(
            False,
            f"returned {type(got).__name__}",
            "return the three values q, dq/da, dq/db (what Executor.run gives)",
        )
    if any(isinstance(v, _ad().Node) for v in got):
        return Verdict(False, "returned graph nodes", "run the nodes with an ad.Executor and "
                       "return the numbers")  # fmt: skip
    t = np.tanh(a_val * b_val)
    sech2 = 1 - t**2
    q = np.sum(t + a_val**2)
    expected = [q, sech2 * b_val + 2 * a_val, sech2 * a_val]
    mistakes = [
        ([q, sech2 * a_val, sech2 * b_val + 2 * a_val], "return them in the order q, dq/da, "
         "dq/db (ad.gradients(q, [a, b]) gives [da, db])"),
        ([np.sum(t), sech2 * b_val, sech2 * a_val], "the a_i² term is missing"),
    ]  # fmt: skip
    flat = np.concatenate([np.ravel(np.asarray(v, dtype=np.float64)) for v in got]) \
        if all(np.size(v) for v in got) else None  # fmt: skip
    want = np.concatenate([np.ravel(v) for v in expected])
    wrong = [(np.concatenate([np.ravel(v) for v in m]), h) for m, h in mistakes]
    return diagnose(flat, want, wrong, "build q as lesson 2 defines it, then ask "
                    "ad.gradients for both derivatives", atol=1e-9,
                    what="q, dq/da, dq/db, one after the other: ")  # fmt: skip


def _q(square=True, swap=False):
    def answer(a_val, b_val):
        ad = _ad()
        a, b = ad.Variable("a"), ad.Variable("b")
        q = ad.reduce_sum((a * b).tanh() + a * a) if square else ad.reduce_sum((a * b).tanh())
        da, db = ad.gradients(q, [a, b])
        out = ad.Executor([q, da, db]).run(feed_dict={a: a_val, b: b_val})
        return [out[0], out[2], out[1]] if swap else out

    return answer


q_and_gradients = Exercise(
    "8.1", "a gradient graph", _grade_q,
    wrong=[
        Wrong("the gradients swapped", _q(swap=True),
              "return them in the order q, dq/da, dq/db (ad.gradients(q, [a, b]) gives [da, "
              "db])"),
        Wrong("the a² term left out", _q(square=False), "the a_i² term is missing"),
        Wrong("numpy's tanh on a node", lambda a_val, b_val: np.tanh(_ad().Variable("a")),
              NUMPY_ON_GRAPH),
    ],
)  # fmt: skip


# -- 8.2 a tiny ONNX runtime ------------------------------------------------------------------
KERNELS = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
    "MatMul": np.matmul, "Exp": np.exp, "Tanh": np.tanh, "Relu": lambda v: np.maximum(v, 0),
    "Sigmoid": lambda v: 1 / (1 + np.exp(-v)),
}  # fmt: skip


def _node(op, inputs, output):
    return {"op_type": op, "input": inputs, "output": [output], "attribute": {}}


# sigmoid(relu(X @ W + B) * 0.5), and (tanh(X) - exp(X * 0.5), sigmoid(...)) with two outputs
_LISTING = {
    "input": ["X", "W", "B"], "initializer": {"c0": 0.5},
    "node": [_node("MatMul", ["X", "W"], "v0"), _node("Add", ["v0", "B"], "v1"),
             _node("Relu", ["v1"], "v2"), _node("Mul", ["v2", "c0"], "v3"),
             _node("Sigmoid", ["v3"], "v4"), _node("Tanh", ["X"], "v5"),
             _node("Mul", ["X", "c0"], "v6"), _node("Exp", ["v6"], "v7"),
             _node("Sub", ["v5", "v7"], "v8")],
    "output": ["v4"],
}  # fmt: skip


def _listing(outputs):
    return {**_LISTING, "output": list(outputs)}


def _feeds():
    return {"X": np.array([[1.0, -2.0], [0.5, 0.5]]), "W": np.array([[1.0, 2.0], [-1.0, 0.5]]),
            "B": np.array([0.1, -0.2])}  # fmt: skip


def _expected(feeds):
    x, w, b = feeds["X"], feeds["W"], feeds["B"]
    prob = 1 / (1 + np.exp(-np.maximum(x @ w + b, 0) * 0.5))
    return prob, np.tanh(x) - np.exp(x * 0.5)


def _grade_listing(fn) -> Verdict:
    feeds = _feeds()
    prob, other = _expected(feeds)
    for outputs, expected in [(["v4"], [prob]), (["v8", "v4"], [other, prob])]:
        got = fn(_listing(outputs), {k: v.copy() for k, v in feeds.items()})
        if not isinstance(got, (list, tuple)):
            return Verdict(
                False,
                f"returned a {type(got).__name__}",
                "return a list: the values named in graph['output'], in that order",
            )
        if len(got) != len(expected):
            return Verdict(
                False,
                f"outputs {outputs}: returned {len(got)} values",
                "return one value per name in graph['output'], in that order",
            )
        for name, g, e in zip(outputs, got, expected):
            last = [
                (other, "return the values named in graph['output'], not the last node's value")
            ]
            verdict = diagnose(g, e, last, "compute each node from its inputs' values, in the "
                               "listed order, with KERNELS[node['op_type']]", atol=1e-12,
                               what=f"output {name}: ")  # fmt: skip
            if not verdict.ok:
                return verdict
    return Verdict(True, "matches the computation for one output and for two")


def _run(graph, feeds, initializers=True, last_only=False):
    values = dict(feeds)
    if initializers:
        values.update({k: np.asarray(v) for k, v in graph["initializer"].items()})
    for node in graph["node"]:
        values[node["output"][0]] = KERNELS[node["op_type"]](*[values[n] for n in node["input"]])
    if last_only:
        return [values[graph["node"][-1]["output"][0]]]
    return [values[name] for name in graph["output"]]


run_listing = Exercise(
    "8.2", "a tiny ONNX runtime", _grade_listing,
    wrong=[
        Wrong("the initializers left out", lambda g, f: _run(g, f, initializers=False),
              "start `values` with the feeds and the initializers (graph['initializer'], as "
              "arrays)"),
        Wrong("the last node's value instead of the outputs",
              lambda g, f: _run(g, f, last_only=True),
              "return the values named in graph['output'], not the last node's value"),
        Wrong("a dict of every value", lambda g, f: dict(zip(g["output"], _run(g, f))),
              "return a list: the values named in graph['output'], in that order"),
    ],
    hints=[("KeyError", "c0", "start `values` with the feeds and the initializers "
            "(graph['initializer'], as arrays)"),
           ("KeyError", "", "a name is missing from `values`: it starts with the feeds and the "
            "initializers, and every node adds its output")],
)  # fmt: skip


# -- 8.3 the Executor's order, by hand --------------------------------------------------------
def _graph():
    ad = _ad()
    x, w = ad.Variable("x"), ad.Variable("w")
    z = ad.reduce_sum(x * w + ad.exp(x))
    grad_x, grad_w = ad.gradients(z, [x, w])
    return [z, grad_x, grad_w]


def _topo_graph() -> dict:
    """The gradient graph of :func:`_graph` as data (recorded in a student edition, where
    ``gradients()`` is unwritten before A1), its nodes sorted by name: no order of it given."""
    outputs = _graph()
    return graph_data(_ad().Executor(outputs).topo_order, outputs, order=False)


def _grade_topo(fn) -> Verdict:
    from .recorded import stub_task  # noqa: PLC0415

    try:
        outputs = _graph()
        expected = _ad().Executor(outputs).topo_order
    except NotImplementedError as error:  # a student edition before A1: the same graph, rebuilt
        if stub_task(error) is None or not stub_task(error).startswith("A1."):
            raise
        expected, outputs = rebuilt(topo_order.values())
    got = fn(list(outputs))
    if not isinstance(got, (list, tuple)):
        return Verdict(False, f"returned a {type(got).__name__}", "return a list of nodes")
    position = {node: k for k, node in enumerate(got)}
    if len(position) != len(got):
        return Verdict(
            False,
            f"{len(got) - len(position)} node(s) listed more than once",
            "list each node once: skip a node that is already listed",
        )
    if set(got) != set(expected):
        missing = len(set(expected) - set(got))
        return Verdict(False, f"{missing} node(s) missing" if missing else "nodes that the "
                       "outputs do not depend on", "follow every input of every node, all the "
                       "way down to the Variables")  # fmt: skip
    late = [n for n in got for i in n.inputs if position[i] > position[n]]
    if late:
        return Verdict(False, f"{late[0]} comes before one of its inputs",
                       "inputs before the nodes that use them: append a node only after all "
                       "its inputs are listed")  # fmt: skip
    deep = _ad().Variable("d")
    for _ in range(3000):
        deep = deep + 1.0
    n_deep = len(fn([deep]))
    if n_deep != 6001:
        return Verdict(
            False,
            f"a 3000-step chain gave {n_deep} nodes, not 6001",
            "every node once, the constants too",
        )
    return Verdict(True, f"the {len(got)} nodes of the gradient graph in a valid order; a "
                   "3000-step chain too")  # fmt: skip


def _topo_recursive(outputs):
    """A wrong answer: a walk that calls itself (a 3000-step chain goes deeper than Python
    allows); its order is the graded ``topo_sort``'s, not a copy of it."""
    from tinygrad_edu.symbolic.graph import topo_sort  # noqa: PLC0415

    seen = set()

    def visit(node):
        if node not in seen:
            seen.add(node)
            for i in node.inputs:
                visit(i)

    for o in outputs:
        visit(o)
    return topo_sort(outputs)


def _topo_duplicates(outputs):
    order, stack = [], [(n, False) for n in reversed(outputs)]
    while stack:
        node, ready = stack.pop()
        if ready:
            order.append(node)
        else:
            stack.append((node, True))
            stack.extend((i, False) for i in reversed(node.inputs))
    return order


topo_order = Exercise(
    "8.3", "the Executor's order, by hand", _grade_topo, expected=_topo_graph,
    wrong=[
        Wrong("a recursive walk", _topo_recursive, DEEP_RECURSION),
        Wrong("nodes listed again for each use", _topo_duplicates,
              "list each node once: skip a node that is already listed"),
        Wrong("outputs first", lambda outputs: _outputs_first(outputs),
              "inputs before the nodes that use them: append a node only after all its inputs "
              "are listed"),
    ],
)  # fmt: skip


def _outputs_first(outputs):
    """A wrong answer: the library's order (the graded ``topo_sort``, not a copy), reversed."""
    from tinygrad_edu.symbolic.graph import topo_sort  # noqa: PLC0415

    return topo_sort(outputs)[::-1]


EXERCISES = (q_and_gradients, run_listing, topo_order)
