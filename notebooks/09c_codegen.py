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
# # Lesson 9c — Code generation and ONNX
#
# *Lesson 9, the static-graph compiler, comes in three parts: [9a](09a_programs.ipynb) the
# program and its control flow, [9b](09b_passes.ipynb) graph passes and memory planning,
# **9c** code generation and ONNX.*
#
# The last stage of a compiler translates: the graph, optimised and planned, becomes a program
# in another language. This part translates it twice — into straight-line Python source that
# runs without an interpreter loop, and into an ONNX file that a runtime knowing nothing about
# this library runs. It builds on lesson 8 (the `Executor`, ONNX's tensor-as-node style); part
# [9b](09b_passes.ipynb)'s `optimize` appears in one line and its memory plan in one sentence,
# so this part can be read first.
#
# | section | what it shows |
# |---|---|
# | [1. Code generation](#1.-Code-generation) | the graph as straight-line Python source |
# | [2. ONNX](#2.-ONNX:-the-graph-as-a-file) | the graph as a file any runtime can run |

# %%
import tempfile
from pathlib import Path

import numpy as np

from tinygrad_edu import symbolic as S
from tinygrad_edu import viz
from tinygrad_course.lessons import check
from tinygrad_edu.symbolic import Executor, Variable, gradients, optimize

# %% [markdown]
# The graph we translate is part 9b's layer: $h = \tanh(XW)$, its loss $L = \sum_{ij} h_{ij}^2$
# and the loss's gradient with respect to the weights, $\partial L/\partial W = X^\top\big(2h
# \odot (1 - h^2)\big)$, made smaller by `optimize`. Each op (a circle) of the drawing becomes
# one line of the source that section 1 generates.

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
viz.draw(layer, labels={layer[1]: "∂loss/∂W"})

# %% [markdown]
# ## 1. Code generation
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
# ## 2. ONNX: the graph as a file
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
# do the same with many more ops and passes, and with machine code instead of Python. Lesson 15
# puts this compiler behind the eager engine (`tg.compile`), and lesson 17 fuses its lines
# into loop kernels.
