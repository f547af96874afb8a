r"""Common-subexpression elimination: one node for each distinct computation.

Two nodes compute the same value when they apply the same op, with the same attributes, to
the same inputs; equal constants are the same value too. Walking the graph in execution
order (inputs first), the first node of each kind is kept and every later twin is replaced
by it, so the twins' consumers now share one node. Gradients make many twins: ``f * f`` in
$\tanh'' $ is built once by the first ``gradients()`` and again by the second.

Variables are never merged (two inputs are two inputs, even with one name), nor are ops with
random results (``uniform_random``).

>>> from tinygrad_edu.symbolic import Variable, topo_sort
>>> x = Variable("x")
>>> y = (x * x).exp() + (x * x).exp()
>>> (z,) = cse([y])
>>> len(topo_sort([y])), len(topo_sort([z])), z.inputs[0] is z.inputs[1]
(6, 4, True)
"""

from __future__ import annotations

from ...tensor_node import CONSTANT, PLACEHOLDER, Node
from .rewrite import rewrite

__all__ = ["cse", "node_key"]


def cse(outputs) -> list:
    """The outputs with twin computations merged (a pure function: ``outputs`` unchanged)."""
    first: dict = {}

    def rule(node):
        key = node_key(node)
        if key is None:
            return None
        kept = first.setdefault(key, node)
        return None if kept is node else kept

    return rewrite(outputs, rule)


def node_key(node: Node):
    """A hashable description of what ``node`` computes, or None when it must stay unique."""
    if node.op is PLACEHOLDER or not getattr(node.op, "pure", True):
        return None
    if node.op.name == "block_arg":
        return None
    if node.op is CONSTANT:
        return ("constant", _value_key(node.attrs["value"]), node.dtype)
    return (id(node.op), tuple(id(i) for i in node.inputs), _value_key(node.attrs))


def _value_key(value):
    """``value`` (attributes, constants) as something hashable and equal for equal values."""
    if isinstance(value, float):  # by its bits: 0.0 and -0.0 are equal, 1/0.0 and 1/-0.0 not
        return (type(value).__name__, value.hex())
    if isinstance(value, bool | int | str) or value is None:
        return (type(value).__name__, value)
    if isinstance(value, dict):
        return tuple(sorted((k, _value_key(v)) for k, v in value.items()))
    if isinstance(value, tuple | list):
        return (type(value).__name__,) + tuple(_value_key(v) for v in value)
    if isinstance(value, slice):
        return ("slice", _value_key(value.start), _value_key(value.stop), _value_key(value.step))
    if isinstance(value, type):  # a dtype given as its class (np.float32): by the class
        return ("type", value.__module__, value.__qualname__)
    if hasattr(value, "shape") and hasattr(value, "dtype") and hasattr(value, "tobytes"):
        return ("array", str(value.dtype), tuple(value.shape), value.tobytes())
    return ("object", id(value))  # a Block, a Node, Ellipsis ...: equal only to itself
