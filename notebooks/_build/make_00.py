"""Writes notebooks/00_setup.ipynb (see nbgen.py for how to execute it)."""

from nbgen import Lesson

L = Lesson()
L.md(r"""
# Lesson 0 — Setup, and a first picture

This lesson checks that everything is installed, then draws the one picture the whole course
keeps coming back to: the same small computation as **two different graphs**.

If a cell fails here, the message says what to install. (From the repository root,
`make demo` and `make test` set everything up: a virtual environment, the package, and
Graphviz's `dot` program, which draws the graphs.)
""")
L.code(r"""
import platform
import shutil

import numpy as np

import tinygrad_edu as tg
from tinygrad_edu import symbolic as S
from tinygrad_edu import viz
from tinygrad_edu.lessons import check, check_true, summary

print("python      ", platform.python_version())
print("numpy       ", np.__version__)
print("tinygrad_edu", tg.__version__)
print("dot         ", shutil.which("dot") or "MISSING: apt-get install graphviz")
""")
L.code(r"""
check_true("Graphviz's dot program is installed", shutil.which("dot") is not None,
           hint="install it: 'sudo apt-get install graphviz' or 'brew install graphviz'")
""")
L.md(r"""
## The seed example

Three 2×2 matrices $A, B, C$ and two lines of arithmetic:

$$D = (A + B) \odot C, \qquad E = D\,(A + C)$$

($\odot$ is the elementwise product, $D\,(A+C)$ a matrix product.) The function below is
plain Python: it only uses operators, so it runs on the *symbolic* engine's nodes and on the
*eager* engine's tensors alike.
""")
L.code(r"""
inputs = viz.examples.seed_inputs()
for name, value in inputs.items():
    print(f"{name} =\n{value}")


def seed(A, B, C):
    D = (A + B) * C
    E = D @ (A + C)
    return E
""")
L.md(r"""
`viz.draw_both` runs it twice, once per engine, computes the gradients of $\sum E$ with
respect to $A, B, C$ in both, and draws the two graphs side by side.

* **Left, symbolic: tensors are the nodes.** Every box is a value ($A$, $A+B$, $D$, $E$, ...);
  the little circles are the ops joining them. `gradients()` does not compute numbers: it
  *adds more boxes* (orange, dashed) for $\partial E/\partial D$, $\partial E/\partial A$ ...
  Because $A$ is used twice, its gradient is the sum of two partial adjoints: the yellow
  boxes at the bottom.
* **Right, eager: backward ops are the nodes.** Every box is a step of the backward pass
  (`MatMulBackward`, `MulBackward`, ...), recorded while the forward ran; an arrow says where
  that step sends its gradient. `AccumulateGrad` nodes add into the leaves' `.grad`.
""")
L.code(r"""
viz.draw_both(viz.examples.seed, **inputs)
""")
L.md(r"""
Both engines compute the same numbers. The eager engine has them right after `backward()`:
""")
L.code(r"""
A, B, C = (tg.tensor(inputs[k], requires_grad=True) for k in "ABC")
E = seed(A, B, C)
E.sum().backward()
print("dE/dA =\n", A.grad.numpy())
""")
L.md(r"""
**Exercise 0.1.** Compute $E$ for the seed inputs with plain numpy (no tinygrad_edu): fill in
`seed_numpy`. `@` is numpy's matrix product too.
""")
L.code(r"""
def seed_numpy(A, B, C):
    # BEGIN SOLUTION 0.1
    D = (A + B) * C
    return D @ (A + C)
    # END SOLUTION
""")
L.code(r"""
check("E computed with numpy", seed_numpy(*(inputs[k] for k in "ABC")), E.numpy(), atol=1e-5)
""")
L.md(r"""
## What comes next

| lesson | what you will see |
|---|---|
| 01 | derivatives, the chain rule, finite differences |
| 02 | tensors as nodes: symbolic graphs, `gradients()` builds a graph, higher orders |
| 03 | ops as nodes: the eager engine, `grad_fn`, `next_functions`, the backward stepper |
| 04 | the two forms side by side, and when each one wins |
| 05 | inside the backward engine: dependency counts, the ready queue, hooks, in-place ops |
| 06 | training an MLP on handwritten digits, in both engines |
| 07 | the GPU with CuPy |
| 08 | static graphs then and now: CSE599W, Paddle Fluid, ONNX |
""")
L.code(r"""
summary();
""")
L.write("00_setup.ipynb")
