"""Writes notebooks/04_two_forms.ipynb (see nbgen.py for how to execute it)."""

from nbgen import Lesson

L = Lesson()
L.md(r"""
# Lesson 4 — The two forms side by side

One computation, two graphs. Lessons 2 and 3 built each form on its own; here we put them
next to each other on the seed example

$$D = (A + B) \odot C, \qquad E = D\,(A + C),$$

check that they agree to the last bit, and ask when each one is the better tool.
""")
L.code(r"""
import numpy as np

import tinygrad_edu as tg
from tinygrad_edu import symbolic as S
from tinygrad_edu import viz
from tinygrad_edu.lessons import check, check_true, summary

inputs = viz.examples.seed_inputs()
seed = viz.examples.seed
viz.draw_both(seed, **inputs)
""")
L.md(r"""
Read the two drawings against each other:

| | symbolic (left) | eager (right) |
|---|---|---|
| a box is | a tensor: `A`, `(A+B)`, `D`, `E`, `∂E/∂D` ... | a backward step: `MatMulBackward`, `MulBackward` ... |
| an arrow is | "this tensor is an input of that op" | "my gradient goes there" (`next_functions`) |
| `A` used twice | two partial adjoints, summed by an `add` node | two gradients summed in `AccumulateGrad(A)`'s input buffer |
| the gradient | more boxes (dashed), to be run by an `Executor` | numbers in `A.grad` after one `backward()` |
| matmul's transposes | explicit in the gradient graph: `matmul(g, B, trans_B=True)` | hidden inside `MatMulBackward` |

Both run **the same derivative rules**: each op in `tinygrad_edu/ops/` has one `vjp`, which
the symbolic engine runs on nodes (building the gradient graph) and the eager engine on raw
arrays (computing numbers).
""")
L.md(r"""
## Same numbers
""")
L.code(r"""
# symbolic: build, differentiate (more graph), then run
A, B, C = (S.Variable(k) for k in "ABC")
E = seed(A, B, C)
grads_sym = S.Executor(S.gradients(E, [A, B, C])).run({A: inputs["A"], B: inputs["B"],
                                                        C: inputs["C"]})
# eager: run (and record), then backward
tA, tB, tC = (tg.tensor(inputs[k], requires_grad=True) for k in "ABC")
seed(tA, tB, tC).sum().backward()
for name, gs, t in zip("ABC", grads_sym, (tA, tB, tC)):
    check(f"dE/d{name}: symbolic == eager", gs, t.grad.numpy(), atol=0, rtol=0)
""")
L.md(r"""
## When each form wins

**Eager** is *define-by-run*: the graph is whatever your Python code did this time. Loops,
`if`s on values, early exits and printing in the middle all just work, and errors point at
the line that caused them. This is why research code moved to eager engines.

**Symbolic** knows the whole computation before running it. That allows planning: choosing an
evaluation order once, reusing memory, fusing ops, running on another device or in another
language, saving the graph to a file (ONNX, lesson 8). The gradient being a graph also makes
higher-order derivatives and graph surgery natural.

A value-dependent loop shows the difference. Newton's method for $\sqrt{a}$ stops when the
update is small — how many steps it takes depends on the numbers:
""")
L.code(r"""
def newton_sqrt(a, tol=1e-10):
    x = a * 0.5 + 0.5
    steps = 0
    while True:
        new = (x + a / x) * 0.5
        steps += 1
        if abs(float((new - x).item())) < tol:  # a decision on a *value*
            return new, steps
        x = new


a = tg.tensor(2.0, dtype="float64", requires_grad=True)
root, steps = newton_sqrt(a)
root.backward()
print(f"sqrt(2) = {root.item():.12f} after {steps} steps; d sqrt(a)/da = {a.grad.item():.6f}")
check("d sqrt(a)/da = 1/(2 sqrt(a))", a.grad.item(), 1 / (2 * np.sqrt(2.0)), atol=1e-9)
""")
L.md(r"""
In the symbolic engine, `float(...)` has nothing to convert: `new - x` is a node, not a
number, so the loop cannot decide when to stop while the graph is being built. A static graph
needs the loop as an op of its own (TensorFlow's `while_loop`, ONNX's `Loop`), or a fixed
number of steps unrolled in advance:
""")
L.code(r"""
s = S.Variable("a")
x = s * 0.5 + 0.5
for _ in range(6):  # unrolled: the same 6 steps for every input
    x = (x + s / x) * 0.5
(dx,) = S.gradients(x, [s])
value, grad = S.Executor([x, dx]).run({s: np.array(2.0)})
print(f"unrolled: sqrt(2) = {value:.12f}, derivative {grad:.6f}")
print("graph size:", len(S.Executor([x, dx]).order), "nodes")
""")
L.md(r"""
**Exercise 4.1.** Write `softplus_sum(X, W)` $= \sum \log(1 + e^{XW})$ using only operators
and methods both engines share (`@`, `+`, `.exp()`, `.log()`, `.sum()`), so the same function
runs in both engines. The check compares the gradients the two engines compute.
""")
L.code(r"""
def softplus_sum(X, W):
    # BEGIN SOLUTION 4.1
    return ((X @ W).exp() + 1).log().sum()
    # END SOLUTION
""")
L.code(r"""
rng = np.random.default_rng(4)
xv, wv = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
X, W = S.Variable("X"), S.Variable("W")
sym_gw = S.Executor(S.gradients(softplus_sum(X, W), [W])).run({X: xv, W: wv})[0]
tw = tg.tensor(wv, requires_grad=True)
softplus_sum(tg.tensor(xv), tw).backward()
check("dL/dW: symbolic == eager", sym_gw, tw.grad.numpy(), atol=1e-12)
viz.draw_both(softplus_sum, X=xv, W=wv)
""")
L.code(r"""
summary();
""")
L.write("04_two_forms.ipynb")
