r"""Algebraic simplification: rewrite ``x * 1`` as ``x``, and the like.

Gradient graphs are full of trivial arithmetic, because each derivative rule is written once,
for the general case: the seed $\partial y/\partial y$ is ``ones_like(y)``, which the next
rule multiplies by; ``sum_to`` brings a gradient back to its input's shape even when it
already has it; a ``sub`` gives ``-g`` and the next ``sub`` negates it again. The rules here
remove that arithmetic (where the result keeps its shape and value):

- ``x * 1``, ``1 * x``, ``x / 1``, ``x + 0``, ``0 + x``, ``x - 0`` -> ``x``; ``0 - x`` -> ``-x``;
- ``ones_like(u) * g`` -> ``g`` and ``zeros_like(u) + g`` -> ``g`` when ``u`` and ``g`` have
  the same shape and the same dtype (``ones_like`` of a float64 ``u`` times a float32 ``g``
  is float64);
- ``sum_to``, ``broadcast_to`` or ``reshape`` to the shape ``x`` already has -> ``x``;
- ``-(-x)`` -> ``x``; signs move outward (``(-a) * b`` -> ``-(a * b)``), so that double
  negations meet; ``a - (-b)`` -> ``a + b`` and ``a + (-b)`` -> ``a - b``.

Whether two nodes have the same shape is known when their static shapes are; otherwise a
small analysis follows *shape classes*: an elementwise op's result has its input's shape
(or the common shape of its inputs, where a scalar broadcasts away), ``ones_like(u)`` has
``u``'s, and so on. *Dtype classes* do the same for dtypes, so a rule never changes a
result's dtype: ``x * 1.0`` is ``x`` only where ``x`` is surely floating (for an integer
``x`` it is float32), ``x * 1`` where ``x`` is surely not bool. One liberty is taken, as
XLA's and Grappler's simplifiers take it: ``x + 0`` is ``x`` also where ``x`` is ``-0.0``
(the sum would be ``+0.0``); the sign of a zero is the only difference.

>>> from tinygrad_edu.symbolic import Variable, gradients, topo_sort
>>> t = Variable("t")
>>> f = t.tanh()
>>> f.name = "f"
>>> (d1,) = gradients(f, [t])
>>> d1.name
'(ones_like(f)*(1-(f*f)))'
>>> simplify([d1])[0].name
'(1-(f*f))'
"""

from __future__ import annotations

from ...tensor_node import CONSTANT, Node, apply_op
from .rewrite import rewrite

__all__ = ["simplify", "same_shape", "shape_class", "same_dtype", "dtype_class"]

# ops whose result has the shape of their first input
_KEEPS_SHAPE = {
    "neg", "exp", "log", "tanh", "sigmoid", "relu", "pow", "ones_like", "zeros_like", "fill",
    "clone", "astype", "softmax", "log_softmax",
}  # fmt: skip
_ELEMENTWISE = {"add", "sub", "mul", "div", "maximum", "relu_grad"}
_TO_SHAPE = {"sum_to", "broadcast_to", "reshape"}


def simplify(outputs) -> list:
    """The outputs with the identities above applied (``outputs`` unchanged)."""
    classes: dict = {}
    return rewrite(outputs, lambda node: _simplify_node(node, classes))


def _simplify_node(node: Node, classes: dict):
    name, ins = node.op.name, node.inputs
    if name == "neg" and ins[0].op.name == "neg":
        return ins[0].inputs[0]
    if name == "mul":
        a, b = ins
        for x, other in ((a, b), (b, a)):
            if _keeps(x, other, 1, classes) or (
                _is_ones(other) and same_shape(other, x, classes) and same_dtype(other, x, classes)
            ):
                if same_shape(node, x, classes):
                    return x
        if a.op.name == "neg" and b.op.name == "neg":
            return _like(node, "mul", a.inputs[0], b.inputs[0])
        if a.op.name == "neg" or b.op.name == "neg":
            inner = (a.inputs[0], b) if a.op.name == "neg" else (a, b.inputs[0])
            return _negate(_like(node, "mul", *inner))
    if name == "div" and _is_scalar(ins[1], 1) and same_shape(node, ins[0], classes):
        if _is_floating(ins[0], classes):  # (true division of integers gives floats)
            return ins[0]
    if name in ("add", "sub"):
        a, b = ins
        if _adds_nothing(a, b, classes) and same_shape(node, a, classes):
            return a
        if name == "add" and _adds_nothing(b, a, classes) and same_shape(node, b, classes):
            return b
        if name == "sub" and _adds_nothing(b, a, classes) and same_shape(node, b, classes):
            return _negate(b)
        if b.op.name == "neg":
            return _like(node, "sub" if name == "add" else "add", a, b.inputs[0])
    if name in _TO_SHAPE and _target_matches(node, classes):
        return ins[0]
    return None


def _like(node: Node, opname: str, *inputs) -> Node:
    new = apply_op(opname, *inputs)
    new.is_gradient = node.is_gradient
    return new


def _negate(x: Node) -> Node:
    if x.op.name == "neg":
        return x.inputs[0]
    new = apply_op("neg", x)
    new.is_gradient = x.is_gradient
    return new


def _is_scalar(node: Node, value) -> bool:
    """A constant number (or one-element constant) equal to ``value``."""
    if node.op is not CONSTANT:
        return False
    v = node.attrs["value"]
    if isinstance(v, bool):
        return False
    if isinstance(v, int | float):
        return v == value
    return getattr(v, "size", 0) == 1 and getattr(v, "ndim", 1) == 0 and v.item() == value


def _is_ones(node: Node) -> bool:
    return node.op.name == "ones_like" or (
        node.op.name == "fill_constant" and node.attrs.get("value") == 1
    )


def _keeps(x: Node, other: Node, value, classes) -> bool:
    """Is ``other`` the number ``value`` and ``x op other`` surely of ``x``'s dtype?"""
    if not _is_scalar(other, value):
        return False
    v = other.attrs["value"]
    if isinstance(v, int):  # weak int: every dtype but bool keeps its dtype
        kind = dtype_class(x, classes)
        return _is_floating(x, classes) or (isinstance(kind, str) and kind != "bool")
    if isinstance(v, float):  # weak float: only floating dtypes keep theirs
        return _is_floating(x, classes)
    return same_dtype(other, x, classes)  # a 0-d array constant


def _adds_nothing(x: Node, zero: Node, classes) -> bool:
    """Is ``x + zero`` (or ``x - zero``) surely ``x``, value and dtype?"""
    if zero.op.name in ("zeros_like", "fill_constant"):
        return _is_zero(zero) and same_dtype(zero, x, classes)
    return _is_zero(zero) and _keeps(x, zero, 0, classes)


def _is_zero(node: Node) -> bool:
    if node.op.name == "zeros_like":
        return True
    if node.op.name == "fill_constant":
        return node.attrs.get("value") == 0
    return _is_scalar(node, 0)


def _target_matches(node: Node, classes) -> bool:
    """Is the target shape of a ``sum_to``/``broadcast_to``/``reshape`` the input's own?"""
    x = node.inputs[0]
    if len(node.inputs) > 1:
        return same_shape(x, node.inputs[1], classes)
    target = node.attrs.get("shape")
    return target is not None and x.shape is not None and tuple(target) == tuple(x.shape)


def same_shape(a: Node, b: Node, classes: dict | None = None) -> bool:
    """True when ``a`` and ``b`` surely have the same shape (static shapes, or one class)."""
    classes = {} if classes is None else classes
    ka, kb = shape_class(a, classes), shape_class(b, classes)
    return ka is kb or (isinstance(ka, tuple) and isinstance(kb, tuple) and ka == kb)


def shape_class(node: Node, classes: dict):
    """The static shape of ``node`` (a tuple) when known, else the node whose shape it
    surely repeats (``classes`` memoises; the walk is iterative)."""
    stack = [node]
    while stack:
        n = stack[-1]
        if n in classes:
            stack.pop()
            continue
        deps = _class_inputs(n)
        todo = [d for d in deps if d not in classes]
        if todo:
            stack.extend(todo)
            continue
        stack.pop()
        classes[n] = _class_of(n, [classes[d] for d in deps])
    return classes[node]


def _class_inputs(n: Node) -> list:
    name = n.op.name
    if n.shape is not None:
        return []
    if name in _KEEPS_SHAPE:
        return [n.inputs[0]]
    if name in _ELEMENTWISE or (name in _TO_SHAPE and len(n.inputs) > 1):
        return list(n.inputs)
    return []


def _class_of(n: Node, keys: list):
    if n.shape is not None:
        return tuple(n.shape)
    name = n.op.name
    if name in _KEEPS_SHAPE:
        return keys[0]
    if name in _TO_SHAPE and len(keys) > 1:
        return keys[1]
    if name in _ELEMENTWISE:
        wide = [k for k in keys if k != ()]  # scalars broadcast away
        if wide and all(k is wide[0] or k == wide[0] for k in wide):
            return wide[0]
    return n


# -- dtype classes: which nodes surely share a dtype -----------------------------------------
# ops whose result surely has their first input's dtype, whatever it is
_SAME_DTYPE = {
    "neg", "ones_like", "zeros_like", "clone", "reshape", "transpose", "permute", "getitem",
    "broadcast_to", "sum_to", "expand_dims", "squeeze", "flatten", "getitem_grad",
}  # fmt: skip
# binary ops whose result has the dtype their two inputs share (or a floating input's dtype
# when the other is a Python number)
_SAME_DTYPE_BINARY = {"add", "sub", "mul", "maximum", "minimum"}
# ops whose result is floating whatever their inputs (integers give float32)
_FLOAT_RESULT = {
    "exp", "log", "log1p", "sqrt", "rsqrt", "tanh", "sigmoid", "softmax", "log_softmax", "div",
    "mean", "erf", "gelu", "sin", "cos", "softplus", "std", "var",
}  # fmt: skip


def same_dtype(a: Node, b: Node, classes: dict | None = None) -> bool:
    """True when ``a`` and ``b`` surely have the same dtype (static dtypes, or one class)."""
    classes = {} if classes is None else classes
    ka, kb = dtype_class(a, classes), dtype_class(b, classes)
    return ka is kb or (isinstance(ka, str) and ka == kb)


def dtype_class(node: Node, classes: dict):
    """The static dtype name of ``node`` when known, else the node whose dtype it surely
    repeats (memoised in ``classes`` under ``("dtype", node)``; iterative)."""
    return _memo(node, classes, "dtype", _dtype_inputs, _dtype_of)


def _is_floating(node: Node, classes: dict) -> bool:
    """True when ``node``'s value is surely of a floating dtype."""
    return _memo(node, classes, "float", _float_inputs, _float_of)


def _memo(node: Node, classes: dict, tag: str, inputs_of, value_of):
    stack = [node]
    while stack:
        n = stack[-1]
        if (tag, n) in classes:
            stack.pop()
            continue
        deps = inputs_of(n)
        todo = [d for d in deps if (tag, d) not in classes]
        if todo:
            stack.extend(todo)
            continue
        stack.pop()
        classes[(tag, n)] = value_of(n, [classes[(tag, d)] for d in deps], classes)
    return classes[(tag, node)]


def _strong(n: Node) -> list:
    """The inputs that set the dtype (Python-number constants are weak)."""
    return [i for i in n.inputs if not (i.op is CONSTANT and i.dtype is None)]


def _dtype_inputs(n: Node) -> list:
    if n.dtype is not None:
        return []
    if n.op.name in _SAME_DTYPE and n.inputs:
        return [n.inputs[0]]
    if n.op.name in _SAME_DTYPE_BINARY:
        return _strong(n)
    return []


def _dtype_of(n: Node, keys: list, classes: dict):
    if n.dtype is not None:
        return n.dtype
    if n.op.name in _SAME_DTYPE and keys:
        return keys[0]
    if n.op.name in _SAME_DTYPE_BINARY and keys:
        if len(keys) == 2 and (keys[0] is keys[1] or keys[0] == keys[1]):
            return keys[0]
        if len(keys) == 1 and len(n.inputs) == 2 and _is_floating(_strong(n)[0], classes):
            return keys[0]  # a floating value and a Python number: the value's dtype
    return n


def _float_inputs(n: Node) -> list:
    if n.dtype is not None or n.op.name in _FLOAT_RESULT:
        return []
    if n.op.name in _SAME_DTYPE and n.inputs:
        return [n.inputs[0]]
    if n.op.name in _SAME_DTYPE_BINARY:
        return list(n.inputs)
    return []


def _float_of(n: Node, keys: list, classes: dict) -> bool:
    if n.dtype is not None:
        return "float" in n.dtype
    if n.op.name in _FLOAT_RESULT:
        return True
    if n.op is CONSTANT:
        return isinstance(n.attrs["value"], float)
    return any(keys)
