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

On numpy arrays of one float dtype both directions take a second loop (:func:`_forward_np`,
:func:`_vjp_np`) with the same numbers in fewer calls: on a step's small arrays Python's cost
per call, not the arithmetic, is the price (``python -m benchmarks.real_programs --only rnn``:
28 steps of 50 x 32). One ``errstate`` around the loop instead of one per sigmoid; the sigmoid
of the four gate blocks in one pass; results written into arrays made once; the forward keeps
its activations for the backward, as PyTorch's saved gate outputs are kept (the plain rule
computes them again from the output); and backward, the rule's products written on arrays,
the four blocks' gradients as one product (see :func:`_vjp_np`), instead of nine ``F`` calls
and some thirty products per step. Every product keeps its operands and its association,
every ``exp`` and ``tanh`` is numpy's on the same values (rows of unit stride, as there), and
the sums over steps run in the same order, so the results are the same to the bit
(``tests/nn/test_lstm_layer_fast.py`` compares both loops with the plain code as it was, and
the kept activations with the ones computed again). Other dtypes and namespaces, and the rule
with any other ``F`` (double backward, the symbolic engine), take the plain code.
"""

from __future__ import annotations

import weakref as _weakref

import numpy as _np  # the type check of the fast loops' arrays; their math is numpy's own

from .base import NoOnnx, Op, ShapeError, fmt_shapes, quiet, register
from .promotion import floating
from .unary import sigmoid_of as _sigmoid
from .vjp_namespace import RAW

__all__ = ["LstmLayer"]

_FLOATS = (_np.dtype(_np.float32), _np.dtype(_np.float64))
_RUN = 1 << 15  # the backward's arrays for a run of steps hold about this many elements
_ACTS: dict[int, tuple] = {}  # id(output) -> (weak reference to it, its activations)


def _plain_numpy(*arrays) -> bool:
    """Whether the fast loops apply: numpy arrays (no subclass) of one dtype, float32 or
    float64, and at least one step."""
    dt = arrays[0].dtype
    for a in arrays:
        if type(a) is not _np.ndarray or a.dtype != dt:
            return False
    return dt in _FLOATS and arrays[0].shape[0] > 0


def _sigmoid_into(z, s):
    """``s = 1 / (1 + exp(-z))``, :func:`sigmoid_of`'s calls (a sum or a quotient is the same
    whichever operand comes first), with ``exp`` reading a contiguous array as it does there."""
    _np.negative(z, out=s)
    _np.exp(s, out=s)
    s += 1
    _np.divide(1, s, out=s)


def _keep(out, acts):
    """Remember the forward's activations for the backward of ``out``, as long as ``out``
    lives (a weak reference's callback drops them with it)."""
    key, table = id(out), _ACTS  # (bound here: the callback may run as the interpreter exits)
    table[key] = (_weakref.ref(out, lambda _, key=key, table=table: table.pop(key, None)), acts)


def _kept(out):
    """The activations :func:`_forward_np` kept for ``out``, or None."""
    entry = _ACTS.get(id(out))
    return entry[1] if entry is not None and entry[0]() is out else None


def _forward_np(gi, h0, c0, w_hh, reverse):
    """:meth:`LstmLayer.forward`'s loop on numpy arrays of one dtype (see the module docstring).
    It keeps each step's activations ``[i, f, tanh g, o]`` and ``tanh c_t`` for the backward,
    which the plain rule computes again from the output (the same calls on the same numbers:
    ``tests/nn/test_lstm_layer_fast.py`` checks the bits)."""
    T, N, G = gi.shape
    H = G // 4
    dt = gi.dtype
    out = _np.empty((T, N, 2 * H), dtype=dt)
    acts, tanh_c = _np.empty((T, N, G), dtype=dt), _np.empty((T, N, H), dtype=dt)
    ig, hb, cb = (_np.empty((N, H), dtype=dt) for _ in range(3))
    h, c, wt = h0, c0, w_hh.T
    with quiet():
        for t in range(T - 1, -1, -1) if reverse else range(T):
            z = h @ wt
            z += gi[t]
            s = acts[t]
            _sigmoid_into(z, s)  # (the block of g is computed, then overwritten)
            i, f, g, o = s[:, :H], s[:, H:2 * H], s[:, 2 * H:3 * H], s[:, 3 * H:]
            _np.tanh(z[:, 2 * H:3 * H], out=g)
            c = _np.multiply(f, c, out=cb)  # c = f * c + i * g
            c += _np.multiply(i, g, out=ig)
            tc = _np.tanh(c, out=tanh_c[t])
            h = _np.multiply(o, tc, out=hb)  # h = o * tanh(c)
            out[t, :, :H], out[t, :, H:] = h, c
    _keep(out, (acts, tanh_c))
    return out


def _recompute(gi, h0, w_hh, out, reverse):
    """The activations :func:`_forward_np` keeps, computed again from the output as the plain
    rule computes them (for an output the numpy forward did not make)."""
    T, N, G = gi.shape
    H = G // 4
    acts = _np.empty((T, N, G), dtype=gi.dtype)
    with quiet():
        for t in range(T):
            p = t + 1 if reverse else t - 1
            z = (out[p, :, :H] if 0 <= p < T else h0) @ w_hh.T
            z += gi[t]
            _sigmoid_into(z, acts[t])
            _np.tanh(z[:, 2 * H:3 * H], out=acts[t, :, 2 * H:3 * H])
        return acts, _np.tanh(out[..., H:])


def _vjp_np(g, gi, h0, c0, w_hh, out, needs, reverse):
    """:meth:`LstmLayer.vjp` with ``F`` = ``RAW`` on numpy arrays of one dtype, the rule's
    products with the rule's operands in the rule's association, in few calls.

    The activations come from the forward (or are computed again). The step loop forms the
    four gate blocks' gradients as one product of (N, 4H) arrays, ``((P * Q) * R) * U``, with
    ``P = [dct, dct, dct, gh]``, ``Q = [tanh g, c_prev, i, tanh c]``, ``R = [i, f, 1 - tanh^2 g,
    o]`` and ``U = [1 - i, 1 - f, 1, 1 - o]``: for each block the rule's ``((a * b) * c) * d``,
    and for ``g``'s, whose rule has one factor less, a product by 1, which changes no bit.
    ``Q``, ``R``, ``U`` do not depend on the gradient: they are made for a run of steps at
    once, small enough (:data:`_RUN` elements) to stay in the processor's cache."""
    T, N, G = gi.shape
    H = G // 4
    dt = gi.dtype
    acts, tanh_c = _kept(out) or _recompute(gi, h0, w_hh, out, reverse)
    d_gates = _np.empty((T, N, G), dtype=dt)
    P = _np.empty((N, 4, H), dtype=dt)  # [dct, dct, dct, gh]
    P2, dct, gh = P.reshape(N, G), P[:, 0], P[:, 3]
    b, gc2 = _np.empty((N, H), dtype=dt), _np.empty((N, H), dtype=dt)
    order = range(T) if reverse else range(T - 1, -1, -1)  # backward runs the other way
    run = max(1, _RUN // (N * G or 1))
    mul = _np.multiply
    dh = dc = dw = None
    with quiet():
        for start in range(0, T, run):
            steps = order[start:start + run]
            lo = min(steps[0], steps[-1])
            n = len(steps)
            prev = [t + 1 if reverse else t - 1 for t in range(lo, lo + n)]
            a, tc = acts[lo:lo + n], tanh_c[lo:lo + n]
            R = a.copy()
            Rg = R[..., 2 * H:3 * H]
            _np.subtract(1, mul(Rg, Rg, out=Rg), out=Rg)
            U = _np.subtract(1, a)
            U[..., 2 * H:3 * H] = 1
            Q = _np.empty((n, N, G), dtype=dt)
            Q[..., :H] = a[..., 2 * H:3 * H]
            for k, p in enumerate(prev):
                Q[k, :, H:2 * H] = out[p, :, H:] if 0 <= p < T else c0
            Q[..., 2 * H:3 * H] = a[..., :H]
            Q[..., 3 * H:] = tc
            A = _np.subtract(1, mul(tc, tc))  # 1 - tanh^2 c_t
            f, o = a[..., H:2 * H], a[..., 3 * H:]
            for t in steps:
                k = t - lo
                if dh is None:
                    gh[...], gc = g[t, :, :H], g[t, :, H:]
                else:
                    _np.add(g[t, :, :H], dh, out=gh)
                    gc = _np.add(g[t, :, H:], dc, out=gc2)
                # dct = gc + gh * o * (1 - tc * tc)
                _np.add(gc, mul(mul(gh, o[k], out=b), A[k], out=b), out=dct)
                P[:, 1:3] = P[:, :1]
                d = d_gates[t]
                mul(mul(mul(P2, Q[k], out=d), R[k], out=d), U[k], out=d)
                dh, dc = d @ w_hh, dct * f[k]
                if needs[3]:
                    p = prev[k]
                    step_dw = d.T @ (out[p, :, :H] if 0 <= p < T else h0)
                    if dw is None:
                        dw = step_dw
                    else:
                        dw += step_dw
    return (d_gates if needs[0] else None, dh if needs[1] else None,
            dc if needs[2] else None, dw if needs[3] else None)  # fmt: skip


@register
class LstmLayer(Op):
    """A whole LSTM layer over a sequence (see the module docstring)."""

    name, arity, saves, saves_output = "lstm_layer", 4, (0, 1, 2, 3), True
    onnx = NoOnnx("not written: ONNX's LSTM orders its gates i, o, f, c and packs its "
                  "weights otherwise than PyTorch's i, f, g, o")
    torch_name = "LstmLayerBackward0"

    def forward(self, xp, gi, h0, c0, w_hh, reverse=False):
        gi = floating(xp, gi)
        if _plain_numpy(gi, h0, c0, w_hh):
            return _forward_np(gi, h0, c0, w_hh, reverse)
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
        if F is RAW and _plain_numpy(gi, h0, c0, w_hh, g, out):
            return _vjp_np(g, gi, h0, c0, w_hh, out, needs, reverse)
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
