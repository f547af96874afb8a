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

An ``x`` that ``y`` does not use gets zeros, as in CSE599W (PyTorch would raise unless
``allow_unused=True``). With a static shape they are a ``fill_constant`` node that needs no
feed; without one, ``zeros_like(x)``, which needs ``x`` fed to know the shape.
"""

from __future__ import annotations

from ..ops import Functional
from .graph import topo_sort
from .tensor_node import Node, apply_op, next_seq

__all__ = ["gradients", "SymbolicFunctional", "SYMBOLIC"]


class SymbolicFunctional(Functional):
    """The ``F`` a derivative rule sees in this engine: ``F.exp(x)`` builds an ``exp`` node."""

    def apply(self, op, *inputs, **attrs):
        return apply_op(op, *inputs, **attrs)


SYMBOLIC = SymbolicFunctional()


def gradients(y, xs, grad_ys=None, stop_gradients=()) -> list[Node]:
    r"""The nodes $\partial y/\partial x$ for each ``x`` in ``xs`` (for a non-scalar ``y``,
    the gradient of ``sum(y)``).

    Args:
        y: the node to differentiate, or a list of nodes (then the gradient of their sum).
        xs: the nodes to differentiate with respect to.
        grad_ys: optional adjoints to start from, one per ``y`` ($\sum_k \langle y_k,
            \bar y_k\rangle$ is differentiated; None entries mean ones), as TensorFlow's.
        stop_gradients: nodes treated as constants: nothing flows through them to their
            inputs (TensorFlow 1's ``stop_gradients``); so are nodes whose
            ``stop_gradient`` attribute is True (Fluid's ``var.stop_gradient = True``) and
            the ``stop_gradient(x)`` op.

    A value used several times gets one partial adjoint per use; explicit ``add`` nodes sum
    them (marked ``is_adjoint_sum``). Every node built here is marked ``is_gradient``, and each
    settled adjoint records ``grad_of``.
    """
    ys = [y] if isinstance(y, Node) else list(y)
    xs = [xs] if isinstance(xs, Node) else list(xs)
    for what, nodes in (("y", ys), ("xs", xs)):
        bad = [v for v in nodes if not isinstance(v, Node)]
        if bad:
            raise TypeError(
                f"gradients: {what} must be symbolic nodes, got "
                f"{type(bad[0]).__name__}; pass the Variables (or nodes) themselves"
            )
    seeds = [None] * len(ys) if grad_ys is None else list(grad_ys)
    if len(seeds) != len(ys):
        raise ValueError(f"gradients: {len(ys)} outputs but {len(seeds)} grad_ys")
    wanted, stops = set(xs), set(stop_gradients)
    stops |= {n for n in topo_sort(ys) if getattr(n, "stop_gradient", False) is True}
    first_seq = next_seq()  # the nodes made from here on form the gradient graph
    partials = {}  # node -> its partial adjoints so far
    for out, seed in zip(ys, seeds):
        partials.setdefault(out, []).append(apply_op("ones_like", out) if seed is None else seed)
    # BEGIN SOLUTION A1.8
    order = topo_sort(ys)
    reaches = {}  # node -> is some x at or behind it (not behind a stop)? Only those need adjoints.
    for node in order:
        behind = node not in stops and any(reaches[i] for i in node.inputs)
        reaches[node] = node in wanted or behind

    adjoint = {}
    for node in reversed(order):
        if not reaches[node] or node not in partials:
            continue
        g = adjoint[node] = _sum_partials(node, partials.pop(node))
        if not node.inputs or not node.op.differentiable or node in stops:
            continue  # a Variable, a constant, a step function (zero gradient), or a stop
        needs = tuple(reaches[i] for i in node.inputs)
        shapes = tuple(i if i.shape is None else i.shape for i in node.inputs)
        grads = node.op.vjp(SYMBOLIC, g, node.inputs, node, shapes, needs, **node.attrs)
        for inp, need, gi in zip(node.inputs, needs, grads):
            if need and gi is not None:
                partials.setdefault(inp, []).append(gi)
    # END SOLUTION

    results = [adjoint[x] if x in adjoint else _zeros(x) for x in xs]
    nodes = [g for g in results + list(adjoint.values()) if isinstance(g, Node)]
    _mark_gradient_graph(nodes, first_seq)
    for node, g in adjoint.items():
        if isinstance(g, Node) and g.grad_of is None and g.seq >= first_seq:
            g.grad_of = node
    return results


def _zeros(x: Node) -> Node:
    """$\\partial y/\\partial x = 0$ for an ``x`` that ``y`` does not use: a constant fill when
    the shape is static (no feed needed), else ``zeros_like(x)``."""
    if x.shape is not None:
        z = apply_op("fill_constant", shape=x.shape, value=0, dtype=x.dtype or "float32")
    else:
        z = apply_op("zeros_like", x)
    z.grad_of = x
    return z


def _sum_partials(node: Node, parts: list):
    """Sum the partial adjoints of ``node`` with explicit, marked ``add`` nodes.

    A node with several outputs (``cond``, ``while_loop``) gets its partials as dicts
    ``{output index: adjoint}``; they are summed output by output, into one dict.
    """
    if isinstance(parts[0], dict):
        merged: dict = {}
        for part in parts:
            for k, g in part.items():
                merged.setdefault(k, []).append(g)
        return {k: _sum_partials(node, gs) for k, gs in sorted(merged.items())}
    total = parts[0]
    for p in parts[1:]:
        total = apply_op("add", total, p, name=f"sum of partial adjoints of {node.name}")
        total.is_adjoint_sum = True
    return total


def _mark_gradient_graph(roots, first_seq: int) -> None:
    """Set ``is_gradient`` on every node reachable from ``roots`` created since ``first_seq``,
    including the nodes of control-flow sub-blocks built since then."""
    stack = [r for r in roots if r.seq >= first_seq]
    while stack:
        node = stack.pop()
        if node.is_gradient:
            continue
        node.is_gradient = True
        stack.extend(i for i in node.inputs if i.seq >= first_seq and not i.is_gradient)
        for block in _sub_blocks(node):
            stack.extend(n for n in block.nodes if n.seq >= first_seq and not n.is_gradient)


def _sub_blocks(node: Node) -> list:
    """The sub-blocks a control-flow node runs (attributes that hold a Block)."""
    return [v for v in node.attrs.values() if hasattr(v, "outputs") and hasattr(v, "params")]
