"""``lstm_layer``'s numpy loops (ops/rnn.py ``_forward_np``, ``_vjp_np``) give the plain loops'
numbers bit for bit: the forward output and all four gradients, float32 and float64, forward
and reverse, with saturated gates and overflowing ``exp``, a broadcast gradient and every
subset of ``needs``. The reference is the plain code as it was written before the numpy loops
(copied below, so a change to either side shows), and the rule's own ``F`` code run on raw
arrays by a functional other than ``RAW``. Other dtypes and ``F``'s take the plain code; a
whole ``nn.LSTM`` still matches PyTorch (tests/nn/test_rnn_attention.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu.ops import REGISTRY, RawFunctional, rnn
from tinygrad_edu.ops.base import quiet

OP = REGISTRY["lstm_layer"]


def _sigmoid(x):
    with quiet():
        return 1 / (1 + np.exp(-x))


def _reference_forward(gi, h0, c0, w_hh, reverse):
    """The plain forward loop, verbatim (``_sigmoid`` is ``sigmoid_of`` on numpy)."""
    T, N, G = gi.shape
    H = G // 4
    out = np.empty((T, N, 2 * H), dtype=np.result_type(gi, h0, c0, w_hh))
    h, c, wt = h0, c0, w_hh.T
    for t in range(T - 1, -1, -1) if reverse else range(T):
        gates = gi[t, ...] + h @ wt
        i, f = _sigmoid(gates[:, :H]), _sigmoid(gates[:, H:2 * H])
        g, o = np.tanh(gates[:, 2 * H:3 * H]), _sigmoid(gates[:, 3 * H:])
        c = f * c + i * g
        h = o * np.tanh(c)
        out[t, :, :H], out[t, :, H:] = h, c
    return out


def _reference_vjp(g, gi, h0, c0, w_hh, out, reverse):
    """The plain backward through time, verbatim with the ``F`` calls written on numpy."""
    T, _, G = gi.shape
    H = G // 4
    steps = range(T) if reverse else range(T - 1, -1, -1)
    dh = dc = dw = None
    d_gates = [None] * T
    for t in steps:
        prev = t + 1 if reverse else t - 1
        if 0 <= prev < T:
            h_prev, c_prev = out[prev, :, :H], out[prev, :, H:]
        else:
            h_prev, c_prev = h0, c0
        gates = gi[t, ...] + np.matmul(h_prev, w_hh.T)
        i, f = _sigmoid(gates[:, :H]), _sigmoid(gates[:, H:2 * H])
        gg, o = np.tanh(gates[:, 2 * H:3 * H]), _sigmoid(gates[:, 3 * H:])
        tc = np.tanh(out[t, :, H:])
        gh, gc = g[t, :, :H], g[t, :, H:]
        if dh is not None:
            gh, gc = gh + dh, gc + dc
        dct = gc + gh * o * (1 - tc * tc)
        d = np.concatenate([dct * gg * i * (1 - i), dct * c_prev * f * (1 - f),
                            dct * i * (1 - gg * gg), gh * tc * o * (1 - o)], axis=-1)  # fmt: skip
        d_gates[t] = d
        dh, dc = np.matmul(d, w_hh), dct * f
        step_dw = np.matmul(d.T, h_prev)
        dw = step_dw if dw is None else dw + step_dw
    return np.stack(d_gates, axis=0), dh, dc, dw


class _Other(RawFunctional):
    """Raw arrays, but not ``RAW``: the rule's ``F`` code."""


def _inputs(T, N, H, dtype, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    gi = (rng.standard_normal((T, N, 4 * H)) * scale).astype(dtype)
    h0, c0 = (rng.standard_normal((N, H)).astype(dtype) for _ in range(2))
    w_hh = (rng.standard_normal((4 * H, H)) * scale).astype(dtype)
    g = rng.standard_normal((T, N, 2 * H)).astype(dtype)
    return gi, h0, c0, w_hh, g


def _same(a, b, what):
    assert a.dtype == b.dtype and a.shape == b.shape, (what, a.dtype, b.dtype, a.shape, b.shape)
    assert np.array_equal(a, b, equal_nan=True), (what, np.nanmax(np.abs(a - b)))


def _counting(monkeypatch, name):
    """Count the calls of ``rnn.<name>`` (so a test knows the numpy loop ran)."""
    calls = []
    real = getattr(rnn, name)

    def spy(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(rnn, name, spy)
    return calls


SIZES = [(1, 1, 1), (5, 3, 4), (7, 2, 17), (28, 50, 32), (10, 10, 33)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("scale", [1.0, 40.0])  # 40: saturated gates, exp(-z) overflows
def test_the_numpy_loops_give_the_plain_loops_bits(monkeypatch, dtype, reverse, scale):
    fwd, bwd = _counting(monkeypatch, "_forward_np"), _counting(monkeypatch, "_vjp_np")
    for seed, (T, N, H) in enumerate(SIZES):
        gi, h0, c0, w_hh, g = _inputs(T, N, H, dtype, seed, scale)
        out = OP.forward(np, gi, h0, c0, w_hh, reverse=reverse)
        ref = _reference_forward(gi, h0, c0, w_hh, reverse)
        _same(out, ref, "output")
        shapes = [gi.shape, h0.shape, c0.shape, w_hh.shape]
        needs = (True,) * 4
        got = OP.vjp(tg.ops.RAW, g, (gi, h0, c0, w_hh), out, shapes, needs, reverse=reverse)
        want = _reference_vjp(g, gi, h0, c0, w_hh, out, reverse)
        rule = OP.vjp(_Other(), g, (gi, h0, c0, w_hh), out, shapes, needs, reverse=reverse)
        # an output the numpy forward did not make: the activations are computed again
        again = OP.vjp(tg.ops.RAW, g, (gi, h0, c0, w_hh), out.copy(), shapes, needs,
                       reverse=reverse)  # fmt: skip
        for name, a, b, c, e in zip(("gi", "h0", "c0", "w_hh"), got, want, rule, again):
            _same(a, b, name)
            _same(a, c, name + " (F code)")
            _same(a, e, name + " (activations computed again)")
    assert len(fwd) == len(SIZES) and len(bwd) == 2 * len(SIZES)  # the numpy loops ran


@pytest.mark.parametrize("reverse", [False, True])
def test_the_numpy_backward_with_a_broadcast_gradient_and_every_needs(monkeypatch, reverse):
    """A gradient with zero strides (``out.sum()``'s), and each subset of the four inputs:
    what is asked for has the plain bits, the rest is None."""
    bwd = _counting(monkeypatch, "_vjp_np")
    gi, h0, c0, w_hh, _ = _inputs(6, 3, 5, np.float32, 3)
    out = OP.forward(np, gi, h0, c0, w_hh, reverse=reverse)
    g = np.broadcast_to(np.float32(0.5), out.shape)
    want = _reference_vjp(g, gi, h0, c0, w_hh, out, reverse)
    shapes = [gi.shape, h0.shape, c0.shape, w_hh.shape]
    for needs in itertools.product((False, True), repeat=4):
        got = OP.vjp(tg.ops.RAW, g, (gi, h0, c0, w_hh), out, shapes, needs, reverse=reverse)
        for k, (a, b) in enumerate(zip(got, want)):
            if needs[k]:
                _same(a, b, f"input {k} with needs {needs}")
            else:
                assert a is None
    assert len(bwd) == 16


def test_the_kept_activations_go_with_the_output_and_runs_of_steps_join_up(monkeypatch):
    """The forward's activations live as long as its output; a backward cut into runs of
    one or a few steps (a small ``_RUN``) gives the same bits."""
    rnn._ACTS.clear()
    gi, h0, c0, w_hh, g = _inputs(9, 3, 5, np.float64, 8)
    shapes = [gi.shape, h0.shape, c0.shape, w_hh.shape]
    for reverse in (False, True):
        out = OP.forward(np, gi, h0, c0, w_hh, reverse=reverse)
        assert len(rnn._ACTS) == 1 and rnn._kept(out) is not None
        assert rnn._kept(out.copy()) is None
        want = _reference_vjp(g, gi, h0, c0, w_hh, out, reverse)
        for run in (1, 2 * 3 * 20, 4 * 3 * 20):  # runs of 1, 2 and 4 steps (9 = 4 + 4 + 1)
            monkeypatch.setattr(rnn, "_RUN", run)
            got = OP.vjp(tg.ops.RAW, g, (gi, h0, c0, w_hh), out, shapes, (True,) * 4,
                         reverse=reverse)  # fmt: skip
            for k, (a, b) in enumerate(zip(got, want)):
                _same(a, b, f"input {k}, runs of {run} elements")
        del out
        assert not rnn._ACTS


def test_mixed_and_other_dtypes_and_other_functionals_take_the_plain_code(monkeypatch):
    fwd, bwd = _counting(monkeypatch, "_forward_np"), _counting(monkeypatch, "_vjp_np")
    gi, h0, c0, w_hh, g = _inputs(4, 2, 3, np.float64, 5)
    mixed = (gi.astype(np.float32), h0, c0, w_hh)  # float32 gates, float64 state
    out = OP.forward(np, *mixed)
    _same(out, _reference_forward(*mixed, False), "mixed output")
    half = [a.astype(np.float16) for a in (gi, h0, c0, w_hh)]
    assert OP.forward(np, *half).dtype == np.float16
    out64 = OP.forward(np, gi, h0, c0, w_hh)
    shapes = [gi.shape, h0.shape, c0.shape, w_hh.shape]
    OP.vjp(_Other(), g, (gi, h0, c0, w_hh), out64, shapes, (True,) * 4)
    assert len(fwd) == 1 and not bwd  # only the float64 forward took a numpy loop


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_an_lstm_trains_to_the_same_bits_through_the_engine(monkeypatch, dtype):
    """nn.LSTM (2 layers, bidirectional) forward and backward through the eager engine, with
    the numpy loops and with them switched off: the loss and every gradient equal."""

    def run():
        tg.manual_seed(0)
        lstm = tg.nn.LSTM(3, 5, num_layers=2, bidirectional=True, dtype=dtype)
        x = tg.tensor(np.random.default_rng(1).standard_normal((6, 2, 3)), dtype=dtype,
                      requires_grad=True)  # fmt: skip
        out, (h, c) = lstm(x)
        loss = (out * out).sum() + (h * c).sum()
        loss.backward()
        return [loss.detach().numpy(), x.grad.numpy()] + [p.grad.numpy() for p in
                                                          lstm.parameters()]  # fmt: skip

    fwd, bwd = _counting(monkeypatch, "_forward_np"), _counting(monkeypatch, "_vjp_np")
    fast = run()
    assert len(fwd) == len(bwd) == 4
    monkeypatch.setattr(rnn, "_plain_numpy", lambda *arrays: False)
    for a, b in zip(fast, run()):
        _same(a, b, "nn.LSTM")
