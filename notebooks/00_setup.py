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
# # Lesson 0 — Setup and a first picture
#
# This notebook checks that everything the lessons need is installed, then shows the one
# picture the whole course is about: **the same computation, drawn as two different graphs**.
#
# Run the cells from top to bottom (Shift+Enter). If a cell fails, its message says what to
# install.

# %% [markdown]
# ## 1. Checking the install
#
# The library is imported as `tg`, the drawing module as `viz`. Drawings are made by Graphviz's
# `dot` program; `viz.check_dot()` finds it or raises an error that says how to install it
# (`apt-get install graphviz`, `brew install graphviz` or `conda install graphviz`).

# %%
import platform

import graphviz
import numpy as np

import tinygrad_edu
import tinygrad_edu as tg
from tinygrad_edu import viz
from tinygrad_edu.backend import cuda_available
from tinygrad_course.lessons import check_true, summary
from tinygrad_course.lessons import lesson00 as ex

np.set_printoptions(precision=3, suppress=True)
print("python       ", platform.python_version())
print("numpy        ", np.__version__)
print("tinygrad_edu ", tinygrad_edu.__version__)
print("graphviz (py)", graphviz.__version__)
print("dot          ", viz.check_dot())
print("CUDA GPU     ", cuda_available())

# %% [markdown]
# Checks answer at once: a green **PASS**, a red **FAIL** with a hint, or an amber **NOT
# SOLVED YET** for an exercise you have not written yet. Every lesson ends with a tally that
# counts each check once (run a check again after a fix and the tally follows). A hint names
# the mistake; fail the same exercise again and the hint takes a closer look (it never gives
# the answer). Once an exercise passes, `ex.<name>.solution()` shows the reference solution
# where the course has one to show (the instructor's notebooks; a student edition holds none).

# %%
check_true("graphviz's dot is on PATH", bool(viz.check_dot()))
check_true("tg.tensor makes a Tensor", isinstance(tg.tensor([1.0, 2.0]), tg.Tensor))

# %% [markdown]
# ## 2. The seed example, in both forms
#
# Take three $2 \times 2$ matrices $A, B, C$ and compute
#
# $$D = (A + B) \odot C, \qquad E = D\,(A + C),$$
#
# where $\odot$ is the elementwise product and the second line is a matrix product (`@`).
# In code it is two lines, and it runs unchanged on both engines of the library:

# %%
print(viz.examples.seed.__doc__.splitlines()[0])
inputs = viz.examples.seed_inputs()
for name, value in inputs.items():
    print(f"{name} =\n{value}")

# %% [markdown]
# `viz.draw_both` runs it twice and draws both graphs, one above the other (side by side
# when they fit next to each other):
#
# * **top, symbolic** (`tinygrad_edu.symbolic`): every box is a **tensor**, a value that will
#   exist; the ops are the arrows that meet in small circles. The orange dashed part is the
#   **gradient graph** that `gradients()` built: more boxes, computing $\partial E/\partial A$,
#   $\partial E/\partial B$, $\partial E/\partial C$ (of $\sum E$). $A$ and $C$ are each used
#   twice, so each gets two **partial adjoints**, one per use, that meet in a gold **Σ** node:
#   $C$'s are `∂E/∂C via D` (through $D = (A+B) \odot C$) and `∂E/∂(A+C)` (through $A + C$,
#   whose `+` passes the gradient on unchanged).
# * **bottom, eager** (`tg.tensor`, like PyTorch): every box is a **backward op**
#   (`MmBackward0`, `MulBackward0`, `AddBackward0`); arrows show where gradients flow next.
#   There are two `AddBackward0` nodes, told apart by a number in the order your code made
#   them: `AddBackward0 #1` for `A + B`, `AddBackward0 #2` for `A + C`. The green
#   `AccumulateGrad (A)` box writes into leaf `A`'s `.grad`, shown in the blue box below it.

# %%
viz.draw_both(viz.examples.seed, **inputs)

# %% [markdown]
# Both sides computed the same gradients. Here are the eager ones, straight from `.grad`:

# %%
A, B, C = (tg.tensor(inputs[k], requires_grad=True) for k in "ABC")
E = viz.examples.seed(A, B, C)
E.sum().backward()
print(f"E =\n{E.detach().numpy()}")
print(f"∂(sum E)/∂A =\n{A.grad.numpy()}")


# %% [markdown]
# ## 3. The tour
#
# | lesson | what you will do |
# |---|---|
# | 1 derivatives | derivatives, the chain rule, finite differences; a first `backward()` |
# | 2 tensors as nodes | symbolic graphs, `gradients()` as a graph, second derivatives, `Executor` |
# | 3 ops as nodes | the eager engine: `grad_fn`, `next_functions`, `AccumulateGrad`, stepping |
# | 4 two forms | the two engines side by side: same numbers, different strengths, control flow |
# | 5 backward engine | inside `backward()`: dependency counts, ready queue, buffers, hooks |
# | 6 training | an MLP on handwritten digits, trained in both engines |
# | 7 GPU | devices and array namespaces: the same code on CuPy |
# | 8 static graphs | CSE599W, Paddle Fluid, ONNX: static graphs then and now |
# | 9a programs and control flow | programs, blocks, scopes; `cond`, `while_loop` and their gradients |
# | 9b passes and memory plans | graph passes that shrink a gradient graph; memory plans, the peak |
# | 9c code generation and ONNX | the graph as straight-line Python source, and as an ONNX file |
# | 10 device engine | one ready queue and one thread per device, lanes, reentrant backward |
# | 11 CNNs | convolution as im2col, pooling, batch norm, a CNN drawn by module and trained |
# | 12 PyTorch graphs | draw your PyTorch model, its backward order, DLPack and version counters |
# | 13 coming from PyTorch | your PyTorch code run unchanged, side by side with PyTorch |
# | 14 GPT | self-attention and a tiny GPT, trained; its attention maps and backward graph drawn |
# | 15 compile | `tg.compile`: an eager run traced into a graph, guards, graph breaks, a compiled step |
# | 16 anatomy | a tensor as a window on its storage: strides, views, versions, node metadata |
# | 17 graph to loops | fusion: the kernels a compiler writes, the bytes they save, one by hand |
#
# In short: lessons 2 and 3 open up the top and the bottom half of the picture above,
# lesson 4 puts them back together, and lessons 5 to 8 go deeper and put them to work.
# Lesson 9, in three parts (9a to 9c, one sitting each), builds on lesson 8 (the symbolic
# engine as a small compiler), lesson 10 on lesson 5 (the eager engine across devices and
# threads); lesson 11 takes lesson 6's training loop to convolutional networks, and lesson 12
# turns the renderer on PyTorch's own graphs. Lesson 14 builds a small GPT the way PyTorch
# users write one; lesson 15 joins the two engines, the way `torch.compile` does; lesson 16
# opens up a tensor and a node.
# **Coming from PyTorch?** Read lesson 13 next: it runs the PyTorch code you already write
# (`nn.Module`, `F.cross_entropy`, `optim.Adam`, `no_grad()`) on this library, beside PyTorch.
# Every lesson has small exercises with checks like the one below.

# %% [markdown]
# ### Exercise 0.1 — the seed example by hand
#
# Write `seed_by_hand(a, b, c)` that computes $E = ((A + B) \odot C)\,(A + C)$ from three
# numpy arrays with **numpy only** (`*` is numpy's elementwise product, `@` its matrix
# product). The check compares it with what the eager engine computes, on the inputs above
# and on random $3 \times 3$ matrices.

# %%
def seed_by_hand(a, b, c):
    # BEGIN SOLUTION
    return ((a + b) * c) @ (a + c)
    # END SOLUTION


# %%
ex.seed_by_hand.check(seed_by_hand)
summary(ex);
