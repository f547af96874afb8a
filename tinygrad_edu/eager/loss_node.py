"""One backward node for ``smooth_l1_loss`` with ``reduction='mean'``.

``F.smooth_l1_loss`` is written with elementary ops (``functional_losses.py``): ``d = |x - y|``,
``where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta).mean()``, seven recorded ops and
seven nodes. On a small batch the arrays cost nothing and the engine's Python per op is all
there is: pytorch/examples' regression program (``python -m benchmarks.real_programs --only
regression``, a Linear(4, 1) on 32 samples for about 900 steps) spent a third of each step in
them. So the eager engine runs the same seven ops' forwards on the arrays and records one
node, ``SmoothL1LossBackward0`` (PyTorch's name for it), whose backward calls the same seven
derivative rules (with ``F`` on arrays) in the order the engine would run their nodes, and
adds ``d``'s three gradients in the order the engine would. The numbers are the elementary
ops' own, bit for bit. ``tg.compile``'s tracer, anomaly mode, other devices, dtypes and
reductions take the elementary ops (:func:`smooth_l1_mean` returns None).
"""

from __future__ import annotations

import numpy as _np

from ..ops import REGISTRY
from . import collector, core
from .dispatch import _as_array
from .grad_mode import RARE as _RARE
from .grad_mode import _state as _modes
from .node import CPU, RETAIN_GRAPH_HINT, Node, SavedTensor, _tensor_functional

__all__ = ["SmoothL1LossBackward", "smooth_l1_mean"]

_SUB, _ABS, _LT, _MUL = REGISTRY["sub"], REGISTRY["abs"], REGISTRY["less"], REGISTRY["mul"]
_WHERE, _MEAN = REGISTRY["where"], REGISTRY["mean"]
_FLOATS = (_np.dtype(_np.float32), _np.dtype(_np.float64))
_FREEZE_MASK = collector.FREEZE_EVERY - 1


def _vjps(F, g, d0, d, cond, beta, shape, needs):
    """The seven rules, run as the engine runs their nodes (mean, where, the ``d - 0.5 beta``
    sub, the two muls, abs, the first sub); ``d`` collects its gradients in arrival order."""
    s, s2, s3 = (shape,), (shape, shape), (shape, shape, shape)
    (gm,) = _MEAN.vjp(F, g, (None,), None, s, (True,))
    _, ga, gb = _WHERE.vjp(F, gm, (cond, None, None), None, s3, (False, True, True))
    (gd,) = _SUB.vjp(F, gb, (None, None), None, (shape, ()), (True, False))[:1]
    (gdd,) = _MUL.vjp(F, ga, (None, 0.5 / beta), None, (shape, ()), (True, False))[:1]
    t0, t1 = _MUL.vjp(F, gdd, (d, d), None, s2, (True, True))
    gd = gd + t0 + t1
    (g0,) = _ABS.vjp(F, gd, (d0,), None, s, (True,))
    gx, gy = _SUB.vjp(F, g0, (None, None), None, s2, needs)
    return gx, gy


def _raw_vjps(g, d0, d, cond, beta, needs):
    """:func:`_vjps` on arrays, each rule's products written out (RAW's dispatch per rule was
    a third of the node): the same numpy operations on the same values, so the same bits."""
    gm = g / d.size  # mean: g / n, broadcast (np.where broadcasts it below)
    zero = _np.zeros(d.shape, dtype=d.dtype)  # where: g where the mask holds, else 0 ...
    ga, gb = _np.where(cond, gm, zero), _np.where(cond, zero, gm)
    t = ga * (0.5 / beta) * d  # ... the two muls (d * d gives d's gradient twice) ...
    g0 = (gb + t + t) * _np.sign(d0)  # ... d's three gradients in arrival order, abs
    return (g0 if needs[0] else None, -g0 if needs[1] else None)


class SmoothL1LossBackward(Node):
    """The node of ``smooth_l1_loss(x, y, reduction='mean', beta)``: inputs ``(x, y)``.
    Saves ``x - y``, ``|x - y|`` and the mask ``|x - y| < beta`` (arrays made here) and the
    inputs (version-checked; read again only by a ``create_graph`` backward)."""

    __slots__ = ("arrays", "saved_x", "saved_y", "beta", "shape", "dtype", "needs", "_freed")

    def name(self) -> str:
        return "SmoothL1LossBackward0"

    def apply(self, grads, create_graph):
        if self._freed:
            raise RuntimeError(f"{self.name()}: {RETAIN_GRAPH_HINT}")
        x = self.saved_x.unpack(self, create_graph, 0)
        y = self.saved_y.unpack(self, create_graph, 1)
        if not create_graph:
            return _raw_vjps(grads[0], *self.arrays, self.beta, self.needs)
        d0 = x - y  # d as tensors recorded from x and y (for a double backward)
        d, cond = d0.abs(), core.new_tensor(self.arrays[2], CPU)
        return _vjps(_tensor_functional(), grads[0], d0, d, cond, self.beta, self.shape,
                     self.needs)  # fmt: skip

    def _output_meta(self) -> tuple:
        return (((), self.dtype, "cpu"),)

    def release(self) -> None:
        if self._freed is False:
            self.arrays = self.saved_x = self.saved_y = None
            self._freed = True


def smooth_l1_mean(x, y, beta: float):
    """``smooth_l1_loss(x, y, reduction='mean', beta=beta)`` (``beta > 0``, ``y`` of ``x``'s
    shape and dtype) recorded as one :class:`SmoothL1LossBackward` node; None where the
    elementary ops must run instead (see the module docstring)."""
    xd, yd = x._data, y._data
    if (_RARE[0] or type(xd) is not _np.ndarray or type(yd) is not _np.ndarray
            or x._device is not CPU or y._device is not CPU or xd.dtype not in _FLOATS
            or yd.dtype != xd.dtype or xd.shape != yd.shape or not xd.size):  # fmt: skip
        return None
    record = _modes.grad and (x._requires_grad or y._requires_grad)
    if record and (type(x._counter) is not list or type(y._counter) is not list):
        return None  # an inference tensor: the elementary ops raise PyTorch's error
    d0 = _SUB.forward(_np, xd, yd)  # the seven forwards, as apply_op runs them
    d = _ABS.forward(_np, d0)
    cond = _LT.forward(_np, d, beta)
    a = _MUL.forward(_np, _MUL.forward(_np, d, d), 0.5 / beta)
    b = _SUB.forward(_np, d, 0.5 * beta)
    out = _as_array(_np, _MEAN.forward(_np, _WHERE.forward(_np, cond, a, b)))
    if not record:
        return core.new_tensor(out, CPU)
    node = object.__new__(SmoothL1LossBackward)
    Node.__init__(node, (core.edge(x), core.edge(y)))
    if not node.sequence_nr & _FREEZE_MASK:
        collector.graph_grew()  # see NOTE [Long graphs and the cycle collector]
    node.arrays = (d0, d, cond)
    node.saved_x, node.saved_y = SavedTensor(x), SavedTensor(y)
    node.beta, node.shape, node.dtype = beta, xd.shape, xd.dtype
    node.needs = (x._requires_grad, y._requires_grad)
    node._freed = False
    return core.new_tensor(out, CPU, node)
