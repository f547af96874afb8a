"""PyTorch graphs shared by the tests of ``viz`` on PyTorch (drawings and backward order).

Each builder returns ``(output, names)``: a scalar PyTorch tensor with a ``grad_fn`` and a
mapping name -> leaf. ``walk`` is an independent reading of PyTorch's graph (plain
``next_functions``), the oracle the drawings are checked against.
"""

from __future__ import annotations

import torch
from torch import nn

from tinygrad_edu.viz.examples import seed, seed_inputs


def seed_case():
    leaves = {k: torch.tensor(v, requires_grad=True) for k, v in seed_inputs().items()}
    return seed(**leaves).sum(), leaves


def mlp_case():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    x = torch.randn(5, 4)
    y = torch.tensor([0, 1, 2, 0, 1])
    return nn.functional.cross_entropy(model(x), y), dict(model.named_parameters())


def cnn_case():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(4 * 4 * 4, 10),
    )
    x = torch.randn(2, 1, 8, 8)
    return nn.functional.cross_entropy(model(x), torch.tensor([1, 2])), dict(
        model.named_parameters()
    )


def branches_case():
    """Two independent branches, the first created first (the ready queue decides)."""
    u = torch.tensor([0.5, -0.5], requires_grad=True)
    v = torch.tensor([1.0, 2.0], requires_grad=True)
    p = (u.exp() * 2).sum()
    q = (v.tanh() * 3).sum()
    return p + q, {"u": u, "v": v}


def split_case():
    """A node with two outputs (SplitBackward0) and a value used three times."""
    x = torch.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
    a, b = x.split(1)
    h = a * b
    return (h * h + h.exp() + a).sum(), {"x": x}


CASES = {
    "seed": seed_case,
    "mlp": mlp_case,
    "cnn": cnn_case,
    "branches": branches_case,
    "split": split_case,
}


def walk(root):
    """Every node reachable from ``root`` (a grad_fn), each once, and the non-None edges."""
    seen, stack, edges = {}, [root], []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = node
        for nxt, nr in node.next_functions:
            if nxt is not None:
                edges.append((node, nxt, nr))
                stack.append(nxt)
    return list(seen.values()), edges


def observed_order(output):
    """The order PyTorch runs the nodes of ``output``'s graph, seen by node pre-hooks."""
    nodes, _ = walk(output.grad_fn)
    ran = []
    handles = [n.register_prehook(lambda grads, n=n: ran.append(n)) for n in nodes]
    output.backward(retain_graph=True)
    for h in handles:
        h.remove()
    return ran
