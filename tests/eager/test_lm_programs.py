"""Character-level language models written as the well-known lectures write them (a bigram
model, a makemore MLP, nanoGPT's causal self-attention), run with ``import tinygrad_edu as
torch``: they must run unchanged and their loss must fall. Small and seeded: a few seconds."""

import math

import numpy as np
import pytest

import tinygrad_edu as torch
import tinygrad_edu.nn as nn
from tinygrad_edu.nn import functional as F

TEXT = "to be, or not to be, that is the question: whether tis nobler in the mind. " * 12


def _data():
    chars = sorted(set(TEXT))
    stoi = {c: i for i, c in enumerate(chars)}
    return chars, torch.tensor([stoi[c] for c in TEXT], dtype=torch.long)


def _batch(data, block_size, batch_size):
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i : i + block_size] for i in ix])
    y = torch.stack([data[i + 1 : i + block_size + 1] for i in ix])
    return x, y


class CausalSelfAttention(nn.Module):
    """nanoGPT's, on its non-flash path: a registered ``tril`` buffer, sliced and compared,
    fills the scores with -inf through ``masked_fill``."""

    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head, self.n_embd = n_head, n_embd
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                             .view(1, 1, block_size, block_size))  # fmt: skip

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class TinyGPT(nn.Module):
    def __init__(self, vocab_size, block_size, n_embd=16, n_head=2):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * n_embd, n_embd))  # fmt: skip
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.wte.weight = self.lm_head.weight  # weight tying
        for m in self.modules():
            if isinstance(m, nn.Linear | nn.Embedding):
                torch.nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        x = self.wte(idx) + self.wpe(torch.arange(0, t, dtype=torch.long))
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        logits = self.lm_head(x)
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, top_k=None):
        for _ in range(max_new_tokens):
            logits, _ = self(idx[:, -self.wpe.weight.shape[0] :])
            logits = logits[:, -1, :]
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
        return idx


def _train(model, data, block_size, steps, lr):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        x, y = _batch(data, block_size, 16)
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def test_bigram_model_learns_and_samples():
    torch.manual_seed(1337)
    chars, data = _data()

    class Bigram(nn.Module):
        def __init__(self, vocab_size):
            super().__init__()
            self.token_embedding_table = nn.Embedding(vocab_size, vocab_size)

        def forward(self, idx, targets=None):
            logits = self.token_embedding_table(idx)
            B, T, C = logits.shape
            return logits, F.cross_entropy(logits.view(B * T, C), targets.view(B * T))

    losses = _train(Bigram(len(chars)), data, 8, 120, 1e-2)
    assert np.mean(losses[-10:]) < losses[0] - 0.8, losses[::20]
    assert f"{torch.tensor(losses[-1]):.2f}" == f"{losses[-1]:.2f}"  # f"{loss:.4f}" works


def test_nanogpt_style_attention_learns_and_generates():
    torch.manual_seed(0)
    chars, data = _data()
    model = TinyGPT(len(chars), block_size=8)
    assert model.wte.weight is model.lm_head.weight
    losses = _train(model, data, 8, 60, 1e-2)
    assert np.mean(losses[-5:]) < losses[0] - 0.7, losses[::10]
    out = model.generate(torch.zeros((1, 1), dtype=torch.long), 12, top_k=3)
    assert out.shape == (1, 13) and out.dtype == np.int64


def test_the_causal_mask_blocks_the_future():
    """The output at position t must not depend on inputs after t (the masked_fill on a slice
    of the registered buffer works)."""
    torch.manual_seed(0)
    attn = CausalSelfAttention(8, 2, 6)
    x = torch.randn(1, 5, 8, requires_grad=True)
    attn(x)[0, 2].sum().backward()
    assert float(x.grad[0, 3:].abs().sum()) == 0.0
    assert float(x.grad[0, :3].abs().sum()) > 0.0


def test_contiguous_lays_out_a_transpose_row_major():
    x = torch.arange(24.0).view(2, 3, 4).transpose(1, 2)
    assert not x.is_contiguous()
    y = x.contiguous()
    assert y.is_contiguous() and y.view(2, 12).shape == (2, 12)
    np.testing.assert_array_equal(y.numpy(), x.numpy())


def test_format_of_tensors():
    assert f"{torch.tensor(2.5):.3f}" == "2.500" and f"{torch.tensor(3)}" == "3"
    with pytest.raises(TypeError):
        f"{torch.ones(2):.2f}"


def test_diagonal_and_unfold_are_views_as_in_pytorch():
    x = torch.zeros(3, 3)
    x.diagonal().add_(1.0)  # writes through to x
    np.testing.assert_array_equal(x.numpy(), np.eye(3))
    w = torch.arange(6.0)
    w.unfold(0, 2, 2).mul_(2.0)
    assert w.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    # as for every view: an in-place change through it is recorded on its base (CopySlices),
    # and a change made under no_grad bumps the version the saved tensor remembers
    a = torch.ones(2, 2, requires_grad=True)
    b = a * 1
    b.diagonal().mul_(3.0)
    b.sum().backward()
    assert a.grad.tolist() == [[3.0, 1.0], [1.0, 3.0]] and b.grad_fn.name() == "CopySlices"
    b = a * 1
    c = b * b
    with torch.no_grad():
        b.diagonal().mul_(3.0)
    with pytest.raises(RuntimeError, match="in-place"):
        c.sum().backward()


def test_makemore_mlp_with_batchnorm_learns_and_samples():
    """makemore's MLP with a hand-written batch norm: embedding by indexing, view, std(0,
    keepdim=True), running statistics under no_grad, cross_entropy, multinomial sampling."""
    torch.manual_seed(42)
    words = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper"] * 4
    chars = sorted(set("".join(words)))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    block_size, X, Y = 3, [], []
    for w in words:
        context = [0] * block_size
        for ch in w + ".":
            X.append(context)
            Y.append(stoi[ch])
            context = context[1:] + [stoi[ch]]
    Xtr, Ytr = torch.tensor(X), torch.tensor(Y)
    vocab_size, n_embd, n_hidden = len(stoi), 8, 32
    C = torch.randn((vocab_size, n_embd))
    W1 = torch.randn((n_embd * block_size, n_hidden)) * (5 / 3) / (n_embd * block_size) ** 0.5
    W2 = torch.randn((n_hidden, vocab_size)) * 0.01
    b2 = torch.randn(vocab_size) * 0
    bngain, bnbias = torch.ones((1, n_hidden)), torch.zeros((1, n_hidden))
    bnmean_running = torch.zeros((1, n_hidden))
    parameters = [C, W1, W2, b2, bngain, bnbias]
    for p in parameters:
        p.requires_grad = True
    losses = []
    for _ in range(150):
        ix = torch.randint(0, Xtr.shape[0], (32,))
        emb = C[Xtr[ix]]
        hpreact = emb.view(emb.shape[0], -1) @ W1
        bnmeani, bnstdi = hpreact.mean(0, keepdim=True), hpreact.std(0, keepdim=True)
        hpreact = bngain * (hpreact - bnmeani) / bnstdi + bnbias
        with torch.no_grad():
            bnmean_running = 0.999 * bnmean_running + 0.001 * bnmeani
        loss = F.cross_entropy(torch.tanh(hpreact) @ W2 + b2, Ytr[ix])
        for p in parameters:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in parameters:
                p += -0.1 * p.grad
        losses.append(loss.log10().item())
    assert np.mean(losses[-10:]) < losses[0] - 0.2
    context = [0] * block_size
    emb = C[torch.tensor([context])]
    probs = F.softmax(torch.tanh(emb.view(1, -1) @ W1) @ W2 + b2, dim=1)
    ix = torch.multinomial(probs, num_samples=1, replacement=True).item()
    assert 0 <= ix < vocab_size and not bnmean_running.requires_grad
