"""The eager engine's ``F`` for derivative rules under ``create_graph=True``: each op applied
to tensors is recorded, so the backward pass is itself a graph and can be differentiated."""

from __future__ import annotations

from ..ops import Functional
from .tensor import apply_op

__all__ = ["TensorFunctional", "TENSOR_F"]


class TensorFunctional(Functional):
    """Applies ops to eager tensors, recording them like any forward op."""

    def apply(self, op, *inputs, **attrs):
        return apply_op(op, *inputs, **attrs)


TENSOR_F = TensorFunctional()
