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
# # Lesson 9a — Programs and control flow
#
# *Lesson 9, the static-graph compiler, comes in three parts: **9a** the program and its
# control flow, [9b](09b_passes.ipynb) graph passes and memory planning,
# [9c](09c_codegen.ipynb) code generation and ONNX.*
#
# A static graph exists before any number does. Lesson 8 used that to build once and run many
# times; lesson 9 treats the graph the way a compiler treats a program: something to store,
# to transform and to translate. This part builds the program itself, after Paddle Fluid's
# design, and the control flow a static graph has to hold. It builds on lesson 8 (Fluid's
# `Program` and `Executor`, lesson 8's eager `grow` loop) and lesson 2 (`gradients()` as a
# graph).
#
# | section | what it shows | exercise |
# |---|---|---|
# | [1. Programs, blocks and scopes](#1.-Programs,-blocks-and-scopes) | where nodes are recorded; the startup program; the scope that holds parameters; a program as JSON | |
# | [2. Control flow as sub-blocks](#2.-Control-flow-as-sub-blocks) | `cond` and its gradient, drawn; `while_loop`, and reverse mode through a loop whose trip count depends on the data | 9.1 |

# %%
import numpy as np

from tinygrad_edu import symbolic as S
from tinygrad_edu import viz
from tinygrad_course.lessons import summary
from tinygrad_course.lessons import lesson09 as ex
from tinygrad_edu.symbolic import (
    Executor,
    Program,
    Scope,
    Variable,
    cond,
    fluid,
    gradients,
    program_guard,
    while_loop,
)


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
# Your graph, drawn (the reference's until your check passes): the body and the condition are
# blocks of their own, the gradient body is a third. The stack (`while[stack]`) holds, per iteration, what the gradient
# body reads from the forward body: here only the constant `2` of `u * 2` (it never changes; a
# smarter compiler would recompute it rather than save it).

# %%
v = Variable("v", shape=(2,), dtype="float64")
steps, grown, dgrown = ex.grow_static.use(grow_static)(v)
steps.name, grown.name = "steps", "y"
viz.draw([steps, grown, dgrown], labels={dgrown: "∂sum(y)/∂v"})

# %% [markdown]
# A program, its blocks and its control flow are what a compiler is given. **Next, [lesson
# 9b](09b_passes.ipynb)**: what it does with them — passes that shrink a gradient graph, and
# a memory plan that reuses buffers.

# %%
summary(ex.grow_static);
