"""The eager engine's fused nodes give the elementary ops' numbers bit for bit: an LSTM cell
step (``LstmCellBackward0``, eager/cell_node.py) and ``smooth_l1_loss`` with the mean
(``SmoothL1LossBackward0``, eager/loss_node.py). Each is compared with the elementary ops it
replaces (forced by switching the fused path off), with PyTorch and with central differences in
float64; the nodes' names, outputs and edges; the errors of a freed graph and of a state
changed in place; and the fallbacks (anomaly mode records every gate)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
from tests.nn.test_rnn_attention import node_names
from tinygrad_edu.nn import functional_losses, rnn

RNG = np.random.default_rng(11)


# -- the LSTM cell ------------------------------------------------------------------------------
def _two_cells(dtype, seed, use, fused=True):
    """Two stacked LSTMCells over 6 steps; a loss that reads h, c or both of the last step
    (``use``); the loss and every parameter's gradient (and the input's)."""
    saved = rnn.lstm_cell
    if not fused:
        rnn.lstm_cell = lambda z, c: None
    try:
        tg.manual_seed(seed)
        rng = np.random.default_rng(seed)
        cell, cell2 = tg.nn.LSTMCell(5, 7, dtype=dtype), tg.nn.LSTMCell(7, 7, dtype=dtype)
        x = tg.tensor(rng.standard_normal((6, 3, 5)) * 2, dtype=dtype, requires_grad=True)
        h = c = h2 = c2 = None
        outs = []
        for t in range(6):
            h, c = cell(x[t], None if h is None else (h, c))
            h2, c2 = cell2(h, None if h2 is None else (h2, c2))
            outs.append(h2)
        loss = tg.stack(outs).pow(2).sum()
        if "c" in use:
            loss = loss + (c2 * c2).sum()
        if "h" in use:
            loss = loss + h.sum() * c.sum()
        loss.backward()
        params = [*cell.parameters(), *cell2.parameters(), x]
        return [loss.detach().numpy()] + [p.grad.numpy() for p in params]
    finally:
        rnn.lstm_cell = saved


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("use", ["", "c", "h", "hc"])
def test_lstm_cell_node_gives_the_elementary_ops_bits(dtype, use):
    for seed in range(3):
        fused, plain = _two_cells(dtype, seed, use), _two_cells(dtype, seed, use, fused=False)
        for a, b in zip(fused, plain):
            assert a.dtype == b.dtype and a.shape == b.shape
            assert np.array_equal(a, b), np.abs(a - b).max()


def test_lstm_cell_node_names_outputs_and_edges():
    cell = tg.nn.LSTMCell(3, 4)
    x = tg.randn(2, 3)
    c0 = tg.randn(2, 4, requires_grad=True)
    h, c = cell(x, (tg.zeros(2, 4), c0))
    node = h.grad_fn
    assert node is c.grad_fn and node.name() == "LstmCellBackward0"
    assert (h.output_nr, c.output_nr) == (0, 1) and h.requires_grad and c.requires_grad
    (z_node, _), (c_node, _) = node.next_functions
    assert z_node.name() == "AddBackward0"  # gi + linear(h, w_hh, b_hh): the gates
    assert c_node.name() == "AccumulateGrad" and c_node.variable is c0
    assert [tuple(m.shape) for m in node._input_metadata] == [(2, 4), (2, 4)]
    # a step of 4 cells: one node per step, no gate of its own
    h = c = None
    for xt in tg.randn(4, 1, 3):
        h, c = cell(xt, None if h is None else (h, c))
    names = node_names(h)
    assert names.count("LstmCellBackward0") == 4
    assert not any("Sigmoid" in n or "Tanh" in n for n in names)


def test_lstm_cell_under_anomaly_mode_records_every_gate():
    cell = tg.nn.LSTMCell(2, 3)
    with tg.autograd.detect_anomaly():
        h, c = cell(tg.randn(1, 2))
    names = node_names(h)
    assert sum("Sigmoid" in n for n in names) == 3 and "LstmCellBackward0" not in names


def test_lstm_cell_without_grad_gives_plain_tensors_of_the_same_values():
    cell = tg.nn.LSTMCell(3, 4, dtype="float64")
    x, state = tg.randn(2, 3, dtype=tg.float64), (tg.randn(2, 4, dtype=tg.float64),) * 2
    with tg.no_grad():
        h, c = cell(x, state)
    assert h.grad_fn is None and not h.requires_grad and c.grad_fn is None
    saved = rnn.lstm_cell
    rnn.lstm_cell = lambda z, c: None
    try:
        h2, c2 = cell(x, state)
    finally:
        rnn.lstm_cell = saved
    assert np.array_equal(h.numpy(), h2.detach().numpy())
    assert np.array_equal(c.numpy(), c2.detach().numpy())


def test_lstm_cell_node_errors_after_free_and_after_an_inplace_change():
    cell = tg.nn.LSTMCell(3, 4)
    c0 = tg.randn(2, 4, requires_grad=True)
    h, c = cell(tg.randn(2, 3), (tg.zeros(2, 4), c0 * 1))
    h.sum().backward()
    with pytest.raises(RuntimeError, match="LstmCellBackward0.*retain_graph=True"):
        h.sum().backward()
    state = c0 * 1
    h, c = cell(tg.randn(2, 3), (tg.zeros(2, 4), state))
    with tg.no_grad():
        state.mul_(2)
    with pytest.raises(RuntimeError, match="LstmCellBackward0.*modified by an in-place"):
        h.sum().backward()


def test_lstm_cell_double_backward_matches_pytorch():
    torch.manual_seed(0)
    theirs = torch.nn.LSTMCell(3, 4).double()
    ours = tg.nn.LSTMCell(3, 4, dtype="float64")
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    arrays = [RNG.standard_normal((2, 3)), RNG.standard_normal((2, 4)),
              RNG.standard_normal((2, 4))]  # fmt: skip
    got = []
    for lib, cell in ((torch, theirs), (tg, ours)):
        x, h0, c0 = (lib.tensor(a, requires_grad=True) for a in arrays)
        h, c = cell(x, (h0, c0))
        loss = (h * h).sum() + (c * c.sin()).sum()
        grads = lib.autograd.grad(loss, [x, c0], create_graph=True)
        (grads[0] ** 2).sum().backward(inputs=[x, h0, c0])
        got.append([g.detach().numpy() for g in grads] + [x.grad.numpy(), h0.grad.numpy(),
                                                          c0.grad.numpy()])  # fmt: skip
    for a, b in zip(*got):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


def test_lstm_cell_gradients_against_central_differences_through_the_state():
    tg.manual_seed(5)
    cell = tg.nn.LSTMCell(2, 3, dtype="float64")
    x0 = RNG.standard_normal((2, 2))
    c_init = RNG.standard_normal((2, 3))

    def f(x, c):
        h1, c1 = cell(x, (x[:, :1] * tg.ones(1, 3, dtype=tg.float64), c))
        h2, c2 = cell(h1[:, :2], (h1, c1))
        return (h2.sin() + c2 * c2).sum()

    x, c = tg.tensor(x0, requires_grad=True), tg.tensor(c_init, requires_grad=True)
    # central differences in float64 against the backward through both steps' fused nodes
    assert tg.autograd.gradcheck(f, (x, c), eps=1e-6, atol=1e-9, rtol=1e-6)


# -- smooth_l1_loss -----------------------------------------------------------------------------
def _smooth_l1(dtype, seed, beta, target_grad, fused=True):
    saved = functional_losses.smooth_l1_mean
    if not fused:
        functional_losses.smooth_l1_mean = lambda *a: None
    try:
        rng = np.random.default_rng(seed)
        w = tg.tensor(rng.standard_normal((4, 1)), dtype=dtype, requires_grad=True)
        x = tg.tensor(rng.standard_normal((30, 4)) * 2, dtype=dtype)
        y = tg.tensor(rng.standard_normal((30, 1)) * 3, dtype=dtype, requires_grad=target_grad)
        loss = tg.nn.functional.smooth_l1_loss(x @ w, y, beta=beta)
        (loss * 1.3).backward()  # (a seed and a mean that are no powers of two: every rounding)
        return [loss.detach().numpy(), w.grad.numpy()] + ([y.grad.numpy()] if target_grad else [])
    finally:
        functional_losses.smooth_l1_mean = saved


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("beta", [1.0, 0.5, 3])
@pytest.mark.parametrize("target_grad", [False, True])
def test_smooth_l1_node_gives_the_elementary_ops_bits(dtype, beta, target_grad):
    for seed in range(4):
        fused = _smooth_l1(dtype, seed, beta, target_grad)
        plain = _smooth_l1(dtype, seed, beta, target_grad, fused=False)
        for a, b in zip(fused, plain):
            assert a.dtype == b.dtype and a.shape == b.shape
            assert np.array_equal(a, b), np.abs(a - b).max()


def test_smooth_l1_node_is_named_as_pytorch_and_matches_its_gradients():
    a, b = RNG.standard_normal((5, 3)), RNG.standard_normal((5, 3))
    a[0, 0] = b[0, 0] + 0.25  # both branches of the loss are taken
    got = []
    for lib in (torch, tg):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        loss = lib.nn.functional.smooth_l1_loss(x * 1, y, beta=0.7)
        got.append(loss.grad_fn.name())
        loss.backward()
        got += [loss.detach().numpy(), x.grad.numpy(), y.grad.numpy()]
    assert got[0] == got[4] == "SmoothL1LossBackward0"
    for u, v in zip(got[1:4], got[5:8]):
        np.testing.assert_allclose(v, u, rtol=1e-12, atol=1e-14)


def test_smooth_l1_double_backward_matches_pytorch():
    a, b = RNG.standard_normal((6,)), RNG.standard_normal((6,))
    got = []
    for lib in (torch, tg):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        loss = lib.nn.functional.smooth_l1_loss(x.sin(), y)
        (gx,) = lib.autograd.grad(loss, [x], create_graph=True)
        (gx * gx).sum().backward()
        got.append([gx.detach().numpy(), x.grad.numpy()])
    for u, v in zip(*got):
        np.testing.assert_allclose(v, u, rtol=1e-10, atol=1e-12)


def test_smooth_l1_gradient_against_central_differences():
    a, b = RNG.standard_normal((4, 2)), RNG.standard_normal((4, 2))

    def f(x):
        return tg.nn.functional.smooth_l1_loss(x, tg.tensor(b), beta=0.8)

    x = tg.tensor(a, requires_grad=True)
    assert tg.autograd.gradcheck(f, (x,), eps=1e-6, atol=1e-9, rtol=1e-6)


def test_smooth_l1_other_reductions_and_modes_keep_the_elementary_ops():
    x, y = tg.randn(3, 2, requires_grad=True), tg.randn(3, 2)
    assert tg.nn.functional.smooth_l1_loss(x, y, reduction="sum").grad_fn.name() == "SumBackward0"
    assert tg.nn.functional.smooth_l1_loss(x, y, beta=0.0).grad_fn.name() == "MeanBackward0"
    with tg.autograd.detect_anomaly():
        assert tg.nn.functional.smooth_l1_loss(x, y).grad_fn.name() == "MeanBackward0"
    with tg.no_grad():
        loss = tg.nn.functional.smooth_l1_loss(x, y)
    assert loss.grad_fn is None and loss.shape == ()


def test_smooth_l1_node_errors_after_free_and_after_an_inplace_change():
    x, y = tg.randn(3, requires_grad=True), tg.randn(3)
    loss = tg.nn.functional.smooth_l1_loss(x, y)
    loss.backward()
    with pytest.raises(RuntimeError, match="SmoothL1LossBackward0.*retain_graph=True"):
        loss.backward()
    loss = tg.nn.functional.smooth_l1_loss(x, y)
    y.add_(1)
    with pytest.raises(RuntimeError, match="SmoothL1LossBackward0.*modified by an in-place"):
        loss.backward()
