r"""Recurrent layers with PyTorch's names, parameter layouts and answers: ``RNNCell``,
``LSTMCell``, ``GRUCell`` and the sequence layers ``RNN``, ``LSTM``, ``GRU``.

Every step is written with ordinary ops (``F.linear``, ``sigmoid``, ``tanh``, ``chunk``), so
the backward pass through time is the engine's usual backward over an unrolled graph, and
the graph can be drawn. (The eager engine records an LSTM step's gates and state update as one
node, ``LstmCellBackward0``, with the same numbers: ``eager/cell_node.py``; anomaly mode and
``tg.compile`` see every gate. ``LSTM`` runs a whole layer as one op: ``ops/rnn.py``.) The
parameters are PyTorch's, name for name and shape for shape, so a
PyTorch model's ``state_dict`` (as arrays) loads here unchanged:

* ``weight_ih_l{k}`` of shape ``(G*hidden_size, input_size)`` for layer 0 and
  ``(G*hidden_size, D*hidden_size)`` above it, ``weight_hh_l{k}`` ``(G*hidden_size,
  hidden_size)``, ``bias_ih_l{k}`` and ``bias_hh_l{k}`` ``(G*hidden_size,)``; the reverse
  direction of a bidirectional layer adds ``_reverse``. ``G`` is 1 (RNN), 4 (LSTM, gates
  ``i, f, g, o``) or 3 (GRU, gates ``r, z, n``).
* All start ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``, as in PyTorch.

The equations (PyTorch's docs):

$$\begin{aligned}
\text{LSTM: } & i, f, g, o = \sigma, \sigma, \tanh, \sigma\,(W_{ih}x + b_{ih} + W_{hh}h +
b_{hh}) & c' &= f c + i g, \quad h' = o \tanh(c') \\
\text{GRU: } & r, z = \sigma(W_{i\{r,z\}}x + b + W_{h\{r,z\}}h + b), & n &= \tanh(W_{in}x +
b_{in} + r\,(W_{hn}h + b_{hn})), \quad h' = (1-z)\,n + z\,h
\end{aligned}$$

>>> import tinygrad_edu as tg
>>> tg.manual_seed(0)
>>> lstm = tg.nn.LSTM(input_size=3, hidden_size=5, num_layers=2, batch_first=True)
>>> [name for name, _ in lstm.named_parameters()][:4]
['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']
>>> out, (h, c) = lstm(tg.randn(4, 7, 3))
>>> tuple(out.shape), tuple(h.shape), tuple(c.shape)
((4, 7, 5), (2, 4, 5), (2, 4, 5))
"""

from __future__ import annotations

import math

from .. import backend
from ..eager.cell_node import lstm_cell
from ..eager.dispatch import apply_op
from ..eager.functional import cat, stack  # generated from the op table
from ..eager.tensor import Tensor
from ..ops import REGISTRY
from . import functional as F
from . import init
from .module import Module, Parameter

__all__ = ["RNNCell", "LSTMCell", "GRUCell", "RNN", "LSTM", "GRU"]

_LSTM_LAYER = REGISTRY["lstm_layer"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _dtype(xp, dtype):
    return getattr(xp, dtype) if isinstance(dtype, str) else (dtype or xp.float32)


def _check_sizes(kind: str, input_size, hidden_size) -> tuple[int, int]:
    for what, v in (("input_size", input_size), ("hidden_size", hidden_size)):
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise ValueError(f"{kind}: {what} must be a positive int, got {v!r}")
    return int(input_size), int(hidden_size)


# -- one step of each cell, on already-made tensors (shared by the cells and the layers) -------
def _step(mode: str, gi, h, w_hh, b_hh):
    """One time step, given ``gi``, the input's projection ``x W_ih^T + b_ih`` (computed for
    every step of a sequence at once, before the loop, as PyTorch does). Returns the new
    hidden state (and cell state for LSTM, as a pair)."""
    if mode == "LSTM":
        h, c = h
        z = gi + F.linear(h, w_hh, b_hh)
        fused = lstm_cell(z, c)  # the ops below as one node (eager/cell_node.py), same numbers
        if fused is not None:
            return fused
        i, f, g, o = z.chunk(4, -1)
        c = i.sigmoid() * g.tanh() + f.sigmoid() * c
        return o.sigmoid() * c.tanh(), c
    if mode == "GRU":
        gi, gh = gi.chunk(3, -1), F.linear(h, w_hh, b_hh).chunk(3, -1)
        r, z = (gi[0] + gh[0]).sigmoid(), (gi[1] + gh[1]).sigmoid()
        n = (gi[2] + r * gh[2]).tanh()
        return n + z * (h - n)  # (1 - z) n + z h, with one product fewer
    pre = gi + F.linear(h, w_hh, b_hh)
    return pre.tanh() if mode == "RNN_TANH" else pre.relu()


class _CellBase(Module):
    _mode = ""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None, mode: str | None = None):  # fmt: skip
        super().__init__()
        self._mode = mode or type(self)._mode
        kind = type(self).__name__
        self.input_size, self.hidden_size = _check_sizes(kind, input_size, hidden_size)
        self.bias = bool(bias)
        xp = backend.get_namespace(device)
        dt, g = _dtype(xp, dtype), _GATES[self._mode] * self.hidden_size
        self.weight_ih = Parameter(xp.zeros((g, self.input_size), dtype=dt), device=device)
        self.weight_hh = Parameter(xp.zeros((g, self.hidden_size), dtype=dt), device=device)
        if bias:
            self.bias_ih = Parameter(xp.zeros((g,), dtype=dt), device=device)
            self.bias_hh = Parameter(xp.zeros((g,), dtype=dt), device=device)
        else:
            self.bias_ih = self.bias_hh = None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every parameter ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``, as PyTorch."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        if self._mode == "RNN_RELU":
            s += ", nonlinearity=relu"
        return s

    def _prepare(self, x: Tensor, hx):
        kind = type(self).__name__
        if not isinstance(x, Tensor):
            raise TypeError(f"{kind}: input must be a Tensor, not {type(x).__name__}")
        if x.dim() not in (1, 2):
            raise ValueError(f"{kind}: Expected input to be 1D or 2D, got {x.dim()}D instead")
        if x.shape[-1] != self.input_size:
            raise RuntimeError(
                f"{kind}: input has inconsistent input_size: got {x.shape[-1]} expected "
                f"{self.input_size} (input shape {tuple(x.shape)})"
            )
        batched = x.dim() == 2
        x = x if batched else x.unsqueeze(0)
        states = hx if isinstance(hx, tuple) else (hx,)
        shape = (x.shape[0], self.hidden_size)
        out = []
        for s in states:
            if s is None:
                out.append(x.new_zeros(shape))
                continue
            s = s if batched else s.unsqueeze(0)
            if tuple(s.shape) != shape:
                raise RuntimeError(
                    f"{kind}: hidden state has shape {tuple(s.shape) if batched else s.shape[1:]}"
                    f", expected {shape if batched else shape[1:]}"
                )
            out.append(s)
        return x, batched, out


class RNNCell(_CellBase):
    r"""$h' = \tanh(x W_{ih}^\top + b_{ih} + h W_{hh}^\top + b_{hh})$ (or ReLU)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None):  # fmt: skip
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: Unknown nonlinearity '{nonlinearity}'; use tanh or relu")
        mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__(input_size, hidden_size, bias, device, dtype, mode)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, batched, (h,) = self._prepare(input, hx)
        h = _step(self._mode, F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh,
                  self.bias_hh)  # fmt: skip
        return h if batched else h.squeeze(0)


class LSTMCell(_CellBase):
    r"""One LSTM step: returns ``(h', c')`` (gates ``i, f, g, o`` as in PyTorch)."""

    _mode = "LSTM"

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None):
        if hx is not None and not (isinstance(hx, tuple | list) and len(hx) == 2):
            raise TypeError("LSTMCell: hx must be a pair (h_0, c_0) of tensors, or None")
        x, batched, (h, c) = self._prepare(input, tuple(hx) if hx is not None else (None, None))
        h, c = _step("LSTM", F.linear(x, self.weight_ih, self.bias_ih), (h, c), self.weight_hh,
                     self.bias_hh)  # fmt: skip
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(_CellBase):
    r"""One GRU step (gates ``r, z, n`` as in PyTorch)."""

    _mode = "GRU"

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, batched, (h,) = self._prepare(input, hx)
        h = _step("GRU", F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh,
                  self.bias_hh)  # fmt: skip
        return h if batched else h.squeeze(0)


class _RNNBase(Module):
    """Stacked (and optionally bidirectional) recurrent layers over a whole sequence."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None):  # fmt: skip
        super().__init__()
        kind = type(self).__name__
        self.mode = mode
        self.input_size, self.hidden_size = _check_sizes(kind, input_size, hidden_size)
        if isinstance(num_layers, bool) or not isinstance(num_layers, int) or num_layers < 1:
            raise ValueError(f"{kind}: num_layers must be an int >= 1, got {num_layers!r}")
        if isinstance(dropout, bool) or not 0 <= float(dropout) <= 1:
            raise ValueError(
                f"{kind}: dropout should be a number in range [0, 1] representing the "
                f"probability of an element being zeroed, got {dropout!r}"
            )
        if proj_size:
            raise NotImplementedError(
                f"{kind}: proj_size={proj_size} (LSTM with projections) is not supported; "
                "add an nn.Linear after the LSTM instead"
            )
        self.num_layers, self.bias, self.batch_first = num_layers, bool(bias), bool(batch_first)
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bool(bidirectional), 0
        xp = backend.get_namespace(device)
        dt, g = _dtype(xp, dtype), _GATES[mode] * hidden_size
        d = 2 if bidirectional else 1
        self._flat_weights_names: list[str] = []
        for layer in range(num_layers):
            in_size = input_size if layer == 0 else hidden_size * d
            for suffix in ("", "_reverse")[:d]:
                shapes = [("weight_ih", (g, in_size)), ("weight_hh", (g, hidden_size))]
                if bias:
                    shapes += [("bias_ih", (g,)), ("bias_hh", (g,))]
                for stem, shape in shapes:
                    name = f"{stem}_l{layer}{suffix}"
                    setattr(self, name, Parameter(xp.zeros(shape, dtype=dt), device=device))
                    self._flat_weights_names.append(name)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every parameter ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``, as PyTorch."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def flatten_parameters(self) -> None:
        """Nothing to do: PyTorch packs the weights into one contiguous block for cuDNN here;
        without cuDNN (PyTorch on a CPU as well) the call does nothing, and neither does it
        here. Code written for a GPU that calls it after ``.to(device)`` runs unchanged."""

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters per layer and direction, as PyTorch's ``all_weights``."""
        per = 4 if self.bias else 2
        names = self._flat_weights_names
        return [[getattr(self, n) for n in names[i:i + per]] for i in range(0, len(names), per)]

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.mode == "RNN_RELU":
            s += ", nonlinearity='relu'"
        for name, default in (("bias", True), ("batch_first", False), ("dropout", 0.0),
                              ("bidirectional", False)):  # fmt: skip
            if getattr(self, name) != default:
                s += f", {name}={getattr(self, name)}"
        return s

    def _state_shape(self, batch: int) -> tuple[int, int, int]:
        return ((2 if self.bidirectional else 1) * self.num_layers, batch, self.hidden_size)

    def _check_input(self, x) -> bool:
        kind = type(self).__name__
        if not isinstance(x, Tensor):
            raise TypeError(f"{kind}: input must be a Tensor, not {type(x).__name__}")
        if x.dim() not in (2, 3):
            raise ValueError(
                f"{kind}: Expected input to be 2D (unbatched) or 3D, got {x.dim()}D tensor "
                f"of shape {tuple(x.shape)}"
            )
        if x.shape[-1] != self.input_size:
            raise RuntimeError(
                f"{kind}: input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {x.shape[-1]} (input shape {tuple(x.shape)})"
            )
        w = getattr(self, self._flat_weights_names[0])
        if x.dtype != w.dtype:  # as PyTorch: no silent conversion of a float64 or int input
            fix = f"input{F._to_dtype(w.dtype)}" + (
                f", or convert the model: model{F._to_dtype(x.dtype)}"
                if backend.is_floating(x.dtype) else "")  # fmt: skip
            raise ValueError(f"{kind}: input dtype ({x.dtype}) does not match weight dtype "
                             f"({w.dtype}); convert the input: {fix}")  # fmt: skip
        return x.dim() == 3

    def _initial(self, state, x, batched: bool):
        """The initial state as (layers*directions, batch, hidden), zeros when None."""
        shape = self._state_shape(x.shape[1])
        if state is None:
            return x.new_zeros(shape)
        state = state if batched else state.unsqueeze(1)
        if state.dtype != x.dtype:
            raise RuntimeError(f"{type(self).__name__}: the initial state is {state.dtype} but "
                               f"the input is {x.dtype}; they must have the same dtype: "
                               f"convert it: h0{F._to_dtype(x.dtype)}")  # fmt: skip
        if tuple(state.shape) != shape:
            want = shape if batched else (shape[0], shape[2])
            got = tuple(state.shape) if batched else (state.shape[0], state.shape[2])
            raise RuntimeError(
                f"{type(self).__name__}: Expected hidden size {want}, got {got}"
            )
        return state

    def _run(self, x: Tensor, states: list):
        """``x`` as (time, batch, features); ``states`` one (L*D, N, H) tensor per kind of
        state (1, or 2 for LSTM). Returns the output sequence and the final states."""
        d = 2 if self.bidirectional else 1
        per = 4 if self.bias else 2
        lstm = self.mode == "LSTM"
        finals: list[list] = [[] for _ in states]
        layer_in = x
        for layer in range(self.num_layers):
            outs = []
            for direction in range(d):
                k = layer * d + direction
                w = [getattr(self, n) for n in self._flat_weights_names[k * per:(k + 1) * per]]
                w_ih, w_hh = w[0], w[1]
                b_ih, b_hh = (w[2], w[3]) if self.bias else (None, None)
                h = tuple(s[k] for s in states) if lstm else states[0][k]
                # the input's projection for every step in one product; for RNN and LSTM
                # both biases join it (GRU's b_hn sits inside r * (...), so it stays per step)
                gi = F.linear(layer_in, w_ih, b_ih)
                if b_hh is not None and self.mode != "GRU":
                    gi, b_hh = gi + b_hh, None
                if lstm:  # the whole layer as one op (ops/rnn.py), as PyTorch's kernels run it
                    both = apply_op(_LSTM_LAYER, gi, h[0], h[1], w_hh, reverse=bool(direction))
                    H = self.hidden_size
                    # row-major, as PyTorch's output is (a view of the op's (h, c) columns
                    # was not: out.view(T, -1) raised, is_contiguous() said False)
                    outs.append(both[..., :H].contiguous())
                    last = 0 if direction else -1
                    finals[0].append(both[last, :, :H])
                    finals[1].append(both[last, :, H:])
                    continue
                steps = range(layer_in.shape[0])
                seq = []
                for t in reversed(steps) if direction else steps:
                    h = _step(self.mode, gi[t], h, w_hh, b_hh)
                    seq.append(h[0] if lstm else h)
                if direction:
                    seq.reverse()
                outs.append(stack(seq))
                for i, s in enumerate(h if lstm else (h,)):
                    finals[i].append(s)
            layer_in = outs[0] if d == 1 else cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = F.dropout(layer_in, self.dropout, True)
        return layer_in, [stack(f) for f in finals]

    def forward(self, input: Tensor, hx=None):
        batched = self._check_input(input)
        x = input if batched else input.unsqueeze(1)
        if self.batch_first and batched:
            x = x.transpose(0, 1)
        if self.mode == "LSTM":
            if hx is not None and not (isinstance(hx, tuple | list) and len(hx) == 2):
                raise TypeError("LSTM: hx must be a pair (h_0, c_0) of tensors, or None")
            h0, c0 = hx if hx is not None else (None, None)
            states = [self._initial(h0, x, batched), self._initial(c0, x, batched)]
        else:
            states = [self._initial(hx, x, batched)]
        out, finals = self._run(x, states)
        if self.batch_first and batched:
            out = out.transpose(0, 1)
        if not batched:
            out, finals = out.squeeze(1), [f.squeeze(1) for f in finals]
        return (out, tuple(finals)) if self.mode == "LSTM" else (out, finals[0])


class RNN(_RNNBase):
    r"""An Elman RNN over a sequence: ``output, h_n = rnn(input, h_0)``, with
    ``nonlinearity="tanh"`` (default) or ``"relu"``."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device=None,
                 dtype=None):  # fmt: skip
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")  # fmt: skip
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)  # fmt: skip
        self.nonlinearity = nonlinearity


class LSTM(_RNNBase):
    r"""A long short-term memory layer: ``output, (h_n, c_n) = lstm(input, (h_0, c_0))``."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None):  # fmt: skip
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)  # fmt: skip


class GRU(_RNNBase):
    r"""A gated recurrent unit layer: ``output, h_n = gru(input, h_0)``."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device=None, dtype=None):  # fmt: skip
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, device=device, dtype=dtype)  # fmt: skip
