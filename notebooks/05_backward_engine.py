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
# # Lesson 5 — Inside the backward engine
#
# `loss.backward()` looks like one call. Inside, the eager engine runs a small scheduler over the
# graph of backward nodes that the forward pass recorded. This lesson opens it up:
#
# 1. **dependency counts** — how many gradients each node waits for;
# 2. the **ready queue**, ordered by sequence number;
# 3. **input buffers**, where the gradients of a value used twice are summed;
# 4. **`retain_graph`** — why a second backward fails, and how to allow it;
# 5. **hooks** on tensors and nodes, and the order they run in;
# 6. **in-place ops and version counters**;
# 7. **reference cycles and memory** — why an unreachable graph disappears at once;
# 8. **anomaly mode** — finding the node that produced a NaN.
#
# Read the engine next to this lesson. Its core, the loop this lesson steps through, is
# `tinygrad_edu/eager/engine.py`; what a real engine needs besides sits in modules beside it:
# one queue and thread per device (`engine_threads.py`, lesson 10), hooks (`engine_hooks.py`),
# anomaly mode and error messages (`engine_errors.py`), the observer the stepper listens to
# (`engine_observer.py`), and `backward()` itself (`backward.py`). The cell after the imports
# counts their lines.

# %%
import gc
import weakref

import numpy as np

import tinygrad_edu as tg
from tinygrad_edu import viz
from tinygrad_edu.eager import Observer, observe
from tinygrad_course.lessons import check, check_true, summary
from tinygrad_course.lessons import lesson05 as ex

# %%
import importlib
from pathlib import Path

parts = ["engine", "engine_threads", "engine_hooks", "engine_errors", "engine_observer", "backward"]
sizes = {}
for part in parts:
    path = Path(importlib.import_module(f"tinygrad_edu.eager.{part}").__file__)
    sizes[path.name] = len(path.read_text(encoding="utf-8").splitlines())
for name, n in sizes.items():
    print(f"{n:>5} lines  tinygrad_edu/eager/{name}")
print(f"{sum(sizes.values()):>5} lines  in all; the core is {sizes['engine.py']} of them, "
      "docstrings and comments included")


# %% [markdown]
# ## 1. The graph the engine runs
#
# We use one small computation all through the lesson. `a` is used three times and `c` twice,
# so their gradients are sums:
#
# $$c = a \odot b, \qquad d = c + a, \qquad L = \textstyle\sum_i d_i\, c_i .$$
#
# Each box is a backward node (`MulBackward0`, `AddBackward0`, ...); an arrow from a node points
# to where the gradient it computes flows next: the node's `next_functions`. The green boxes
# at the bottom are `AccumulateGrad` nodes, which add into a leaf's `.grad` (the blue boxes).

# %%
def make_graph():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = tg.tensor([3.0, 4.0], requires_grad=True)
    c = a * b
    d = c + a
    loss = (d * c).sum()
    a.name, b.name = "a", "b"
    NAMES.update(viz.node_names(loss))  # what the drawings call each node (see below)
    return a, b, loss


NAMES = {}
a, b, loss = make_graph()
viz.draw(loss)


# %% [markdown]
# Every node knows where its gradients go (`next_functions`: one `(node, input_nr)` per forward
# input) and when it was created (`sequence_nr`, a global counter). In what follows each node
# goes by the name the drawings give it (`viz.node_names`): `AccumulateGrad (a)` fills
# `a.grad`; two nodes of one type are told apart by a number in the order the code made them,
# `MulBackward0 #1` for $c = a \odot b$ and `MulBackward0 #2` for $d \odot c$.

# %%
def label(node):
    """The node's name in the drawings."""
    return "None" if node is None else NAMES.get(node, node.name())


def walk(node, depth=0, seen=None):
    seen = set() if seen is None else seen
    print("    " * depth + label(node) + ("  (seen above)" if node in seen else ""))
    if node in seen:
        return
    seen.add(node)
    for nxt, _ in node.next_functions:
        if nxt is not None:
            walk(nxt, depth + 1, seen)


walk(loss.grad_fn)


# %% [markdown]
# ## 2. Dependency counts
#
# Before anything runs, the engine walks the graph once from the root and counts, for every
# node, the **edges that lead into it**. A node may run only when all of them have delivered a
# gradient: then its input buffer holds the complete sum
# $\bar v = \sum_{\text{uses } u} \bar v_u$ and the chain rule can go on.
#
# The engine reports its steps to an optional `Observer`. Subclass it, override what you need,
# and run backward inside `with observe(obs):`. `task.dependencies` is the engine's live table
# of pending counts.

# %%
class PrintCounts(Observer):
    def begin(self, task):
        print("dependency counts before anything runs:")
        for node, count in task.dependencies.items():
            print(f"  {label(node):<28} waits for {count} gradient(s)")


a, b, loss = make_graph()
with observe(PrintCounts()):
    loss.backward()

# %% [markdown]
# `MulBackward0 #1` (the one for $c = a \odot b$) waits for two gradients: $c$ feeds both the
# `add` and the final `mul`. `AccumulateGrad (a)` waits for two as well: one from each op that
# used `a` directly.
#
# ### The stepper: watch the counts go down
#
# `viz.BackwardStepper.record(loss)` runs backward under an observer and keeps one frame per
# node the engine runs. Each frame shows the running node (orange), the nodes done (green
# border), the ready queue (cyan, with its position), the nodes still waiting (grey border),
# the counts still pending and what waits in each input buffer. Move the slider, or press play, to step through.

# %%
a, b, loss = make_graph()
stepper = viz.BackwardStepper.record(loss)
for i, frame in enumerate(stepper.frames):
    print(f"{i}: {frame.title}")
viz.stepper_frames(stepper)

# %% [markdown]
# Here is the start (the counts the engine computed, only the root is ready):

# %%
stepper.draw(0)

# %% [markdown]
# and the step where `AddBackward0` runs: the gradient it sends to `MulBackward0 #1` (the node of
# $c = a \odot b$) lands in a buffer that already holds one, so the two are **added** there,
# and that node's count drops to zero: it becomes ready.

# %%
step_add = next(i for i, f in enumerate(stepper.frames) if f.title.startswith("AddBackward0"))
stepper.draw(step_add)  # the caption is written under the drawing's title


# %% [markdown]
# ## 3. The ready queue: highest sequence number first
#
# Several nodes can be ready at once. The engine keeps them in a heap keyed by
# `-sequence_nr`, so it always runs **the ready node created last**. (`AccumulateGrad` nodes
# all carry the largest number, $2^{64}-1$, as in PyTorch: a leaf's gradient is added in as
# soon as it is complete. Equal numbers run in the order they became ready, so each heap entry
# is `(-sequence_nr, k, node)` with a counter `k`.) Creation order is a
# topological order of the forward graph, so reverse creation order is a natural order for
# the backward: it walks back through the computation the way it was written, finishing one
# branch's recent work before older work (good for memory: saved values are freed early).
# Correctness, though, comes only from the dependency counts: a node never runs before all its
# gradients arrived.

# %%
class RunOrder(Observer):
    def __init__(self):
        self.order = []

    def node_started(self, task, node, grads):
        queued = [label(n) for *_, n in sorted(task.ready, key=lambda entry: entry[:2])]
        self.order.append(label(node))
        print(f"run {label(node):<24} still ready: {queued}")


a, b, loss = make_graph()
with observe(RunOrder()):
    loss.backward()

# %% [markdown]
# In that graph the queue rarely holds more than one node. Two independent branches show the
# ordering better: `p` is computed before `q`, so `q`'s nodes have the higher sequence numbers
# and the engine finishes the whole `q` branch before it turns to `p`:

# %%
u = tg.tensor([0.5, -0.5], requires_grad=True)
v = tg.tensor([1.0, 2.0], requires_grad=True)
u.name, v.name = "u", "v"
p = (u.exp() * 2).sum()      # created first: lower sequence numbers
q = (v.tanh() * 3).sum()     # created second
total = p + q
NAMES.update(viz.node_names(total, names={"p": p, "q": q}))
with observe(RunOrder()):
    total.backward()


# %% [markdown]
# ## 4. Input buffers: summing fan-out
#
# A value used $k$ times receives $k$ gradients. The symbolic engine makes that sum an explicit
# `add` node in the gradient graph; the eager engine sums in the node's **input buffer**
# (`task.buffers[node]`, one slot per forward output) as gradients arrive, and runs the node
# once. `gradient_arrived(..., summed)` tells us when an arrival was added to one already
# waiting:

# %%
class Arrivals(Observer):
    def gradient_arrived(self, task, node, input_nr, grad, summed):
        what = "ADDED to the waiting one" if summed else "stored"
        print(f"{label(node):<22} gets {grad}  -> {what}; buffer now {task.buffers[node][0]}")


a, b, loss = make_graph()
with observe(Arrivals()):
    loss.backward()
print("a.grad =", a.grad, "  b.grad =", b.grad)

# %% [markdown]
# Check the engine against a derivation by hand: $L = \sum_i (a_i b_i + a_i)\,a_i b_i
# = \sum_i a_i^2 b_i^2 + a_i^2 b_i$, so $\partial L/\partial a = 2ab^2 + 2ab$ and
# $\partial L/\partial b = 2a^2 b + a^2$:

# %%
an, bn = a.detach().numpy(), b.detach().numpy()
check("dL/da", a.grad, 2 * an * bn**2 + 2 * an * bn)
check("dL/db", b.grad, 2 * an**2 * bn + an**2)

# %% [markdown]
# ## 5. `retain_graph`
#
# A node keeps what its derivative needs (`MulBackward0` keeps both inputs, `ExpBackward0` its
# output). After it runs, the values are no longer needed — **unless** you backward through the
# same graph again. By default (`retain_graph=False`) each node frees them as it runs, so the
# memory of a training step is returned during the backward. A second backward then fails:

# %%
x = tg.tensor([0.5, 1.0], requires_grad=True)
y = x.exp().sum()
y.backward()
try:
    y.backward()
except RuntimeError as e:
    print("RuntimeError:", e)

# %% [markdown]
# Pass `retain_graph=True` to every backward but the last. Gradients **accumulate** in `.grad`,
# so two backward passes give twice the gradient:

# %%
x = tg.tensor([0.5, 1.0], requires_grad=True)
y = x.exp().sum()
y.backward(retain_graph=True)
first = x.grad.numpy().copy()
y.backward()
check("two backward passes add up", x.grad, 2 * first)

# %% [markdown]
# ## 6. Hooks
#
# Hooks let you look at (or replace) gradients as they flow:
#
# * `tensor.register_hook(fn)`: `fn(grad)` when this tensor's gradient is complete;
# * `node.register_prehook(fn)`: `fn(grad_outputs)` before the node runs;
# * `node.register_hook(fn)`: `fn(grad_inputs, grad_outputs)` after it ran.
#
# Any of them may return a replacement. At one node the order is: **tensor hooks, pre-hooks,
# (retained grad), the node itself, post-hooks**. Let us log them all:

# %%
log = []
x = tg.tensor([1.0, 2.0], requires_grad=True)
h = x * 3
h.name = "h"
out = (h * h).sum()
NAMES.update(viz.node_names(out, names={"h": h}))

h.register_hook(lambda g: log.append(f"tensor hook on h: grad {g.numpy()}"))
h.grad_fn.register_prehook(lambda gouts: log.append(f"pre-hook of {label(h.grad_fn)}"))
h.grad_fn.register_hook(lambda gins, gouts: log.append(f"post-hook of {label(h.grad_fn)}: "
                                                       f"sends {gins[0].numpy()}"))
x.register_hook(lambda g: log.append(f"tensor hook on leaf x: grad {g.numpy()}"))
out.backward()
print("\n".join(log))

# %% [markdown]
# A hook that **returns** a value replaces the gradient. Doubling $h$'s gradient doubles
# everything behind it:

# %%
x = tg.tensor([1.0, 2.0], requires_grad=True)
h = x * 3
handle = h.register_hook(lambda g: g * 2)
(h * h).sum().backward()
check("hook doubled dL/dx (2 * 18x)", x.grad, 2 * 18 * x.detach().numpy())
handle.remove()  # a handle takes the hook out again


# %% [markdown]
# ### Exercise 5.1 — clip a gradient with a hook
#
# Write `clip_hook(limit)`, which returns a **hook**: a function that takes a gradient `g` (a
# tensor) and returns it clipped elementwise to $[-\text{limit}, \text{limit}]$. Clip with
# numpy, `np.clip(g.numpy(), ...)`, and wrap the result in `tg.tensor(...)`: a hook must
# return a tensor (or `None`, which keeps the gradient as it was). The check calls your hook
# on a gradient, then registers it on a leaf $x$ and runs the backward of
# $y = \sum_i (x_i^3 - 6 x_i)$, whose gradient $3x_i^2 - 6$ has both signs.

# %%
def clip_hook(limit):
    # BEGIN SOLUTION
    def hook(g):
        return tg.tensor(np.clip(g.numpy(), -limit, limit))

    return hook
    # END SOLUTION


# %%
ex.clip_hook.check(clip_hook)

# %% [markdown]
# ## 7. In-place ops and version counters
#
# `MulBackward0` for $a \odot b$ saved $a$ and $b$. If you change $a$ in place afterwards, the
# backward would multiply with the wrong numbers — silently. So every tensor carries a
# **version counter** (`t._counter`, a one-element list shared by every view and `detach()` of
# the same data; `t._version` reads it, as in PyTorch); each in-place op (`add_`, `mul_`, `+=`
# ...) bumps it, a saved value remembers the version it had, and backward compares:

# %%
x = tg.tensor([1.0, 2.0], requires_grad=True)
y = x.exp()              # ExpBackward0 saves its output y
print("y._version after exp:", y._version)
z = (y * 2).sum()        # MulBackward0 saves y as its input 0
y.mul_(2)
print("y._version after mul_:", y._version)
try:
    z.backward()
except RuntimeError as e:
    print("RuntimeError:", e)

# %% [markdown]
# The check is **lazy**: changing a value that nothing saved is fine (`y + 1` saves nothing).
# And a leaf that requires grad may not be changed in place while grad mode is on — that is why
# optimizers update parameters under `tg.no_grad()`:

# %%
x = tg.tensor([1.0, 2.0], requires_grad=True)
y = x + 1
y.mul_(3)                # nothing saved y: allowed
print("y.grad_fn after the in-place mul_:", y.grad_fn)
y.sum().backward()
check("d sum(3(x+1)) / dx", x.grad, [3.0, 3.0])
try:
    x.add_(1)
except RuntimeError as e:
    print("RuntimeError:", e)
with tg.no_grad():
    x.add_(1)
print("under no_grad:", x, " version", x._version)

# %% [markdown]
# ## 8. Reference cycles and memory
#
# A tensor points at its `grad_fn`; the node points at earlier nodes and the tensors it saved.
# If a node also held its **own output** strongly (ops like `exp`, `tanh`, `sigmoid` reuse their
# output), tensor and node would point at each other: a cycle, which plain reference counting
# never frees — the graph (and its arrays) would wait for Python's cycle collector.
# `tinygrad_edu/eager/node.py` avoids that:
#
# > NOTE [Saved outputs and reference cycles] — a node saves its *output* as the bare array
# > plus the version counter, and rebuilds a tensor only when a `create_graph=True` backward
# > needs one. Saved *inputs* are held as tensors: they point at earlier nodes only, so no
# > cycle forms. Likewise a leaf holds its `AccumulateGrad` node only weakly.
#
# We can watch it: keep only a **weak reference** to the node, switch the cycle collector off,
# and drop the last tensor. The node disappears at once:

# %%
x = tg.tensor(np.ones(1000, dtype=np.float32), requires_grad=True)
y = x.exp().tanh().sigmoid().sum()
nodes = []
node = y.grad_fn
while node is not None:
    nodes.append(weakref.ref(node))
    node = next((n for n, _ in node.next_functions if n is not None), None)
print("nodes alive before:", [r().name() for r in nodes if r() is not None])
node = None

gc.disable()
try:
    del y
    print("nodes alive after del y:", [r().name() for r in nodes if r() is not None])
finally:
    gc.enable()
check_true("the graph was freed by reference counting alone", all(r() is None for r in nodes))

# %% [markdown]
# Even `AccumulateGrad` went, although the leaf `x` is still alive: `x` holds it only weakly, so
# it lives exactly as long as some graph uses `x`.
#
# ## 9. Anomaly mode
#
# A NaN in a gradient usually appears far from its cause. Inside `with tg.detect_anomaly():`
# every node records the forward call that created it, and the engine checks every gradient a
# node returns: the **first** node that returns NaN raises an error naming itself and showing
# where it was created.
#
# Below, $\sqrt{x}$ at $x = 0$ has an infinite derivative, and it meets a zero coming down from
# `* 0`: $0 \cdot \infty = \text{NaN}$.

# %%
x = tg.tensor([0.0, 4.0], requires_grad=True)
with np.errstate(all="ignore"), tg.detect_anomaly():
    y = (x**0.5 * tg.tensor([0.0, 1.0])).sum()
    try:
        y.backward()
    except RuntimeError as e:
        message = str(e)
lines = message.splitlines()
print("\n".join(lines[:3] + ["  ..."] + lines[-2:]))  # the message, then the last frame
check_true("the error names the node that produced NaN", "PowBackward0" in message)

# %% [markdown]
# Without anomaly mode the same backward runs to the end and leaves a NaN in `x.grad`, with no
# hint of where it came from:

# %%
x = tg.tensor([0.0, 4.0], requires_grad=True)
with np.errstate(all="ignore"):
    (x**0.5 * tg.tensor([0.0, 1.0])).sum().backward()
print("x.grad =", x.grad)


# %% [markdown]
# ### Exercise 5.2 — the additions in the input buffers
#
# Write `buffer_additions(root)`: how many times, during `backward()` from `root`, does a
# gradient arrive at a node whose buffer **already holds one**, so that the engine adds the two?
# (The first gradient to arrive at a node is stored; each later one is added to it.) Walk the
# graph from `root` along `next_functions` with an explicit stack, as in lesson 3's
# `count_dependencies` (the root receives one gradient, the seed), and return a whole number.
#
# The check counts the engine's own additions (the `summed` flag of `gradient_arrived`, as in
# section 4) on three graphs, one of them 1500 nodes deep.

# %%
def buffer_additions(root):
    # BEGIN SOLUTION
    counts, stack = {root: 1}, [root]
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is None:
                continue
            if nxt not in counts:
                counts[nxt] = 0
                stack.append(nxt)
            counts[nxt] += 1
    return sum(k - 1 for k in counts.values())
    # END SOLUTION


# %%
ex.buffer_additions.check(buffer_additions)

# %%
summary(ex);
