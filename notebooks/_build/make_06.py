"""Writes notebooks/06_training.ipynb (see nbgen.py for how to execute it)."""

from nbgen import Lesson

L = Lesson()
L.md(r"""
# Lesson 6 — Training an MLP on handwritten digits, in both engines

The library ships the 8×8 handwritten-digits set (1,797 images, no download). We train the same
two-layer network twice:

* **eager**, the PyTorch way: `tg.nn` modules, a loss, `loss.backward()`, an optimizer from
  `tg.optim` updating the parameters in place;
* **symbolic**, the static-graph way (Paddle Fluid): parameters live in a `Scope`, and
  `minimize()` *appends the gradient and the update nodes to the graph*, so one
  `Executor.run` is one whole training step.
""")
L.code(r"""
import time

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F
from tinygrad_edu import nn, optim
from tinygrad_edu import symbolic as S
from tinygrad_edu import viz
from tinygrad_edu.data import DataLoader, load_digits
from tinygrad_edu.lessons import check, check_true, summary
from tinygrad_edu.symbolic import training as T

X_train, y_train = load_digits("train")
X_test, y_test = load_digits("test")
print("train", X_train.shape, "test", X_test.shape, "classes", sorted(set(y_train.tolist())))
fig, axes = plt.subplots(1, 8, figsize=(8, 1.4))
for ax, img, label in zip(axes, X_train[:8], y_train[:8]):
    ax.imshow(img.reshape(8, 8), cmap="gray_r")
    ax.set_title(str(label))
    ax.axis("off")
plt.show()
""")
L.md(r"""
## Eager: modules, loss, backward, step

The loop is the one you would write in PyTorch. `Linear(64, 128)` holds a weight of shape
(128, 64) and a bias, both `Parameter`s (leaf tensors with `requires_grad=True`).
""")
L.code(r"""
tg.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
print(model)
opt = optim.Adam(model.parameters(), lr=0.005)
loader = DataLoader(X_train, y_train, batch_size=64, shuffle=True, seed=0)
Xt = tg.tensor(X_test)


def accuracy(logits, y):
    return float((logits.numpy().argmax(axis=1) == y).mean())


EPOCHS = 20
eager_loss, eager_acc = [], []
start = time.perf_counter()
for epoch in range(EPOCHS):
    model.train()
    for xb, yb in loader:
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        eager_loss.append(loss.item())
    model.eval()
    with tg.no_grad():
        eager_acc.append(accuracy(model(Xt), y_test))
print(f"eager: test accuracy {eager_acc[-1]:.1%} after {time.perf_counter() - start:.1f} s")
check_true("the eager MLP reaches 95% test accuracy", eager_acc[-1] >= 0.95)
""")
L.md(r"""
## Symbolic: the training step is a graph

`scope.parameter(...)` stores an initial value (a *startup program*) and returns the Variable
that stands for it. `Adam(...).minimize(loss, params)` calls `gradients()` and builds, for
each parameter, nodes computing its new value (and its optimizer state). A
`TrainingExecutor` runs the graph and writes the new values back into the scope.
""")
L.code(r"""
rng = np.random.default_rng(0)


def init(fan_in, shape):
    bound = 1 / np.sqrt(fan_in)
    return rng.uniform(-bound, bound, shape).astype(np.float32)


scope = T.Scope()
W1 = scope.parameter("W1", init(64, (64, 128)))
b1 = scope.parameter("b1", init(64, (128,)))
W2 = scope.parameter("W2", init(128, (128, 10)))
b2 = scope.parameter("b2", init(128, (10,)))
x = S.Variable("x")
onehot = S.Variable("onehot")
logits = (x @ W1 + b1).relu() @ W2 + b2
loss = S.softmax_cross_entropy(logits, onehot)
updates = T.Adam(lr=0.005).minimize(loss, [W1, b1, W2, b2])
step = T.TrainingExecutor([loss], updates)
predict = S.Executor([logits])
print("one training step =", len(step.executor.order), "nodes")
""")
L.code(r"""
eye = np.eye(10, dtype=np.float32)
sym_loss, sym_acc = [], []
loader = DataLoader(X_train, y_train, batch_size=64, shuffle=True, seed=0, as_tensors=False)
start = time.perf_counter()
for epoch in range(EPOCHS):
    for xb, yb in loader:
        (lv,) = step.run({x: xb, onehot: eye[yb]})
        sym_loss.append(float(lv))
    feed = {x: X_test, W1: scope["W1"], b1: scope["b1"], W2: scope["W2"], b2: scope["b2"]}
    sym_acc.append(float((predict.run(feed)[0].argmax(axis=1) == y_test).mean()))
print(f"symbolic: test accuracy {sym_acc[-1]:.1%} after {time.perf_counter() - start:.1f} s")
check_true("the symbolic MLP reaches 95% test accuracy", sym_acc[-1] >= 0.95)
""")
L.md(r"""
The whole step can be drawn like any other graph: the forward (blue), the gradient nodes
(orange), and the update nodes computing `W1'`, `b1'`, ... The drawing is big, so it is
collapsed to its main boxes:
""")
L.code(r"""
viz.draw([u.value for u in updates[:1]], max_nodes=40)
""")
L.md(r"""
## The two runs side by side
""")
L.code(r"""
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.5))
ax1.plot(eager_loss, alpha=0.6, label="eager")
ax1.plot(sym_loss, alpha=0.6, label="symbolic")
ax1.set_yscale("log")
ax1.set_xlabel("training step")
ax1.set_ylabel("cross-entropy loss")
ax1.legend()
ax2.plot(range(1, EPOCHS + 1), eager_acc, "o-", label="eager")
ax2.plot(range(1, EPOCHS + 1), sym_acc, "s-", label="symbolic")
ax2.axhline(0.95, color="gray", ls="--", label="95%")
ax2.set_xlabel("epoch")
ax2.set_ylabel("test accuracy")
ax2.legend()
plt.tight_layout()
plt.show()
""")
L.code(r"""
with tg.no_grad():
    pred = model(Xt).numpy().argmax(axis=1)
wrong = np.flatnonzero(pred != y_test)[:8]
fig, axes = plt.subplots(1, len(wrong), figsize=(1.1 * len(wrong), 1.6))
for ax, i in zip(np.atleast_1d(axes), wrong):
    ax.imshow(X_test[i].reshape(8, 8), cmap="gray_r")
    ax.set_title(f"{y_test[i]}→{pred[i]}", color="crimson")
    ax.axis("off")
fig.suptitle("some digits the eager model gets wrong (true→predicted)", fontsize=9)
plt.show()
""")
L.md(r"""
**Exercise 6.1.** SGD with momentum keeps a buffer $v$ per parameter:

$$v \leftarrow \mu v + g, \qquad p \leftarrow p - \eta\, v$$

(on the first step $v = g$). Write one step for a numpy parameter `p`, gradient `g` and buffer
`v` (None on the first step); return the new `(p, v)`. The check runs three steps against
`tg.optim.SGD`.
""")
L.code(r"""
def sgd_momentum_step(p, g, v, lr, mu):
    # BEGIN SOLUTION 6.1
    v = g.copy() if v is None else mu * v + g
    return p - lr * v, v
    # END SOLUTION
""")
L.code(r"""
p0 = np.array([1.0, -2.0, 0.5])
param = nn.Parameter(tg.tensor(p0))
ref = optim.SGD([param], lr=0.1, momentum=0.9)
mine, v = p0.copy(), None
for k in range(3):
    g = np.array([0.3, -0.1, 0.2]) * (k + 1)
    param.grad = tg.tensor(g)
    ref.step()
    mine, v = sgd_momentum_step(mine, g, v, lr=0.1, mu=0.9)
check("three momentum steps match tg.optim.SGD", mine, param.numpy(), atol=1e-12)
summary();
""")
L.write("06_training.ipynb")
