"""Walking a symbolic graph: the topological order, with an explicit stack.

A recursive walk (as in CSE599W or micrograd) dies near Python's recursion limit (about
1,000 deep); this one handles chains of any depth.

>>> from tinygrad_edu.symbolic import Variable
>>> x = Variable("x")
>>> y = (x + 1) * x
>>> [n.name for n in topo_sort([y])]
['x', '1', '(x+1)', '((x+1)*x)']
"""

from __future__ import annotations

__all__ = ["topo_sort", "GraphCycleError"]


class GraphCycleError(ValueError):
    """A node depends on itself (its inputs lead back to it), so no order computes it."""


def topo_sort(nodes) -> list:
    """Every node that ``nodes`` depend on, each after all of its inputs (depth-first
    post-order, inputs visited left to right, so the order is deterministic).

    A cycle (made by reassigning ``node.inputs``) is a :class:`GraphCycleError` naming it.
    """
    # BEGIN SOLUTION A1.1
    order: list = []
    seen: set = set()
    for root in nodes:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(root.inputs))]  # (node, its inputs not yet visited)
        while stack:
            node, todo = stack[-1]
            for inp in todo:
                if inp not in seen:
                    seen.add(inp)
                    stack.append((inp, iter(inp.inputs)))
                    break
            else:  # every input is placed: the node goes next
                stack.pop()
                order.append(node)
    # END SOLUTION
    _check_acyclic(order)
    return order


def _check_acyclic(order) -> None:
    """Every node's inputs come before it in ``order``; a node seen but not yet placed when
    its consumer was placed lies on a cycle, which the error names."""
    position = {node: k for k, node in enumerate(order)}
    for k, node in enumerate(order):
        for inp in node.inputs:
            if position.get(inp, k) >= k:
                raise GraphCycleError(
                    f"the graph has a cycle: {_cycle(inp, node)} (each reads the next); a "
                    "node cannot depend on "
                    "itself. Was node.inputs reassigned? Build a new node for the new "
                    "computation instead (a loop belongs in while_loop)"
                )


def _cycle(start, end) -> str:
    """``end``, then the names along a path of inputs from ``start`` (an input of ``end``)
    back to ``end``."""
    parents, stack = {start: None}, [start]
    while stack:
        n = stack.pop()
        if n is end:
            break
        for i in n.inputs:
            if i not in parents:
                parents[i] = n
                stack.append(i)
    path, n = [], end
    while n is not None:
        path.append(n.name)
        n = parents.get(n)
    return " -> ".join([end.name, *reversed(path)])
