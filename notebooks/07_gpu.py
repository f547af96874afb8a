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
# # Lesson 7 — The GPU with CuPy
#
# Every tensor lives on a **device**: `"cpu"` (its data is a numpy array) or `"cuda"`,
# `"cuda:0"`, `"cuda:1"` ... (a CuPy array in the memory of an NVIDIA GPU). Nothing in the
# engines or the op library imports numpy or CuPy for math. They ask the backend for the
# **array namespace** of the device — `xp`, a module with `exp`, `matmul`, `sum` ... — and
# compute with it. Swap the namespace and the same code runs on the GPU.
#
# This lesson covers:
#
# 1. device names and `cuda_available()`;
# 2. the namespace idea: `get_namespace`, `namespace_of`, how an op is written;
# 3. `.to(device)` and the errors you get when the GPU is not there;
# 4. a small timing comparison, CPU against GPU;
# 5. `array_api_strict`, a stand-in that keeps the code GPU-portable on a laptop.
#
# **No GPU needed**: without CuPy or a GPU the lesson says so and runs everything on the CPU.

# %%
import time
import warnings

import numpy as np

import tinygrad_edu as tg
from tinygrad_edu import backend, viz
from tinygrad_edu.backend import DeviceError
from tinygrad_course.lessons import check, check_true, summary
from tinygrad_course.lessons import lesson07 as ex

HAS_GPU = backend.cuda_available()
DEVICE = "cuda" if HAS_GPU else "cpu"
if HAS_GPU:
    import cupy

    name = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"GPU found: {name}. The GPU cells run on {DEVICE!r}.")
else:
    print("No GPU here: CuPy is missing or sees no CUDA device.")
    print(f"Falling back to the CPU: the GPU cells below run on {DEVICE!r}.")
    print('(On a machine with an NVIDIA GPU: pip install "tinygrad_edu[gpu]")')

# %% [markdown]
# ## 1. Devices
#
# A device is named by a string. `backend.parse_device` reads it (tensors do this for you);
# `"cuda"` means GPU 0, `"cuda:N"` GPU number $N$, and `"gpu"` is accepted as an alias.
# A name it does not know is an error that lists the ones it does:

# %%
for name in ["cpu", "cuda", "cuda:1", "gpu:2"]:
    print(f"{name!r:>9} -> {backend.parse_device(name)!r}")
for bad in ["tpu", "cuda:x"]:
    try:
        backend.parse_device(bad)
    except DeviceError as e:
        print(f"{bad!r:>9} -> DeviceError: {e}")

# %% [markdown]
# `backend.cuda_available()` answers one question without raising: does CuPy import **and** see
# at least one CUDA device? Use it to pick a device. A tensor's array is `x._data` (PyTorch's
# `x.data`, which this library has too, is a *tensor* on the same memory):

# %%
print("cuda_available():", backend.cuda_available())
x = tg.tensor([1.0, 2.0, 3.0], device=DEVICE)
print("x lives on", x.device, "as a", type(x._data).__module__, type(x._data).__name__)

# %% [markdown]
# ## 2. One namespace per device
#
# `backend.get_namespace(device)` gives the module that computes there: `numpy` for the CPU,
# `cupy` for CUDA. `backend.namespace_of(array)` goes the other way, from an array to its module.

# %%
xp = backend.get_namespace("cpu")
print("get_namespace('cpu')   ->", xp.__name__)
print("namespace_of(x._data)  ->", backend.namespace_of(x._data).__name__)
if HAS_GPU:
    print("get_namespace('cuda')  ->", backend.get_namespace("cuda").__name__)

# %% [markdown]
# Every op in `tinygrad_edu/ops/` receives `xp` and never names numpy. Here are two forward
# kernels (the derivative rules are written the same way, against the engine's functional
# namespace `F`):

# %%
import inspect

from tinygrad_edu.ops import REGISTRY

print(inspect.getsource(REGISTRY["exp"].forward))
print(inspect.getsource(REGISTRY["matmul"].forward))


# %% [markdown]
# Because CuPy copies numpy's interface (`cupy.exp`, `cupy.matmul`, ...), `xp.exp(x)` is numpy's
# `exp` on the CPU and a CUDA kernel on the GPU. The same holds for your own code: get the
# namespace from the data, then use only its functions.

# %%
def logsumexp(a):
    xp = backend.namespace_of(a)      # numpy or cupy: whatever `a` is
    m = xp.max(a, axis=-1, keepdims=True)
    return xp.log(xp.sum(xp.exp(a - m), axis=-1)) + m[..., 0]


print(logsumexp(tg.randn(2, 5, device=DEVICE)._data))


# %% [markdown]
# ## 3. Moving tensors, and the errors
#
# `t.to(device)` copies a tensor to a device; for a tensor that requires grad the copy is
# recorded in the graph (`ToCopyBackward0`), so its gradient flows back to where it came from.
# `model.to(device)` moves every parameter of a module in place (they stay leaves). Asking for
# a GPU that is not there is an error that names the fix.

# %%
def show_error(what, fn):
    try:
        result = fn()
        print(f"{what}: worked -> {result}")
    except (DeviceError, RuntimeError) as e:
        print(f"{what}:\n    {type(e).__name__}: {e}")

# %% [markdown]
# These errors come from `get_namespace`'s CUDA branch, which is **assignment A4.1**, the GPU
# assignment. **Without an NVIDIA GPU, A4.1 is optional**: its tests are skipped on such a
# machine (your instructor says whether A4 counts in your course). Until it is written, the
# cell below says that it needs A4.1 and shows what it printed when your edition was made;
# the rest of the lesson runs on the CPU either way.

# %%
show_error("tg.tensor(..., device='cuda')", lambda: tg.tensor([1.0], device="cuda").device)
show_error("x.to('cuda')", lambda: tg.tensor([1.0]).to("cuda").device)
show_error("get_namespace('cuda:7')", lambda: backend.get_namespace("cuda:7").__name__)

# %% [markdown]
# Without CuPy all three say how to install it; with CuPy on a one-GPU machine the last one
# names the visible indices. Mixing devices in one op is an error too. The simulated devices
# `"sim:0"`, `"sim:1"` (numpy underneath, but devices of their own for every rule) show it on
# any machine, along with a recorded move of a computed tensor:

# %%
w = tg.tensor([1.0, 2.0], requires_grad=True)
y = (w * 3).to("sim:0")
print("y =", y)
show_error("cpu tensor + sim:0 tensor", lambda: tg.tensor([1.0, 1.0]) + y)
if HAS_GPU:
    show_error("cpu tensor + cuda tensor",
               lambda: tg.tensor([1.0]) + tg.tensor([1.0], device="cuda"))

# %% [markdown]
# The drawing says where each tensor and each backward op lives (a box with no device is on
# the CPU). `w` is a CPU leaf; `w * 3` is computed on the CPU, then moved: the move is the
# node `ToCopyBackward0`, which sends the gradient back from `sim:0` to the CPU, where
# `AccumulateGrad` adds it to `w.grad`. Everything after the move runs on `sim:0`.

# %%
w.name = "w"
loss = (y * y).sum()
loss.backward()
print("w.grad =", w.grad, "on", w.grad.device)
viz.draw(loss)

# %%
tg.manual_seed(0)
model = tg.nn.Sequential(tg.nn.Linear(4, 8), tg.nn.ReLU(), tg.nn.Linear(8, 2)).to(DEVICE)
print("parameters on:", {p.device for p in model.parameters()})
out = model(tg.randn(3, 4, device=DEVICE)).sum()
out.backward()
print("output on", out.device, "- gradients on", {p.grad.device for p in model.parameters()})


# %% [markdown]
# ## 4. How much faster?
#
# A GPU pays off when there is a lot of arithmetic per call: each op launches a kernel (a few
# microseconds), and copies between host and GPU are slow. We time one training step of an MLP
# (forward, backward, SGD update) at a small and a larger size. GPU work is asynchronous:
# `loss.item()` waits for it to finish, so the timing is honest. The first GPU call compiles
# kernels, so each timing starts after a warm-up step.

# %%
def train_step_time(device, n, d, h, steps=3):
    rng = np.random.default_rng(0)
    X = tg.tensor(rng.standard_normal((n, d)).astype(np.float32), device=device)
    y = tg.tensor(rng.integers(0, 10, n), device=device)
    W1 = tg.tensor(rng.standard_normal((d, h)).astype(np.float32) * 0.05, device=device,
                   requires_grad=True)
    W2 = tg.tensor(rng.standard_normal((h, 10)).astype(np.float32) * 0.05, device=device,
                   requires_grad=True)

    def step():
        loss = tg.nn.functional.cross_entropy((X @ W1).relu() @ W2, y)
        loss.backward()
        with tg.no_grad():
            for p in (W1, W2):
                p.sub_(p.grad * 0.1)
                p.grad = None
        return loss.item()  # waits for the device

    step()  # warm-up
    start = time.perf_counter()
    for _ in range(steps):
        value = step()
    return value, (time.perf_counter() - start) / steps


sizes = [(256, 64, 128), (2048, 512, 1024)]
devices = ["cpu", "cuda"] if HAS_GPU else ["cpu"]
if not HAS_GPU:
    print("CPU only (no GPU here): the table shows the CPU times that a GPU would be compared "
          "with.")
print(f"{'size (n, d, h)':>20} " + " ".join(f"{dev + ' ms/step':>14}" for dev in devices))
results = {}
for size in sizes:
    row = {dev: train_step_time(dev, *size) for dev in devices}
    results[size] = row
    print(f"{str(size):>20} " + " ".join(f"{row[dev][1] * 1e3:>14.2f}" for dev in devices)
          + (f"   speed-up x{row['cpu'][1] / row['cuda'][1]:.1f}" if HAS_GPU else ""))

# %% [markdown]
# Same code, same numbers: the devices must agree on the loss (up to float32 rounding, since a
# GPU sums in a different order):

# %%
for size, row in results.items():
    if HAS_GPU:
        check(f"loss at {size}, GPU vs CPU", row["cuda"][0], row["cpu"][0], rtol=1e-3)
    else:
        print(f"loss at {size} on the CPU: {row['cpu'][0]:.5f} (no GPU to compare with)")

# %% [markdown]
# ## 5. Staying GPU-portable without a GPU: `array_api_strict`
#
# CuPy follows numpy closely, but not everything numpy accepts works in CuPy (numpy scalars
# mixed in, methods numpy has and others lack, implicit conversions). The **Python array API
# standard** is the part all array libraries promise. `array_api_strict` implements *only*
# the standard and rejects everything else, so it is a good stand-in for "some other
# namespace" on a machine with no GPU. A few things numpy allows and the standard does not:

# %%
import array_api_strict as xps

a = xps.asarray([1.0, 2.0, 3.0])
print("type:", type(a).__module__, type(a).__name__)
for what, fn in [
    ("a.astype('float64')  (a numpy method)", lambda: a.astype("float64")),
    ("a + np.float64(1)     (a numpy scalar)", lambda: a + np.float64(1.0)),
    ("xps.mean of integers  (numpy converts)", lambda: xps.mean(xps.asarray([1, 2]))),
    ("xps.astype(a, xps.float64)  (standard)", lambda: xps.astype(a, xps.float64).dtype),
]:
    try:
        print(f"{what}: ok -> {fn()}")
    except (AttributeError, TypeError) as e:
        print(f"{what}: {type(e).__name__}: {e}")

# %% [markdown]
# `backend.use_cpu_namespace(xps)` makes the CPU device compute with the strict namespace inside
# a `with` block. The whole engine — forward ops, the backward engine, derivative rules — then
# runs on strict arrays; if any of it used a numpy-only feature, it would fail here, long
# before it reached a GPU. The test suite runs the op table this way.

# %%
with backend.use_cpu_namespace(xps), warnings.catch_warnings():
    warnings.simplefilter("ignore")  # dtype comparisons across libraries warn
    xs = tg.tensor([0.1, 0.2, 0.3], requires_grad=True)
    loss = ((xs * xs).exp() * xs.tanh()).sum()
    loss.backward()
    print("data computed with:", type(xs._data).__module__, "- grad with:",
          type(xs.grad._data).__module__)
    strict_grad = np.asarray(xs.grad._data)  # a strict array -> numpy, for the check

xn = np.array([0.1, 0.2, 0.3], dtype=np.float32)
expected = np.exp(xn**2) * (2 * xn * np.tanh(xn) + 1 - np.tanh(xn) ** 2)
check("d/dx sum(exp(x^2) tanh x) on the strict namespace", strict_grad, expected, rtol=1e-5)


# %% [markdown]
# ### Exercise 7.1 — a portable softmax
#
# Write `portable_softmax(a)` for an array `a` of any supported namespace (numpy, CuPy,
# `array_api_strict`): softmax along the last axis,
# $\mathrm{softmax}(a)_i = e^{a_i - m} / \sum_j e^{a_j - m}$ with $m = \max_j a_j$ (subtracting
# $m$ avoids overflow). Get `xp` from the array with `backend.namespace_of` and use only array
# API functions (`xp.max`, `xp.exp`, `xp.sum` with `axis=-1, keepdims=True`). The result must be
# an array of the **same** namespace.
#
# The check runs it on numpy, on `array_api_strict`, and on the GPU when there is one, and
# compares with `tg`'s own `softmax`.

# %%
def portable_softmax(a):
    # BEGIN SOLUTION
    xp = backend.namespace_of(a)
    e = xp.exp(a - xp.max(a, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)
    # END SOLUTION


# %%
ex.portable_softmax.check(portable_softmax)
if not HAS_GPU:
    print("(no GPU here: the GPU check is skipped; the strict namespace stood in for it)")

# %%
summary(ex);
