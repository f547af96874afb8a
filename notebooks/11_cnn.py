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
# # Lesson 11 — Convolutional networks
#
# Lesson 6 trained an MLP on 8×8 digits: it sees an image as 64 unrelated numbers. A
# **convolutional network** (CNN) knows that pixels have neighbours. It slides small filters
# over the image, so the same few weights look for the same pattern everywhere. This lesson
# builds one from its parts, each an op of the library with one derivative rule, usable in both
# engines:
#
# 1. what a convolution computes, and the size of its output;
# 2. **im2col**: a convolution as one matrix product (how fast libraries do it), and its
#    backward, col2im;
# 3. pooling;
# 4. batch normalisation, in training and in evaluation;
# 5. a CNN's graph, drawn by module;
# 6. a small CNN trained on the digits.

# %%
import time

import matplotlib.pyplot as plt
import numpy as np

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F
from tinygrad_edu import nn, optim, viz
from tinygrad_edu.data import DataLoader, load_digits
from tinygrad_course.lessons import check_gradient, check_true, summary
from tinygrad_course.lessons import lesson11 as ex

# %% [markdown]
# ## 1. What a convolution computes
#
# The input is a batch in the **NCHW** layout: $N$ images, $C$ channels, height $H$, width
# $W$. A weight of shape $(O, C, k_h, k_w)$ holds $O$ filters; output channel $o$ at position
# $(p, q)$ is
#
# $$y_{n,o,p,q} = b_o + \sum_{c}\sum_{i}\sum_{j} w_{o,c,i,j}\; x_{n,\,c,\; p s + i d - \text{pad},\;
#   q s + j d - \text{pad}}$$
#
# with stride $s$, dilation $d$ (gaps inside the filter) and zero padding. (Strictly this is a
# *cross-correlation*: the filter is not flipped, unlike the convolution of signal processing.
# Every deep-learning library calls it convolution.) `F.conv2d` has PyTorch's signature:

# %%
x = tg.randn(2, 3, 8, 8)                  # 2 images, 3 channels, 8x8
w = tg.randn(4, 3, 3, 3, requires_grad=True)
for kwargs in ({}, {"padding": 1}, {"stride": 2}, {"dilation": 2}):
    print(f"conv2d(x, w, {kwargs}) -> shape {F.conv2d(x, w, **kwargs).shape}")

# %% [markdown]
# ### Exercise 11.1 — a convolution's output size
#
# Write `conv_output_size(n, kernel, stride=1, padding=0, dilation=1)`: how many positions a
# kernel of size `kernel` takes along an axis of length `n`. Reason it out: padding adds
# `padding` pixels on **both** sides; a dilated kernel spans $d(k-1)+1$ pixels; the window
# moves by `stride`, and a window that does not fit is dropped.

# %%
def conv_output_size(n, kernel, stride=1, padding=0, dilation=1):
    # BEGIN SOLUTION
    return (n + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1
    # END SOLUTION


# %%
ex.conv_output_size.check(conv_output_size)

# %% [markdown]
# A kernel bigger than the padded input leaves no position at all; the library says so, naming
# the op and both shapes:

# %%
size = ex.conv_output_size.use(conv_output_size)
print("a 5x5 kernel on a 3x3 image:", size(3, 5), "(no position fits)")
try:
    F.conv2d(tg.randn(1, 1, 3, 3), tg.randn(1, 1, 5, 5))
except Exception as error:
    print(f"{type(error).__name__}: {error}")

# %% [markdown]
# ## 2. im2col: a convolution is one matrix product
#
# Seven nested loops would be slow in Python. Fast libraries instead copy every *receptive
# field* — the $C \times k_h \times k_w$ block of input one output pixel reads — into one column
# of a matrix `cols`. Then the whole convolution is a single product:
#
# $$\underbrace{W}_{O \times C k_h k_w} \;@\; \underbrace{\mathrm{cols}}_{C k_h k_w \times N\,OH\,OW}
#   \;=\; \underbrace{Y}_{O \times N\,OH\,OW}$$
#
# `viz.draw_im2col()` draws it for one 4×4 image and a 3×3 kernel, from the library's own
# `im2col`: pixel 6 sits in all four windows, so it appears in all four columns. The backward
# pass of `cols` is **col2im**: each column is added back onto the pixels it came from, so a
# pixel covered by four windows receives the sum of four contributions (right panel).

# %%
fig = viz.draw_im2col()
fig.set_size_inches(8.8, 6.0)
plt.show()

# %% [markdown]
# The columns need no loop over pixels. For each of the $k_h k_w$ kernel offsets $(i, j)$,
# one slice of the input, `x[:, :, i:i+OH, j:j+OW]`, holds that offset's pixel for **every**
# window at once. The library keeps `cols` in the layout $(C, k_h, k_w, N, OH, OW)$, so that
# `cols.reshape(C*kh*kw, N*OH*OW)` has its rows in the order of `w.reshape(O, C*kh*kw)`.
#
# ### Exercise 11.2 — conv2d as im2col and one product
#
# Write `conv2d_im2col(x, w)` for numpy arrays `x` $(N, C, H, W)$ and `w` $(O, C, k_h, k_w)$,
# stride 1 and no padding: fill `cols[:, i, j]` from the slice for offset $(i, j)$ (mind the
# axis order: the slice is $(N, C, OH, OW)$, the target $(C, N, OH, OW)$), multiply, and bring
# the result to the shape $(N, O, OH, OW)$. The check compares with `F.conv2d` on shapes where
# nothing is square.

# %%
def conv2d_im2col(x, w):
    # BEGIN SOLUTION
    N, C, H, W = x.shape
    O, _, kh, kw = w.shape
    OH, OW = H - kh + 1, W - kw + 1
    cols = np.empty((C, kh, kw, N, OH, OW), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, i, j] = x[:, :, i:i + OH, j:j + OW].transpose(1, 0, 2, 3)
    y = w.reshape(O, C * kh * kw) @ cols.reshape(C * kh * kw, N * OH * OW)
    return y.reshape(O, N, OH, OW).transpose(1, 0, 2, 3)
    # END SOLUTION


# %%
ex.conv2d_im2col.check(conv2d_im2col)

# %% [markdown]
# For $Y = W\,\mathrm{cols}$ and the output gradient $G$, the matrix-product rule gives the two
# gradients, $\partial L/\partial W = G\,\mathrm{cols}^\top$ and
# $\partial L/\partial\,\mathrm{cols} = W^\top G$, the second folded back onto the pixels by
# col2im. The library's backward ops (`conv2d_weight_grad`, `conv2d_input_grad`) are ops like
# any other, with derivative rules of their own, so second derivatives work too. Checked
# against central differences:

# %%
xs = np.random.default_rng(0).normal(size=(1, 2, 5, 5))
ws = np.random.default_rng(1).normal(size=(3, 2, 3, 3))
check_gradient(lambda x, w: F.conv2d(x, w, padding=1), [xs, ws], name="conv2d (input and weight)")

# %% [markdown]
# ## 3. Pooling
#
# A **max pool** keeps the largest value of each window: it shrinks the image and makes the
# network a little indifferent to where exactly a pattern sits. Its gradient goes to the
# position of the maximum, and nowhere else; when a window holds two equal maxima (after a
# ReLU, windows full of zeros are common), PyTorch — and this library — pick the **first**.
# An **average pool** spreads the gradient evenly, $g/n$ to each of the $n$ pixels.

# %%
img = tg.tensor([[[[1.0, 3.0, 0.0, 0.0],
                   [3.0, 2.0, 0.0, 0.0],
                   [0.5, 0.1, 2.0, 2.0],
                   [0.2, 0.3, 2.0, 1.0]]]], requires_grad=True)
pooled = F.max_pool2d(img, 2)
pooled.sum().backward()
print("max_pool2d:\n", pooled.detach().numpy()[0, 0])
print("its gradient (one 1 per window, at the first maximum):\n", img.grad.numpy()[0, 0])
img.grad = None
F.avg_pool2d(img, 2).sum().backward()
print("avg_pool2d's gradient (1/4 everywhere):\n", img.grad.numpy()[0, 0])

# %% [markdown]
# ## 4. Batch normalisation
#
# Deep networks train faster when each layer's inputs keep a steady scale. **Batch norm**
# normalises each channel with the mean $\mu_B$ and the (biased) variance $\sigma_B^2$ of the
# current batch, then scales and shifts with learned $\gamma, \beta$:
# $\hat y = \gamma\,(x - \mu_B)/\sqrt{\sigma_B^2 + \epsilon} + \beta$.
#
# But at test time a prediction should not depend on the other images in its batch. So while
# training, the layer also keeps **running statistics** — moving averages of the batch mean
# and variance — and in `eval()` mode it normalises with those instead. `train()` and `eval()`
# switch every batch norm (and dropout) in a model.

# %%
bn = nn.BatchNorm2d(2)
batch = tg.randn(16, 2, 4, 4) * 3 + 5
bn.train()
out_train = bn(batch)
print("after one training batch: running mean", bn.running_mean.numpy().round(3),
      " running var", bn.running_var.numpy().round(3))
print("training output per channel: mean", out_train.detach().numpy().mean(axis=(0, 2, 3)).round(3),
      " std", out_train.detach().numpy().std(axis=(0, 2, 3)).round(3))
bn.eval()
one = bn(batch[:1])
print("eval output of one image uses the running statistics: mean",
      one.detach().numpy().mean(axis=(0, 2, 3)).round(2))

# %% [markdown]
# In training mode each channel comes out with mean 0 and standard deviation 1. In evaluation
# mode the image is normalised with the running statistics, which after a single batch have
# moved only a tenth of the way (the momentum, 0.1) from their start (mean 0, variance 1)
# towards the data's (mean 5, variance 9): hence outputs far from 0. Over many batches they
# settle on the data's statistics.
#
# ### Exercise 11.3 — batch norm's running statistics
#
# Write `update_running(running_mean, running_var, x, momentum=0.1)` for numpy arrays: the
# running statistics (shape $(C,)$) after one training batch `x` $(N, C, H, W)$, as PyTorch
# updates them:
#
# $$\hat\mu \leftarrow (1-m)\,\hat\mu + m\,\mu_B, \qquad
#   \hat\sigma^2 \leftarrow (1-m)\,\hat\sigma^2 + m\,\tfrac{n}{n-1}\,\sigma_B^2$$
#
# with $n = N H W$ values per channel. Note the $\frac{n}{n-1}$: the running variance uses the
# **unbiased** variance, while the batch itself is normalised with the biased one. Return the
# pair `(new_mean, new_var)`.

# %%
def update_running(running_mean, running_var, x, momentum=0.1):
    # BEGIN SOLUTION
    n = x.size // x.shape[1]
    mean = x.mean(axis=(0, 2, 3))
    var = x.var(axis=(0, 2, 3)) * n / (n - 1)
    return ((1 - momentum) * running_mean + momentum * mean,
            (1 - momentum) * running_var + momentum * var)
    # END SOLUTION


# %%
ex.update_running.check(update_running)

# %% [markdown]
# ## 5. A CNN's graph, drawn by module
#
# A CNN's backward graph has many nodes, but it is organised by layer.
# `viz.draw(loss, modules=model)` puts the backward ops each module recorded into one labelled
# box, and writes the forward shape under every op ($N \times C \times H \times W$). A small
# network, fully drawn:

# %%
tg.manual_seed(0)
tiny = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                     nn.Linear(64, 10))
tiny_loss = F.cross_entropy(tiny(tg.randn(2, 1, 8, 8)), tg.tensor([1, 2]))
viz.draw(tiny_loss, modules=tiny)

# %% [markdown]
# The convolution's node sends gradients to its weight and bias (`input 1`, `input 2`), but
# not to the image, which needs none. For a deeper network, `collapse=True` draws each
# top-level module as one box, and the graph reads like the architecture. Here is the CNN we
# train next: two blocks of convolution, batch norm, ReLU and max pool, then a linear layer.

# %%
Xtr, ytr = load_digits("train")
Xte, yte = load_digits("test")
Xtr, Xte = Xtr.reshape(-1, 1, 8, 8), Xte.reshape(-1, 1, 8, 8)   # images again: N x 1 x 8 x 8

tg.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),   # 8x8x8 -> 8x4x4
    nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),  # -> 16x2x2
    nn.Flatten(), nn.Linear(64, 10),
)
loss = F.cross_entropy(model(tg.tensor(Xtr[:64])), tg.tensor(ytr[:64]))
viz.draw(loss, modules=model, collapse=True)

# %% [markdown]
# With the shapes from your `conv_output_size` (a 3×3 convolution with padding 1 keeps the
# size; a 2×2 pool of stride 2 halves it):

# %%
side = 8
for layer in ("conv 3x3, pad 1", "pool 2", "conv 3x3, pad 1", "pool 2"):
    side = size(side, 3, padding=1) if layer.startswith("conv") else size(side, 2, stride=2)
    print(f"after {layer:<16} {side}x{side}")
print("Flatten: 16 channels x", side * side, "=", 16 * side * side, "inputs to the linear layer")

# %% [markdown]
# ## 6. Training it on the digits
#
# The training loop is lesson 6's, unchanged: Adam, mini-batches of 64, cross-entropy. Only
# the model differs — and `model.train()` / `model.eval()`, which switch batch norm between
# batch statistics and running statistics.

# %%
opt = optim.Adam(model.parameters(), lr=0.01)
loader = DataLoader(Xtr, ytr, batch_size=64, seed=0)
history = []
start = time.perf_counter()
for epoch in range(3):
    model.train()
    for xb, yb in loader:
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with tg.no_grad():
        accuracy = float((model(tg.tensor(Xte)).numpy().argmax(axis=1) == yte).mean())
    history.append(accuracy)
    print(f"epoch {epoch + 1}: last batch loss {loss.item():.3f}, test accuracy {accuracy:.1%}")
print(f"{time.perf_counter() - start:.1f} s for {sum(p.numel() for p in model.parameters())} "
      "parameters")
check_true("the CNN reaches 90% test accuracy in 3 epochs", history[-1] >= 0.9)

# %% [markdown]
# The demo (`tinygrad-edu demo`) trains a wider CNN of the same shape for longer, in both
# engines from the same weights, and reaches 98%. A few of this one's mistakes:

# %%
with tg.no_grad():
    predicted = model(tg.tensor(Xte)).numpy().argmax(axis=1)
wrong = np.flatnonzero(predicted != yte)[:8]
fig, axes = plt.subplots(1, max(len(wrong), 1), figsize=(8.8, 1.6))
for ax, i in zip(np.atleast_1d(axes), wrong):
    ax.imshow(Xte[i, 0], cmap="gray_r")
    ax.set_title(f"{yte[i]} → {predicted[i]}", fontsize=10, color="red")
for ax in np.atleast_1d(axes):
    ax.axis("off")
fig.suptitle("test images the CNN gets wrong (true → predicted)", fontsize=11)
plt.tight_layout()
plt.show()

# %%
summary(ex);
