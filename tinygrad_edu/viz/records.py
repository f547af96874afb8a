"""The records a drawing is made from, and the rules that turn one symbolic node into them.

:mod:`~tinygrad_edu.viz.traverse` walks a whole graph and :mod:`~tinygrad_edu.viz.blocks` the
sub-blocks of control flow; both make their boxes and arrows with the pieces here, so neither
imports the other's internals. Nothing here walks a graph or draws.

* :class:`NodeRecord`, :class:`EdgeRecord`, :class:`GraphData`: boxes, arrows, one graph.
* :func:`symbolic_edges`: the arrows into one symbolic node (a junction for several inputs,
  labelled with :data:`ROLES` where the order matters).
* :func:`display_name`, :func:`sub_blocks`, :func:`op_text`: a node's name, its control-flow
  blocks, the text on a one-input op's arrow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = [
    "NodeRecord", "EdgeRecord", "GraphData", "ROLES", "SYMBOLS", "symbolic_edges",
    "display_name", "sub_blocks", "op_text", "GENERATED_NAME", "OP_WORDS",
]  # fmt: skip

# Input roles shown on the edges of ops whose input order matters.
ROLES = {
    "sub": ("minuend", "subtrahend"),
    "div": ("numerator", "denominator"),
    "matmul": ("left", "right"),
    "pow": ("base", "exponent"),
    "where": ("cond", "if true", "if false"),
    "softmax_cross_entropy": ("logits", "onehot"),
    "relu_grad": ("y", "grad"),
    "getitem_grad": ("x", "grad"),
    "maximum": ("x", "y"),
    "greater": ("x", "y"),
    "less": ("x", "y"),
}
SYMBOLS = {"add": "+", "sub": "−", "mul": "×", "div": "÷", "matmul": "@", "pow": "**"}


@dataclass
class NodeRecord:
    """One box (or junction) of a drawing.

    Attributes:
        id: stable DOT id (traversal order).
        kind: ``"tensor"``, ``"op"``, ``"backward"``, ``"accumulate"``, ``"leaf"``, ``"output"``,
            ``"elision"``.
        label: the main text (a tensor's name, an op's name, ``"MulBackward0"``).
        ref: the engine object drawn (a symbolic Node, an eager Node or Tensor), or None.
        info: extra facts for the drawer (shape, dtype, flags, saved values...).
    """

    id: str
    kind: str
    label: str
    ref: object = None
    info: dict = field(default_factory=dict)


@dataclass
class EdgeRecord:
    """One arrow: ``src`` -> ``dst`` with an optional ``label``; ``kind`` picks the style."""

    src: str
    dst: str
    label: str | None = None
    kind: str = "forward"


@dataclass
class GraphData:
    """The records of one graph, in traversal order, plus the ids of its outputs."""

    form: str  # "symbolic" or "eager"
    nodes: list
    edges: list
    outputs: list
    blocks: list = field(default_factory=list)  # (cluster id, parent cluster id, label)

    def node(self, node_id: str) -> NodeRecord:
        return next(n for n in self.nodes if n.id == node_id)

    def id_of(self, ref) -> str | None:
        """The id of the record drawing engine object ``ref`` (by identity), or None."""
        for n in self.nodes:
            if n.ref is ref and n.kind != "op":
                return n.id
        return None


GENERATED_NAME = re.compile(r"\b[a-z_][a-z0-9_]*#\d+")  # "mul#12": named after a global counter
# what a learner calls an op's result when its formula is too long to be its name
OP_WORDS = {"add": "sum", "sub": "difference", "mul": "product", "div": "quotient",
          "matmul": "matrix product", "neg": "negation", "sum_to": "sum to shape"}  # fmt: skip


def display_name(node, index: dict) -> str:
    """One node's name for a drawing without its graph around it (sub-blocks): generated
    ``op#seq`` names become ``op #k``, numbered in drawing order."""
    if GENERATED_NAME.fullmatch(node.name or ""):
        k = index.setdefault(node.op.name, {}).setdefault(node, len(index[node.op.name]) + 1)
        return f"{OP_WORDS.get(node.op.name, node.op.name)} #{k}"
    return node.name


def symbolic_edges(node, source, node_id, op_ids, records, edges, block=None) -> None:
    """The edges into ``node`` (a labelled arrow for a one-input op; a junction record where
    one arrow per input meets otherwise). ``source(inp)`` gives an input's record id."""
    if not node.inputs:
        return
    kind = "gradient" if node.is_gradient else "forward"
    roles = ROLES.get(node.op.name)
    if len(node.inputs) == 1:
        edges.append(EdgeRecord(source(node.inputs[0]), node_id, op_text(node), kind))
        return
    op_id = next(op_ids)
    symbol = SYMBOLS.get(node.op.name, node.op.name)
    info = {"op": node.op.name, "gradient": node.is_gradient, "block": block}
    records.append(NodeRecord(op_id, "op", symbol, node, info))
    for pos, inp in enumerate(node.inputs):
        label = roles[pos] if roles and pos < len(roles) else None
        if node.op.name == "matmul" and node.attrs.get(("trans_A", "trans_B")[pos]):
            label = f"{label}, transposed"
        edges.append(EdgeRecord(source(inp), op_id, label, kind))
    edges.append(EdgeRecord(op_id, node_id, None, kind))


def sub_blocks(node) -> list:
    """``(role, block)`` for each sub-block a control-flow node runs, else []."""
    return [(k, v) for k, v in node.attrs.items() if hasattr(v, "outputs") and hasattr(v, "params")]


def op_text(node) -> str:
    attrs = {k: v for k, v in node.attrs.items() if v not in (None, False)}
    if node.op.name == "transpose" and not attrs:
        return "transpose"
    if not attrs:
        return node.op.name
    text = ", ".join(f"{k}={v}" for k, v in sorted(attrs.items()))
    return f"{node.op.name}({text})" if len(text) <= 24 else node.op.name
