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
# # Lesson 6 — Training a network, in both engines
#
# Gradients are a means; training is the end. In this lesson we train a small multi-layer
# perceptron (MLP) to read handwritten digits, twice:
#
# 1. **eager**: `tg.nn` layers, a loss, `loss.backward()`, and an optimizer from `tg.optim`
#    that updates the parameters in Python after each backward;
# 2. **symbolic**: the *whole training step* — forward, gradients and parameter updates — is
#    one graph; a `TrainingExecutor` runs it once per mini-batch
#    (`tinygrad_edu.symbolic.static.training`, modelled on Paddle Fluid's Program/Scope/Executor).
#
# Both start from the same weights and see the same batches, so they learn the same network.
# Each trains in well under a second here.

# %%
import time

import matplotlib.pyplot as plt
import numpy as np

import tinygrad_edu as tg
from tinygrad_edu import nn, optim, viz
from tinygrad_edu.data import DataLoader, load_digits
from tinygrad_course.lessons import check, check_true, summary
from tinygrad_course.lessons import lesson06 as ex
from tinygrad_edu.symbolic import Variable, matmul, relu, softmax_cross_entropy
from tinygrad_edu.symbolic import training as st

# %% [markdown]
# ## 1. The data
#
# `load_digits` returns the bundled 8×8 handwritten digits (1,797 images, the UCI test set that
# scikit-learn ships), flattened to 64 pixel values in $[0, 1]$, with labels 0–9, split into a
# training part and a test part (stratified: each digit in the same proportion).

# %%
Xtr, ytr = load_digits("train")
Xte, yte = load_digits("test")
print("train:", Xtr.shape, Xtr.dtype, " test:", Xte.shape, " labels:", np.bincount(ytr))

fig, axes = plt.subplots(2, 10, figsize=(8.8, 2.6))
for ax, i in zip(axes.flat, range(20)):
    ax.imshow(Xtr[i].reshape(8, 8), cmap="gray_r")
    ax.set_title(str(ytr[i]), fontsize=10)
    ax.axis("off")
fig.suptitle("training images and their labels", fontsize=11)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 2. The model and the loss
#
# A two-layer MLP maps an image $x \in \mathbb{R}^{64}$ to 10 scores (*logits*):
#
# $$h = \mathrm{relu}(x W_1^\top + b_1), \qquad z = h W_2^\top + b_2 .$$
#
# The loss for a batch of $n$ images is the mean **cross-entropy** between
# $\mathrm{softmax}(z)$ and the true labels $y$:
#
# $$L = -\frac{1}{n}\sum_{k=1}^{n} \log \frac{e^{z_{k,y_k}}}{\sum_j e^{z_{k,j}}},
# \qquad \frac{\partial L}{\partial z_k} = \frac{1}{n}\big(\mathrm{softmax}(z_k) -
# \mathrm{onehot}(y_k)\big).$$
#
# We use **Adam** with learning rate $0.01$, mini-batches of 32, and 12 epochs (passes over the
# training set). `tg.manual_seed` fixes the initial weights; we keep a copy of them so that the
# symbolic engine can start from the very same point.

# %%
HIDDEN, EPOCHS, BATCH, LR = 64, 12, 32, 0.01

tg.manual_seed(1)
model = nn.Sequential(nn.Linear(64, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, 10))
initial = [p.detach().numpy().copy() for p in model.parameters()]
print(model)
print("parameters:", sum(p.numel() for p in model.parameters()))


# %% [markdown]
# ## 3. Training, eager
#
# The eager loop has five lines that every PyTorch user knows by heart:
# `zero_grad` (gradients accumulate, so clear them), forward, loss, `backward`, `step`.
# `DataLoader` reshuffles every epoch (reproducibly, from its seed).

# %%
def accuracy(logits, labels):
    return float((np.asarray(logits).argmax(axis=1) == labels).mean())


opt = optim.Adam(model.parameters(), lr=LR)
loader = DataLoader(Xtr, ytr, batch_size=BATCH, seed=0)
x_test = tg.tensor(Xte)
eager = {"loss": [], "acc": []}

start = time.perf_counter()
for epoch in range(EPOCHS):
    for xb, yb in loader:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        eager["loss"].append(loss.item())
    with tg.no_grad():
        eager["acc"].append(accuracy(model(x_test).numpy(), yte))
eager_seconds = time.perf_counter() - start

print(f"eager: {EPOCHS} epochs, {len(eager['loss'])} steps in {eager_seconds:.2f} s; "
      f"test accuracy {eager['acc'][-1]:.3f}")
assert eager["acc"][-1] >= 0.95, "the eager MLP should reach 95% test accuracy"

# %% [markdown]
# ## 4. Training, symbolic: the step is a graph
#
# In a static graph there is no Python code between `backward` and `step` to update the
# weights: the update must be part of the graph. `tinygrad_edu.symbolic.static.training` provides the
# three pieces a static-graph framework needs:
#
# * a **`Scope`** holds the values that live across runs — the parameters and the optimizer's
#   state (Adam's moments $m$, $v$ and the powers $\beta_1^t$, $\beta_2^t$). `scope.parameter`
#   makes a `Variable` standing for a value and stores that value (Fluid's *startup program*);
# * an optimizer's **`minimize(loss, params)`** appends the gradient nodes
#   ($\partial L/\partial W_1$, ... from `gradients`) and **update nodes** that compute each
#   parameter's new value ($W_1'$); it returns `Update(target, value)` pairs;
# * a **`TrainingExecutor`** feeds the scope's values to their Variables, runs the graph, and
#   writes each update's value back into the scope. **One `run` is one training step.**
#
# The labels go in one-hot, because `softmax_cross_entropy` takes a probability table.

# %%
scope = st.Scope()
W1, b1, W2, b2 = (scope.parameter(name, value)
                  for name, value in zip(["W1", "b1", "W2", "b2"], initial))
x, y_onehot = Variable("x"), Variable("y")
logits = matmul(relu(matmul(x, W1, trans_B=True) + b1), W2, trans_B=True) + b2
sym_loss = softmax_cross_entropy(logits, y_onehot)

updates = st.Adam(lr=LR).minimize(sym_loss, [W1, b1, W2, b2])
train_step = st.TrainingExecutor([sym_loss], updates)
predict = st.TrainingExecutor([logits], scope=scope)  # reads the same scope, updates nothing

print("updates:", [f"{u.target.name} <- {u.value.name}" for u in updates][:5], "...")
print("nodes in one training step:", len(train_step.executor.order))
print("scope holds:", sorted(scope.variables))

# %%
onehot = np.eye(10, dtype=np.float32)
loader = DataLoader(Xtr, ytr, batch_size=BATCH, seed=0, as_tensors=False)  # raw arrays to feed
symbolic = {"loss": [], "acc": []}

start = time.perf_counter()
for epoch in range(EPOCHS):
    for xb, yb in loader:
        (step_loss,) = train_step.run({x: xb, y_onehot: onehot[yb]})
        symbolic["loss"].append(float(step_loss))
    (test_logits,) = predict.run({x: Xte})
    symbolic["acc"].append(accuracy(test_logits, yte))
symbolic_seconds = time.perf_counter() - start

print(f"symbolic: {EPOCHS} epochs, {len(symbolic['loss'])} steps in {symbolic_seconds:.2f} s; "
      f"test accuracy {symbolic['acc'][-1]:.3f}")
assert symbolic["acc"][-1] >= 0.95, "the symbolic MLP should reach 95% test accuracy"

# %% [markdown]
# Same start, same batches, same formulas: the two engines should have learned the same
# weights, up to float32 rounding.

# %%
for p, name in zip(model.parameters(), ["W1", "b1", "W2", "b2"]):
    print(f"{name}: max |eager - symbolic| = {np.abs(p.detach().numpy() - scope[name]).max():.2e}")
check("losses of the two engines, step by step", symbolic["loss"], eager["loss"],
      atol=5e-3, rtol=5e-3)

# %% [markdown]
# ## 5. Curves
#
# The loss per step is noisy (each batch is different); its trend and the test accuracy per
# epoch tell how training went. The two engines' curves lie on top of each other.

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8.8, 3.3))
ax1.plot(eager["loss"], color="tab:blue", lw=1.2, label="eager")
ax1.plot(symbolic["loss"], color="tab:orange", lw=1, ls="--", label="symbolic")
ax1.set_yscale("log")
ax1.set_xlabel("step (mini-batch)")
ax1.set_ylabel("cross-entropy loss")
ax1.set_title("training loss")
ax1.legend()
epochs = np.arange(1, EPOCHS + 1)
ax2.plot(epochs, eager["acc"], "o-", color="tab:blue", label="eager")
ax2.plot(epochs, symbolic["acc"], "x--", color="tab:orange", label="symbolic")
ax2.axhline(0.95, color="grey", lw=0.8, ls=":")
ax2.set_xlabel("epoch")
ax2.set_ylabel("test accuracy")
ax2.set_title("test accuracy after each epoch")
ax2.legend(loc="lower right")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 6. What the network says
#
# Some test images with the model's prediction (red where it is wrong), and the mistakes it
# makes most often:

# %%
with tg.no_grad():
    probs = model(x_test).softmax().numpy()
pred = probs.argmax(axis=1)
wrong = np.flatnonzero(pred != yte)
show = np.concatenate([np.arange(16 - min(4, len(wrong))), wrong[:4]])

fig, axes = plt.subplots(2, 8, figsize=(8.8, 4.0), layout="constrained")
for ax, i in zip(axes.flat, show):
    ax.imshow(Xte[i].reshape(8, 8), cmap="gray_r")
    ok = pred[i] == yte[i]
    ax.set_title(f"{pred[i]} ({probs[i].max():.0%})" + ("" if ok else f"\ntrue {yte[i]}"),
                 fontsize=9, color="black" if ok else "red")
    ax.axis("off")
fig.suptitle("prediction (confidence) on test images; the last ones are mistakes", fontsize=11)
plt.show()

confusion = np.zeros((10, 10), dtype=int)
np.add.at(confusion, (yte, pred), 1)
pairs = sorted(((confusion[t, p], t, p) for t in range(10) for p in range(10) if t != p),
               reverse=True)[:3]
print(f"{len(wrong)} of {len(yte)} test images wrong; most common mistakes:",
      ", ".join(f"{t} read as {p} ({n}x)" for n, t, p in pairs if n))

# %% [markdown]
# ## 7. The training step, drawn
#
# A whole MLP step with Adam has about 160 nodes, too many to read. Here is the same idea for a
# one-layer softmax classifier (4 inputs, 3 classes) trained with plain SGD. One
# `TrainingExecutor.run` evaluates **every** node of this picture: the forward (blue), the
# gradient nodes that `minimize` appended (orange, dashed), and at the bottom the update nodes
# $W' = W - 0.1\,\partial L/\partial W$ and $b'$, whose values are written back into the scope
# as the next step's $W$ and $b$.

# %%
small = st.Scope()
rng = np.random.default_rng(0)
W = small.parameter("W", rng.normal(0, 0.5, (3, 4)).astype(np.float32))
b = small.parameter("b", np.zeros(3, np.float32))
xs, ys = Variable("x", shape=(5, 4)), Variable("y", shape=(5, 3))
z = matmul(xs, W, trans_B=True) + b
z.name = "logits"
small_loss = softmax_cross_entropy(z, ys)
small_loss.name = "loss"
small_updates = st.SGD(lr=0.1).minimize(small_loss, [W, b])
one_step = st.TrainingExecutor([small_loss], small_updates)
print("one run evaluates, in order:", ", ".join(n.name for n in one_step.executor.order))
viz.draw([small_loss] + [u.value for u in small_updates])

# %% [markdown]
# Running it changes the scope and nothing else: the graph stays the same, run after run.

# %%
xv = rng.normal(size=(5, 4)).astype(np.float32)
yv = np.eye(3, dtype=np.float32)[[0, 1, 2, 1, 0]]
for i in range(3):
    before = small["W"].copy()
    (lv,) = one_step.run({xs: xv, ys: yv})
    print(f"run {i}: loss {float(lv):.4f}, W moved by {np.abs(small['W'] - before).max():.4f}")


# %% [markdown]
# ### Exercise 6.1 — SGD with momentum, by hand
#
# `tg.optim.SGD(params, lr, momentum=mu)` keeps a velocity $b$ per parameter. With gradient
# $g_t$ at step $t$:
#
# $$b_t = \begin{cases} g_1 & t = 1 \\ \mu\, b_{t-1} + g_t & t > 1 \end{cases}, \qquad
# p_t = p_{t-1} - \eta\, b_t .$$
#
# Write `momentum_step(p, g, b, lr, mu)` for numpy arrays: `b` is `None` before the first step.
# Return the new `(p, b)`. The check runs your function next to `tg.optim.SGD` for five steps
# of minimising $\sum_i (p_i - 1)^2 p_i^2$ and compares the parameters after each step.

# %%
def momentum_step(p, g, b, lr, mu):
    # BEGIN SOLUTION
    b = g.copy() if b is None else mu * b + g
    return p - lr * b, b
    # END SOLUTION


# %%
ex.momentum_step.check(momentum_step)


# %% [markdown]
# ### Exercise 6.2 — the symbolic update node
#
# Now the same rule as **graph**. Write `sgd_update_nodes(scope, p, g, lr)` that returns the
# `st.Update` list for plain SGD: one update whose value is the node $p - \eta\, g$ (build it
# with the node operators). The check trains a small classifier like the one above for five
# steps with your updates and with `st.SGD` from the same start, and compares the weights.

# %%
def sgd_update_nodes(scope, p, g, lr):
    # BEGIN SOLUTION
    return [st.Update(p, p - lr * g)]
    # END SOLUTION


# %%
ex.sgd_update_nodes.check(sgd_update_nodes)

# %%
summary(ex);
