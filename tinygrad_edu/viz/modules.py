"""Which module made which backward node: the boxes of ``draw(loss, modules=model)``.

Calling a :class:`~tinygrad_edu.nn.Module` notes, on its output's ``grad_fn``, the module and
the node sequence number at which the call began (``Module.__call__``). The nodes recorded
*during* the call are exactly those reachable from the output's ``grad_fn`` with a larger
``sequence_nr``, so afterwards each node can be given to the innermost module call that holds
it. A parameter's ``AccumulateGrad`` node (and the leaf box it fills) goes to the module that
owns the parameter.

:func:`module_groups` returns that assignment for the records of an eager
:class:`~tinygrad_edu.viz.traverse.GraphData`; :func:`collapse_modules` replaces the records of
chosen modules by one box each (a network drawn as its architecture).

>>> import tinygrad_edu as tg
>>> from tinygrad_edu import nn
>>> from tinygrad_edu.viz import eager_graph
>>> net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
>>> loss = net(tg.randn(5, 3)).sum()
>>> groups = module_groups(eager_graph(loss), net)
>>> sorted(set(groups.values()))
['0', '1', '2']
"""

from __future__ import annotations

from dataclasses import replace

from .records import EdgeRecord, GraphData, NodeRecord

__all__ = ["module_groups", "module_label", "collapse_modules"]


def _named_modules(model) -> dict[int, str]:
    if model is None:
        return {}
    if not hasattr(model, "named_modules"):
        raise TypeError(
            f"draw: modules= expects an nn.Module (the network whose layers to box), got "
            f"{type(model).__name__}"
        )
    return {id(m): name for name, m in model.named_modules() if name}


def module_groups(data: GraphData, model) -> dict[str, str]:
    """Record id -> dotted name of the innermost module of ``model`` that made it.

    Records outside every module (the loss function's ops, inputs) are absent.
    """
    from ..eager.node import AccumulateGrad  # noqa: PLC0415

    names = _named_modules(model)
    owner = {}  # id(parameter) -> module name
    for mod_name, mod in (model.named_modules() if model is not None else ()):
        for p in mod._parameters.values():
            if p is not None and mod_name:
                owner.setdefault(id(p), mod_name)
    by_node = {rec.ref: rec.id for rec in data.nodes if rec.kind in ("backward", "accumulate")}
    best: dict = {}  # node -> (start, name) of the innermost call holding it
    for rec in data.nodes:
        if rec.kind != "backward":
            continue
        for ref, start in getattr(rec.ref, "__dict__", {}).get("_module_calls", ()):
            mod = ref()
            name = names.get(id(mod)) if mod is not None else None
            if name is None:
                continue
            stack, seen = [rec.ref], set()
            while stack:  # the nodes recorded during this call
                node = stack.pop()
                if node in seen or node.sequence_nr <= start or isinstance(node, AccumulateGrad):
                    continue
                seen.add(node)
                if node in by_node and start > best.get(node, (-1, None))[0]:
                    best[node] = (start, name)
                stack.extend(n for n, _ in node.next_functions if n is not None)
    groups = {by_node[node]: name for node, (_, name) in best.items()}
    for rec in data.nodes:
        if rec.kind == "accumulate":
            name = owner.get(id(rec.ref.variable))
            if name is not None:
                groups[rec.id] = name
        elif rec.kind == "leaf" and rec.info.get("accumulate") in groups:
            groups[rec.id] = groups[rec.info["accumulate"]]
    return groups


def module_label(model, name: str) -> str:
    """``"conv1 · Conv2d(1, 16, kernel_size=(3, 3), ...)"``: a module's name and its
    one-line description (cut at 60 characters)."""
    mod = dict(model.named_modules())[name]
    extra = mod.extra_repr()
    text = f"{type(mod).__name__}({extra})" if extra else type(mod).__name__
    if len(text) > 60:
        text = text[:57] + "…)"
    return f"{name} · {text}"


def collapse_modules(data: GraphData, groups: dict, names, model) -> tuple[GraphData, dict]:
    """Replace the records of each module in ``names`` (and of its sub-modules) by one
    ``"module"`` record; returns the new graph and the updated groups."""
    merged: dict[str, str] = {}
    records: dict[str, NodeRecord] = {}
    for rec in data.nodes:
        g = groups.get(rec.id)
        top = next((n for n in names if g == n or (g or "").startswith(n + ".")), None)
        if top is None:
            continue
        mid = "m_" + top.replace(".", "_")
        merged[rec.id] = mid
        if mid not in records:
            records[mid] = NodeRecord(mid, "module", module_label(model, top), None,
                                      {"module": top, "members": 0, "shape": None})  # fmt: skip
        info = records[mid].info
        info["members"] += rec.kind == "backward"
        if rec.kind == "backward" and info["shape"] is None and rec.info.get("out_shape"):
            info["shape"] = rec.info["out_shape"]  # the first in traversal order: the output
    nodes, seen = [], set()
    for rec in data.nodes:
        mid = merged.get(rec.id)
        if mid is None:
            nodes.append(rec)
        elif mid not in seen:
            seen.add(mid)
            nodes.append(records[mid])
    edges, pairs = [], set()
    for e in data.edges:
        src, dst = merged.get(e.src, e.src), merged.get(e.dst, e.dst)
        if src == dst or (src, dst) in pairs:
            continue
        pairs.add((src, dst))
        moved = src != e.src or dst != e.dst
        edges.append(replace(e, src=src, dst=dst, label=None if moved else e.label))
    new_groups = {merged.get(k, k): v for k, v in groups.items()}
    for mid, rec in records.items():
        parent = rec.info["module"].rpartition(".")[0]
        if parent:
            new_groups[mid] = parent
        else:
            new_groups.pop(mid, None)
    return GraphData(data.form, nodes, [EdgeRecord(**vars(e)) for e in edges], data.outputs), (
        new_groups
    )
