r"""``gradients(y, xs)``: reverse-mode differentiation that *builds* the gradient as nodes.

Walk the graph from ``y`` back to its inputs in reverse topological order. Each node ``v``
receives partial adjoints from the nodes that use it; their sum is the adjoint
$\bar v = \partial y/\partial v$. The op's derivative rule (its ``vjp``, in ``ops/``) then turns
$\bar v$ into partial adjoints for ``v``'s inputs. The rule runs with :data:`SYMBOLIC`, whose
``apply`` makes new nodes instead of numbers, so the result is more graph: run it with an
``Executor``, draw it, or differentiate it again.

>>> from tinygrad_edu.symbolic import Executor, Variable, gradients
>>> x = Variable("x")
>>> y = x * x + x
>>> (dx,) = gradients(y, [x])
>>> Executor([dx]).run({x: 3.0})[0]
array(7., dtype=float32)
>>> (ddx,) = gradients(dx, [x])
>>> Executor([ddx]).run({x: 3.0})[0]
array(2., dtype=float32)
"""

from __future__ import annotations

from ..ops import Functional
from .graph import topo_sort
from .node import Node, apply_op, next_seq

__all__ = ["gradients", "SymbolicFunctional", "SYMBOLIC"]


class SymbolicFunctional(Functional):
    """The ``F`` a derivative rule sees in this engine: ``F.exp(x)`` builds an ``exp`` node."""

    def apply(self, op, *inputs, **attrs):
        return apply_op(op, *inputs, **attrs)


SYMBOLIC = SymbolicFunctional()


def gradients(y: Node, xs) -> list[Node]:
    r"""The nodes $\partial y/\partial x$ for each ``x`` in ``xs`` (for a non-scalar ``y``,
    the gradient of ``sum(y)``).

    A value used several times gets one partial adjoint per use; explicit ``add`` nodes sum
    them (marked ``is_adjoint_sum``). Every node built here is marked ``is_gradient``, and each
    settled adjoint records ``grad_of``. An ``x`` that ``y`` does not depend on gets
    ``zeros_like(x)``.
    """
    xs = list(xs)
    first_seq = next_seq()  # the nodes made from here on form the gradient graph
    # BEGIN SOLUTION A1.8
    order = topo_sort([y])
    wanted = set(xs)
    reaches = {}  # node -> is some x among its inputs (or itself)? Only those need adjoints.
    for node in order:
        reaches[node] = node in wanted or any(reaches[i] for i in node.inputs)

    partials = {y: [apply_op("ones_like", y)]}  # the seed: dy/dy = 1
    adjoint = {}
    for node in reversed(order):
        if not reaches[node] or node not in partials:
            continue
        g = adjoint[node] = _sum_partials(node, partials.pop(node))
        if not node.inputs or not node.op.differentiable:
            continue  # a Variable, a constant, or a step function (zero gradient)
        needs = tuple(reaches[i] for i in node.inputs)
        shapes = tuple(i if i.shape is None else i.shape for i in node.inputs)
        grads = node.op.vjp(SYMBOLIC, g, node.inputs, node, shapes, needs, **node.attrs)
        for inp, need, gi in zip(node.inputs, needs, grads):
            if need and gi is not None:
                partials.setdefault(inp, []).append(gi)
    # END SOLUTION

    results = [adjoint[x] if x in adjoint else apply_op("zeros_like", x) for x in xs]
    _mark_gradient_graph(results + list(adjoint.values()), first_seq)
    for node, g in adjoint.items():
        if g.grad_of is None and g.seq >= first_seq:
            g.grad_of = node
    return results


def _sum_partials(node: Node, parts: list[Node]) -> Node:
    """Sum the partial adjoints of ``node`` with explicit, marked ``add`` nodes."""
    total = parts[0]
    for p in parts[1:]:
        total = apply_op("add", total, p, name=f"sum of partial adjoints of {node.name}")
        total.is_adjoint_sum = True
    return total


def _mark_gradient_graph(roots, first_seq: int) -> None:
    """Set ``is_gradient`` on every node reachable from ``roots`` created since ``first_seq``."""
    stack = [r for r in roots if r.seq >= first_seq]
    while stack:
        node = stack.pop()
        if not node.is_gradient:
            node.is_gradient = True
            stack.extend(i for i in node.inputs if i.seq >= first_seq and not i.is_gradient)
