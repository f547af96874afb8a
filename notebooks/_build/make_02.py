"""Writes notebooks/02_tensors_as_nodes.ipynb (see nbgen.py for how to execute it)."""

from nbgen import Lesson

L = Lesson()
L.md(r"""
# Lesson 2 — Tensors as nodes: the symbolic engine

In the **symbolic** engine (the design of CSE599W's assignment and of Paddle Fluid's static
graphs) you first *describe* a computation, then run it:

* a **node** is a tensor that *will* exist: a `Variable` you feed later, or the result of an op;
* an **edge** connects a node to the op's inputs;
* `gradients(y, xs)` does not compute numbers: it **adds nodes** to the graph, one per
  gradient, using each op's derivative rule. The gradient is itself a graph — you can run it,
  draw it, and differentiate it again;
* an `Executor` sorts the graph once and evaluates it for whatever you feed.
""")
L.code(r"""
import numpy as np

from tinygrad_edu import symbolic as S
from tinygrad_edu import viz
from tinygrad_edu.lessons import check, check_true, numeric_gradient, summary
""")
L.md(r"""
## Building a graph

Nothing below computes a number. `x` and `w` are placeholders; `y` is a node that records
"`exp` of the product, plus `x`". Python operators and methods build nodes.
""")
L.code(r"""
x = S.Variable("x")
w = S.Variable("w")
y = (x * w).exp() + x
print(y, "is a node made by op", y.op.name, "from", [str(i) for i in y.inputs])
viz.draw(y)
""")
L.md(r"""
## Running it: the Executor

`Executor(nodes)` computes a topological order once (an explicit stack, no recursion, so a
100,000-deep graph is fine). `run(feed)` evaluates every node in that order. One executor serves
feeds of different shapes: shapes are not fixed until numbers arrive.
""")
L.code(r"""
ex = S.Executor([y])
print("order:", [str(n) for n in ex.order])
print(ex.run({x: 1.0, w: 2.0}))
print(ex.run({x: np.array([1.0, 2.0, 3.0]), w: np.array([0.5, 0.0, -1.0])}))
""")
L.md(r"""
With `return_all=True` the executor hands back every node's value, and the drawing can show
them in the boxes:
""")
L.code(r"""
values = ex.run({x: np.array([1.0, 2.0]), w: np.array([0.5, -1.0])}, return_all=True)
viz.draw(y, values=values)
""")
L.md(r"""
## `gradients()` builds a graph

For $y = e^{xw} + x$:

$$\frac{\partial y}{\partial x} = w\,e^{xw} + 1, \qquad \frac{\partial y}{\partial w} = x\,e^{xw}.$$

`x` is used **twice** (in the product and in the sum), so it receives two *partial adjoints*,
one from each use; an explicit `add` node sums them. That node is yellow in the drawing.
""")
L.code(r"""
dx, dw = S.gradients(y, [x, w])
viz.draw([y, dx, dw], labels={dx: "∂y/∂x", dw: "∂y/∂w"})
""")
L.code(r"""
gx, gw = S.Executor([dx, dw]).run({x: 1.5, w: -0.5})
check("dy/dx at x=1.5, w=-0.5", gx, -0.5 * np.exp(-0.75) + 1)
check("dy/dw at x=1.5, w=-0.5", gw, 1.5 * np.exp(-0.75))
""")
L.md(r"""
Every node `gradients()` made is marked `is_gradient`; the sums of partial adjoints are
marked `is_adjoint_sum`. Counting them is a good way to see the fan-out rule at work:
""")
L.code(r"""
def count_adjoint_sums(nodes):
    order = S.Executor(nodes).order
    return sum(1 for n in order if n.is_adjoint_sum)


print("adjoint sums in the gradient graph:", count_adjoint_sums([dx, dw]))
""")
L.md(r"""
## Higher orders come free

Since $\partial y/\partial x$ is an ordinary node, `gradients()` can differentiate it again.
For $f(x) = x^3$: $f' = 3x^2$, $f'' = 6x$, $f''' = 6$.
""")
L.code(r"""
z = S.Variable("z")
f = z * z * z
(d1,) = S.gradients(f, [z])
(d2,) = S.gradients(d1, [z])
(d3,) = S.gradients(d2, [z])
print(S.Executor([d1, d2, d3]).run({z: 2.0}))
viz.draw([d2], labels={d1: "f'", d2: "f''"})
""")
L.md(r"""
**Exercise 2.1.** Build the graph of $g(a, b) = \tanh(a\,b) \cdot a$ from two Variables (use
operators and the `.tanh()` method), so that the checks below can differentiate it.
""")
L.code(r"""
def build_g(a, b):
    # BEGIN SOLUTION 2.1
    return (a * b).tanh() * a
    # END SOLUTION
""")
L.code(r"""
a, b = S.Variable("a"), S.Variable("b")
g = build_g(a, b)
ga, gb = S.gradients(g, [a, b])
point = [np.array(0.7), np.array(-1.3)]
got = S.Executor([ga, gb]).run({a: point[0], b: point[1]})
fd = numeric_gradient(lambda av, bv: float(S.Executor([g]).run({a: av, b: bv})[0]), point)
check("dg/da against finite differences", got[0], fd[0], atol=1e-5)
check("dg/db against finite differences", got[1], fd[1], atol=1e-5)
""")
L.md(r"""
**Exercise 2.2.** In your graph of $g$, the Variable `a` is used twice. How many
`is_adjoint_sum` nodes does `gradients(g, [a, b])` create? Predict first, then count.
""")
L.code(r"""
def predicted_adjoint_sums():
    # BEGIN SOLUTION 2.2
    return 1
    # END SOLUTION
""")
L.code(r"""
check("adjoint sums for g", predicted_adjoint_sums(), count_adjoint_sums([ga, gb]))
summary();
""")
L.write("02_tensors_as_nodes.ipynb")
