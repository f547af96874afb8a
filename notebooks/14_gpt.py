# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 14 — Attention and a tiny GPT, drawn
#
# A character-level language model reads text one character at a time and learns to predict
# the next one. This lesson builds the small GPT that the best-known lectures build, written
# the way PyTorch users write it (`import tinygrad_edu as torch` runs it unchanged), trains it
# for about a minute on the bundled text, and looks inside:
#
# 1. the data: characters as integers, batches of contexts and their next characters;
# 2. **self-attention**: scores, the **causal mask** (`tril` and `masked_fill`), the softmax,
#    and its gradient;
# 3. the model: heads, multi-head attention, the feed-forward block, residual connections,
#    LayerNorm;
# 4. training with `AdamW`, and text sampled before and after;
# 5. the attention weights as a picture, and one transformer block's backward graph, grouped
#    by module;
# 6. the same code on PyTorch, side by side.

# %%
import time

import numpy as np

import tinygrad_edu as torch  # the lectures' code, unchanged
from tinygrad_edu import viz
from tinygrad_edu.data import load_shakespeare
from tinygrad_course.lessons import check, check_true, summary
from tinygrad_course.lessons import lesson14 as ex

nn, F = torch.nn, torch.nn.functional
device = "cuda" if torch.cuda.is_available() else "cpu"  # the lecture's line: a GPU if any

try:
    import torch as real_torch
except ImportError:
    real_torch = None


def have_torch(what: str) -> bool:
    """True when PyTorch is installed; otherwise say what needs it and how to install it."""
    if real_torch is None:
        print(f'{what} needs PyTorch (CPU build): pip install torch --index-url https://download.pytorch.org/whl/cpu')
    return real_torch is not None


# %% [markdown]
# ## 1. The data
#
# Three of Shakespeare's plays, dialogue only (public domain, bundled with the library). The
# vocabulary is the set of characters; `encode` and `decode` map between text and integers.

# %%
text = load_shakespeare()
chars = sorted(set(text))
vocab_size = len(chars)
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for i, ch in enumerate(chars)}


def encode(s):
    return [stoi[c] for c in s]


def decode(ids):
    return "".join(itos[i] for i in ids)


data = torch.tensor(encode(text), dtype=torch.long)
n = int(0.9 * len(data))
train_data, val_data = data[:n], data[n:]
print(f"{len(text):,} characters, vocabulary of {vocab_size}:", repr("".join(chars)))
print(text[:120])

# %% [markdown]
# A training example is a context of `block_size` characters and, at every position, the
# character that follows: one context of length 8 holds 8 examples.

# %%
torch.manual_seed(1337)
block_size, batch_size = 32, 16


def get_batch(split):
    d = train_data if split == "train" else val_data
    ix = torch.randint(len(d) - block_size, (batch_size,))
    x = torch.stack([d[i:i + block_size] for i in ix])
    y = torch.stack([d[i + 1:i + block_size + 1] for i in ix])
    return x.to(device), y.to(device)


xb, yb = get_batch("train")
print("context:", repr(decode(xb[0, :8].tolist())), "-> next:", repr(decode(yb[0, :8].tolist())))

# %% [markdown]
# ## 2. Self-attention
#
# Every position emits a **query** ("what am I looking for?") and a **key** ("what do I
# contain?"); the score of query $i$ for key $j$ is their dot product, scaled by
# $1/\sqrt{d}$ so the softmax does not saturate. A language model must not look at the
# future: position $i$ may attend to positions $0..i$ only. The scores of the future are set
# to $-\infty$ before the softmax, so their weights are exactly 0:
#
# $$\mathrm{weights} = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt d} + M\right), \qquad
# M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i\end{cases}, \qquad
# \mathrm{out} = \mathrm{weights}\, V$$
#
# `torch.tril(torch.ones(T, T))` is 1 on and below the diagonal: where a query may look.
#
# ### Exercise 14.1 — the causal mask
#
# Given `scores` of shape `(B, T, T)` (queries along axis 1, keys along axis 2), return them
# with every future position set to `float('-inf')`. Use `tril` and `masked_fill`.

# %%
def masked_scores(scores, T):
    # BEGIN SOLUTION
    tril = torch.tril(torch.ones(T, T))
    return scores.masked_fill(tril == 0, float("-inf"))
    # END SOLUTION


# %%
ex.masked_scores.check(masked_scores)

# %% [markdown]
# After the mask the softmax of each row spreads the weight over the past only:

# %%
mask = ex.masked_scores.use(masked_scores)
T = 5
w = F.softmax(mask(torch.zeros(1, T, T), T), dim=-1)
print(w[0].numpy().round(3))

# %% [markdown]
# ### Exercise 14.2 — the attention softmax's gradient
#
# Backward through attention passes through this softmax. With $s = \mathrm{softmax}(z)$ along
# a row and $g = \partial L/\partial s$, write $\partial L/\partial z$. Each $s_j$ depends on
# every $z_k$: $\partial s_j/\partial z_k = s_j(\delta_{jk} - s_k)$. Your function gets `s` and
# `g` (same shape, rows along the last axis) and returns the gradient, of the same shape.

# %%
def softmax_backward(s, g):
    # BEGIN SOLUTION
    return s * (g - (g * s).sum(dim=-1, keepdim=True))
    # END SOLUTION


# %%
ex.softmax_backward.check(softmax_backward)

# %% [markdown]
# A masked score has weight exactly 0, and its gradient is 0 too: $s_j = 0$ multiplies it
# away. Only row 2 (query 2) gets a gradient, and only in keys 0, 1, 2: the future never
# learns from the present.

# %%
z = torch.randn(1, T, T, requires_grad=True)
row = F.softmax(mask(z, T), dim=-1)[0, 2]  # query 2's weights over the 5 keys
(row * torch.arange(T)).sum().backward()           # any loss of them
print(z.grad[0].numpy().round(3))
check_true("no gradient reaches a masked (future) score",
           bool((z.grad[0].numpy()[np.triu_indices(T, 1)] == 0).all()))

# %% [markdown]
# ## 3. The model
#
# One **head** projects the input to keys, queries and values and attends; **multi-head
# attention** runs several heads side by side and joins them; the **feed-forward** block
# thinks about each position on its own; a **block** wraps both in residual connections
# (`x + ...`) with LayerNorm before each, the GPT-2 arrangement. The model adds token and
# position embeddings and ends with a linear layer over the vocabulary. The code is the
# lecture's, written for `torch`, inside a function that is handed the library: this one
# now, PyTorch in section 6.

# %%
n_embd, n_head, n_layer, dropout = 64, 4, 2, 0.0


def gpt(torch):
    """The lecture's GPT, for the library ``torch`` (this one, or PyTorch: section 6)."""
    nn, F = torch.nn, torch.nn.functional

    class Head(nn.Module):
        """One head of self-attention."""

        def __init__(self, head_size):
            super().__init__()
            self.key = nn.Linear(n_embd, head_size, bias=False)
            self.query = nn.Linear(n_embd, head_size, bias=False)
            self.value = nn.Linear(n_embd, head_size, bias=False)
            self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            B, T, C = x.shape
            k, q = self.key(x), self.query(x)
            wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
            wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
            wei = F.softmax(wei, dim=-1)
            self.last_weights = wei  # kept for the picture below
            wei = self.dropout(wei)
            return wei @ self.value(x)


    class MultiHeadAttention(nn.Module):
        def __init__(self, num_heads, head_size):
            super().__init__()
            self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
            self.proj = nn.Linear(head_size * num_heads, n_embd)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            out = torch.cat([h(x) for h in self.heads], dim=-1)
            return self.dropout(self.proj(out))


    class FeedForward(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.ReLU(),
                                     nn.Linear(4 * n_embd, n_embd), nn.Dropout(dropout))

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
            self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
            self.position_embedding_table = nn.Embedding(block_size, n_embd)
            self.blocks = nn.Sequential(*[Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab_size)

        def forward(self, idx, targets=None):
            B, T = idx.shape
            tok_emb = self.token_embedding_table(idx)
            pos_emb = self.position_embedding_table(torch.arange(T, device=idx.device))
            x = self.ln_f(self.blocks(tok_emb + pos_emb))
            logits = self.lm_head(x)
            if targets is None:
                return logits, None
            B, T, C = logits.shape
            return logits, F.cross_entropy(logits.view(B * T, C), targets.view(B * T))

        @torch.no_grad()
        def generate(self, idx, max_new_tokens):
            for _ in range(max_new_tokens):
                logits, _ = self(idx[:, -block_size:])
                probs = F.softmax(logits[:, -1, :], dim=-1)
                idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
            return idx

    return GPTLanguageModel


torch.manual_seed(1337)
model = gpt(torch)().to(device)
print(sum(p.numel() for p in model.parameters()), "parameters on", device)

# %% [markdown]
# ## 4. Training
#
# Before any training the model's guess is uniform: the loss is about
# $\ln(\text{vocab size}) = \ln 61 \approx 4.11$, and its text is noise.

# %%
context = torch.zeros((1, 1), dtype=torch.long, device=device)
print(decode(model.generate(context, max_new_tokens=200)[0].tolist()))


@torch.no_grad()
def estimate_loss(iters=10):
    model.eval()
    out = {}
    for split in ("train", "val"):
        out[split] = float(np.mean([model(*get_batch(split))[1].item() for _ in range(iters)]))
    model.train()
    return out


before = estimate_loss()
print(before)

# %%
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
start = time.perf_counter()
steps = 400
for it in range(steps + 1):
    if it % 100 == 0:
        losses = estimate_loss()
        print(f"step {it:4d}: train {losses['train']:.3f}, val {losses['val']:.3f} "
              f"({time.perf_counter() - start:.0f} s)")
    xb, yb = get_batch("train")
    logits, loss = model(xb, yb)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
after = estimate_loss()

# %%
check_true("the validation loss fell by more than 1.2 nats", before["val"] - after["val"] > 1.2)
print(decode(model.generate(context, max_new_tokens=300)[0].tolist()))

# %% [markdown]
# Still not Shakespeare, but words, line breaks, speakers' names with a colon: the model
# learnt the shape of the text in a few hundred steps.
#
# ## 5. Looking inside
#
# Each head kept its last attention weights. For a line of text, row $i$ (query position $i$,
# the character whose next one is predicted) shows how it spread its attention over the key
# positions $0..i$ it may see; each row sums to 1, and the upper triangle is exactly 0, the
# causal mask at work:

# %%
import matplotlib.pyplot as plt

line = "First Citizen:\nWe are accounted poor"
idx = torch.tensor([encode(line[:block_size])], device=device)
model.eval()
with torch.no_grad():
    model(idx)
model.train()
heads = model.blocks[0].sa.heads
maps = [ex.attention_map(head.last_weights[0]) for head in heads]
fig, axes = plt.subplots(1, len(heads), figsize=(8.8, 3.0), layout="constrained")
for k, (ax, attention) in enumerate(zip(axes, maps)):  # one colour scale, 0 to 1, for all
    shown = ax.imshow(attention, cmap="Blues", vmin=0, vmax=1)
    ax.set_title(f"layer 0, head {k}", fontsize=9)
    ax.tick_params(labelsize=7)
    ax.set_xlabel("key position (attended to)", fontsize=8)
axes[0].set_ylabel("query position", fontsize=8)
fig.colorbar(shown, ax=axes, shrink=0.8, label="attention weight")
plt.show()
weights = ex.attention_map(heads[0].last_weights[0])
check_true("every query's weights sum to 1 and the future gets none",
           np.allclose(weights.sum(-1), 1) and (np.triu(weights, 1) == 0).all())

# %% [markdown]
# And one transformer block's backward graph, its backward ops grouped by the module that
# recorded them (lesson 11's grouping): the attention heads, the projections, the
# feed-forward net, the two LayerNorms, and the residual `+` that joins them.

# %%
block = model.blocks[1]
x = torch.randn(1, 4, n_embd, device=device)
viz.draw(block(x).sum(), modules=block, collapse=True)

# %% [markdown]
# ## 6. The same code on PyTorch
#
# Nothing above is specific to this library: the classes are PyTorch's code. With PyTorch
# installed, `gpt(real_torch)` builds the same model from the same code in PyTorch; give it
# our trained weights and compare the loss on one batch.

# %%
if have_torch("Running the model on PyTorch"):
    theirs = gpt(real_torch)()
    theirs.load_state_dict({k: real_torch.tensor(v) for k, v in model.state_dict().items()})
    xb, yb = get_batch("val")
    model.eval()
    theirs.eval()
    with torch.no_grad():
        ours_loss = model(xb, yb)[1].item()
    with real_torch.no_grad():
        theirs_loss = theirs(real_torch.tensor(xb.numpy()), real_torch.tensor(yb.numpy()))[1].item()
    model.train()
    print(f"tinygrad_edu: {ours_loss:.6f}   PyTorch: {theirs_loss:.6f}")
    check("the same weights give PyTorch's loss", ours_loss, theirs_loss, rtol=1e-5)

# %%
summary(ex);
