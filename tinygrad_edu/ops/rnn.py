r"""``lstm_layer``: a whole LSTM layer over a sequence as one op, with its backward through time.

``nn.LSTMCell`` is written with elementary ops (its graph shows every gate); a sequence of
``T`` steps written that way records about 13 ops per step, and the eager engine pays
Python's cost for each. ``nn.LSTM`` runs a layer as **one op**, as PyTorch's own kernels do:
the forward loops over the steps on raw arrays, and the derivative rule below is
backpropagation through time, step by step in reverse, written once with ``F`` like every
other rule (so it also runs on eager tensors for double backward, and on symbolic nodes,
where it unrolls into a graph).

Inputs: ``gi`` (T, N, 4H), the input's projection for every step with both biases added
(gates in PyTorch's order ``i, f, g, o``); ``h0``, ``c0`` (N, H); ``w_hh`` (4H, H).
Output: (T, N, 2H), step ``t``'s hidden state ``h_t`` then its cell state ``c_t``.

$$\begin{aligned}
i, f, g, o &= \sigma, \sigma, \tanh, \sigma\,(gi_t + h_{t-1} W_{hh}^\top), &
c_t &= f\,c_{t-1} + i\,g, \qquad h_t = o \tanh c_t \\
\bar c_t &= \bar c_{t+1} f_{t+1} + \bar h_t\, o\,(1 - \tanh^2 c_t), &
\bar{gates}_t &= [\bar c_t g\,\sigma'_i,\; \bar c_t c_{t-1} \sigma'_f,\; \bar c_t i\,(1-g^2),\;
\bar h_t \tanh c_t\,\sigma'_o]
\end{aligned}$$

with $\bar h_t$ the output's gradient plus $\bar{gates}_{t+1} W_{hh}$, and
$\bar W_{hh} = \sum_t \bar{gates}_t^\top h_{t-1}$.
"""

from __future__ import annotations

from .base import NoOnnx, Op, ShapeError, fmt_shapes, register
from .promotion import floating
from .unary import sigmoid_of as _sigmoid

__all__ = ["LstmLayer"]


@register
class LstmLayer(Op):
    """A whole LSTM layer over a sequence (see the module docstring)."""

    name, arity, saves, saves_output = "lstm_layer", 4, (0, 1, 2, 3), True
    onnx = NoOnnx("not written: ONNX's LSTM orders its gates i, o, f, c and packs its "
                  "weights otherwise than PyTorch's i, f, g, o")
    torch_name = "LstmLayerBackward0"

    def forward(self, xp, gi, h0, c0, w_hh, reverse=False):
        gi = floating(xp, gi)
        T, N, G = gi.shape
        H = G // 4
        dtype = xp.result_type(gi, h0, c0, w_hh)
        out = xp.empty((T, N, 2 * H), dtype=dtype)
        h, c, wt = h0, c0, w_hh.T
        for t in range(T - 1, -1, -1) if reverse else range(T):
            gates = gi[t, ...] + h @ wt
            i, f = _sigmoid(xp, gates[:, :H]), _sigmoid(xp, gates[:, H:2 * H])
            g, o = xp.tanh(gates[:, 2 * H:3 * H]), _sigmoid(xp, gates[:, 3 * H:])
            c = f * c + i * g
            h = o * xp.tanh(c)
            out[t, :, :H], out[t, :, H:] = h, c
        return out

    def shape(self, gi, h0, c0, w_hh, reverse=False):
        shapes = fmt_shapes([gi, h0, c0, w_hh])
        if len(gi) != 3 or gi[2] % 4:
            raise ShapeError(f"lstm_layer: gi must be (T, N, 4*H), got shapes {shapes}")
        T, N, G = gi
        H = G // 4
        if tuple(h0) != (N, H) or tuple(c0) != (N, H) or tuple(w_hh) != (G, H):
            raise ShapeError(
                f"lstm_layer: shapes {shapes} do not fit: with gi (T, N, 4H) = {tuple(gi)}, "
                f"h0 and c0 must be {(N, H)} and w_hh {(G, H)}"
            )
        return (T, N, 2 * H)

    def vjp(self, F, g, inputs, out, shapes, needs, reverse=False):
        gi, h0, c0, w_hh = inputs
        T, _, G = shapes[0]
        H = G // 4
        steps = range(T) if reverse else range(T - 1, -1, -1)  # backward runs the other way
        dh = dc = dw = None
        d_gates = [None] * T
        for t in steps:
            prev = t + 1 if reverse else t - 1
            if 0 <= prev < T:
                h_prev, c_prev = out[prev, :, :H], out[prev, :, H:]
            else:
                h_prev, c_prev = h0, c0
            gates = gi[t, ...] + F.matmul(h_prev, w_hh, trans_B=True)
            i, f = F.sigmoid(gates[:, :H]), F.sigmoid(gates[:, H:2 * H])
            gg, o = F.tanh(gates[:, 2 * H:3 * H]), F.sigmoid(gates[:, 3 * H:])
            tc = F.tanh(out[t, :, H:])
            gh, gc = g[t, :, :H], g[t, :, H:]
            if dh is not None:
                gh, gc = gh + dh, gc + dc
            dct = gc + gh * o * (1 - tc * tc)
            d = F.cat(dct * gg * i * (1 - i), dct * c_prev * f * (1 - f),
                      dct * i * (1 - gg * gg), gh * tc * o * (1 - o), dim=-1)  # fmt: skip
            d_gates[t] = d
            dh, dc = F.matmul(d, w_hh), dct * f
            step_dw = F.matmul(d, h_prev, trans_A=True)
            dw = step_dw if dw is None else dw + step_dw
        return (F.stack(*d_gates, dim=0) if needs[0] else None, dh if needs[1] else None,
                dc if needs[2] else None, dw if needs[3] else None)  # fmt: skip
