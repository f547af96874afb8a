"""The eager engine's ``F`` for derivative rules under ``create_graph=True``: each op applied
to tensors is recorded, so the backward pass is itself a graph and can be differentiated."""

from __future__ import annotations

from ..ops import REGISTRY, Functional
from .tensor import apply_op

__all__ = ["TensorFunctional", "TENSOR_F"]


class TensorFunctional(Functional):
    """Applies ops to eager tensors, recording them like any forward op."""

    def apply(self, op, *inputs, **attrs):
        return apply_op(op, *inputs, **attrs)


TENSOR_F = TensorFunctional()


# -- public functions on tensors (``tg.exp(x)``, ``tg.where(c, a, b)``, ...) ----------------------
def _unary(name):
    def fn(x):
        return apply_op(REGISTRY[name], x)

    fn.__name__ = name
    fn.__doc__ = f"``{name}`` elementwise (see :class:`tinygrad_edu.ops.elementwise`)."
    return fn


exp, log, tanh, sigmoid, relu = (_unary(n) for n in ("exp", "log", "tanh", "sigmoid", "relu"))


def matmul(a, b, trans_A: bool = False, trans_B: bool = False):
    """Matrix product with optional transposes of the last two axes."""
    from .tensor import _matmul  # noqa: PLC0415

    return _matmul(a, b, trans_A, trans_B)


def maximum(a, b):
    return apply_op(REGISTRY["maximum"], a, b)


def where(cond, a, b):
    """``a`` where ``cond`` holds, else ``b`` (``cond`` gets no gradient)."""
    return apply_op(REGISTRY["where"], cond, a, b)


def relu_grad(y, g):
    return apply_op(REGISTRY["relu_grad"], y, g)


def sum_to(x, shape):
    """Sum ``x`` down to ``shape`` (undo a broadcast)."""
    return TENSOR_F.sum_to(x, tuple(shape))


def broadcast_to(x, shape):
    return TENSOR_F.broadcast_to(x, tuple(shape))


def expand_dims(x, axis):
    return apply_op(REGISTRY["expand_dims"], x, axis=axis)


def getitem_grad(g, shape, index):
    return TENSOR_F.getitem_grad(g, tuple(shape), index)


def fill(x, value):
    return apply_op(REGISTRY["fill"], x, value=value)


def softmax_cross_entropy(logits, labels):
    """Softmax cross-entropy against one-hot (or probability) labels, the batch mean."""
    return apply_op(REGISTRY["softmax_cross_entropy"], logits, labels)


def zeros_like(x):
    return apply_op(REGISTRY["zeros_like"], x)


def ones_like(x):
    return apply_op(REGISTRY["ones_like"], x)


__all__ += [
    "exp", "log", "tanh", "sigmoid", "relu", "matmul", "maximum", "where", "relu_grad",
    "sum_to", "broadcast_to", "expand_dims", "getitem_grad", "fill", "softmax_cross_entropy",
    "zeros_like", "ones_like",
]  # fmt: skip
