"""Graph traversal for drawings: which boxes and arrows exist, as plain records.

Drawing (:mod:`~tinygrad_edu.viz.draw`) and walking are kept apart. This module turns a graph of
either engine into a :class:`GraphData`: a list of :class:`NodeRecord` and a list of
:class:`EdgeRecord`, in a deterministic order. Ids are given by traversal order (``t0``, ``t1``
...), never by ``id()``, so the same graph always gives the same records (and the same DOT).

* :func:`symbolic_graph` (tensor-as-node): every symbolic ``Node`` is a ``"tensor"`` record. An
  op with one input is an edge labelled with the op; an op with several inputs is a small
  ``"op"`` junction record where one edge per input meets (labelled with the input's role
  where order matters: matmul's ``A``/``B``, sub's minuend/subtrahend).
* :func:`eager_graph` (op-as-node): every backward node is a ``"backward"`` (or
  ``"accumulate"``) record, each leaf an extra ``"leaf"`` record, each output an ``"output"``
  record; edges follow ``next_functions`` (the way gradients flow). PyTorch tensors work too:
  their ``grad_fn`` graph is read through the views of :mod:`~tinygrad_edu.viz.torch_graph`.
* :func:`collapse` keeps large graphs legible: runs of the same one-input op become one
  ``×N`` record, and what is still over ``max_nodes`` is replaced by one elision record.

Walks use an explicit stack or queue, so chains of any depth work.

>>> from tinygrad_edu.symbolic import Variable
>>> a = Variable("a", shape=(2,))
>>> g = symbolic_graph([a * a])
>>> [n.label for n in g.nodes], [(e.src, e.dst) for e in g.edges]
(['(a*a)', 'a', '×'], [('t1', 'op0'), ('t1', 'op0'), ('op0', 't0')])
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import replace

from .blocks import add_blocks
from .records import (
    GENERATED_NAME,
    OP_WORDS,
    ROLES,
    SYMBOLS,
    EdgeRecord,
    GraphData,
    NodeRecord,
    sub_blocks,
    symbolic_edges,
)
from .torch_graph import TorchGraph, TorchNodeView, TorchTensorView, is_torch_tensor

__all__ = [
    "NodeRecord",
    "EdgeRecord",
    "GraphData",
    "symbolic_graph",
    "eager_graph",
    "collapse",
    "node_names",
    "ROLES",
    "SYMBOLS",
]


# -- symbolic: tensors are nodes ------------------------------------------------------------
def _walk_symbolic(roots) -> list:
    """Every node reachable from ``roots``, breadth-first from the outputs, inputs in order."""
    seen, order, queue = set(), [], deque(roots)
    while queue:
        node = queue.popleft()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        queue.extend(i for i in node.inputs if i not in seen)
    return order


_MAX_TITLE = 28  # a formula longer than this is named by a word for its op


def _display_names(order, labels=None, seed_of=None) -> dict:
    """node -> the name a drawing gives it, the same every time the graph is drawn.

    A name given in ``labels``, else the node's own name when it was chosen (``"x"``,
    ``"(A+B)"``), else for a gradient its ``∂y/∂x`` (when the ``gradients()`` call that made
    it can be told, ``seed_of``), else a formula rebuilt from its inputs' display names
    (``"(-f-f)"``), else,
    when that is too long, a word for the op numbered in creation order (``"product #2"``).
    Generated ``op#seq`` names, which depend on how many nodes were made before, never show.
    """
    from ..symbolic.tensor_node import _name  # noqa: PLC0415  (the library's own naming rule)

    labels = labels or {}
    display, counts = {}, {}
    for node in sorted(order, key=lambda n: n.seq):  # creation order: inputs come first
        if node in labels:
            display[node] = labels[node]
            continue
        name = node.name or ""
        if name and not GENERATED_NAME.search(name):
            display[node] = name
            continue
        seed = (seed_of or {}).get(node)
        if node.grad_of is not None and seed is not None:
            y = display.get(seed.inputs[0], seed.inputs[0].name)
            display[node] = f"∂{y}/∂{display.get(node.grad_of, node.grad_of.name)}"
            continue
        inputs = [_Named(display.get(i) or GENERATED_NAME.sub("…", i.name or "?"))
                  for i in node.inputs]  # fmt: skip
        text = _name(node.op, inputs, node.attrs) if inputs else None
        if text is None or len(text) > _MAX_TITLE:
            word = OP_WORDS.get(node.op.name, node.op.name)
            counts[word] = counts.get(word, 0) + 1
            text = f"{word} #{counts[word]}"
        display[node] = text
    return display


class _Named:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


def _seeds_of(order) -> dict:
    """gradient node -> the output whose ``gradients()`` call made it (the ``ones_like`` seed
    among its ancestors made last), or None when no seed is drawn (an optimised graph)."""
    seeds = {}
    for node in sorted(order, key=lambda n: n.seq):
        found = [seeds[i] for i in node.inputs if seeds.get(i) is not None]
        if node.is_gradient and node.op.name == "ones_like" and node.inputs:
            found.append(node)
        seeds[node] = max(found, key=lambda n: n.seq) if found else None
    return seeds


def symbolic_graph(nodes, labels=None) -> GraphData:
    """Records for the symbolic graph of ``nodes`` (a Node or a list of Nodes).

    ``labels`` (node -> name) renames nodes, also inside the names built from them and in
    gradient titles (``∂f'/∂t`` once ``labels={d1: "f'"}``).

    Raises:
        ValueError: when nothing to draw was passed.
    """
    from ..symbolic import CONSTANT, PLACEHOLDER, Node  # noqa: PLC0415

    roots = [nodes] if isinstance(nodes, Node) else list(nodes)
    if not roots:
        raise ValueError("draw_symbolic: no nodes were passed; pass the output node(s) to draw")
    for r in roots:
        if not isinstance(r, Node):
            raise TypeError(f"draw_symbolic: expected symbolic Nodes, got {type(r).__name__}")
    order = _walk_symbolic(roots)
    ids = {n: f"t{i}" for i, n in enumerate(order)}
    seed_of = _seeds_of(order)
    display = _display_names(order, labels, seed_of)

    def record(node, rid, label, within=None, **extra):
        # a node inside a sub-block differentiates what the block's control node does: a
        # gradient branch of `cond` computes ∂c/∂z for the c whose seed fed that cond
        seed = seed_of.get(node)
        if seed is None and within is not None:
            seed = seed_of.get(within)
        info = {
            "shape": node.shape,
            "dtype": node.dtype,
            "gradient": node.is_gradient,
            "adjoint_sum": node.is_adjoint_sum,
            "variable": node.op is PLACEHOLDER,
            "constant": node.op is CONSTANT,
            "op": node.op.name,
            "output": node in roots,
            **extra,
        }
        y = display.get(seed.inputs[0], seed.inputs[0].name) if seed is not None else None
        if node.grad_of is not None:
            x = display.get(node.grad_of, node.grad_of.name)
            info["grad_of"] = f"∂{y}/∂{x}" if y else f"∂/∂{x}"  # no seed drawn: ∂/∂x
        if seed is node:
            info["grad_of"] = f"∂{y}/∂{y} = 1"
        return NodeRecord(rid, "tensor", label, node, info)

    records = [record(node, ids[node], display[node]) for node in order]
    edges, op_ids = [], (f"op{k}" for k in itertools.count())
    for node in order:
        symbolic_edges(node, ids.__getitem__, ids[node], op_ids, records, edges)
    data = GraphData("symbolic", records, edges, [ids[r] for r in roots])
    if any(sub_blocks(n) for n in order):
        add_blocks(data, order, ids, record, op_ids)
    return data


# -- eager: backward ops are nodes ----------------------------------------------------------
def _saved_info(node) -> list:
    """``(what, array-or-None, shape)`` for the values an OpBackward keeps for backward."""
    from ..eager.node import SavedTensor  # noqa: PLC0415

    if isinstance(node, TorchNodeView):
        return node.saved_info()
    out = []
    shapes = getattr(node, "shapes", None) or ()
    for i, s in enumerate(getattr(node, "saved", ()) or ()):
        if isinstance(s, SavedTensor):
            out.append((f"input {i}", s.data, tuple(s.data.shape)))
        elif s is not None:
            out.append((f"input {i}", s, ()))
    saved_out = getattr(node, "saved_out", None)
    if saved_out is not None:
        out.append(("output", saved_out.data, tuple(saved_out.data.shape)))
    kept = {w for w, _, _ in out}
    for i, sh in enumerate(shapes):
        if f"input {i}" not in kept:
            out.append((f"input {i}", None, tuple(sh)))  # only its shape is kept
    if getattr(node, "_freed", False):
        out.append(("freed", None, None))
    return out


def _output_shape(node):
    """The shape of the forward result a backward node belongs to, from its op's shape rule
    (None for nodes without one, such as custom Functions)."""
    op, shapes = getattr(node, "op", None), getattr(node, "shapes", None)
    if op is None or shapes is None:
        return None
    try:
        return tuple(op.shape(*shapes, **node.attrs))
    except Exception:  # a drawing never fails over a caption
        return None


def _is_accumulate(node) -> bool:
    from ..eager.node import AccumulateGrad  # noqa: PLC0415

    return isinstance(node, AccumulateGrad) or getattr(node, "is_accumulate", False)


def _as_eager_outputs(tensors, names):
    """``(outputs, names)``: our Tensors as they are, PyTorch tensors as views (names too)."""
    from ..eager import Tensor  # noqa: PLC0415

    one = isinstance(tensors, Tensor) or is_torch_tensor(tensors)
    outs = [tensors] if one else list(tensors)
    if not any(is_torch_tensor(t) for t in outs):
        return outs, names
    if not all(is_torch_tensor(t) for t in outs):
        kinds = sorted({type(t).__name__ for t in outs})
        raise TypeError(
            f"draw_eager: the outputs mix PyTorch tensors with other objects ({', '.join(kinds)}); "
            "a drawing shows one graph: draw the PyTorch tensors and ours separately"
        )
    graph = TorchGraph()
    views = {k: graph.tensor(t) if is_torch_tensor(t) else t for k, t in (names or {}).items()}
    return [graph.tensor(t) for t in outs], views


def eager_graph(tensors, names=None, highlight_after=None) -> GraphData:
    """Records for the backward graph behind ``tensors`` (a Tensor or a list of Tensors).

    Args:
        tensors: the output(s); each must have a ``grad_fn``. PyTorch tensors work too (all
            outputs from one library): their records then refer to the views of
            :mod:`~tinygrad_edu.viz.torch_graph`.
        names: optional mapping name -> tensor, used to name leaves (and outputs).
        highlight_after: mark nodes with ``sequence_nr`` above this (e.g. the nodes a
            ``create_graph=True`` backward recorded). None: when several outputs are drawn and
            some nodes were created after everything behind the first output, that point.
            ``AccumulateGrad`` nodes are never marked (they are made when a leaf is first
            used, and PyTorch numbers them all 2**64 - 1).

    Raises:
        ValueError: when a tensor has no ``grad_fn`` (a leaf, or computed under ``no_grad``).
    """
    outs, names = _as_eager_outputs(tensors, names)
    by_id = {id(t): k for k, t in (names or {}).items()}
    _check_eager_outputs(outs, by_id)
    order = _backward_order(outs)
    if highlight_after is None and len(outs) > 1:
        highlight_after = _first_output_end(outs, order)
    records = _output_records(outs, by_id)
    ids = {node: f"n{i}" for i, node in enumerate(order)}
    records += [_backward_record(node, ids[node], highlight_after) for node in order]
    edges = [EdgeRecord(f"o{k}", ids[t.grad_fn], None, "output") for k, t in enumerate(outs)]
    _add_backward_edges(order, ids, by_id, records, edges)
    produced = {t.grad_fn: k for k, t in (names or {}).items() if getattr(t, "grad_fn", None)}
    _name_eager_nodes(records, produced)
    return GraphData("eager", records, edges, [f"o{k}" for k in range(len(outs))])


def _check_eager_outputs(outs: list, by_id: dict) -> None:
    """Each output is an eager (or PyTorch) tensor with a ``grad_fn``; else a clear error."""
    from ..eager import Tensor  # noqa: PLC0415

    if not outs:
        raise ValueError("draw_eager: no tensors were passed; pass the output tensor(s) to draw")
    for t in outs:
        if not isinstance(t, Tensor | TorchTensorView):
            raise TypeError(
                f"draw_eager: expected eager Tensors (or PyTorch tensors), got {type(t).__name__}"
            )
        if t.grad_fn is None:
            what = by_id.get(id(t)) or t.name or f"tensor of shape {t.shape}"
            no_grad = "torch.no_grad()" if isinstance(t, TorchTensorView) else "no_grad()"
            raise ValueError(
                f"draw_eager: {what} has no grad_fn: it is a leaf or was computed under "
                f"{no_grad.removesuffix('()')}, so there is no backward graph to draw; set "
                f"requires_grad=True on its inputs (and compute it outside {no_grad})"
            )


def _backward_order(outs: list) -> list:
    """The backward nodes behind ``outs``, breadth first from their ``grad_fn`` s."""
    order, seen, queue = [], set(), deque(t.grad_fn for t in outs)
    while queue:
        node = queue.popleft()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        queue.extend(n for n, _ in node.next_functions if n is not None and n not in seen)
    return order


def _first_output_end(outs: list, order: list):
    """The highest ``sequence_nr`` behind the first output, when some node of ``order`` was
    made after it (the nodes a later output added), else None."""
    first, stack, seen = -1, [outs[0].grad_fn], set()
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            if not _is_accumulate(node):
                first = max(first, node.sequence_nr)
            stack.extend(n for n, _ in node.next_functions if n is not None)
    if any(n.sequence_nr > first for n in order if not _is_accumulate(n)):
        return first
    return None


def _output_records(outs: list, by_id: dict) -> list:
    """One ``output`` record per output tensor, named by ``names``, its own name or its place."""
    records = []
    for k, t in enumerate(outs):
        label = by_id.get(id(t)) or t.name or ("output" if len(outs) == 1 else f"output {k}")
        info = {"shape": tuple(t.shape), "dtype": str(t.dtype), "grad_fn": t.grad_fn}
        records.append(NodeRecord(f"o{k}", "output", label, t, info))
    return records


def _backward_record(node, node_id: str, highlight_after) -> NodeRecord:
    """An ``accumulate`` record for an AccumulateGrad, else a ``backward`` one with its saved
    tensors, number of inputs and output shape."""
    accumulate = _is_accumulate(node)
    after = highlight_after is not None and node.sequence_nr > highlight_after
    info = {"seq": node.sequence_nr, "after": after and not accumulate}
    if accumulate:
        return NodeRecord(node_id, "accumulate", node.name(), node, info)
    info["saved"] = _saved_info(node)
    info["inputs"] = len(node.next_functions)
    info["out_shape"] = _output_shape(node)
    return NodeRecord(node_id, "backward", node.name(), node, info)


def _add_backward_edges(order: list, ids: dict, by_id: dict, records: list, edges: list) -> None:
    """Append each node's edges to its ``next_functions`` and, after each AccumulateGrad, the
    leaf it accumulates into (a ``leaf`` record and its ``.grad +=`` edge)."""
    n_leaves = 0
    for node in order:
        nf = node.next_functions
        for pos, (nxt, nr) in enumerate(nf):
            if nxt is None:
                continue
            label = None
            if len(nf) > 1:
                label = f"input {pos}" + (f" → out {nr}" if nr else "")
            edges.append(EdgeRecord(ids[node], ids[nxt], label, "backward"))
        if _is_accumulate(node):
            v = node.variable
            leaf_id = f"l{n_leaves}"
            n_leaves += 1
            label = by_id.get(id(v)) or v.name or "leaf"
            info = {"shape": tuple(v.shape), "dtype": str(v.dtype), "accumulate": ids[node]}
            records.append(NodeRecord(leaf_id, "leaf", label, v, info))
            edges.append(EdgeRecord(ids[node], leaf_id, ".grad +=", "accumulate"))


def _name_eager_nodes(records, produced) -> None:
    """Give every node record ``info["name"]``: what the drawings, the stepper and the lessons
    call it. NOTE [One name per node]: ``AccumulateGrad (A)`` for leaf ``A``'s node;
    ``MulBackward0 (c)`` when the tensor it belongs to was named (``names={"c": c}``); the
    type alone when the graph has one node of that type; else ``MulBackward0 #2``, the second
    one created (numbered by ``sequence_nr``, the order of the forward code)."""
    leaves = {r.info["accumulate"]: r.label for r in records if r.kind == "leaf"}
    groups: dict = {}
    for r in records:
        if r.kind == "accumulate":
            r.info["name"] = f"{r.label} ({leaves[r.id]})" if r.id in leaves else r.label
        elif r.kind == "backward":
            groups.setdefault(r.label, []).append(r)
    for label, group in groups.items():
        group.sort(key=lambda r: r.info["seq"])
        for k, r in enumerate(group, 1):
            if r.ref in produced:
                r.info["name"] = f"{label} ({produced[r.ref]})"
            else:
                r.info["name"] = label if len(group) == 1 else f"{label} #{k}"


def node_names(target, names=None) -> dict:
    """backward node -> its name in drawings, the stepper and the lessons (see NOTE [One name
    per node]): ``AccumulateGrad (A)``, ``MulBackward0 (D)``, ``AddBackward0 #2``.

    Args:
        target: the output tensor(s) of an eager graph, or its records (``GraphData``).
        names: mapping name -> tensor, as for :func:`eager_graph`.

    >>> import tinygrad_edu as tg
    >>> a = tg.tensor([1.0], requires_grad=True)
    >>> b = a * 2
    >>> sorted(node_names((b * a + a).sum(), names={"a": a, "b": b}).values())
    ['AccumulateGrad (a)', 'AddBackward0', 'MulBackward0 #2', 'MulBackward0 (b)', 'SumBackward0']
    """
    data = target if isinstance(target, GraphData) else eager_graph(target, names)
    return {r.ref: r.info["name"] for r in data.nodes if "name" in r.info}


# -- large graphs ---------------------------------------------------------------------------
def _chain_key(graph: GraphData, rec: NodeRecord):
    if graph.form == "eager":
        return rec.label if rec.kind == "backward" else None
    if rec.info.get("block") is not None:
        return None  # nodes inside a control-flow block stay visible
    return rec.info.get("op") if rec.kind == "tensor" and not rec.info.get("output") else None


def collapse(graph: GraphData, max_nodes: int | None) -> GraphData:
    """A smaller copy of ``graph`` with at most about ``max_nodes`` records.

    First, every run of 3 or more records of the same kind linked one-to-one (``exp`` of ``exp``
    of ``exp``..., or ``ExpBackward0`` -> ``ExpBackward0`` ...) becomes one record labelled
    ``"×N"``. If still too large, the records after the first ``max_nodes - 1`` (in traversal
    order, which starts at the outputs) are replaced by one elision record ``"… N more"``.
    """
    if max_nodes is None or len(graph.nodes) <= max_nodes:
        return graph
    outs, ins = {}, {}
    for e in graph.edges:
        outs.setdefault(e.src, []).append(e)
        ins.setdefault(e.dst, []).append(e)
    recs = {n.id: n for n in graph.nodes}
    merged = {}  # id -> id of the run's first record
    sym = graph.form == "symbolic"
    for n in graph.nodes:
        key = _chain_key(graph, n)
        if key is None or n.id in merged:
            continue
        run, cur = [n.id], n.id
        while True:  # walk away from the outputs while the link is one-to-one and same-kind
            if sym:
                nxt = [e.src for e in ins.get(cur, ())]
            else:
                nxt = [e.dst for e in outs.get(cur, ()) if e.kind != "accumulate"]
            if len(nxt) != 1 or nxt[0] in merged or _chain_key(graph, recs[nxt[0]]) != key:
                break
            if len((outs if sym else ins).get(nxt[0], ())) != 1:
                break  # used elsewhere too: keep it visible
            run.append(nxt[0])
            cur = nxt[0]
        if len(run) >= 3:
            for r in run[1:]:
                merged[r] = n.id
            recs[n.id] = replace(
                n,
                label=f"{key} ×{len(run)}",
                info={**n.info, "collapsed": len(run), "name": f"{key} ×{len(run)}"},
            )
    nodes = [recs[n.id] for n in graph.nodes if n.id not in merged]
    edges, seen = [], set()
    for e in graph.edges:
        src, dst = merged.get(e.src, e.src), merged.get(e.dst, e.dst)
        if src == dst:
            continue
        edges.append(replace(e, src=src, dst=dst))
    if len(nodes) > max_nodes:
        keep = {n.id for n in nodes[: max(max_nodes - 1, 1)]} | set(graph.outputs)
        hidden = len(nodes) - len(keep)
        el = NodeRecord("elided", "elision", f"… {hidden} more nodes …", None, {"hidden": hidden})
        nodes = [n for n in nodes if n.id in keep] + [el]
        new_edges = []
        for e in edges:
            src = e.src if e.src in keep else el.id
            dst = e.dst if e.dst in keep else el.id
            key = (src, dst)
            if src == dst or (el.id in key and key in seen):
                continue
            seen.add(key)
            new_edges.append(replace(e, src=src, dst=dst, label=None if el.id in key else e.label))
        edges = new_edges
    return GraphData(graph.form, nodes, edges, graph.outputs, graph.blocks)
