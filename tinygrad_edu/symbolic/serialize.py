r"""Programs as JSON: Fluid's ProgramDesc, in a format anyone can read.

A program is data: blocks, and in each block its nodes in creation order (every node after
its inputs), each with its op's name, input names and attributes; plus the updates. Nothing
is pickled: an op is found again by name (the op library's registry, then the control-flow
ops), so a file can only ever build graphs out of known ops.

Attributes are JSON values; what JSON lacks is tagged: ``{"__tuple__": [...]}``,
``{"__slice__": [start, stop, step]}``, ``{"__ellipsis__": true}``, ``{"__array__": [...],
"dtype": "float32"}``, ``{"__node__": name}`` and ``{"__block__": idx}``.

>>> from tinygrad_edu.symbolic import Program, Variable, program_guard
>>> main = Program()
>>> with program_guard(main, Program()):
...     y = (Variable("x", shape=(2,)) * 3).sum()
>>> text = main.to_json()
>>> [op.op.name for op in Program.from_json(text).global_block().ops]
['mul', 'sum']
"""

from __future__ import annotations

import json

import numpy as _np  # arrays in attributes are written as nested lists of numbers

from ..backend import to_numpy
from ..ops import REGISTRY
from .node import Node
from .program import Block, Program, Update, building_in, unique_names

__all__ = ["program_to_json", "program_from_json", "FORMAT"]

FORMAT = "tinygrad_edu.program/1"


def program_to_json(program: Program) -> str:
    """The JSON text of ``program`` (see the module docstring)."""
    if any(b is None for b in program.blocks):
        raise ValueError("to_json: a sub-block of this program is gone (nothing uses it any "
                         "more); build the program inside program_guard(Program())")  # fmt: skip
    nodes = program._all_nodes()
    names = {node: name for name, node in unique_names(nodes).items()}

    def ref(node):
        if node not in names:
            raise ValueError(f"to_json: {node.name!r} is used by the program but was built "
                             "outside it; build every node inside program_guard")  # fmt: skip
        return names[node]

    blocks = []
    for b in program.blocks:
        blocks.append({
            "idx": b.idx, "parent_idx": b.parent_idx,
            "params": [ref(n) for n in b.params], "outputs": [ref(n) for n in b.outputs],
            "captures": [ref(n) for n in b.captures], "visible": [v.idx for v in b.visible],
            "parameters": [ref(n) for n in b.parameters],
            "updates": [[ref(u.target), ref(u.value)] for u in b.updates],
        })  # fmt: skip
    records = []
    for node in nodes:
        op = node.op
        if REGISTRY.get(op.name) is not op and _control_flow_ops().get(op.name) is not op:
            if op.name not in ("placeholder", "constant"):
                raise ValueError(f"to_json: op {op.name!r} of node {node.name!r} is not in the "
                                 "op library, so a file could not name it")  # fmt: skip
        records.append({
            "name": names[node], "label": node.name, "op": op.name,
            "block": 0 if node.block is None else node.block.idx,
            "inputs": [ref(i) for i in node.inputs],
            "attrs": {k: _encode(v, ref) for k, v in node.attrs.items()},
            "shape": None if node.shape is None else list(node.shape), "dtype": node.dtype,
            "persistable": node.persistable, "is_gradient": node.is_gradient,
            "is_adjoint_sum": node.is_adjoint_sum,
            "grad_of": None if node.grad_of is None else names.get(node.grad_of),
        })  # fmt: skip
    return json.dumps({"format": FORMAT, "blocks": blocks, "nodes": records}, indent=1)


def program_from_json(text: str) -> Program:
    """The :class:`Program` that ``program_to_json`` wrote."""
    data = json.loads(text)
    if data.get("format") != FORMAT:
        raise ValueError(f"from_json: not a program written by to_json (format "
                         f"{data.get('format')!r}, expected {FORMAT!r})")  # fmt: skip
    program = Program()
    for spec in data["blocks"][1:]:
        program._create_block(program.blocks[spec["parent_idx"]])
    by_name: dict = {}
    ops = {**_control_flow_ops(), "placeholder": _marker("PLACEHOLDER"),
           "constant": _marker("CONSTANT"), **REGISTRY}  # fmt: skip
    for rec in data["nodes"]:
        if rec["op"] not in ops:
            raise ValueError(f"from_json: unknown op {rec['op']!r} (node {rec['name']!r})")
        attrs = {k: _decode(v, by_name, program) for k, v in rec["attrs"].items()}
        with building_in(program.blocks[rec["block"]]):
            node = Node(ops[rec["op"]], [by_name[i] for i in rec["inputs"]], attrs,
                        name=rec["label"], shape=rec["shape"], dtype=rec["dtype"])  # fmt: skip
        node.persistable, node.is_gradient = rec["persistable"], rec["is_gradient"]
        node.is_adjoint_sum = rec["is_adjoint_sum"]
        node.grad_of = by_name.get(rec["grad_of"]) if rec["grad_of"] else None
        by_name[rec["name"]] = node
    for spec, block in zip(data["blocks"], program.blocks):
        block.params = tuple(by_name[n] for n in spec["params"])
        block.outputs = tuple(by_name[n] for n in spec["outputs"])
        block.captures = tuple(by_name[n] for n in spec["captures"])
        block.visible = tuple(program.blocks[i] for i in spec["visible"])
        block.parameters = [by_name[n] for n in spec["parameters"]]
        block.updates = [Update(by_name[t], by_name[v]) for t, v in spec["updates"]]
    return program


def _control_flow_ops() -> dict:
    from .control_flow import CONTROL_FLOW_OPS  # noqa: PLC0415  (control_flow imports us late)

    return CONTROL_FLOW_OPS


def _marker(name: str):
    from . import node  # noqa: PLC0415

    return getattr(node, name)


def _encode(value, ref):
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Node):
        return {"__node__": ref(value)}
    if isinstance(value, Block):
        return {"__block__": value.idx}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v, ref) for v in value]}
    if isinstance(value, list):
        return [_encode(v, ref) for v in value]
    if isinstance(value, slice):
        return {"__slice__": [_encode(v, ref) for v in (value.start, value.stop, value.step)]}
    if value is Ellipsis:
        return {"__ellipsis__": True}
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        array = to_numpy(value)
        return {"__array__": array.tolist(), "dtype": str(array.dtype)}
    raise TypeError(f"to_json: cannot write the attribute value {value!r} "
                    f"({type(value).__name__})")  # fmt: skip


def _decode(value, by_name, program):
    if isinstance(value, list):
        return [_decode(v, by_name, program) for v in value]
    if not isinstance(value, dict):
        return value
    if "__node__" in value:
        return by_name[value["__node__"]]
    if "__block__" in value:
        return program.blocks[value["__block__"]]
    if "__tuple__" in value:
        return tuple(_decode(v, by_name, program) for v in value["__tuple__"])
    if "__slice__" in value:
        return slice(*value["__slice__"])
    if "__ellipsis__" in value:
        return Ellipsis
    if "__array__" in value:
        return _np.asarray(value["__array__"], dtype=value["dtype"])
    raise ValueError(f"from_json: unknown attribute encoding {value!r}")
