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
# # Lesson 17 — From graph to loops
#
# Lesson 15 compiled a program into straight-line numpy: one numpy call per op. Each call
# walks a whole array, reads it from memory and writes a new one. For an elementwise op that
# is nearly all it does: `tanh` over 65 536 numbers takes far less time to compute than to
# bring them in and out of memory. A **fusing** compiler (tinygrad's kernels,
# TorchInductor's Triton kernels, XLA's fusions) groups the ops that follow each other into
# one **kernel**: a loop nest that reads each input once, keeps every intermediate value in a
# register, and writes only what is read later. This lesson follows one small model down
# that road:
#
# 1. **the graph and its fusion groups**: which ops become one kernel, and why the matrix
#    product does not;
# 2. **one generated kernel**, read line by line;
# 3. **the memory traffic**: the bytes read and written before and after fusion, counted
#    from the graph;
# 4. **the timing** against the unfused program and PyTorch eager, and **the tolerance**
#    (a kernel sums in another order);
# 5. **the backward's kernels**, and assignment A6, in which you write a fused kernel
#    yourself.
#
# The kernels are compiled to machine code by **numba**, an optional extra
# (`pip install "tinygrad_edu[fuse]"`; `make test` installs it). Without it this lesson
# still shows the groups, the source and the bytes; only the timings need numba.

# %%
import time

import numpy as np

import tinygrad_edu as tg
from tinygrad_edu.viz.kernels import draw_kernels
from tinygrad_edu.symbolic import compile as compile_graph
from tinygrad_edu.symbolic import topo_sort
from tinygrad_edu.symbolic.static import fusion, kernels, traffic
from tinygrad_course.lessons import check, check_true, summary
from tinygrad_course.lessons import lesson17 as ex

try:
    import torch
except ImportError:  # the lesson runs without PyTorch; its timing is left out
    torch = None

HAVE_NUMBA = kernels.available()
print("numba:", "installed" if HAVE_NUMBA else
      'not installed (pip install "tinygrad_edu[fuse]"): the kernels run as numpy code')

# %% [markdown]
# ## 1. The model, the graph and the fusion groups
#
# The part of a transformer block between two matrix products: a linear layer's bias, GELU
# (its tanh form, as GPT-2 uses it) and a layer norm without its affine weights. Both
# functions are written from elementary ops, so the compiler sees every `mul` and `tanh`:

# %%
def gelu(h):
    """GELU's tanh form: 0.5 h (1 + tanh(sqrt(2/pi) (h + 0.044715 h^3)))."""
    return 0.5 * h * (1.0 + (0.7978845608028654 * (h + 0.044715 * h ** 3)).tanh())


def layer_norm_rows(h, eps=1e-5):
    """Each row to mean 0 and variance 1 (layer norm without its weight and bias)."""
    m = h.mean(-1, keepdim=True)
    d = h - m
    return d / ((d * d).mean(-1, keepdim=True) + eps).sqrt()


def block(x, w, b):
    return layer_norm_rows(gelu(x @ w + b))


rng = np.random.default_rng(0)
X = rng.standard_normal((256, 128))
W = rng.standard_normal((128, 256)) * 0.1
B = rng.standard_normal(256) * 0.1
x, w, b = tg.tensor(X), tg.tensor(W), tg.tensor(B)

fused_block = tg.compile(block, backend="fuse")
y = fused_block(x, w, b)  # the first call traces (and runs eagerly)
y = fused_block(x, w, b)  # the compiled program, with its kernels
print(fused_block.explain())

# %% [markdown]
# Every op after the matrix product became one kernel (with numba installed: `Fused
# kernels` above, with its compile time); the matrix product stays one BLAS call.
# The fuser (`tinygrad_edu/symbolic/static/fusion.py`) walks the graph in order and lets a
# node join the group of its inputs when
#
# - it is **elementwise** (`add`, `mul`, `tanh`, `pow` ...) or a **sum or mean over the
#   last axis** with `keepdims` (layer norm's mean and variance, softmax's sum),
# - its shape is the group's, or one value per row of it (a row's mean),
# - and joining creates no cycle: nothing the group reads from outside may depend on it.
#
# The matrix product is not elementwise: it stays a BLAS call, which already is the best
# loop nest for it. The drawing boxes each group (grey ops stay numpy calls):

# %%
program = fused_block.programs[0]
graph = program.forward_nodes  # the graph before fusion, after lesson 9b's passes
groups = fusion.kernels_of(graph)  # the same groups, found without numba too
for k in groups:
    print(k.name, "fuses", len(k.ops), "ops:", " ".join(k.ops))
draw_kernels(graph, groups, title="the fusion groups of block")

# %% [markdown]
# (`viz.draw_compiled(fused_block, "kernels")` draws the same picture from the compiled
# program, when numba has compiled its kernels.)

# %%
check("one kernel for everything after the matrix product", len(groups), 1)
check_true("the matrix product stays a numpy call",
           "matmul" not in groups[0].ops and any(n.op.name == "matmul" for n in topo_sort(graph)))

# %% [markdown]
# ## 2. One kernel, line by line
#
# The kernel is Python source, generated from the group and compiled by numba
# (`kernels.load`, cached on disk: the next run loads the machine code):

# %%
kernel = groups[0]
print(kernel.source)

# %% [markdown]
# Reading it from the top:
#
# - **`def kernel(R, C, a0, a1, o…)`**: every array is seen as `(rows, columns)`, the last
#   axis the columns: `R` rows of `C`. `a0` is `x @ w` (the matrix product's result, an
#   input computed outside), `a1` the bias, read as `a1[0, c]`: one row broadcast over all
#   rows, without ever making the broadcast array. `o…` is the output, allocated by the
#   caller.
# - **`t… = np.empty(C)`**: a buffer of *one row*, for a value computed in one pass over the
#   row and needed in the next: 2 KB that stay in the cache, where the numpy program keeps
#   whole 256 × 256 arrays.
# - **`for r in range(R)`**, then several **`for c in range(C)`** loops: the **phases**.
#   A row's mean is known only after a pass over the row, so every value that reads it is
#   computed in the next pass: pass 1 computes GELU and sums it (`acc… +=`), pass 2
#   subtracts the mean and sums the squares, pass 3 divides by the standard deviation.
# - **`v… = …  # op`**: each op is one line on one element, in a local variable (a
#   register); the comment names the op of the graph.
# - **`o…[r, c] = …`**: the only stores: only what is read after the kernel (here the
#   output) goes back to memory.
#
# A row's values after its reduction (`v… = acc… / C  # mean`, the `sqrt`) are computed
# once per row, between the column loops.

# %%
check_true("the bias is read as one row, broadcast in the loop", "a1[0, c]" in kernel.source)
check_true("a row buffer instead of a whole array of intermediate values",
           "np.empty(C" in kernel.source)

# %% [markdown]
# ### Exercise 17.1 — bias and GELU in one loop
#
# Write the first pass of that kernel yourself: `bias_gelu(h, b, out)` gets `h` (rows ×
# columns), the bias `b` (one value per column) and `out` (the shape of `h`), and writes
# `gelu(h + b)` into `out[r, c]`, one element at a time, with `math.tanh`. It is checked
# against the library's `F.gelu(h + b, approximate="tanh")`.

# %%
import math


def bias_gelu(h, b, out):
    # BEGIN SOLUTION
    rows, cols = h.shape
    for i in range(rows):
        for j in range(cols):
            v = h[i, j] + b[j]
            out[i, j] = 0.5 * v * (1.0 + math.tanh(0.7978845608028654 * (v + 0.044715 * v ** 3)))
    # END SOLUTION


# %%
ex.bias_gelu.check(bias_gelu)

# %% [markdown]
# ## 3. The memory traffic
#
# Count what each step moves: a step reads each array it takes, once, whole, and writes each
# array it makes (`tinygrad_edu/symbolic/static/traffic.py`; a number written into the code,
# `0.5 * h`, moves nothing, and neither does a view). First the plain numpy program, op by
# op:

# %%
def show(steps, title):
    print(title)
    for s in steps:
        what = s.what if ":" not in s.what else f"{s.what.split(':')[0]} ({s.what.count('+') + 1} ops)"
        print(f"  {what:<18} read {s.read / 1024:6.0f} KiB   written {s.written / 1024:6.0f} KiB")
    read, written = traffic.total(steps)
    print(f"  {'total':<18} read {read / 1024:6.0f} KiB   written {written / 1024:6.0f} KiB")
    return read, written


before = show(traffic.op_traffic(graph), "one numpy call per op:")

# %% [markdown]
# and the fused program: the matrix product as before, then one kernel that reads its two
# inputs and writes its one output:

# %%
after = show(traffic.fused_traffic(graph, groups), "fused:")
print(f"\nbytes moved: {sum(before) / 1e6:.1f} MB before, {sum(after) / 1e6:.1f} MB after "
      f"({sum(before) / sum(after):.1f}x less)")

# %%
mb = 256 * 256 * 8
check("the kernel reads x @ w and the bias, and writes the output",
      traffic.fused_traffic(graph, groups)[-1][1:], (mb + 256 * 8, mb))
check_true("fusion moves at least 5x fewer bytes here", sum(before) >= 5 * sum(after))

# %% [markdown]
# ### Exercise 17.2 — the bytes one step moves
#
# Write the count for one step given as shapes: `step["inputs"]` and `step["outputs"]` are
# lists of shapes, `step["itemsize"]` the bytes of one element (8 for float64, 4 for
# float32). Return `(bytes read, bytes written)`.

# %%
def step_bytes(step):
    # BEGIN SOLUTION
    size = step["itemsize"]
    return (sum(math.prod(s) for s in step["inputs"]) * size,
            sum(math.prod(s) for s in step["outputs"]) * size)
    # END SOLUTION


# %%
ex.step_bytes.check(step_bytes)

# %% [markdown]
# ## 4. The timing, and the tolerance
#
# The matrix product is the same BLAS call in every version, so the timing is of what fusion
# changes: everything after it, `layer_norm_rows(gelu(h + b))` for `h = x @ w`. Its graph is
# compiled both ways (`compile_graph` is lesson 9c's numpy code generator,
# `fusion.compile_fused` the fusing one), fed the same arrays, beside the eager engine and
# PyTorch eager. The numbers depend on your machine and are printed, not checked. These
# arrays fit in the cache, so fusion gains less than the bytes saved; the Python around each
# numpy call, which fusion also saves, is a large share too.

# %%
def after_matmul(h, b):
    return layer_norm_rows(gelu(h + b))


H = X @ W
h = tg.tensor(H)
traced = tg.compile(after_matmul, backend="fuse")
traced(h, b)  # traced: its program's graph is what we time
part = traced.programs[0]
feeds = {node: (H, B)[source.index] for node, source in part.placeholders}
plain_graph = compile_graph(part.forward_nodes)
fused_graph = fusion.compile_fused(part.forward_nodes)


def per_call(fn, calls=5, rounds=5):
    """Milliseconds per call: the best of a few rounds (a busy machine only adds time)."""
    fn()  # (a first call compiles or loads the kernels)
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e3


timings = {
    "eager tinygrad_edu": per_call(lambda: after_matmul(h, b)),
    "numpy program": per_call(lambda: plain_graph(feeds)),
    "fused program": per_call(lambda: fused_graph(feeds)),
}
if torch is not None:
    ht, bt = torch.tensor(H), torch.tensor(B)
    with torch.no_grad():
        timings["PyTorch eager"] = per_call(lambda: after_matmul(ht, bt))
for what, ms in timings.items():
    print(f"{what:>20}: {ms:6.2f} ms per call")
if not HAVE_NUMBA:
    print("(without numba the 'fused program' is the numpy program: no kernels were made)")

# %% [markdown]
# (`after_matmul` runs unchanged on PyTorch tensors: `mean(-1, keepdim=True)`, `tanh()`, `sqrt()`
# are PyTorch's spellings too.)
#
# **The tolerance.** A kernel computes the same formulas in the same dtype, but not in the
# same order: it sums a row with one running total, left to right, where numpy sums pairwise;
# and numba may contract `a * b + c` into one instruction. The classic bounds say how far
# either may drift: a running sum of $n$ terms is within $(n-1)\,u\sum_i |x_i|$ of the exact
# sum, a pairwise one within about $\lceil\log_2 n\rceil\,u\sum_i |x_i|$, where $u$ is the
# unit roundoff ($2^{-53}$ in float64, $2^{-24}$ in float32). So the fused result is not
# bit-for-bit the numpy one, only within a few units in the last place: about `1e-12`
# relative in float64 (the tests' tolerance), `1e-5` in float32. Any code that compares a
# fused result with `==` is wrong:

# %%
(plain_y,) = plain_graph(feeds)
(fused_y,) = fused_graph(feeds)
difference = np.abs(fused_y - plain_y).max()
print("largest difference, fused vs numpy:", difference)
print("bit-for-bit equal:", np.array_equal(fused_y, plain_y))
check_true("the fused program gives the numpy program's values (float64, rtol 1e-12)",
           np.allclose(fused_y, plain_y, rtol=1e-12, atol=1e-12))
check_true("and the eager engine's",
           np.allclose(fused_y, after_matmul(h, b).numpy(), rtol=1e-12, atol=1e-12))

# %% [markdown]
# ## 5. The backward's kernels, and what they cost to save
#
# With `w` and `b` requiring grad, the compiled forward also returns every value the
# backward reads (lesson 15's *saved* values), and the backward graph is fused too.
# Saved values are written to memory: training moves more bytes than inference.

# %%
wg, bg = tg.tensor(W, requires_grad=True), tg.tensor(B, requires_grad=True)
train_block = tg.compile(block, backend="fuse")
train_block(x, wg, bg)  # traced
out = train_block(x, wg, bg)  # compiled: forward program, then the backward program
(out * out).sum().backward()
train_program = train_block.programs[0]
train_groups = fusion.kernels_of(train_program.forward_nodes)
print(f"forward: {len(train_groups)} kernel(s); backward: "
      f"{len(fusion.kernels_of(train_program.backward_nodes))} kernel(s)")
saved = show(traffic.fused_traffic(train_program.forward_nodes, train_groups),
             "the training forward, fused:")

# %%
we, be = tg.tensor(W, requires_grad=True), tg.tensor(B, requires_grad=True)
eager_out = block(x, we, be)
(eager_out * eager_out).sum().backward()
check_true("saving values for the backward writes more than inference does",
           saved[1] > after[1])
check_true("the fused backward's gradient of w is the eager engine's",
           np.allclose(wg.grad.numpy(), we.grad.numpy(), rtol=1e-10, atol=1e-12))
check_true("and of b", np.allclose(bg.grad.numpy(), be.grad.numpy(), rtol=1e-10, atol=1e-12))

# %% [markdown]
# ## Assignment A6: a fused kernel by hand
#
# The generated kernels are one way to get loops from a graph. **Assignment A6** asks you
# to write one as a person does in a CUDA or Triton course: softmax's forward and backward
# over the rows of a 2-D array, in `tinygrad_edu/symbolic/static/handwritten.py`. The
# graded tests hand your kernel arrays that count every read and write: a kernel that
# recomputes a row's sum for every element moves far more than the few passes a fused
# softmax needs, and one that forgets to subtract the row's largest value overflows at
# large logits. The same function then compiles with numba, as the generated ones do.
#
# **Summary.** A fusing compiler turns a chain of elementwise ops and row reductions into
# one loop nest: values stay in registers, a row's intermediate values in a buffer the
# size of a row, and only what is read later goes back to memory. The bytes saved are
# counted from the graph; the answers agree with numpy's to a few units in the last place,
# not bit for bit.

# %%
summary(ex);
