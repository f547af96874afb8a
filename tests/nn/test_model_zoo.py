"""A character-level model zoo, written the way PyTorch users write it (``torch`` is the library
under test), runs unchanged on tinygrad_edu and on PyTorch: bag-of-words, an MLP over a
context, RNN, GRU, LSTM and a transformer encoder with a causal mask. For each, the same
weights give the same first loss in both libraries, and thirty steps of training make the
loss fall."""

from __future__ import annotations

import numpy as np
import pytest
import torch as real_torch

import tinygrad_edu as tg
from tinygrad_edu.data import load_shakespeare

TEXT = load_shakespeare()[:20_000]
CHARS = sorted(set(TEXT))
V, T, B = len(CHARS), 16, 8
DATA = np.array([CHARS.index(c) for c in TEXT])


def zoo(torch, kind):
    nn, F = torch.nn, torch.nn.functional

    class BagOfWords(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, 32)
            self.head = nn.Linear(32, V)

        def forward(self, idx):
            x = self.emb(idx)  # (B, T, C): the mean of the context so far, at each position
            weights = torch.tril(torch.ones(T, T))
            weights = weights / weights.sum(1, keepdim=True)
            return self.head(weights @ x)

    class ContextMLP(nn.Module):
        def __init__(self, k=3):
            super().__init__()
            self.k = k
            self.emb = nn.Embedding(V, 10)
            self.net = nn.Sequential(nn.Linear(10 * k, 64), nn.Tanh(), nn.Linear(64, V))

        def forward(self, idx):
            padded = F.pad(idx, (self.k - 1, 0))  # the k characters before each position
            ctx = torch.stack([padded[:, i:i + T] for i in range(self.k)], dim=-1)
            return self.net(self.emb(ctx).view(idx.shape[0], T, -1))

    class Recurrent(nn.Module):
        def __init__(self, cell):
            super().__init__()
            self.emb = nn.Embedding(V, 24)
            self.rnn = getattr(nn, cell)(24, 48, num_layers=2, batch_first=True)
            self.head = nn.Linear(48, V)

        def forward(self, idx):
            out, _ = self.rnn(self.emb(idx))
            return self.head(out)

    class Transformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(V, 32)
            self.pos = nn.Embedding(T, 32)
            layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True,
                                               norm_first=True)  # fmt: skip
            self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(32, V)
            mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
            self.register_buffer("mask", mask)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
            return self.head(self.encoder(x, mask=self.mask))

    return {"bow": BagOfWords, "mlp": ContextMLP, "rnn": lambda: Recurrent("RNN"),
            "gru": lambda: Recurrent("GRU"), "lstm": lambda: Recurrent("LSTM"),
            "transformer": Transformer}[kind]()  # fmt: skip


def _batches(n, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        ix = rng.integers(0, len(DATA) - T - 1, B)
        yield (np.stack([DATA[i:i + T] for i in ix]), np.stack([DATA[i + 1:i + T + 1] for i in ix]))


def _loss(torch, model, x, y):
    logits = model(torch.tensor(x))
    return torch.nn.functional.cross_entropy(logits.reshape(-1, V), torch.tensor(y).reshape(-1))


@pytest.mark.parametrize("kind", ["bow", "mlp", "rnn", "gru", "lstm", "transformer"])
def test_a_model_zoo_runs_unchanged_and_learns(kind):
    real_torch.manual_seed(0)
    theirs = zoo(real_torch, kind)
    ours = zoo(tg, kind)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x, y = next(_batches(1, seed=99))
    np.testing.assert_allclose(_loss(tg, ours, x, y).item(), _loss(real_torch, theirs, x, y).item(),
                               rtol=1e-5)  # fmt: skip
    opt = tg.optim.Adam(ours.parameters(), lr=1e-2)
    losses = []
    for xb, yb in _batches(30):
        loss = _loss(tg, ours, xb, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert np.mean(losses[-5:]) < np.mean(losses[:5]) - 0.3, losses
