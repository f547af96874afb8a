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
# # Lesson 10 — One ready queue per device
#
# Lessons 3 and 5 ran the backward engine on one thread: one heap of ready nodes, popped
# highest sequence number first. That is the whole engine for a model on the CPU. But a GPU
# computes *while the CPU goes on*, and PyTorch's engine is built to exploit it: every device
# has its own **ready queue** and its own **worker thread**, so the backward of the GPU part of
# a model runs on the GPU's thread while the thread that called `backward()` runs the CPU
# nodes. `tinygrad_edu`'s engine (its core in `tinygrad_edu/eager/engine.py`, the queues and
# threads in `tinygrad_edu/eager/engine_threads.py`) follows that design, with
# PyTorch's names:
#
# | piece | what it is |
# |---|---|
# | `ReadyQueue` | a heap of ready nodes behind a lock; any thread pushes, one thread pops |
# | the CPU queue | worked by the thread that called `backward()` |
# | a worker thread per other device | named `autograd sim:0`, started once, reused by every backward |
# | `GraphTask` | one backward call's shared state: `dependencies`, `not_ready` (the input buffers), `outstanding_tasks`, `not_done`, the first `exception` |
# | `FunctionTask` | a ready node with its input buffer, waiting in a queue |
#
# No GPU is needed: **simulated devices** `"sim:0"`, `"sim:1"`, ... compute with numpy but
# count as devices of their own for every rule, so this lesson runs anywhere. This lesson:
#
# 1. simulated devices and `.to()`, a copy recorded in the graph;
# 2. which queue runs each node, and the stepper's lanes;
# 3. worker threads and the `GraphTask`;
# 4. why it pays: overlapping work, and how long a backward takes;
# 5. reentrant backward: a backward inside a backward (a checkpoint);
# 6. errors in a worker thread.

# %%
import inspect
import threading
import time

import numpy as np

import tinygrad_edu as tg
from tinygrad_edu import viz
from tinygrad_edu.eager import Observer, engine_threads, observe
from tinygrad_course.lessons import check, check_true, summary
from tinygrad_course.lessons import lesson10 as ex

# %% [markdown]
# ## 1. Simulated devices, and copies in the graph
#
# A tensor on `"sim:0"` holds a numpy array, but the rules treat `sim:0` like a GPU: an op may
# not mix devices, and the error names both and the fix.

# %%
a = tg.tensor([1.0, 2.0], device="sim:0")
print(a, "| its data is a", type(a._data).__name__)
try:
    tg.tensor([1.0, 1.0]) + a
except RuntimeError as error:
    print("RuntimeError:", error)

# %% [markdown]
# `t.to(device)` copies. For a tensor that takes part in autograd the copy is an op like any
# other: it records a **`ToCopyBackward0`** node, whose backward copies the gradient back to
# where the value came from. Here is the graph this lesson uses: `x` lives on the CPU, the
# weight `w` on `sim:0`; the product is computed on `sim:0` and the loss back on the CPU.

# %%
print(inspect.getsource(ex.cross_device_graph))
loss, names = ex.cross_device_graph()
print("\nloss =", loss.item(), "on", loss.device)
viz.draw(loss, names=names)

# %% [markdown]
# ## 2. Which queue runs each node?
#
# The engine decides it when a node becomes ready: the node goes onto the queue of the device
# **its input buffer lives on** — the device of the gradients it receives, which is the device
# its forward output lived on. The CPU queue is worked by the calling thread; the `sim:0` queue
# by the worker thread `autograd sim:0`.
#
# ### Exercise 10.1 — which queue runs each node
#
# Predict before you look. Write `lanes()` returning a dict from each node name of the drawing
# above (`"SumBackward0 (loss)"`, `"MulBackward0"`, `"ToCopyBackward0 #1"`, ...) to `"cpu"` or
# `"sim:0"`: the queue that runs it. (`ToCopyBackward0 #1` is the copy made first, `x.to("sim:0")`;
# `#2` is `y.to("cpu")`.) The check runs `backward()` and compares with what the engine reports.

# %%
def lanes():
    # BEGIN SOLUTION
    return {
        "SumBackward0 (loss)": "cpu",
        "MulBackward0": "cpu",
        "ToCopyBackward0 #2": "cpu",     # the copy of y lives on the CPU
        "TanhBackward0 (y)": "sim:0",
        "MmBackward0": "sim:0",
        "AccumulateGrad (w)": "sim:0",  # w lives on sim:0
        "ToCopyBackward0 #1": "sim:0",   # the copy of x lives on sim:0
        "AccumulateGrad (x)": "cpu",
    }
    # END SOLUTION


# %%
ex.lanes.check(lanes)

# %% [markdown]
# How the engine reports it: an **observer** (lesson 5) is called on the thread that runs each
# node, and `engine_threads.current_queue_device()` names the queue that thread works.

# %%
class WhoRuns(Observer):
    def __init__(self, label):
        self.label, self.rows, self.lock = label, [], threading.Lock()  # several threads call

    def node_started(self, task, node, grads):
        with self.lock:
            self.rows.append((self.label.get(node, node.name()), engine_threads.current_queue_device(),
                              threading.current_thread().name, task.outstanding_tasks))


loss, names = ex.cross_device_graph()
with observe(WhoRuns(viz.node_names(loss, names=names))) as who:  # names as drawn
    loss.backward()
print(f"{'node':<20} {'queue':<6} {'thread':<16} outstanding tasks")
for row in who.rows:
    print(f"{row[0]:<20} {row[1]:<6} {row[2]:<16} {row[3]}")
print("\nx.grad on", names["x"].grad.device, "| w.grad on", names["w"].grad.device)

# %% [markdown]
# The first row is `GraphRoot`, the engine's own node that hands the seed gradient to the
# loss. `outstanding_tasks` counts the `FunctionTask`s queued or running for this backward;
# when it drops to zero the `GraphTask` notifies its `not_done` condition and the caller
# returns.
#
# ### The stepper, with one lane per queue
#
# `viz.BackwardStepper.record(loss)` keeps one frame per node. With several devices, each
# frame names the queue and the thread that ran the node, and the table shows one column
# (a *lane*) per queue: what each ran, and what waits in it. Step through it — the gradient
# crosses to `sim:0` at `TanhBackward0 (y)` and comes back at `AccumulateGrad (x)`.

# %%
loss, names = ex.cross_device_graph()
stepper = viz.BackwardStepper.record(loss, names=names)
viz.stepper_frames(stepper)

# %% [markdown]
# ## 3. Worker threads and the GraphTask
#
# A worker thread starts the first time a backward needs its device, and stays: every later
# backward reuses it (PyTorch starts its device threads once, too). `engine_threads.worker_threads()`
# lists them:

# %%
before = engine_threads.worker_threads()
for _ in range(3):
    loss, names = ex.cross_device_graph()
    loss.backward()
after = engine_threads.worker_threads()
print(after)
check_true("three more backward calls reused the same sim:0 thread",
           before["sim:0"] is after["sim:0"] and after["sim:0"].is_alive())

# %% [markdown]
# A graph whose nodes all live on the CPU needs no second thread, no locks and no tasks: the
# caller pops from a plain heap, exactly lesson 3's engine. The machinery of queues and
# threads costs nothing until a graph spans devices.
#
# ## 4. Why it pays: work that overlaps
#
# Suppose the backward of one branch takes 0.3 s on the GPU and another branch takes 0.3 s on
# the CPU. One thread runs them one after the other; with a thread per device they overlap.
# `Slow` below is a custom `Function` whose backward sleeps 0.3 s (a stand-in for real work
# that leaves the Python interpreter free, as a GPU kernel does):

# %%
class Slow(tg.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        time.sleep(0.3)
        return g


def timed_backward(device):
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = tg.tensor([3.0, 4.0], requires_grad=True, device=device)
    total = Slow.apply(a).sum() + Slow.apply(b).sum().to("cpu")
    start = time.perf_counter()
    total.backward()
    return time.perf_counter() - start


print(f"both branches on the CPU: {timed_backward('cpu'):.2f} s (one thread, one after the other)")
print(f"one branch on sim:0:      {timed_backward('sim:0'):.2f} s (two threads at once)")

# %% [markdown]
# ### Exercise 10.2 — how long a backward over two devices takes
#
# Write `finish_time(tasks)`. Each task is a dict with a `"name"`, a `"device"`, a `"cost"`
# (seconds) and `"after"`, the names of the tasks whose gradients it needs. The list is in the
# order the queues run the tasks (a valid order: a task comes after those it waits for). Each
# device has **one** thread, which runs its tasks in list order; a task starts when its
# device is free **and** every task in its `after` list has finished. Return the time the last
# task finishes.

# %%
def finish_time(tasks):
    # BEGIN SOLUTION
    done, free = {}, {}
    for t in tasks:
        start = max([free.get(t["device"], 0.0)] + [done[a] for a in t["after"]])
        done[t["name"]] = free[t["device"]] = start + t["cost"]
    return max(done.values())
    # END SOLUTION


# %%
ex.finish_time.check(finish_time)

# %% [markdown]
# The model of the demo above, in those terms: the root and the sum on the CPU, then two
# branches of 0.3 s. With both on the CPU the branches queue behind each other; with one on
# `sim:0` they overlap.

# %%
predict = ex.finish_time.use(finish_time)
for device in ("cpu", "sim:0"):
    tasks = [
        {"name": "root", "device": "cpu", "cost": 0.0, "after": []},
        {"name": "Slow (a)", "device": "cpu", "cost": 0.3, "after": ["root"]},
        {"name": "Slow (b)", "device": device, "cost": 0.3, "after": ["root"]},
    ]
    print(f"branch b on {device:<5}: predicted {predict(tasks):.2f} s")

# %% [markdown]
# A real model on a GPU has exactly this shape: the loss and anything on the host (an
# embedding table kept in CPU memory, gradients of CPU-side preprocessing, `AccumulateGrad` of
# CPU parameters) run on the caller's thread while the GPU's worker feeds the device.
#
# ## 5. Reentrant backward: a backward inside a backward
#
# A custom `Function`'s `backward` may itself call `backward()` or `tg.grad()`. The engine runs
# that nested call on the **same thread**: it starts a nested `GraphTask` and works its queue
# until the nested task is done, running nested nodes first, so nothing waits for itself
# (PyTorch calls this *reentrant* backward).
#
# The classic use is **gradient checkpointing**: to save memory, the forward pass keeps only
# a block's input, not the values inside it; the backward **recomputes** the block and
# differentiates the recomputation. Our block is $e^{x \tanh x}$:

# %%
print(inspect.getsource(ex.block))

# %% [markdown]
# ### Exercise 10.3 — a checkpoint: backward inside backward
#
# Complete `Checkpoint`. `forward` saves `x` and returns `block(x)` (a `Function`'s forward
# runs without recording a graph, so nothing inside the block is kept). `backward` gets `g`,
# the gradient arriving at the output; it recomputes `y = block(xd)` from a copy
# `xd = x.detach().requires_grad_()` **under `tg.enable_grad()`** (inside a backward, grad mode
# is off, as in PyTorch), then returns `tg.grad(y, xd, grad_outputs=g)[0]`.

# %%
class Checkpoint(tg.Function):
    @staticmethod
    def forward(ctx, x):
        # BEGIN SOLUTION
        ctx.save_for_backward(x)
        return ex.block(x)
        # END SOLUTION

    @staticmethod
    def backward(ctx, g):
        # BEGIN SOLUTION
        (x,) = ctx.saved_tensors
        xd = x.detach().requires_grad_()
        with tg.enable_grad():
            y = ex.block(xd)
        return tg.grad(y, xd, grad_outputs=g)[0]
        # END SOLUTION


checkpoint = Checkpoint.apply

# %%
ex.checkpoint.check(checkpoint)

# %% [markdown]
# Watching it: an observer's `begin` is called for every `GraphTask`, with its nesting `depth`
# and on the thread that runs it. The outer backward starts at depth 0; the `tg.grad` inside
# `CheckpointBackward` starts a task at depth 1, on the same thread.

# %%
class Tasks(Observer):
    def begin(self, task):
        print(f"GraphTask begins: depth {task.depth}, thread {threading.current_thread().name!r}")

    def node_started(self, task, node, grads):
        print(f"{'    ' * (task.depth + 1)}{node.name()}")


x = tg.tensor([0.5, -1.0, 2.0], requires_grad=True)
with observe(Tasks()):
    ex.checkpoint.use(checkpoint)(x).sum().backward()
x_plain = tg.tensor([0.5, -1.0, 2.0], requires_grad=True)
ex.block(x_plain).sum().backward()
check("the checkpoint's gradient equals the plain block's", x.grad, x_plain.grad)

# %% [markdown]
# ## 6. Errors in a worker thread
#
# An exception in any thread is kept on the `GraphTask` (the first one); the rest of the task
# is skipped, and once nothing is outstanding the caller raises it, naming the node and the
# thread it ran on. The original exception is its `__cause__`. The worker lives on for the
# next backward.

# %%
class Broken(tg.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        raise ValueError("something went wrong in here")


w1 = tg.tensor([1.0, 2.0], requires_grad=True, device="sim:1")
try:
    Broken.apply(w1).sum().to("cpu").backward()
except ValueError as error:
    print("raised in the caller:", error)
loss, names = ex.cross_device_graph()
loss.backward()
check_true("the workers survive the error and serve the next backward",
           all(t.is_alive() for t in engine_threads.worker_threads().values()))

# %% [markdown]
# One more guarantee completes the picture: several **user** threads may call `backward()` at
# once on graphs that share parameters. Each addition into a leaf's `.grad` holds that leaf's
# own lock, so no update is lost.

# %%
shared = tg.tensor([1.0, 1.0], requires_grad=True)


def train_step():
    for _ in range(50):
        (shared * 2.0).sum().backward()


threads = [threading.Thread(target=train_step) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join(timeout=60)
check("4 threads x 50 backward calls, each adding 2", shared.grad, [400.0, 400.0])

# %%
summary(ex);
