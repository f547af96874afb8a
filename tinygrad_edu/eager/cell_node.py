"""One backward node for an LSTM cell's gates and state update (``nn.LSTMCell``).

``nn.LSTMCell`` writes a step with elementary ops: from the gates' pre-activations ``z``
(N, 4H) it takes ``i, f, g, o = z.chunk(4, -1)``, then ``c' = σ(i) tanh(g) + σ(f) c`` and
``h' = σ(o) tanh(c')``: ten ops forward, ten nodes backward, and each costs the eager engine
its Python overhead whatever the arrays' size. A program that runs a small cell for many
steps (``python -m benchmarks.real_programs --only time_sequence``: two cells of 51 units,
100 steps, 40 LBFGS evaluations) spends most of its time there. So the eager engine computes
those ten ops on the arrays at once and records one node, ``LstmCellBackward0``, with two
outputs (``h'`` is output 0, ``c'`` output 1), as PyTorch's fused cell kernels do.

The numbers are the ten ops' own: the same numpy calls on the same slices in the same order
forward, and backward the products each derivative rule would form, associated as they
associate them, summed in the order the engine would sum them (``c'`` first collects what its
other users send, then what comes back through ``tanh(c')``). So a program's results do not
change by a bit. ``tg.compile``'s tracer, anomaly mode, other devices and dtypes, and an
inference tensor as the state take the elementary ops (:func:`lstm_cell` returns None).
"""

from __future__ import annotations

import numpy as _np

from ..ops.base import quiet
from ..ops.unary import sigmoid_of
from . import collector, core
from .grad_mode import RARE as _RARE
from .grad_mode import _state as _modes
from .node import CPU, RETAIN_GRAPH_HINT, Node, SavedTensor, _tensor_functional

__all__ = ["LstmCellBackward", "lstm_cell"]

_sigmoid = sigmoid_of.__wrapped__  # under the one quiet() of the cell, not one per gate
_FLOATS = (_np.dtype(_np.float32), _np.dtype(_np.float64))
_FREEZE_MASK = collector.FREEZE_EVERY - 1


def _gate_grads(dct, gh, c, si, sf, tg, so, tc, zeros):
    """The four gates' gradients (``do`` is ``zeros()`` where ``h'`` got none) and ``c``'s:
    each derivative rule's products, in its order (Mul: ``g * other``; Sigmoid:
    ``g * out * (1 - out)``; Tanh: ``g * (1 - out * out)``)."""
    di = dct * tg * si * (1 - si)
    df = dct * c * sf * (1 - sf)
    dg = dct * si * (1 - tg * tg)
    do = gh * tc * so * (1 - so) if gh is not None else zeros()
    return di, df, dg, do, dct * sf


class LstmCellBackward(Node):
    """The node of one LSTM cell step: inputs ``(z, c)`` (the gates' pre-activations and the
    previous cell state), outputs ``(h', c')``. Saves the gates' activations and
    ``tanh(c')`` (arrays made here, that nothing else can change) and ``c`` and ``z``
    (version-checked, as any op's saved inputs)."""

    __slots__ = ("acts", "saved_c", "saved_z", "shape", "dtype", "needs", "_freed")
    num_outputs = 2

    def name(self) -> str:
        return "LstmCellBackward0"

    def apply(self, grads, create_graph):
        if self._freed:
            raise RuntimeError(f"{self.name()}: {RETAIN_GRAPH_HINT}")
        gh, gc = grads
        c = self.saved_c.unpack(self, create_graph, 1)
        if create_graph:  # the activations again, as tensors recorded from z (double backward)
            F = _tensor_functional()
            z = self.saved_z.unpack(self, True, 0)
            H = self.shape[1] // 4
            si, sf = F.sigmoid(z[:, :H]), F.sigmoid(z[:, H:2 * H])
            tg, so = F.tanh(z[:, 2 * H:3 * H]), F.sigmoid(z[:, 3 * H:])
            tc = F.tanh(si * tg + sf * c)
        else:
            F = None
            si, sf, tg, so, tc = self.acts
        dct = None if gh is None else gh * so * (1 - tc * tc)
        if gc is not None:
            dct = gc if dct is None else gc + dct
        piece = (self.shape[0], self.shape[1] // 4)

        def zeros():
            arr = _np.zeros(piece, dtype=self.dtype)
            return core.new_tensor(arr, CPU) if create_graph else arr

        di, df, dg, do, dc = _gate_grads(dct, gh, c, si, sf, tg, so, tc, zeros)
        dz = F.cat(di, df, dg, do, dim=-1) if create_graph else _np.concatenate(
            (di, df, dg, do), axis=-1)  # fmt: skip
        return (dz if self.needs[0] else None, dc if self.needs[1] else None)

    def _output_meta(self) -> tuple:
        piece = ((self.shape[0], self.shape[1] // 4), self.dtype, "cpu")
        return (piece, piece)

    def release(self) -> None:
        if self._freed is False:
            self.acts = self.saved_c = self.saved_z = None
            self._freed = True


def lstm_cell(z, c):
    """``(h', c')`` of one LSTM step from the gates' pre-activations ``z`` (N, 4H) and the
    cell state ``c`` (N, H), recorded as one :class:`LstmCellBackward` node; None where the
    elementary ops must run instead (see the module docstring)."""
    Tensor = core.Tensor
    if _RARE[0] or not (isinstance(z, Tensor) and isinstance(c, Tensor)):
        return None
    zd, cd = z._data, c._data
    if (type(zd) is not _np.ndarray or type(cd) is not _np.ndarray or z._device is not CPU
            or c._device is not CPU or zd.ndim != 2 or zd.dtype not in _FLOATS
            or cd.dtype != zd.dtype or zd.shape[1] % 4
            or cd.shape != (zd.shape[0], zd.shape[1] // 4)):  # fmt: skip
        return None
    record = _modes.grad and (z._requires_grad or c._requires_grad)
    if record and (type(z._counter) is not list or type(c._counter) is not list):
        return None  # an inference tensor: the elementary ops raise PyTorch's error
    H = zd.shape[1] // 4
    with quiet():  # the forward of sigmoid, tanh, mul and add, on chunk's four slices
        si, sf = _sigmoid(_np, zd[:, :H]), _sigmoid(_np, zd[:, H:2 * H])
        tg, so = _np.tanh(zd[:, 2 * H:3 * H]), _sigmoid(_np, zd[:, 3 * H:])
        c2 = si * tg + sf * cd
        tc = _np.tanh(c2)
        h2 = so * tc
    if not record:
        return core.new_tensor(h2, CPU), core.new_tensor(c2, CPU)
    node = object.__new__(LstmCellBackward)
    Node.__init__(node, (core.edge(z), core.edge(c)))
    if not node.sequence_nr & _FREEZE_MASK:
        collector.graph_grew()  # see NOTE [Long graphs and the cycle collector]
    node.acts = (si, sf, tg, so, tc)
    node.saved_c, node.saved_z = SavedTensor(c), SavedTensor(z)
    node.shape, node.dtype = zd.shape, zd.dtype
    node.needs = (z._requires_grad, c._requires_grad)
    node._freed = False
    return core.new_tensor(h2, CPU, node, None, 0), core.new_tensor(c2, CPU, node, None, 1)
