r"""Functions that build symbolic nodes: the symbolic engine's functional API.

The functions with PyTorch's names (``exp``, ``sum``, ``cat``, ``transpose``, ``where`` ...)
are generated from the op library's surface table, the same declarations that give the eager
``tg.`` functions and both engines' methods (:data:`FUNCTIONS`). The functions written out
below are the engine's own older names (``reduce_sum``; ``broadcast_to``/``reshape``/
``sum_to`` taking a node whose run-time shape to use; ``matmul`` with positional transposes):
each is one line over :func:`~tinygrad_edu.symbolic.tensor_node.apply_op`. The math (forward, shape
rule, derivative) lives in the op library.

>>> from tinygrad_edu.symbolic import Variable, matmul, reduce_sum
>>> A, B = Variable("A", shape=(3, 4)), Variable("B", shape=(3, 5))
>>> C = matmul(A, B, trans_A=True)
>>> C.name, C.shape, reduce_sum(C, axis=0).shape
('(A.T@B)', (4, 5), (5,))
"""

from __future__ import annotations

from ..ops.surface import generate
from .tensor_node import Node, apply_op, constant

_, FUNCTIONS, _ = generate(apply_op, symbolic=True)
globals().update(FUNCTIONS)  # exp, sum, mean, cat, transpose, where, ... (PyTorch's names)

__all__ = [
    "FUNCTIONS", "matmul", "relu_grad", "reduce_sum", "reduce_mean", "reduce_max",
    "broadcast_to", "sum_to", "expand_dims", "softmax_cross_entropy", "zeros_like",
    "ones_like", "reshape", "getitem", "getitem_grad", "gather_grad", "setitem", "fill",
    "constant",
]  # fmt: skip
__all__ += sorted(set(FUNCTIONS) - set(__all__))


def _shape_arg(like):
    """A target shape given as a node (its run-time shape) or as a tuple."""
    return ((like,), {}) if isinstance(like, Node) else ((), {"shape": tuple(like)})


def matmul(a, b, trans_A: bool = False, trans_B: bool = False) -> Node:
    r"""$\mathrm{op}(A)\,\mathrm{op}(B)$, transposing the last two axes where asked."""
    return apply_op("matmul", a, b, trans_A=trans_A, trans_B=trans_B)


def relu_grad(y, g) -> Node:
    """``g`` where ``y > 0``, else 0: the gradient that flows back through a relu."""
    return apply_op("relu_grad", y, g)


def reduce_sum(x, axis=None, keepdims: bool = False) -> Node:
    """Sum over ``axis`` (all axes when None)."""
    return apply_op("sum", x, axis=axis, keepdims=keepdims)


def reduce_mean(x, axis=None, keepdims: bool = False) -> Node:
    """Mean over ``axis`` (all axes when None)."""
    return apply_op("mean", x, axis=axis, keepdims=keepdims)


def reduce_max(x, axis=None, keepdims: bool = False) -> Node:
    """Maximum over ``axis`` (all axes when None)."""
    return apply_op("max", x, axis=axis, keepdims=keepdims)


def broadcast_to(x, like) -> Node:
    """``x`` repeated to the shape of ``like`` (a node, whose run-time shape is used, or a
    tuple)."""
    args, attrs = _shape_arg(like)
    return apply_op("broadcast_to", x, *args, **attrs)


def sum_to(x, like) -> Node:
    """``x`` summed down to the shape of ``like`` (a node or a tuple): undoes broadcasting."""
    args, attrs = _shape_arg(like)
    return apply_op("sum_to", x, *args, **attrs)


def expand_dims(x, axis) -> Node:
    """``x`` with size-1 axes inserted at ``axis``."""
    return apply_op("expand_dims", x, axis=axis)


def softmax_cross_entropy(logits, onehot) -> Node:
    r"""$-\frac1N\sum_n\sum_c y_{nc}\log\mathrm{softmax}(z)_{nc}$: the batch-mean loss."""
    return apply_op("softmax_cross_entropy", logits, onehot)


def zeros_like(x) -> Node:
    """Zeros with ``x``'s shape and dtype."""
    return apply_op("zeros_like", x)


def ones_like(x) -> Node:
    """Ones with ``x``'s shape and dtype."""
    return apply_op("ones_like", x)


def reshape(x, shape) -> Node:
    """The same elements in ``shape`` (a tuple, one ``-1`` allowed, or a node to copy)."""
    args, attrs = _shape_arg(shape)
    return apply_op("reshape", x, *args, **attrs)


def getitem(x, index) -> Node:
    """``x[index]``: slices, ints, ``None``, ``...`` and integer arrays."""
    return apply_op("getitem", x, index=index)


def getitem_grad(g, like, index) -> Node:
    """Zeros shaped like ``like`` (a node or a tuple) with ``g`` added at ``index``: the
    adjoint of ``x[index]``."""
    args, attrs = _shape_arg(like)
    return apply_op("getitem_grad", g, *args, index=index, **attrs)


def gather_grad(g, like, index, dim) -> Node:
    """Zeros shaped like ``like`` (a node or a tuple) with ``g`` added where
    ``gather(x, dim, index)`` read: the adjoint of ``gather``."""
    args, attrs = _shape_arg(like)
    return apply_op("gather_grad", g, index, *args, dim=dim, **attrs)


def setitem(x, value, index) -> Node:
    """A copy of ``x`` with ``value`` written at ``index`` (PyTorch's ``CopySlices``)."""
    return apply_op("setitem", x, value, index=index)


def fill(x, value) -> Node:
    """An array like ``x`` holding ``value`` everywhere (its gradient is zero)."""
    return apply_op("fill", x, value=value)
