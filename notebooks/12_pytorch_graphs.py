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
# # Lesson 12 — Draw your PyTorch model
#
# A PyTorch tensor's `grad_fn` graph is an op-as-node graph built exactly like our eager
# engine's (lesson 3): backward nodes (`MulBackward0`), edges `next_functions = ((node,
# input_nr), ...)`, `AccumulateGrad` nodes whose `.variable` is a leaf, values saved for
# backward, a sequence number per node. So everything the renderer does for our graphs it does
# for PyTorch's, and you can keep training in PyTorch and still look inside. This lesson:
#
# 1. draws a PyTorch model's graph, with its saved values, next to ours;
# 2. compares the order backward runs in, our engine's rules against what PyTorch does;
# 3. walks a `grad_fn` graph to find which parameters a loss reaches (a detached layer!);
# 4. moves tensors between the libraries without copies (DLPack), and shows what that means
#    for version counters.
#
# PyTorch is optional for the library. Without it this lesson still runs: the cells that need
# it say how to install it, and the exercises are checked on our own graphs.

# %%
import numpy as np

import tinygrad_edu as tg
from tinygrad_edu import viz
from tinygrad_course.lessons import check, check_true, summary
from tinygrad_course.lessons import lesson12 as ex
from tinygrad_edu.viz.examples import seed, seed_inputs

try:
    import torch
    from torch import nn as tnn
except ImportError:
    torch = None


def have_torch(what: str) -> bool:
    """True when PyTorch is installed; otherwise say what needs it and how to install it."""
    if torch is None:
        print(f'{what} needs PyTorch (CPU build): pip install torch --index-url https://download.pytorch.org/whl/cpu')
    return torch is not None


print("PyTorch", torch.__version__ if torch is not None else "is not installed")

# %% [markdown]
# ## 1. One call draws a PyTorch graph
#
# `viz.draw(t)` takes any tensor with a `grad_fn`, usually the loss. `params=` names the
# leaves (PyTorch tensors carry no names of their own), and `show_saved=True` lists what each
# node keeps for backward, under PyTorch's own names: `_saved_mat1` shows as `saved mat1: 5×8`
# with its values, `_saved_self_sym_sizes` as `keeps shape of self`.

# %%
if have_torch("Drawing a PyTorch model"):
    torch.manual_seed(0)
    mlp = tnn.Sequential(tnn.Linear(4, 8), tnn.ReLU(), tnn.Linear(8, 3))
    loss = tnn.functional.cross_entropy(mlp(torch.randn(5, 4)), torch.tensor([0, 2, 1, 1, 0]))
    dot = viz.draw(loss, params=mlp.named_parameters(), names={"loss": loss}, show_saved=True)
else:
    dot = None
dot

# %% [markdown]
# Read it bottom-up as the forward pass, top-down as the backward. `AddmmBackward0` is
# `Linear`'s fused $b + x W^\top$ (`input 0` the bias, `input 1` the layer's input,
# `input 2` the transposed weight); the transpose is its own node, `TBackward0`. The input
# batch needs no gradient, so the first `AddmmBackward0` has no `input 1` arrow, and the other
# arrows keep their numbers.
#
# Our engine and PyTorch's, side by side, for lesson 0's $D = (A + B) \odot C$,
# $E = D\,(A + C)$: the same boxes and arrows. PyTorch's names end in `0` (the first
# overload of an op's backward), and it calls the matrix product `MmBackward0`.

# %%
viz.draw_both(seed, forms=("eager", "torch"), **seed_inputs()) \
    if have_torch("Drawing both engines") else None

# %% [markdown]
# ## 2. The order backward runs in
#
# Lesson 3 gave our engine's rules: count each node's incoming edges first; a node is ready
# when all its gradients have arrived; of the ready nodes, the one with the highest
# `sequence_nr` (created last) runs first; every `AccumulateGrad` has the largest number,
# $2^{64}-1$, so a leaf's gradient lands in `.grad` as soon as it is complete. PyTorch's engine
# follows the same rules. `viz.draw_backward_order(t)` numbers each node by when **our** engine
# would run it — for a PyTorch graph too — and `viz.torch_run_order(t)` runs PyTorch's real
# backward with a hook on every node and reports the order **PyTorch** ran them in.

# %%
if have_torch("Comparing with PyTorch's order"):
    torch.manual_seed(0)
    cnn = tnn.Sequential(tnn.Conv2d(1, 4, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
                         tnn.Flatten(), tnn.Linear(64, 10))
    cnn_loss = tnn.functional.cross_entropy(cnn(torch.randn(2, 1, 8, 8)), torch.tensor([1, 2]))
    order = viz.draw_backward_order(cnn_loss, params=cnn.named_parameters())
    ran = [type(node).__name__ for node in viz.torch_run_order(cnn_loss)]
    print(f"{'#':>2}  {'our rules':<30} PyTorch ran")
    for k, (ours, theirs) in enumerate(zip(order.order, ran), 1):
        print(f"{k:>2}  {ours:<30} {theirs}")
    check("our engine's order is PyTorch's, node for node", order.order, ran)
else:
    order = None
order

# %% [markdown]
# The loss, the log-softmax and the linear layer run first; the linear layer's bias is
# accumulated at once and its weight right after the transpose (an `AccumulateGrad` has the
# highest number, so it jumps the queue as soon as it is ready); then come the view, the pool,
# the ReLU and the convolution, whose weight and bias are last. The order matters in
# practice: it is the order in which parameter gradients become final, which is what
# distributed training overlaps its communication with.
#
# ## 3. Which parameters does the loss reach?
#
# A frequent bug: part of a model gets no gradient — a `.detach()` or a `.numpy()` round trip
# in the forward pass, a parameter created with `requires_grad=False`. Training then runs, the
# loss even drops a little, and that part never learns. The graph says it at once: a leaf gets
# a gradient exactly when an `AccumulateGrad` node for it is reachable from the loss.
#
# ### Exercise 12.1 — which parameters does the loss reach?
#
# Write `parameters_reached(loss)`: the leaf tensors whose `.grad` a backward from `loss`
# would fill, each once. Start at `loss.grad_fn`; follow `node.next_functions`, a tuple of
# `(node, input_nr)` pairs, where `node` is `None` for an input that needs no gradient; a
# node with a `.variable` attribute is an `AccumulateGrad`, and `.variable` is its leaf. Walk
# with an explicit stack (graphs can be thousands of nodes deep) and keep a set of the nodes
# seen. It must work on our tensors and on PyTorch's: they have the same attributes.

# %%
def parameters_reached(loss):
    # BEGIN SOLUTION
    found, seen, stack = [], set(), [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if hasattr(node, "variable"):
            found.append(node.variable)
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return found
    # END SOLUTION


# %%
ex.parameters_reached.check(parameters_reached)

# %% [markdown]
# Here is the bug in a PyTorch model: the first layer's output goes through `.numpy()` on its
# way to the second (to "log" it), which leaves PyTorch's graph. Which parameters still learn?

# %%
reached = ex.parameters_reached.use(parameters_reached)
if have_torch("Finding a detached layer"):
    torch.manual_seed(1)
    first, second = tnn.Linear(4, 3), tnn.Linear(3, 2)
    hidden = torch.relu(first(torch.randn(5, 4)))
    logged = torch.tensor(hidden.detach().numpy())          # the round trip through numpy
    bad_loss = (second(logged) ** 2).sum()
    names = {**{f"first.{k}": v for k, v in first.named_parameters()},
             **{f"second.{k}": v for k, v in second.named_parameters()}}
    learning = {id(t) for t in reached(bad_loss)}
    for name, p in names.items():
        print(f"{name:<14} {'gets a gradient' if id(p) in learning else 'NO GRADIENT'}")
    check_true("the first layer is cut off", id(first.weight) not in learning)
    bad = viz.draw(bad_loss, params=names.items())
else:
    bad = None
bad

# %% [markdown]
# The drawing shows it too: only `second`'s weight and bias hang below the loss.
#
# ## 4. One buffer, two libraries: DLPack
#
# DLPack is the standard way for array libraries to hand each other memory: an object with
# `__dlpack__` can be wrapped by another library **without a copy**. `tg.from_dlpack(x)` wraps
# any such object (a PyTorch tensor, a numpy or CuPy array) in one of our tensors, and our
# `Tensor` has `__dlpack__` and `__dlpack_device__`, so `torch.from_dlpack(t)` and
# `np.from_dlpack(t)` wrap ours. It is one buffer, seen by two libraries:

# %%
if have_torch("Sharing with PyTorch"):
    x = torch.arange(6.0).reshape(2, 3)
    t = tg.from_dlpack(x)              # ours, on x's memory
    x[0, 0] = 100.0                    # PyTorch writes ...
    print("ours sees PyTorch's write:", t.numpy()[0, 0])
    back = torch.from_dlpack(t.T)      # ... and back: a strided view of the same memory
    print("PyTorch sees ours, transposed:\n", back)
    check_true("the three share one buffer", back.data_ptr() == x.data_ptr())

# %% [markdown]
# PyTorch refuses to export a tensor that requires grad (the importer could change it behind
# autograd's back); the error says what to do: pass `x.detach()`, the same memory outside
# PyTorch's graph, then call `.requires_grad_()` on ours if our engine should track it.
#
# ### Exercise 12.2 — one buffer, two libraries
#
# Write `as_ours(x)`: our tensor on the memory of `x` — a numpy array, or a PyTorch tensor
# that may require grad — that our engine tracks (a leaf with `requires_grad`). Do not copy:
# the check writes into `x` and looks for the change in yours. Numpy arrays have no
# `.detach()`; detach only what has one.

# %%
def as_ours(x):
    # BEGIN SOLUTION
    if hasattr(x, "detach"):
        x = x.detach()
    return tg.from_dlpack(x).requires_grad_()
    # END SOLUTION


# %%
ex.as_ours.check(as_ours)

# %% [markdown]
# ### Shared buffers and version counters
#
# Lesson 5's safety net: a value saved for backward remembers its tensor's **version**, every
# in-place op bumps it, and backward refuses to use a value changed since it was saved. Each
# library keeps its **own** counter, and neither sees the other's in-place ops. Below, our
# `w * w` saves `w` (the derivative of $w^2$ is $2w$), then the shared buffer is changed in
# place, once by us and once by PyTorch:

# %%
share = ex.as_ours.use(as_ours)
src = np.ones(3, dtype=np.float32) if torch is None else torch.ones(3)

w = share(src)
out = (w * w).sum()
with tg.no_grad():
    w.add_(1.0)                         # our in-place op: our counter moves
try:
    out.backward()
except RuntimeError as error:
    print("ours noticed:", str(error).split(". Fix")[0])

if have_torch("The other half of the demonstration"):
    src = torch.ones(3)
    w = share(src)
    out = (w * w).sum()
    src.add_(1.0)                       # PyTorch's in-place op: our counter does not move
    out.backward()
    print("after PyTorch's write, w.grad =", w.grad, "but at w = 1 it should be 2")

# %% [markdown]
# The second backward ran with the new value (2) instead of the saved one (1) and gave a wrong
# gradient, silently. When two libraries share a buffer:
#
# - make in-place changes on our side, inside `tg.no_grad()`, so our counter moves and a
#   backward that needs the old value fails loudly;
# - or finish the backward before the other library writes;
# - or break the sharing: `tg.from_dlpack(x, copy=True)`, or `t.clone()`.

# %%
summary(ex);
