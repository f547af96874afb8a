"""The vocabulary in which each op writes its ONNX form, and control flow.

An op's ONNX form is part of its declaration (``Op.onnx`` in :mod:`tinygrad_edu.ops.base`):
the name of one ONNX operator, or a method ``onnx(self, ex, node, args)`` that writes a few
ONNX nodes with the exporter ``ex``. :class:`OnnxWriter` is what such a method may call:
``ex.node``/``ex.one`` (one ONNX node), ``ex.chain`` (several, each reading earlier results),
``ex.const``/``ex.like`` (initializers), ``ex.need_shape``/``ex.dtype`` (what the example run
told), and the shared shapes of reductions, moments and windows. ``cond`` and
``while_loop``, the symbolic engine's own ops, become ``If`` and ``Loop`` here.
:class:`~tinygrad_edu.symbolic.static.onnx_export._Export` supplies ``node``, ``const``, ``ref``,
``fresh``, ``shape``, ``dtype`` and the graph walk."""

from __future__ import annotations

import numpy as _np  # initializers are numpy arrays

from ...ops.conv import pair
from ..tensor_node import CONSTANT, Node
from .control_flow import block_order

OPSET = 17
_UNIFY = {"add", "sub", "mul", "div", "maximum", "minimum", "greater", "greater_equal", "less",
          "less_equal", "equal", "not_equal", "where", "matmul", "pow_tensor", "cat", "stack",
          "clamp_tensor", "fmod", "remainder", "floor_divide", "atan2", "isclose",
          "binary_cross_entropy", "binary_cross_entropy_with_logits"
          }  # inputs must share one dtype  # fmt: skip


class OnnxWriter:
    """What an op's ``onnx`` method writes with (its argument ``ex``)."""

    OPSET = OPSET

    def one(self, op_type, inputs, hint, **attrs):
        """One ONNX node: ``([the node], its output's name)``, what most forms return."""
        name, n = self.node(op_type, inputs, hint, **attrs)
        return [n], name

    def node_n(self, op_type, inputs, hints, **attrs):
        """One ONNX node with several outputs, named from ``hints``: (names, the node)."""
        names = [self.fresh(h) for h in hints]
        return names, self.onnx.helper.make_node(op_type, inputs, names, **attrs)

    def tensor_type(self, dtype):
        """ONNX's element type for a numpy dtype (or its name): a ``Cast``'s ``to``."""
        return self.onnx.helper.np_dtype_to_tensor_dtype(_np.dtype(dtype))

    def is_integer(self, node) -> bool:
        """Whether ``node``'s value is of an integer (or bool) dtype."""
        dtype = self.dtype(node)
        return dtype is not None and dtype.kind in "iub"

    def finfo(self, node):
        """numpy's ``finfo`` of ``node``'s floating dtype (float32 when unknown)."""
        return _np.finfo(self.dtype(node) or _np.float32)

    def full(self, shape, value, dtype, hint="fill"):
        """An initializer of ``shape`` filled with ``value``."""
        return self.const(_np.full(tuple(shape), value, dtype=dtype), hint)

    @staticmethod
    def as_tuple(axis):
        return _as_tuple(axis)

    def reduce(self, node, args, op_type):
        """``op_type`` (``ReduceSum``, ``ReduceMax`` ...) over the op's ``axis`` attribute
        (all axes when None), keeping dims as its ``keepdims`` says."""
        axis, keep = node.attrs.get("axis"), int(bool(node.attrs.get("keepdims")))
        rank = len(self.need_shape(node.inputs[0], op_type)) if axis is not None else 0
        if axis is not None and rank == 0:  # numpy lets axis 0 reduce a 0-d array: a no-op
            return self.one("Identity", args, op_type.lower())
        axes = None if axis is None else [a % max(rank, 1) for a in _as_tuple(axis)]
        if op_type == "ReduceSum":
            inputs = args + ([self.const(axes, "axes", _np.int64)] if axes is not None else [])
            name, n = self.node(op_type, inputs, "sum", keepdims=keep)
        else:
            extra = {"axes": axes} if axes is not None else {}
            name, n = self.node(op_type, args, op_type.lower(), keepdims=keep, **extra)
        return [n], name

    def target(self, node, args, what):
        """The target shape of reshape/broadcast_to/sum_to: an int64 constant or Shape(like)."""
        if node.attrs.get("shape") is not None:
            return [], self.const(list(node.attrs["shape"]), "shape", _np.int64)
        return self.one("Shape", [args[1]], f"{what}_shape")

    def filled(self, node, args, value):
        c = self.const(value, "fill", _np.float64)
        like, n1 = self.node("CastLike", [c, args[0]], "fill_like")
        shape, n2 = self.node("Shape", [args[0]], "fill_shape")
        name, n3 = self.node("Expand", [like, shape], node.op.name)
        return [n1, n2, n3], name

    # -- the pointwise functions, clamps, logic ---------------------------------------------
    def like(self, value, node, hint="c"):
        """A constant in the dtype of ``node``'s value (float32 when unknown)."""
        return self.const(value, hint, self.dtype(node) or _np.float32)

    def chain(self, steps, hint):
        """Emit ``steps`` [(op_type, inputs, attrs)], where the string "{k}" in an input
        list stands for the result of step k; returns (nodes, name of the last result)."""
        nodes, results = [], []
        for op_type, inputs, attrs in steps:
            ins = [results[int(i[1:-1])] if isinstance(i, str) and i[:1] == "{" else i
                   for i in inputs]  # fmt: skip
            name, n = self.node(op_type, ins, hint, **attrs)
            nodes.append(n)
            results.append(name)
        return nodes, results[-1]

    def to_bool(self, args):
        nodes, out = [], []
        for a in args:
            name, n = self.node("Cast", [a], "bool", to=self.onnx.TensorProto.BOOL)
            nodes.append(n)
            out.append(name)
        return nodes, out

    def logical(self, node, args, op_type):
        """``op_type`` (``And``, ``Or``, ``Xor``, ``Not``) of the inputs as booleans."""
        if node.op.name.startswith("bitwise") and self.dtype(node) != _np.bool_:
            raise NotImplementedError(
                f"to_onnx: {node.op.name} of integers (node {node.name!r}) needs ONNX opset 18 "
                f"(BitwiseAnd ...); this exporter writes opset {OPSET}. Booleans export"
            )
        pre, ins = self.to_bool(args)
        name, n = self.node(op_type, ins, node.op.name)
        return pre + [n], name

    def all_any(self, node, args, op_type):
        pre, (b,) = self.to_bool(args)
        as_int, n = self.node("Cast", [b], "as_int", to=self.onnx.TensorProto.INT32)
        nodes, red = self.reduce(node, [as_int], op_type)
        name, n2 = self.node("Cast", [red], node.op.name, to=self.onnx.TensorProto.BOOL)
        return pre + [n] + nodes + [n2], name

    # -- shapes, joins, indices ---------------------------------------------------------------
    def reshaped(self, node, args, hint):
        """``args[0]`` reshaped to ``node``'s (example or static) shape."""
        shape = self.const(list(self.need_shape(node, hint)), "shape", _np.int64)
        return self.one("Reshape", [args[0], shape], hint)

    def arg_reduce(self, node, args, op_type):
        axis, keep = node.attrs.get("axis"), int(bool(node.attrs.get("keepdims")))
        pre, x = [], args[0]
        if axis is None:  # over all elements: of the flattened input
            x, n = self.node("Reshape", [x, self.const([-1], "flat", _np.int64)], "flat")
            pre.append(n)
            axis, keep_flat = 0, 0
        else:
            keep_flat = keep
        name, n = self.node(op_type, [x], op_type.lower(), axis=axis, keepdims=keep_flat)
        pre.append(n)
        if node.attrs.get("axis") is None and keep:
            more, name = self.reshaped(node, [name], "keep")
            pre += more
        return pre, name

    def along_dim(self, node, args, reduce_type):
        """The values of ``max(dim)``/``min(dim)`` (the indices are an argmax/argmin node)."""
        dim, keep = node.attrs.get("dim", 0), int(bool(node.attrs.get("keepdim")))
        if not self.need_shape(node.inputs[0], node.op.name):  # a 0-d input: itself
            return self.one("Identity", args, "values")
        axis = dim % len(self.need_shape(node.inputs[0], node.op.name))
        return self.one(reduce_type, args, "values", axes=[axis], keepdims=keep)

    def moments(self, node, args, root):
        a = node.attrs
        src = self.need_shape(node.inputs[0], node.op.name)
        axes = list(range(len(src))) if a.get("axis") is None else [
            k % len(src) for k in _as_tuple(a["axis"])]  # fmt: skip
        count = int(_np.prod([src[k] for k in axes])) - a.get("correction", 1)
        ax = self.const(axes, "axes", _np.int64)
        steps = [("ReduceMean", [args[0]], {"axes": axes, "keepdims": 1}),
                 ("Sub", [args[0], "{0}"], {}), ("Mul", ["{1}", "{1}"], {}),
                 ("ReduceSum", ["{2}", ax], {"keepdims": int(bool(a.get("keepdims")))}),
                 ("Div", ["{3}", self.like(max(count, 0), node, "n")], {})]  # fmt: skip
        if root:
            steps.append(("Sqrt", ["{4}"], {}))
        return self.chain(steps, node.op.name)

    def normalized(self, node, x, axes, eps, extra):
        """(x - mean) / sqrt(var + eps) over ``axes`` (biased variance), then ``extra``."""
        e = self.like(eps, node, "eps")
        steps = [("ReduceMean", [x], {"axes": axes, "keepdims": 1}),
                 ("Sub", [x, "{0}"], {}), ("Mul", ["{1}", "{1}"], {}),
                 ("ReduceMean", ["{2}"], {"axes": axes, "keepdims": 1}),
                 ("Add", ["{3}", e], {}), ("Sqrt", ["{4}"], {}),
                 ("Div", ["{1}", "{5}"], {})]  # fmt: skip
        return self.chain(steps + extra, node.op.name)

    # -- layers (forward: what a trained network needs) ---------------------------------------
    def window(self, node, what, kernel):
        """ONNX's kernel_shape/strides/pads/dilations for a 2-D window over N, C, H, W."""
        if len(self.need_shape(node.inputs[0], what)) != 4:
            raise NotImplementedError(f"to_onnx: {what} exports for 4-D inputs (N, C, H, W)")
        a = node.attrs
        stride = a.get("stride")
        s = pair(what, "stride", kernel if stride in (None, (), []) else stride)
        p = pair(what, "padding", a.get("padding", 0), minimum=0)
        d = pair(what, "dilation", a.get("dilation", 1))
        return {"strides": list(s), "pads": [p[0], p[1], p[0], p[1]], "dilations": list(d)}

    # -- control flow ---------------------------------------------------------------------------
    def subgraph(self, block, bindings: dict, inputs, name: str):
        """A GraphProto computing ``block.outputs`` (outer names stay visible inside)."""
        saved = dict(self.names)
        self.names.update(bindings)
        body = self.emit_all(block_order(block))
        outs = []
        for k, o in enumerate(block.outputs):
            out_name = self.fresh(f"{name}_out{k}")
            body.append(self.onnx.helper.make_node("Identity", [self.ref(o)], [out_name]))
            outs.append(out_name)
        self.names = saved
        return body, outs

    def _block_output_info(self, names, like_nodes):
        infos = []
        for name, like in zip(names, like_nodes):
            dtype = self.dtype(like)
            if dtype is None:
                raise NotImplementedError(f"to_onnx: the dtype of {like.name!r} is not known")
            elem = self.onnx.helper.np_dtype_to_tensor_dtype(dtype)
            infos.append(self.onnx.helper.make_tensor_value_info(name, elem, None))
        return infos

    def emit_cond(self, node: Node) -> list:
        h = self.onnx.helper
        tb, fb = node.attrs["true_block"], node.attrs["false_block"]
        outer = dict(zip(tb.captures, [self.ref(i) for i in node.inputs[1:]]))
        likes = [n for n in self.values if n.op.name == "tuple_get" and n.inputs[0] is node]
        likes = sorted(likes, key=lambda n: n.attrs["index"])
        if len(likes) != len(tb.outputs):
            likes = list(tb.outputs)
        graphs = []
        for block, tag in ((tb, "then"), (fb, "else")):
            body, outs = self.subgraph(block, outer, [], tag)
            graphs.append(h.make_graph(body, tag, [], self._block_output_info(outs, likes)))
        pred = self.ref(node.inputs[0])
        pred_b, cast = self.node("Cast", [pred], "pred", to=self.onnx.TensorProto.BOOL)
        scalar, sq = self.node("Reshape", [pred_b, self.const([], "scalar", _np.int64)], "pred")
        results = [self.fresh(f"cond_out{k}") for k in range(len(tb.outputs))]
        n = h.make_node("If", [scalar], results, then_branch=graphs[0], else_branch=graphs[1])
        self.names[node] = results
        return [cast, sq, n]

    def emit_while(self, node: Node) -> list:
        h, tp = self.onnx.helper, self.onnx.TensorProto
        cb, bb = node.attrs["cond_block"], node.attrs["body_block"]
        m = len(bb.params)
        init = [self.ref(i) for i in node.inputs[:m]]
        outer = dict(zip(bb.captures, [self.ref(i) for i in node.inputs[m:]]))
        pre = []
        # the first test, on the initial values, in the outer graph
        body0, (c0,) = self.subgraph(cb, {**outer, **dict(zip(cb.params, init))}, [], "cond0")
        pre += body0
        c0_b, n = self.node("Cast", [c0], "cond0", to=tp.BOOL)
        c0_s, n2 = self.node("Reshape", [c0_b, self.const([], "scalar", _np.int64)], "cond0")
        pre += [n, n2]
        # the Loop body: (iteration, condition, *loop variables) -> (condition, *loop variables)
        it, cond_in = self.fresh("iteration"), self.fresh("cond_in")
        params = [self.fresh(f"loop_{p.name}") for p in bb.params]
        likes = list(node.inputs[:m])
        body, new = self.subgraph(bb, {**outer, **dict(zip(bb.params, params))}, [], "body")
        saved = dict(self.names)
        self.names.update(outer)
        self.names.update(zip(cb.params, new))
        cond_nodes = self.emit_all(block_order(cb))
        c1 = self.ref(cb.outputs[0])
        self.names = saved
        c1_b, n3 = self.node("Cast", [c1], "cond", to=tp.BOOL)
        c1_s, n4 = self.node("Reshape", [c1_b, self.const([], "scalar", _np.int64)], "cond")
        graph_inputs = [h.make_tensor_value_info(it, tp.INT64, []),
                        h.make_tensor_value_info(cond_in, tp.BOOL, [])]  # fmt: skip
        graph_inputs += self._block_output_info(params, likes)
        graph_outputs = [h.make_tensor_value_info(c1_s, tp.BOOL, [])]
        graph_outputs += self._block_output_info(new, likes)
        graph = h.make_graph(body + cond_nodes + [n3, n4], "loop_body", graph_inputs,
                             graph_outputs)  # fmt: skip
        limit = node.attrs.get("maximum_iterations")
        trip = self.const(limit, "max_iterations", _np.int64) if limit is not None else ""
        results = [self.fresh(f"loop_out{k}") for k in range(m)]
        loop = h.make_node("Loop", [trip, c0_s, *init], results, body=graph)
        self.names[node] = results + [None]  # the stack (for gradients) has no ONNX form
        return pre + [loop]


_COMPARE = {"greater", "greater_equal", "less", "less_equal", "equal", "not_equal", "isclose"}


def _is_weak(node: Node) -> bool:
    """A constant that is a Python number (its dtype follows the other operand's)."""
    return node.op is CONSTANT and isinstance(node.attrs["value"], bool | int | float)


def _as_tuple(axis):
    return (axis,) if isinstance(axis, int) else tuple(axis)
