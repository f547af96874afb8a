"""Writes notebooks/07_gpu.ipynb (see nbgen.py for how to execute it)."""

from nbgen import Lesson

L = Lesson()
L.md(r"""
# Lesson 7 — The GPU with CuPy

Every tensor lives on a **device**: `"cpu"` (numpy) or `"cuda"`, `"cuda:1"` ... (CuPy, on an
NVIDIA GPU). The engines never import numpy or CuPy for math: they ask the backend for the
**array namespace** `xp` of the device, and the op library computes with `xp.exp`, `xp.matmul`
... So the same derivative rules run on either.

This lesson runs anywhere. Without CuPy or a GPU it says so and runs the same code on the CPU.
""")
L.code(r"""
import time

import numpy as np

import tinygrad_edu as tg
from tinygrad_edu import backend
from tinygrad_edu.lessons import check, check_true, summary

HAS_GPU = backend.cuda_available()
DEVICE = "cuda" if HAS_GPU else "cpu"
if HAS_GPU:
    print("A CUDA GPU is visible: this lesson runs on", DEVICE)
else:
    print("No CUDA GPU here (or CuPy is not installed): the GPU cells run on the CPU instead.")
    print('On a machine with an NVIDIA GPU: pip install "tinygrad_edu[gpu]"')
""")
L.md(r"""
## Devices and namespaces

`backend.get_namespace(device)` is the whole trick: numpy for `"cpu"`, CuPy for `"cuda"`.
""")
L.code(r"""
print(backend.parse_device("cuda:1"))
print("cpu  ->", backend.get_namespace("cpu").__name__)
try:
    print("cuda ->", backend.get_namespace("cuda").__name__)
except backend.DeviceError as e:
    print("cuda -> DeviceError:", e)
""")
L.md(r"""
Asking for a GPU you do not have is an error that names the fix. Tensors on different devices
cannot meet in one op either; the error names both devices:
""")
L.code(r"""
try:
    tg.tensor([1.0, 2.0], device="cuda")
    print("made a tensor on the GPU")
except backend.DeviceError as e:
    print("DeviceError:", e)
""")
L.md(r"""
## The same training step on either device

`.to(device)` moves a leaf; a model's `to()` moves its parameters. Everything after that is
identical code.
""")
L.code(r"""
def mlp_step(device, n=512, d=256, h=512, steps=5):
    rng = np.random.default_rng(0)
    X = tg.tensor(rng.standard_normal((n, d)).astype(np.float32), device=device)
    y = rng.integers(0, 10, n)
    W1 = tg.tensor((rng.standard_normal((d, h)) * 0.05).astype(np.float32), device=device,
                   requires_grad=True)
    W2 = tg.tensor((rng.standard_normal((h, 10)) * 0.05).astype(np.float32), device=device,
                   requires_grad=True)
    start = time.perf_counter()
    for _ in range(steps):
        loss = tg.nn.functional.cross_entropy((X @ W1).relu() @ W2, y)
        loss.backward()
        with tg.no_grad():
            for p in (W1, W2):
                p.sub_(p.grad * 0.1)
                p.grad = None
    value = loss.item()  # waits for the device to finish
    return value, (time.perf_counter() - start) / steps


cpu_loss, cpu_time = mlp_step("cpu")
print(f"cpu : loss {cpu_loss:.4f}, {cpu_time * 1000:.1f} ms per step")
if HAS_GPU:
    gpu_loss, gpu_time = mlp_step("cuda")
    print(f"cuda: loss {gpu_loss:.4f}, {gpu_time * 1000:.1f} ms per step")
    check("the GPU computes the same loss", gpu_loss, cpu_loss, rtol=1e-3)
else:
    print("cuda: skipped (no GPU here); the CPU numbers above are the whole comparison")
""")
L.md(r"""
## Staying portable: a strict namespace as a stand-in

CuPy follows numpy closely but not perfectly; the **Python array API standard** is the part
both promise. The test suite runs the op library a second time on `array_api_strict`, a
namespace that implements *only* the standard and rejects everything else, so nothing
numpy-only slips into code CuPy must run. `backend.use_cpu_namespace` swaps it in:
""")
L.code(r"""
import array_api_strict as xps

from tinygrad_edu import symbolic as S

x = S.Variable("x")
y = (x * x).exp().sum()
(dx,) = S.gradients(y, [x])
seen = set()  # the array types the executor computed with, node by node
with backend.use_cpu_namespace(xps):
    value, grad = S.Executor([y, dx]).run(
        {x: xps.asarray([0.1, 0.2, 0.3])}, observer=lambda node, v: seen.add(type(v).__module__)
    )
print("computed with arrays from:", sorted(seen))
print("dy/dx =", grad, "(handed back as numpy)")
check("dy/dx = 2x exp(x^2) on the strict namespace", grad,
      2 * np.array([0.1, 0.2, 0.3]) * np.exp(np.array([0.1, 0.2, 0.3]) ** 2), rtol=1e-5)
""")
L.md(r"""
**Exercise 7.1.** Write `pick_device()`: return `"cuda"` when `backend.cuda_available()`
says a GPU is there, else `"cpu"`.
""")
L.code(r"""
def pick_device():
    # BEGIN SOLUTION 7.1
    return "cuda" if backend.cuda_available() else "cpu"
    # END SOLUTION
""")
L.code(r"""
check("pick_device()", pick_device(), DEVICE)
t = tg.tensor([1.0, 2.0], device=pick_device())
check_true("a tensor made on pick_device() lives there", t.device.startswith(pick_device()))
summary();
""")
L.write("07_gpu.ipynb")
