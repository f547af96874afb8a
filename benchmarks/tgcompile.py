"""``tg.compile`` against eager, hand-written numpy and PyTorch eager, on code written the way
users write it (#25):

* ``tgc_mlp_step``: the training step of the 784-256-10 ReLU MLP, batch 256, float32, with
  ``F.cross_entropy`` on class-index labels, ``loss.backward()`` and ``opt.step()`` (plain
  SGD), compiled as one program. Against the same step written by hand in numpy (forward,
  both gradients and the two weight updates). Target: at or below 1.0x numpy.
* ``tgc_chain``: the 1000-op chain with Python numbers (``y * 1.0001 + 0.5``,
  ``y * 0.9999``) on a 4-element float64 tensor, compiled, then ``y.sum().backward()``
  through the compiled node. Against PyTorch eager. Target: at or below 0.5x PyTorch.
* ``tgc_gpt_step``: the small GPT of ``benchmarks.models`` (2 layers, 4 heads, 64 channels,
  context 32, batch 16, AdamW), the whole step (``zero_grad``, forward, ``backward``,
  ``opt.step()``) compiled as one program. Against PyTorch eager, with our eager step.
* ``tgc_cnn_step``: the LeNet-style CNN of ``benchmarks.cnn`` (batch 64, 1x28x28), the step
  with ``F.cross_entropy`` on class labels and plain SGD compiled as one program. Against
  PyTorch eager, with our eager step.

``compiled`` is ``tg.compile``'s default backend: fused loop kernels
(``symbolic/static/fusion.py``) where numba is installed, else the numpy code. Where it fuses,
the steps are also timed as ``numpy code``: compiled with ``backend="numpy"`` (one numpy call
per op), to see what the kernels buy.
"""

from __future__ import annotations

import numpy as np

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F
from tinygrad_edu import backend

from .cases import Case, _sync, _torch_device, chain_impl, hand_mlp_step, torch
from .cnn import _data as _cnn_data
from .cnn import _init as _cnn_init
from .cnn import _sizes as _cnn_sizes
from .cnn import lenet, torch_lenet
from .models import adamw, gpt, model_impls
from .user import _mlp_data, scalar_chain

__all__ = ["CASES", "REPS", "hand_sgd_step"]

LR = 0.01


def fusing(device: str) -> bool:
    """Does ``compiled`` fuse (numba installed, on the CPU): is a ``numpy code`` row, compiled
    without fusion, worth timing beside it?"""
    from tinygrad_edu.symbolic.static import fusion

    return device == "cpu" and fusion.choose("inductor") == "fuse"


def hand_sgd_step(xp, xd, yd, w1d, w2d, lr=LR):
    """``hand_mlp_step`` plus the two SGD updates, in place, as a hand-written loop does."""
    grads = hand_mlp_step(xp, xd, yd, w1d, w2d)

    def step():
        loss, dw1, dw2 = grads()
        w1d[...] -= lr * dw1  # in place: the next step's grads() reads the new weights
        w2d[...] -= lr * dw2
        return loss, w1d, w2d

    return step


def _torch_sgd_step(x, labels, w1, w2, device="cpu"):
    dev = _torch_device(device)
    tx, tl = torch.tensor(x, device=dev), torch.tensor(labels, device=dev)
    T1 = torch.tensor(w1, requires_grad=True, device=dev)
    T2 = torch.tensor(w2, requires_grad=True, device=dev)
    opt = torch.optim.SGD([T1, T2], lr=LR)

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy((tx @ T1).relu() @ T2, tl)
        loss.backward()
        opt.step()
        return loss, T1, T2

    return step


def tgc_mlp_step(size: str = "full", device: str = "cpu") -> Case:
    x, labels, w1, w2 = _mlp_data(size, np.float32)
    impls = {}
    xp = backend.get_namespace(device)
    impls["numpy"] = hand_sgd_step(xp, xp.asarray(x), xp.asarray(labels), xp.asarray(w1.copy()),
                                   xp.asarray(w2.copy()))  # fmt: skip

    def eager_step(compiled: bool, backend: str = "inductor"):
        W1 = tg.tensor(w1.copy(), requires_grad=True, device=device)
        W2 = tg.tensor(w2.copy(), requires_grad=True, device=device)
        opt = tg.optim.SGD([W1, W2], lr=LR)
        xt, yt = tg.tensor(x, device=device), tg.tensor(labels, device=device)

        def step(xb, yb):
            opt.zero_grad()
            loss = F.cross_entropy((xb @ W1).relu() @ W2, yb)
            loss.backward()
            opt.step()
            return loss

        fn = tg.compile(step, backend=backend) if compiled else step

        def run():
            return fn(xt, yt), W1, W2

        run.compiled = fn  # the smoke test looks at what was captured
        return run

    impls["compiled"] = eager_step(True)
    if fusing(device):
        impls["numpy code"] = eager_step(True, "numpy")
    impls["eager"] = eager_step(False)
    if torch is not None:
        impls["torch"] = _torch_sgd_step(x, labels, w1.copy(), w2.copy(), device)
    n = x.shape[0]
    title = f"MLP training step (forward, backward, SGD), batch {n}, class labels, tg.compile"
    return Case("tgc_mlp_step", title, "numpy", impls, targets={"compiled": (1.0, None)},
                sync=_sync(device))  # fmt: skip


def tgc_chain(size: str = "full", device: str = "cpu") -> Case:
    n = 999 if size == "full" else 30
    x0 = np.array([0.1, -0.2, 0.3, -0.4])
    compiled = tg.compile(lambda x: scalar_chain(x, n))
    impls = {"compiled": chain_impl(tg, lambda x, _n: compiled(x), x0, n, device),
             "eager": chain_impl(tg, scalar_chain, x0, n, device)}  # fmt: skip
    impls["compiled"].compiled = compiled
    if torch is not None:
        impls["torch"] = chain_impl(torch, scalar_chain, x0, n, device)
    ref = "torch" if torch is not None else "eager"
    return Case("tgc_chain", f"{n + 1}-op chain with Python numbers, float64, tg.compile", ref,
                impls, targets={"compiled": (0.5, None)}, sync=_sync(device))  # fmt: skip


def tgc_gpt_step(size: str = "full", device: str = "cpu") -> Case:
    impls, shape = model_impls(gpt, adamw, size, compiled=True, device=device,
                               numpy_code=fusing(device))  # fmt: skip
    return Case("tgc_gpt_step", f"GPT training step (2 layers, 4 heads, 64 channels), AdamW, "
                f"{shape}, tg.compile", "torch", impls, sync=_sync(device))  # fmt: skip


def tgc_cnn_step(size: str = "full", device: str = "cpu") -> Case:
    batch, side = _cnn_sizes(size)
    init = _cnn_init(side)
    x, labels = _cnn_data(batch, side)

    def ours(compiled: bool, backend: str = "inductor"):
        model = lenet(side)
        model.load_state_dict(init)
        model.to(device)
        opt = tg.optim.SGD(model.parameters(), lr=LR)
        xt, yt = tg.tensor(x, device=device), tg.tensor(labels, device=device)

        def step(xb, yb):
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            return loss

        fn = tg.compile(step, backend=backend) if compiled else step

        def run():
            return (fn(xt, yt), *model.parameters())

        run.compiled = fn
        return run

    impls = {"compiled": ours(True), "eager": ours(False)}
    if fusing(device):
        impls["numpy code"] = ours(True, "numpy")
    if torch is not None:
        tdev = _torch_device(device)
        model = torch_lenet(side).to(tdev)
        model.load_state_dict({k: torch.tensor(v) for k, v in init.items()})
        opt = torch.optim.SGD(model.parameters(), lr=LR)
        tx, ty = torch.tensor(x, device=tdev), torch.tensor(labels, device=tdev)

        def torch_step():
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(tx), ty)
            loss.backward()
            opt.step()
            return (loss, *model.parameters())

        impls["torch"] = torch_step
    ref = "torch" if torch is not None else "eager"
    return Case("tgc_cnn_step", f"LeNet-style CNN training step (SGD), batch {batch}, "
                f"1x{side}x{side}, tg.compile", ref, impls, sync=_sync(device))  # fmt: skip


CASES = {"tgc_mlp_step": tgc_mlp_step, "tgc_chain": tgc_chain, "tgc_gpt_step": tgc_gpt_step,
         "tgc_cnn_step": tgc_cnn_step}  # fmt: skip
REPS = {"tgc_mlp_step": 60, "tgc_chain": 60, "tgc_gpt_step": 15, "tgc_cnn_step": 30}
