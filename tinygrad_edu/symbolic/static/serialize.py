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

from ...backend import to_numpy
from ...ops import REGISTRY
from .. import tensor_node as _node_module
from ..graph import topo_sort
from ..tensor_node import CONSTANT, Node
from .control_flow import CONTROL_FLOW_OPS
from .program import JSON_CODEC, Block, Program, Update, building_in, unique_names

__all__ = ["program_to_json", "program_from_json", "FORMAT"]

FORMAT = "tinygrad_edu.program/1"


def program_to_json(program: Program) -> str:
    """The JSON text of ``program`` (see the module docstring)."""
    if any(b is None for b in program.blocks):
        raise ValueError("to_json: a sub-block of this program is gone (nothing uses it any "
                         "more); build the program inside program_guard(Program())")  # fmt: skip
    nodes = program._all_nodes()
    order = topo_sort(nodes)  # a cycle (node.inputs reassigned) is an error naming it
    position = {node: k for k, node in enumerate(nodes)}
    if any(position.get(i, -1) > position[n] for n in nodes for i in n.inputs):
        # an input reassigned to a later node: write every node after its inputs
        nodes = [n for n in order if n in position]
    names = {node: name for name, node in unique_names(nodes).items()}

    def ref(node):
        if node not in names:
            if node in getattr(program, "twins", {}):
                raise ValueError(
                    f"to_json: this program is a clone(for_test=True) whose evaluation graph "
                    f"replaced {node.name!r}, which a control-flow block still reads; save the "
                    "program it was cloned from (and clone it again after loading)"
                )
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
        if REGISTRY.get(op.name) is not op and CONTROL_FLOW_OPS.get(op.name) is not op:
            if op.name not in ("placeholder", "constant", "stop_gradient"):
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
    """The :class:`Program` that ``program_to_json`` wrote. A damaged or edited file (a
    name no earlier node defines, a bad block index, a bogus dtype, a static shape its op
    contradicts, a missing field) is a ValueError naming what is wrong."""
    try:
        return _from_json(text)
    except KeyError as e:  # a field the format requires is missing
        raise ValueError(f"from_json: the file lacks the field {e}; the file was edited or "
                         "is damaged (write it again with to_json)") from None  # fmt: skip


def _from_json(text: str) -> Program:
    data = json.loads(text)
    if data.get("format") != FORMAT:
        raise ValueError(f"from_json: not a program written by to_json (format "
                         f"{data.get('format')!r}, expected {FORMAT!r})")  # fmt: skip
    program = Program()
    blocks = data["blocks"]
    for k, spec in enumerate(blocks[1:], start=1):
        parent = spec["parent_idx"]
        if not isinstance(parent, int) or not 0 <= parent < k:
            raise ValueError(f"from_json: block {k} names parent block {parent!r}, which is not "
                             f"an earlier block (0 to {k - 1}); the file was edited or is "
                             "damaged")  # fmt: skip
        program._create_block(program.blocks[parent])
    by_name: dict = {}
    ops = {**CONTROL_FLOW_OPS, "placeholder": _marker("PLACEHOLDER"),
           "constant": _marker("CONSTANT"), "stop_gradient": _marker("STOP_GRADIENT"),
           **REGISTRY}  # fmt: skip

    def lookup(name, rec, what="reads"):
        if name not in by_name:
            raise ValueError(f"from_json: node {rec['name']!r} {what} {name!r}, which no "
                             "earlier node of the file defines; the file was edited or is "
                             "damaged")  # fmt: skip
        return by_name[name]

    for rec in data["nodes"]:
        if rec["op"] not in ops:
            raise ValueError(f"from_json: unknown op {rec['op']!r} (node {rec['name']!r})")
        inputs = [lookup(i, rec) for i in rec["inputs"]]
        find = lambda name, r=rec: lookup(name, r, "refers to")  # noqa: E731
        attrs = {k: _decode(v, find, program, rec) for k, v in rec["attrs"].items()}
        shape = rec["shape"]
        if shape is not None and not (isinstance(shape, list) and all(
                isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)):
            raise ValueError(f"from_json: node {rec['name']!r} has shape {shape!r}, which is "
                             "not a list of sizes; the file was edited or is damaged")  # fmt: skip
        with building_in(_block(program, rec["block"], rec)):
            node = Node(ops[rec["op"]], inputs, attrs, name=rec["label"],
                        shape=shape, dtype=_checked_dtype(rec))  # fmt: skip
        _check_shape(node, rec)
        node.persistable, node.is_gradient = rec["persistable"], rec["is_gradient"]
        node.is_adjoint_sum = rec["is_adjoint_sum"]
        grad_of = rec["grad_of"]
        node.grad_of = lookup(grad_of, rec, "is the gradient of") if grad_of else None
        by_name[rec["name"]] = node
    for spec, block in zip(blocks, program.blocks):
        rec = {"name": f"block {block.idx}"}
        block.params = tuple(lookup(n, rec) for n in spec["params"])
        block.outputs = tuple(lookup(n, rec) for n in spec["outputs"])
        block.captures = tuple(lookup(n, rec) for n in spec["captures"])
        block.visible = tuple(_block(program, i, rec) for i in spec["visible"])
        block.parameters = [lookup(n, rec) for n in spec["parameters"]]
        block.updates = [Update(lookup(t, rec), lookup(v, rec)) for t, v in spec["updates"]]
    return program


def _block(program, idx, rec):
    """Block ``idx`` of ``program``, or an error naming the record that names it."""
    if not isinstance(idx, int) or isinstance(idx, bool) or not 0 <= idx < len(program.blocks):
        raise ValueError(f"from_json: {rec['name']!r} names block {idx!r}, but the file has "
                         f"blocks 0 to {len(program.blocks) - 1}; the file was edited or is "
                         "damaged")  # fmt: skip
    return program.blocks[idx]


def _checked_dtype(rec):
    """The record's dtype, which must name a real dtype (else the node would silently be
    float32 at run time)."""
    dtype = rec["dtype"]
    if dtype is None:
        return None
    try:
        if not isinstance(dtype, str):
            raise TypeError
        if dtype == _np.dtype(dtype).name:
            return dtype
    except TypeError:
        pass
    return _bad_dtype(rec)


def _bad_dtype(rec):
    raise ValueError(f"from_json: node {rec['name']!r} has dtype {rec['dtype']!r}, which is not "
                     "a dtype name (float32, float64, int64, bool, ...); the file was edited "
                     "or is damaged")  # fmt: skip


def _check_shape(node: Node, rec) -> None:
    """A recorded static shape must be what the op's shape rule gives for the inputs (or a
    constant's own shape): an edited shape would check nothing and fail later, or worse."""
    if node.shape is None:
        return
    if node.op is CONSTANT:
        value = node.attrs.get("value")
        want = tuple(getattr(value, "shape", ()))
    elif REGISTRY.get(node.op.name) is node.op and node.inputs and all(
        i.shape is not None for i in node.inputs
    ):
        try:
            want = node.op.shape(*[i.shape for i in node.inputs], **node.attrs)
        except Exception as e:
            raise ValueError(f"from_json: node {rec['name']!r} ({node.op.name}) does not fit "
                             f"its inputs: {e}; the file was edited or is "
                             "damaged") from e  # fmt: skip
        want = None if want is None else tuple(want)
    else:
        return
    if want is not None and want != node.shape:
        raise ValueError(f"from_json: node {rec['name']!r} ({node.op.name}) records shape "
                         f"{node.shape}, but its op gives {want}; the file was edited or is "
                         "damaged")  # fmt: skip


def _marker(name: str):
    return getattr(_node_module, name)


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


def _decode(value, find, program, rec):
    if isinstance(value, list):
        return [_decode(v, find, program, rec) for v in value]
    if not isinstance(value, dict):
        return value
    if "__node__" in value:
        return find(value["__node__"])
    if "__block__" in value:
        return _block(program, value["__block__"], rec)
    if "__tuple__" in value:
        return tuple(_decode(v, find, program, rec) for v in value["__tuple__"])
    if "__slice__" in value:
        return slice(*value["__slice__"])
    if "__ellipsis__" in value:
        return Ellipsis
    if "__array__" in value:
        try:
            array = _np.asarray(value["__array__"], dtype=_np.dtype(value["dtype"]))
        except (TypeError, ValueError) as e:
            raise ValueError(f"from_json: node {rec['name']!r} has an array attribute that is "
                             f"not an array of dtype {value['dtype']!r} ({e}); the file was "
                             "edited or is damaged") from None  # fmt: skip
        return array
    raise ValueError(f"from_json: unknown attribute encoding {value!r}")


# Program.to_json / Program.from_json call these (see program.JSON_CODEC)
JSON_CODEC.update(to_json=program_to_json, from_json=program_from_json)
