"""``Executor``: evaluates symbolic nodes for the values fed to their Variables.

The topological order is computed once, when the executor is made; each ``run`` then walks
it, computing every node with its op's forward kernel over the device's array namespace
(``xp``). The same executor serves feeds of any shape.

>>> import numpy as np
>>> from tinygrad_edu.symbolic import Executor, Variable
>>> x = Variable("x")
>>> y = x * 2 + 1
>>> ex = Executor([y])
>>> ex.run({x: np.array([1.0, 2.0])})
[array([3., 5.])]
>>> [n.name for n in ex.order]
['x', '2', '(x*2)', '1', '((x*2)+1)']
"""

from __future__ import annotations

import numpy as _np  # only to hand results back as numpy arrays

from ..backend import default_float, get_namespace, to_device
from ..ops import ShapeError
from ..ops.base import fmt_shapes
from .graph import topo_sort
from .node import PLACEHOLDER, Node

__all__ = ["Executor"]


class Executor:
    """Runs a list of nodes.

    Args:
        nodes: the nodes whose values ``run`` returns (a single node is allowed).
        device: ``"cpu"`` (numpy) or ``"cuda"``/``"cuda:N"`` (CuPy).

    Attributes:
        order: every node the outputs need, each after its inputs (the evaluation order).
        variables: the Variables among them, which every ``run`` must feed.
        values: node -> value (an array of the device's namespace) from the last ``run``.
    """

    def __init__(self, nodes, device: str = "cpu"):
        self.nodes = [nodes] if isinstance(nodes, Node) else list(nodes)
        self.device = device
        self.order = topo_sort(self.nodes)
        self.variables = tuple(n for n in self.order if n.op is PLACEHOLDER)
        self.values: dict = {}

    def run(self, feed_dict=None, observer=None, return_all: bool = False):
        """Compute the outputs for ``feed_dict`` (Variable -> array, list or number).

        Numpy feeds keep their dtype; Python data becomes float32 (or the Variable's dtype).
        ``observer(node, value)``, when given, is called after each node is computed, in
        evaluation order. Returns the outputs as numpy arrays, in the order given; with
        ``return_all=True``, a dict of every node's value instead.
        """
        xp = get_namespace(self.device)
        feed_dict = feed_dict or {}
        values = self.values = {}
        # BEGIN SOLUTION A1.2
        for node in self.order:
            if node.op is PLACEHOLDER:
                value = self._feed(xp, node, feed_dict)
            else:
                value = _compute(xp, node, [values[i] for i in node.inputs])
            values[node] = value
            if observer is not None:
                observer(node, value)
        # END SOLUTION
        if return_all:
            return {node: _to_numpy(v) for node, v in values.items()}
        return [_to_numpy(values[n]) for n in self.nodes]

    def _feed(self, xp, node: Node, feed_dict):
        if node not in feed_dict:
            fed = ", ".join(repr(getattr(k, "name", k)) for k in feed_dict) or "nothing"
            raise ValueError(
                f"Variable {node.name!r} was not fed (fed: {fed}); "
                f"add it to feed_dict: run({{{node.name}: value, ...}})"
            )
        value = feed_dict[node]
        if node.dtype is not None:
            value = xp.asarray(value, dtype=getattr(xp, node.dtype))
        elif hasattr(value, "dtype") and hasattr(value, "shape"):
            value = xp.asarray(value)  # keeps a numpy array's dtype
        else:
            value = xp.asarray(value, dtype=default_float(xp))
        if node.shape is not None and tuple(value.shape) != node.shape:
            raise ShapeError(
                f"Variable {node.name!r} was declared with shape {node.shape} "
                f"but fed shape {tuple(value.shape)}"
            )
        return value


def _compute(xp, node: Node, args):
    """Run the node's forward kernel; on failure, say which node, op and input shapes."""
    try:
        return node.op.forward(xp, *args, **node.attrs)
    except Exception as e:
        shapes = [tuple(getattr(a, "shape", ())) for a in args]
        try:
            node.op.shape(*shapes, **node.attrs)  # the shape rule explains most failures
        except ShapeError as rule:
            raise ShapeError(f"{rule} (while running node {node.name!r})") from e
        inputs = f" on input shapes {fmt_shapes(shapes)}" if shapes else ""
        raise RuntimeError(
            f"{node.op.name} failed at node {node.name!r}{inputs}: {type(e).__name__}: {e}"
        ) from e


def _to_numpy(value):
    value = to_device(value, "cpu")
    return value if isinstance(value, _np.ndarray) else _np.asarray(value)
