"""Drawing a memory plan: the graph with every node coloured by the buffer its value lives in.

Nodes of one colour share one buffer, one after the other: each starts when the previous
value in it is dead (or, for elementwise ops, writes over an input that dies right there).
Each box also says at which step of the planned order the node runs and after which step its
value is freed. Grey boxes keep memory of their own (feeds, constants, views of other values,
results of ops without an ``out=`` kernel).

>>> import numpy as np
>>> from tinygrad_edu.symbolic import Executor, Variable
>>> x = Variable("x")
>>> ex = Executor([((x * 2).exp() + 1).tanh()], plan_memory=True)
>>> _ = ex.run({x: np.ones(3)})
>>> dot = draw_memory_plan(ex)
>>> "buffer 0" in dot.source
True
"""

from __future__ import annotations

from .style import finish, legend_table, new_graph
from .symbolic_form import add_symbolic
from .traverse import collapse, symbolic_graph

__all__ = ["draw_memory_plan", "BUFFER_COLORS"]

BUFFER_COLORS = [  # fill, border
    ("#fde68a", "#b45309"), ("#bbf7d0", "#15803d"), ("#bfdbfe", "#1d4ed8"),
    ("#fbcfe8", "#be185d"), ("#ddd6fe", "#6d28d9"), ("#fed7aa", "#c2410c"),
    ("#a5f3fc", "#0e7490"), ("#d9f99d", "#4d7c0f"), ("#fecaca", "#b91c1c"),
    ("#e5e7eb", "#374151"),
]  # fmt: skip
_OWN = ("#f8fafc", "#94a3b8")


def draw_memory_plan(executor, max_nodes: int | None = None, legend: bool = True,
                     title: str | None = None):  # fmt: skip
    """Draw ``executor``'s graph coloured by its memory plan (run it once first).

    Args:
        executor: an :class:`~tinygrad_edu.symbolic.Executor` made with ``plan_memory=True``.
        max_nodes: collapse/elide beyond this many boxes (None: draw everything).
        legend: list the buffers with their sizes.
        title: an optional title.
    """
    plan = getattr(executor, "memory_plan", None)
    if plan is None:
        raise ValueError("draw_memory_plan: this Executor has no memory plan; make it with "
                         "Executor(outputs, plan_memory=True)")  # fmt: skip
    if not plan.replays:
        raise ValueError("draw_memory_plan: run the executor once first (the plan is made "
                         "from the sizes of the first run)")  # fmt: skip
    step = {n: k for k, n in enumerate(plan.order)}

    def decorate(rec):
        node = getattr(rec, "ref", None)
        if getattr(rec, "kind", None) != "tensor" or node not in step:
            return {}
        freed = plan.last_use[node]
        when = "kept (output)" if freed >= len(plan.order) else f"freed after {freed}"
        b = plan.buffers.get(node)
        fill, border = _OWN if b is None else BUFFER_COLORS[b % len(BUFFER_COLORS)]
        where = "own memory" if b is None else f"buffer {b}"
        return {
            "rows": [(f"step {step[node]} · {where} · {when}", [], "#334155")],
            "attrs": {"fillcolor": fill, "color": border},
        }

    data = collapse(symbolic_graph(executor.nodes), max_nodes)
    g = new_graph("memory_plan")
    add_symbolic(g, data, decorate=decorate)
    items = [(f"buffer {b}: {_kib(n)}", BUFFER_COLORS[b % len(BUFFER_COLORS)])
             for b, n in enumerate(plan.buffer_bytes)]  # fmt: skip
    items.append(("own memory", _OWN))
    finish(g, legend and legend_table(items, title or "memory plan"), title)
    return g


def _kib(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.0f} KiB"
