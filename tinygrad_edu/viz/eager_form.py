"""The eager form (op-as-node) drawn: :func:`draw_eager` and :func:`add_eager`.

Each backward op is a box (``MulBackward0``); arrows follow ``next_functions``, the way
gradients flow. ``AccumulateGrad`` boxes (green) point at the leaf tensors they fill (blue,
with ``.grad``); the output is yellow at the top; nodes recorded by a ``create_graph``
backward are orange. PyTorch's own ``grad_fn`` graphs are drawn the same way, and a network's
modules as labelled clusters (:func:`add_module_clusters`).

>>> import tinygrad_edu as tg
>>> a = tg.tensor([1.0, 2.0], requires_grad=True)
>>> dot = draw_eager((a * a).sum(), names={"a": a}, legend=False)
>>> dot.source.count("n1 -> n2")  # MulBackward0 -> AccumulateGrad of a, once per use
2
"""

from __future__ import annotations

from .modules import collapse_modules, module_groups, module_label
from .style import (
    COLORS,
    DEFAULT_MAX_NODES,
    EAGER_LEGEND,
    EDGE_COLORS,
    box_label,
    finish,
    format_array,
    join_parts,
    legend_table,
    new_graph,
    same_rank,
    shape_text,
)
from .traverse import GraphData, eager_graph
from .traverse import collapse as collapse_chains

__all__ = ["draw_eager", "add_eager", "add_module_clusters"]


def _eager_names(names, params):
    merged = {}
    for mapping in (params, names):
        if mapping:
            merged.update(dict(mapping))
    return merged or None


def device_text(rec) -> str | None:
    """Where a record's tensor or backward op lives, when that is not the CPU: ``sim:0``, and
    for a move (``ToCopyBackward0``) the way its gradient goes back, ``grad sim:0 → cpu``."""
    device, source = getattr(rec.ref, "device", None), getattr(rec.ref, "source", None)
    if source is not None and str(source) != str(device):
        return f"grad {device} → {source}"
    return None if device is None or str(device) == "cpu" else f"on {device}"


def _saved_rows(saved) -> list:
    """The rows of a backward node's box that show what it saved (``show_saved=True``)."""
    rows = []
    for what, arr, shape in saved:
        if what == "freed":
            rows.append(("saved values freed (retain_graph=False)", [], "#b91c1c"))
        elif shape is None:  # a saved attribute, not a tensor (PyTorch's alpha...)
            rows.append((f"saved {what} = {arr}", [], "#64748b"))
        elif arr is None:
            rows.append((f"keeps shape of {what}: {shape_text(shape)}", [], "#64748b"))
        else:
            rows.append((f"saved {what}: {shape_text(shape)}", format_array(arr), "#334155"))
    return rows


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
                sub = f"{shape_text(info['shape'])} · {sub}"
            attrs = dict(shape="box", style="filled,rounded,bold", fillcolor=fill, color=border)
            g.node(nid, box_label(rec.label, sub, title_size=13), **{**attrs, **over})
            continue
        rows = []
        sub = None
        if rec.kind in ("leaf", "output"):
            sub = shape_text(info["shape"], info["dtype"])
            if rec.kind == "leaf" and show_grad and rec.ref.grad is not None:
                rows.append((".grad", format_array(rec.ref.grad), "#0f172a"))
            if rec.kind == "output":
                sub = f"{sub} · grad_fn={info['grad_fn'].name()}"
        elif rec.kind == "backward":
            if shapes and info.get("out_shape") is not None:
                sub = shape_text(info["out_shape"])
            if info.get("collapsed"):
                sub = f"chain of {info['collapsed']}" + (f" · {sub}" if sub else "")
            if show_saved:
                rows.extend(_saved_rows(info["saved"]))
        if rec.kind in ("leaf", "output", "backward"):  # off the CPU: say where (lesson 7)
            sub = join_parts(sub, device_text(rec))
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
        g.node(nid, box_label(title, sub, rows, title_size=title_size), **attrs)
    if align_leaves:
        same_rank(g, [prefix + r.id for r in data.nodes if r.kind == "leaf"])
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
    g = new_graph("eager")
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
    finish(g, legend and legend_table(items, title), title)
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
