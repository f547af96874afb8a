"""One backward node for all the pieces of ``split``, ``chunk`` and ``unbind``.

PyTorch records ``x.chunk(4)`` as one ``SplitBackward0`` node with four outputs: the pieces'
``output_nr`` are 0, 1, 2, 3, their gradients arrive in the node's input buffer one slot each,
and the node joins them into the input's gradient with one concatenation, zeros standing in
for a piece that got none. So does the eager engine here (``UnbindBackward0`` joins with a
``stack``).

Why not one slice op per piece, as the op library writes ``split``: that records an op per
piece forward, and backward makes a zero array of the input's full size per piece and sums
them. In an LSTM cell, whose four gates are a ``chunk`` of one product, that was about a fifth
of a step (``python -m benchmarks.real_programs --only time_sequence``). ``tg.compile``'s
tracer and anomaly mode still see one slice per piece (``dispatch._multi_output`` takes this
path only when neither is on); both compute the same gradient.
"""

from __future__ import annotations

from ..backend import device_name, namespace_of
from ..ops import RAW
from . import core
from .node import Node, _tensor_functional


class SplitBackward(Node):
    """The node of ``split``/``chunk`` (``cat`` of the pieces' gradients along ``dim``) or of
    ``unbind`` (``stack``). ``piece_shapes``: the shape of each piece (its gradient's)."""

    __slots__ = ("_name", "num_outputs", "dim", "stacked", "piece_shapes", "dtype")

    def __init__(self, name: str, edge: tuple, dim: int, stacked: bool, piece_shapes, dtype):
        super().__init__((edge,))
        self._name, self.num_outputs, self.dim = name, len(piece_shapes), dim
        self.stacked, self.piece_shapes, self.dtype = stacked, tuple(piece_shapes), dtype

    def name(self) -> str:
        return self._name

    def apply(self, grads, create_graph):
        known = next((g for g in grads if g is not None), None)
        if known is None:
            return (None,)
        F = _tensor_functional() if create_graph else RAW
        parts = list(grads)
        for i, g in enumerate(parts):
            if g is None:  # no gradient reached this piece: it contributes zeros
                data = known._data if create_graph else known
                zeros = namespace_of(data).zeros(self.piece_shapes[i], dtype=self.dtype)
                parts[i] = core.new_tensor(zeros, self.device) if create_graph else zeros
        join = F.stack if self.stacked else F.cat
        return (join(*parts, dim=self.dim),)

    def _output_meta(self) -> tuple:
        where = device_name(self.device)
        return tuple((tuple(s), self.dtype, where) for s in self.piece_shapes)
