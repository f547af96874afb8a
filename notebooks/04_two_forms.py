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
# # Lesson 4 — Two forms, side by side
#
# Lessons 2 and 3 took the two engines apart. Here we put them next to each other on the same
# computation and ask three questions:
#
# 1. which parts of one graph correspond to which parts of the other?
# 2. do they compute the same gradients? (they must: both call the **same derivative rules**
#    from `tinygrad_edu.ops`);
# 3. when is each form the better tool — including the one thing only eager does directly:
#    ordinary Python control flow that depends on the data.

# %%
import numpy as np

import tinygrad_edu as tg
from tinygrad_edu import symbolic as sym
from tinygrad_edu import viz
from tinygrad_course.lessons import summary
from tinygrad_course.lessons import lesson04 as ex

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## 1. The seed example in both forms
#
# `viz.draw_both` runs $D = (A + B) \odot C$, $E = D\,(A + C)$ in both engines. With
# `show_values=True` the symbolic boxes carry their values too; the eager leaves always show
# their `.grad`. Check that the gold $\partial E/\partial A$ box of the symbolic form (top)
# holds the same numbers as `A.grad` in the eager form (bottom).

# %%
inputs = viz.examples.seed_inputs()
viz.draw_both(viz.examples.seed, show_values=True, **inputs)

# %% [markdown]
# ### Matching the names
#
# Each forward op appears once in each form, under a different kind of name:
#
# | forward op | symbolic: a **tensor** node | eager: a **backward** node |
# |---|---|---|
# | `A + B` | `(A+B)` (op `add`) | `AddBackward0 #1` |
# | `(A + B) * C` | `D` (op `mul`) | `MulBackward0` |
# | `A + C` | `(A+C)` (op `add`) | `AddBackward0 #2` |
# | `D @ (A + C)` | `E` (op `matmul`) | `MmBackward0` |
# | input `A` | `Variable("A")` | leaf `A` + `AccumulateGrad (A)` |
# | $A$ used twice | gold **Σ `add`** node (gradient graph) | gradients **summed in a buffer** |
#
# The code below builds both and lines them up by creation order, to show the table is not
# made up.

# %%
A_s, B_s, C_s = (sym.Variable(k, shape=(2, 2)) for k in "ABC")
E_s = viz.examples.seed(A_s, B_s, C_s)
forward_s = [n for n in sym.topo_sort([E_s]) if n.inputs]

A_e, B_e, C_e = (tg.tensor(inputs[k], requires_grad=True) for k in "ABC")
E_e = viz.examples.seed(A_e, B_e, C_e)
backward_e, stack = [], [E_e.grad_fn]
while stack:  # every backward node except AccumulateGrad, by creation order
    node = stack.pop()
    if node not in backward_e and not hasattr(node, "variable"):
        backward_e.append(node)
        stack.extend(n for n, _ in node.next_functions if n is not None)
backward_e.sort(key=lambda n: n.sequence_nr)

print(f"{'symbolic node':<14} {'op':<8} eager node")
for s, e in zip(forward_s, backward_e):
    print(f"{s.name:<14} {s.op.name:<8} {e.name()} #{e.sequence_nr}")
    assert e.op is s.op  # the very same Op object: one derivative rule, two engines

# %% [markdown]
# The `assert` shows the deeper point: the eager `MulBackward0` and the symbolic `mul` node hold
# the **same `Op` object**. Its `vjp` rule is written once; the symbolic engine runs it on
# nodes (building a gradient graph), the eager engine on raw arrays (computing numbers).
#
# ## 2. Same gradients, numerically
#
# Gradients of $\sum E$ from both engines, in float64 on a fresh random input, must agree to
# rounding error:

# %%
rng = np.random.default_rng(4)
arrays = {k: rng.standard_normal((3, 3)) for k in "ABC"}

variables = {k: sym.Variable(k) for k in "ABC"}
E_sym = viz.examples.seed(**variables)
grads_sym = sym.gradients(E_sym, list(variables.values()))
symbolic_vals = sym.Executor(grads_sym).run({variables[k]: arrays[k] for k in "ABC"})

leaves = {k: tg.tensor(arrays[k], requires_grad=True) for k in "ABC"}
viz.examples.seed(**leaves).sum().backward()
eager_vals = [leaves[k].grad.numpy() for k in "ABC"]

for k, gs, ge in zip("ABC", symbolic_vals, eager_vals):
    np.testing.assert_allclose(gs, ge, rtol=1e-12, atol=1e-12)
    print(f"∂(ΣE)/∂{k}: max |symbolic - eager| = {np.abs(gs - ge).max():.1e}")


# %% [markdown]
# ### Exercise 4.1 — one function, two engines
#
# Write `model(x, w)` for $m(x, w) = \sum_i \tanh(x_i w_i)\, x_i + w_i^2$ using **only
# operators and methods** (`*`, `+`, `**`, `.tanh()`, `.sum()`), so that the same Python
# function builds a symbolic graph when given `Variable`s and computes eagerly when given
# tensors. The check runs it both ways and compares both gradients with each other and with
# central differences. (numpy's `np.tanh` would not do: it works on arrays only.)

# %%
def model(x, w):
    # BEGIN SOLUTION
    return ((x * w).tanh() * x + w**2).sum()
    # END SOLUTION


# %%
ex.model.check(model)


# %% [markdown]
# ## 3. When each form wins
#
# |  | symbolic (define-and-run) | eager (define-by-run) |
# | --- | --- | --- |
# | writing code | build first, run later | plain Python: print, debug, step |
# | **control flow** on values | no values while building: graph ops or rebuilds | **yes**: records the path that ran |
# | whole-graph **optimisation** | **yes**: fuse, prune, schedule before running | op by op (unless traced) |
# | **serialisation** | **yes**: the graph is data (ONNX, lesson 8) | the program is Python; export needs tracing |
# | **memory** | plan buffers, free each value after its last use | saved tensors live until `backward()` |
# | **higher order** | free: `gradients` of a gradient graph | `create_graph=True` records the backward |
# | cost per step | built and sorted once, run many times | graph rebuilt every step |
#
# Modern systems mix the two: write eager code, then *trace* or *compile* it into a static
# graph (`torch.compile`, `jax.jit`, Paddle's `to_static`) for speed and export.
#
# ## 4. Control flow that depends on the data
#
# Here is a small iteration in plain Python: keep squaring-and-scaling until the value is big
# enough. How many steps run depends on the **value** of `x`:

# %%
def grow(x, limit=10.0):
    y = x
    steps = 0
    while y.sum().item() < limit:  # a Python loop on a number
        y = y * y + x
        steps += 1
    return y, steps


for start in (1.2, 2.0, 3.5):
    x = tg.tensor(start, requires_grad=True, dtype="float64")
    y, steps = grow(x)
    y.backward()
    print(f"x = {start}: {steps} step(s), y = {y.item():.4g}, dy/dx = {x.grad.item():.4g}")


# %% [markdown]
# The eager engine simply records the path that ran: a different number of `MulBackward0`s per
# input. Slide $x$ (or press play) and watch the graph grow and shrink:

# %%
def draw_grow(x0=1.2):
    x = tg.tensor(x0, requires_grad=True, dtype="float64")
    y, steps = grow(x)
    y.name = f"y after {steps} steps"
    return viz.draw(y, names={"x": x}, legend=False)


viz.slider(draw_grow, [1.1, 1.2, 1.4, 1.7, 2.0, 2.5, 3.0, 3.5], name="x0", start=2.0)

# %% [markdown]
# The symbolic engine cannot run this function at all: while the graph is built there is no
# number to compare, so the loop condition has nothing to test: `.item()` does not exist on a
# node, and a node refuses to be used as a condition (`if node:`, `while node < limit:`) with an
# error that says why. Without that refusal, Python would treat any object as true and
# *silently* take one branch.

# %%
try:
    grow(sym.Variable("x"))
except (TypeError, AttributeError) as err:
    print(f"{type(err).__name__}: {err}")


# %% [markdown]
# A static graph has two ways out: (a) **rebuild** the graph for each input, running the
# control flow in Python with the values known (that is what tracing does, and the trace is
# only valid for that path), or (b) put the control flow **into** the graph as special ops
# (`cond`, `while_loop` in TensorFlow; Fluid's `While`). Way (b) is more work for the engine:
# each branch and loop body becomes a sub-graph of its own, the derivative of a `cond` is
# another `cond`, and reverse mode through a loop whose trip count is known only at run time
# must save every iteration's values. The symbolic engine does all of it: **lesson 9a** builds
# `grow`-like loops with `while_loop`, differentiates them and draws the branches and loop
# bodies as boxes within the graph. Eager code never has to choose.
#
# ### Exercise 4.2 — a data-dependent loop, eagerly
#
# Write `halve_until_small(x)` with the eager engine: starting from $y = x$, while
# $\sum y^2 \ge 1$, replace $y$ by $y / 2$ (a tensor op); return $y$. For $x$ far from the
# boundary this is $y = x / 2^n$ with $n$ depending on $x$, so
# $\partial (\sum y)/\partial x_i = 2^{-n}$. The check compares with that formula for five
# inputs, some chosen so that a loop on another size of $y$ stops at a different $n$.

# %%
def halve_until_small(x):
    # BEGIN SOLUTION
    y = x
    while (y * y).sum().item() >= 1.0:
        y = y / 2
    return y
    # END SOLUTION


# %%
ex.halve_until_small.check(halve_until_small)


# %% [markdown]
# ### Exercise 4.3 — which form?
#
# For each situation, answer `"eager"` or `"symbolic"`: the form that handles it **directly**,
# as the two engines of this library stand (no tracing or compiling).
#
# * `"beam_search"`: a decoder that stops when each sentence emits its end token;
# * `"export_onnx"`: save the model as a file another runtime can load without Python;
# * `"debug_print"`: print an intermediate activation in the middle of the forward pass;
# * `"plan_memory"`: decide, before running, which buffers can share memory.

# %%
def which_form():
    # BEGIN SOLUTION
    return {
        "beam_search": "eager",
        "export_onnx": "symbolic",
        "debug_print": "eager",
        "plan_memory": "symbolic",
    }
    # END SOLUTION


# %%
ex.which_form.check(which_form)
summary(ex);

# %% [markdown]
# ## Summary
#
# * The same computation is a graph of **tensors** (symbolic) or of **backward ops** (eager);
#   each forward op is a `mul` node on one side and a `MulBackward0` on the other, sharing one
#   `Op` and its derivative rule.
# * A value used twice is a **Σ node** in one form and a **buffer sum** in the other; the
#   gradients agree to rounding error.
# * Static graphs win at whole-graph work (optimising, planning memory, exporting); eager
#   wins at writing and debugging code, and runs **data-dependent control flow** as is.
