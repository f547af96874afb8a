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
# # Lesson 2 — Tensors as nodes: the symbolic engine
#
# In the **symbolic** form a graph node is a **tensor that will exist**: an input `Variable`,
# or the result of an op applied to other nodes. Building the graph computes nothing; an
# `Executor` runs it later, as often as you like, on whatever data you feed it.
#
# The big idea of this lesson: `gradients(y, xs)` does not compute numbers either. It **adds
# nodes** to the graph — the gradient is itself a graph. You can draw it, run it, and
# differentiate it again for second derivatives.
#
# 1. Variables, operators and functions;
# 2. `gradients()` builds a graph, with explicit **Σ** nodes for a value used twice;
# 3. higher orders: the gradient of a gradient;
# 4. the `Executor`: one graph, many feeds, values on the boxes.

# %%
import matplotlib.pyplot as plt
import numpy as np

from tinygrad_edu import viz
from tinygrad_course.lessons import check, summary
from tinygrad_course.lessons import lesson02 as ex
from tinygrad_edu.symbolic import (
    Executor,
    optimize,
    Variable,
    exp,
    gradients,
    matmul,
    reduce_mean,
    reduce_sum,
    relu,
    sigmoid,
    tanh,
    topo_sort,
)

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## 1. Building a graph
#
# `Variable(name, shape=None)` makes an input node. Operators (`+ - * / ** @`), methods
# (`.exp()`, `.sum()`, ...) and the functions of `tinygrad_edu.symbolic` (`exp`, `matmul`,
# `reduce_sum`, `relu`, `sigmoid`, `softmax`, ...) make new nodes. Each node knows its `op`, its
# `inputs` and a readable `name`; when the inputs' shapes are known, the op's shape rule gives
# the node's `shape` at once, before any number exists.

# %%
x = Variable("x", shape=(3,))
w = Variable("w", shape=(3,))
y = reduce_sum(x * w + exp(x))
y.name = "y"

for node in topo_sort([y]):
    inputs = ", ".join(i.name for i in node.inputs) or "-"
    print(f"{node.op.name:<12} {node.name:<18} shape={node.shape}  inputs: {inputs}")

# %% [markdown]
# `topo_sort` lists the nodes so that every node comes after its inputs: a **topological
# order**. The drawing shows the same graph: tensors are boxes, ops are arrows; an op with
# several inputs joins its arrows in a small circle.

# %%
viz.draw(y)

# %% [markdown]
# A bigger graph, a two-layer network's loss
# $L = \operatorname{mean}\,\sigma(\operatorname{relu}(X W_1)\, W_2)$. The shapes are checked
# as the graph is built: try changing `W2`'s shape to `(4, 1)` and the `@` fails with an error
# naming both shapes.

# %%
X = Variable("X", shape=(4, 3))
W1 = Variable("W1", shape=(3, 5))
W2 = Variable("W2", shape=(5, 1))
loss = reduce_mean(sigmoid(matmul(relu(matmul(X, W1)), W2)))
loss.name = "loss"
viz.draw(loss)

# %% [markdown]
# ## 2. `gradients()` builds more graph
#
# Reverse mode walks the topological order backwards. Every node $v$ gets an **adjoint**
# $\bar v = \partial y/\partial v$, starting from $\bar y = 1$. A node's op has a derivative
# rule (a *VJP*) that turns $\bar v$ into one **partial adjoint** for each of its inputs. A
# value used $k$ times receives $k$ partial adjoints, and by the multivariate chain rule its
# adjoint is their sum:
#
# $$\bar u = \sum_{v \text{ uses } u} \bar v \, \frac{\partial v}{\partial u}.$$
#
# In the symbolic engine that sum is an explicit **`add` node** (gold, "Σ partial adjoints").
# In $y = \sum_i (x_i w_i + e^{x_i})$ the variable $x$ is used twice (by `*` and by `exp`), so
# $\partial y/\partial x = w + e^{x}$ is the sum of two partial adjoints:

# %%
gx, gw = gradients(y, [x, w])
sums = [n for n in topo_sort([gx, gw]) if n.is_adjoint_sum]
print("gradient nodes:", gx, gw)
print("adjoint-sum nodes:", sums)

# %% [markdown]
# Drawn with one feed, so every box shows its value. Follow the dashed orange arrows from
# $\partial y/\partial y = 1$ down: the two partial adjoints of $x$, one per use, are named
# after the use they come through, `∂y/∂x via (x*w)` (its value is $w$) and `∂y/∂x via exp(x)`
# (its value is $e^x$); they meet in the gold **Σ** box at the bottom. $w$ is used once, so $\partial y/\partial w$ needs no sum.

# %%
feed = {x: np.array([0.0, 1.0, 2.0]), w: np.array([2.0, 2.0, -1.0])}
viz.draw([y, gx, gw], feed=feed, labels={gx: "∂y/∂x", gw: "∂y/∂w"})

# %%
gx_val, gw_val = Executor([gx, gw]).run(feed)
print("∂y/∂x =", gx_val, "   w + exp(x) =", feed[w] + np.exp(feed[x]))
print("∂y/∂w =", gw_val, "   x          =", feed[x])


# %% [markdown]
# ### Exercise 2.1 — a graph and its gradients
#
# Write `build_loss(a, b)` that takes two Variables and returns the node of
#
# $$q(a, b) = \sum_i \log\!\left(1 + e^{a_i b_i}\right) + a_i^2 .$$
#
# (`exp`, `log` from `tinygrad_edu.symbolic`, or the methods `.exp()`, `.log()`, and
# `reduce_sum`; numpy's functions do not work on nodes.) The check builds the graph from
# two Variables, takes `gradients`, runs both with an `Executor`, and compares the gradient
# graph's numbers with central differences.

# %%
def build_loss(a, b):
    # BEGIN SOLUTION
    return reduce_sum((1 + (a * b).exp()).log() + a * a)
    # END SOLUTION


# %%
ex.build_loss.check(build_loss)


# %% [markdown]
# ### Exercise 2.2 — predict the Σ nodes
#
# `gradients(r, [a, b, c])` adds one `add` node for every *extra* use of a value whose
# gradient is needed: a value used $k$ times needs $k - 1$ additions. Intermediate nodes count
# too. How many adjoint-sum nodes does this graph get?
#
# $$u = a \cdot b, \qquad r = \sum \left(u \cdot c + u + a \cdot a\right)$$
#
# Return your prediction from the function (a number; do not build the graph). Count the uses
# of each of $a$, $b$, $c$, $u$ — and remember that `a * a` uses $a$ twice.

# %%
def predicted_adjoint_sums():
    # BEGIN SOLUTION
    # a: used by a*b and twice by a*a -> 3 uses -> 2 adds; u: used twice -> 1; b, c: once
    return 3
    # END SOLUTION


# %%
ex.predicted_adjoint_sums.check(predicted_adjoint_sums)

# %% [markdown]
# ## 3. Higher orders: the gradient of a gradient
#
# Because $\partial f/\partial t$ is a graph made of ordinary ops, `gradients` can walk it
# again. For $f = \tanh t$:
#
# $$f' = 1 - \tanh^2 t, \qquad f'' = -2 \tanh t\,(1 - \tanh^2 t).$$
#
# The derivative rule of `tanh` is written with its output ($1 - f \cdot f$), so the first
# gradient graph *uses* $f$, and the second gradient flows back through those uses too.

# %%
t = Variable("t")
f = tanh(t)
f.name = "f"
(d1,) = gradients(f, [t])
(d2,) = gradients(d1, [t])
print("nodes: f needs", len(topo_sort([f])), "| f' needs", len(topo_sort([d1])),
      "| f'' needs", len(topo_sort([d2])))

# %% [markdown]
# 23 nodes for $f''$: `gradients` applies every derivative rule mechanically, seeds of ones,
# multiplications by 1, `sum_to` that change nothing, the same product built twice. A
# static-graph compiler cleans that up before running: `optimize` runs small graph passes
# (common subexpressions, algebraic identities, constant folding, dead code) until the graph
# stops shrinking. The result computes the same values with a third of the nodes, and it
# reads like the formula: $f'' = (-f - f)(1 - f f)$.

# %%
f_opt, d1_opt, d2_opt = optimize([f, d1, d2])
print("after optimize, f'' needs", len(topo_sort([d2_opt])), "nodes")
viz.draw([f_opt, d1_opt, d2_opt], labels={d1_opt: "f' = ∂f/∂t", d2_opt: "f'' = ∂f'/∂t"})

# %% [markdown]
# One `Executor` evaluates all three on a whole grid of points at once:

# %%
ts = np.linspace(-3, 3, 121)
f_val, d1_val, d2_val = Executor([f, d1, d2]).run({t: ts})
check("f' = 1 - tanh^2", d1_val, 1 - np.tanh(ts) ** 2, atol=1e-12)
check("f'' = -2 tanh (1 - tanh^2)", d2_val, -2 * np.tanh(ts) * (1 - np.tanh(ts) ** 2),
      atol=1e-12)

fig, ax = plt.subplots(figsize=(6.5, 3.2))
ax.plot(ts, f_val, label="f = tanh t")
ax.plot(ts, d1_val, label="f'  (gradients once)")
ax.plot(ts, d2_val, label="f'' (gradients twice)")
ax.axhline(0, color="grey", lw=0.5)
ax.set_xlabel("t")
ax.legend()
plt.show()


# %% [markdown]
# ### Exercise 2.3 — a second derivative
#
# Write `second_derivative(y, x)` that returns the **node** $\partial^2 y/\partial x^2$, using
# `gradients` twice (for a non-scalar $y$, `gradients` differentiates $\sum y$, which is
# what we want here). The check tries it on $y = x^3 e^{x}$ (whose second derivative is
# $(x^3 + 6x^2 + 6x)\,e^x$) at a few points.

# %%
def second_derivative(y, x):
    # BEGIN SOLUTION
    (dy,) = gradients(y, [x])
    (d2y,) = gradients(dy, [x])
    return d2y
    # END SOLUTION


# %%
ex.second_derivative.check(second_derivative)

# %% [markdown]
# ## 4. The `Executor`: one graph, many feeds
#
# An `Executor` sorts the nodes its outputs need **once**, when it is made; `run(feed_dict)`
# is then a loop over that list. Variables made without a shape accept any shape: the same
# graph runs on a scalar, a vector and a matrix. (Python numbers become float32; numpy arrays
# keep their dtype.)

# %%
p, k = Variable("p"), Variable("k")
z = reduce_sum(k * p * p + tanh(p))
z.name = "z"
(gp,) = gradients(z, [p])
executor = Executor([z, gp])
print("evaluation order:", [n.name for n in executor.order][:6], "...", len(executor.order),
      "nodes")

for p_val in (np.float64(0.5), np.array([0.0, 1.0, 2.0]), np.arange(6.0).reshape(2, 3) / 4):
    z_val, gp_val = executor.run({p: p_val, k: 3.0})
    print(f"p shape {np.shape(p_val)}:  z = {z_val:.4f}  ∂z/∂p shape {gp_val.shape}")
    check(f"∂z/∂p for shape {np.shape(p_val)}", gp_val, 6 * p_val + 1 - np.tanh(p_val) ** 2,
          atol=1e-6)


# %% [markdown]
# `viz.draw(nodes, feed=...)` runs an Executor and writes every value into its box. Move the
# slider (or press play) to change the input and watch the numbers flow through both the
# forward graph and the gradient graph. `viz.slider` draws the graph once for every position,
# so it also works on a static page such as the docs site. For the picture we declare $p$
# and $k$ as scalars (`shape=()`), which lets `optimize` drop every `sum_to`: 12 boxes
# instead of 23.

# %%
ps, ks = Variable("p", shape=()), Variable("k", shape=())
zs = ks * ps * ps + tanh(ps)
zs.name = "z"
z_small, gp_small = optimize([zs, *gradients(zs, [ps])])


def show(p0=0.5):
    return viz.draw([z_small, gp_small], feed={ps: np.array(p0), ks: np.float64(3.0)},
                    labels={gp_small: "∂z/∂p"}, legend=False)


viz.slider(show, [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0], name="p0", start=0.5)

# %%
summary(ex);

# %% [markdown]
# ## Summary
#
# * A symbolic node is a **tensor-to-be**: `Variable`s are fed, other nodes are ops of nodes;
#   building computes nothing (shape rules run early when shapes are known).
# * `gradients(y, xs)` walks the graph backwards and **builds** the adjoints as new nodes; a
#   value used $k$ times gets $k - 1$ explicit **Σ `add`** nodes.
# * The gradient is an ordinary graph, so `gradients` of it gives **second derivatives**.
# * An `Executor` sorts once and runs many times, on feeds of any compatible shape.
#
# Next lesson: the other form, where the nodes are **backward ops** and the graph is recorded
# while numbers are computed.
