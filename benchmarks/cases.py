"""The benchmark cases: the same computation written for each implementation.

Each case function returns a :class:`Case`: a dict of implementations, each a zero-argument
callable that does the timed work once and returns its results (gradients, losses), plus the
name of the reference implementation and the target ratios. ``size="tiny"`` makes a
seconds-fast version for the smoke test, which checks that all implementations agree.

Implementations: ``eager`` and ``symbolic`` (tinygrad_edu), ``numpy`` (hand-written forward and
backward on the raw array namespace: numpy, or CuPy with ``device="cuda"``) and ``torch``
(PyTorch, when installed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import tinygrad_edu as tg
from tinygrad_edu import backend, nn, optim
from tinygrad_edu.data import load_digits
from tinygrad_edu.symbolic import (
    Executor,
    Variable,
    gradients,
    matmul,
    relu,
    softmax_cross_entropy,
)
from tinygrad_edu.symbolic import training as st

try:  # optional: the `compare` extra
    import torch
except ImportError:
    torch = None

__all__ = ["Case", "CASES", "small_ops", "mlp_step", "deep_chain", "digits", "to_numpy",
           "peak_memory", "torch", "chain_impl", "hand_chain", "hand_mlp_step",
           "torch_mlp_step"]  # fmt: skip


@dataclass
class Case:
    """One benchmark: implementations (name -> step callable) and what to compare against."""

    name: str
    title: str
    reference: str
    impls: dict
    targets: dict = field(default_factory=dict)  # impl -> (target ratio, milestone or None)
    sync: object = None  # waits for the device (GPU) before the clock stops
    extra: dict = field(default_factory=dict)  # impl -> callable giving extra numbers


def to_numpy(x):
    """Tensors, torch tensors, CuPy arrays and numbers -> numpy arrays (for comparisons)."""
    if isinstance(x, tg.Tensor):
        return x.detach().numpy()
    if torch is not None and isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(backend.to_device(x, "cpu")) if hasattr(x, "shape") else np.asarray(x)


def _sync(device):
    if backend.parse_device(device).type != "cuda":
        return None
    xp = backend.get_namespace(device)

    def sync():
        xp.cuda.Device().synchronize()
        if torch is not None and torch.cuda.is_available():
            torch.cuda.synchronize()

    return sync


def _torch_device(device):
    return "cuda" if backend.parse_device(device).type == "cuda" else "cpu"


def chain_impl(lib, chain, x0, n: int, device: str = "cpu", seed: str = "sum"):
    """One forward + backward of ``chain(x, n)`` from a fresh leaf made of ``x0`` in ``lib``
    (tinygrad_edu or torch, the same code for both), returning ``(y, x.grad)``. ``seed`` says
    how backward starts: ``"sum"`` (``y.sum().backward()``), ``"ones"``
    (``y.backward(ones(1))``) or ``"none"`` (``y.backward()``, a one-element ``y``)."""
    dev = _torch_device(device) if lib is torch and torch is not None else device

    def run():
        x = lib.tensor(x0, requires_grad=True, device=dev)
        y = chain(x, n)
        if seed == "sum":
            y.sum().backward()
        elif seed == "ones":
            y.backward(lib.ones(1, device=dev))
        else:
            y.backward()
        return y, x.grad

    return run


# -- 1. small-op overhead ------------------------------------------------------------------------
# a chain of `n` ops on a 4-element tensor, cycling mul / add / tanh, then sum and backward
_MUL, _ADD = 1.01, 0.01


def _chain(y, n: int):
    """The chain on an eager tensor, a symbolic node or a torch tensor (operators only)."""
    for i in range(n):
        k = i % 3
        y = y * _MUL if k == 0 else (y + _ADD if k == 1 else y.tanh())
    return y


def hand_chain(xp, x0d, n: int):
    """:func:`_chain` and its gradient written by hand in ``xp`` (no autograd), keeping the
    tanh outputs its derivative needs: the yardstick of the chain cases."""

    def hand_written():
        y, saved = x0d, []
        for i in range(n):
            k = i % 3
            if k == 0:
                y = y * _MUL
            elif k == 1:
                y = y + _ADD
            else:
                y = xp.tanh(y)
                saved.append(y)
        g = xp.ones_like(y)
        for i in reversed(range(n)):
            k = i % 3
            if k == 0:
                g = g * _MUL
            elif k == 2:
                t = saved.pop()
                g = g * (1 - t * t)
        return y, g

    return hand_written


def small_ops(size: str = "full", device: str = "cpu") -> Case:
    n = 1000 if size == "full" else 30
    x0 = np.array([0.1, -0.2, 0.3, -0.4], np.float32)
    impls = {}

    impls["eager"] = chain_impl(tg, _chain, x0, n, device)

    xs = Variable("x", shape=(4,), dtype="float32")
    ys = _chain(xs, n)
    (gs,) = gradients(ys.sum(), [xs])
    ex = Executor([ys, gs], device=device)
    impls["symbolic"] = lambda: ex.run({xs: x0})

    xp = backend.get_namespace(device)
    x0d = xp.asarray(x0)

    impls["numpy"] = hand_chain(xp, x0d, n)
    if torch is not None:
        impls["torch"] = chain_impl(torch, _chain, x0, n, device)
    ref = "torch" if torch is not None else "numpy"
    targets = {"eager": (1.0, 1.5)} if ref == "torch" else {}
    return Case("small_ops", f"{n}-op chain on 4-element tensors, forward + backward", ref, impls,
                targets=targets, sync=_sync(device))  # fmt: skip


# -- 2. MLP training step ------------------------------------------------------------------------
def _mlp_data(size):
    n, d, h, c = (256, 784, 256, 10) if size == "full" else (8, 20, 16, 5)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, d)).astype(np.float32)
    labels = rng.integers(0, c, n)
    onehot = np.eye(c, dtype=np.float32)[labels]
    w1 = (rng.standard_normal((d, h)) / np.sqrt(d)).astype(np.float32)
    w2 = (rng.standard_normal((h, c)) / np.sqrt(h)).astype(np.float32)
    return x, labels, onehot, w1, w2


def hand_mlp_step(xp, xd, yd, w1d, w2d):
    """The MLP step written by hand in ``xp`` (no autograd): ReLU MLP, softmax cross-entropy
    against ``yd``, both weight gradients; the yardstick of the MLP cases. ``yd`` holds one-hot
    rows, or class indices (1-D), whose logits the step then picks by index, as a careful
    hand-written step would."""
    n = xd.shape[0]
    rows = xp.arange(n)

    def hand_written():
        h = xd @ w1d
        r = xp.maximum(h, 0)
        z = r @ w2d
        zs = z - xp.max(z, axis=1, keepdims=True)
        e = xp.exp(zs)
        se = xp.sum(e, axis=1, keepdims=True)
        if yd.ndim == 1:  # class indices
            loss = -xp.mean(zs[rows, yd] - xp.log(se[:, 0]))
            dz = e / se
            dz[rows, yd] -= 1
            dz /= n
        else:
            loss = -xp.sum(yd * (zs - xp.log(se))) / n
            dz = (e / se - yd) / n
        dw2 = r.T @ dz
        dh = (dz @ w2d.T) * (h > 0)
        dw1 = xd.T @ dh
        return loss, dw1, dw2

    return hand_written


def torch_mlp_step(x, labels, w1, w2, device: str = "cpu"):
    """The MLP step in PyTorch as a user writes it: ``F.cross_entropy`` on class-index
    ``labels``, the weights living across steps as a model's parameters do."""
    tdev = _torch_device(device)
    tx, tl = torch.tensor(x, device=tdev), torch.tensor(labels, device=tdev)
    T1 = torch.tensor(w1, requires_grad=True, device=tdev)
    T2 = torch.tensor(w2, requires_grad=True, device=tdev)

    def torch_impl():
        T1.grad = T2.grad = None
        loss = torch.nn.functional.cross_entropy((tx @ T1).relu() @ T2, tl)
        loss.backward()
        return loss, T1.grad, T2.grad

    return torch_impl


def mlp_step(size: str = "full", device: str = "cpu") -> Case:
    x, labels, onehot, w1, w2 = _mlp_data(size)
    shape = "x".join(str(s) for s in (x.shape[1], w1.shape[1], w2.shape[1]))
    impls = {}
    xp = backend.get_namespace(device)
    xd, yd, w1d, w2d = (xp.asarray(a) for a in (x, onehot, w1, w2))
    n = x.shape[0]

    impls["numpy"] = hand_mlp_step(xp, xd, yd, w1d, w2d)

    xt, yt = tg.tensor(x, device=device), tg.tensor(onehot, device=device)
    W1 = tg.tensor(w1, requires_grad=True, device=device)
    W2 = tg.tensor(w2, requires_grad=True, device=device)

    def eager():
        W1.grad = W2.grad = None
        loss = nn.functional.cross_entropy((xt @ W1).relu() @ W2, yt)
        loss.backward()
        return loss, W1.grad, W2.grad

    impls["eager"] = eager

    X, Y = Variable("x", shape=x.shape), Variable("y", shape=onehot.shape)
    V1, V2 = Variable("W1", shape=w1.shape), Variable("W2", shape=w2.shape)
    loss_s = softmax_cross_entropy(relu(X @ V1) @ V2, Y)
    ex = Executor([loss_s, *gradients(loss_s, [V1, V2])], device=device)
    feed = {X: xd, Y: yd, V1: w1d, V2: w2d}
    impls["symbolic"] = lambda: ex.run(feed)

    if torch is not None:
        impls["torch"] = torch_mlp_step(x, labels, w1, w2, device)
    return Case("mlp_step", f"MLP training step, batch {n}, {shape}, float32", "numpy", impls,
                targets={"eager": (1.05, None), "symbolic": (1.05, None)},
                sync=_sync(device))  # fmt: skip


# -- 3. a very deep chain ------------------------------------------------------------------------
def _deep(y, n: int):
    """``n`` alternating mul/add ops on an eager or a torch tensor."""
    for i in range(n):
        y = y * 1.0001 if i % 2 == 0 else y + 0.0001
    return y


def deep_chain(size: str = "full", device: str = "cpu") -> Case:
    n = 100_000 if size == "full" else 2_000
    x0 = np.array([0.5], np.float32)
    impls = {}

    impls["eager"] = chain_impl(tg, _deep, x0, n, device, seed="ones")
    if torch is not None:
        impls["torch"] = chain_impl(torch, _deep, x0, n, device, seed="ones")
    ref = "torch" if torch is not None else "eager"
    return Case("deep_chain", f"{n:,}-deep chain (mul/add), forward + backward", ref, impls,
                targets={"eager": (1.5, None)} if torch is not None else {},
                sync=_sync(device))  # fmt: skip


# -- 4. digits to 95% ----------------------------------------------------------------------------
_DIGITS = dict(hidden=128, lr=0.01, batch=64, target=0.95)


def _digits_setup(size):
    Xtr, ytr = load_digits("train")
    Xte, yte = load_digits("test")
    if size != "full":
        Xtr, ytr = Xtr[:256], ytr[:256]
    rng = np.random.default_rng(0)
    h = _DIGITS["hidden"]
    b1, b2 = 1 / np.sqrt(64), 1 / np.sqrt(h)  # PyTorch's default init, drawn once
    init = [rng.uniform(-b1, b1, (h, 64)), rng.uniform(-b1, b1, h),
            rng.uniform(-b2, b2, (10, h)), rng.uniform(-b2, b2, 10)]  # fmt: skip
    init = [a.astype(np.float32) for a in init]
    max_epochs = 30 if size == "full" else 1
    orders = [np.random.default_rng((0, e)).permutation(len(Xtr)) for e in range(max_epochs)]
    return Xtr, ytr, Xte, yte, init, orders


def _batches(order, batch):
    return [order[i:i + batch] for i in range(0, len(order), batch)]


def digits(size: str = "full", device: str = "cpu") -> Case:
    Xtr, ytr, Xte, yte, init, orders = _digits_setup(size)
    batch, lr, target = _DIGITS["batch"], _DIGITS["lr"], _DIGITS["target"]
    onehot = np.eye(10, dtype=np.float32)
    xp = backend.get_namespace(device)
    Xtr_d, Xte_d, Ytr_d = xp.asarray(Xtr), xp.asarray(Xte), xp.asarray(onehot[ytr])
    ytr_d = xp.asarray(ytr)
    impls = {}

    def eager():
        model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
        model.load_state_dict(dict(zip(["0.weight", "0.bias", "2.weight", "2.bias"], init)))
        model.to(device)
        opt = optim.Adam(model.parameters(), lr=lr)
        xte = tg.tensor(Xte_d)
        acc, epochs = 0.0, 0
        for order in orders:
            epochs += 1
            for idx in _batches(xp.asarray(order), batch):
                opt.zero_grad()
                loss = nn.functional.cross_entropy(model(tg.tensor(Xtr_d[idx])),
                                                   tg.tensor(ytr_d[idx]))  # fmt: skip
                loss.backward()
                opt.step()
            with tg.no_grad():
                acc = float((to_numpy(model(xte)._data).argmax(1) == yte).mean())
            if acc >= target:
                break
        return epochs, acc

    impls["eager"] = eager

    def symbolic():
        scope = st.Scope(device=device)
        W1, B1 = scope.parameter("W1", init[0]), scope.parameter("b1", init[1])
        W2, B2 = scope.parameter("W2", init[2]), scope.parameter("b2", init[3])
        x, y = Variable("x"), Variable("y")
        logits = matmul(relu(matmul(x, W1, trans_B=True) + B1), W2, trans_B=True) + B2
        loss = softmax_cross_entropy(logits, y)
        step = st.TrainingExecutor([loss], st.Adam(lr=lr).minimize(loss, [W1, B1, W2, B2]))
        predict = st.TrainingExecutor([logits], scope=scope)
        acc, epochs = 0.0, 0
        for order in orders:
            epochs += 1
            for idx in _batches(xp.asarray(order), batch):
                step.run({x: Xtr_d[idx], y: Ytr_d[idx]})
            acc = float((predict.run({x: Xte_d})[0].argmax(1) == yte).mean())
            if acc >= target:
                break
        return epochs, acc

    impls["symbolic"] = symbolic
    if torch is not None:
        tdev = _torch_device(device)
        tX, tXte = torch.tensor(Xtr, device=tdev), torch.tensor(Xte, device=tdev)
        ty = torch.tensor(ytr, device=tdev)

        def torch_impl():
            model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                        torch.nn.Linear(128, 10)).to(tdev)  # fmt: skip
            with torch.no_grad():
                for p, a in zip(model.parameters(), init):
                    p.copy_(torch.tensor(a))
            opt = torch.optim.Adam(model.parameters(), lr=lr)
            acc, epochs = 0.0, 0
            for order in orders:
                epochs += 1
                for idx in _batches(torch.tensor(order, device=tdev), batch):
                    opt.zero_grad()
                    loss = torch.nn.functional.cross_entropy(model(tX[idx]), ty[idx])
                    loss.backward()
                    opt.step()
                with torch.no_grad():
                    acc = float((model(tXte).argmax(1).cpu().numpy() == yte).mean())
                if acc >= target:
                    break
            return epochs, acc

        impls["torch"] = torch_impl
    ref = "torch" if torch is not None else "eager"
    return Case("digits", "digits MLP 64-128-10, Adam, trained until 95% test accuracy", ref,
                impls, sync=_sync(device))  # fmt: skip


def peak_memory(fn) -> tuple[float, object]:
    """Peak Python-visible memory (MiB) of one call, via tracemalloc (sees numpy's buffers,
    not PyTorch's or CuPy's allocators), and the call's result."""
    import tracemalloc

    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        out = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20, out


CASES = {"small_ops": small_ops, "mlp_step": mlp_step, "deep_chain": deep_chain,
         "digits": digits}  # fmt: skip
