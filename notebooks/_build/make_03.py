"""Writes notebooks/03_ops_as_nodes.ipynb (see nbgen.py for how to execute it)."""

from nbgen import Lesson

L = Lesson()
L.md(r"""
# Lesson 3 — Ops as nodes: the eager engine

The **eager** engine (PyTorch's and Paddle dygraph's design) computes numbers at once, and
records the backward pass as a side effect:

* each op on a tensor that requires grad creates a **backward node** (`MulBackward`,
  `ExpBackward`, ...) and stores it in the result's `grad_fn`;
* a node's `next_functions` are its outgoing edges: one `(node, input_nr)` per forward input,
  saying where that input's gradient goes next;
* a **leaf** (a tensor you made, with `requires_grad=True`) ends in an `AccumulateGrad` node,
  which adds the gradient into `leaf.grad`;
* `loss.backward()` runs this graph once.
""")
L.code(r"""
import numpy as np

import tinygrad_edu as tg
from tinygrad_edu import viz
from tinygrad_edu.eager import Observer, observe
from tinygrad_edu.lessons import check, check_true, summary
""")
L.code(r"""
x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
w = tg.tensor([0.5, -1.0, 2.0], requires_grad=True)
h = x * w
loss = (h.exp() + x).sum()
print("loss.grad_fn         :", loss.grad_fn)
print("its next_functions   :", loss.grad_fn.next_functions)
print("h.grad_fn            :", h.grad_fn.name(), "sequence_nr", h.grad_fn.sequence_nr)
print("x is a leaf          :", x.is_leaf, "  h is a leaf:", h.is_leaf)
acc = h.grad_fn.next_functions[0][0]
print("x's AccumulateGrad   :", acc.name(), "-> its .variable is x:", acc.variable is x)
""")
L.md(r"""
## The drawing

Boxes are backward nodes; the arrow from a node to the next says "my gradient for input
`input_nr` goes there". With `show_saved=True` each box also lists what it keeps for the
backward pass: `MulBackward` needs both inputs, `ExpBackward` keeps its *output*
($\frac{d}{dx}e^x = e^x$), `AddBackward` keeps nothing (only shapes).
""")
L.code(r"""
viz.draw(loss, names={"x": x, "w": w}, show_saved=True)
""")
L.md(r"""
## Walking the graph by hand

`next_functions` is all the engine needs. Here is a depth-first listing:
""")
L.code(r"""
def walk(node, depth=0, seen=None):
    seen = set() if seen is None else seen
    extra = f" -> .grad of a leaf" if hasattr(node, "variable") else ""
    print("  " * depth + f"{node.name()} (#{node.sequence_nr}){extra}")
    if node in seen:
        return
    seen.add(node)
    for nxt, nr in node.next_functions:
        if nxt is not None:
            walk(nxt, depth + 1, seen)


walk(loss.grad_fn)
""")
L.md(r"""
## The backward stepper

`viz.BackwardStepper.record(loss)` runs `backward()` with an observer attached and keeps a
frame for every node the engine runs: which node runs, the **dependency counts** (how many
gradients each node still waits for), the **ready queue**, and the gradients arriving in the
input buffers. Below: one frame, then the slider (in a live notebook, drag it).
""")
L.code(r"""
x.grad = w.grad = None
loss = (( x * w).exp() + x).sum()
stepper = viz.BackwardStepper.record(loss, names={"x": x, "w": w})
print(len(stepper), "frames")
print(stepper.caption(2))
stepper.draw(2)
""")
L.code(r"""
stepper.widget()
""")
L.md(r"""
**Exercise 3.1.** The engine always runs the ready node with the **highest sequence number**
first. Write `run_order(root)` that simulates it: start from `root`, count how many edges lead
into each node, and repeatedly take the ready node (count reached zero) with the highest
`sequence_nr`. Return the list of node names in the order they would run (the root first).
""")
L.code(r"""
def run_order(root):
    # BEGIN SOLUTION 3.1
    deps, stack, seen = {}, [root], {root}
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    ready, order = [root], []
    while ready:
        ready.sort(key=lambda n: n.sequence_nr)
        node = ready.pop()
        order.append(node.name())
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            deps[nxt] -= 1
            if deps[nxt] == 0:
                ready.append(nxt)
    return order
    # END SOLUTION
""")
L.code(r"""
a = tg.tensor([1.0, 2.0], requires_grad=True)
b = tg.tensor([3.0, 4.0], requires_grad=True)
out = ((a * b).tanh() * a + b.exp()).sum()
ran = []


class Record(Observer):
    def node_started(self, task, node, grads):
        if node is not task.root:
            ran.append(node.name())


with observe(Record()):
    out.backward()
check("your run order matches the engine's", run_order(out.grad_fn), ran)
summary();
""")
L.write("03_ops_as_nodes.ipynb")
