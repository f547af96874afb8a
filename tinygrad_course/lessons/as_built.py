"""Values of a symbolic graph computed as it is built: what a check reads where the engine that
runs graphs is an unwritten assignment.

A lesson exercise that asks for a symbolic graph checks it by running it with an
:class:`~tinygrad_edu.symbolic.Executor`. In the student edition, before assignment A1 is
written, the Executor cannot run (its order is ``topo_sort``, A1.1; its loop is A1.2), yet the
learner's graph is the learner's own work and should be checked on day one. So while the
learner's function builds its graph inside the check, :func:`as_built` computes each new node's
value the moment the node is created, from its inputs' values, with the op library's forward
kernel (:func:`~tinygrad_edu.symbolic.executor.compute_node`, which no assignment grades),
starting from the values the check feeds its Variables: the define-by-run way. No finished
graph is walked (there is no order to find: every node is computed when it is made), so this
solves neither ``topo_sort`` nor the Executor's loop.

A node whose value cannot be known this way has none: one built before the check began, one
reading such a node, a Variable the check did not feed, and every node of a graph changed after
it was made (``node.inputs`` or ``node.op`` reassigned, ``const_attr`` set), whose values would
be stale. A check that finds no value for what it needs falls back to the Executor, which says
which assignment it needs (:func:`run`), so a graph this cannot vouch for is never passed.

>>> import numpy as np
>>> from tinygrad_edu.symbolic import Variable
>>> x = Variable("x")
>>> with as_built({x: np.array([1.0, 2.0])}) as built:
...     y = x * 2 + 1
>>> built.value(y)
array([3., 5.])
>>> y.inputs = (x,)  # rewired after it was made: no value is vouched for any more
>>> built.value(y) is None
True
"""

from __future__ import annotations

import contextlib

import numpy as np

__all__ = ["AsBuilt", "as_built", "run", "later", "ENGINE_TASKS"]

# the tasks whose stubs stop the Executor (its order, its loop): where a check reads the values
# computed as the graph was built instead
ENGINE_TASKS = ("A1.1", "A1.2")


class AsBuilt:
    """The values of the nodes made while :func:`as_built` was active (see the module)."""

    def __init__(self, feeds):
        from tinygrad_edu.symbolic.executor import feed_value  # noqa: PLC0415

        self.values: dict = {var: feed_value(np, var, feeds) for var in feeds}
        # every node made, and the Variables fed, with what they were when made (op, inputs,
        # attributes): a node changed afterwards invalidates every value
        self._made: list = [(var, var.op, var.inputs, dict(var.attrs)) for var in feeds]
        self._fed = len(self._made)

    def made(self, node) -> None:
        """Called for each node just made: its value, where its inputs all have one."""
        from tinygrad_edu.symbolic.executor import compute_node  # noqa: PLC0415
        from tinygrad_edu.symbolic.tensor_node import PLACEHOLDER  # noqa: PLC0415

        self._made.append((node, node.op, node.inputs, dict(node.attrs)))
        if node.op is PLACEHOLDER or not all(i in self.values for i in node.inputs):
            return
        try:
            with np.errstate(all="ignore"):
                self.values[node] = compute_node(np, node, [self.values[i] for i in node.inputs])
        except Exception:  # noqa: BLE001 - no value: the Executor, later, says what fails
            pass

    @property
    def nodes(self) -> list:
        """The nodes made in the block, in the order they were made (the Variables fed
        before it began are not among them)."""
        return [entry[0] for entry in self._made[self._fed :]]

    def unchanged(self) -> bool:
        """Whether every node made (and every Variable fed) is still as it was made."""
        return all(
            node.op is op and len(node.inputs) == len(inputs)
            and all(a is b for a, b in zip(node.inputs, inputs, strict=True))
            and node.attrs.keys() == attrs.keys()
            and all(node.attrs[k] is v for k, v in attrs.items())
            for node, op, inputs, attrs in self._made
        )  # fmt: skip

    def value(self, node):
        """``node``'s value as a numpy array (as ``Executor.run`` returns it), or None where
        it has none or the graph changed since it was made."""
        from tinygrad_edu.symbolic.executor import to_numpy  # noqa: PLC0415

        if node not in self.values or not self.unchanged():
            return None
        return to_numpy(self.values[node])


@contextlib.contextmanager
def as_built(feeds):
    """Within the block, every symbolic node made gets its value as it is made (``feeds``:
    Variable -> value, as an Executor's ``feed_dict``). Yields the :class:`AsBuilt`."""
    from tinygrad_edu.symbolic.tensor_node import Node  # noqa: PLC0415

    built = AsBuilt(feeds)
    original = Node.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        built.made(self)

    Node.__init__ = init
    try:
        yield built
    finally:
        Node.__init__ = original


def run(outputs, feeds, built: AsBuilt | None):
    """``(values, None)``: the Executor's values of ``outputs`` for ``feeds``; or, where the
    Executor is an unwritten assignment (:data:`ENGINE_TASKS`), ``(values, task)``: the values
    ``built`` computed as the graph was made. Without those (a node built outside, a graph
    changed since), the Executor's error goes on, naming the assignment it needs."""
    from tinygrad_edu.symbolic import Executor  # noqa: PLC0415

    from .recorded import stub_task  # noqa: PLC0415

    try:
        return Executor(list(outputs)).run(feeds), None
    except NotImplementedError as error:
        task = stub_task(error)
        if task not in ENGINE_TASKS or built is None:
            raise
        values = [built.value(node) for node in outputs]
        if any(v is None for v in values):
            raise
        return values, task


def later(task: str, what: str, needs: str | None = None) -> str:
    """What a PASS message adds where ``task`` (an unwritten assignment's stub) kept part of
    the check from running: that part, named, so that a PASS never claims what it did not
    check. ``needs``: what unlocks it (default: "assignment A1 is written", the assignment of
    ``task``)."""
    needs = needs or f"assignment {task.split('.')[0]} is written"
    return f"; {what}: checked once {needs} ({task} is not yet), run this check again then"


def graph_data(nodes, outputs, order: bool = True) -> dict:
    """A graph as data that a student edition records (``Exercise(expected=...)``) for a check
    that hands a fixed graph to the learner's function, where the engine that builds it is an
    unwritten assignment: every node's name, op name and inputs (their positions), and which
    nodes are the outputs. ``nodes``: every node of the graph; with ``order=False`` they are
    stored sorted by name, not in the order given (which may be the answer to an exercise)."""
    if not order:
        nodes = sorted(nodes, key=lambda n: (n.name, n.op.name, len(n.inputs)))
    index = {node: k for k, node in enumerate(nodes)}
    return {"nodes": [[n.name, n.op.name, [index[i] for i in n.inputs]] for n in nodes],
            "outputs": [index[o] for o in outputs]}  # fmt: skip


def rebuilt(data) -> tuple[list, list]:
    """``(nodes, outputs)``: the graph :func:`graph_data` stored, made again (new nodes, the
    same ops and edges; a constant's value is not kept, and no node has a shape)."""
    from tinygrad_edu.ops import get_op  # noqa: PLC0415
    from tinygrad_edu.symbolic.tensor_node import CONSTANT, PLACEHOLDER, Node  # noqa: PLC0415

    markers = {"placeholder": PLACEHOLDER, "constant": CONSTANT}
    nodes = [Node(markers.get(op) or get_op(op), (), name=name) for name, op, _ in data["nodes"]]
    for node, (_, _, inputs) in zip(nodes, data["nodes"], strict=True):
        node.inputs = tuple(nodes[k] for k in inputs)  # made first: any order may be stored
    return nodes, [nodes[k] for k in data["outputs"]]
