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
# # Lesson 13 — Coming from PyTorch
#
# If you train models in PyTorch, you already know this library's eager engine: it speaks
# PyTorch. Put `import tinygrad_edu as torch` at the top of an ordinary PyTorch script —
# tensor manipulation, an `nn.Module`, a training loop with `F.cross_entropy` and
# `optim.Adam`, `no_grad()`, item assignment — and it runs, and every graph it builds can be
# drawn and stepped through (lessons 3 and 5). This lesson runs such code on both libraries,
# side by side:
#
# 1. a tensor-manipulation script, unchanged, and numpy's spellings that are accepted too;
# 2. an `nn.Module` MLP and a CNN, the same weights in both libraries, the same numbers;
# 3. a training loop: `F.cross_entropy` on class labels, `optim.SGD` / `optim.Adam`,
#    evaluation under `no_grad()`;
# 4. `y[idx] = v` and its `CopySlices` node, and a walk over `grad_fn.next_functions`;
# 5. the few differences.
#
# The reference page for all of this is the site's
# [Coming from PyTorch](../../coming-from-pytorch/) page (`docs/coming-from-pytorch.md`).
# A PyTorch user can read this lesson right after lesson 0; lesson 3 then shows the engine
# behind `grad_fn`.
#
# PyTorch is optional. Without it, every cell still runs: the PyTorch half says how to
# install it, and the checks grade on our own results.

# %%
import numpy as np

import tinygrad_edu as tg
from tinygrad_edu import viz
from tinygrad_course.lessons import check, check_true, summary
from tinygrad_course.lessons import lesson13 as ex

try:
    import torch as real_torch
except ImportError:
    real_torch = None


def have_torch(what: str) -> bool:
    """True when PyTorch is installed; otherwise say what needs it and how to install it."""
    if real_torch is None:
        print(f'{what} needs PyTorch (CPU build): pip install torch --index-url https://download.pytorch.org/whl/cpu')
    return real_torch is not None


LIBRARIES = [tg] + ([real_torch] if real_torch is not None else [])
print("PyTorch", real_torch.__version__ if real_torch is not None else "is not installed")

# %% [markdown]
# ## 1. The same script, two libraries
#
# To run one piece of code on both libraries in one notebook, each script below is a function
# whose argument is **the library**, named `torch`. Inside it, `torch` is whichever library it
# was given: `script(tg)` is exactly what `import tinygrad_edu as torch` at the top of a file
# does, `script(real_torch)` runs it on PyTorch. Here is a tensor-manipulation script, the
# way PyTorch users write it — `dim=` and `keepdim=`, `max(dim)` giving values and indices,
# `transpose(0, 1)`, `torch.cat`, masks, views:

# %%
def manipulate(torch):
    x = torch.arange(12.0).reshape(3, 4)
    row_max, where = x.max(dim=1)                       # values AND indices, as in PyTorch
    centred = x - x.mean(dim=1, keepdim=True)
    both = torch.cat([x, 2 * x], dim=0)
    return {
        "x.sum(dim=0)": x.sum(dim=0),
        "x.max(dim=1)": (row_max, where),
        "centred[0]": centred[0],
        "x.transpose(0, 1).shape": tuple(x.transpose(0, 1).shape),
        "x.view(2, 6)[1]": x.view(2, 6)[1],
        "torch.cat(..., dim=0).shape": tuple(both.shape),
        "x[x > 8]": x[x > 8],
        "torch.stack(..., dim=2).shape": tuple(torch.stack([x, x], dim=2).shape),
        "x.unsqueeze(1).shape": tuple(x.unsqueeze(1).shape),
        "torch.where(x > 5, x, 0)[1]": torch.where(x > 5, x, torch.zeros_like(x))[1],
        "x.argmax(dim=1)": x.argmax(dim=1),
        "x.std(dim=0)": x.std(dim=0),
    }


def as_numbers(value):
    """Any result of a script as plain Python numbers, whatever library made it."""
    if isinstance(value, tuple) and all(isinstance(v, int) for v in value):
        return value
    if isinstance(value, tuple):
        return tuple(as_numbers(v) for v in value)
    return np.asarray(value.detach().numpy() if hasattr(value, "detach") else value).tolist()


ours = manipulate(tg)
theirs = manipulate(real_torch) if have_torch("The PyTorch column") else {}
print(f"{'':30} {'tinygrad_edu':34} PyTorch")
for key, value in ours.items():
    other = as_numbers(theirs[key]) if key in theirs else "-"
    print(f"{key:30} {str(as_numbers(value)):34} {other}")
if theirs:
    differ = [key for key in ours if as_numbers(ours[key]) != as_numbers(theirs[key])]
    check_true(f"all {len(ours)} results are PyTorch's", not differ, hint=f"differ: {differ}")

# %% [markdown]
# Every line agrees. `x.max(dim=1)` is a pair, as in PyTorch (numpy's `x.max(axis=1)` is the
# values alone): unpack it, or take `.values` and `.indices`. `x.std()` divides by $n - 1$
# (PyTorch's default; numpy's is $n$). Where numpy and PyTorch mean different things, this
# library follows PyTorch.
#
# ### numpy's spellings are accepted too
#
# If your fingers type numpy, the eager engine accepts numpy's argument names as aliases:
# `axis=` for `dim=`, `keepdims=` for `keepdim=`, `np.concatenate`'s name for `cat`. They
# mean exactly the same, so a numpy habit never gives a different number. Lessons and this
# library's own code use PyTorch's spelling.

# %%
x = tg.arange(12.0).reshape(3, 4)
pairs = [("x.sum(dim=1, keepdim=True)", x.sum(dim=1, keepdim=True),
          "x.sum(axis=1, keepdims=True)", x.sum(axis=1, keepdims=True)),
         ("x.mean(dim=0)", x.mean(dim=0), "x.mean(axis=0)", x.mean(axis=0)),
         ("x.argmax(dim=1)", x.argmax(dim=1), "x.argmax(axis=1)", x.argmax(axis=1)),
         ("tg.cat([x, x], dim=1)", tg.cat([x, x], dim=1),
          "tg.concatenate([x, x], axis=1)", tg.concatenate([x, x], axis=1))]  # fmt: skip
for torch_spelling, a, numpy_spelling, _ in pairs:
    print(f"{torch_spelling:28} == {numpy_spelling:32} shape {tuple(a.shape)}")
same = [as_numbers(a) == as_numbers(b) for _, a, _, b in pairs]
check_true("numpy's spellings mean PyTorch's", all(same))

# %% [markdown]
# ### Exercise 13.1 — a softmax in PyTorch's spelling
#
# Write `softmax(x, dim)` with the tensor's own methods, the way you would in PyTorch:
# $\mathrm{softmax}(x)_i = e^{x_i - m} / \sum_j e^{x_j - m}$ along `dim`, where $m$ is the
# largest value along `dim` (subtracting it changes nothing mathematically, and keeps
# `exp` from overflowing on large scores). Use `dim=` and `keepdim=True` so the maxima and
# sums broadcast back over `x`, and remember what `max(dim)` returns. The check runs your
# function on our tensors and, when PyTorch is installed, on PyTorch's — the same code — and
# compares values and gradients.

# %%
def softmax(x, dim):
    # BEGIN SOLUTION
    e = (x - x.max(dim=dim, keepdim=True).values).exp()
    return e / e.sum(dim=dim, keepdim=True)
    # END SOLUTION


# %%
ex.softmax.check(softmax)

# %% [markdown]
# Your softmax next to the library's `F.softmax`, on both libraries:

# %%
my_softmax = ex.softmax.use(softmax)
scores = np.array([[2.0, 1.0, 0.1], [1000.0, 1001.0, 999.0]])
for torch in LIBRARIES:
    s = torch.tensor(scores)
    mine, library = my_softmax(s, dim=1), torch.nn.functional.softmax(s, dim=1)
    print(f"{torch.__name__:13} yours {np.round(as_numbers(mine), 4).tolist()}")
    check(f"{torch.__name__}: yours is F.softmax", as_numbers(mine), as_numbers(library))

# %% [markdown]
# ## 2. Models: `nn.Module`, the same weights, the same numbers
#
# A model is a class with layers in `__init__` and the computation in `forward`, exactly as
# in PyTorch. `ex.make_mlp(torch)` (in `tinygrad_course/lessons/lesson13.py`) defines this one:
#
# ```python
# class MLP(nn.Module):
#     def __init__(self):
#         super().__init__()
#         self.fc1 = nn.Linear(2, hidden)
#         self.fc2 = nn.Linear(hidden, 3)
#
#     def forward(self, x):
#         return self.fc2(F.relu(self.fc1(x)))
# ```
#
# and loads the same numbers into both libraries' weights with `load_state_dict`. Here is a
# CNN too, defined once for both, our weights copied into PyTorch's with `state_dict()`:

# %%
def make_cnn(torch):
    nn = torch.nn
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(4 * 4 * 4, 10))


cnn = make_cnn(tg)
images = np.random.default_rng(0).normal(size=(2, 1, 8, 8)).astype(np.float32)
with tg.no_grad():
    out = cnn(tg.tensor(images))
print("ours:   ", tuple(out.shape), np.round(out.numpy()[0, :4], 4))
print("layers: ", [name for name, _ in cnn.named_parameters()])
if have_torch("Running the CNN in PyTorch"):
    their_cnn = make_cnn(real_torch)
    # our state_dict() holds numpy arrays (see section 5): torch.tensor takes them as they are
    their_cnn.load_state_dict({k: real_torch.tensor(v) for k, v in cnn.state_dict().items()})
    with real_torch.no_grad():
        their_out = their_cnn(real_torch.tensor(images))
    print("PyTorch:", tuple(their_out.shape), np.round(their_out.numpy()[0, :4], 4))
    check("the CNN's output, ours and PyTorch's", out.numpy(), their_out.numpy(), atol=1e-5)

# %% [markdown]
# ## 3. A training loop
#
# The loop every PyTorch user writes: clear the gradients, forward, loss, backward, update.
# `F.cross_entropy(logits, labels)` takes the raw scores and the **class labels** (integers,
# not one-hot rows) and applies log-softmax itself. The data: three clusters of 2-d points,
# `ex.blobs()`.
#
# ### Exercise 13.2 — a training step
#
# Write `train_step(torch, model, opt, x, y)`: one step of training `model` on the batch
# `x` (points) with class labels `y`, using the optimizer `opt` — whatever the optimizer
# (the check uses `optim.SGD` and `optim.Adam`). Return the loss as a Python float. The
# first argument is the library, so the check can run your step on both: inside, write
# `torch.nn.functional.cross_entropy` (or `F = torch.nn.functional` first).

# %%
def train_step(torch, model, opt, x, y):
    # BEGIN SOLUTION
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()
    # END SOLUTION


# %%
ex.train_step.check(train_step)

# %% [markdown]
# Now train the MLP for 30 steps of Adam in each library, from the same weights, and
# evaluate under `no_grad()` (no graph is recorded: evaluation needs no backward):

# %%
step = ex.train_step.use(train_step)
points, labels = ex.blobs()
curves, accuracy = {}, {}
for torch in LIBRARIES:
    model = ex.make_mlp(torch)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    x, y = torch.tensor(points), torch.tensor(labels)
    curves[torch.__name__] = [step(torch, model, opt, x, y) for _ in range(30)]
    with torch.no_grad():
        predicted = model(x).argmax(dim=1)
        accuracy[torch.__name__] = (predicted == y).float().mean().item()
for k in (0, 1, 2, 5, 10, 20, 29):
    row = "  ".join(f"{name} {curve[k]:.4f}" for name, curve in curves.items())
    print(f"step {k:>2}  {row}")
print("accuracy:", {name: round(a, 4) for name, a in accuracy.items()})
check_true("the loss went down", curves["tinygrad_edu"][-1] < 0.5 * curves["tinygrad_edu"][0])
if "torch" in curves:
    check("the loss curve, ours and PyTorch's", curves["tinygrad_edu"], curves["torch"],
          rtol=1e-3)  # fmt: skip

# %% [markdown]
# The two loss curves agree to float32 rounding, step by step: the same model, the same
# optimizer, the same numbers. Our `optim.Adam` is PyTorch's algorithm with PyTorch's
# defaults: the same bias correction, $\beta = (0.9, 0.999)$, $\epsilon = 10^{-8}$.
#
# ## 4. Item assignment, `CopySlices`, and walking `grad_fn`
#
# `y[idx] = v` changes `y` in place, and autograd records it: `y.grad_fn` becomes a
# `CopySlices` node whose first input is `y`'s old history (with a zero gradient where it was
# overwritten) and whose second is `v`'s. Our engine draws next to PyTorch's:

# %%
def overwrite(a):
    y = a * 2
    y[1:3] = a[3:5].exp()          # in place: y's grad_fn becomes CopySlices
    return y


viz.draw_both(overwrite, forms=("eager", "torch"), a=np.arange(5.0)) \
    if have_torch("Drawing PyTorch's graph") else viz.draw(overwrite(tg.arange(5.0)
                                                                     .requires_grad_()))

# %% [markdown]
# Read `a.grad`, $[2, 0, 0, 2 + e^3, 2 + e^4] = [2, 0, 0, 22.09, 56.6]$. Elements 1 and 2
# of `a * 2` were overwritten, so no gradient flows back through them: `CopySlices` sends a
# zero there. `a[3]` and `a[4]` reach the output twice, through `a * 2` (kept at positions
# 3 and 4) and through the `exp` of the slice written into positions 1 and 2: two paths,
# gradients summed, lesson 5's input buffer at work.
#
# The graph is plain Python objects in both libraries: `grad_fn`, its `next_functions`
# (pairs `(node, input_nr)`, `None` for an input that needs no gradient) and, on an
# `AccumulateGrad` node, `.variable`, the leaf. This walk prints it for both, as a tree
# (recursive, and a node reached along two paths is printed twice: fine for small graphs;
# lesson 12 walks deep graphs properly):

# %%
def walk(node, depth=0):
    """The graph below ``node`` as an indented tree of node types."""
    if node is None:
        return []
    lines = ["  " * depth + type(node).__name__]
    for child, _ in node.next_functions:
        lines += walk(child, depth + 1)
    return lines


graphs = {torch.__name__: walk(overwrite(torch.arange(5.0, requires_grad=True)).grad_fn)
          for torch in LIBRARIES}  # fmt: skip
for name, lines in graphs.items():
    print(f"{name}:\n" + "\n".join(lines))
if "torch" in graphs:
    check("the same graph, node for node", graphs["tinygrad_edu"], graphs["torch"])

# %% [markdown]
# ## 5. The few differences
#
# Same code, same numbers, same graphs — and a few things that differ. The first ones you
# meet are shown below, computed on your installation:
#
# - **shapes are tuples**: `x.shape` is `(3, 4)`, a plain tuple, where PyTorch has
#   `torch.Size([3, 4])` (a tuple subclass: comparisons like `x.shape == (3, 4)` work in both);
# - **dtypes are numpy's**: `tg.float32 is np.float32`, and `x.numpy()` is the array itself;
# - **`state_dict()` holds numpy arrays**, not tensors (`load_state_dict` takes either);
# - **`nn.Linear` records two nodes**, `MmBackward0` and `AddBackward0` (the weight product
#   and the bias add), where PyTorch fuses them into one `AddmmBackward0` after a `TBackward0`
#   transpose; the gradients are the same;
# - **not every op exists**: the library has the ops the lessons teach; the cell lists the
#   common PyTorch ones missing here today.

# %%
x = tg.arange(12.0).reshape(3, 4)
print("shape:", repr(x.shape), " dtype:", repr(x.dtype), " float32 is np.float32:",
      tg.float32 is np.float32)  # fmt: skip
model = ex.make_mlp(tg)
print("state_dict() values:", sorted({type(v).__name__ for v in model.state_dict().values()}))
loss = tg.nn.functional.cross_entropy(model(tg.tensor(points)), tg.tensor(labels))
print("our MLP's nodes:     ", sorted(set(n.strip() for n in walk(loss.grad_fn))))
if real_torch is not None:
    their_loss = real_torch.nn.functional.cross_entropy(ex.make_mlp(real_torch)(
        real_torch.tensor(points)), real_torch.tensor(labels))  # fmt: skip
    print("PyTorch's MLP nodes: ", sorted(set(n.strip() for n in walk(their_loss.grad_fn))))
    check("the same loss from the same weights", loss.item(), their_loss.item(), rtol=1e-5)
common = ["norm", "einsum", "topk", "sort", "flip", "roll", "cumprod", "lerp", "baddbmm"]
missing = [name for name in common
           if not hasattr(tg.Tensor, name) and not hasattr(tg, name)]  # fmt: skip
print("not here (yet):", ", ".join(missing) or "none of " + ", ".join(common))

# %% [markdown]
# When something is missing or differs, the error says so in PyTorch's terms (the op, the
# shapes, the fix), and the [Coming from PyTorch](../../coming-from-pytorch/) page keeps the
# full list. To go further: lesson 3 opens up `grad_fn` and `AccumulateGrad`, lesson 5 the
# engine that runs `backward()`, and lesson 12 draws your own PyTorch models.

# %%
summary(ex);
