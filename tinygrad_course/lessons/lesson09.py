"""Lesson 9's exercises: a data-dependent loop as a static graph (9.1, in part 9a), a rewrite
rule and the peak memory of an execution order (9.2 and 9.3, in part 9b; part 9c has none).

>>> [ex.number for ex in EXERCISES]
['9.1', '9.2', '9.3']
"""

from __future__ import annotations

import numpy as np

from .as_built import as_built, graph_data, later, rebuilt
from .exercise import Exercise, Verdict, Wrong, diagnose
from .recorded import stub_task

__all__ = ["EXERCISES", "grow_static", "mul_by_one", "peak_bytes", "grow_reference"]


def _sym():
    from tinygrad_edu import symbolic  # noqa: PLC0415

    return symbolic


# -- 9.1 a data-dependent loop, and its gradient ----------------------------------------------
def grow_reference(start) -> tuple:
    """Lesson 8's ``grow`` in numpy: double ``v`` while ``sum(v*v) < 100``; returns the number
    of doublings, the result and the gradient of its sum with respect to ``v``."""
    v, steps = np.asarray(start, dtype=np.float64), 0
    while (v * v).sum() < 100:
        v, steps = v * 2, steps + 1
    return steps, v, np.full_like(v, 2.0**steps)


def _loop(v, le=False, first=0):
    S = _sym()
    if le:
        cond = lambda k, u: (u * u).sum() <= 100.0  # noqa: E731
    else:
        cond = lambda k, u: (u * u).sum() < 100.0  # noqa: E731
    steps, y = S.while_loop(cond, lambda k, u: (k + 1, u * 2), (first, v))
    (grad,) = S.gradients(y.sum(), [v])
    return steps, y, grad


def _python_while(v):
    steps = 0
    while (v * v).sum() < 100.0:  # a Node has no value yet: TypeError
        v, steps = v * 2, steps + 1
    return steps, v, v


def _reference_grow_static(v):
    """Exercise 9.1's answer, for the teaching cell that draws the graph; the student edition
    holds no copy (its markers strip it)."""
    # BEGIN SOLUTION
    S = _sym()
    steps, y = S.while_loop(lambda k, u: (u * u).sum() < 100.0, lambda k, u: (k + 1, u * 2),
                            (0, v))
    (grad,) = S.gradients(y.sum(), [v])
    return steps, y, grad
    # END SOLUTION


_reference_grow_static.__name__ = "grow_static"


# [1.5, 2.0] doubles to [6, 8], whose sum of squares is exactly 100: `<` stops there, `<=` not
_STARTS = ([0.5, 0.5], [3.0, -3.0], [1.5, 2.0])


def _grade_grow(fn) -> Verdict:
    S = _sym()
    v = S.Variable("v", shape=(2,), dtype="float64")
    got = fn(v)
    if not (isinstance(got, (tuple, list)) and len(got) == 3):
        return Verdict(False, f"returned {type(got).__name__}",
                       "return three nodes: steps, y and the gradient of sum(y)")  # fmt: skip
    if not all(isinstance(n, S.Node) for n in got):
        kinds = ", ".join(type(n).__name__ for n in got)
        return Verdict(False, f"returned ({kinds})", "return three nodes, not values: "
                       "gradients() returns a list; unpack it: (g,) = gradients(...)")  # fmt: skip
    executor = S.Executor(list(got))
    for start in _STARTS:
        steps, y, grad = executor.run({v: np.array(start)})
        k, want_y, want_g = grow_reference(start)
        k_le, y_le, g_le = grow_reference_le(start)
        mistakes = [
            (np.concatenate([[k_le], y_le, g_le]), "stop as soon as sum(u * u) reaches 100: "
             "the condition is strictly less than (<), as in lesson 8's grow"),
            (np.concatenate([[k + 1], want_y, want_g]), "count the doublings from 0: the "
             "counter's start value is 0"),
        ]  # fmt: skip
        flat = np.concatenate([np.ravel(np.asarray(x, dtype=np.float64)) for x in
                               (steps, y, grad)])  # fmt: skip
        verdict = diagnose(flat, np.concatenate([[k], want_y, want_g]), mistakes,
                           "count by hand how often the body "
                           "runs from this v before sum(u * u) reaches 100, and compare y and "
                           "the gradient of y.sum() with 2 to that power", atol=1e-9,
                           what=f"steps, y, d sum(y)/dv from v = {start}: ")  # fmt: skip
        if not verdict.ok:
            return verdict
    return Verdict(True, "the number of doublings, y and its gradient match lesson 8's eager "
                   "loop from three starting points (one stopping at exactly 100)")  # fmt: skip


def grow_reference_le(start) -> tuple:
    """Like :func:`grow_reference` with ``<=`` (the off-by-one mistake)."""
    v, steps = np.asarray(start, dtype=np.float64), 0
    while (v * v).sum() <= 100:
        v, steps = v * 2, steps + 1
    return steps, v, np.full_like(v, 2.0**steps)


grow_static = Exercise(
    "9.1", "a data-dependent loop, and its gradient", _grade_grow,
    wrong=[
        Wrong("a Python while on a node", _python_while,
              "Python's while looks at a value, and a node has none yet: use "
              "while_loop(cond_fn, body_fn, (0, v)), whose condition and body are traced into "
              "sub-blocks"),
        Wrong("<= instead of <", lambda v: _loop(v, le=True),
              "stop as soon as sum(u * u) reaches 100: the condition is strictly less than "
              "(<), as in lesson 8's grow"),
        Wrong("the counter starts at 1", lambda v: _loop(v, first=1),
              "count the doublings from 0: the counter's start value is 0"),
    ],
    hints=[("TypeError", "holds no value yet",
            "Python's while looks at a value, and a node has none yet: use "
            "while_loop(cond_fn, body_fn, (0, v)), whose condition and body are traced "
            "into sub-blocks")],
    fallback=_reference_grow_static,
)  # fmt: skip


# -- 9.2 a rewrite rule -----------------------------------------------------------------------
def _is_one(node) -> bool:
    S = _sym()
    if node.op is not S.CONSTANT:
        return False
    value = np.asarray(node.attrs["value"])
    return value.size == 1 and value.ndim == 0 and float(value) == 1.0


def _reference_mul_by_one(node):
    """Exercise 9.2's answer, for the check and the teaching cells; the student edition holds
    no copy (its markers strip it)."""
    # BEGIN SOLUTION
    if node.op.name != "mul":
        return None
    a, b = node.inputs
    if _is_one(b):
        return a
    if _is_one(a):
        return b
    return None
    # END SOLUTION


_reference_mul_by_one.__name__ = "mul_by_one"


def _right_only(node):
    if node.op.name == "mul" and _is_one(node.inputs[1]):
        return node.inputs[0]
    return None


def _returns_the_one(node):
    if node.op.name == "mul" and _is_one(node.inputs[1]):
        return node.inputs[1]
    if node.op.name == "mul" and _is_one(node.inputs[0]):
        return node.inputs[0]
    return None


def _any_constant(node):
    S = _sym()
    if node.op.name == "mul" and node.inputs[1].op is S.CONSTANT:
        return node.inputs[0]
    if node.op.name == "mul" and node.inputs[0].op is S.CONSTANT:
        return node.inputs[1]
    return None


def _ones_array(node):
    """An array of ones taken for the number 1 (x * ones((2, 3)) is not x: its shape grows)."""
    # the answer with one mistake: stripped from the student edition like the answer
    # BEGIN SOLUTION
    S = _sym()
    if node.op.name != "mul":
        return None
    a, b = node.inputs
    for one, other in ((b, a), (a, b)):
        if one.op is S.CONSTANT and np.all(np.asarray(one.attrs["value"]) == 1):
            return other
    return None
    # END SOLUTION


def _self_for_no_change(node):
    """Returns the node itself (not None) when there is nothing to rewrite."""
    out = _right_only(node)
    return node if out is None else out


def _rule_graph():
    S = _sym()
    x = S.Variable("x", shape=(3,), dtype="float64")
    ones = S.constant(np.ones((2, 3)), name="ones")
    outputs = [((x * 1) + (1 * x.exp())) * 2, (x * 1.0).tanh() * x + 3 * (1.0 * x),
               x * ones]  # fmt: skip
    return x, outputs


def _rewritten(rule, graph=None):
    """(node count, values) of the test graph (``graph``: ``(x, outputs)``, or a new one) after
    ``rewrite`` with ``rule``."""
    S = _sym()
    from tinygrad_edu.symbolic.passes import node_count, rewrite  # noqa: PLC0415

    x, outputs = _rule_graph() if graph is None else graph
    new = rewrite(outputs, rule)
    values = S.Executor(new).run({x: np.array([0.5, -1.0, 2.0])})
    # a constant left behind is a scalar: broadcast it as the graph would; a value whose shape
    # changed (x * ones((2, 3)) rewritten to x) has fewer elements
    values = [np.ravel(np.broadcast_to(v, np.broadcast_shapes(np.shape(v), (3,))))
              for v in values]  # fmt: skip
    return np.concatenate([[node_count(new)], *values])


def _grade_rule(rule) -> Verdict:
    S = _sym()
    bad = []

    itself = []

    def guarded(node):
        out = rule(node)
        if out is node:
            itself.append(node)
        if out is not None and not isinstance(out, S.Node):
            bad.append(out)
            return None
        return out

    try:
        x, outputs = _rule_graph()
        before = [(n, n.inputs) for n in S.topo_sort(outputs)]
        got = _rewritten(guarded, (x, outputs))  # the graph whose inputs are compared after
    except NotImplementedError as error:  # a student edition before A1: the rule node by node
        unwritten = stub_task(error)
        if unwritten is None or not unwritten.startswith("A1."):
            raise
        return _grade_decisions(guarded, bad, itself, unwritten)
    wrong = _misbehaved(bad, itself, [(n, n.inputs) for n in S.topo_sort(outputs)] != before)
    if wrong:
        return wrong
    # the anticipated mistakes are mul_by_one's recorded wrong answers: the check recognises
    # them (computed here from their code, they would ship it to students)
    return diagnose(got, np.array(mul_by_one.values()["rewritten"]), [],
                    "compare the node count and the values with the original graph's: which "
                    "mul did your rule keep or remove that it should not?",
                    what="node count, then the values: ")  # fmt: skip


def _misbehaved(bad, itself, changed) -> Verdict | None:
    """What the rule did wrong beside its answers, on either path of the check: returned
    something not a node, returned the node it was given, changed the graph."""
    if bad:
        return Verdict(False, f"the rule returned {type(bad[0]).__name__} {bad[0]!r}",
                       "return a node (the replacement) or None (keep the node)")  # fmt: skip
    if itself:
        return Verdict(False, f"the rule returned the node it was given ({itself[0].name})",
                       "to keep a node, return None: a node returned is a replacement, and "
                       "a pass that replaces a node by itself never knows it is done")  # fmt: skip
    if changed:
        return Verdict(False, "the original graph changed", "build or return nodes; never "
                       "change a node's inputs (a pass is a pure function)")  # fmt: skip
    return None


def _decisions(rule, nodes=None) -> np.ndarray:
    """What ``rule`` answers for each node of the test graph, offered in the order the nodes
    were made: -1 for None, else the position of the node it returns (-2: a node it made)."""
    if nodes is None:
        with as_built({}) as built:
            _rule_graph()
        nodes = built.nodes
    index = {node: k for k, node in enumerate(nodes)}
    answers = [rule(node) for node in nodes]
    return np.array([-1 if a is None else index.get(a, -2) for a in answers])


def _grade_decisions(guarded, bad, itself, unwritten) -> Verdict:
    """9.2's check where ``rewrite`` and the Executor are unwritten (A1): the rule's answer
    for each node of the test graph, compared with the reference's (recorded)."""
    with as_built({}) as built:
        _rule_graph()
    nodes = built.nodes
    before = [node.inputs for node in nodes]
    got = _decisions(guarded, nodes)
    wrong = _misbehaved(bad, itself, [node.inputs for node in nodes] != before)
    if wrong:
        return wrong
    recorded = mul_by_one.values()
    mistakes = [(np.array(answers), hint) for hint, answers in recorded["mistakes"]]
    want, step = np.array(recorded["decisions"]), "the rule's answer at each node: "
    if np.array_equal(got, want):
        replaced = int((got != -1).sum())
        return Verdict(True, f"the rule's answer at each of the {len(nodes)} nodes of the test "
                       f"graph ({replaced} replaced)" + later(unwritten, "the rewritten graph "
                       "(its node count and values, by rewrite and an Executor)"))  # fmt: skip
    differ = np.flatnonzero(got != want)
    said = {-1: "None", -2: "a node it made"}
    where = "; ".join(f"at {nodes[k].name} it returned "
                      f"{said.get(int(got[k])) or nodes[got[k]].name}" for k in differ[:3])
    message = (f"{step}it differs from the reference's at {len(differ)} of the {len(nodes)} "
               f"nodes ({where}{'; ...' if len(differ) > 3 else ''})")  # fmt: skip
    hint = next((h for value, h in mistakes if np.array_equal(got, value)),
                "which mul did your rule keep or remove that it should not? Print what it "
                "returns for each node of the lesson's example")  # fmt: skip
    return Verdict(False, message, hint, step, got)


def _rule_expected() -> dict:
    """The reference rule's rewritten graph (node count, values) and its answer at each node,
    and one mistake's answers (recorded: the student edition holds neither rule)."""
    return {"rewritten": _rewritten(_reference_mul_by_one).tolist(),
            "decisions": _decisions(_reference_mul_by_one).tolist(),
            "mistakes": _mistaken_decisions()}  # fmt: skip


def _mistaken_decisions() -> list:
    """``[hint, answers]`` of each recorded wrong answer that answers at every node: what the
    check on day one tells a rule answering the same (read through the exercise's own list, so
    no check names a wrong answer's code, which the student edition does not ship)."""
    found = []
    for wrong in mul_by_one.wrong:
        try:
            found.append([wrong.hint, _decisions(wrong.answer).tolist()])
        except Exception:  # noqa: BLE001, S112 - a wrong answer that fails is told apart anyway
            continue
    return found


mul_by_one = Exercise(
    "9.2", "a rewrite rule", _grade_rule, expected=_rule_expected,
    wrong=[
        Wrong("only x * 1", _right_only, "1 * x as well: the constant may be either input"),
        Wrong("returns the constant", _returns_the_one,
              "return the other input (x), not the constant 1"),
        Wrong("any constant goes", _any_constant,
              "only the constant 1 may go: x * 2 must stay (look at the constant's value, not "
              "only at its op)"),
        Wrong("an array of ones taken for 1", _ones_array,
              "a constant array of ones is not the number 1: x * ones((2, 3)) has shape (2, "
              "3), so replacing it by x changes the result's shape; only a 0-d constant is the "
              "number"),
        Wrong("the node itself for no change", _self_for_no_change,
              "to keep a node, return None: a node returned is a replacement, and a pass that "
              "replaces a node by itself never knows it is done"),
    ],
    hints=[("KeyError", "value", "only constants have node.attrs['value']: check "
            "node.op is CONSTANT (or node.op.name == 'constant') first")],
    fallback=_reference_mul_by_one,
)  # fmt: skip


# -- 9.3 the peak memory of an execution order ------------------------------------------------
def _reference_peak(order, outputs, nbytes) -> int:
    """Exercise 9.3's answer, for the check and the teaching cells; the student edition holds
    no copy (its markers strip it)."""
    # BEGIN SOLUTION
    from tinygrad_edu.symbolic.memory import liveness  # noqa: PLC0415

    last_use, _ = liveness(order, outputs)
    peak = 0
    for k in range(len(order)):
        peak = max(peak, sum(nbytes[n] for n in order[: k + 1] if last_use[n] >= k))
    return peak
    # END SOLUTION


_reference_peak.__name__ = "peak_bytes"


def _peak_variant(order, outputs, nbytes, keep_outputs=True, strict=False):
    last = {n: k for k, n in enumerate(order)}
    for k, n in enumerate(order):
        for i in n.inputs:
            last[i] = max(last[i], k)
    if keep_outputs:
        for o in outputs:
            last[o] = len(order)
    peak = 0
    for k in range(len(order)):
        alive = [n for n in order[: k + 1] if (last[n] > k if strict else last[n] >= k)]
        peak = max(peak, sum(nbytes[n] for n in alive))
    return peak


def _peak_graphs():
    """(title, order, outputs, nbytes): a small graph whose sizes tell the mistakes apart,
    and an MLP's loss and gradients with the sizes of a real run."""
    S = _sym()
    x = S.Variable("x")
    a = x.exp()
    a2 = a * 2
    b = a2.tanh()
    bb = b * b
    c = bb.sum()
    small = S.Executor([a, c])
    sizes = {x: 800, a: 800, a2: 800, b: 800, bb: 800, c: 8}
    for n in small.order:
        sizes.setdefault(n, 8)  # the constants
    X, W1, W2 = (S.Variable(k, dtype="float64") for k in ("X", "W1", "W2"))
    loss = S.reduce_mean(S.relu(X @ W1) @ W2)
    grads = S.gradients(loss, [W1, W2])
    mlp = S.Executor([loss, *grads])
    rng = np.random.default_rng(0)
    feed = {X: rng.normal(size=(32, 20)), W1: rng.normal(size=(20, 16)),
            W2: rng.normal(size=(16, 4))}  # fmt: skip
    values = mlp.run(feed, return_all=True)
    nbytes = {n: int(np.asarray(v).nbytes) for n, v in values.items()}
    return [("a small graph", small.order, small.nodes, sizes),
            ("an MLP's loss and gradients", mlp.order, mlp.nodes, nbytes)]  # fmt: skip


def _peak_expected() -> dict:
    """The reference's peak for each graph (recorded in the student edition, which holds no
    reference), and the graphs as data: their order, outputs and sizes (recorded too, for the
    edition's first day: the Executor and gradients() that make them are assignment A1)."""
    graphs = _peak_graphs()
    return {"peaks": [_reference_peak(order, outputs, nbytes) for _, order, outputs, nbytes in
                      graphs],
            "graphs": [[title, graph_data(order, outputs), [nbytes[n] for n in order]]
                       for title, order, outputs, nbytes in graphs]}  # fmt: skip


def _peak_cases(recorded) -> list:
    """``(title, order, outputs, nbytes)`` of each graph: made by the library, or, where the
    engine that makes them is an unwritten assignment (A1), rebuilt from the recording."""
    from .recorded import stub_task  # noqa: PLC0415

    try:
        return _peak_graphs()
    except NotImplementedError as error:
        if stub_task(error) is None or not stub_task(error).startswith("A1."):
            raise
    cases = []
    for title, data, sizes in recorded["graphs"]:
        order, outputs = rebuilt(data)
        cases.append((title, order, outputs, dict(zip(order, sizes, strict=True))))
    return cases


def _grade_peak(fn) -> Verdict:
    recorded = peak_bytes.values()
    expected = recorded["peaks"]
    for (title, order, outputs, nbytes), want in zip(_peak_cases(recorded), expected,
                                                     strict=True):  # fmt: skip
        got = fn(list(order), list(outputs), dict(nbytes))
        if not isinstance(got, (int, np.integer)) or isinstance(got, bool):
            return Verdict(False, f"{title}: returned {got!r}", "return a whole number of "
                           "bytes (an int)")  # fmt: skip
        # the anticipated mistakes are peak_bytes's recorded wrong answers: the check
        # recognises them (computed here from their code, they would ship it to students)
        verdict = diagnose(int(got), want, [],
                           "list the values alive at each step of the order by hand, and "
                           "compare the largest total with yours",
                           what=f"{title}: ")  # fmt: skip
        if not verdict.ok:
            return verdict
    return Verdict(True, "the peak for a small graph and for an MLP's gradient graph")


peak_bytes = Exercise(
    "9.3", "the peak memory of an execution order", _grade_peak, expected=_peak_expected,
    wrong=[
        Wrong("nothing freed", lambda order, outputs, nbytes: sum(nbytes[n] for n in order),
              "that is every value kept to the end: free a value after the last step that "
              "reads it"),
        Wrong("freed before its last reader runs",
              lambda o, outs, nb: _peak_variant(o, outs, nb, strict=True),
              "a value is still alive during the step that reads it last (last use >= k), not "
              "only before it"),
        Wrong("outputs freed too",
              lambda o, outs, nb: _peak_variant(o, outs, nb, keep_outputs=False),
              "outputs are handed back to the caller: they stay alive to the end"),
    ],
    fallback=_reference_peak,
)  # fmt: skip

EXERCISES = (grow_static, mul_by_one, peak_bytes)
