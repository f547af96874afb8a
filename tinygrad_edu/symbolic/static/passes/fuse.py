r"""Fusion: the gradient of ``nll_loss(log_softmax(z))`` as one op.

``F.cross_entropy`` on class labels is ``nll_loss(log_softmax(z), target)``. Its gradient,
as the two derivative rules build it, is four steps over the logits' shape: a dense
``G = nll_loss_grad(g, target)`` (zeros but one entry a row), ``sum(G, axis)``,
``exp(logp)`` and ``G - exp(logp) * sum(G)``. This pass puts one
``nll_log_softmax_grad(g, logp, target)`` in their place, which computes the same numbers
in a fraction of the work (``exp(logp)`` scaled once, the targets' entries written in
place: what a hand-written step does). Where ``G`` is read elsewhere too, it stays.

>>> from tinygrad_edu.symbolic import Variable, apply_op, gradients, topo_sort
>>> z = Variable("z", shape=(4, 3), dtype="float32")
>>> t = Variable("t", shape=(4,), dtype="int64")
>>> loss = apply_op("nll_loss", apply_op("log_softmax", z, axis=1), t)
>>> (dz,) = gradients(loss, [z])
>>> [n.op.name for n in topo_sort([dz])][-5:]
['nll_loss_grad', 'exp', 'sum', 'mul', 'sub']
>>> (fused,) = fuse([dz])
>>> fused.op.name, [i.op.name for i in fused.inputs]
('nll_log_softmax_grad', ['ones_like', 'log_softmax', 'placeholder'])
"""

from __future__ import annotations

from ...tensor_node import Node, apply_op
from .rewrite import rewrite

__all__ = ["fuse"]


def fuse(outputs) -> list:
    """The outputs with every ``nll_loss_grad`` + ``log_softmax`` gradient fused."""
    return rewrite(outputs, _fuse_node)


def _fuse_node(node: Node):
    if node.op.name != "sub":
        return None
    grad, prod = node.inputs
    if grad.op.name != "nll_loss_grad" or prod.op.name != "mul" or len(grad.inputs) != 2:
        return None
    a, b = prod.inputs
    e, total = (a, b) if a.op.name == "exp" else (b, a)
    if e.op.name != "exp" or total.op.name != "sum" or total.inputs[0] is not grad:
        return None
    logp = e.inputs[0]
    axis, keepdims = total.attrs.get("axis"), total.attrs.get("keepdims", False)
    shape = grad.attrs.get("shape")
    if not keepdims or not isinstance(axis, int) or shape is None or logp.shape != tuple(shape):
        return None
    if logp.dtype != grad.dtype or not (logp.dtype or "").startswith("float"):
        return None
    attrs = {k: v for k, v in grad.attrs.items() if k in ("weight", "ignore_index", "reduction")}
    fused = apply_op("nll_log_softmax_grad", grad.inputs[0], logp, grad.inputs[1], axis=axis,
                     **attrs)  # fmt: skip
    fused.is_gradient, fused.grad_of = node.is_gradient, node.grad_of
    return fused
