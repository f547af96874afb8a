"""The symbolic form (tensor-as-node) drawn: :func:`draw_symbolic` and :func:`add_symbolic`.

Each tensor is a box (name, shape, dtype, value when known); one-input ops are labelled
arrows, several-input ops a small junction circle where one arrow per input meets. Gradient
nodes are dashed orange, sums of partial adjoints gold, control-flow blocks framed clusters.
Which boxes and arrows exist is :mod:`.traverse`'s answer; how they look is :mod:`.style`'s.

>>> from tinygrad_edu.symbolic import Variable
>>> a = Variable("a", shape=(2,))
>>> dot = draw_symbolic(a * a, legend=False)
>>> dot.source.count("t1 -> op0")  # two arrows from a into the multiplication
2
"""

from __future__ import annotations

from .blocks import cluster_tree
from .style import (
    COLORS,
    DEFAULT_MAX_NODES,
    EDGE_COLORS,
    SYMBOLIC_LEGEND,
    box_label,
    finish,
    format_array,
    graphviz_module,
    join_parts,
    legend_table,
    new_graph,
    same_rank,
    shape_text,
)
from .traverse import GraphData, symbolic_graph
from .traverse import collapse as collapse_chains

__all__ = ["draw_symbolic", "add_symbolic"]


def _symbolic_values(nodes, values, feed):
    """node -> numpy value, from ``values`` and/or by running an Executor on ``feed``."""
    out = dict(values or {})
    if feed:
        from ..symbolic import Executor  # noqa: PLC0415

        for node, v in Executor(nodes).run(feed, return_all=True).items():
            out.setdefault(node, v)
    return out


def add_symbolic(g, data: GraphData, values=None, prefix="", decorate=None, labels=None) -> None:
    """Add the records of a symbolic graph to Digraph ``g`` (ids prefixed with ``prefix``).

    ``decorate(record)``, when given, returns a dict with optional ``"rows"`` (extra label
    rows ``(caption, lines, colour)``), ``"attrs"`` (DOT attribute overrides) and ``"title"``
    for a record; the stepper uses it to colour the node being computed.
    ``labels`` maps a symbolic node to a title to use instead of its own.
    """
    values = values or {}
    clusters = _block_clusters(data, prefix)
    partial_of = _partial_adjoint_owners(data, labels)
    for rec in data.nodes:
        deco = decorate(rec) if decorate else {}
        over = deco.get("attrs", {})
        nid = prefix + rec.id
        place = clusters.get(rec.info.get("block"), g)  # its control-flow block's cluster
        if rec.kind == "op":
            place.node(nid, rec.label, **{**_op_attrs(rec), **over})
        elif rec.kind == "elision":
            fill, border = COLORS["elision"]
            attrs = dict(shape="box", style="dashed,filled", fillcolor=fill, color=border)
            g.node(nid, rec.label, **{**attrs, **over})
        else:
            label, attrs = _tensor_box(rec, values, deco, partial_of, labels)
            place.node(nid, label, **{**attrs, **over})
    _attach_clusters(g, data, clusters)
    same_rank(g, [prefix + r.id for r in data.nodes if r.kind == "tensor" and r.info["variable"]])
    _add_edges(g, data, prefix, decorate)


def _partial_adjoint_owners(data: GraphData, labels) -> dict:
    """node -> its title as one term of an adjoint sum: ``"∂E/∂C via D"``.

    The summands of an adjoint sum that are plain gradient nodes (not themselves sums, not a
    named ``grad_of``) are each the adjoint through one use of the value: ``C`` used in
    ``D = (A+B)⊙C`` and in ``A+C`` gets ``∂E/∂C via D`` and ``∂E/∂(A+C)``, the two terms of
    ``∂E/∂C``. The use is read off the term's inputs (see :func:`_use_of`); when they do not
    tell it, or two terms come through the same use (``z * z``), the terms are numbered.
    """
    names = {rec.ref: rec.label for rec in data.nodes if rec.kind == "tensor"}
    users: dict = {}  # forward node -> the forward nodes that read it
    for node in names:
        for i in node.inputs if not node.is_gradient else ():
            users.setdefault(i, []).append(node)
    partial_of = {}
    for rec in data.nodes:
        node = rec.ref
        if rec.kind == "tensor" and rec.info["adjoint_sum"] and rec.info.get("grad_of"):
            what = rec.info["grad_of"]
            if what.startswith("∂/") and labels and node in labels:
                what = labels[node]  # no seed drawn (an optimised graph): its label
            terms = [i for i in node.inputs
                     if i.is_gradient and not i.is_adjoint_sum and i.grad_of is None]  # fmt: skip
            uses = [_use_of(term, users.get(node.grad_of, [])) for term in terms]
            titles = [f"{what} via {names.get(u, u.name)}" if u is not None else None
                      for u in uses]  # fmt: skip
            for k, (term, title) in enumerate(zip(terms, titles)):
                if title is None or titles.count(title) > 1:
                    title = f"{what}, term {k + 1}"
                partial_of.setdefault(term, title)
    return partial_of


def _use_of(term, users: list):
    """The node among ``users`` (the uses of a value) whose derivative rule made ``term``.

    A term is a VJP of one use ``u``: its inputs are ``u``'s adjoint (a gradient node
    settled as ``∂y/∂u``, or shared with a node that passes it on unchanged, as ``+`` does)
    and forward values ``u`` read (``u`` itself, or its other inputs). None when these do
    not single one use out.
    """
    adjoints = [i.grad_of for i in term.inputs if i.grad_of is not None]
    forward = [i for i in term.inputs if not i.is_gradient]
    for u in adjoints + forward:
        if u in users:
            return u
    found = {id(u): u for u in users for f in forward if any(f is i for i in u.inputs)}
    return next(iter(found.values())) if len(found) == 1 else None


def _op_attrs(rec) -> dict:
    """An op's circle (short labels) or ellipse; dashed when it computes a gradient."""
    gradient = rec.info["gradient"]
    big = len(rec.label) <= 2
    return dict(
        shape="circle" if big else "ellipse",
        width="0.32",
        height="0.32",
        fixedsize="true" if big else "false",
        style="dashed" if gradient else "solid",
        color=EDGE_COLORS["gradient" if gradient else "forward"],
        fontsize="13" if big else "10",
        margin="0.02",
    )


def _tensor_kind(info: dict) -> str:
    """The colour class of a tensor record (the first that applies)."""
    for kind in ("adjoint_sum", "gradient", "variable", "constant"):
        if info[kind]:
            return kind
    return "tensor"


def _tensor_title(rec, partial_of: dict, labels) -> tuple:
    """A tensor box's (title, subtitle): what it differentiates, else its own label."""
    info, node = rec.info, rec.ref
    title, sub = rec.label, shape_text(info["shape"], info["dtype"])
    if info.get("grad_of"):
        title = info["grad_of"]
        sub = join_parts("Σ partial adjoints" if info["adjoint_sum"] else None, sub)
    elif info["adjoint_sum"]:
        title = "Σ partial adjoints"
    elif node in partial_of:
        title = partial_of[node]
        sub = join_parts("partial adjoint", sub)  # the legend's words
    if labels and node in labels and labels[node] != title:
        # a title naming what it differentiates (not ∂/∂x: no seed drawn)
        known = info.get("grad_of", "").startswith("∂") and not info["grad_of"].startswith("∂/")
        title = f"{title} = {labels[node]}" if known else labels[node]
    return title, sub


def _tensor_box(rec, values: dict, deco: dict, partial_of: dict, labels) -> tuple:
    """A tensor record's (HTML label, DOT attributes): title, shape, value rows, style."""
    info, node = rec.info, rec.ref
    title, sub = _tensor_title(rec, partial_of, labels)
    title = deco.get("title", title)
    if info.get("collapsed"):
        sub = join_parts(f"chain of {info['collapsed']} {info['op']} ops", sub)
    if info.get("param"):
        sub = join_parts("block argument", sub)
    rows = []
    if node in values:
        caption = "value" if not info["gradient"] else "gradient value"
        rows.append((caption, format_array(values[node]), "#0f172a"))
    rows.extend(deco.get("rows", ()))
    style = "filled,dashed" if info["gradient"] else "filled"
    if info["variable"] or info["output"]:
        style += ",bold"
    fill, border = COLORS[_tensor_kind(info)]
    attrs = dict(shape="box", style=style + ",rounded", fillcolor=fill, color=border)
    label = box_label(title, sub, rows, title_size=12 if info["constant"] else 14)
    return label, attrs


def _add_edges(g, data: GraphData, prefix: str, decorate) -> None:
    """The data, gradient (dashed) and block (dotted) edges; none has an arrow into an op."""
    for e in data.edges:
        attrs = {"color": EDGE_COLORS[e.kind], "fontcolor": EDGE_COLORS[e.kind]}
        if e.kind == "gradient":
            attrs["style"] = "dashed"
        if e.kind == "block":
            attrs["style"] = "dotted"
        if e.dst.startswith("op"):
            attrs["arrowhead"] = "none"
        if decorate:
            attrs.update(decorate(e).get("attrs", {}))
        g.edge(prefix + e.src, prefix + e.dst, label=f" {e.label} " if e.label else None, **attrs)


def _block_clusters(data: GraphData, prefix: str) -> dict:
    """One cluster subgraph per control-flow block of ``data`` (see :mod:`.blocks`)."""
    gv = graphviz_module() if data.blocks else None
    clusters = {}
    for key, _, label in data.blocks:
        c = gv.Digraph(name=f"cluster_{prefix}{key}")
        c.attr(label=label, style="rounded,dashed", color="#7c3aed", fontcolor="#5b21b6",
               fontsize="11", labeljust="l", margin="10")  # fmt: skip
        clusters[key] = c
    return clusters


def _attach_clusters(g, data: GraphData, clusters: dict) -> None:
    """Nest each block's cluster in its parent's (innermost first), the outermost in ``g``."""
    for key, parent, _ in reversed(cluster_tree(data.blocks)):
        clusters.get(parent, g).subgraph(clusters[key])


def draw_symbolic(
    nodes,
    values=None,
    feed=None,
    max_nodes: int | None = DEFAULT_MAX_NODES,
    legend: bool = True,
    title: str | None = None,
    labels=None,
):
    """Draw a symbolic graph: tensors are boxes, ops are the arrows (and junctions).

    Args:
        nodes: the output Node(s); everything they depend on is drawn, gradient graphs too.
        values: optional dict node -> array (e.g. ``Executor(...).run(feed, return_all=True)``)
            shown in the boxes.
        feed: optional feed_dict; the graph is run with an Executor to show every value.
        max_nodes: collapse long chains / elide the rest beyond this many boxes (None: never).
        legend: add a colour legend under the drawing.
        title: an optional title.
        labels: optional dict node -> title, e.g. ``{dx: "dx"}`` for the results of
            ``gradients()`` (shown next to the adjoint's own name when they differ).

    >>> from tinygrad_edu.symbolic import Variable, gradients
    >>> x = Variable("x", shape=(3,))
    >>> y = (x * x).sum()
    >>> dot = draw_symbolic([y] + gradients(y, [x]))
    >>> "Σ partial adjoints" in dot.source
    True
    """
    data = collapse_chains(symbolic_graph(nodes, labels), max_nodes)
    roots = [data.node(i).ref for i in data.outputs]
    vals = _symbolic_values(roots, values, feed)
    g = new_graph("symbolic")
    add_symbolic(g, data, vals, labels=labels)
    finish(g, legend and legend_table(SYMBOLIC_LEGEND, title), title)
    return g
