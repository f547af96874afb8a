"""RNN/LSTM/GRU (and their cells), MultiheadAttention and the transformer encoder against
PyTorch: the same parameter names and shapes, a PyTorch state dict loads unchanged, and the
outputs and every gradient agree in float64; central differences for the cells; errors in
PyTorch's classes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
from tinygrad_edu.nn.attention import generate_square_subsequent_mask

RNG = np.random.default_rng(7)


def _pair(torch_cls, ours_cls, *args, **kw):
    """The same module in both libraries, ours loaded from PyTorch's state dict (float64)."""
    torch.manual_seed(0)
    theirs = torch_cls(*args, **kw).double()
    ours = ours_cls(*args, dtype="float64", **kw)
    names = [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_parameters()] == names
    shapes = [tuple(p.shape) for p in theirs.parameters()]
    assert [tuple(p.shape) for p in ours.parameters()] == shapes
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return theirs, ours


def _leaves(*arrays):
    return ([torch.tensor(a, requires_grad=True) for a in arrays],
            [tg.tensor(a, requires_grad=True) for a in arrays])  # fmt: skip


def _loss(L, outs):
    """A loss that weighs every output differently, so no gradient hides behind a sum."""
    total = 0
    for k, o in enumerate(outs):
        if o is None:
            continue
        w = L.tensor(np.cos(np.arange(o.numel()) + k).reshape(tuple(o.shape)))
        total = total + (o * w).sum() + (o * o).sum() * 0.1
    return total


def _flat(out):
    if isinstance(out, tuple):
        return [x for o in out for x in _flat(o)]
    return [out]


def _agree(theirs_out, ours_out, theirs_in, ours_in, theirs_mod, ours_mod, tol=1e-10):
    t, o = _flat(theirs_out), _flat(ours_out)
    assert len(t) == len(o)
    for a, b in zip(t, o):
        if a is None:
            assert b is None
            continue
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=tol, atol=tol)
    _loss(torch, t).backward()
    _loss(tg, o).backward()
    for a, b in zip(theirs_in, ours_in):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=tol, atol=tol)
    for (name, a), b in zip(theirs_mod.named_parameters(), ours_mod.parameters()):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=tol, atol=tol,
                                   err_msg=name)  # fmt: skip


RNN_CASES = [
    ("RNN", {}), ("RNN", {"nonlinearity": "relu", "num_layers": 2}), ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}), ("GRU", {}),
    ("GRU", {"num_layers": 3, "bidirectional": True, "bias": False}),
    ("LSTM", {"bias": False, "batch_first": True}),
]  # fmt: skip


@pytest.mark.parametrize("kind,kw", RNN_CASES)
@pytest.mark.parametrize("with_state", [False, True])
def test_recurrent_layers_match_pytorch(kind, kw, with_state):
    theirs, ours = _pair(getattr(torch.nn, kind), getattr(tg.nn, kind), 3, 4, **kw)
    shape = (2, 5, 3) if kw.get("batch_first") else (5, 2, 3)
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    arrays = [RNG.standard_normal(shape)]
    if with_state:
        arrays += [RNG.standard_normal((layers, 2, 4)) for _ in range(2 if kind == "LSTM" else 1)]
    t_in, o_in = _leaves(*arrays)
    if with_state:
        t_out = theirs(t_in[0], tuple(t_in[1:]) if kind == "LSTM" else t_in[1])
        o_out = ours(o_in[0], tuple(o_in[1:]) if kind == "LSTM" else o_in[1])
    else:
        t_out, o_out = theirs(t_in[0]), ours(o_in[0])
    _agree(t_out, o_out, t_in, o_in, theirs, ours)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_an_unbatched_sequence_matches_pytorch(kind):
    theirs, ours = _pair(getattr(torch.nn, kind), getattr(tg.nn, kind), 3, 4, num_layers=2)
    t_in, o_in = _leaves(RNG.standard_normal((6, 3)))
    _agree(theirs(t_in[0]), ours(o_in[0]), t_in, o_in, theirs, ours)


@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("batched", [True, False])
def test_cells_match_pytorch(kind, batched):
    theirs, ours = _pair(getattr(torch.nn, kind), getattr(tg.nn, kind), 3, 4)
    n = (2,) if batched else ()
    arrays = [RNG.standard_normal((*n, 3))] + [RNG.standard_normal((*n, 4))
                                               for _ in range(2 if kind == "LSTMCell" else 1)]
    t_in, o_in = _leaves(*arrays)
    if kind == "LSTMCell":
        t_out, o_out = theirs(t_in[0], tuple(t_in[1:])), ours(o_in[0], tuple(o_in[1:]))
    else:
        t_out, o_out = theirs(*t_in), ours(*o_in)
    _agree(t_out, o_out, t_in, o_in, theirs, ours)


@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell"])
def test_cells_gradients_against_central_differences(kind):
    tg.manual_seed(3)
    cell = getattr(tg.nn, kind)(2, 3, dtype="float64")
    x0 = RNG.standard_normal((2, 2))

    def f(x):
        out = cell(x)
        return (out[0] if isinstance(out, tuple) else out).sin().sum()

    x = tg.tensor(x0, requires_grad=True)
    f(x).backward()
    eps, numeric = 1e-6, np.zeros_like(x0)
    for i in np.ndindex(x0.shape):
        d = np.zeros_like(x0)
        d[i] = eps
        numeric[i] = (f(tg.tensor(x0 + d)).item() - f(tg.tensor(x0 - d)).item()) / (2 * eps)
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-6, atol=1e-9)


def test_a_pytorch_lstm_language_model_loads_and_agrees():
    """A model as a course writes it (embedding, LSTM, linear head), trained in PyTorch for a
    few steps, then loaded here from its state dict: the same logits and loss."""

    def build(L):
        class CharLSTM(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = L.nn.Embedding(11, 6)
                self.rnn = L.nn.LSTM(6, 8, num_layers=2, batch_first=True)
                self.head = L.nn.Linear(8, 11)

            def forward(self, idx):
                out, _ = self.rnn(self.emb(idx))
                return self.head(out)

        return CharLSTM()

    torch.manual_seed(0)
    theirs = build(torch)  # float32 in both, as a user has it
    idx = RNG.integers(0, 11, (4, 7))
    opt = torch.optim.SGD(theirs.parameters(), lr=0.5)
    for _ in range(3):
        logits = theirs(torch.tensor(idx[:, :-1]))
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 11),
                                                 torch.tensor(idx[:, 1:]).reshape(-1))  # fmt: skip
        opt.zero_grad()
        loss.backward()
        opt.step()
    ours = build(tg)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    logits = ours(tg.tensor(idx[:, :-1]))
    loss = tg.nn.functional.cross_entropy(logits.reshape(-1, 11), tg.tensor(idx[:, 1:]).reshape(-1))
    t_logits = theirs(torch.tensor(idx[:, :-1]))
    np.testing.assert_allclose(logits.detach().numpy(), t_logits.detach().numpy(), rtol=1e-5,
                               atol=1e-6)  # fmt: skip
    t_loss = torch.nn.functional.cross_entropy(t_logits.reshape(-1, 11),
                                               torch.tensor(idx[:, 1:]).reshape(-1))  # fmt: skip
    assert loss.item() == pytest.approx(t_loss.item(), rel=1e-6)


def test_dropout_between_layers_only_in_training():
    tg.manual_seed(0)
    gru = tg.nn.GRU(3, 4, num_layers=2, dropout=0.5)
    x = tg.randn(5, 2, 3)
    gru.eval()
    a, b = gru(x)[0].detach().numpy(), gru(x)[0].detach().numpy()
    np.testing.assert_array_equal(a, b)
    gru.train()
    c = gru(x)[0].detach().numpy()
    assert not np.allclose(a, c), "dropout between the layers did not act in training"
    one = tg.nn.GRU(3, 4, num_layers=1, dropout=0.5)  # no layer above: nothing to drop
    one.train()
    np.testing.assert_array_equal(one(x)[0].detach().numpy(), one.eval()(x)[0].detach().numpy())


@pytest.mark.parametrize(
    "make,call,error",
    [
        (lambda L: L.nn.LSTM(3, 4), lambda L, m: m(L.zeros(5, 2, 7)), RuntimeError),
        (lambda L: L.nn.GRU(3, 4), lambda L, m: m(L.zeros(5, 2, 3), L.zeros(2, 2, 4)),
         RuntimeError),
        (lambda L: L.nn.RNN(3, 4), lambda L, m: m(L.zeros(2, 5, 2, 3)), ValueError),
        (lambda L: L.nn.RNN(3, 4, nonlinearity="sigmoid"), None, ValueError),
        (lambda L: L.nn.GRU(3, 4, dropout=1.5), None, ValueError),
        (lambda L: L.nn.MultiheadAttention(10, 3), None, AssertionError),
        (lambda L: L.nn.MultiheadAttention(8, 2), lambda L, m: m(*[L.zeros(3, 2, 6)] * 3),
         AssertionError),
        (lambda L: L.nn.MultiheadAttention(8, 2),
         lambda L, m: m(*[L.zeros(3, 2, 8)] * 3, attn_mask=L.zeros(4, 4)), RuntimeError),
        (lambda L: L.nn.TransformerEncoderLayer(8, 2, activation="tanh"), None, RuntimeError),
    ],
)  # fmt: skip
def test_bad_input_raises_pytorchs_error_class(make, call, error):
    for L in (torch, tg):
        with pytest.raises(error):
            m = make(L)
            if call is not None:
                call(L, m)


def test_errors_name_the_layer_and_the_shapes():
    wrong = r"LSTM: input.size\(-1\) must be equal to input_size. Expected 3, got 7 \(input shape"
    with pytest.raises(RuntimeError, match=wrong):
        tg.nn.LSTM(3, 4)(tg.zeros(5, 2, 7))
    with pytest.raises(RuntimeError, match=r"GRU: Expected hidden size \(1, 2, 4\), got \(2, 2"):
        tg.nn.GRU(3, 4)(tg.zeros(5, 2, 3), tg.zeros(2, 2, 4))


ATTENTION_CASES = [
    ({}, {}), ({"batch_first": True}, {}), ({}, {"average_attn_weights": False}),
    ({"kdim": 3, "vdim": 6}, {"masks": True}), ({"bias": False}, {"need_weights": False}),
]  # fmt: skip


@pytest.mark.parametrize("kw,call", ATTENTION_CASES)
def test_multihead_attention_matches_pytorch(kw, call):
    theirs, ours = _pair(torch.nn.MultiheadAttention, tg.nn.MultiheadAttention, 8, 2, **kw)
    L, S, N = 4, 6, 3
    call = dict(call)
    masks = call.pop("masks", False)
    if "kdim" in kw:
        arrays = [RNG.standard_normal((L, N, 8)), RNG.standard_normal((S, N, 3)),
                  RNG.standard_normal((S, N, 6))]  # fmt: skip
        t_in, o_in = _leaves(*arrays)
        am, kpm = RNG.random((L, S)) > 0.6, RNG.random((N, S)) > 0.6
        am[:, 0] = kpm[:, 0] = False
        t_out = theirs(*t_in, attn_mask=torch.tensor(am), key_padding_mask=torch.tensor(kpm))
        o_out = ours(*o_in, attn_mask=tg.tensor(am), key_padding_mask=tg.tensor(kpm))
        assert masks
    else:
        x = RNG.standard_normal((N, L, 8) if kw.get("batch_first") else (L, N, 8))
        t_in, o_in = _leaves(x)
        t_out, o_out = theirs(t_in[0], t_in[0], t_in[0], **call), ours(*o_in * 3, **call)
    _agree(t_out, o_out, t_in, o_in, theirs, ours)


@pytest.mark.parametrize("kw", [{}, {"norm_first": True, "batch_first": True,
                                     "activation": "gelu"}])  # fmt: skip
def test_transformer_encoder_layer_matches_pytorch(kw):
    theirs, ours = _pair(torch.nn.TransformerEncoderLayer, tg.nn.TransformerEncoderLayer, 8, 2,
                         16, dropout=0.0, **kw)  # fmt: skip
    t_in, o_in = _leaves(RNG.standard_normal((3, 5, 8) if kw else (5, 3, 8)))
    t_mask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    o_mask = generate_square_subsequent_mask(5, dtype="float64")
    np.testing.assert_array_equal(o_mask.numpy(), t_mask.numpy())
    _agree(theirs(t_in[0], src_mask=t_mask), ours(o_in[0], src_mask=o_mask), t_in, o_in, theirs,
           ours)  # fmt: skip


def test_transformer_encoder_stacks_independent_copies():
    layer = tg.nn.TransformerEncoderLayer(8, 2, 16)
    enc = tg.nn.TransformerEncoder(layer, 2, norm=tg.nn.LayerNorm(8))
    t_layer = torch.nn.TransformerEncoderLayer(8, 2, 16)
    t_enc = torch.nn.TransformerEncoder(t_layer, 2, norm=torch.nn.LayerNorm(8),
                                        enable_nested_tensor=False)  # fmt: skip
    assert [n for n, _ in enc.named_parameters()] == [n for n, _ in t_enc.named_parameters()]
    w0, w1 = enc.layers[0].linear1.weight, enc.layers[1].linear1.weight
    assert w0 is not w1 and w0 is not layer.linear1.weight
    with tg.no_grad():
        w0.mul_(0.0)
    assert np.abs(w1.detach().numpy()).sum() > 0, "the copies share their weights"


def node_names(out) -> list[str]:
    """The names of every backward node reachable from ``out``'s ``grad_fn``."""
    names, seen, todo = [], set(), [out.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(node.name())
        todo.extend(n for n, _ in node.next_functions)
    return names


def test_a_cell_unrolled_by_hand_shows_every_gate():
    """LSTMCell is written with elementary ops: under anomaly mode (which records each op),
    the graph of 4 steps shows each gate; otherwise each step's gates are one node."""
    cell = tg.nn.LSTMCell(2, 3)
    for anomaly, gates, cells in ((True, 3 * 4, 0), (False, 0, 4)):  # i, f, o gates, 4 steps
        h = c = None
        with tg.autograd.set_detect_anomaly(anomaly):
            for x in tg.randn(4, 1, 2):
                h, c = cell(x, None if h is None else (h, c))
        names = node_names(h)
        assert sum("Sigmoid" in n for n in names) == gates
        assert names.count("LstmCellBackward0") == cells
        assert sum(n == "AccumulateGrad" for n in names) == 4  # the four parameters


def test_a_whole_lstm_layer_is_one_node_per_layer_and_direction():
    lstm = tg.nn.LSTM(2, 3, num_layers=2, bidirectional=True)
    out, _ = lstm(tg.randn(4, 1, 2))
    names = node_names(out)
    assert names.count("LstmLayerBackward0") == 4
    assert not any("Sigmoid" in n for n in names)


def test_double_backward_through_the_lstm_layer_matches_pytorch():
    theirs, ours = _pair(torch.nn.LSTM, tg.nn.LSTM, 2, 3)
    t_in, o_in = _leaves(RNG.standard_normal((4, 2, 2)))
    (tg_, ) = torch.autograd.grad((theirs(t_in[0])[0] ** 2).sum(), t_in, create_graph=True)
    (og, ) = tg.grad((ours(o_in[0])[0] ** 2).sum(), o_in, create_graph=True)
    np.testing.assert_allclose(og.detach().numpy(), tg_.detach().numpy(), rtol=1e-10, atol=1e-12)
    (tg_ * tg_).sum().backward()
    (og * og).sum().backward()
    np.testing.assert_allclose(o_in[0].grad.numpy(), t_in[0].grad.numpy(), rtol=1e-8, atol=1e-10)
    for (name, a), b in zip(theirs.named_parameters(), ours.parameters()):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-8, atol=1e-10,
                                   err_msg=name)  # fmt: skip


@pytest.mark.parametrize("kw", [{}, {"num_layers": 2}, {"batch_first": True},
                                {"bidirectional": True}, {"proj_size": 0}])
def test_an_lstms_output_has_pytorchs_layout(kw):
    """The output is row-major as PyTorch's (transposed under batch_first, as PyTorch's is),
    so ``out.view(T, -1)`` works as it does there; the final states are row-major too."""
    x = np.random.default_rng(0).standard_normal((5, 2, 4)).astype(np.float32)
    ours, theirs = tg.nn.LSTM(4, 3, **kw), torch.nn.LSTM(4, 3, **kw)
    out, (h, c) = ours(tg.tensor(x, requires_grad=True))
    ref, (rh, rc) = theirs(torch.tensor(x, requires_grad=True))
    for a, b in ((out, ref), (h, rh), (c, rc)):
        assert a.is_contiguous() == b.is_contiguous() and tuple(a.stride()) == b.stride()
    if not kw.get("batch_first"):
        assert tuple(out.view(5, -1).shape) == tuple(ref.view(5, -1).shape)
