"""Functions on eager tensors: the ``tg.`` functions and the ``F`` of a differentiable backward.

The public functions (``tg.exp``, ``tg.sum``, ``tg.cat`` ...) are generated from the op
library's surface table (see :mod:`tinygrad_edu.ops.surface`), together with the ``Tensor``
methods of the same names; :data:`FUNCTIONS` holds them by name. The few functions below the
table are lower-level helpers that derivative rules and the tests use (``sum_to``,
``relu_grad``, ``getitem_grad`` ...).

:data:`TENSOR_F` is what a derivative rule calls ``F`` under ``create_graph=True``: each op
applied to tensors is recorded, so the backward pass is itself a graph and can be
differentiated again.
"""

from __future__ import annotations

from ..ops import REGISTRY, Functional
from . import core
from .dispatch import FUNCTIONS, apply_op

__all__ = ["TensorFunctional", "TENSOR_F", "FUNCTIONS"]


class TensorFunctional(Functional):
    """Applies ops to eager tensors, recording them like any forward op."""

    def apply(self, op, *inputs, **attrs):
        return apply_op(op, *inputs, **attrs)


TENSOR_F = TensorFunctional()
core.hand_over(functional=TENSOR_F)  # node.py calls it in a create_graph=True backward

# the generated public functions, as module attributes (tg.<name> re-exports them)
globals().update(FUNCTIONS)
__all__ += sorted(FUNCTIONS)


# -- lower-level helpers, in the op library's own terms ---------------------------------------
def relu_grad(y, g):
    """``g`` where ``y > 0``, else 0: the gradient that flows back through a relu."""
    return apply_op(REGISTRY["relu_grad"], y, g)


def sum_to(x, shape):
    """Sum ``x`` down to ``shape`` (undo a broadcast)."""
    return TENSOR_F.sum_to(x, tuple(shape))


def expand_dims(x, axis):
    """``x`` with size-1 axes inserted at ``axis`` (``unsqueeze``)."""
    return apply_op(REGISTRY["expand_dims"], x, axis=axis)


def getitem_grad(g, shape, index):
    """Zeros of ``shape`` with ``g`` added at ``index`` (the adjoint of ``x[index]``)."""
    return TENSOR_F.getitem_grad(g, tuple(shape), index)


def gather_grad(g, shape, index, dim):
    """Zeros of ``shape`` with ``g`` added where ``gather(x, dim, index)`` read."""
    return TENSOR_F.gather_grad(g, tuple(shape), index, dim)


def setitem(x, value, index):
    """A copy of ``x`` with ``value`` written at ``index`` (the op behind ``x[index] = v``)."""
    return apply_op(REGISTRY["setitem"], x, value, index=index)


def fill(x, value):
    """A tensor like ``x`` holding ``value`` everywhere (its gradient is zero)."""
    return apply_op(REGISTRY["fill"], x, value=value)


def softmax_cross_entropy(logits, labels):
    """Softmax cross-entropy against one-hot (or probability) labels, the batch mean."""
    return apply_op(REGISTRY["softmax_cross_entropy"], logits, labels)


def zeros_like(x):
    """The ``zeros_like`` op (a tensor of zeros shaped like ``x``, recorded)."""
    return apply_op(REGISTRY["zeros_like"], x)


def ones_like(x):
    """The ``ones_like`` op (a tensor of ones shaped like ``x``, recorded)."""
    return apply_op(REGISTRY["ones_like"], x)


__all__ += ["relu_grad", "sum_to", "expand_dims", "getitem_grad", "gather_grad", "setitem",
            "fill",
            "softmax_cross_entropy", "zeros_like", "ones_like"]  # fmt: skip
