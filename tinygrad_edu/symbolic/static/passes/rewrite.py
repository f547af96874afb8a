r"""How a pass rebuilds a graph: bottom-up, node by node, without touching the original.

A graph is given by its outputs. :func:`rewrite` walks it in execution order; each node, with
its inputs replaced by their new versions (a copy is made only when an input changed), is
offered to a ``rule``, which returns a replacement node or None to keep it. The original
nodes are never modified, so a pass is a pure function graph -> graph and the graphs before
and after can be drawn side by side.

>>> from tinygrad_edu.symbolic import Variable, topo_sort
>>> x = Variable("x")
>>> y = (x * 1) + 2
>>> (z,) = rewrite([y], lambda n: n.inputs[0] if n.op.name == "mul" else None)
>>> z.name, [n.name for n in topo_sort([z])], y.inputs[0].name
('(x+2)', ['x', '2', '(x+2)'], '(x*1)')
"""

from __future__ import annotations

from ...graph import topo_sort
from ...tensor_node import Node, _name

__all__ = ["rewrite", "copy_with_inputs", "node_count"]


def rewrite(outputs, rule) -> list:
    """New outputs: every node of the graph offered to ``rule`` after its inputs."""
    outputs = [outputs] if isinstance(outputs, Node) else list(outputs)
    new: dict = {}
    for node in topo_sort(outputs):
        inputs = tuple(new[i] for i in node.inputs)
        same = all(a is b for a, b in zip(inputs, node.inputs))
        current = node if same else copy_with_inputs(node, inputs)
        replacement = rule(current)
        new[node] = current if replacement is None else replacement
    return [new[o] for o in outputs]


def copy_with_inputs(node: Node, inputs) -> Node:
    """A new node like ``node`` (op, attributes, flags) reading ``inputs``; its name follows
    the new inputs when the old name was generated from the old ones."""
    generated = node.name == _name(node.op, node.inputs, node.attrs)
    name = _name(node.op, inputs, node.attrs) if generated else node.name
    copy = Node(node.op, inputs, node.attrs, name=name, shape=node.shape, dtype=node.dtype)
    copy.is_gradient, copy.grad_of = node.is_gradient, node.grad_of
    copy.is_adjoint_sum, copy.persistable = node.is_adjoint_sum, node.persistable
    return copy


def node_count(outputs) -> int:
    """How many nodes the outputs need (the length of their execution order)."""
    return len(topo_sort([outputs] if isinstance(outputs, Node) else list(outputs)))
