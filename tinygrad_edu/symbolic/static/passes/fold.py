r"""Constant folding: compute now what does not depend on any fed value.

A node whose inputs are all constants has the same value at every run, so the pass computes
it once, with numpy, and puts a constant in its place (``2 * 3`` becomes ``6``; Python
numbers stay Python numbers, so dtypes come out as they would at run time). It also folds
*shapes*: once a shape is static, ``numel(x)`` is a number, ``ones_like(x)`` and
``zeros_like(x)`` become ``fill_constant`` nodes that need nothing (when the dtype is known
too), and ``sum_to``, ``broadcast_to`` and ``reshape`` take the target shape as an attribute
instead of an input read only for its shape.

Random initialisers and control flow are never folded.

>>> from tinygrad_edu.symbolic import Variable, constant
>>> x = Variable("x", shape=(2,), dtype="float32")
>>> (y,) = fold([x * (constant(2.0) * 3)])
>>> y.name, y.inputs[1].op.name, y.inputs[1].attrs["value"]
('(x*6.0)', 'constant', 6.0)
"""

from __future__ import annotations

import numpy as _np  # folding computes on the CPU

from ...executor import run_kernel
from ...tensor_node import CONSTANT, Node, apply_op, constant
from .rewrite import rewrite

__all__ = ["fold"]

_SHAPE_INPUTS = {"sum_to": 1, "broadcast_to": 1, "reshape": 1}  # op -> its shape-only input


def fold(outputs) -> list:
    """The outputs with constant subgraphs computed and static shapes folded."""
    return rewrite(outputs, _fold_node)


def _fold_node(node: Node):
    op = node.op
    if getattr(op, "multi_output", False) or not getattr(op, "pure", True):
        return None
    if node.inputs and all(i.op is CONSTANT for i in node.inputs):
        value = run_kernel(_np, op, [i.attrs["value"] for i in node.inputs], node.attrs)
        if isinstance(value, _np.ndarray | _np.generic) or isinstance(value, bool | int | float):
            return constant(value, name=_label(value))
        return None
    return _fold_shape(node)


def _fold_shape(node: Node):
    name, inputs = node.op.name, node.inputs
    if name == "numel" and inputs[0].shape is not None and inputs[0].dtype is not None:
        value = node.op.forward(_np, _np.empty(inputs[0].shape, inputs[0].dtype), **node.attrs)
        return constant(value, name=_label(value))
    if name in ("ones_like", "zeros_like") and inputs[0].shape is not None and inputs[0].dtype:
        fill = apply_op(
            "fill_constant",
            shape=inputs[0].shape,
            value=int(name == "ones_like"),
            dtype=inputs[0].dtype,
            name=f"{'1' if name == 'ones_like' else '0'}s",
        )
        fill.dtype = inputs[0].dtype
        fill.is_gradient, fill.grad_of = node.is_gradient, node.grad_of
        return fill
    k = _SHAPE_INPUTS.get(name)
    if k is not None and len(inputs) > k and inputs[k].shape is not None:
        attrs = {**node.attrs, "shape": tuple(inputs[k].shape)}
        new = apply_op(node.op, *inputs[:k], **attrs)
        new.is_gradient, new.grad_of = node.is_gradient, node.grad_of
        return new
    return None


def _label(value) -> str:
    text = repr(value.item() if hasattr(value, "item") and getattr(value, "size", 0) == 1
                else value)  # fmt: skip
    return text if len(text) <= 12 else "const"
