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
# # Lesson 8 — Static graphs, then and now
#
# There are two ways to hand a computation to an autodiff system.
#
# * **Define-and-run** (a *static* graph): first describe the whole computation as a graph of
#   symbols, with no numbers in it; then run that graph, many times, on data. Theano, TensorFlow
#   1, CSE599W's assignment, Paddle Fluid, and — as a file format — ONNX.
# * **Define-by-run** (*eager*): just compute, and let the library record what happened on the
#   way. PyTorch, Paddle's dygraph, JAX's tracing on the inside, and `tg.tensor`.
#
# `tinygrad_edu` has both engines over one op library, so we can put them side by side.
# This lesson covers:
#
# 1. CSE599W's `Executor` — build a graph, take `gradients`, run it;
# 2. Paddle Fluid's *Program / startup program / scope / Executor*: build once, run many;
# 3. the same training loop written define-by-run;
# 4. ONNX — a static graph saved as data — and a listing of our graph in its style;
# 5. when each form wins.

# %%
import json

import numpy as np

import tinygrad_edu as tg
from tinygrad_edu import viz
from tinygrad_course.lessons import summary
from tinygrad_course.lessons import lesson08 as ex
from tinygrad_edu.symbolic import cse599w as ad

# %% [markdown]
# ## 1. CSE599W: Variables, gradients and the Executor
#
# In CSE599W's autodiff assignment a graph node is a **tensor that will exist**. `ad.Variable`
# makes an input; operators make new nodes; nothing is computed. `ad.gradients(y, [x, w])`
# does not compute a number either: it **adds nodes** that compute the gradient, so the
# gradient is itself part of the graph. An `Executor` finally sorts the nodes it needs
# (a topological order, computed once) and evaluates them for a `feed_dict`.

# %%
x = ad.Variable("x")
w = ad.Variable("w")
z = ad.reduce_sum(x * w + ad.exp(x))
z.name = "z"
grad_x, grad_w = ad.gradients(z, [x, w])
print(z, grad_x, grad_w, sep="\n")

# %% [markdown]
# ### The graph, drawn
#
# Forward tensors are blue, the gradient nodes that `gradients` added are orange. `x` is used
# twice (by `*` and by `exp`), so its two partial adjoints meet in an explicit **add** node
# (yellow): the static graph's way of summing over fan-out. The values shown come from one run
# with $x = (0, 1)$ and $w = (2, 2)$.

# %%
viz.draw_symbolic([z, grad_x, grad_w], feed={x: np.array([0.0, 1.0]), w: np.array([2.0, 2.0])},
                  labels={grad_x: "dz/dx", grad_w: "dz/dw"})

# %% [markdown]
# An `Executor` sorts the nodes its outputs need once, when it is made:

# %%
executor = ad.Executor([z, grad_x, grad_w])
print("evaluation order:")
for node in executor.topo_order:
    print(f"  {node.op.name:<12} {node.name}")

# %% [markdown]
# Running it is a loop over that list, the same list for every feed, whatever its shape:

# %%
for xv in ([0.0, 1.0], [1.0, 2.0, 3.0]):
    xv = np.array(xv)
    z_val, gx_val, gw_val = executor.run(feed_dict={x: xv, w: 2 * np.ones_like(xv)})
    print(f"x={xv}:  z={z_val:.4f}  dz/dx={gx_val}  dz/dw={gw_val}")

# %% [markdown]
# ### Exercise 8.1 — a gradient graph
#
# Write `q_and_gradients(a_val, b_val)`: build the graph of $q = \sum_i \tanh(a_i b_i) + a_i^2$
# for two Variables `a` and `b`, take its gradients with `ad.gradients`, and evaluate $q$,
# $\partial q/\partial a$ and $\partial q/\partial b$ with an `ad.Executor` at the arrays
# `a_val`, `b_val`. Return the three values.

# %%
def q_and_gradients(a_val, b_val):
    # BEGIN SOLUTION
    a = ad.Variable("a")
    b = ad.Variable("b")
    q = ad.reduce_sum((a * b).tanh() + a * a)
    da, db = ad.gradients(q, [a, b])
    return ad.Executor([q, da, db]).run(feed_dict={a: a_val, b: b_val})
    # END SOLUTION


# %%
ex.q_and_gradients.check(q_and_gradients)

# %% [markdown]
# ## 2. Paddle Fluid: Program, startup program, scope, Executor
#
# Paddle Fluid (PaddlePaddle's static-graph API, 2018–2020) organised the same idea for
# training at scale:
#
# * a **main Program** describes one training step: the forward ops, the backward ops that
#   `append_backward` adds, and the **optimizer ops** (`sgd`, `adam`) that update the
#   parameters — all as one graph;
# * a **startup Program** holds the *initialisers* of the parameters (`uniform_random`,
#   `fill_constant`); it runs once;
# * a **Scope** is a name → tensor dictionary where parameters live between runs;
# * an **Executor** runs a program against a scope: `exe.run(startup_program)` once, then
#   `exe.run(main_program, feed=..., fetch_list=[loss])` every step.
#
# Our symbolic engine can play every part. The main program's outputs include the *updated*
# parameters, so one run is one full SGD step; we write them back into the scope.

# %%
rng = np.random.default_rng(0)
true_w, true_b = np.array([[2.0], [-3.0], [0.5]]), 1.0
X_data = rng.normal(size=(64, 3))
T_data = X_data @ true_w + true_b + 0.01 * rng.normal(size=(64, 1))

# --- the main program: forward, backward (gradients) and the SGD update, built once ---
X, T = ad.Variable("X"), ad.Variable("T")          # fluid.data(...)
W, B = ad.Variable("W"), ad.Variable("B")          # parameters, read from the scope
lr = 0.1
err = ad.matmul_op(X, W) + B - T
loss = (err * err).mean()
loss.name = "loss"
dW, dB = ad.gradients(loss, [W, B])                # fluid.backward.append_backward(loss)
W_new, B_new = W - lr * dW, B - lr * dB            # fluid.optimizer.SGD(lr).minimize(loss)
main_program = ad.Executor([loss, W_new, B_new])


# --- the startup program: initialisers, run once into the scope ---
def startup_program(scope, seed=1):
    init = np.random.default_rng(seed)
    scope["W"] = init.uniform(-0.1, 0.1, size=(3, 1))   # uniform_random
    scope["B"] = np.zeros(1)                            # fill_constant


scope = {}
startup_program(scope)
for step in range(60):
    batch = slice(step % 4 * 16, step % 4 * 16 + 16)
    loss_val, scope["W"], scope["B"] = main_program.run(
        feed_dict={X: X_data[batch], T: T_data[batch], W: scope["W"], B: scope["B"]})
    if step % 15 == 0 or step == 59:
        print(f"step {step:2d}  loss {loss_val:.5f}")
print("learned W:", scope["W"].ravel().round(3), " B:", scope["B"].round(3))
print("nodes in the main program:", len(main_program.topo_order), "(built once, run 60 times)")

# %% [markdown]
# ## 3. The same thing, define-by-run
#
# The eager engine needs no program: the forward pass *is* Python, run every step; the graph
# of backward nodes is recorded as a side effect and freed after `backward()`. The parameter
# update is ordinary code under `no_grad()`.

# %%
W_t = tg.tensor(np.random.default_rng(1).uniform(-0.1, 0.1, size=(3, 1)), requires_grad=True)
B_t = tg.tensor(np.zeros(1), requires_grad=True)
for step in range(60):
    batch = slice(step % 4 * 16, step % 4 * 16 + 16)
    err_t = tg.tensor(X_data[batch]) @ W_t + B_t - tg.tensor(T_data[batch])
    loss_t = (err_t * err_t).mean()               # the graph is recorded here, every step
    W_t.grad = B_t.grad = None
    loss_t.backward()                             # ... run once, then freed
    with tg.no_grad():
        W_t -= lr * W_t.grad
        B_t -= lr * B_t.grad
    if step % 15 == 0 or step == 59:
        print(f"step {step:2d}  loss {loss_t.item():.5f}")
print("learned W:", W_t.detach().numpy().ravel().round(3), " B:", B_t.detach().numpy().round(3))
print("same result as the static program:", np.allclose(W_t.detach().numpy(), scope["W"]))


# %% [markdown]
# Both engines run the **same derivative rules** (from `tinygrad_edu.ops`), so they learn the
# same numbers. What differs is *when the graph exists*. In the eager version, ordinary Python
# control flow decides the graph, and it may differ from one step to the next:

# %%
def grow(v):
    steps = 0
    while (v * v).sum().item() < 100:
        v = v * 2          # how many multiplications? it depends on the data
        steps += 1
    return v, steps


for start in (0.5, 3.0):
    v0 = tg.tensor([start, start], requires_grad=True)
    out, steps = grow(v0)
    out.sum().backward()
    print(f"start {start}: {steps} doublings recorded, d(sum)/dv = {v0.grad}")

# %% [markdown]
# A static graph is fixed before the data arrives, so a data-dependent loop needs special
# control-flow *ops* (TensorFlow's `while_loop`, Fluid's `While` block) whose bodies are
# sub-graphs. That is where define-by-run is much easier to write and to debug.
#
# ## 4. ONNX: a static graph as a file
#
# [ONNX](https://onnx.ai) (Open Neural Network Exchange) is a file format for static graphs:
# a model is a `GraphProto` holding
#
# * `input` / `output`: the graph's named input and output tensors,
# * `initializer`: named constant tensors (the trained weights),
# * `node`: a list of `NodeProto`s **in topological order**, each with an `op_type` (`MatMul`,
#   `Add`, `Relu`, ...), the *names* of its input and output tensors, and attributes.
#
# Edges are implicit: a node consumes a tensor by naming it. Any runtime that knows the ops
# (ONNX Runtime, TensorRT, a browser) can run the file, with no Python and no framework.
#
# Our symbolic graph already has everything ONNX needs. The function below lists it the ONNX
# way (without the `onnx` package: the listing is the point). It names every intermediate
# tensor `v0, v1, ...`, keeps Variables' names, and turns constants into initializers.

# %%
ONNX_OP_TYPES = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "matmul": "MatMul",
                 "exp": "Exp", "log": "Log", "tanh": "Tanh", "sigmoid": "Sigmoid",
                 "relu": "Relu", "sum": "ReduceSum", "mean": "ReduceMean", "neg": "Neg"}


def to_onnx_listing(outputs):
    """A GraphProto-like dict: inputs, initializers, nodes (topological order), outputs."""
    order = ad.find_topo_sort(outputs)
    names, graph = {}, {"input": [], "initializer": {}, "node": [], "output": []}
    for node in order:
        if node.op.name == "placeholder":
            names[node] = node.name
            graph["input"].append(node.name)
        elif node.op.name == "constant":
            names[node] = f"c{len(graph['initializer'])}"
            graph["initializer"][names[node]] = np.asarray(node.attrs["value"]).tolist()
        else:
            names[node] = f"v{len(graph['node'])}"
            attrs = {k: v for k, v in node.attrs.items() if v not in (None, False)}
            graph["node"].append({"op_type": ONNX_OP_TYPES.get(node.op.name, node.op.name),
                                  "input": [names[i] for i in node.inputs],
                                  "output": [names[node]], "attribute": attrs})
    graph["output"] = [names[o] for o in outputs]
    return graph


def show(graph):
    print(f"inputs: {graph['input']}   initializers: {graph['initializer']}")
    print(f"{'#':>2}  {'op_type':<11} {'inputs':<14} outputs  attributes")
    for k, n in enumerate(graph["node"]):
        print(f"{k:>2}  {n['op_type']:<11} {', '.join(n['input']):<14} "
              f"{', '.join(n['output']):<8} {n['attribute'] or ''}")
    print(f"outputs: {graph['output']}")


X1, W1, B1 = ad.Variable("X"), ad.Variable("W"), ad.Variable("B")
hidden = ad.relu_op(ad.matmul_op(X1, W1) + B1)
prob = (hidden * 0.5).sigmoid()
model = to_onnx_listing([prob])
show(model)

# %% [markdown]
# Because it is data, the graph can be saved, sent, and loaded back — here as JSON, the
# way an `.onnx` file is protobuf:

# %%
text = json.dumps(model)
print(len(text), "characters:", text[:110], "...")
loaded = json.loads(text)
print("round trip keeps the graph:", loaded == model)

# %% [markdown]
# ### Exercise 8.2 — a tiny ONNX runtime
#
# Write `run_listing(graph, feeds)`: evaluate a listing like `model` with numpy. Start a
# dict `values` with the feeds and the initializers (as arrays), then go through
# `graph["node"]` **in order** — the list is already topologically sorted — computing each
# node's output from the values of its inputs with the kernels in `KERNELS`. Return the list of
# values named in `graph["output"]`.

# %%
KERNELS = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
    "MatMul": np.matmul, "Exp": np.exp, "Tanh": np.tanh, "Relu": lambda v: np.maximum(v, 0),
    "Sigmoid": lambda v: 1 / (1 + np.exp(-v)),
}


def run_listing(graph, feeds):
    # BEGIN SOLUTION
    values = dict(feeds)
    values.update({k: np.asarray(v) for k, v in graph["initializer"].items()})
    for node in graph["node"]:
        args = [values[name] for name in node["input"]]
        values[node["output"][0]] = KERNELS[node["op_type"]](*args)
    return [values[name] for name in graph["output"]]
    # END SOLUTION


# %%
ex.run_listing.check(run_listing)


# %% [markdown]
# ### Exercise 8.3 — the Executor's order, by hand
#
# Every static-graph runtime starts by sorting the graph. Write `topo_order(outputs)`: every
# node the outputs depend on (follow `node.inputs`), each listed **after** all its inputs, each
# exactly once. Use an explicit stack rather than recursion: recursive versions fail on deep
# graphs (Python's recursion limit is about 1000).

# %%
def topo_order(outputs):
    # BEGIN SOLUTION
    order, done, stack = [], set(), [(n, False) for n in reversed(outputs)]
    while stack:
        node, inputs_done = stack.pop()
        if node in done:
            continue
        if inputs_done:
            done.add(node)
            order.append(node)
            continue
        stack.append((node, True))
        stack.extend((i, False) for i in reversed(node.inputs) if i not in done)
    return order
    # END SOLUTION


# %%
ex.topo_order.check(topo_order)

# %% [markdown]
# ## 5. When each form wins
#
# | | static graph (symbolic, Fluid, ONNX) | define-by-run (eager, dygraph, PyTorch) |
# |---|---|---|
# | writing and debugging | a separate build phase; errors show up at run time, far from the line that caused them | plain Python: `print`, a debugger, an exception at the faulty line |
# | control flow | special ops with sub-graphs (`while_loop`, `cond`) | `if` and `while` on values |
# | graph per step | built once, run many times: no per-step Python overhead | rebuilt every step (cheap for big ops, costly for many tiny ones) |
# | optimisation | the whole graph is known ahead: fuse ops, plan memory, prune unused nodes | one op at a time (unless traced / compiled: `torch.compile`, `jax.jit`) |
# | gradients | more graph (`gradients` adds nodes): higher orders and serialising training come free | `backward()` runs the recorded graph; `create_graph=True` for higher orders |
# | deployment | serialise the graph (ONNX, a saved Program) and run it without Python | export by tracing one run into a static graph — which is ONNX again |
#
# Today's frameworks mix the two: you write define-by-run code, and a tracer or compiler turns
# the hot part into a static graph (TorchScript, `torch.export` → ONNX, `jax.jit`, Paddle's
# `to_static`). Knowing both forms is knowing what those tools do.

# %%
summary(ex);
