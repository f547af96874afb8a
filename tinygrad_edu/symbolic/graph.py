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

__all__ = ["topo_sort"]


def topo_sort(nodes) -> list:
    """Every node that ``nodes`` depend on, each after all of its inputs (depth-first
    post-order, inputs visited left to right, so the order is deterministic)."""
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
    return order
    # END SOLUTION
