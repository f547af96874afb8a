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
# # Lesson 15 — From eager to compiled
#
# Two graph forms have run through every lesson: the **eager** engine records backward ops as
# the program runs (op-as-node, lessons 3–5), the **symbolic** engine builds a graph of tensors
# before any number exists and compiles it (tensor-as-node, lessons 2, 8, 9). Modern frameworks
# join the two. `torch.compile` runs your eager PyTorch code once while *capturing* it as a
# graph (Dynamo), derives the backward graph ahead of time (AOTAutograd) and generates code
# (Inductor). `tg.compile` does the same with this library's two engines:
#
# 1. **tracing**: the eager run, recorded into a symbolic graph;
# 2. **the captured graphs**, forward and backward, before and after the passes, and the code;
# 3. **guards**: when a compiled program may be reused;
# 4. **graph breaks**: what a graph cannot express, and what a compiled call must still do on
#    every call (its writes, its side effects);
# 5. **a whole training step** as one program, and what it buys.

# %%
import time

import numpy as np

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F
from tinygrad_edu import viz
from tinygrad_edu.data import load_digits
from tinygrad_course.lessons import check, check_true, summary
from tinygrad_course.lessons import lesson15 as ex

# %% [markdown]
# ## 1. Tracing: the eager run, recorded
#
# A small classifier for the bundled 8×8 digits, written as usual:

# %%
tg.manual_seed(0)
model = tg.nn.Sequential(tg.nn.Linear(64, 32), tg.nn.Tanh(), tg.nn.Linear(32, 10))
X, y = load_digits("train")
xb, yb = tg.tensor(X[:64]), tg.tensor(y[:64])

loss = F.cross_entropy(model(xb), yb)
viz.draw(loss, params=model.named_parameters())

# %% [markdown]
# That is the eager graph: one node per backward op, made while the forward ran. Now compile
# the model. `tg.compile(model)` returns a module that shares the model's parameters; its
# **first call traces**: the model runs eagerly, as above, and every op the dispatcher runs
# is *also* added to a symbolic graph, from the same op table (`x @ w` becomes
# `apply_op("matmul", node_x, node_w)`). Tensors the function reaches without receiving them
# (the parameters) become graph inputs fed their current values on every call. This model
# writes nothing (no buffer, no `.grad`), so right after the trace the first call runs the new
# program too, and returns its result, as `torch.compile` does.

# %%
cmodel = tg.compile(model)
out = cmodel(xb)        # traced (runs eagerly and records), then the program runs
print(out.grad_fn.name())
out = cmodel(xb)        # compiled: runs the generated code only
print(cmodel.explain())

# %% [markdown]
# ## 2. The captured graphs and the code
#
# The forward graph, tensor-as-node, with the parameters' names (after the optimisation
# passes of lesson 9b):

# %%
viz.draw_compiled(cmodel, "forward")

# %% [markdown]
# Because an input requires grad (the parameters do), the forward graph was differentiated
# **ahead of time** with `gradients()` — the gradient is itself a graph, as in lesson 2. Every
# forward value that graph reads is *saved*: an extra output of the forward program and an
# input of the backward program (`saved: ...` boxes), with the gradient of the output
# (`grad_out0`):

# %%
viz.draw_compiled(cmodel, "backward")

# %% [markdown]
# Both graphs become straight-line Python, one line per op, each value deleted after its last
# use (lesson 9c's code generator). Where numba is installed, the default backend also groups
# runs of elementwise ops into loop kernels: a `kernel0(...)` line computes several ops at
# once (`compiled.explain()` lists them; `tg.compile(model, backend="numpy")` keeps one line
# per op):

# %%
print(cmodel.programs[0].source_code[:1500])

# %% [markdown]
# And in the eager graph of the compiled call's result, the whole compiled region is **one
# node**, `CompiledFunctionBackward`: its backward runs the backward program. The engine of
# lesson 5 does not know what is inside, exactly as PyTorch's engine does not.

# %%
loss = F.cross_entropy(out, yb)
viz.draw(loss, params=model.named_parameters())

# %%
model.zero_grad()
loss.backward()
compiled_grads = [p.grad.numpy().copy() for p in model.parameters()]
model.zero_grad()
F.cross_entropy(model(xb), yb).backward()
check("the compiled backward fills .grad as eager does",
      np.concatenate([g.ravel() for g in compiled_grads]),
      np.concatenate([p.grad.numpy().ravel() for p in model.parameters()]), rtol=1e-5)

# %% [markdown]
# ## 3. Guards
#
# A compiled program is a *specialisation*: it was made for inputs of one shape, dtype,
# device and `requires_grad`, in one grad mode, with modules in one training mode, for the
# Python values the function reached (a global `scale`, `cfg["lr"]`, a module's attributes
# and submodules: they became constants of the program), and for the branches the Python
# code took. Before a program is reused, its **guards** check that all of that still holds;
# when one fails, the function is traced again and both programs are kept (up to 8).
#
# The branches are the interesting part. In
#
# ```python
# if x.sum().item() > 0:
# ```
#
# `item()` hands a tensor's value to Python. While tracing it returns a *traced scalar*: a
# number that remembers which graph node it came from, so the comparison records the node
# `sum(x) > 0` and the answer it gave. The compiled program computes that node too, and its
# results are used only when the answer is the same:

# %%
def branchy(x):
    if x.sum().item() > 0:
        return x * 2
    return x * -3


cbranchy = tg.compile(branchy)
for v in ([1.0, 2.0], [-1.0, -2.0], [3.0, 1.0], [-5.0, 1.0]):
    x = tg.tensor(v)
    print(v, "->", cbranchy(x).numpy(), " eager:", branchy(x).numpy())
print()
print("\n".join(cbranchy.explain().guards))

# %% [markdown]
# Without that guard the second call would have reused the first program and returned
# `x * 2` for a negative sum: a stale answer, with no error. Each guard exists to make such a
# call trace again.
#
# ### Exercise 15.1 — a guard
#
# Write the guard on one tensor argument. `spec` holds what the trace was specialised on,
# e.g. `{"shape": (4, 3), "dtype": "float32", "requires_grad": True}`; return `True` when the
# compiled program may be reused for the tensor `x`, `False` when the function must be traced
# again.

# %%
def guard(spec, x):
    # BEGIN SOLUTION
    return (tuple(x.shape) == spec["shape"] and str(x.dtype) == spec["dtype"]
            and x.requires_grad == spec["requires_grad"])
    # END SOLUTION


# %%
ex.guard.check(guard)

# %% [markdown]
# ## 4. Graph breaks
#
# Some things a graph cannot express: printing a tensor, `.numpy()` of an intermediate
# value, random numbers (a compiled program would repeat the same ones). Each is a **graph
# break**, recorded with the line that caused it. Where Python only reads a value (a print,
# `.item()`, `.numpy()`), the function is cut there, as PyTorch does: the ops before the read
# run as one compiled program, the print runs eagerly, and the ops after it as a second
# program. Later calls re-run the Python code with stand-in tensors that only check each op
# against the trace; the first read runs the program of the segment so far. `explain()` says
# where and why:

# %%
x = tg.tensor(np.random.default_rng(0).standard_normal((5, 3)))
w = tg.tensor(np.random.default_rng(1).standard_normal((3, 2)), requires_grad=True)
cnoisy = tg.compile(ex.noisy_step)
cnoisy(x, w)  # traced (eagerly)
loss = cnoisy(x, w)  # a compiled segment, the print, then the rest
print(loss.grad_fn.name())
print(cnoisy.explain())

# %% [markdown]
# `tg.compile(fn, fullgraph=True)` turns a break into an error that names the line, as
# `torch.compile(fullgraph=True)` does:

# %%
try:
    tg.compile(ex.noisy_step, fullgraph=True)(x, w)
except tg.compiler.GraphBreak as error:
    print(type(error).__name__ + ":", error)

# %% [markdown]
# (Dynamo gets its segments by rewriting the function's bytecode; here a replay with stand-in
# tensors, as PyTorch/XLA's LazyTensor does. When a branch on the value read goes the other
# way, the call runs eagerly from there while it is traced, and the new path is kept beside
# the first: each path is compiled once. Breaks that cannot be cut at, such as random numbers
# or an in-place write in a function that also breaks, make the function run eagerly as a
# whole; `explain()` then says why.)
#
# ### Exercise 15.2 — remove the graph break
#
# Rewrite `noisy_step` (`ex.noisy_step`: it computes `((x @ w).tanh() ** 2).mean()` and
# prints it) so that it compiles with `fullgraph=True` and returns the same loss, with its
# gradient. The caller can print what the function returns.

# %%
def no_break(x, w):
    # BEGIN SOLUTION
    return ((x @ w).tanh() ** 2).mean()
    # END SOLUTION


# %%
ex.no_break.check(no_break)

# %% [markdown]
# ### Writes and side effects: what eager does, on every call
#
# A compiled call must give what the eager call gives: not only the values, but also what the
# call *changes*. A BatchNorm in training mode updates its running mean and variance in
# place. Such writes are **captured**, as AOTAutograd does: the program computes the new
# values and writes them back after every call. Here a compiled model with BatchNorm, and
# an eager twin with the same weights, each called on three batches:

# %%
tg.manual_seed(0)
bn_model = tg.nn.Sequential(tg.nn.Linear(64, 16), tg.nn.BatchNorm1d(16))
twin = tg.nn.Sequential(tg.nn.Linear(64, 16), tg.nn.BatchNorm1d(16))
twin.load_state_dict(bn_model.state_dict())
cbn = tg.compile(bn_model)
for i in range(3):
    xb3 = tg.tensor(X[64 * i:64 * (i + 1)])
    print(cbn(xb3).grad_fn.name())
    twin(xb3)
names = {id(t): n for n, t in bn_model.named_buffers()}
print("written back after every call:", [names[id(t)] for _, t in cbn.programs[0].write_slots])
e = cbn.explain()
print(f"graph breaks: {e.graph_break_count}, compiled segments: {e.segment_count}, "
      f"traces: {e.compile_times}")

# %%
check("the compiled BatchNorm counted 3 batches", int(bn_model[1].num_batches_tracked), 3)
check("its running mean is the eager twin's", bn_model[1].running_mean.numpy(),
      twin[1].running_mean.numpy(), rtol=1e-5)

# %% [markdown]
# The first call returns the eager graph's node (`NativeBatchNormBackward0`): it traced, and
# its writes have already happened, so running the program as well would count the batch
# twice. The later calls run one program, which also writes the three buffers back.
#
# A program cannot do what the function does to *Python*: a `print`, a counter. While
# tracing, `tg.compile` notes every `print()` and compares the Python state the function
# reaches before and after the call (a scheduler's `step()` after `opt.step()` is captured
# instead: it runs after the program). A function with such a side effect is never one
# program: on every call its Python runs again (with stand-in tensors, as
# above), and only the tensor work runs compiled. `explain()` names each side effect; a change
# found only when the call ends has no one line:

# %%
calls = [0]


@tg.compile
def counted(x, w):
    calls[0] += 1
    print("call", calls[0])
    return (x @ w).relu().sum()


for _ in range(3):
    counted(x, w)
print(counted.explain())

# %%
check("the counter counted every compiled call, as in eager", calls[0], 3)

# %% [markdown]
# ## 5. A whole training step, compiled
#
# A step calls `loss.backward()`, `opt.step()` and `opt.zero_grad()`. While tracing, these
# run for real and are also recorded: `backward` adds the gradient graph of the loss,
# `step` adds the optimizer's update with the eager optimizer's formulas, `zero_grad` clears
# the `.grad`s. The parameters and the optimizer's state become the program's **state**, read
# at the start of each call and written back in place at its end — what Fluid's `minimize`
# does in lesson 8. The learning rate is fed on every call, so a schedule never makes the
# program stale.

# %%
def make_training(compiled):
    tg.manual_seed(0)
    net = tg.nn.Sequential(tg.nn.Linear(64, 32), tg.nn.Tanh(), tg.nn.Linear(32, 10))
    opt = tg.optim.Adam(net.parameters(), lr=0.01)

    def train_step(xb, yb):
        opt.zero_grad()
        loss = F.cross_entropy(net(xb), yb)
        loss.backward()
        opt.step()
        return loss

    return net, (tg.compile(train_step) if compiled else train_step)


batches = [(tg.tensor(X[i:i + 64]), tg.tensor(y[i:i + 64])) for i in range(0, 1280, 64)]
results = {}
for compiled in (False, True):
    net, train = make_training(compiled)
    start = time.perf_counter()
    for _ in range(5):
        losses = [train(xb, yb).item() for xb, yb in batches]
    results[compiled] = (time.perf_counter() - start, losses[-1], net)
    print(f"{'compiled' if compiled else 'eager':>8}: 100 steps in "
          f"{results[compiled][0]:.2f} s, last loss {losses[-1]:.4f}")

# %%
check("100 compiled Adam steps give the parameters of 100 eager steps",
      np.concatenate([p.detach().numpy().ravel() for p in results[True][2].parameters()]),
      np.concatenate([p.detach().numpy().ravel() for p in results[False][2].parameters()]),
      rtol=1e-4, atol=1e-6)
check_true("the step compiled into one program (built for the state Adam's first step left)",
           len(train.programs) == 1 and train.explain().graph_break_count == 0)

# %% [markdown]
# Printing the loss inside the step is a graph break, not a reason to give up the graph:
# the step is cut at the read. Here the read comes after `opt.step()`, so the whole step is
# one compiled segment and only the print runs eagerly; a read before `loss.backward()`
# would make the forward one segment, and the backward with the update a second one. The
# segments' programs write the parameters and the optimizer's state back as above.

# %%
tg.manual_seed(0)
net = tg.nn.Sequential(tg.nn.Linear(64, 32), tg.nn.Tanh(), tg.nn.Linear(32, 10))
opt = tg.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)


@tg.compile
def verbose_step(xb, yb):
    opt.zero_grad()
    loss = F.cross_entropy(net(xb), yb)
    loss.backward()
    opt.step()
    print(f"loss {loss.item():.4f}")
    return loss


for xb, yb in batches[:3]:
    verbose_step(xb, yb)
print(verbose_step.explain())

# %%
check_true("the step with a print runs compiled, only the print eagerly",
           not verbose_step.explain().eager_reasons and verbose_step.explain().segment_count == 1)

# %% [markdown]
# Where does the time go? The eager engine pays Python's cost $c_{py}$ (about 10 µs) for every
# op it runs and records, and again in backward; the compiled program pays a cost $c_{call}$
# once per call, and what remains is numpy's work $c_{np}$, as in hand-written numpy:
#
# $$t_{\text{eager}} \approx n_{\text{ops}}\,(c_{py} + c_{np}), \qquad
# t_{\text{compiled}} \approx c_{call} + n_{\text{ops}}\, c_{np}.$$
# This model's arrays are small,
# so each step is mostly that per-op cost, and compiling saves part of it. The smaller the
# arrays and the more ops, the bigger the gain: a chain of 300 small ops and its gradient,

# %%
def chain(x):
    for _ in range(100):
        x = (x * 1.0001 + 0.5) * 0.9999
    return x.sum()


cchain = tg.compile(chain)
timings = {}
for name, fn in (("eager", chain), ("compiled", cchain)):
    x = tg.tensor([0.1, -0.2, 0.3, -0.4], requires_grad=True)
    fn(x).backward()  # the first call traces the compiled one
    start = time.perf_counter()
    for _ in range(20):
        x = tg.tensor([0.1, -0.2, 0.3, -0.4], requires_grad=True)
        fn(x).backward()
    timings[name] = (time.perf_counter() - start) / 20
    print(f"{name:>8}: {timings[name] * 1e3:.2f} ms per forward + backward")

# %% [markdown]
# (`python -m benchmarks.run --only tgc_chain` times the 1000-op version against PyTorch
# eager: see docs/performance.md.)

# %%
summary(ex);
