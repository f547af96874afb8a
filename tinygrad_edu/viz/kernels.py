"""Drawing the fusion groups of a compiled program (``draw_compiled(step, "kernels")``).

The graph is drawn op by op, as the code generator sees it after the passes; the ops that
one fused kernel computes are boxed together and the box is named after the kernel
(``kernel3: add + tanh``). The ops outside every box stay numpy calls (matrix products,
gathers, reductions over other axes ...). Placeholders and constants are left out: the
picture is about where the loops are.
"""

from __future__ import annotations

import html

from ..symbolic.graph import topo_sort
from ..symbolic.tensor_node import CONSTANT, PLACEHOLDER
from .style import FONT, new_graph

__all__ = ["draw_kernels"]

FUSED, PLAIN = "#d7ecd9", "#f2f2f2"


def draw_kernels(nodes, kernels, title: str | None = None):
    """A graphviz drawing of ``nodes``' graph with each of ``kernels`` boxed."""
    owner = {n: k for k in kernels for n in k.members}
    g = new_graph("kernels")
    ids: dict = {}
    order = [n for n in topo_sort(nodes) if n.op is not PLACEHOLDER and n.op is not CONSTANT]
    for j, n in enumerate(order):
        ids[n] = f"n{j}"
    boxes: dict = {}
    for n in order:
        k = owner.get(n)
        label = html.escape(n.op.name)
        attrs = {"shape": "box", "style": "rounded,filled", "fillcolor": FUSED if k else PLAIN}
        if k is None:
            g.node(ids[n], label, **attrs)
        else:
            boxes.setdefault(k.name, []).append((ids[n], label, attrs))
    for k in kernels:
        with g.subgraph(name=f"cluster_{k.name}") as c:
            c.attr(label=f"{k.name}: {len(k.members)} ops", style="rounded", color="#2e7d32",
                   fontname=FONT, fontsize="11")  # fmt: skip
            for ident, label, attrs in boxes.get(k.name, ()):
                c.node(ident, label, **attrs)
    for n in order:
        for i in dict.fromkeys(n.inputs):
            if i in ids:
                g.edge(ids[i], ids[n])
    if title:
        g.attr(label=title, labelloc="t", fontsize="16")
    return g
