"""Probes of assignment A3 (training): they run your code and return plain data.

Called by the graded tests (``test_a3_training.py``) through the ``run`` fixture (see
``probes_a1.py``).
"""

import numpy as np

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F
from tinygrad_edu import nn, optim
from tinygrad_edu.data import DataLoader, load_digits

__all__ = ["data_loader", "linear_layer", "linear_function", "mse", "optimize", "train_mlp"]


def data_loader():
    """Shapes and labels of the digits, and the labels one shuffled epoch visits."""
    Xtr, ytr = load_digits("train")
    Xte, _ = load_digits("test")
    loader = DataLoader(Xtr, ytr, batch_size=100, shuffle=True, seed=0)
    seen = np.concatenate([yb.numpy() for _, yb in loader])
    return {"shape": Xtr.shape[1:], "total": len(Xtr) + len(Xte), "labels": ytr, "seen": seen}


def linear_layer(x):
    """``nn.Linear(5, 3)`` (seed 0) on ``x``: output, weight, bias, whether it has a graph."""
    tg.manual_seed(0)
    layer = nn.Linear(5, 3)
    y = layer(tg.tensor(np.asarray(x, dtype=np.float32)))
    return {"y": y.detach().numpy(), "shape": tuple(y.shape),
            "weight": layer.weight.detach().numpy(), "bias": layer.bias.detach().numpy(),
            "graph": y.grad_fn is not None}  # fmt: skip


def linear_function(x, w, b, projection):
    """``F.linear`` without and with a bias; gradients of ``sum(F.linear(x, w, b) * p)``."""
    tx = tg.tensor(np.asarray(x))
    tw = tg.tensor(np.asarray(w), requires_grad=True)
    tb = tg.tensor(np.asarray(b), requires_grad=True)
    no_bias = F.linear(tx, tw).detach().numpy()
    (F.linear(tx, tw, tb) * tg.tensor(np.asarray(projection))).sum().backward()
    return {"no_bias": no_bias, "dw": tw.grad.numpy(), "db": tb.grad.numpy()}


def mse(x, y):
    """``F.mse_loss(x, y)``: its shape, value and dL/dx."""
    tx = tg.tensor(np.asarray(x), requires_grad=True)
    loss = F.mse_loss(tx, tg.tensor(np.asarray(y)))
    shape = tuple(loss.shape)
    value = loss.item()
    loss.backward()
    return {"shape": shape, "value": value, "grad": tx.grad.numpy()}


def optimize(kind, settings, start, target=None, linear=None, scale=1.0, l2=0.0, steps=6):
    """Minimise a loss with ``optim.SGD`` or ``optim.Adam``; the parameter after each step.

    The loss is ``scale * sum((p - target)^2)`` or, with ``linear`` given, the linear
    ``scale * sum(linear * p)`` (a constant gradient); ``l2`` adds ``l2/2 * sum(p^2)``."""
    p = nn.Parameter(np.asarray(start, dtype=np.float64).copy())
    opt = {"sgd": optim.SGD, "adam": optim.Adam}[kind]([p], **settings)
    history = []
    for _ in range(steps):
        opt.zero_grad()
        if linear is not None:
            loss = (p * tg.tensor(np.asarray(linear))).sum() * scale
        else:
            loss = ((p - tg.tensor(np.asarray(target))) ** 2).sum() * scale
        if l2:
            loss = loss + (p * p).sum() * (l2 / 2)
        loss.backward()
        opt.step()
        history.append(p.detach().numpy().copy())
    return history


def train_mlp(epochs=30, lr=0.003, seed=0):
    """A 64-128-10 MLP trained with Adam on the digits; its weights after training."""
    Xtr, ytr = load_digits("train")
    tg.manual_seed(seed)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    loader = DataLoader(Xtr, ytr, batch_size=32, shuffle=True, seed=seed)
    for epoch in range(epochs):  # the loader reshuffles every epoch
        if epoch == epochs // 2:
            for group in opt.param_groups:
                group["lr"] *= 0.1  # a smaller step to settle
        for xb, yb in loader:
            opt.zero_grad()
            loss_fn(model(xb), yb).backward()
            opt.step()
    return [p.detach().numpy() for p in model.parameters()]  # W1, b1, W2, b2
