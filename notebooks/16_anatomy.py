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
# # Lesson 16 — A tensor's anatomy
#
# Lessons 3 and 5 looked at the graph: nodes, edges, the engine that walks them. This lesson
# opens the two things the graph is made of, as PyTorch builds them (the design notes in
# `shared/seeds/`, seed 001 for PyTorch and seed 000 for Paddle, name every part):
#
# 1. **a tensor is a window on a storage**: sizes, strides and an offset over a block of
#    memory; a slice, a transpose, `expand` and `as_strided` are other windows on the same
#    block;
# 2. **the drawing** of a tensor: ours and PyTorch's, then in Paddle's names;
# 3. **what a view shares** with its base: the memory, and the version counter that guards
#    saved values; and why an in-place write into one output of `unbind` is refused;
# 4. **a node's anatomy**: its input metadata (which catches a wrong gradient),
#    `sequence_nr`, `topological_nr`, and calling a node on a gradient;
# 5. **`as_strided` and its gradient**, which assignment A5 asks you to write.
#
# Every number is compared with PyTorch's where PyTorch has it. The concordance
# (`docs/concepts/seeds.md`) lists every name the seeds use and where it lives here.

# %%
import numpy as np

import tinygrad_edu as tg
from tinygrad_edu import viz
from tinygrad_course.lessons import check, check_true, summary
from tinygrad_course.lessons import lesson16 as ex

try:
    import torch
except ImportError:  # the lesson runs without PyTorch; the comparisons are skipped
    torch = None


def have_torch(what: str) -> bool:
    """Whether PyTorch is here to compare with (and how to get it when it is not)."""
    if torch is None:
        print(f'{what} needs PyTorch (CPU build): pip install torch --index-url https://download.pytorch.org/whl/cpu')
    return torch is not None


def window(t) -> tuple:
    """A tensor's window on its storage, in PyTorch's words: (shape, stride, offset)."""
    return tuple(t.shape), tuple(t.stride()), t.storage_offset()


print("PyTorch", torch.__version__ if torch is not None else "is not installed")

# %% [markdown]
# ## 1. A window on a storage
#
# PyTorch's `TensorImpl` holds a **storage** (one block of memory, here a numpy array) and
# three numbers that say which elements of it the tensor shows: its **sizes** (`x.shape`),
# its **strides** (`x.stride()`: how many elements to step over in memory to move one
# place along each dim) and its **storage offset** (where its first element sits). Element
# $x[i_0, \dots, i_{n-1}]$ of a tensor with strides $s_0, \dots, s_{n-1}$ and offset $o$ is
# storage element
#
# $$o + \sum_{k=0}^{n-1} i_k \, s_k .$$
#
# A contiguous 3×4 tensor: one step along a row is 1 element, one step down a column a whole
# row, 4 elements.

# %%
b = tg.tensor(np.arange(12.0).reshape(3, 4))
print(b)
print("window", window(b), " contiguous:", b.is_contiguous())
print("storage:", b.untyped_storage())

# %% [markdown]
# A **view** is another window on the same storage: nothing is copied. A slice moves the
# offset and (with a step) multiplies a stride; a transpose swaps the strides; `expand`
# gives a dim stride **0**, so every index along it reads the same elements. Each view's
# `_base` is the tensor it was made from, and its storage's address is its base's:

# %%
views = {
    "b[1:, ::2]": lambda t: t[1:, ::2],
    "b.t()": lambda t: t.t(),
    "b[:, 1]": lambda t: t[:, 1],
    "b[:1].expand(3, 4)": lambda t: t[:1].expand(3, 4),
}
for what, make in views.items():
    v = make(b)
    same = v.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    print(f"{what:>20}: window {window(v)}  view of b: {v._base is b}  same memory: {same}")

# %% [markdown]
# PyTorch reports the same windows for the same views:

# %%
if have_torch("Comparing the windows with PyTorch's"):
    bt = torch.tensor(np.arange(12.0).reshape(3, 4))
    for what, make in views.items():
        ours, theirs = window(make(b)), window(make(bt))
        check(f"{what}: (shape, stride, offset) as PyTorch's", ours, theirs)

# %% [markdown]
# `is_contiguous()` is true only for the row-major window, strides as a fresh tensor of that
# shape would have them. A view that is not contiguous still works everywhere; `.contiguous()`
# copies it into a storage of its own when an op needs the row-major layout:

# %%
t = b.t()
c = t.contiguous()
print("b.t():", window(t), t.is_contiguous(), "  b.t().contiguous():", window(c),
      c.is_contiguous(), " its own storage:",
      c.untyped_storage().data_ptr() != b.untyped_storage().data_ptr())

# %% [markdown]
# ### Exercise 16.1 — the strides of a contiguous tensor
#
# Write `contiguous(shape)`: the strides (a tuple of ints, one per dim) of a contiguous
# tensor of that `shape`, as `tg.zeros(shape).stride()` gives them. The last dim's stride
# is 1; each dim before it steps over everything the dims after it hold.

# %%
def contiguous(shape):
    # BEGIN SOLUTION
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))
    # END SOLUTION


# %%
ex.contiguous.check(contiguous)

# %% [markdown]
# ### Exercise 16.2 — the window a slice makes
#
# A tensor `x` has the window `(shape, stride, offset)`. Write `slice_window(shape, stride,
# offset, dim, start, stop, step)`: the window `(shape, stride, offset)` of the view that
# slices `x` along `dim` from `start` up to (not including) `stop` every `step` elements
# (`0 <= start < stop <= shape[dim]`, `step >= 1`), as `x[..., start:stop:step, ...]` makes
# it. The check slices real tensors, some of them already views, and compares with
# `.stride()` and `.storage_offset()`.

# %%
def slice_window(shape, stride, offset, dim, start, stop, step):
    # BEGIN SOLUTION
    taken = (stop - start + step - 1) // step
    new_shape = tuple(shape[:dim]) + (taken,) + tuple(shape[dim + 1:])
    new_stride = tuple(stride[:dim]) + (stride[dim] * step,) + tuple(stride[dim + 1:])
    return new_shape, new_stride, offset + start * stride[dim]
    # END SOLUTION


# %%
ex.slice_window.check(slice_window)

# %% [markdown]
# ## 2. The drawing
#
# `viz.draw_anatomy(x)` draws a tensor as seed 001 draws PyTorch's: the **Tensor**, its
# **TensorImpl** (sizes, strides, offset, dtype, device, version) pointing to its
# **Storage** (the cells this window reads are marked), its **AutogradMeta** and, for a
# view, the view's meta: its base and its *creation meta* (how it was made, which decides
# what in-place ops it allows, section 3). Here the view `b[1:, ::2]` of a tensor that
# requires grad:

# %%
leaf = tg.arange(12.0).reshape(3, 4).requires_grad_()
h = leaf * 1.0
v = h[1:, ::2]
viz.draw_anatomy(v, title="ours: h[1:, ::2]")

# %% [markdown]
# The same function draws a PyTorch tensor, reading it through PyTorch's own API
# (`stride()`, `storage_offset()`, `_base`, `_version`, its creation meta): the two pictures
# hold the same numbers, box for box.

# %%
if have_torch("Drawing a PyTorch tensor"):
    leaf_t = torch.arange(12.0).reshape(3, 4).requires_grad_()
    v_t = (leaf_t * 1.0)[1:, ::2]
    picture = viz.draw_anatomy(v_t, title="PyTorch: h[1:, ::2]")
else:
    picture = None
picture

# %% [markdown]
# Paddle's dygraph (seed 000) builds the same thing under other names: a `paddle::Tensor`
# around a `DenseTensor` (its meta holds dims, strides and offset) and an `AutogradMeta` with
# `stop_gradient_` (the opposite of `requires_grad`), `grad_node_` and `out_slot_id_`/`out_rank_`
# (which output of which node made it, our `output_nr`):

# %%
viz.draw_anatomy(v, names="paddle", title="ours, in Paddle's names")

# %% [markdown]
# ## 3. What a view shares: memory and the version counter
#
# A view and its base look at the same memory, so a write through one shows in the other.
# They also share one **version counter** (`x._version`): every in-place op bumps it, and a
# saved value remembers the version it was saved at. That is how `backward()` finds out
# that a value a node saved has been overwritten since, whichever window the write came
# through:

# %%
def versions(base, view):
    w = base.exp()  # exp saves its output (w): backward needs it
    before = (base._version, view._version)
    with tg.no_grad():
        view.mul_(10)  # a write through the view ...
    after = (base._version, view._version)
    return w, before, after


x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True).clone()
w, before, after = versions(x, x[:2])
print("versions (base, view) before:", before, " after the write:", after)
print("x now", x.detach().numpy())

# %% [markdown]
# The write through the view moved both counters: there is one counter per storage. `exp`
# saved its output `w`, not `x`, so this write breaks nothing; a write into a value a node
# saved, through any window on it, is what backward refuses:

# %%
x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
w = x.exp()
with tg.no_grad():
    w[:2].mul_(10)  # through a view of the saved output
try:
    w.sum().backward()
except RuntimeError as error:
    print("RuntimeError:", str(error)[:200], "...")

if have_torch("The same in PyTorch"):
    xt = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    wt = xt.exp()
    with torch.no_grad():
        wt[:2].mul_(10)
    try:
        wt.sum().backward()
    except RuntimeError as error:
        print("PyTorch:", str(error)[:200], "...")
    check_true("the version counter is shared by a view and its base in both",
               wt._version == wt[:2]._version == 1 and w._version == w[:2]._version == 1)

# %% [markdown]
# ### Why an in-place write into an output of `unbind` is refused
#
# A view remembers how it was made: its **creation meta**. `unbind`, `split` and `chunk`
# make several views in one node; an in-place write into one of them would need that node's
# backward rebuilt around the write (PyTorch's `CopySlices` does so for a single view), and
# for a node with several outputs neither library does it: the write is refused, with the
# fix in the message. The drawing shows the creation meta, `MULTI_OUTPUT_NODE`.

# %%
y = tg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True) * 2
first, second = y.unbind(0)
try:
    first.mul_(2)
except RuntimeError as error:
    ours = str(error)
    print("ours:   ", ours)
if have_torch("The same in PyTorch"):
    yt = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True) * 2
    try:
        yt.unbind(0)[0].mul_(2)
    except RuntimeError as error:
        print("PyTorch:", error)
        check_true("both refuse it: the view is an output of a function returning multiple "
                   "views", "multiple views" in ours and "multiple views" in str(error))
viz.draw_anatomy(first, title="first, from y.unbind(0)")

# %% [markdown]
# ## 4. A node's anatomy
#
# A backward node (seed 001's `Node`) keeps, besides its edges (`next_functions`):
#
# - `_input_metadata`: for each gradient it will receive, the shape, dtype and device of the
#   forward output it belongs to. The engine checks every incoming gradient against it, as
#   PyTorch's `validate_outputs` does;
# - its `sequence_nr` (`_sequence_nr()`, PyTorch's spelling): the order nodes were made in,
#   which the ready queue uses (lesson 5);
# - its `topological_nr`: 0 for an `AccumulateGrad`, otherwise 1 + the largest among the
#   nodes it points to, the length of the longest path down to a leaf. PyTorch uses it to
#   prune the walk of `torch.autograd.grad(..., inputs=...)`: a node whose number is smaller
#   than an input's cannot lead to that input.

# %%
a = tg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
loss = (a * a).sum()
node = loss.grad_fn
print(node.name(), node._input_metadata)
print("sequence_nr", node._sequence_nr(), " topological_nr", node.topological_nr,
      " next:", [(n.name(), n.topological_nr) for n, _ in node.next_functions])

if have_torch("PyTorch's node"):
    at = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    nt = (at * at).sum().grad_fn
    (meta,) = nt._input_metadata
    print(nt.name(), "InputMetadata(shape=%s, dtype=%s, device=%s)" % (
        tuple(meta.shape), meta.dtype, meta.device))
    check("the input metadata's shape, dtype and device, as PyTorch's",
          (node._input_metadata[0].shape, str(node._input_metadata[0].dtype),
           str(node._input_metadata[0].device)),
          (tuple(meta.shape), str(meta.dtype).replace("torch.", ""), str(meta.device)))
# (PyTorch keeps topological_nr in C++ only; the numbers follow its rule, by hand:)
check("topological_nr: SumBackward0 -> MulBackward0 -> AccumulateGrad",
      [node.topological_nr, node.next_functions[0][0].topological_nr,
       node.next_functions[0][0].next_functions[0][0].topological_nr], [2, 1, 0])

# %% [markdown]
# A node is a function: called on the gradient of its output it returns its inputs'
# gradients (PyTorch's `Node::operator()`), without running the engine. `SumBackward0` on
# the seed gradient 1 gives a 2×2 of ones:

# %%
node(tg.tensor(1.0))

# %% [markdown]
# ### Input metadata catches a wrong gradient
#
# A custom `Function` whose backward returns a gradient of the wrong shape is the classic
# bug. The engine compares it with the input's metadata and names the node, the index and
# both shapes, in both libraries (a gradient that only broadcasts to the input's shape is
# summed down instead, and a dtype is cast to the input's):

# %%
class SumWrong(tg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.sum()

    @staticmethod
    def backward(ctx, g):
        return g.expand(3)  # should be x's shape, (2, 2)


try:
    SumWrong.apply(a).backward()
except RuntimeError as error:
    print("ours:   ", error)

if have_torch("The same in PyTorch"):
    class SumWrongT(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return g.expand(3)

    try:
        SumWrongT.apply(at).backward()
    except RuntimeError as error:
        print("PyTorch:", error)

# %% [markdown]
# ## 5. `as_strided`: any window, and its gradient
#
# `x.as_strided(size, stride, offset)` makes any window on `x`'s storage, as PyTorch's does.
# Windows may overlap: the 3×3 "sliding window" over 5 elements (strides `(1, 1)`) reads
# element 2 three times, with no copy. This is the view that im2col (lesson 11) and
# `unfold` are made of.
#
# Two pieces of index arithmetic make it work, and they are **assignment A5** (in the
# student edition, the cells below show their recorded output until you write them):
#
# - **A5.1**: how far a window reaches into its storage (so that `as_strided` can refuse a
#   window that reads past the end);
# - **A5.2**: which storage element each element of a window reads,
#   `offset + i_0 * stride_0 + i_1 * stride_1 + ...`, used by its backward.

# %%
s = tg.arange(5.0, requires_grad=True)
win = s.as_strided((3, 3), (1, 1), 0)
print(win)
print("window", window(win), " a view of s:", win._base is s)
try:
    s.as_strided((3, 3), (1, 2), 0)
except RuntimeError as error:
    print("RuntimeError:", error)

# %% [markdown]
# Its gradient adds each element of the incoming gradient into the storage element it was
# read from: an element read three times collects three contributions. With weights
# `W`, the gradient of `sum(W * window)` at element `k` of `s` is the sum of the weights
# at every place that reads `k`:

# %%
W = tg.tensor(np.arange(1.0, 10.0).reshape(3, 3))
(s.as_strided((3, 3), (1, 1), 0) * W).sum().backward()
print("ours:   ", s.grad)
if have_torch("The same in PyTorch"):
    st = torch.arange(5.0, requires_grad=True)
    (st.as_strided((3, 3), (1, 1), 0) * torch.tensor(np.arange(1.0, 10.0).reshape(3, 3))).sum(
    ).backward()
    print("PyTorch:", st.grad)
    check("as_strided's gradient on an overlapping window, as PyTorch's", s.grad, st.grad)
viz.draw_anatomy(win, title="a sliding window: s.as_strided((3, 3), (1, 1), 0)")

# %% [markdown]
# ## What you saw
#
# - A tensor is a window `(sizes, strides, offset)` on a storage; views are more windows on
#   the same storage, and `expand` is stride 0.
# - `viz.draw_anatomy` draws that in PyTorch's names or Paddle's, for our tensors and
#   PyTorch's.
# - A view shares its base's memory and version counter; a multi-output view refuses
#   in-place writes (its creation meta).
# - Nodes keep input metadata (which turns a wrong-shaped gradient into an error naming the
#   node), `sequence_nr` and `topological_nr`, and can be called on a gradient.
# - `as_strided` makes any window, and its gradient sums over overlaps: assignment A5.

# %%
summary(ex);
