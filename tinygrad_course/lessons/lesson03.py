"""Lesson 3's exercises: count the dependencies, predict the engine's order.

One rule for the counts, the engine's: every node reachable from the root gets one count per
edge that points at it, and the root itself gets 1, for the seed gradient $\\partial L/\\partial L$
that ``backward()`` hands it (in the engine, from its ``GraphRoot`` node).

>>> [ex.number for ex in EXERCISES]
['3.1', '3.2']
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque

from .exercise import DEEP_RECURSION, Exercise, Verdict, Wrong, diagnose

__all__ = ["EXERCISES", "count_dependencies", "engine_order", "engine_counts", "run_order"]


def _graphs():
    """(title, loss) pairs: the seed example, a graph with ties, a 1500-deep chain."""
    import tinygrad_edu as tg  # noqa: PLC0415
    from tinygrad_edu.viz.examples import seed, seed_inputs  # noqa: PLC0415

    leaves = []
    for name, value in seed_inputs().items():
        leaves.append(tg.tensor(value, requires_grad=True))
        leaves[-1].name = name
    x = tg.tensor([0.5, -1.0, 2.0], requires_grad=True)
    w = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x.name, w.name = "x", "w"
    h = (x * w).tanh()
    deep = tg.tensor([0.5], requires_grad=True)
    y = deep
    for _ in range(1500):
        y = y * 1.0001
    return [("the seed example", seed(*leaves).sum()), ("a graph with a value used twice",
            (h * h + x.exp() * h).sum()), ("a chain 1500 nodes deep", y.sum())]  # fmt: skip


def _labels(loss) -> dict:
    """node -> its name in the drawings and the stepper (``viz.node_names``)."""
    from tinygrad_edu.viz.traverse import node_names  # noqa: PLC0415

    return node_names(loss)


def engine_counts(loss) -> dict:
    """The engine's own dependency counts for ``loss.backward()`` (its ``GraphRoot`` left out:
    ``loss.grad_fn`` keeps the 1 that the seed's edge gives it)."""
    from tinygrad_edu.eager import Observer, observe  # noqa: PLC0415

    class Capture(Observer):
        def begin(self, task):
            self.root, self.counts = task.root, dict(task.dependencies)

    with observe(Capture()) as seen:
        loss.backward(retain_graph=True)
    return {node: n for node, n in seen.counts.items() if node is not seen.root}


def run_order(loss) -> list:
    """The nodes the engine runs for ``loss.backward()``, in order (its ``GraphRoot`` left
    out)."""
    from tinygrad_edu.eager import Observer, observe  # noqa: PLC0415

    class Order(Observer):
        def begin(self, task):
            self.root, self.nodes = task.root, []

        def node_started(self, task, node, grads):
            if node is not task.root:
                self.nodes.append(node)

    with observe(Order()) as seen:
        loss.backward(retain_graph=True)
    return seen.nodes


# -- 3.1 count the dependencies ---------------------------------------------------------------
def _engine_count(root) -> dict:
    """The engine's own dependency counts (assignment A2.1's function; in the student edition
    the student's own), with the root counted once, as the exercise asks."""
    from tinygrad_edu.eager.engine import _count_dependencies  # noqa: PLC0415

    deps, _ = _count_dependencies(root, False)
    return {root: 1, **{n: c for n, c in deps.items() if n is not root}}


def _counts_expected() -> dict:
    """``{graph: {node's label: the engine's count}}``: what the check compares with, as data
    (a student edition records it: on day one its engine is the student's unwritten A2.1)."""
    recorded = {}
    for title, loss in _graphs():
        label = _labels(loss)
        recorded[title] = {label[n]: c for n, c in engine_counts(loss).items()}
    return recorded


def _grade_counts(fn) -> Verdict:
    recorded = count_dependencies.values()
    for title, loss in _graphs():
        root = loss.grad_fn
        label = _labels(loss)
        expected = {n: recorded[title][name] for n, name in label.items()
                    if name in recorded[title]}  # fmt: skip
        got = fn(root)
        if not isinstance(got, dict):
            return Verdict(False, f"{title}: returned a {type(got).__name__}",
                           "return a dict: node -> count")  # fmt: skip
        missing = [n for n in expected if n not in got]
        extra = [n for n in got if n not in expected]
        if missing == [root]:
            return Verdict(False, f"{title}: the root {label[root]} is missing",
                           "the root receives one gradient too, the seed dL/dL = 1: its count "
                           "is 1")  # fmt: skip
        if missing or extra:
            some = ", ".join(label.get(n, n.name()) for n in (missing or extra)[:3])
            return Verdict(False, f"{title}: {'missing' if missing else 'not in the graph'}: "
                           f"{some}", "follow next_functions from the root to every node it "
                           "reaches (skip the None entries)")  # fmt: skip
        rows = sorted(expected, key=lambda n: n.sequence_nr)
        mistakes = [
            ([1] * len(rows), "count edges, not nodes: a node that two edges point at gets 2"),
            ([expected[n] - (n is root) for n in rows], "the root receives one gradient too, "
             "the seed: its count is 1"),
        ]  # fmt: skip
        wrong = [n for n in rows if got[n] != expected[n]]
        if wrong:
            verdict = diagnose([got[n] for n in rows], [expected[n] for n in rows], mistakes,
                               "one count per edge into a node; visit each node once (push it "
                               "on the stack only the first time you meet it)",
                               what=f"{title}, counts in creation order: ")  # fmt: skip
            return verdict
    return Verdict(True, "the engine's counts on the seed example, a graph with a value used "
                   "twice and a 1500-deep chain")  # fmt: skip


def _count_without_root(root):
    counts = _engine_count(root)
    counts[root] -= 1
    if counts[root] == 0:
        del counts[root]
    return counts


def _count_nodes(root):
    return dict.fromkeys(_engine_count(root), 1)


def _count_recursive(root):
    """A wrong answer: a walk that calls itself (a 1500-deep chain goes deeper than Python
    allows); its counts are the engine's (the graded ``_count_dependencies``), not a copy."""
    seen = set()

    def visit(node):
        if node not in seen:
            seen.add(node)
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    visit(nxt)

    visit(root)
    return _engine_count(root)


def _count_every_visit(root):
    counts, stack = {root: 1}, [root]
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is not None:
                counts[nxt] = counts.get(nxt, 0) + 1
                stack.append(nxt)  # visits a node again for every edge into it
    return counts


count_dependencies = Exercise(
    "3.1", "count the dependencies", _grade_counts, expected=_counts_expected,
    wrong=[
        Wrong("the root left out", _count_without_root,
              "the root receives one gradient too, the seed dL/dL = 1: its count is 1"),
        Wrong("one per node instead of one per edge", _count_nodes,
              "count edges, not nodes: a node that two edges point at gets 2"),
        Wrong("a recursive walk", _count_recursive, DEEP_RECURSION),
        Wrong("nodes visited again for every edge", _count_every_visit,
              "a node reached along several edges is walked again for each of them, so the "
              "edges below it are counted again: visit each node once (push it on the stack "
              "only the first time you meet it)"),
    ],
)  # fmt: skip


# -- 3.2 predict the engine's order -----------------------------------------------------------
def _order(root, counts, key):
    # BEGIN SOLUTION
    pushed = itertools.count()
    ready = [key(root, next(pushed))]
    names = []
    while ready:
        node = heapq.heappop(ready)[-1]
        names.append(node)
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            counts[nxt] -= 1
            if counts[nxt] == 0:
                heapq.heappush(ready, key(nxt, next(pushed)))
    return names
    # END SOLUTION


def _reference_order(root):
    # BEGIN SOLUTION
    return _order(root, _engine_count(root), lambda n, k: (-n.sequence_nr, k, n))
    # END SOLUTION


def _order_lifo_ties(root):
    return _order(root, _engine_count(root), lambda n, k: (-n.sequence_nr, -k, n))


def _order_by_number(root):
    return sorted(_engine_count(root), key=lambda n: -n.sequence_nr)


def _order_fifo(root):
    counts, queue, names = _engine_count(root), deque([root]), []
    while queue:
        node = queue.popleft()
        names.append(node)
        for nxt, _ in node.next_functions:
            if nxt is not None:
                counts[nxt] -= 1
                if counts[nxt] == 0:
                    queue.append(nxt)
    return names


def _order_expected() -> dict:
    """``{graph: the labels of the nodes the engine runs, in order}`` (recorded in a student
    edition: on day one its engine is the student's unwritten A2.1)."""
    recorded = {}
    for title, loss in _graphs()[:2]:
        label = _labels(loss)
        recorded[title] = [label.get(n, repr(n)) for n in run_order(loss)]
    return recorded


def _grade_order(fn) -> Verdict:
    expected = engine_order.values()
    for title, loss in _graphs()[:2]:
        root = loss.grad_fn
        label = _labels(loss)
        got = fn(root)
        if not isinstance(got, (list, tuple)):
            return Verdict(
                False,
                f"{title}: returned a {type(got).__name__}",
                "return a list of the nodes, in the order they run",
            )
        if got and all(isinstance(n, str) for n in got):
            return Verdict(
                False,
                f"{title}: returned names",
                "return the nodes themselves (two nodes can share a name)",
            )

        # the anticipated mistakes are engine_order's recorded wrong answers: the check
        # recognises them by the order they give
        names = [label.get(n, repr(n)) for n in got]
        verdict = diagnose(names, expected[title], [],
                           "pop the highest sequence_nr; decrease a node's count once per edge; "
                           "push it when the count reaches 0", what=f"{title}: ")  # fmt: skip
        if not verdict.ok:
            return verdict
    return Verdict(True, "the engine's order on the seed example and on a graph with ties")


engine_order = Exercise(
    "3.2", "predict the engine's order", _grade_order, expected=_order_expected,
    wrong=[
        Wrong("sorted by sequence_nr", _order_by_number,
              "a node runs only when all its gradients have arrived (its count reaches 0), not "
              "simply by sequence_nr"),
        Wrong("a first-in-first-out queue", _order_fifo,
              "the ready queue is a heap: the ready node with the highest sequence_nr runs "
              "first, not the one that became ready first"),
        Wrong("ties last in, first out", _order_lifo_ties,
              "ties (equal sequence_nr, like two AccumulateGrads) run first in, first out: put "
              "a counter k in (-sequence_nr, k, node)"),
        Wrong("names instead of nodes", lambda root: [n.name() for n in _reference_order(root)],
              "return the nodes themselves (two nodes can share a name)"),
    ],
)  # fmt: skip

EXERCISES = (count_dependencies, engine_order)
