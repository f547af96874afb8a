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
# # Lesson 9b — Graph passes and memory planning
#
# *Lesson 9, the static-graph compiler, comes in three parts: [9a](09a_programs.ipynb) the
# program and its control flow, **9b** graph passes and memory planning,
# [9c](09c_codegen.ipynb) code generation and ONNX.*
#
# Once a graph exists before any number does, it can be transformed before it runs. This part
# does what a compiler does to a program it has been given: **passes** that rewrite the graph
# into a smaller one computing the same values, and a **memory plan** that decides when each
# value is freed and which buffer it reuses. It builds on lesson 2 (`gradients()` builds a
# gradient as a graph, drawn) and lesson 8 (the `Executor`); part 9a is not needed.
#
# | section | what it shows | exercise |
# |---|---|---|
# | [1. Graph passes](#1.-Graph-passes) | pure functions graph → graph that shrink a gradient graph; rewrite rules | 9.2 |
# | [2. Memory planning](#2.-Memory-planning) | free each value after its last use, reuse its buffer; the peak of an order | 9.3 |

# %%
import tracemalloc

import numpy as np

from tinygrad_edu import symbolic as S
from tinygrad_edu import viz
from tinygrad_course.lessons import check, check_true, summary
from tinygrad_course.lessons import lesson09 as ex
from tinygrad_edu.symbolic import CONSTANT, Executor, Variable, gradients, optimize
from tinygrad_edu.symbolic.static.passes import node_count, rewrite


# %% [markdown]
# ## 1. Graph passes
#
# Each derivative rule is written once, for the general case, so a gradient graph is full of
# trivial arithmetic: a seed `ones_like(y)` multiplied in, `sum_to` a shape the value already
# has, a negation negated again. A **pass** is a pure function that takes a graph (its
# outputs) and returns a new one computing the same values; the nodes it is given are never
# changed, so we can draw before and after. `optimize` runs common-subexpression elimination,
# algebraic simplification, constant folding and dead-code elimination until the graph stops
# shrinking.
#
# Lesson 2 drew $\tanh''$ as `gradients` builds it:

# %%
t = Variable("t")
f = t.tanh()
f.name = "f"
(d1,) = gradients(f, [t])
(d2,) = gradients(d1, [t])
(d2_opt,) = optimize([d2])
print("tanh'' before:", node_count([d2]), "nodes; after optimize:", node_count([d2_opt]))
values = np.linspace(-2, 2, 5)
before, after = Executor([d2]).run({t: values})[0], Executor([d2_opt]).run({t: values})[0]
check("the optimised graph computes the same tanh''", after, before)

# %% [markdown]
# Before (23 nodes):

# %%
viz.draw([d2], labels={d2: "f''"}, legend=False)

# %% [markdown]
# After (8 nodes): $f'' = -2 f (1 - f^2)$, read straight off the drawing, with $f = \tanh t$
# computed once.

# %%
viz.draw([d2_opt], labels={d2_opt: "f''"}, legend=False)

# %% [markdown]
# ### One mechanism under every pass: `rewrite`
#
# Every pass is built on one mechanism, `passes.rewrite(outputs, rule)`: walk the graph in
# execution order and offer each node — with its inputs already rewritten — to `rule`, which
# returns a replacement node, or `None` to keep it. A constant is a node whose `op` is
# `CONSTANT`; its number is `node.attrs["value"]`.

# %%
u = Variable("u")
expr = (u + 0).exp() + 0
(simpler,) = rewrite([expr], lambda n: n.inputs[0] if n.op.name == "add" and
                     n.inputs[1].op is CONSTANT and n.inputs[1].attrs["value"] == 0 else None)
print(expr.name, "->", simpler.name)

# %% [markdown]
# ### Exercise 9.2 — a rewrite rule
#
# Write the rule `mul_by_one(node)`: for a `mul` node one of whose inputs is the constant 1,
# return the *other* input; for every other node return `None`. The check rewrites a graph
# with `rewrite(outputs, mul_by_one)`, counts its nodes and compares its values with the
# original's.

# %%
def mul_by_one(node):
    # BEGIN SOLUTION
    if node.op.name != "mul":
        return None
    a, b = node.inputs
    for one, other in ((b, a), (a, b)):
        if one.op is CONSTANT and np.ndim(one.attrs["value"]) == 0 \
                and one.attrs["value"] == 1:
            return other
    return None
    # END SOLUTION


# %%
ex.mul_by_one.check(mul_by_one)

# %% [markdown]
# Your rule on a gradient graph: the seed of $\partial y/\partial y$ is a `ones_like` node, not
# the constant 1, so the rule leaves it (that is the `simplify` pass's job); the `* 1` a
# careless model writes goes.

# %%
rule = ex.mul_by_one.use(mul_by_one)
p = Variable("p")
careless = ((p * 1) * (p * 1)).exp() * 1
(tidy,) = rewrite([careless], rule)
print(f"{careless.name}  ({node_count([careless])} nodes)\n->  {tidy.name}  "
      f"({node_count([tidy])} nodes)")

# %% [markdown]
# ## 2. Memory planning
#
# An Executor without a plan keeps every value until the run ends. Yet most values are read by
# one or two later nodes and then never again. A **memory plan** (CSE599W's second assignment),
# `Executor(outputs, plan_memory=True)`:
#
# 1. computes **liveness**: the last step of the execution order that reads each value, after
#    which the value is dead;
# 2. picks a **memory-aware order**: among the nodes ready to run, the one that adds the fewest
#    bytes, so the readers of a large value run early and it dies early;
# 3. assigns **buffers**: an elementwise result is written (`out=`) into the buffer of a value
#    that is dead by then — often its own input, in place.
#
# Sizes come from the values: the first run with new feed shapes profiles, later runs replay
# the plan. Here is one layer and its weight gradient:

# %%
X = Variable("X", shape=(64, 32), dtype="float64")
W = Variable("W", shape=(32, 16), dtype="float64")
h = (X @ W).tanh()
h.name = "h"
loss = S.reduce_sum(h * h)
loss.name = "loss"
(dW,) = gradients(loss, [W])
layer = optimize([loss, dW])
rng = np.random.default_rng(0)
layer_feed = {X: rng.normal(size=(64, 32)), W: 0.1 * rng.normal(size=(32, 16))}
planned = Executor(layer, plan_memory=True)
planned.run(layer_feed)                       # profiles the sizes
planned.run(layer_feed)                       # replays the plan
plan = planned.memory_plan
print(f"{len(plan.order)} steps, {plan.n_buffers} buffers:", plan.buffer_bytes, "bytes")

# %% [markdown]
# `viz.draw_memory_plan` colours each node by the buffer its value lives in; nodes of one colour
# use the same memory one after the other. Each box says at which step it runs and after which
# step it is freed. A matrix product makes a new array (numpy's `matmul` is slower writing into
# `out=`), which then becomes a buffer that later elementwise results reuse; grey boxes are not
# planned buffers: the feeds, constants, and views of other values.

# %%
viz.draw_memory_plan(planned)

# %% [markdown]
# ### Exercise 9.3 — the peak memory of an execution order
#
# How much memory does a run need at its worst? Write `peak_bytes(order, outputs, nbytes)`:
# `order` is a list of nodes in execution order, `outputs` the nodes the run hands back and
# `nbytes[node]` the size of a node's value. Each value is freed right after the last step that
# reads it (a node's `inputs` are what it reads); outputs are kept to the end. **While step
# $k$ runs**, the values alive are those computed at a step $\le k$ that are outputs or are
# read at a step $\ge k$. Return the largest total over all steps.

# %%
def peak_bytes(order, outputs, nbytes):
    # BEGIN SOLUTION
    last = {node: k for k, node in enumerate(order)}
    for k, node in enumerate(order):
        for inp in node.inputs:
            last[inp] = max(last[inp], k)
    for node in outputs:
        last[node] = len(order)
    return max(sum(nbytes[n] for n in order[: k + 1] if last[n] >= k)
               for k in range(len(order)))
    # END SOLUTION


# %%
ex.peak_bytes.check(peak_bytes)

# %% [markdown]
# ### Measured: a plan for an MLP
#
# Now the numbers for an MLP's loss and both weight gradients (batch 256, 784 → 256 → 10, as in
# the benchmarks). Your `peak_bytes` gives the peak of the plain order and of the plan's order,
# from the sizes of one run; `tracemalloc` measures what the executors really allocate.

# %%
peak = ex.peak_bytes.use(peak_bytes)
Xb, Tb = Variable("X", dtype="float64"), Variable("T", dtype="float64")
W1, W2 = Variable("W1", dtype="float64"), Variable("W2", dtype="float64")
err = S.relu(Xb @ W1) @ W2 - Tb
mse = S.reduce_mean(err * err)
mlp = [mse, *gradients(mse, [W1, W2])]
mlp_feed = {Xb: rng.normal(size=(256, 784)), Tb: rng.normal(size=(256, 10)),
            W1: 0.05 * rng.normal(size=(784, 256)), W2: 0.05 * rng.normal(size=(256, 10))}
plain, planned_mlp = Executor(mlp), Executor(mlp, plan_memory=True)
sizes = {n: np.asarray(v).nbytes for n, v in plain.run(mlp_feed, return_all=True).items()}
planned_mlp.run(mlp_feed)


def measured_peak(run):
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


MiB = 2**20
print(f"every value kept (no plan):          {sum(sizes.values()) / MiB:5.2f} MiB")
print(f"freed after last use, plain order:   {peak(plain.order, mlp, sizes) / MiB:5.2f} MiB")
print(f"freed after last use, plan's order:  "
      f"{peak(planned_mlp.memory_plan.order, mlp, sizes) / MiB:5.2f} MiB")
unplanned_peak = measured_peak(lambda: plain.run(mlp_feed))
planned_peak = measured_peak(lambda: planned_mlp.run(mlp_feed))
print(f"measured (tracemalloc): {unplanned_peak / MiB:.2f} MiB without a plan, "
      f"{planned_peak / MiB:.2f} MiB with it: {planned_peak / unplanned_peak:.0%}")
check_true("the plan needs less memory than no plan", planned_peak < unplanned_peak)

# %% [markdown]
# (The measured figures include the feeds and the numbers numpy allocates inside a kernel, so
# they differ a little from the sums of value sizes.) What is left at the peak is essentially
# the output $\partial L/\partial W_1$ and the input it is computed from.
#
# **Next, [lesson 9c](09c_codegen.ipynb)**: the optimised, planned graph translated — into
# straight-line Python source, and into an ONNX file that another runtime runs.

# %%
summary(ex.mul_by_one, ex.peak_bytes);
