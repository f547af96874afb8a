r"""Dead-code elimination: drop what no output needs.

A graph given by its outputs holds only nodes some output reaches, so at first sight nothing
in it is dead. But an edge can carry a *shape* without its *value*: ``ones_like(y)``,
``zeros_like(y)``, ``numel(y)`` and the ``like`` input of ``sum_to``, ``broadcast_to``,
``reshape`` and ``getitem_grad`` read nothing of ``y`` but its shape. The seed of every
gradient is such an edge (``ones_like(y)``): run ``gradients(y, [x])`` alone, and all of
``y`` is computed only to be measured.

This pass reroutes each shape-only edge to the *earliest* node known to have the same shape
(the shape classes of :mod:`~tinygrad_edu.symbolic.static.passes.simplify`), or, for a static
shape, to no node at all (the target becomes an attribute). ``ones_like`` and
``zeros_like`` read their input's dtype too, so theirs goes only to a node known to have the
same dtype as well (a bool flag or a float64 constant of the same shape would change the
gradient's values or dtype). Whatever was computed only to
be measured is then unreachable from the outputs, that is, dead, and gone.

>>> from tinygrad_edu.symbolic import Variable, ones_like, topo_sort
>>> x = Variable("x", dtype="float32")
>>> heavy = (x.exp() * 3).tanh()
>>> g = ones_like(heavy) * x  # reads only the shape of `heavy`
>>> [n.name for n in topo_sort([dce([g])[0]])]
['x', 'ones_like(x)', '(ones_like(x)*x)']
"""

from __future__ import annotations

from ...graph import topo_sort
from ...tensor_node import Node, apply_op
from .rewrite import copy_with_inputs, rewrite
from .simplify import dtype_class, shape_class

__all__ = ["dce", "SHAPE_ONLY"]

SHAPE_ONLY = {  # op -> the positions of the inputs it reads only for their shape (and dtype)
    "ones_like": (0,), "zeros_like": (0,), "numel": (0,), "sum_to": (1,), "broadcast_to": (1,),
    "reshape": (1,), "getitem_grad": (1,),
}  # fmt: skip


_READS_DTYPE = {"ones_like", "zeros_like"}  # their result has the input's dtype


def _key(cls):
    """A class as a dict key: a static shape or dtype name itself, a node by identity."""
    return cls if isinstance(cls, tuple | str) else id(cls)


def dce(outputs) -> list:
    """The outputs, with shape-only edges rerouted so that dead computations drop out."""
    outputs = [outputs] if isinstance(outputs, Node) else list(outputs)
    classes: dict = {}
    earliest: dict = {}  # shape class, and (shape class, dtype class) -> the first node in it
    for node in topo_sort(outputs):
        key = _key(shape_class(node, classes))
        earliest.setdefault(key, node)
        earliest.setdefault((key, _key(dtype_class(node, classes))), node)

    def rule(node):
        positions = SHAPE_ONLY.get(node.op.name, ())
        if not positions:
            return None
        inputs = list(node.inputs)
        for k in positions:
            if k >= len(inputs):
                continue
            key = shape_class(inputs[k], classes)
            if isinstance(key, tuple) and node.op.name in ("sum_to", "broadcast_to", "reshape"):
                new = apply_op(node.op, *inputs[:k], **{**node.attrs, "shape": key})
                new.is_gradient, new.grad_of = node.is_gradient, node.grad_of
                return new
            wanted = _key(key)
            if node.op.name in _READS_DTYPE:
                wanted = (wanted, _key(dtype_class(inputs[k], classes)))
            first = earliest.get(wanted)
            if first is not None and first.seq < inputs[k].seq:
                inputs[k] = first
        if all(a is b for a, b in zip(inputs, node.inputs)):
            return None
        return copy_with_inputs(node, tuple(inputs))

    return rewrite(outputs, rule)
