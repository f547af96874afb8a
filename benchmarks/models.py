"""Training steps of the models that courses teach with, written once as PyTorch users write
them and run unchanged on ``tinygrad_edu`` and PyTorch (``L`` is either library):

* ``gpt_step``: a character-level GPT as the best-known lecture writes it (token and position
  embeddings, ``Head`` modules with a ``tril`` buffer and ``masked_fill``, multi-head
  attention from a ``ModuleList`` of heads, LayerNorm, a ReLU MLP, ``AdamW``): 2 layers,
  4 heads, 64 channels, context 32, batch 16, vocabulary 65.
* ``lstm_step``: a character-level LSTM (``Embedding`` 65x32, ``nn.LSTM(32, 64)``, a linear
  head), context 32, batch 16, ``Adam``.

One step is ``zero_grad``, the forward, ``F.cross_entropy`` on class indices, ``backward`` and
the optimizer's ``step``. Both libraries start from the same weights (PyTorch's, loaded with
``load_state_dict``) and the same batch, in float32; PyTorch is the reference.
"""

from __future__ import annotations

import numpy as np

import tinygrad_edu as tg

from .cases import Case, _sync, _torch_device, torch

__all__ = ["CASES", "REPS", "gpt", "char_lstm", "model_impls", "adamw"]

VOCAB = 65


def gpt(L, vocab=VOCAB, n_embd=64, n_head=4, n_layer=2, block_size=32, dropout=0.0):
    """The lecture's GPT, written against library ``L`` (``torch`` or ``tinygrad_edu``)."""
    nn, F = L.nn, L.nn.functional

    class Head(nn.Module):
        def __init__(self, head_size):
            super().__init__()
            self.key = nn.Linear(n_embd, head_size, bias=False)
            self.query = nn.Linear(n_embd, head_size, bias=False)
            self.value = nn.Linear(n_embd, head_size, bias=False)
            self.register_buffer("tril", L.tril(L.ones(block_size, block_size)))
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            B, T, C = x.shape
            k, q = self.key(x), self.query(x)
            wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
            wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
            wei = self.dropout(F.softmax(wei, dim=-1))
            return wei @ self.value(x)

    class MultiHeadAttention(nn.Module):
        def __init__(self, num_heads, head_size):
            super().__init__()
            self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
            self.proj = nn.Linear(head_size * num_heads, n_embd)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            out = L.cat([h(x) for h in self.heads], dim=-1)
            return self.dropout(self.proj(out))

    class FeedForward(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(
                nn.Linear(n_embd, 4 * n_embd), nn.ReLU(),
                nn.Linear(4 * n_embd, n_embd), nn.Dropout(dropout),
            )  # fmt: skip

        def forward(self, x):
            return self.net(x)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.sa = MultiHeadAttention(n_head, n_embd // n_head)
            self.ffwd = FeedForward()
            self.ln1, self.ln2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)

        def forward(self, x):
            x = x + self.sa(self.ln1(x))
            return x + self.ffwd(self.ln2(x))

    class GPTLanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.token_embedding_table = nn.Embedding(vocab, n_embd)
            self.position_embedding_table = nn.Embedding(block_size, n_embd)
            self.blocks = nn.Sequential(*[Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab)

        def forward(self, idx, targets=None):
            B, T = idx.shape
            tok_emb = self.token_embedding_table(idx)
            pos_emb = self.position_embedding_table(L.arange(T, device=idx.device))
            x = self.ln_f(self.blocks(tok_emb + pos_emb))
            logits = self.lm_head(x)
            if targets is None:
                return logits, None
            B, T, C = logits.shape
            loss = F.cross_entropy(logits.view(B * T, C), targets.view(B * T))
            return logits, loss

    return GPTLanguageModel()


def char_lstm(L, vocab=VOCAB, n_embd=32, hidden=64):
    """A character-level LSTM language model, written against library ``L``."""
    nn, F = L.nn, L.nn.functional

    class CharLSTM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, n_embd)
            self.lstm = nn.LSTM(n_embd, hidden, batch_first=True)
            self.head = nn.Linear(hidden, vocab)

        def forward(self, idx, targets=None):
            out, _ = self.lstm(self.embed(idx))
            logits = self.head(out)
            loss = None
            if targets is not None:
                loss = F.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1))
            return logits, loss

    return CharLSTM()


def _step_impl(L, model, optimizer, xb, yb, compiled=False, device="cpu", backend="inductor"):
    """One training step of ``model`` on the batch; ``compiled``: the whole step (forward,
    backward, ``opt.step()``, ``zero_grad``) through ``tg.compile`` (``step.compiled``)."""
    x, y = L.tensor(xb, device=device), L.tensor(yb, device=device)

    def train_step(xs, ys):
        optimizer.zero_grad(set_to_none=True)
        _, loss = model(xs, ys)
        loss.backward()
        optimizer.step()
        return loss

    fn = tg.compile(train_step, backend=backend) if compiled else train_step

    def step():
        return fn(x, y), next(iter(model.parameters()))

    step.compiled = fn
    return step


def model_impls(
    build, optimizer, size: str = "full", compiled: bool = False, device: str = "cpu",
    numpy_code: bool = False,
) -> dict:
    """The step of model ``build`` with ``optimizer`` on one batch, as ``eager``, ``torch``
    and (``compiled``) ``compiled`` implementations (``tg.compile``'s default backend), all
    from PyTorch's initial weights, on ``device`` (``"cuda"``: CuPy against PyTorch CUDA);
    ``numpy_code``: also ``numpy code``, compiled with ``backend="numpy"`` (no fusion)."""
    batch, block = (16, 32) if size == "full" else (2, 8)
    rng = np.random.default_rng(0)
    data = rng.integers(0, VOCAB, (batch, block + 1))
    xb, yb = data[:, :-1], data[:, 1:]
    torch.manual_seed(0)
    theirs = build(torch)
    state = {k: v.detach().numpy().copy() for k, v in theirs.state_dict().items()}

    def ours():
        model = build(tg)
        model.load_state_dict(state)
        model.to(device)  # before the optimizer, as PyTorch's scripts do
        return model, optimizer(tg, model)

    impls = {"eager": _step_impl(tg, *ours(), xb, yb, device=device)}
    if compiled:
        impls["compiled"] = _step_impl(tg, *ours(), xb, yb, compiled=True, device=device)
    if numpy_code:  # compiled with backend="numpy": one numpy call per op, no kernels
        impls["numpy code"] = _step_impl(tg, *ours(), xb, yb, compiled=True, device=device,
                                         backend="numpy")  # fmt: skip
    tdev = _torch_device(device)
    theirs.to(tdev)
    impls["torch"] = _step_impl(torch, theirs, optimizer(torch, theirs), xb, yb, device=tdev)
    return impls, f"batch {batch}, context {block}, float32"


def _model_case(name, build, optimizer, title):
    def make(size: str = "full", device: str = "cpu") -> Case:
        impls, shape = model_impls(build, optimizer, size, device=device)
        return Case(name, f"{title}, {shape}", "torch", impls,
                    targets={"eager": (1.5, None)}, sync=_sync(device))  # fmt: skip

    return make


def adamw(L, model):
    return L.optim.AdamW(model.parameters(), lr=1e-3)


def _adam(L, model):
    return L.optim.Adam(model.parameters(), lr=1e-2)


CASES = {
    "gpt_step": _model_case("gpt_step", gpt, adamw,
                            "GPT training step (2 layers, 4 heads, 64 channels), AdamW"),
    "lstm_step": _model_case("lstm_step", char_lstm, _adam,
                             "char-level LSTM training step (embedding 32, LSTM 64), Adam"),
}  # fmt: skip
REPS = {"gpt_step": 15, "lstm_step": 15}
