"""The CNN benchmarks: one training step of a LeNet-style network, and conv2d alone.

* ``cnn_step``: batch 64 of 1x28x28 images; conv 1->16 3x3 pad 1, ReLU, max-pool 2, conv 16->32
  3x3 pad 1, ReLU, max-pool 2, linear 32*7*7 -> 10, cross-entropy with class-index labels,
  backward (every weight's gradient). Eager (``nn`` modules), symbolic (one graph with its
  gradient graph, run by an ``Executor``) and PyTorch, from the same weights.
* ``conv2d``: the second convolution alone (64x16x14x14 input, 32 3x3 filters, pad 1), forward
  and backward (input, weight and bias gradients).
* ``convnet_step``: the ConvNet of yunjey's pytorch-tutorial (the real program ``cnn`` of
  ``benchmarks.real_programs``): conv 1->16 5x5 pad 2, BatchNorm2d, ReLU, max-pool 2, conv 16->32
  5x5 pad 2, BatchNorm2d, ReLU, max-pool 2, linear 32*7*7 -> 10, cross-entropy; batch 50,
  forward and backward in training mode. Its 5x5 second convolution (400-row columns) and the
  batch norms are where that program spent its time beyond PyTorch's. (The optimizer step is
  left out: every call starts from the same weights, so the implementations can be compared.)

``python -m benchmarks.cnn --peak IMPL`` measures one implementation's peak memory in a fresh
process (see :func:`peak_rss`); ``benchmarks.run`` calls it for the table.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F
from tinygrad_edu import nn
from tinygrad_edu.symbolic import (
    Executor,
    Variable,
    conv2d,
    gradients,
    matmul,
    max_pool2d,
    relu,
    reshape,
    softmax_cross_entropy,
)

from .cases import Case, _sync, _torch_device, torch

__all__ = ["cnn_step", "conv2d_alone", "convnet_step", "CASES", "REPS", "peak_rss", "lenet",
           "torch_lenet", "convnet"]


def _sizes(size):
    # (batch, image side) — the tiny size keeps the smoke test fast
    return (64, 28) if size == "full" else (4, 8)


def _init(side, seed=0):
    """The network's weights, drawn once (PyTorch's default ranges), as float32 arrays."""
    rng = np.random.default_rng(seed)
    flat = 32 * (side // 4) ** 2

    def u(fan_in, shape):
        b = 1 / np.sqrt(fan_in)
        return rng.uniform(-b, b, shape).astype(np.float32)

    return {
        "0.weight": u(9, (16, 1, 3, 3)), "0.bias": u(9, (16,)),
        "3.weight": u(144, (32, 16, 3, 3)), "3.bias": u(144, (32,)),
        "7.weight": u(flat, (10, flat)), "7.bias": u(flat, (10,)),
    }  # fmt: skip


def _data(batch, side, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, 1, side, side)).astype(np.float32)
    labels = rng.integers(0, 10, batch)
    return x, labels


def lenet(side: int) -> nn.Module:
    """The benchmark's network as tinygrad_edu modules (PyTorch's spelling)."""
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * (side // 4) ** 2, 10),
    )  # fmt: skip


def torch_lenet(side: int):
    T = torch.nn
    return T.Sequential(
        T.Conv2d(1, 16, 3, padding=1), T.ReLU(), T.MaxPool2d(2),
        T.Conv2d(16, 32, 3, padding=1), T.ReLU(), T.MaxPool2d(2),
        T.Flatten(), T.Linear(32 * (side // 4) ** 2, 10),
    )  # fmt: skip


def _impls(size, device):
    """name -> (setup) -> step callable; each step returns the loss and every gradient."""
    batch, side = _sizes(size)
    init = _init(side)
    x, labels = _data(batch, side)
    names = list(init)

    def eager():
        model = lenet(side)
        model.load_state_dict(init)
        model.to(device)
        xt, yt = tg.tensor(x, device=device), tg.tensor(labels, device=device)
        params = [dict(model.named_parameters())[n] for n in names]

        def step():
            model.zero_grad()
            loss = F.cross_entropy(model(xt), yt)
            loss.backward()
            return [loss] + [p.grad for p in params]

        return step

    def symbolic():
        X = Variable("x", shape=x.shape, dtype="float32")
        Y = Variable("y", shape=(batch, 10), dtype="float32")
        W = {n: Variable(n, shape=a.shape, dtype="float32") for n, a in init.items()}
        h = max_pool2d(relu(conv2d(X, W["0.weight"], W["0.bias"], padding=1)), 2)
        h = max_pool2d(relu(conv2d(h, W["3.weight"], W["3.bias"], padding=1)), 2)
        logits = matmul(reshape(h, (batch, -1)), W["7.weight"], trans_B=True) + W["7.bias"]
        loss = softmax_cross_entropy(logits, Y)
        ex = Executor([loss, *gradients(loss, [W[n] for n in names])], device=device)
        from tinygrad_edu import backend  # noqa: PLC0415

        xp = backend.get_namespace(device)
        feed = {X: xp.asarray(x), Y: xp.asarray(np.eye(10, dtype=np.float32)[labels])}
        feed.update({W[n]: xp.asarray(a) for n, a in init.items()})
        return lambda: ex.run(feed)

    impls = {"eager": eager, "symbolic": symbolic}
    if torch is not None:
        tdev = _torch_device(device)

        def torch_impl():
            model = torch_lenet(side).to(tdev)
            model.load_state_dict({k: torch.tensor(v) for k, v in init.items()})
            tx, ty = torch.tensor(x, device=tdev), torch.tensor(labels, device=tdev)
            params = [dict(model.named_parameters())[n] for n in names]

            def step():
                model.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(tx), ty)
                loss.backward()
                return [loss] + [p.grad for p in params]

            return step

        impls["torch"] = torch_impl
    return impls


def cnn_step(size: str = "full", device: str = "cpu") -> Case:
    batch, side = _sizes(size)
    impls = {name: setup() for name, setup in _impls(size, device).items()}
    ref = "torch" if torch is not None else "eager"
    targets = {"eager": (1.5, None), "symbolic": (1.5, None)} if ref == "torch" else {}
    return Case("cnn_step", f"LeNet-style CNN training step, batch {batch}, 1x{side}x{side}",
                ref, impls, targets=targets, sync=_sync(device),
                extra={"peak": _peak_extras})  # fmt: skip


def _conv_data(size):
    n, c, side, o = (64, 16, 14, 32) if size == "full" else (2, 3, 5, 4)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((n, c, side, side)).astype(np.float32)
    w = (rng.standard_normal((o, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32)
    g = rng.standard_normal((n, o, side, side)).astype(np.float32)
    return x, w, b, g


def conv2d_alone(size: str = "full", device: str = "cpu") -> Case:
    x, w, b, g = _conv_data(size)
    impls = {}
    X, Wt, B = (tg.tensor(a, requires_grad=True, device=device) for a in (x, w, b))
    G = tg.tensor(g, device=device)

    def eager():
        X.grad = Wt.grad = B.grad = None
        y = F.conv2d(X, Wt, B, padding=1)
        y.backward(G)
        return y, X.grad, Wt.grad, B.grad

    impls["eager"] = eager
    if torch is not None:
        tdev = _torch_device(device)
        TX, TW, TB = (torch.tensor(a, requires_grad=True, device=tdev) for a in (x, w, b))
        TG = torch.tensor(g, device=tdev)

        def torch_impl():
            TX.grad = TW.grad = TB.grad = None
            y = torch.nn.functional.conv2d(TX, TW, TB, padding=1)
            y.backward(TG)
            return y, TX.grad, TW.grad, TB.grad

        impls["torch"] = torch_impl
    ref = "torch" if torch is not None else "eager"
    shape = "x".join(map(str, x.shape))
    return Case("conv2d", f"conv2d {shape}, {w.shape[0]} 3x3 filters, pad 1, forward + backward",
                ref, impls, targets={"eager": (1.5, None)} if ref == "torch" else {},
                sync=_sync(device), extra={"peak": _peak_extras})  # fmt: skip


def convnet(lib, side: int):
    """yunjey's ConvNet as one ``Sequential`` of ``lib``'s modules (``lib``: tinygrad_edu or
    torch)."""
    T = lib.nn
    return T.Sequential(
        T.Conv2d(1, 16, 5, padding=2), T.BatchNorm2d(16), T.ReLU(), T.MaxPool2d(2),
        T.Conv2d(16, 32, 5, padding=2), T.BatchNorm2d(32), T.ReLU(), T.MaxPool2d(2),
        T.Flatten(), T.Linear(32 * (side // 4) ** 2, 10),
    )  # fmt: skip


def convnet_step(size: str = "full", device: str = "cpu") -> Case:
    batch, side = (50, 28) if size == "full" else (4, 8)
    x, labels = _data(batch, side, seed=3)
    tg.manual_seed(0)
    init = {n: p.detach().numpy().copy() for n, p in convnet(tg, side).named_parameters()}

    def build(lib, dev):
        model = convnet(lib, side).to(dev)
        params = dict(model.named_parameters())
        with lib.no_grad():
            for n, a in init.items():
                params[n].copy_(lib.tensor(a, device=dev))
        xt, yt = lib.tensor(x, device=dev), lib.tensor(labels, device=dev)
        ps = [params[n] for n in init]

        def step():
            model.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(xt), yt)
            loss.backward()
            return [loss] + [p.grad for p in ps]

        return step

    impls = {"eager": build(tg, device)}
    if torch is not None:
        impls["torch"] = build(torch, _torch_device(device))
    ref = "torch" if torch is not None else "eager"
    return Case("convnet_step", f"ConvNet (5x5 convs, BatchNorm2d) training step, batch {batch}, "
                f"1x{side}x{side}", ref, impls,
                targets={"eager": (1.5, None)} if ref == "torch" else {},
                sync=_sync(device))  # fmt: skip


CASES = {"cnn_step": cnn_step, "conv2d": conv2d_alone, "convnet_step": convnet_step}
REPS = {"cnn_step": 30, "conv2d": 40, "convnet_step": 30}


def _peak_extras(case) -> dict:
    """``benchmarks.run``'s hook: each implementation's peak memory, as table text (CPU only:
    on a GPU the arrays are not in the process's resident memory)."""
    if case.sync is not None:
        return {}
    return {impl: f" (peak {peak_rss(impl, case.name):.1f} MiB)" for impl in case.impls}


# -- peak memory ---------------------------------------------------------------------------------
def peak_rss(impl: str, case: str = "cnn_step", size: str = "full", reps: int = 3) -> float:
    """Peak memory of ``reps`` steps of one implementation, in MiB, measured in a fresh
    single-threaded process: how far the resident set's high-water mark rises above the
    resident set once the setup (imports, data, weights) is done. Linux lets a process reset
    its high-water mark (``/proc/self/clear_refs``), so the imports' own peak does not hide the
    steps'. That is what the steps need at their peak, measured alike for numpy and PyTorch
    allocations."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-m", "benchmarks.cnn", "--peak", impl, "--case", case,
           "--size", size, "--reps", str(reps)]  # fmt: skip
    out = subprocess.run(cmd, env=env, cwd=root, capture_output=True, text=True, timeout=600)
    if out.returncode:
        raise RuntimeError(f"peak memory of {impl}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])["peak_mib"]


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise OSError(f"/proc/self/status has no {field}")


def _measure_peak(impl, case, size, reps) -> dict:
    if torch is not None:
        torch.set_num_threads(1)
    fn = CASES[case](size).impls[impl]
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the high-water mark (VmHWM) to the current resident set
    base = _status_kib("VmRSS")
    for _ in range(reps):
        fn()
    return {"impl": impl, "peak_mib": (_status_kib("VmHWM") - base) / 1024}


if __name__ == "__main__":
    import argparse

    p = argparse.ArgumentParser(prog="python -m benchmarks.cnn")
    p.add_argument("--peak", required=True, help="implementation to measure (eager, torch, ...)")
    p.add_argument("--case", default="cnn_step", choices=sorted(CASES))
    p.add_argument("--size", default="full", choices=["full", "tiny"])
    p.add_argument("--reps", type=int, default=3)
    a = p.parse_args()
    print(json.dumps(_measure_peak(a.peak, a.case, a.size, a.reps)))
