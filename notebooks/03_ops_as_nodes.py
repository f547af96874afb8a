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
# # Lesson 3 — Ops as nodes: the eager engine
#
# `tg.tensor` works like PyTorch: you compute with numbers straight away, and every op on a
# tensor that requires grad **records a backward node** on the side. The recorded graph is
# made of **backward ops** (`MulBackward0`, `MmBackward0`, ...), not of tensors; its edges
# say where each gradient goes next. `loss.backward()` runs that graph once.
#
# 1. `grad_fn`, `next_functions`, `AccumulateGrad`, `sequence_nr`;
# 2. drawing the backward graph, and what each node saves for later;
# 3. the engine, step by step: dependency counts, the ready queue, input buffers;
# 4. `create_graph=True`: a backward that records itself.

# %%
import heapq
import itertools

import numpy as np
from IPython.display import Markdown, display

import tinygrad_edu as tg
from tinygrad_edu import viz
from tinygrad_course.lessons import check, summary
from tinygrad_course.lessons import lesson03 as ex

np.set_printoptions(precision=3, suppress=True)

# %% [markdown]
# ## 1. What gets recorded
#
# The seed example again, $D = (A + B) \odot C$, $E = D\,(A + C)$, now with a scalar loss
# $L = \sum E$ so that `backward()` needs no seed gradient. `A`, `B`, `C` are **leaves**: made
# by us, with no `grad_fn`. Every result has a `grad_fn`: the backward node of the op that
# made it.

# %%
inputs = viz.examples.seed_inputs()
A, B, C = (tg.tensor(inputs[k], requires_grad=True) for k in "ABC")
D = (A + B) * C
E = D @ (A + C)
L = E.sum()
names = {"A": A, "B": B, "C": C, "D": D, "E": E, "L": L}  # names for the drawings

for label, t in [("A", A), ("D", D), ("E", E), ("L", L)]:
    print(f"{label}: is_leaf={t.is_leaf!s:<5} grad_fn={t.grad_fn}")


# %% [markdown]
# Each backward node points at the nodes its gradients go to through `next_functions`: one
# `(node, input_nr)` pair per input of the forward op. A leaf that requires grad is reached
# through an **`AccumulateGrad`** node, whose only job is to add the arriving gradient into
# `leaf.grad` (its `.variable` is the leaf). A constant input would show `(None, 0)`.

# %%
def describe(node):
    if node is None:
        return "None"
    if hasattr(node, "variable"):
        return f"{node.name()} -> fills {label_of(node.variable)}.grad"
    return f"{node.name()} (sequence_nr {node.sequence_nr})"


def label_of(tensor):
    return next(k for k, t in names.items() if t is tensor)


for node in [L.grad_fn, E.grad_fn, D.grad_fn]:
    print(describe(node))
    for i, (nxt, input_nr) in enumerate(node.next_functions):
        print(f"   input {i} -> {describe(nxt)} (input_nr={input_nr})")

# %% [markdown]
# A node's **`sequence_nr`** is a counter that grows as nodes are created. It matters in one
# place only: when several nodes are ready to run, the engine runs the one created last
# (highest `sequence_nr`) first — reverse creation order, like a tape played backwards.
# `AccumulateGrad` is the exception, as in PyTorch: every one of them carries the largest
# number there is, $2^{64}-1$, so it runs as soon as its gradient is complete.
#
# ## 2. Drawing the backward graph
#
# `viz.draw(loss, names=...)` draws it: backward ops are boxes, arrows follow
# `next_functions`, green `AccumulateGrad` boxes fill the blue leaves. Compare with lesson 2:
# there the boxes were tensors and the ops were arrows; here it is the other way round.
#
# Each box is named the way the rest of the course names it: `AccumulateGrad (A)` fills
# `A.grad`; `MulBackward0 (D)` is the node of the tensor we called `D` (pass names in `names=`);
# a node whose tensor has no name is told apart from others of its type by a number, in the
# order the code made them: `AddBackward0 #1` is `A + B`, `AddBackward0 #2` is `A + C`.

# %%
L.name = "L"
viz.draw(L, names=names)

# %% [markdown]
# To compute its gradients later, a node keeps some forward values: `MulBackward0` for
# $D = S \odot C$ needs both factors ($\bar S = \bar D \odot C$, $\bar C = \bar D \odot S$),
# `MmBackward0` needs both matrices ($\bar D = \bar E\,(A+C)^\top$,
# $\overline{(A+C)} = D^\top \bar E$), while `AddBackward0` and `SumBackward0` need only shapes.
# `show_saved=True` lists them. That is the memory cost of eager autograd: what is saved stays
# alive until `backward()` frees it.

# %%
viz.draw(L, names=names, show_saved=True)

# %% [markdown]
# The same facts, read from the node itself: `.saved` (saved values), `.shapes` (input
# shapes) and `.op`, the shared op whose derivative rule the node will call.

# %%
mm = E.grad_fn
print(mm.name(), "op:", mm.op.name, "attrs:", mm.attrs, "input shapes:", mm.shapes)
print("saved:", [type(s).__name__ for s in mm.saved])
print("AddBackward0 saves:", [type(s).__name__ if s is not None else None
                             for s in D.grad_fn.next_functions[0][0].saved])


# %% [markdown]
# ### Exercise 3.1 — count the dependencies
#
# Before anything runs, the engine walks the graph from the root and counts, for every node,
# **how many gradients it will receive**: one per edge pointing at it. A node can run only
# when all of them have arrived (its count reaches 0). Write `count_dependencies(root)` that
# returns a dict node -> count for every node reachable from `root` through
# `next_functions` (skip `None` entries). The root receives exactly one gradient too, the seed
# $\partial L/\partial L = 1$, so **its count is 1**. (In the engine that seed comes from a
# small `GraphRoot` node whose one edge points at the root, so the rule is the same for every
# node: one count per edge.) Use a loop with an explicit stack — no recursion: the check also
# tries a chain 1500 nodes deep — and visit each node once.

# %%
def count_dependencies(root):
    # BEGIN SOLUTION
    counts = {root: 1}  # the seed gradient
    stack, seen = [root], {root}
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            counts[nxt] = counts.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return counts
    # END SOLUTION


# %% [markdown]
# The check compares your whole table, root included, with the counts the engine itself
# computes (`ex.engine_counts(loss)` records them with an engine observer), on the seed
# example, on a graph with a value used twice and on the deep chain.

# %%
ex.count_dependencies.check(count_dependencies)

# %% [markdown]
# ## 3. The engine, step by step
#
# `backward()` is a short loop:
#
# 1. count dependencies (exercise 1); put the root on the **ready queue**;
# 2. pop the ready node with the highest `sequence_nr`; it calls its op's derivative rule on
#    the gradient in its **input buffer** and sends one gradient per `next_functions` entry;
# 3. a gradient for a node that already has one waiting is **added** to it (a value used
#    twice: this is the eager twin of the symbolic Σ node); the receiver's count drops by one,
#    and at 0 it joins the ready queue;
# 4. repeat until the queue is empty; `AccumulateGrad` nodes add into `.grad`.
#
# `viz.BackwardStepper.record(loss)` runs `backward()` under an engine observer and keeps one
# frame per step. Orange is running, blue is ready (with its queue position), green-bordered is
# done; each box shows what it is waiting for or holding.

# %%
A.grad = B.grad = C.grad = None  # the stepper above already ran one backward
stepper = viz.BackwardStepper.record(L, names=names)
for i, frame in enumerate(stepper.frames):
    print(f"{i:>2}  {frame.title}")

# %% [markdown]
# A few frames as pictures. Frame 0: the counts are in, only the root is ready.

# %%
stepper.draw(0)

# %% [markdown]
# The frame where `MmBackward0 (E)` runs: it sends two gradients, and now two nodes are
# ready; the queue order is decided by `sequence_nr`.

# %%
def frame_of(title):
    return next(i for i, frame in enumerate(stepper.frames) if frame.title == title)


stepper.draw(frame_of("MmBackward0 (E)"))

# %% [markdown]
# The frame where `MulBackward0 (D)` runs: it sends a gradient to `AccumulateGrad (C)`, which
# already holds one from `AddBackward0 #2` (the node of `A + C`): the two are **summed in the
# buffer** ($C$ is used twice), and only then does that node become ready.

# %%
stepper.draw(frame_of("MulBackward0 (D)"))

# %% [markdown]
# The slider shows every frame (drag it, or press play; it works on a static page too):

# %%
viz.stepper_frames(stepper)

# %%
last = len(stepper.frames) - 1
display(Markdown(f"**Frame {last}.** {stepper.caption(last)}"))
check("A.grad after the stepper's backward", A.grad.numpy(),
      np.ones((2, 2)) @ (inputs["A"] + inputs["C"]).T * inputs["C"]
      + ((inputs["A"] + inputs["B"]) * inputs["C"]).T @ np.ones((2, 2)), atol=1e-5)


# %% [markdown]
# ### Exercise 3.2 — predict the engine's order
#
# Write `engine_order(root)`: simulate the engine **without computing any gradient** and
# return the nodes, in the order they would run. Use your
# `count_dependencies`, a ready queue as a heap (`heapq`, with `(-node.sequence_nr, ...)` so
# the highest number pops first), and decrease a node's count once per edge into it. Nodes
# with equal numbers (several `AccumulateGrad`s ready at once) run in the order they became
# ready: put a counter between the number and the node, `(-node.sequence_nr, k, node)`.
#
# (Watch out: the order is *not* simply "sort by `sequence_nr`". `AccumulateGrad (C)` has a
# larger number than `MulBackward0 (D)`, yet it must wait for that node's gradient.)

# %%
def engine_order(root):
    # BEGIN SOLUTION
    counts = count_dependencies(root)
    pushed = itertools.count()  # equal sequence numbers: first in, first out
    ready = [(-root.sequence_nr, next(pushed), root)]
    order = []
    while ready:
        _, _, node = heapq.heappop(ready)
        order.append(node)
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            counts[nxt] -= 1
            if counts[nxt] == 0:
                heapq.heappush(ready, (-nxt.sequence_nr, next(pushed), nxt))
    return order
    # END SOLUTION


# %% [markdown]
# The check records the real order with an engine `Observer` (its `node_started` method is
# called each time the engine runs a node; the engine's own `GraphRoot` is left out) on the
# seed example and on a graph where two `AccumulateGrad`s become ready at the same time.

# %%
ex.engine_order.check(engine_order)

# %% [markdown]
# ## 4. `create_graph=True`: the backward records itself
#
# In the eager engine, `backward()` normally computes gradients as plain numbers. With
# `create_graph=True` (or `tg.grad(..., create_graph=True)`) the derivative rules run on
# tensors instead, so the backward pass is **recorded** like any forward computation, and the
# gradient has its own `grad_fn`. For $y = x^3$: $\frac{dy}{dx} = 3x^2$, and differentiating
# that again gives $6x$. The orange boxes were recorded by the backward pass.

# %%
x = tg.tensor(2.0, requires_grad=True)
y = x * x * x
(dy,) = tg.grad(y, [x], create_graph=True)
(d2y,) = tg.grad(dy, [x])
y.name, dy.name = "y", "dy/dx"
print("dy/dx =", dy.item(), "(3x² = 12)   d²y/dx² =", d2y.item(), "(6x = 12)")
check("second derivative of x³ at 2", d2y.item(), 12.0)
viz.draw([y, dy], names={"x": x})

# %%
summary(ex);

# %% [markdown]
# ## Summary
#
# * An eager graph node is a **backward op**; `t.grad_fn` is the one that made `t`, and
#   `next_functions` are `(node, input_nr)` edges toward the inputs.
# * Leaves that require grad are reached through **`AccumulateGrad`**, which adds into `.grad`.
# * Nodes **save** what their derivative needs (`show_saved=True`); that is eager's memory cost.
# * The engine counts dependencies, sums gradients in **input buffers** (fan-out), and runs the
#   ready node with the highest **`sequence_nr`** first.
# * `create_graph=True` records the backward itself, for higher derivatives.
#
# Next: the two forms side by side.
