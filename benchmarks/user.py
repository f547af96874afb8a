"""Benchmarks written the way users write them (#15).

``benchmarks.cases`` times the engine on its favourite inputs (one-hot labels, float32, a
chain that alternates with ``tanh``). These cases time what a PyTorch user types instead:

* ``chain_f64`` / ``chain_f32``: ``y = y * 1.0001 + 0.5; y = y * 0.9999`` repeated (Python
  numbers in the chain, 999 ops) then ``y.sum().backward()``, on a 4-element tensor made from
  a float64 (or float32) numpy array: pure per-op overhead. Against PyTorch.
* ``mlp_labels`` / ``mlp_labels_f64``: one training step of the 784-256-10 ReLU MLP, batch
  256, with ``F.cross_entropy(logits, labels)`` on integer class labels. Against the same
  step written by hand in numpy (which picks the labels' logits by index, as a careful
  hand-written step would) and PyTorch.
* ``deep_f32`` / ``deep_f64``: a 100,000-deep chain of ``y * 1.0001`` and ``y + 0.0001`` on a
  one-element tensor made from Python data (float32) or a float64 array, then
  ``y.backward()`` with no gradient argument. Against PyTorch. This is where the cycle
  collector shows: see docs/performance.md.
* ``batch_rows``: a language model's batch sampler as the teaching programs write it,
  ``torch.stack([data[i:i + n] for i in ix])`` (and the targets, one further on): iterating
  a tensor of 32 random offsets, slicing a 1-D int64 tensor with a 0-d tensor, ``i + n``,
  then ``stack``. Nothing requires grad: pure per-op cost of small indexing ops. Against
  PyTorch and the same lines in numpy.
* ``lstm_cells``: two ``LSTMCell``s and a ``Linear`` unrolled by hand over 40 steps in
  float64, forward and backward: the model of pytorch/examples' time_sequence_prediction,
  the slowest of ``benchmarks.real_programs`` against PyTorch (some 15 small ops per cell
  step, a ``chunk`` into four gates among them). Against PyTorch.
* ``regression_steps``: 20 steps of pytorch/examples' regression program (a Linear(4, 1) on
  32 samples, ``smooth_l1_loss``, ``.item()``, SGD through ``param.data.add_``) on fixed
  batches: some 20 tiny ops a step, pure per-op cost. Against PyTorch.

Every case makes its leaves inside the timed call (as a script does once per run), except the
MLP's weights, which live across steps as a model's parameters do.
"""

from __future__ import annotations

import numpy as np

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F
from tinygrad_edu import backend

from .cases import Case, _sync, chain_impl, hand_mlp_step, torch, torch_mlp_step

__all__ = ["CASES", "REPS", "scalar_chain", "deep_scalar_chain"]


# -- the 1000-op chain with Python numbers ------------------------------------------------------
def scalar_chain(y, n: int):
    """``n // 3`` rounds of ``y * 1.0001 + 0.5`` then ``y * 0.9999`` (eager, torch or numpy)."""
    for _ in range(n // 3):
        y = y * 1.0001 + 0.5
        y = y * 0.9999
    return y


def _chain_case(dtype):
    def make(size: str = "full", device: str = "cpu") -> Case:
        n = 999 if size == "full" else 30
        x0 = np.array([0.1, -0.2, 0.3, -0.4], dtype)
        impls = {}

        impls["eager"] = chain_impl(tg, scalar_chain, x0, n, device)
        xp = backend.get_namespace(device)
        x0d = xp.asarray(x0)

        def hand_written():
            y = scalar_chain(x0d, n)  # numpy keeps the array's dtype for Python numbers
            g = xp.ones_like(y)
            for _ in range(n // 3):  # d/dy of (y * a + b) * c is a * c, one multiply each
                g = g * 0.9999
                g = g * 1.0001
            return y, g

        impls["numpy"] = hand_written
        if torch is not None:
            impls["torch"] = chain_impl(torch, scalar_chain, x0, n, device)
        ref = "torch" if torch is not None else "numpy"
        title = (f"{n + 1}-op chain with Python numbers (y*1.0001+0.5, y*0.9999), "
                 f"4 {np.dtype(dtype).name} elements, forward + backward")  # fmt: skip
        return Case(f"chain_{_short(dtype)}", title, ref, impls,
                    targets={"eager": (1.0, None)} if ref == "torch" else {},
                    sync=_sync(device))  # fmt: skip

    return make


# -- the MLP step with class-index labels --------------------------------------------------------
MLP_DIMS = {"full": (256, 784, 256, 10), "tiny": (8, 20, 16, 5)}  # batch, in, hidden, classes


def _mlp_data(size, dtype, dims=None):
    n, d, h, c = dims or MLP_DIMS[size]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, d)).astype(dtype)
    labels = rng.integers(0, c, n)
    w1 = (rng.standard_normal((d, h)) / np.sqrt(d)).astype(dtype)
    w2 = (rng.standard_normal((h, c)) / np.sqrt(h)).astype(dtype)
    return x, labels, w1, w2


def _mlp_case(dtype):
    def make(size: str = "full", device: str = "cpu", dims=None) -> Case:
        """``dims``: ``(batch, in, hidden, classes)`` instead of ``size``'s (benchmarks.split)."""
        x, labels, w1, w2 = _mlp_data(size, dtype, dims)
        n = x.shape[0]
        shape = "x".join(str(s) for s in (x.shape[1], w1.shape[1], w2.shape[1]))
        impls = {}
        xp = backend.get_namespace(device)
        xd, ld, w1d, w2d = (xp.asarray(a) for a in (x, labels, w1, w2))
        impls["numpy"] = hand_mlp_step(xp, xd, ld, w1d, w2d)

        xt, yt = tg.tensor(x, device=device), tg.tensor(labels, device=device)
        W1 = tg.tensor(w1, requires_grad=True, device=device)
        W2 = tg.tensor(w2, requires_grad=True, device=device)

        def eager():
            W1.grad = W2.grad = None
            loss = F.cross_entropy((xt @ W1).relu() @ W2, yt)
            loss.backward()
            return loss, W1.grad, W2.grad

        impls["eager"] = eager
        if torch is not None:
            impls["torch"] = torch_mlp_step(x, labels, w1, w2, device)
        name = "mlp_labels" if dtype == np.float32 else f"mlp_labels_{_short(dtype)}"
        title = (f"MLP step, batch {n}, {shape}, F.cross_entropy with class-index labels, "
                 f"{np.dtype(dtype).name}")  # fmt: skip
        return Case(name, title, "numpy", impls, targets={"eager": (1.05, None)},
                    sync=_sync(device))  # fmt: skip

    return make


# -- the 100,000-deep chain ----------------------------------------------------------------------
def deep_scalar_chain(y, n: int):
    """``n`` ops: ``y * 1.0001`` and ``y + 0.0001`` in turn (eager or torch)."""
    for _ in range(n // 2):
        y = y * 1.0001
        y = y + 0.0001
    return y


def _deep_case(dtype):
    def make(size: str = "full", device: str = "cpu") -> Case:
        n = 100_000 if size == "full" else 2_000
        impls = {}
        # a user's float32 tensor comes from Python data; a float64 one from a numpy array
        x0 = [0.5] if dtype == np.float32 else np.array([0.5], dtype)

        impls["eager"] = chain_impl(tg, deep_scalar_chain, x0, n, device, seed="none")
        if torch is not None:
            impls["torch"] = chain_impl(torch, deep_scalar_chain, x0, n, device, seed="none")
        ref = "torch" if torch is not None else "eager"
        title = f"{n:,}-deep chain with Python numbers, {np.dtype(dtype).name}, forward + backward"
        return Case(f"deep_{_short(dtype)}", title, ref, impls,
                    targets={"eager": (1.0, None)} if ref == "torch" else {},
                    sync=_sync(device))  # fmt: skip

    return make


# -- a batch sampler: rows sliced at random offsets ----------------------------------------------
def sample_rows(lib, data, ix, n: int):
    """``(x, y)``: ``lib.stack`` of ``data[i:i + n]`` and ``data[i + 1:i + n + 1]`` for each
    ``i`` in ``ix`` (for numpy, ``lib`` is numpy and its ``stack`` takes the list as well)."""
    x = lib.stack([data[i:i + n] for i in ix])
    y = lib.stack([data[i + 1:i + n + 1] for i in ix])
    return x, y


def _rows_case(size: str = "full", device: str = "cpu") -> Case:
    n, batch = (8, 32) if size == "full" else (4, 6)
    rng = np.random.default_rng(0)
    data0 = rng.integers(0, 65, size=100_000 if size == "full" else 500).astype(np.int64)
    ix0 = rng.integers(0, len(data0) - n - 1, size=batch).astype(np.int64)
    impls = {}
    data, ix = tg.tensor(data0, device=device), tg.tensor(ix0, device=device)
    impls["eager"] = lambda: sample_rows(tg, data, ix, n)
    if torch is not None:
        tdata, tix = torch.tensor(data0), torch.tensor(ix0)
        impls["torch"] = lambda: sample_rows(torch, tdata, tix, n)
    impls["numpy"] = lambda: sample_rows(np, data0, ix0, n)
    ref = "torch" if torch is not None else "numpy"
    title = f"batch sampler: stack of {batch} rows data[i:i+{n}] over a tensor of offsets"
    return Case("batch_rows", title, ref, impls,
                targets={"eager": (1.5, None)} if ref == "torch" else {},
                sync=_sync(device))  # fmt: skip


# -- two LSTMCells unrolled by hand: the slowest real program (time_sequence) ------------------
def lstm_cells(lib, model, x):
    """Forward and backward through two stacked ``LSTMCell``s and a ``Linear``, one step per
    column of ``x`` (batch, steps), as pytorch/examples' time_sequence_prediction unrolls them;
    returns ``(loss,)`` (the parameters' gradients accumulate, which changes nothing timed)."""
    cell1, cell2, head = model
    h = c = h2 = c2 = lib.zeros(x.shape[0], cell1.hidden_size, dtype=lib.float64)
    outs = []
    for x_t in x.split(1, dim=1):
        h, c = cell1(x_t, (h, c))
        h2, c2 = cell2(h, (h2, c2))
        outs.append(head(h2))
    loss = (lib.cat(outs, dim=1) ** 2).mean()
    loss.backward()
    return (loss,)


def _cells_case(size: str = "full", device: str = "cpu") -> Case:
    batch, steps, hidden = (12, 40, 51) if size == "full" else (3, 4, 5)
    x0 = np.random.default_rng(0).standard_normal((batch, steps))

    def model(lib):
        return (lib.nn.LSTMCell(1, hidden).double(), lib.nn.LSTMCell(hidden, hidden).double(),
                lib.nn.Linear(hidden, 1).double())  # fmt: skip

    ours, x = tuple(m.to(device) for m in model(tg)), tg.tensor(x0, device=device)
    impls = {"eager": lambda: lstm_cells(tg, ours, x)}
    if torch is not None:
        theirs, tx = model(torch), torch.tensor(x0)
        with tg.no_grad():  # PyTorch's initial parameters in ours: the losses agree
            for a, b in zip(ours, theirs):
                for pa, pb in zip(a.parameters(), b.parameters()):
                    pa.copy_(tg.tensor(pb.detach().numpy(), device=device))
        impls["torch"] = lambda: lstm_cells(torch, theirs, tx)
    title = (f"two LSTMCells ({hidden} hidden) and a Linear unrolled over {steps} steps, batch "
             f"{batch}, float64, forward and backward")  # fmt: skip
    ref = "torch" if torch is not None else "eager"
    return Case("lstm_cells", title, ref, impls,
                targets={"eager": (1.5, None)} if ref == "torch" else {},
                sync=_sync(device))  # fmt: skip


# -- pytorch/examples' regression step: small ops, .data.add_, .item() ---------------------------
def regression_steps(lib, fc, xs, w_target, b_target):
    """pytorch/examples' regression program for ``len(xs)`` steps, as it writes them (the
    features ``[x, x^2, x^3, x^4]`` by ``cat``, a Linear(4, 1), ``smooth_l1_loss``, ``.item()``,
    SGD through ``param.data.add_``), on given batches instead of ``torch.randn``. The worst
    remaining per-op path of ``benchmarks.real_programs``: every array has 32 or 128 numbers,
    so the time is the engine's per-op cost. Returns the last loss and the weights."""
    for x in xs:
        x = x.unsqueeze(1)
        batch_x = lib.cat([x ** i for i in range(1, 5)], 1)
        batch_y = batch_x.mm(w_target) + b_target.item()
        fc.zero_grad()
        output = lib.nn.functional.smooth_l1_loss(fc(batch_x), batch_y)
        output.item()
        output.backward()
        for param in fc.parameters():
            param.data.add_(-0.1 * param.grad)
    return output, fc.weight, fc.bias


def _regression_case(size: str = "full", device: str = "cpu") -> Case:
    steps = 20 if size == "full" else 2
    rng = np.random.default_rng(0)
    xs0, w0, b0 = rng.standard_normal((steps, 32)), rng.standard_normal((4, 1)) * 5, [1.5]
    init = rng.uniform(-0.5, 0.5, (1, 4)), rng.uniform(-0.5, 0.5, (1,))

    def impl(lib):
        fc = lib.nn.Linear(4, 1)
        with lib.no_grad():
            fc.weight.copy_(lib.tensor(init[0], dtype=lib.float32))
            fc.bias.copy_(lib.tensor(init[1], dtype=lib.float32))
        xs = [lib.tensor(x, dtype=lib.float32) for x in xs0]
        w, b = lib.tensor(w0, dtype=lib.float32), lib.tensor(b0, dtype=lib.float32)
        return lambda: regression_steps(lib, fc, xs, w, b)

    impls = {"eager": impl(tg)}
    if torch is not None:
        impls["torch"] = impl(torch)
    ref = "torch" if torch is not None else "eager"
    title = f"pytorch/examples regression: {steps} steps of Linear(4, 1) + smooth_l1_loss, batch 32"
    return Case("regression_steps", title, ref, impls,
                targets={"eager": (1.5, None)} if ref == "torch" else {},
                sync=_sync(device))  # fmt: skip


def _short(dtype) -> str:
    return {"float32": "f32", "float64": "f64"}[np.dtype(dtype).name]


CASES = {
    "chain_f64": _chain_case(np.float64),
    "chain_f32": _chain_case(np.float32),
    "mlp_labels": _mlp_case(np.float32),
    "mlp_labels_f64": _mlp_case(np.float64),
    "deep_f64": _deep_case(np.float64),
    "deep_f32": _deep_case(np.float32),
    "batch_rows": _rows_case,
    "lstm_cells": _cells_case,
    "regression_steps": _regression_case,
}
REPS = {"chain_f64": 60, "chain_f32": 60, "mlp_labels": 100, "mlp_labels_f64": 60,
        "deep_f64": 5, "deep_f32": 5, "batch_rows": 200, "lstm_cells": 20,
        "regression_steps": 20}  # fmt: skip
