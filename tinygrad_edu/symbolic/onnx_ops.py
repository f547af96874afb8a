"""The per-op rules of the ONNX exporter (``to_onnx`` in ``onnx_export.py``): each ``_op_<name>``
method writes the ONNX nodes of one op of this library; ops whose inputs map one to one use
the ``_SIMPLE`` table. Kept apart from the exporter's walk over the graph so that each file
does one job."""

from __future__ import annotations

import math

import numpy as _np  # initializers are numpy arrays

from ..ops.conv import pair
from ..ops.pad import pad_widths
from .control_flow import block_order
from .node import CONSTANT, Node

OPSET = 17
_SIMPLE = {  # op -> ONNX op, for ops whose inputs map one to one
    "add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "neg": "Neg", "exp": "Exp",
    "log": "Log", "tanh": "Tanh", "sigmoid": "Sigmoid", "relu": "Relu", "maximum": "Max",
    "greater": "Greater", "greater_equal": "GreaterOrEqual", "less": "Less",
    "less_equal": "LessOrEqual", "equal": "Equal", "clone": "Identity", "where": "Where",
    "abs": "Abs", "sqrt": "Sqrt", "sin": "Sin", "cos": "Cos", "erf": "Erf", "sign": "Sign",
    "minimum": "Min", "pow_tensor": "Pow", "stop_gradient": "Identity",
}  # fmt: skip
_UNIFY = {"add", "sub", "mul", "div", "maximum", "minimum", "greater", "greater_equal", "less",
          "less_equal", "equal", "not_equal", "where", "matmul", "pow_tensor", "cat", "stack",
          "clamp_tensor"}  # inputs must share one dtype  # fmt: skip
_LOGICAL = {"logical_and": "And", "logical_or": "Or", "logical_xor": "Xor",
            "bitwise_and": "And", "bitwise_or": "Or", "bitwise_xor": "Xor"}  # fmt: skip


class OpRules:
    """The ``_op_<name>`` rules; :class:`~tinygrad_edu.symbolic.onnx_export._Export` supplies
    ``node``, ``const``, ``ref``, ``fresh``, ``shape``, ``dtype`` and the graph walk."""

    def _one(self, op_type, inputs, hint, **attrs):
        """One ONNX node: ``([the node], its output's name)``, what most rules return."""
        name, n = self.node(op_type, inputs, hint, **attrs)
        return [n], name

    def _simple(self, node, args):
        return self._one(_SIMPLE[node.op.name], args, node.op.name)

    def _op_not_equal(self, node, args):
        eq, n1 = self.node("Equal", args, "eq")
        name, n2 = self.node("Not", [eq], "ne")
        return [n1, n2], name

    def _op_pow(self, node, args):
        e = self.const(node.attrs["exponent"], "exponent", self.dtype(node) or _np.float32)
        return self._one("Pow", [args[0], e], "pow")

    def _op_relu_grad(self, node, args):
        y, g = args
        zero = self.const(0, "zero", self.dtype(node.inputs[0]) or _np.float32)
        pos, n1 = self.node("Greater", [y, zero], "positive")
        mask, n2 = self.node("CastLike", [pos, g], "mask")
        name, n3 = self.node("Mul", [g, mask], "relu_grad")
        return [n1, n2, n3], name

    def _op_matmul(self, node, args):
        a, b = args
        pre = []
        for k, flag in enumerate(("trans_A", "trans_B")):
            if node.attrs.get(flag):
                rank = len(self.need_shape(node.inputs[k], "a transposed matmul"))
                perm = list(range(rank - 2)) + [rank - 1, rank - 2]
                t, n = self.node("Transpose", [args[k]], "t", perm=perm)
                pre.append(n)
                a, b = (t, b) if k == 0 else (a, t)
        name, n = self.node("MatMul", [a, b], "matmul")
        return pre + [n], name

    def _reduce(self, node, args, op_type):
        axis, keep = node.attrs.get("axis"), int(bool(node.attrs.get("keepdims")))
        rank = len(self.need_shape(node.inputs[0], op_type)) if axis is not None else 0
        if axis is not None and rank == 0:  # numpy lets axis 0 reduce a 0-d array: a no-op
            return self._one("Identity", args, op_type.lower())
        axes = None if axis is None else [a % max(rank, 1) for a in _as_tuple(axis)]
        if op_type == "ReduceSum":
            inputs = args + ([self.const(axes, "axes", _np.int64)] if axes is not None else [])
            name, n = self.node(op_type, inputs, "sum", keepdims=keep)
        else:
            extra = {"axes": axes} if axes is not None else {}
            name, n = self.node(op_type, args, op_type.lower(), keepdims=keep, **extra)
        return [n], name

    def _op_sum(self, node, args):
        return self._reduce(node, args, "ReduceSum")

    def _op_mean(self, node, args):
        return self._reduce(node, args, "ReduceMean")

    def _op_max(self, node, args):
        return self._reduce(node, args, "ReduceMax")

    def _op_softmax(self, node, args):
        return self._one("Softmax", args, "softmax", axis=node.attrs.get("axis", -1))

    def _op_log_softmax(self, node, args):
        return self._one("LogSoftmax", args, "log_softmax", axis=node.attrs.get("axis", -1))

    def _op_softmax_cross_entropy(self, node, args):
        logits, labels = args
        shape = self.need_shape(node.inputs[0], "softmax_cross_entropy")
        rows = int(_np.prod(shape[:-1])) if len(shape) > 1 else 1
        ls, n1 = self.node("LogSoftmax", [logits], "log_softmax", axis=-1)
        prod, n2 = self.node("Mul", [labels, ls], "y_log_p")
        total, n3 = self.node("ReduceSum", [prod], "total", keepdims=0)
        neg, n4 = self.node("Neg", [total], "neg_total")
        rows_c = self.const(max(rows, 1), "rows", self.dtype(node) or _np.float32)
        name, n5 = self.node("Div", [neg, rows_c], "cross_entropy")
        return [n1, n2, n3, n4, n5], name

    def _op_permute(self, node, args):
        axes = node.attrs.get("axes")
        if axes is None:
            axes = list(reversed(range(len(self.need_shape(node.inputs[0], "permute")))))
        return self._one("Transpose", args[:1], "permute", perm=list(axes))

    def _op_transpose(self, node, args):  # PyTorch's transpose(dim0, dim1): a swap
        perm = list(range(len(self.need_shape(node.inputs[0], "transpose"))))
        if len(perm) >= 2:
            a, b = perm[node.attrs["dim0"]], perm[node.attrs["dim1"]]
            perm[a], perm[b] = b, a
        return self._one("Transpose", args[:1], "transpose", perm=perm)

    def _target(self, node, args, what):
        """The target shape of reshape/broadcast_to/sum_to: an int64 constant or Shape(like)."""
        if node.attrs.get("shape") is not None:
            return [], self.const(list(node.attrs["shape"]), "shape", _np.int64)
        return self._one("Shape", [args[1]], f"{what}_shape")

    def _op_reshape(self, node, args):
        pre, shape = self._target(node, args, "reshape")
        name, n = self.node("Reshape", [args[0], shape], "reshape")
        return pre + [n], name

    def _op_broadcast_to(self, node, args):
        pre, shape = self._target(node, args, "broadcast")
        name, n = self.node("Expand", [args[0], shape], "broadcast_to")
        return pre + [n], name

    def _op_sum_to(self, node, args):
        src = self.need_shape(node.inputs[0], "sum_to")
        like = node.attrs.get("shape")
        target = tuple(like) if like is not None else self.need_shape(node.inputs[1], "sum_to")
        lead = len(src) - len(target)
        axes = list(range(lead)) + [
            lead + i for i, d in enumerate(target) if d == 1 and src[lead + i] != 1
        ]
        if not axes:
            return self._one("Identity", args[:1], "sum_to")
        summed, n1 = self.node(
            "ReduceSum", [args[0], self.const(axes, "axes", _np.int64)], "sum_to", keepdims=1
        )
        shape = self.const(list(target), "shape", _np.int64)
        name, n2 = self.node("Reshape", [summed, shape], "sum_to")
        return [n1, n2], name

    def _op_expand_dims(self, node, args):
        axis = node.attrs["axis"]
        rank = len(self.need_shape(node, "expand_dims"))
        axes = sorted(a % rank for a in _as_tuple(axis))
        return self._one("Unsqueeze", [args[0], self.const(axes, "axes", _np.int64)], "unsq")

    def _filled(self, node, args, value):
        c = self.const(value, "fill", _np.float64)
        like, n1 = self.node("CastLike", [c, args[0]], "fill_like")
        shape, n2 = self.node("Shape", [args[0]], "fill_shape")
        name, n3 = self.node("Expand", [like, shape], node.op.name)
        return [n1, n2, n3], name

    def _op_ones_like(self, node, args):
        return self._filled(node, args, 1)

    def _op_zeros_like(self, node, args):
        return self._filled(node, args, 0)

    def _op_fill(self, node, args):
        return self._filled(node, args, node.attrs["value"])

    def _op_fill_constant(self, node, args):
        a = node.attrs
        value = _np.full(tuple(a["shape"]), a["value"], dtype=a.get("dtype") or "float32")
        return self._one("Identity", [self.const(value, "fill")], "fill_constant")

    def _op_astype(self, node, args):
        to = self.onnx.helper.np_dtype_to_tensor_dtype(_np.dtype(node.attrs["dtype"]))
        return self._one("Cast", args, "astype", to=to)

    def _op_numel(self, node, args):
        shape, n1 = self.node("Shape", args, "numel_shape")
        axis, pre = node.attrs.get("axis"), [n1]
        if axis is not None:
            rank = len(self.need_shape(node.inputs[0], "numel"))
            idx = self.const([a % rank for a in _as_tuple(axis)], "axes", _np.int64)
            shape, n2 = self.node("Gather", [shape, idx], "numel_dims", axis=0)
            pre.append(n2)
        count, n3 = self.node("ReduceProd", [shape], "numel_count", keepdims=0)
        name, n4 = self.node("CastLike", [count, args[0]], "numel")
        return pre + [n3, n4], name

    def _op_getitem(self, node, args):
        index = node.attrs["index"]
        parts = index if isinstance(index, tuple) else (index,)
        rank = len(self.need_shape(node.inputs[0], "indexing"))
        if any(not (p is None or p is Ellipsis or isinstance(p, int | slice)) for p in parts):
            rows = parts[0]
            if len(parts) == 1 and hasattr(rows, "dtype"):  # one integer array: rows
                idx = self.const(_np.asarray(rows, _np.int64), "rows")
                return self._one("Gather", [args[0], idx], "gather", axis=0)
            raise NotImplementedError(f"to_onnx: the index {index!r} of {node.name!r} has no "
                                      "ONNX form here (slices, ints, None and one row array "
                                      "export)")  # fmt: skip
        if Ellipsis in parts:
            k = parts.index(Ellipsis)
            fill = rank - sum(p is not None for p in parts if p is not Ellipsis)
            parts = parts[:k] + (slice(None),) * fill + parts[k + 1 :]
        starts, ends, axes, steps, squeeze, unsqueeze = [], [], [], [], [], []
        dim, out_dim = 0, 0
        for p in parts:
            if p is None:
                unsqueeze.append(out_dim)
                out_dim += 1
                continue
            if isinstance(p, int):
                starts.append(p)
                ends.append(p + 1 if p != -1 else _np.iinfo(_np.int64).max)
                axes.append(dim)
                steps.append(1)
                squeeze.append(dim)
            else:
                step = p.step or 1
                big = _np.iinfo(_np.int64).max
                starts.append(p.start if p.start is not None else (0 if step > 0 else -1))
                ends.append(p.stop if p.stop is not None else (big if step > 0 else -big))
                axes.append(dim)
                steps.append(step)
                out_dim += 1
            dim += 1
        nodes, cur = [], args[0]
        if axes:
            ins = [cur] + [
                self.const(v, k, _np.int64)
                for k, v in (("starts", starts), ("ends", ends), ("axes", axes), ("steps", steps))
            ]
            cur, n = self.node("Slice", ins, "slice")  # fmt: skip
            nodes.append(n)
        if squeeze:
            cur, n = self.node("Squeeze", [cur, self.const(squeeze, "axes", _np.int64)], "sq")
            nodes.append(n)
        if unsqueeze:
            cur, n = self.node("Unsqueeze", [cur, self.const(unsqueeze, "axes", _np.int64)], "u")
            nodes.append(n)
        if not nodes:
            cur, n = self.node("Identity", [cur], "getitem")
            nodes.append(n)
        return nodes, cur

    # -- the pointwise functions, clamps, logic ---------------------------------------------
    def _like(self, value, node, hint="c"):
        """A constant in the dtype of ``node``'s value (float32 when unknown)."""
        return self.const(value, hint, self.dtype(node) or _np.float32)

    def _chain(self, steps, hint):
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

    def _op_rsqrt(self, node, args):
        return self._chain([("Sqrt", args, {}), ("Reciprocal", ["{0}"], {})], "rsqrt")

    def _op_log1p(self, node, args):
        one = self._like(1, node, "one")
        return self._chain([("Add", [args[0], one], {}), ("Log", ["{0}"], {})], "log1p")

    def _op_gelu(self, node, args):
        x, half, one = args[0], self._like(0.5, node, "half"), self._like(1, node, "one")
        if node.attrs.get("approximate", "none") == "tanh":
            k = self._like(math.sqrt(2 / math.pi), node, "k")
            c = self._like(0.044715, node, "c")
            steps = [("Mul", [x, x], {}), ("Mul", ["{0}", x], {}), ("Mul", ["{1}", c], {}),
                     ("Add", [x, "{2}"], {}), ("Mul", ["{3}", k], {}), ("Tanh", ["{4}"], {}),
                     ("Add", ["{5}", one], {}), ("Mul", [x, half], {}),
                     ("Mul", ["{7}", "{6}"], {})]  # fmt: skip
        else:
            r2 = self._like(math.sqrt(2), node, "sqrt2")
            steps = [("Div", [x, r2], {}), ("Erf", ["{0}"], {}), ("Add", ["{1}", one], {}),
                     ("Mul", [x, half], {}), ("Mul", ["{3}", "{2}"], {})]  # fmt: skip
        return self._chain(steps, "gelu")

    def _op_leaky_relu(self, node, args):
        slope = float(node.attrs.get("negative_slope", 0.01))
        return self._one("LeakyRelu", args, "leaky_relu", alpha=slope)

    def _op_softplus(self, node, args):
        beta = self._like(node.attrs.get("beta", 1.0), node, "beta")
        limit = self._like(node.attrs.get("threshold", 20.0), node, "threshold")
        x = args[0]
        return self._chain([("Mul", [x, beta], {}), ("Softplus", ["{0}"], {}),
                            ("Div", ["{1}", beta], {}), ("Greater", ["{0}", limit], {}),
                            ("Where", ["{3}", x, "{2}"], {})], "softplus")  # fmt: skip

    def _op_clamp(self, node, args):
        ins = [args[0]]
        for bound in ("min", "max"):
            value = node.attrs.get(bound)
            ins.append("" if value is None else self._like(value, node, bound))
        return self._one("Clip", ins, "clamp")

    def _op_clamp_tensor(self, node, args):
        x, lo, hi = args
        return self._chain([("Max", [x, lo], {}), ("Min", ["{0}", hi], {})], "clamp")

    def _to_bool(self, args):
        nodes, out = [], []
        for a in args:
            name, n = self.node("Cast", [a], "bool", to=self.onnx.TensorProto.BOOL)
            nodes.append(n)
            out.append(name)
        return nodes, out

    def _logical(self, node, args):
        if node.op.name.startswith("bitwise") and self.dtype(node) != _np.bool_:
            raise NotImplementedError(
                f"to_onnx: {node.op.name} of integers (node {node.name!r}) needs ONNX opset 18 "
                f"(BitwiseAnd ...); this exporter writes opset {OPSET}. Booleans export"
            )
        pre, ins = self._to_bool(args)
        name, n = self.node(_LOGICAL.get(node.op.name, "Not"), ins, node.op.name)
        return pre + [n], name

    _op_logical_and = _op_logical_or = _op_logical_xor = _op_logical_not = _logical
    _op_bitwise_and = _op_bitwise_or = _op_bitwise_xor = _op_bitwise_not = _logical

    def _op_all(self, node, args):
        return self._all_any(node, args, "ReduceMin")

    def _op_any(self, node, args):
        return self._all_any(node, args, "ReduceMax")

    def _all_any(self, node, args, op_type):
        pre, (b,) = self._to_bool(args)
        as_int, n = self.node("Cast", [b], "as_int", to=self.onnx.TensorProto.INT32)
        fake = Node(node.op, node.inputs, node.attrs, name=node.name, shape=node.shape)
        nodes, red = self._reduce(fake, [as_int], op_type)
        name, n2 = self.node("Cast", [red], node.op.name, to=self.onnx.TensorProto.BOOL)
        return pre + [n] + nodes + [n2], name

    def _op_masked_fill(self, node, args):
        x, mask, value = args
        pre, (m,) = self._to_bool([mask])
        like, n1 = self.node("CastLike", [value, x], "fill_value")
        name, n2 = self.node("Where", [m, like, x], "masked_fill")
        return pre + [n1, n2], name

    # -- shapes, joins, indices ---------------------------------------------------------------
    def _reshaped(self, node, args, hint):
        """``args[0]`` reshaped to ``node``'s (example or static) shape."""
        shape = self.const(list(self.need_shape(node, hint)), "shape", _np.int64)
        return self._one("Reshape", [args[0], shape], hint)

    def _op_squeeze(self, node, args):
        return self._reshaped(node, args, "squeeze")

    def _op_flatten(self, node, args):
        return self._reshaped(node, args, "flatten")

    def _op_cat(self, node, args):
        rank = len(self.need_shape(node, "cat"))
        return self._one("Concat", args, "cat", axis=node.attrs.get("dim", 0) % rank)

    def _op_stack(self, node, args):
        rank = len(self.need_shape(node, "stack"))
        axis = node.attrs.get("dim", 0) % rank
        axes = self.const([axis], "axes", _np.int64)
        pre, parts = [], []
        for a in args:
            name, n = self.node("Unsqueeze", [a, axes], "unsq")
            pre.append(n)
            parts.append(name)
        name, n = self.node("Concat", parts, "stack", axis=axis)
        return pre + [n], name

    def _op_repeat(self, node, args):
        repeats = list(node.attrs["repeats"])
        src = self.need_shape(node.inputs[0], "repeat")
        pre, x = [], args[0]
        if len(repeats) > len(src):  # PyTorch adds leading axes of size 1 first
            shape = [1] * (len(repeats) - len(src)) + list(src)
            x, n = self.node("Reshape", [x, self.const(shape, "shape", _np.int64)], "lead")
            pre.append(n)
        name, n = self.node("Tile", [x, self.const(repeats, "repeats", _np.int64)], "repeat")
        return pre + [n], name

    def _arg(self, node, args, op_type):
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
            more, name = self._reshaped(node, [name], "keep")
            pre += more
        return pre, name

    def _op_argmax(self, node, args):
        return self._arg(node, args, "ArgMax")

    def _op_argmin(self, node, args):
        return self._arg(node, args, "ArgMin")

    def _op_min(self, node, args):
        return self._reduce(node, args, "ReduceMin")

    def _along_dim(self, node, args, reduce_type):
        """The values of ``max(dim)``/``min(dim)`` (the indices are an argmax/argmin node)."""
        dim, keep = node.attrs.get("dim", 0), int(bool(node.attrs.get("keepdim")))
        if not self.need_shape(node.inputs[0], node.op.name):  # a 0-d input: itself
            return self._one("Identity", args, "values")
        axis = dim % len(self.need_shape(node.inputs[0], node.op.name))
        return self._one(reduce_type, args, "values", axes=[axis], keepdims=keep)

    def _op_max_dim(self, node, args):
        return self._along_dim(node, args, "ReduceMax")

    def _op_min_dim(self, node, args):
        return self._along_dim(node, args, "ReduceMin")

    def _op_gather(self, node, args):
        rank = len(self.need_shape(node.inputs[0], "gather"))
        idx, n1 = self.node("Cast", [args[1]], "index", to=self.onnx.TensorProto.INT64)
        name, n2 = self.node("GatherElements", [args[0], idx], "gather",
                             axis=node.attrs.get("dim", 0) % rank)  # fmt: skip
        return [n1, n2], name

    def _op_one_hot(self, node, args):
        depth = self.need_shape(node, "one_hot")[-1]
        dtype = self.dtype(node) or _np.int64
        idx, n1 = self.node("Cast", [args[0]], "index", to=self.onnx.TensorProto.INT64)
        name, n2 = self.node("OneHot", [idx, self.const(depth, "depth", _np.int64),
                                        self.const([0, 1], "values", dtype)], "one_hot",
                             axis=-1)  # fmt: skip
        return [n1, n2], name

    def _op_cumsum(self, node, args):
        rank = len(self.need_shape(node.inputs[0], "cumsum"))
        axis = self.const(node.attrs.get("dim", 0) % max(rank, 1), "axis", _np.int64)
        return self._one("CumSum", [args[0], axis], "cumsum",
                         reverse=int(bool(node.attrs.get("reverse"))))  # fmt: skip

    def _moments(self, node, args, root):
        a = node.attrs
        src = self.need_shape(node.inputs[0], node.op.name)
        axes = list(range(len(src))) if a.get("axis") is None else [
            k % len(src) for k in _as_tuple(a["axis"])]  # fmt: skip
        count = int(_np.prod([src[k] for k in axes])) - a.get("correction", 1)
        ax = self.const(axes, "axes", _np.int64)
        steps = [("ReduceMean", [args[0]], {"axes": axes, "keepdims": 1}),
                 ("Sub", [args[0], "{0}"], {}), ("Mul", ["{1}", "{1}"], {}),
                 ("ReduceSum", ["{2}", ax], {"keepdims": int(bool(a.get("keepdims")))}),
                 ("Div", ["{3}", self._like(max(count, 0), node, "n")], {})]  # fmt: skip
        if root:
            steps.append(("Sqrt", ["{4}"], {}))
        return self._chain(steps, node.op.name)

    def _op_var(self, node, args):
        return self._moments(node, args, root=False)

    def _op_std(self, node, args):
        return self._moments(node, args, root=True)

    def _op_nll_loss(self, node, args):
        a = node.attrs
        idx, n1 = self.node("Cast", [args[1]], "target", to=self.onnx.TensorProto.INT64)
        ins = [args[0], idx] + ([args[2]] if len(args) > 2 else [])
        if a.get("weight") is not None:
            ins.append(self.const(a["weight"], "weight", self.dtype(node.inputs[0])))
        name, n2 = self.node("NegativeLogLikelihoodLoss", ins, "nll_loss",
                             reduction=a.get("reduction", "mean"),
                             ignore_index=int(a.get("ignore_index", -100)))  # fmt: skip
        return [n1, n2], name

    def _normalized(self, node, x, axes, eps, extra):
        """(x - mean) / sqrt(var + eps) over ``axes`` (biased variance), then ``extra``."""
        e = self._like(eps, node, "eps")
        steps = [("ReduceMean", [x], {"axes": axes, "keepdims": 1}),
                 ("Sub", [x, "{0}"], {}), ("Mul", ["{1}", "{1}"], {}),
                 ("ReduceMean", ["{2}"], {"axes": axes, "keepdims": 1}),
                 ("Add", ["{3}", e], {}), ("Sqrt", ["{4}"], {}),
                 ("Div", ["{1}", "{5}"], {})]  # fmt: skip
        return self._chain(steps + extra, node.op.name)

    def _op_layer_norm(self, node, args):
        a = node.attrs
        rank = len(self.need_shape(node.inputs[0], "layer_norm"))
        axes = list(range(rank - a.get("normalized_ndim", 1), rank))
        extra = []
        if len(args) > 1 and args[1]:
            extra.append(("Mul", ["{6}", args[1]], {}))
        if len(args) > 2 and args[2]:
            extra.append(("Add", [f"{{{6 + len(extra)}}}", args[2]], {}))
        return self._normalized(node, args[0], axes, a.get("eps", 1e-5), extra)

    def _op_batch_norm(self, node, args):
        a = node.attrs
        rank = len(self.need_shape(node.inputs[0], "batch_norm"))
        shape = self.const([1, -1] + [1] * (rank - 2), "channel", _np.int64)
        pre, params = [], []
        for p in args[1:]:
            name, n = self.node("Reshape", [p, shape], "per_channel")
            pre.append(n)
            params.append(name)
        affine, training = a.get("affine", True), a.get("training", True)
        w, b = params[:2] if affine else (None, None)
        extra = [("Mul", ["{6}", w], {}), ("Add", ["{7}", b], {})] if affine else []
        if training:
            nodes, name = self._normalized(node, args[0], [0, *range(2, rank)],
                                           a.get("eps", 1e-5), extra)  # fmt: skip
            return pre + nodes, name
        mean, var = params[-2:]
        e = self._like(a.get("eps", 1e-5), node, "eps")
        steps = [("Sub", [args[0], mean], {}), ("Add", [var, e], {}), ("Sqrt", ["{1}"], {}),
                 ("Reciprocal", ["{2}"], {}), ("Mul", ["{0}", "{3}"], {})]  # fmt: skip
        if affine:
            steps += [("Mul", ["{4}", w], {}), ("Add", ["{5}", b], {})]
        nodes, name = self._chain(steps, "batch_norm")
        return pre + nodes, name

    # -- layers (forward: what a trained network needs) ---------------------------------------
    def _window(self, node, what, kernel):
        """ONNX's kernel_shape/strides/pads/dilations for a 2-D window over N, C, H, W."""
        if len(self.need_shape(node.inputs[0], what)) != 4:
            raise NotImplementedError(f"to_onnx: {what} exports for 4-D inputs (N, C, H, W)")
        a = node.attrs
        stride = a.get("stride")
        s = pair(what, "stride", kernel if stride in (None, (), []) else stride)
        p = pair(what, "padding", a.get("padding", 0), minimum=0)
        d = pair(what, "dilation", a.get("dilation", 1))
        return {"strides": list(s), "pads": [p[0], p[1], p[0], p[1]], "dilations": list(d)}

    def _op_conv2d(self, node, args):
        kernel = self.need_shape(node.inputs[1], "conv2d")[2:]
        win = self._window(node, "conv2d", kernel)
        return self._one("Conv", args, "conv", kernel_shape=list(kernel),
                         group=node.attrs.get("groups", 1), **win)  # fmt: skip

    def _op_max_pool2d(self, node, args):
        kernel = pair("max_pool2d", "kernel_size", node.attrs["kernel_size"])
        win = self._window(node, "max_pool2d", kernel)
        return self._one("MaxPool", args, "max_pool", kernel_shape=list(kernel),
                         ceil_mode=int(bool(node.attrs.get("ceil_mode"))), **win)  # fmt: skip

    def _op_avg_pool2d(self, node, args):
        a = node.attrs
        if a.get("divisor_override") is not None:
            raise NotImplementedError("to_onnx: avg_pool2d's divisor_override has no ONNX form")
        kernel = pair("avg_pool2d", "kernel_size", a["kernel_size"])
        win = self._window(node, "avg_pool2d", kernel)
        del win["dilations"]
        return self._one("AveragePool", args, "avg_pool", kernel_shape=list(kernel),
                         ceil_mode=int(bool(a.get("ceil_mode"))),
                         count_include_pad=int(bool(a.get("count_include_pad", True))),
                         **win)  # fmt: skip

    def _op_pad(self, node, args):
        widths = pad_widths("pad", self.need_shape(node.inputs[0], "pad"), node.attrs["pad"])
        pads = [b for b, _ in widths] + [a for _, a in widths]
        value = self.const(node.attrs.get("value", 0.0), "pad_value",
                           self.dtype(node.inputs[0]) or _np.float32)  # fmt: skip
        return self._one("Pad", [args[0], self.const(pads, "pads", _np.int64), value], "pad")

    def _op_embedding(self, node, args):
        idx, n1 = self.node("Cast", [args[0]], "indices", to=self.onnx.TensorProto.INT64)
        name, n2 = self.node("Gather", [args[1], idx], "embedding", axis=0)
        return [n1, n2], name

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


_COMPARE = {"greater", "greater_equal", "less", "less_equal", "equal", "not_equal"}


def _is_weak(node: Node) -> bool:
    """A constant that is a Python number (its dtype follows the other operand's)."""
    return node.op is CONSTANT and isinstance(node.attrs["value"], bool | int | float)


def _as_tuple(axis):
    return (axis,) if isinstance(axis, int) else tuple(axis)
