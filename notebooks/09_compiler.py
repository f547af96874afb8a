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
# # Lesson 9 — The static-graph compiler
#
# A static graph exists before any number does. Lesson 8 used that to build once and run many
# times; this lesson treats the graph the way a compiler treats a program: something to
# store, to transform and to translate. We follow one idea per stage, each a small module of
# `tinygrad_edu/symbolic/`:
#
# | section | what it shows | exercise |
# |---|---|---|
# | [1. Programs, blocks and scopes](#1.-Programs,-blocks-and-scopes) | Paddle Fluid's design: where nodes are recorded; the startup program; the scope that holds parameters; a program as JSON | |
# | [2. Control flow as sub-blocks](#2.-Control-flow-as-sub-blocks) | `cond` and its gradient, drawn; `while_loop`, and reverse mode through a loop whose trip count depends on the data | 9.1 |
# | [3. Graph passes](#3.-Graph-passes) | pure functions graph → graph that shrink a gradient graph; rewrite rules | 9.2 |
# | [4. Memory planning](#4.-Memory-planning) | free each value after its last use, reuse its buffer; the peak of an order | 9.3 |
# | [5. Code generation](#5.-Code-generation) | the graph as straight-line Python source | |
# | [6. ONNX](#6.-ONNX:-the-graph-as-a-file) | the graph as a file any runtime can run | |
#
# The sections build on one another in this order, but each starts with its own heading and
# can be read in a sitting of its own: 1 and 2 are the program and its control flow, 3 to 6
# what a compiler does with a program once it has one.

# %%
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np

from tinygrad_edu import symbolic as S
from tinygrad_edu import viz
from tinygrad_course.lessons import check, check_true, summary
from tinygrad_course.lessons import lesson09 as ex
from tinygrad_edu.symbolic import (
    CONSTANT,
    Executor,
    Program,
    Scope,
    Variable,
    cond,
    fluid,
    gradients,
    optimize,
    program_guard,
    while_loop,
)
from tinygrad_edu.symbolic.static.passes import node_count, rewrite


# %% [markdown]
# ## 1. Programs, blocks and scopes
#
# In Fluid a network is a **Program**: a list of **Blocks**. Block 0, the *global block*,
# holds the main computation; every branch of an `if` and every loop body becomes a
# *sub-block* whose `parent` is the block it was written in. `program_guard(main, startup)`
# makes two programs current: nodes built inside are recorded in `main`, and the
# **initialisers** of parameters (ops with no inputs: `uniform_random`, `fill_constant`) go to
# `startup`.

# %%
main, startup = Program(), Program()
with program_guard(main, startup):
    x = S.data("x", shape=[None, 3], dtype="float64")
    w = S.create_parameter([3, 1], "float64", name="w",
                           default_initializer=fluid.initializer.Uniform(-1, 1, seed=0))
    b = S.create_parameter([1], "float64", name="b")      # fill_constant 0 by default
    y = (x @ w + b).tanh()
    y.name = "y"

print(main)
print(main.to_string())
print(startup.to_string())

# %% [markdown]
# `w` exists twice: as a *persistable* Variable in the main program, which reads its value at
# every run, and as an initialiser in the startup program, which runs **once**. Values that live
# across runs are kept in a **Scope**, a name → array dictionary. A Fluid `Executor` runs a
# program against a scope: the startup program fills it, the main program reads it.

# %%
exe = fluid.Executor(fluid.CPUPlace())
scope = Scope()
exe.run(startup, scope=scope)
print(scope, "w =", scope["w"].ravel().round(4), "b =", scope["b"])
batch = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
(y_val,) = exe.run(main, feed={"x": batch}, fetch_list=[y], scope=scope)
print("y =", y_val.ravel().round(4))

# %% [markdown]
# Scopes **nest**: `scope.new_scope()` makes a child whose lookups fall back to its parent. A
# value set in the child *shadows* the parent's without changing it — the way Fluid runs a loop
# body with its own local variables, or tries other weights without touching the trained ones.

# %%
trial = scope.new_scope()
trial.set_var("w", np.zeros((3, 1)))                     # local to the child
(y_trial,) = exe.run(main, feed={"x": batch}, fetch_list=[y], scope=trial)
print("with w = 0 in the child scope:", y_trial.ravel(), "(b still comes from the parent)")
print("the parent's w is unchanged:  ", scope["w"].ravel().round(4))

# %% [markdown]
# Because a program is a description, not Python objects calling each other, it is **data**:
# `program.to_json()` writes every block, node and attribute (Fluid's *ProgramDesc*), and
# `Program.from_json` rebuilds a program that runs the same. A program read back has no Python
# variables, so we fetch by name.

# %%
text = main.to_json()
again = Program.from_json(text)
(y_again,) = exe.run(again, feed={"x": batch}, fetch_list=["y"], scope=scope)
print(f"{len(text)} characters of JSON; same result after the round trip:",
      np.allclose(y_again, y_val))

# %% [markdown]
# ## 2. Control flow as sub-blocks
#
# ### `cond`: a branch as two blocks
#
# Python's `if` cannot look at a value that does not exist yet. `cond(pred, true_fn, false_fn,
# *operands)` instead **traces each branch once** into a sub-block; at run time the node
# evaluates the branch the predicate picks. Its derivative is another `cond` on the same
# predicate, each branch the derivative of a forward branch: only the branch taken is
# differentiated. Here $c = z^2$ for $z > 0$ and $c = -z$ otherwise.

# %%
flow, flow_startup = Program(), Program()
with program_guard(flow, flow_startup):
    z = Variable("z", shape=(), dtype="float64")
    c = cond(z > 0, lambda u: u * u, lambda u: -u, z)
    c.name = "c"
    (dc,) = gradients(c, [z])

run_c = Executor([c, dc])
for z0 in (3.0, -3.0):
    c_val, dc_val = run_c.run({z: z0})
    print(f"z = {z0:+}:  c = {c_val:+.1f}   dc/dz = {dc_val:+.1f}")

# %% [markdown]
# Drawn, every block is a dashed cluster: the two forward branches (blocks 1 and 2) and the two
# branches of the gradient `cond` (blocks 3 and 4). The `tuple_get` arrows pick one output of a
# node that has several.

# %%
viz.draw([c, dc])

# %% [markdown]
# ### `while_loop`: a loop whose length depends on the data
#
# Lesson 8 ended with `grow`: double `v` while $\sum v^2 < 100$. The eager engine records as
# many multiplications as the loop happened to run. A static graph has to hold the loop
# itself: `while_loop(cond_fn, body_fn, loop_vars)` traces the condition and the body into two
# sub-blocks and runs the body as long as the condition holds.
#
# Reverse mode through such a loop needs, at backward step $k$, the values of forward
# iteration $n - k$ — and $n$ is known only at run time. TensorFlow 1's answer, and ours: when
# `gradients()` builds the backward body, it marks which forward values that body reads; from
# then on the forward loop **pushes** them on a **stack** at every iteration, and the gradient
# node (`while_grad`) **pops** them, newest first, running the body's vector-Jacobian product
# once per iteration. (JAX's `lax.while_loop` keeps no such stack, so JAX refuses to
# reverse-differentiate it.)
#
# Here is the loop of `while_loop`'s docstring, $y \leftarrow y^2$ while $y < 100$. Its backward
# body needs $y$ of every iteration ($\partial y^2/\partial y = 2y$):

# %%
with program_guard(flow, flow_startup):
    s = Variable("s", shape=(), dtype="float64")
    n_iter, sq = while_loop(lambda i, y: y < 100.0, lambda i, y: (i + 1, y * y), (0, s))
    n_iter.name, sq.name = "n", "y"
    (dsq,) = gradients(sq, [s])
    loop_blocks = flow.blocks[-3:]  # the loop's condition and body, and the gradient's body

run_sq = Executor([n_iter, sq, dsq])
print("n, y, dy/ds =", run_sq.run({s: 1.5}))
stack = next(v for node, v in run_sq.values.items() if node.name.endswith("[stack]"))
print("the stack, one entry per iteration:", [round(float(d[k]), 4) for d in stack
                                              for k in d])
print("check: dy/ds = prod(2 y_k) =", np.prod([2 * float(v) for d in stack for v in d.values()]))

# %% [markdown]
# The program's last three blocks are the loop's: the condition, the body, and the **gradient
# body**, which multiplies the incoming adjoint `∂y` by the saved `y` twice (once per factor of
# `y * y`) and sums the two partial adjoints.

# %%
for block in loop_blocks:
    print(f"block {block.idx} (parent {block.parent_idx}):",
          ", ".join(n.name for n in block.ops))

# %% [markdown]
# ### Exercise 9.1 — a data-dependent loop, and its gradient
#
# Write lesson 8's `grow` as a static graph. `grow_static(v)` gets a Variable `v` (shape
# `(2,)`) and returns three **nodes**: `steps`, the number of doublings; `y`, the final value;
# and the gradient of `y.sum()` with respect to `v`. Use `while_loop` with the loop variables
# `(0, v)`: the condition is $\sum_i u_i^2 < 100$, the body returns `(k + 1, u * 2)`. The check
# runs your graph from three starting points and compares with lesson 8's eager loop.

# %%
def grow_static(v):
    # BEGIN SOLUTION
    steps, y = while_loop(lambda k, u: (u * u).sum() < 100.0, lambda k, u: (k + 1, u * 2),
                          (0, v))
    (grad,) = gradients(y.sum(), [v])
    return steps, y, grad
    # END SOLUTION


# %%
ex.grow_static.check(grow_static)

# %% [markdown]
# The reference's graph, drawn: the body and the condition are blocks of their own, the
# gradient body is a third. The stack (`while[stack]`) holds, per iteration, what the gradient
# body reads from the forward body: here only the constant `2` of `u * 2` (it never changes; a
# smarter compiler would recompute it rather than save it).

# %%
v = Variable("v", shape=(2,), dtype="float64")
steps, grown = while_loop(lambda k, u: (u * u).sum() < 100.0, lambda k, u: (k + 1, u * 2),
                          (0, v))
steps.name, grown.name = "steps", "y"
(dgrown,) = gradients(grown.sum(), [v])
viz.draw([steps, grown, dgrown], labels={dgrown: "∂sum(y)/∂v"})

# %% [markdown]
# ## 3. Graph passes
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
# ## 4. Memory planning
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
# ## 5. Code generation
#
# An interpreter pays, at every node of every run, for a dictionary lookup, an op dispatch and
# an unpacking of attributes. A compiler pays once: `compile(outputs)` walks the graph and
# **emits one line of Python per node** over the array namespace `xp`, deleting each value
# after its last use. `fn.source` is the program it wrote:

# %%
fn = S.compile(layer)
print(fn.source)

# %%
got = fn(layer_feed)
want = Executor(layer).run(layer_feed)
check("the compiled function computes what the Executor does", np.concatenate(
    [np.ravel(g) for g in got]), np.concatenate([np.ravel(v) for v in want]), rtol=1e-12)

# %% [markdown]
# With `compile(outputs, example=feed)` the memory plan for the example's shapes is compiled in
# too (`out=` buffers in the generated lines). For a 1000-op chain the generated code runs at
# about the speed of the same computation written by hand in numpy (see the Performance page).
#
# ## 6. ONNX: the graph as a file
#
# ONNX is the industry's file format for static graphs, and it is tensor-as-node like this
# engine (lesson 8 listed a graph in its style by hand). `S.to_onnx(outputs, path, feed_dict)`
# writes a real model: one or a few ONNX nodes per node, `cond` as `If`, `while_loop` as
# `Loop`; the example feed fixes the inputs' shapes and dtypes, and the `onnx` checker validates
# the model. **onnxruntime**, which knows nothing about this library, then runs the file. It
# needs the `onnx` extra (`pip install "tinygrad_edu[onnx]"`); without it, you see the error
# that says so.

# %%
path = Path(tempfile.mkdtemp()) / "layer.onnx"
try:
    S.to_onnx(layer, path, layer_feed)
    import onnxruntime
except ImportError as error:
    print("ONNX export is not available here:", error)
else:
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    print("inputs: ", [(i.name, i.shape) for i in session.get_inputs()])
    print("outputs:", [(o.name, o.shape) for o in session.get_outputs()])
    onnx_out = session.run(None, {"X": layer_feed[X], "W": layer_feed[W]})
    check("onnxruntime computes what the Executor does", np.concatenate(
        [np.ravel(g) for g in onnx_out]), np.concatenate([np.ravel(v) for v in want]),
        rtol=1e-9)

# %% [markdown]
# That is the whole path of a graph compiler, in miniature: a program (blocks, control flow)
# → passes → a memory plan → code or a file for another runtime. `torch.compile`, XLA and TVM
# do the same with many more ops and passes, and with machine code instead of Python.

# %%
summary(ex);
