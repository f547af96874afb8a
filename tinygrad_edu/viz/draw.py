"""Drawings of both graph forms as ``graphviz.Digraph`` objects.

Walking a graph is :mod:`~tinygrad_edu.viz.traverse`'s job; this module only decides how the
records look. Every function returns a ``graphviz.Digraph``: ``.source`` is the DOT text,
:func:`render` (or ``.render``) writes PNG/SVG/PDF, and Jupyter shows it inline.

**Symbolic form** (:func:`draw_symbolic`, tensor-as-node). Each tensor is a box: its name, shape
and dtype, and its value when ``values=``/``feed=`` is given. The ops are the arrows. An op with
one input (``exp``, ``sum``, ``transpose``) is a single arrow labelled with the op. An op with
several inputs needs one arrow per input, so the arrows meet at a small circle holding the op's
symbol (``+``, ``×``, ``@``); the arrows into it say which input is which where order matters
(matmul's ``A (left)``/``B (right)``, sub's minuend/subtrahend). The circle is not a tensor: it
is just where the op's arrows join. Arrows point from inputs to results (forward).
Nodes built by ``gradients()`` are dashed orange boxes named ``∂y/∂x``; the ``add`` nodes that
sum the partial adjoints of a value used twice are gold and say "Σ partial adjoints".

**Eager form** (:func:`draw_eager`, op-as-node). Each backward op is a box (``MulBackward0``);
arrows follow ``next_functions``, the way gradients flow, labelled ``input i`` when a node has
several inputs. ``AccumulateGrad`` boxes (green) point at the leaf tensors they fill (blue, with
``.grad`` when present); the output tensor is yellow at the top. Nodes recorded after a given
point (``highlight_after``, e.g. by a ``create_graph=True`` backward) are orange.

A value used twice (``a * a``) keeps one arrow per use. Ids follow traversal order, so the same
graph gives the same DOT every time.

Where each part lives: how things look and rendering in :mod:`.style`, the two forms in
:mod:`.symbolic_form` and :mod:`.eager_form`, running a function in three engines for
:func:`draw_both` in :mod:`.run_engines`. This module picks the form (:func:`draw`) and puts
forms side by side (:func:`draw_both`); the names of all of them can be imported from here.

>>> from tinygrad_edu.symbolic import Variable
>>> a = Variable("a", shape=(2,))
>>> dot = draw_symbolic(a * a, legend=False)
>>> dot.source.count("t1 -> op0")  # two arrows from a into the multiplication
2
"""

from __future__ import annotations

from .eager_form import add_eager, add_module_clusters, draw_eager
from .run_engines import input_arrays, run_eager, run_symbolic, run_torch
from .style import (
    COLORS,
    DEFAULT_MAX_NODES,
    EAGER_LEGEND,
    FONT,
    MAX_WIDTH_PX,
    SYMBOLIC_LEGEND,
    DotNotFoundError,
    check_dot,
    fit_scale,
    format_array,
    legend_table,
    natural_size,
    natural_width,
    new_graph,
    render,
)
from .symbolic_form import add_symbolic, draw_symbolic
from .torch_graph import is_torch_tensor
from .traverse import collapse as collapse_chains
from .traverse import eager_graph, symbolic_graph

__all__ = [
    "draw", "draw_symbolic", "draw_eager", "draw_both", "render", "check_dot", "format_array",
    "DotNotFoundError", "FONT", "FORMS", "MAX_WIDTH_PX", "natural_width", "add_symbolic",
    "add_eager", "add_module_clusters", "COLORS",
]  # fmt: skip


def _is_symbolic(obj) -> bool:
    from ..symbolic import Node  # noqa: PLC0415

    items = obj if isinstance(obj, list | tuple) else [obj]
    return bool(items) and all(isinstance(x, Node) for x in items)


def draw(target, **kwargs):
    """Draw a symbolic Node (or list of them), an eager Tensor or a PyTorch tensor (or a list
    of one kind): dispatches to :func:`draw_symbolic` or :func:`draw_eager` (which draws
    PyTorch's ``grad_fn`` graphs too), passing the keyword arguments on."""
    from ..eager import Tensor  # noqa: PLC0415

    if _is_symbolic(target):
        return draw_symbolic(target, **kwargs)
    items = target if isinstance(target, list | tuple) else [target]
    if items and all(isinstance(x, Tensor) for x in items):
        return draw_eager(target, **kwargs)
    if items and all(is_torch_tensor(x) for x in items):
        return draw_eager(target, **kwargs)
    raise TypeError(
        f"draw: expected a symbolic Node, an eager Tensor or a PyTorch tensor (or a list of one "
        f"kind), got {type(target).__name__}; build it with tinygrad_edu.symbolic.Variable, "
        "tg.tensor or torch.tensor"
    )


FORMS = ("symbolic", "eager", "torch")
_FORM_TITLES = {
    "symbolic": "symbolic: tensors are nodes",
    "eager": "eager: backward ops are nodes",
    "torch": "PyTorch: its grad_fn graph",
}


def draw_both(
    fn,
    show_values: bool = False,
    show_saved: bool = False,
    max_nodes: int | None = DEFAULT_MAX_NODES,
    forms=("symbolic", "eager"),
    stack: bool | None = None,
    **inputs,
):
    """Run ``fn`` in both engines and draw the two graph forms side by side (or one above the
    other, when side by side would not fit a 900 px column).

    The keyword inputs (arrays) become symbolic ``Variable``s and eager leaf tensors
    (``requires_grad=True``) named by their keyword. The symbolic side shows the forward graph
    and the gradient graph ``gradients(y, inputs)`` built on it; the eager side shows the
    backward graph after ``backward()`` (gradient of ``sum(y)`` when ``y`` is not a scalar, as
    ``gradients()`` does), with the leaves' ``.grad``.

    ``forms`` picks the panels, in order, from ``"symbolic"``, ``"eager"`` and ``"torch"``
    (``fn`` run on PyTorch tensors, its ``grad_fn`` graph drawn in the eager style, needs
    PyTorch): ``forms=("eager", "torch")`` puts our backward graph next to PyTorch's.
    ``stack``: True puts the panels one above the other, False side by side; None (the
    default) picks the layout that shrinks least to fit a ``MAX_WIDTH_PX`` x ``MAX_HEIGHT_PX``
    box (side by side when both fit).

    >>> from tinygrad_edu.viz.examples import seed, seed_inputs
    >>> dot = draw_both(seed, **seed_inputs())
    >>> "symbolic: tensors are nodes" in dot.source, "eager: backward ops are nodes" in dot.source
    (True, True)
    """
    forms = (forms,) if isinstance(forms, str) else tuple(forms)
    bad = [f for f in forms if f not in FORMS]
    if bad or not forms or len(set(forms)) != len(forms):
        raise ValueError(
            f"draw_both: forms={forms!r}; pick one or more of {FORMS}, each once, e.g. "
            "forms=('eager', 'torch')"
        )
    arrays = input_arrays(inputs)
    g = new_graph("both")
    panels = []
    y_name = "output"
    if "symbolic" in forms:
        y, grads, values = run_symbolic(fn, arrays)
        y_name = symbolic_graph([y]).nodes[0].label
        y_name = y_name if len(y_name) <= 12 else "output"
    if "eager" in forms:
        out, leaves = run_eager(fn, arrays, y_name)
        y_name = out.name
    for form in forms:
        if form == "symbolic":
            data = collapse_chains(symbolic_graph([y, *grads]), max_nodes)
            labels = {gr: f"∂{y_name}/∂{k}" for k, gr in zip(inputs, grads)}
        elif form == "eager":
            data = collapse_chains(eager_graph(out, dict(leaves)), max_nodes)
        else:
            t_out, t_leaves = run_torch(fn, arrays)
            data = collapse_chains(eager_graph(t_out, {y_name: t_out, **t_leaves}), max_nodes)
        legend = SYMBOLIC_LEGEND if form == "symbolic" else EAGER_LEGEND
        with g.subgraph(name=f"cluster_{form}") as c:
            c.attr(
                label=legend_table(legend, _FORM_TITLES[form]),
                labelloc="t",
                style="rounded",
                color="#94a3b8",
                margin="12",
            )
            prefix = {"symbolic": "s_", "eager": "e_", "torch": "p_"}[form]
            if form == "symbolic":
                add_symbolic(c, data, values if show_values else None, prefix, labels=labels)
            else:
                add_eager(c, data, prefix=prefix, show_saved=show_saved)
        panels.append((prefix, data))
    if stack is None and len(panels) > 1:  # the layout that shrinks least in the 900x900 box
        stacked = g.copy()
        _stack(stacked, panels)
        stack = fit_scale(natural_size(stacked)) > fit_scale(natural_size(g))
    if stack:
        _stack(g, panels)
    return g


def _stack(g, panels) -> None:
    """Put each panel below the one before: invisible arrows from the earlier panel's last
    row of boxes to the next panel's first."""
    for (p1, d1), (p2, d2) in zip(panels, panels[1:]):
        has_out = {e.src for e in d1.edges}
        sinks = [r.id for r in d1.nodes if r.id not in has_out and r.kind != "op"]
        has_in = {e.dst for e in d2.edges}
        sources = [r.id for r in d2.nodes if r.id not in has_in and r.kind != "op"]
        for a in sinks:
            for b in sources[:1]:
                g.edge(p1 + a, p2 + b, style="invis", weight="0")
