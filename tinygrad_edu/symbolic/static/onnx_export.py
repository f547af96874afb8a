r"""``to_onnx(outputs, path, feed_dict)``: a symbolic graph as an ONNX model.

ONNX is the industry's file format for static graphs, and it is tensor-as-node like this
engine: a ``GraphProto`` lists ``NodeProto`` s in topological order, each naming the tensors
it reads and writes; ``initializer`` s hold constants; subgraphs hold the branches of ``If``
and the body of ``Loop``. So the export is a walk in execution order, one (or a few) ONNX
nodes per node: ``add`` is ``Add``, ``softmax_cross_entropy`` becomes ``LogSoftmax``,
``Mul``, ``ReduceSum``, ``Neg`` and ``Div``; ``conv2d`` is ``Conv``; ``cond`` is ``If`` and
``while_loop`` is ``Loop``. Gradient graphs export too: they are graphs of the same ops.
ONNX converts no types implicitly, so the export reproduces the engine's rule (PyTorch's, the
Executor's): a Python number takes its partner's dtype, and mixed inputs are cast to the
dtype the Executor computed on the example feed.

``feed_dict`` gives example inputs. The graph is run once on them, which fixes every input's
shape and dtype in the model and gives the shapes some conversions need (the axes that
``sum_to`` sums over). The model is checked with ``onnx.checker`` before it is written.

Needs the ``onnx`` package: ``pip install "tinygrad_edu[onnx]"`` (``onnxruntime`` too, to
run the file).
"""

from __future__ import annotations

import itertools

import numpy as _np  # initializers are numpy arrays

from ...ops.base import NoOnnx
from ..executor import Executor
from ..graph import topo_sort
from ..tensor_node import CONSTANT, PLACEHOLDER, Node
from .onnx_ops import _COMPARE, _UNIFY, OPSET, OnnxWriter, _is_weak

__all__ = ["to_onnx", "ONNX_OPS", "OPSET", "ONNX_INSTALL_HINT", "ops_markdown", "onnx_form"]

ONNX_INSTALL_HINT = 'pip install "tinygrad_edu[onnx]"'
#: the symbolic engine's own ops that export (``cond`` is ``If``, ``while`` is ``Loop``)
_ENGINE_OPS = ("cond", "stop_gradient", "tuple_get", "while")


def onnx_form(op):
    """``op``'s ONNX form (an ONNX operator's name or a method), or a :class:`NoOnnx` reason."""
    form = getattr(op, "onnx", None)
    return NoOnnx("no ONNX form declared") if form is None else form


def _exports(op) -> bool:
    return not isinstance(onnx_form(op), NoOnnx)


def _library():
    from ...ops import REGISTRY  # noqa: PLC0415  (every op module, registered)

    return REGISTRY


#: every op that exports (the op library's with an ONNX form, and the engine's own)
ONNX_OPS = sorted({n for n, op in _library().items() if _exports(op)} | set(_ENGINE_OPS))


def ops_markdown() -> str:
    """The docs' list of the ops that export and, for the others, the reason each declares
    (``Op.onnx``), made from the op registry (``docs/concepts/compiler.md`` holds this text
    between its ``onnx-ops`` markers; a test fails when the page is stale)."""
    library = _library()
    exported = [n for n in sorted(library) if _exports(library[n])]
    why: dict = {}
    for n in sorted(library):
        if not _exports(library[n]):
            why.setdefault(str(onnx_form(library[n])), []).append(n)
    lines = [
        f"Of the op library's {len(library)} ops, {len(exported)} export, with the symbolic "
        f"engine's own {', '.join(f'`{op}`' for op in _ENGINE_OPS)} (opset {OPSET}). Each "
        "op's form is part of its declaration (`Op.onnx`: one ONNX operator, or a method "
        "that writes its decomposition):",
        "",
        ", ".join(f"`{op}`" for op in exported) + ".",
        "",
        f"The {sum(map(len, why.values()))} that do not export, with the reason each op "
        "declares (exporting one is an error that gives it):",
        "",
    ]
    lines += [f"* {reason}: {', '.join(f'`{op}`' for op in ops)}" for reason, ops in why.items()]
    lines += ["", "The integer forms of the `bitwise_*` ops need opset 18; their boolean forms "
              "export."]  # fmt: skip
    return "\n".join(lines)


def _onnx():
    try:
        import onnx  # noqa: PLC0415
    except ImportError:
        raise ImportError(f"to_onnx needs the onnx package: {ONNX_INSTALL_HINT}") from None
    return onnx


def to_onnx(outputs, path, feed_dict, name: str = "tinygrad_edu") -> str:
    """Write ``outputs`` (a node or a list) and everything they need as an ONNX model.

    Args:
        outputs: the graph's outputs (the model's outputs, in order).
        path: where to write the ``.onnx`` file.
        feed_dict: an example value for every Variable (fixes the inputs' shapes and dtypes).
        name: the graph's name in the model.

    Returns:
        ``path``. The model's inputs are named after the Variables, its outputs ``output_k``.

    Raises:
        ImportError: without the ``onnx`` package (the message names the extra to install).
        NotImplementedError: for an op ONNX cannot express here (the message names it).
    """
    onnx = _onnx()
    nodes = [outputs] if isinstance(outputs, Node) else list(outputs)
    values = Executor(nodes).run(feed_dict, return_all=True)
    ex = _Export(onnx, values)
    graph_inputs = []
    for node in topo_sort(nodes):
        if node.op is PLACEHOLDER:
            ex.names[node] = ex.fresh(node.name)
            graph_inputs.append(ex.value_info(ex.names[node], values[node]))
    body = ex.emit_all([n for n in topo_sort(nodes) if n.op is not PLACEHOLDER])
    graph_outputs = []
    for k, out in enumerate(nodes):
        out_name = f"output_{k}"
        body.append(onnx.helper.make_node("Identity", [ex.ref(out)], [out_name]))
        graph_outputs.append(ex.value_info(out_name, values[out]))
    graph = onnx.helper.make_graph(body, name, graph_inputs, graph_outputs, ex.initializers)
    model = onnx.helper.make_model(
        graph, producer_name="tinygrad_edu", opset_imports=[onnx.helper.make_opsetid("", OPSET)]
    )
    model.ir_version = min(model.ir_version, 8)  # readable by older runtimes too
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))
    return str(path)


class _Export(OnnxWriter):
    """The state of one export: tensor names, initializers, and known example values."""

    def __init__(self, onnx, values: dict):
        self.onnx, self.values = onnx, values
        self.names: dict = {}  # node -> its tensor name in the current (sub)graph scope
        self.initializers: list = []
        self._counter = itertools.count()
        self._taken: set = set()
        self._pending: list = []  # nodes args() needed before the op's own

    # -- names and constants -----------------------------------------------------------------
    def fresh(self, hint: str) -> str:
        base = "".join(c if c.isalnum() or c in "_." else "_" for c in hint)[:40] or "t"
        name = base
        while name in self._taken:
            name = f"{base}_{next(self._counter)}"
        self._taken.add(name)
        return name

    def const(self, value, hint="c", dtype=None) -> str:
        array = _np.asarray(value, dtype=dtype)
        name = self.fresh(hint)
        self.initializers.append(self.onnx.numpy_helper.from_array(array, name))
        return name

    def ref(self, node: Node) -> str:
        if _is_weak(node) and node not in self.names:  # a number used as a tensor
            dtype = self.dtype(node) or _np.asarray(node.attrs["value"]).dtype
            self.names[node] = self.const(node.attrs["value"], node.name, dtype)
        if node not in self.names:
            raise NotImplementedError(
                f"to_onnx: {node.name!r} ({node.op.name}) is used where it was not computed "
                "(a value of another block); this graph cannot be exported"
            )
        return self.names[node]

    def value_info(self, name: str, value):
        array = _np.asarray(value)
        elem = self.onnx.helper.np_dtype_to_tensor_dtype(array.dtype)
        return self.onnx.helper.make_tensor_value_info(name, elem, array.shape)

    # -- what is known about a node ----------------------------------------------------------
    def shape(self, node: Node):
        if node in self.values and hasattr(self.values[node], "shape"):
            return tuple(self.values[node].shape)
        return node.shape

    def dtype(self, node: Node):
        if node in self.values and hasattr(self.values[node], "dtype"):
            return _np.dtype(self.values[node].dtype)
        return None if node.dtype is None else _np.dtype(node.dtype)

    def need_shape(self, node: Node, why: str):
        shape = self.shape(node)
        if shape is None:
            raise NotImplementedError(
                f"to_onnx: {why} needs the shape of {node.name!r}, which is not known here "
                "(inside control flow only static shapes are); declare the Variables' shapes"
            )
        return shape

    # -- emitting -------------------------------------------------------------------------------
    def emit_all(self, order) -> list:
        out: list = []
        for node in order:
            if node.op is CONSTANT:
                if not _is_weak(node):
                    self.names[node] = self.const(node.attrs["value"], node.name)
                continue
            if node.op.name == "tuple_get":
                name = self.ref(node.inputs[0])[node.attrs["index"]]
                if name is None:
                    raise NotImplementedError(
                        f"to_onnx: {node.name!r} is the stack a while_loop keeps for its "
                        "gradient; gradients through while_loop have no ONNX form (export "
                        "the forward loop, or gradients of graphs without loops)"
                    )
                self.names[node] = name
                continue
            out.extend(self.emit(node))
        return out

    def node(self, op_type, inputs, hint, **attrs):
        name = self.fresh(hint)
        return name, self.onnx.helper.make_node(op_type, inputs, [name], **attrs)

    def args(self, node: Node) -> list:
        """Input names. A Python number takes the dtype numpy would give it: in elementwise
        math, the other operand's (the result's, when known); elsewhere numpy's default."""
        operands = node.inputs[1:] if node.op.name == "where" else node.inputs
        partner = next((i for i in operands if not _is_weak(i)), None)
        elementwise = node.op.name in _UNIFY
        out, extra = [], []
        for inp in node.inputs:
            if not _is_weak(inp):
                out.append(self.ref(inp))
                continue
            value = inp.attrs["value"]
            dtype = _np.asarray(value).dtype
            if elementwise and partner is not None:
                known = None if node.op.name in _COMPARE else self.dtype(node)
                dtype = known or self.dtype(partner)
                if dtype is None:  # known only at run time: cast like the partner
                    c = self.const(value, "c", _np.float64)
                    name, cast = self.node("CastLike", [c, self.ref(partner)], "c_like")
                    extra.append(cast)
                    out.append(name)
                    continue
            out.append(self.const(value, "c", dtype))
        self._pending = extra
        return out

    def emit(self, node: Node) -> list:
        name = node.op.name
        if name == "cond":
            return self.emit_cond(node)
        if name == "while":
            return self.emit_while(node)
        form = onnx_form(node.op)
        if isinstance(form, NoOnnx):
            raise NotImplementedError(
                f"to_onnx: op {name!r} (node {node.name!r}) has no ONNX form: {form}"
            )
        args = self.args(node)
        pre, self._pending = self._pending, []
        pre += self._unify(node, args)
        if isinstance(form, str):  # one ONNX operator, the op's inputs its inputs
            nodes, result = self.one(form, args, name)
        else:
            nodes, result = form(self, node, args)
        self.names[node] = result
        return pre + nodes

    def _unify(self, node: Node, args: list) -> list:
        """Cast inputs to the dtype numpy would compute in (ONNX does not promote types)."""
        if node.op.name not in _UNIFY:
            return []
        first = 1 if node.op.name == "where" else 0
        target = self.dtype(node) if node.op.name not in _COMPARE else None
        if target is None:
            known = [self.dtype(i) for i in node.inputs[first:] if not _is_weak(i)]
            known = [d for d in known if d is not None]
            target = _np.result_type(*known) if known else None
        casts = []
        for k in range(first, len(args)):
            inp = node.inputs[k]
            have = None if _is_weak(inp) else self.dtype(inp)
            # NOTE: not `have not in (None, target)`: numpy's dtype('float64') == None holds
            if target is not None and have is not None and have != target:
                to = self.onnx.helper.np_dtype_to_tensor_dtype(target)
                args[k], cast = self.node("Cast", [args[k]], "cast", to=to)
                casts.append(cast)
        return casts
