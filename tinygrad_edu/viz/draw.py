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

>>> from tinygrad_edu.symbolic import Variable
>>> a = Variable("a", shape=(2,))
>>> dot = draw_symbolic(a * a, legend=False)
>>> dot.source.count("t1 -> op0")  # two arrows from a into the multiplication
2
"""

from __future__ import annotations

import html
import shutil

import numpy as np  # display only: arrays are formatted as text

from .modules import collapse_modules, module_groups, module_label
from .torch_graph import is_torch_tensor, require_torch
from .traverse import GraphData, eager_graph, symbolic_graph
from .traverse import collapse as collapse_chains

__all__ = [
    "draw",
    "draw_symbolic",
    "draw_eager",
    "draw_both",
    "render",
    "check_dot",
    "format_array",
    "DotNotFoundError",
    "FONT",
    "FORMS",
    "MAX_WIDTH_PX",
    "natural_width",
]

FONT = "Helvetica,Arial,sans-serif"
# NOTE [Pictures fit a 900 px column]: every drawing is laid out at its natural size and, when
# wider than this, scaled down to it (Graphviz's ``size``: 72 points an inch, a browser's CSS
# pixel is 0.75 point). Layouts that would shrink much (two forms side by side) stack instead.
MAX_WIDTH_PX = 900
_SIZE = f"{MAX_WIDTH_PX * 0.75 / 72:.3f},1000"
MONO = "DejaVu Sans Mono,Menlo,Consolas,monospace"
DEFAULT_MAX_NODES = 80

# fill, border
COLORS = {
    "tensor": ("#dbeafe", "#1e40af"),
    "variable": ("#bfdbfe", "#1e3a8a"),
    "constant": ("#f1f5f9", "#64748b"),
    "gradient": ("#ffedd5", "#c2410c"),
    "adjoint_sum": ("#fde68a", "#b45309"),
    "backward": ("#e0e7ff", "#3730a3"),
    "accumulate": ("#dcfce7", "#15803d"),
    "leaf": ("#bfdbfe", "#1e3a8a"),
    "output": ("#fef08a", "#a16207"),
    "after": ("#fed7aa", "#c2410c"),
    "elision": ("#f8fafc", "#94a3b8"),
    "module": ("#ede9fe", "#6d28d9"),
    "cluster": ("#f8fafc", "#8b5cf6"),
}
EDGE_COLORS = {
    "forward": "#334155",
    "gradient": "#c2410c",
    "backward": "#3730a3",
    "accumulate": "#15803d",
    "output": "#a16207",
    "block": "#7c3aed",
}

INSTALL_HINT = (
    "Graphviz's `dot` program is needed to render drawings and was not found on PATH. "
    "Install it: `apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS), "
    "or `conda install graphviz`. The DOT text is still available as `graph.source`."
)


class DotNotFoundError(RuntimeError):
    """Graphviz's ``dot`` executable is missing; the message says how to install it."""


def _graphviz():
    try:
        import graphviz  # noqa: PLC0415
    except ImportError:
        raise ImportError(
            'drawing needs the `graphviz` Python package: pip install "tinygrad_edu[viz]" '
            "(and Graphviz's `dot` program: apt-get/brew/conda install graphviz)"
        ) from None
    return graphviz


# -- text -----------------------------------------------------------------------------------
def _esc(text) -> str:
    return html.escape(str(text), quote=True)


def _to_numpy(value):
    from ..backend import to_device  # noqa: PLC0415

    data = getattr(value, "data", value) if not isinstance(value, np.ndarray) else value
    if hasattr(data, "shape") and not isinstance(data, np.ndarray):
        data = to_device(data, "cpu")
    return np.asarray(data)


def format_array(value, max_elements: int = 9) -> list[str]:
    """Lines of text for a small array (rounded to 3 significant digits), or a summary.

    >>> format_array(np.array([[1.0, 2.5], [0.0, -1.0]]))
    ['[[ 1.   2.5]', ' [ 0.  -1. ]]']
    >>> format_array(np.arange(100.0))
    ['mean 49.5, range [0, 99]']
    """
    a = _to_numpy(value)
    if a.size == 0:
        return ["(empty)"]
    if a.size <= max_elements and a.ndim <= 2:
        if a.ndim == 0:
            return [f"{float(a):.4g}"]
        text = np.array2string(
            a.astype(np.float64), precision=3, suppress_small=True, separator=" ", max_line_width=60
        )
        return text.splitlines()
    return [f"mean {float(a.mean()):.3g}, range [{float(a.min()):.3g}, {float(a.max()):.3g}]"]


def _shape_text(shape, dtype=None) -> str | None:
    """``2×3  float32``; an unknown shape is left out (None when nothing is known)."""
    parts = []
    if shape is not None:
        parts.append("×".join(str(d) for d in shape) if len(shape) else "scalar")
    if dtype:
        parts.append(str(dtype))
    return "  ".join(parts) or None


def _join(*parts) -> str | None:
    """The parts that are not empty, joined by `` · `` (None when all are empty)."""
    return " · ".join(p for p in parts if p) or None


def _box_label(title, sub=None, rows=(), title_size=14, bold=True) -> str:
    """An HTML-like label: a bold title, a small grey line, then monospace rows."""
    t = _esc(title)
    parts = [
        f'<TR><TD><FONT POINT-SIZE="{title_size}">{f"<B>{t}</B>" if bold else t}</FONT></TD></TR>'
    ]
    if sub:
        parts.append(f'<TR><TD><FONT POINT-SIZE="10" COLOR="#475569">{_esc(sub)}</FONT></TD></TR>')
    for caption, lines, color in rows:
        if caption:
            parts.append(
                f'<TR><TD><FONT POINT-SIZE="10" COLOR="{color}">{_esc(caption)}</FONT></TD></TR>'
            )
        for line in lines:
            parts.append(
                f'<TR><TD><FONT FACE="{MONO}" POINT-SIZE="10" COLOR="{color}">'
                f"{_esc(line)}</FONT></TD></TR>"
            )
    return (
        '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">'
        + "".join(parts)
        + "</TABLE>>"
    )


def _legend(items, title=None) -> str:
    """An HTML-like table of colour swatches and their meaning."""
    cells = []
    for text, (fill, border) in items:
        cells.append(
            f'<TD BGCOLOR="{fill}" COLOR="{border}" BORDER="1" WIDTH="18"> </TD>'
            f'<TD ALIGN="LEFT"><FONT POINT-SIZE="11">{_esc(text)}</FONT></TD>'
        )
    head = (
        (
            f'<TR><TD COLSPAN="{2 * len(cells)}"><FONT POINT-SIZE="16"><B>{_esc(title)}</B>'
            "</FONT></TD></TR>"
        )
        if title
        else ""
    )
    return (
        '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="4">'
        + head
        + "<TR>"
        + "".join(cells)
        + "</TR></TABLE>>"
    )


SYMBOLIC_LEGEND = [
    ("input Variable", COLORS["variable"]),
    ("tensor (forward)", COLORS["tensor"]),
    ("gradient node", COLORS["gradient"]),
    ("Σ partial adjoints", COLORS["adjoint_sum"]),
    ("○ op: arrows in = its inputs", ("#ffffff", "#334155")),
]
EAGER_LEGEND = [
    ("output", COLORS["output"]),
    ("backward op", COLORS["backward"]),
    ("AccumulateGrad", COLORS["accumulate"]),
    ("leaf tensor (.grad)", COLORS["leaf"]),
]


def _new_graph(name="G", rankdir="TB"):
    gv = _graphviz()
    g = gv.Digraph(name)
    g.attr(rankdir=rankdir, fontname=FONT, nodesep="0.3", ranksep="0.35", newrank="true")
    g.graph_attr["size"] = _SIZE  # NOTE [Pictures fit a 900 px column]
    g.attr("node", fontname=FONT, fontsize="12", margin="0.08,0.04")
    g.attr("edge", fontname=FONT, fontsize="10", arrowsize="0.7")
    return g


# -- symbolic -------------------------------------------------------------------------------
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

    def place(rec):  # the cluster of the control-flow block holding the record, else g
        return clusters.get(rec.info.get("block"), g)

    partial_of = {}
    for rec in data.nodes:
        node = rec.ref
        if rec.kind == "tensor" and rec.info["adjoint_sum"] and rec.info.get("grad_of"):
            for inp in node.inputs:
                if inp.is_gradient and not inp.is_adjoint_sum and inp.grad_of is None:
                    what = rec.info["grad_of"]
                    if not what.startswith("∂") and labels and node in labels:
                        what = labels[node]  # no seed drawn (an optimised graph): its label
                    partial_of.setdefault(inp, what)
    for rec in data.nodes:
        deco = decorate(rec) if decorate else {}
        extra, over = deco.get("rows", ()), deco.get("attrs", {})
        nid = prefix + rec.id
        if rec.kind == "op":
            style = "dashed" if rec.info["gradient"] else "solid"
            color = EDGE_COLORS["gradient" if rec.info["gradient"] else "forward"]
            big = len(rec.label) <= 2
            attrs = dict(
                shape="circle" if big else "ellipse",
                width="0.32",
                height="0.32",
                fixedsize="true" if big else "false",
                style=style,
                color=color,
                fontsize="13" if big else "10",
                margin="0.02",
            )
            attrs.update(over)
            place(rec).node(nid, rec.label, **attrs)
            continue
        if rec.kind == "elision":
            fill, border = COLORS["elision"]
            attrs = dict(shape="box", style="dashed,filled", fillcolor=fill, color=border)
            g.node(nid, rec.label, **{**attrs, **over})
            continue
        info, node = rec.info, rec.ref
        kind = (
            "adjoint_sum"
            if info["adjoint_sum"]
            else "gradient"
            if info["gradient"]
            else "variable"
            if info["variable"]
            else "constant"
            if info["constant"]
            else "tensor"
        )
        fill, border = COLORS[kind]
        title, sub = rec.label, _shape_text(info["shape"], info["dtype"])
        if info.get("grad_of"):
            title = info["grad_of"]
            sub = _join("Σ partial adjoints" if info["adjoint_sum"] else None, sub)
        elif info["adjoint_sum"]:
            title = "Σ partial adjoints"
        elif node in partial_of:
            title = f"partial of {partial_of[node]}"
        if labels and node in labels and labels[node] != title:
            known = info.get("grad_of", "").startswith("∂")  # a title naming what it differentiates
            title = f"{title} = {labels[node]}" if known else labels[node]
        title = deco.get("title", title)
        if info.get("collapsed"):
            sub = _join(f"chain of {info['collapsed']} {info['op']} ops", sub)
        if info.get("param"):
            sub = _join("block argument", sub)
        rows = []
        if node in values:
            rows.append(
                (
                    "value" if not info["gradient"] else "gradient value",
                    format_array(values[node]),
                    "#0f172a",
                )
            )
        rows.extend(extra)
        style = "filled,dashed" if info["gradient"] else "filled"
        if info["variable"] or info["output"]:
            style += ",bold"
        attrs = dict(shape="box", style=style + ",rounded", fillcolor=fill, color=border)
        attrs.update(over)
        place(rec).node(
            nid, _box_label(title, sub, rows, title_size=12 if info["constant"] else 14), **attrs
        )
    _attach_clusters(g, data, clusters)
    _same_rank(g, [prefix + r.id for r in data.nodes if r.kind == "tensor" and r.info["variable"]])
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
    gv = _graphviz() if data.blocks else None
    clusters = {}
    for key, _, label in data.blocks:
        c = gv.Digraph(name=f"cluster_{prefix}{key}")
        c.attr(label=label, style="rounded,dashed", color="#7c3aed", fontcolor="#5b21b6",
               fontsize="11", labeljust="l", margin="10")  # fmt: skip
        clusters[key] = c
    return clusters


def _attach_clusters(g, data: GraphData, clusters: dict) -> None:
    """Nest each block's cluster in its parent's (innermost first), the outermost in ``g``."""
    from .blocks import cluster_tree  # noqa: PLC0415

    for key, parent, _ in reversed(cluster_tree(data.blocks)):
        clusters.get(parent, g).subgraph(clusters[key])


def _same_rank(g, ids) -> None:
    """Put ``ids`` on one row (the inputs of a drawing line up)."""
    if len(ids) > 1:
        with g.subgraph() as s:
            s.attr(rank="same")
            for i in ids:
                s.node(i)


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
    g = _new_graph("symbolic")
    add_symbolic(g, data, vals, labels=labels)
    _finish(g, legend and _legend(SYMBOLIC_LEGEND, title), title)
    return g


# -- eager ----------------------------------------------------------------------------------
def _eager_names(names, params):
    merged = {}
    for mapping in (params, names):
        if mapping:
            merged.update(dict(mapping))
    return merged or None


def add_eager(
    g, data: GraphData, prefix="", show_saved=False, decorate=None, show_grad=True, shapes=False,
    align_leaves=True,
) -> None:
    """Add the records of an eager backward graph to Digraph ``g`` (ids prefixed).

    ``decorate`` is as for :func:`add_symbolic`; ``show_grad=False`` leaves ``.grad`` out of
    the leaf boxes (the stepper shows its own snapshot); ``shapes=True`` writes under each
    backward op the shape of the forward result it belongs to (``64×16×28×28``);
    ``align_leaves=False`` lets each leaf sit by its op instead of on one bottom row."""
    for rec in data.nodes:
        deco = decorate(rec) if decorate else {}
        extra, over = deco.get("rows", ()), deco.get("attrs", {})
        nid, info = prefix + rec.id, rec.info
        if rec.kind == "elision":
            fill, border = COLORS["elision"]
            attrs = dict(shape="box", style="dashed,filled", fillcolor=fill, color=border)
            g.node(nid, rec.label, **{**attrs, **over})
            continue
        if rec.kind == "module":  # a collapsed module: one box for all its ops
            fill, border = COLORS["module"]
            n = info["members"]
            sub = f"{n} op{'s' if n != 1 else ''}"
            if info.get("shape") is not None:
                sub = f"{_shape_text(info['shape'])} · {sub}"
            attrs = dict(shape="box", style="filled,rounded,bold", fillcolor=fill, color=border)
            g.node(nid, _box_label(rec.label, sub, title_size=13), **{**attrs, **over})
            continue
        rows = []
        sub = None
        if rec.kind in ("leaf", "output"):
            sub = _shape_text(info["shape"], info["dtype"])
            if rec.kind == "leaf" and show_grad and rec.ref.grad is not None:
                rows.append((".grad", format_array(rec.ref.grad), "#0f172a"))
            if rec.kind == "output":
                sub = f"{sub} · grad_fn={info['grad_fn'].name()}"
        elif rec.kind == "backward":
            if shapes and info.get("out_shape") is not None:
                sub = _shape_text(info["out_shape"])
            if info.get("collapsed"):
                sub = f"chain of {info['collapsed']}" + (f" · {sub}" if sub else "")
            if show_saved:
                for what, arr, shape in info["saved"]:
                    if what == "freed":
                        rows.append(("saved values freed (retain_graph=False)", [], "#b91c1c"))
                    elif shape is None:  # a saved attribute, not a tensor (PyTorch's alpha...)
                        rows.append((f"saved {what} = {arr}", [], "#64748b"))
                    elif arr is None:
                        rows.append((f"keeps shape of {what}: {_shape_text(shape)}", [], "#64748b"))
                    else:
                        rows.append(
                            (f"saved {what}: {_shape_text(shape)}", format_array(arr), "#334155")
                        )
        rows.extend(extra)
        kind = "after" if info.get("after") else rec.kind
        fill, border = COLORS[kind]
        style = "filled,rounded"
        if rec.kind == "output":
            style += ",bold"
        if info.get("after"):
            style += ",dashed"
            sub = "recorded by backward" + (f" · {sub}" if sub else "")
        attrs = dict(
            shape="box",
            style=style,
            fillcolor=fill,
            color=border,
            penwidth="2" if rec.kind == "output" else "1",
        )
        attrs.update(over)
        title_size = 13 if rec.kind in ("backward", "accumulate") else 14
        title = deco.get("title", info.get("name", rec.label))
        g.node(nid, _box_label(title, sub, rows, title_size=title_size), **attrs)
    if align_leaves:
        _same_rank(g, [prefix + r.id for r in data.nodes if r.kind == "leaf"])
    for e in data.edges:
        attrs = {"color": EDGE_COLORS[e.kind], "fontcolor": EDGE_COLORS[e.kind]}
        if e.kind == "accumulate":
            attrs["style"] = "dashed"
        if decorate:
            attrs.update(decorate(e).get("attrs", {}))
        g.edge(prefix + e.src, prefix + e.dst, label=f" {e.label} " if e.label else None, **attrs)


def draw_eager(
    tensors,
    names=None,
    params=None,
    show_saved: bool = False,
    highlight_after: int | None = None,
    max_nodes: int | None = DEFAULT_MAX_NODES,
    legend: bool = True,
    title: str | None = None,
    modules=None,
    collapse=None,
    shapes: bool | None = None,
):
    """Draw an eager backward graph: backward ops are boxes, arrows are where gradients go.

    PyTorch tensors are drawn the same way, from their ``grad_fn`` graph: PyTorch's node names
    (``MulBackward0``, ``AddmmBackward0``), its saved values (``_saved_self`` shows as
    ``saved self``) and its leaves' ``.grad`` (``params=model.named_parameters()`` names them).

    Args:
        tensors: the output Tensor(s), ours or PyTorch's; each needs a ``grad_fn``.
        names, params: mappings name -> tensor naming leaves and outputs (else ``tensor.name``).
        show_saved: list in each box what the node keeps for backward (shapes, small values).
        highlight_after: colour nodes whose ``sequence_nr`` is larger (recorded later, e.g. by
            ``backward(create_graph=True)``); found automatically when several outputs are drawn.
        max_nodes: collapse long chains / elide the rest beyond this many boxes (None: never).
        legend: add a colour legend.
        title: an optional title.
        modules: an ``nn.Module`` (the network that computed ``tensors``): each of its layers'
            ops is drawn inside one labelled box (a Graphviz cluster, nested like the
            modules), so a network reads like its architecture; its parameters are named by
            their dotted names.
        collapse: with ``modules``, module names (or True for every top-level child) to draw
            as a single box each, showing the output shape and how many ops it holds.
        shapes: write under each backward op the shape of the forward result it belongs to
            (``64×16×28×28``); by default on when ``modules`` is given.

    Raises:
        ValueError: for a tensor without ``grad_fn`` (the message says how to fix it).

    >>> import tinygrad_edu as tg
    >>> a = tg.tensor([1.0, 2.0], requires_grad=True)
    >>> dot = draw_eager((a * a).sum(), names={"a": a}, legend=False)
    >>> dot.source.count("-> n1")  # SumBackward0 -> MulBackward0
    1
    >>> dot.source.count("n1 -> n2")  # MulBackward0 -> AccumulateGrad of a, once per use
    2
    """
    if modules is not None and not hasattr(modules, "named_modules"):
        raise TypeError(f"draw: modules= expects an nn.Module (the network that computed the "
                        f"output), got {type(modules).__name__}")  # fmt: skip
    if modules is not None and params is None:
        params = dict(modules.named_parameters())
    data = eager_graph(tensors, _eager_names(names, params), highlight_after)
    groups = module_groups(data, modules) if modules is not None else {}
    if collapse:
        if modules is None:
            raise ValueError("draw: collapse= needs modules=, the network whose layers to collapse")
        which = [n for n, _ in modules.named_children()] if collapse is True else list(collapse)
        known = {n for n, _ in modules.named_modules() if n}
        unknown = [n for n in which if n not in known]
        if unknown:
            raise ValueError(f"draw: collapse names {unknown} are not modules of the network "
                             f"(its modules: {sorted(known)})")  # fmt: skip
        data, groups = collapse_modules(data, groups, which, modules)
    data = collapse_chains(data, max_nodes)
    g = _new_graph("eager")
    add_eager(g, data, show_saved=show_saved, align_leaves=modules is None,
              shapes=modules is not None if shapes is None else shapes)  # fmt: skip
    if groups:
        add_module_clusters(g, data, groups, modules)
    items = list(EAGER_LEGEND)
    if groups:
        items.append(("module (its ops)", COLORS["cluster"]))
    if any(n.kind == "module" for n in data.nodes):
        items.append(("collapsed module", COLORS["module"]))
    if any(n.info.get("after") for n in data.nodes):
        items.append(("recorded by backward (create_graph)", COLORS["after"]))
    _finish(g, legend and _legend(items, title), title)
    return g


def add_module_clusters(g, data: GraphData, groups: dict, model, prefix: str = "") -> None:
    """Put the records of each module into a labelled Graphviz cluster, nested as the modules
    are (``features`` holds ``features.0`` ...). A node drawn earlier moves into the cluster
    that mentions it."""
    present = {r.id for r in data.nodes}
    members: dict[str, list] = {}
    for rid, name in groups.items():
        if rid in present:
            members.setdefault(name, []).append(rid)
    names = set(members)
    for name in list(names):  # the enclosing modules get boxes too
        parts = name.split(".")
        names.update(".".join(parts[:k]) for k in range(1, len(parts)))
    fill, border = COLORS["cluster"]
    order = {n: i for i, (n, _) in enumerate(model.named_modules())}  # registration order

    def emit(parent_graph, name):
        with parent_graph.subgraph(name="cluster_" + prefix + name.replace(".", "_")) as c:
            c.attr(label=module_label(model, name), labeljust="l", labelloc="t", style="rounded,"
                   "filled", fillcolor=fill, color=border, fontsize="12", fontcolor=border,
                   margin="10")  # fmt: skip
            for rid in members.get(name, ()):
                c.node(prefix + rid)
            for child in sorted((n for n in names if n.rpartition(".")[0] == name), key=order.get):
                emit(c, child)

    for top in sorted((n for n in names if "." not in n), key=order.get):
        emit(g, top)


def _finish(g, legend_label, title):
    if legend_label:
        g.attr(label=legend_label, labelloc="t", labeljust="c")
    elif title:
        g.attr(label=title, labelloc="t", fontsize="16")


# -- dispatch and side by side --------------------------------------------------------------
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


def _input_arrays(inputs) -> dict:
    if not inputs:
        raise ValueError("draw_both: pass the inputs as keywords, e.g. draw_both(fn, A=a, B=b)")
    return {
        k: np.asarray(v, dtype=np.float32) if not hasattr(v, "dtype") else np.asarray(v)
        for k, v in inputs.items()
    }


def _run_symbolic(fn, arrays):
    """``fn`` on Variables; its gradient graph and every value, by an Executor."""
    from ..symbolic import Executor, Variable, gradients  # noqa: PLC0415

    variables = {k: Variable(k, shape=a.shape, dtype=a.dtype.name) for k, a in arrays.items()}
    y = fn(**variables)
    grads = gradients(y, list(variables.values()))
    values = Executor([y, *grads]).run(
        dict(zip(variables.values(), arrays.values())), return_all=True
    )
    return y, grads, values


def _run_eager(fn, arrays, out_name="output"):
    """``fn`` on our eager leaves (named by keyword), then backward (of ``sum`` if needed)."""
    import tinygrad_edu as tg  # noqa: PLC0415

    leaves = {k: tg.tensor(a, requires_grad=True) for k, a in arrays.items()}
    for k, t in leaves.items():
        t.name = k
    out = fn(**leaves)
    if out.name is None:
        out.name = out_name
    if out.grad_fn is None:
        raise ValueError("draw_both: the function's result does not depend on its inputs")
    out.backward(gradient=None if out.numel() == 1 else tg.ones_like(out), retain_graph=True)
    return out, leaves


def _run_torch(fn, arrays):
    """``fn`` on PyTorch leaves (``requires_grad=True``), then backward (of ``sum`` if needed)."""
    torch = require_torch("draw_both(..., forms=(..., 'torch'))")
    leaves = {k: torch.tensor(a, requires_grad=True) for k, a in arrays.items()}
    out = fn(**leaves)
    if not isinstance(out, torch.Tensor) or out.grad_fn is None:
        raise ValueError("draw_both: the function's result does not depend on its inputs")
    out.backward(gradient=torch.ones_like(out), retain_graph=True)
    return out, leaves


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
    default) stacks them when side by side they would be wider than ``MAX_WIDTH_PX``.

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
    arrays = _input_arrays(inputs)
    g = _new_graph("both")
    panels = []
    y_name = "output"
    if "symbolic" in forms:
        y, grads, values = _run_symbolic(fn, arrays)
        y_name = symbolic_graph([y]).nodes[0].label
        y_name = y_name if len(y_name) <= 12 else "output"
    if "eager" in forms:
        out, leaves = _run_eager(fn, arrays, y_name)
        y_name = out.name
    for form in forms:
        if form == "symbolic":
            data = collapse_chains(symbolic_graph([y, *grads]), max_nodes)
            labels = {gr: f"∂{y_name}/∂{k}" for k, gr in zip(inputs, grads)}
        elif form == "eager":
            data = collapse_chains(eager_graph(out, dict(leaves)), max_nodes)
        else:
            t_out, t_leaves = _run_torch(fn, arrays)
            data = collapse_chains(eager_graph(t_out, {y_name: t_out, **t_leaves}), max_nodes)
        legend = SYMBOLIC_LEGEND if form == "symbolic" else EAGER_LEGEND
        with g.subgraph(name=f"cluster_{form}") as c:
            c.attr(
                label=_legend(legend, _FORM_TITLES[form]),
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
    if stack is None:
        stack = len(panels) > 1 and natural_width(g) > MAX_WIDTH_PX
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


def natural_width(g) -> float:
    """The width in CSS pixels that ``g`` has before it is scaled to fit (one ``dot`` run)."""
    import re  # noqa: PLC0415

    unsized = g.copy()
    unsized.graph_attr.pop("size", None)
    svg = unsized.pipe(format="svg").decode("utf-8")
    match = re.search(r'<svg[^>]*?width="([\d.]+)pt"', svg)
    return float(match.group(1)) / 0.75 if match else 0.0


# -- rendering ------------------------------------------------------------------------------
def check_dot() -> str:
    """The path of Graphviz's ``dot``; raises :class:`DotNotFoundError` with install help."""
    path = shutil.which("dot")
    if path is None:
        raise DotNotFoundError(INSTALL_HINT)
    return path


def render(graph, path, format: str = "png") -> str:  # noqa: A002 (graphviz's own name)
    """Write ``graph`` to ``path`` (the extension is added if missing); returns the file path.

    Checks for Graphviz's ``dot`` first, so a missing install is a clear error, not a blank
    image. ``format`` is any Graphviz output format: ``"png"``, ``"svg"``, ``"pdf"``.
    """
    import os  # noqa: PLC0415

    check_dot()
    path = os.fspath(path)
    stem = path[: -len(format) - 1] if path.endswith("." + format) else path
    return graph.render(outfile=f"{stem}.{format}", format=format, cleanup=True)
