"""Control-flow sub-blocks in drawings of symbolic graphs.

A ``cond`` or ``while_loop`` node runs sub-blocks: the branches, the loop's condition and
body, the body of a loop's gradient. A drawing shows each as a **cluster** (a framed group)
holding the nodes the block computes, nested as the blocks are (a ``cond`` inside a loop body
is a cluster inside the body's cluster). Arrows enter a cluster from the outer nodes the block
reads (its captures; the saved values of a gradient body come from the loop's stack), and a
dotted arrow leaves from each of the block's outputs to the control-flow node.

Clusters are labelled with the block's number in its Program when the graph was built in a
``program_guard`` (numbers in the default program depend on what else was built before).

>>> from tinygrad_edu.symbolic import Program, Variable, cond, program_guard
>>> from tinygrad_edu.viz.traverse import symbolic_graph
>>> with program_guard(Program()):
...     x = Variable("x")
...     y = cond(x.sum() > 0, lambda: x * 2, lambda: -x)
>>> [label for _, _, label in symbolic_graph([y]).blocks]
['cond: true branch (block 1)', 'cond: false branch (block 2)']
"""

from __future__ import annotations

from .records import EdgeRecord, GraphData, display_name, sub_blocks, symbolic_edges

__all__ = ["add_blocks", "ROLE_NAMES", "cluster_tree"]

ROLE_NAMES = {
    "true_block": "true branch", "false_block": "false branch", "cond_block": "condition",
    "body_block": "body", "body": "gradient body",
}  # fmt: skip


def add_blocks(data: GraphData, order, ids: dict, record, op_ids) -> None:
    """Append the records, edges and clusters of every sub-block run by the nodes of
    ``order`` (and, nested, by the nodes inside them) to ``data``. ``record(node, id, label,
    within=top, **info)`` makes a tensor record as the main graph's are; ``top`` is the
    control node of ``order`` whose blocks hold it (it tells which output a gradient
    inside differentiates)."""
    work = [(node, None, ids.__getitem__, node) for node in order if sub_blocks(node)]
    names: dict = {}
    while work:
        control, parent, outside, top = work.pop(0)  # outside(node): its record id out there
        for role, block in sub_blocks(control):
            key = f"b{len(data.blocks)}"
            label = f"{control.op.name.replace('_', ' ')}: {ROLE_NAMES.get(role, role)}"
            if not block.program._weak:  # a Program of one's own: its blocks' numbers are stable
                label = f"{label} (block {block.idx})"
            data.blocks.append((key, parent, label))
            local = {}
            for k, p in enumerate(block.params):
                local[p] = f"{key}_p{k}"
                data.nodes.append(
                    record(p, local[p], f"{p.name}", within=top, block=key, param=True)
                )
            outer = dict(zip(block.captures, _capture_sources(control, block)))
            inner = _inner_order(block)
            for k, node in enumerate(inner):
                local[node] = f"{key}_t{k}"
                title = display_name(node, names)
                data.nodes.append(record(node, local[node], title, within=top, block=key))

            def source(n, local=local, outer=outer, outside=outside):
                return local[n] if n in local else outside(outer[n])

            for node in inner:
                symbolic_edges(node, source, local[node], op_ids, data.nodes, data.edges, key)
                if sub_blocks(node):
                    work.append((node, key, source, top))
            for k, out in enumerate(block.outputs):
                data.edges.append(EdgeRecord(source(out), outside(control), f"out {k}", "block"))


def _inner_order(block) -> list:
    from ..symbolic.static.control_flow import block_order  # noqa: PLC0415

    return block_order(block)


def _capture_sources(control, block) -> list:
    """The outer node that supplies each of ``block.captures``, in order."""
    attrs, inputs = control.attrs, control.inputs
    if control.op.name == "cond":
        return list(inputs[1:])
    if control.op.name == "while":
        return list(inputs[len(attrs["body_block"].params) :])
    # while_grad: saved values come from the stack (input 0), the others follow the adjoints
    n_saved, m = attrs["n_saved"], len(block.params)
    outer = list(inputs[1 + m : 1 + m + len(block.captures) - n_saved])
    return [inputs[0]] * n_saved + outer


def cluster_tree(blocks) -> list:
    """``(key, parent, label)`` sorted so that every parent comes before its children."""
    placed, result, pending = {None}, [], list(blocks)
    while pending:
        ready = [b for b in pending if b[1] in placed]
        if not ready:  # a parent was elided: hang the rest at the top
            ready = pending[:1]
        for b in ready:
            pending.remove(b)
            placed.add(b[0])
            result.append(b)
    return result
