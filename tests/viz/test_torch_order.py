"""The backward order: our engine's rules against what PyTorch actually runs.

Three orders are compared node by node:

* ``viz.draw_backward_order(t).order``: our engine run on a stand-in of the graph;
* the order PyTorch runs its graph in, observed with node pre-hooks;
* the order our engine really runs the same computation built in tinygrad_edu, observed with
  ``tinygrad_edu.eager.observe``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tinygrad_edu as tg  # noqa: E402
from tinygrad_edu import viz  # noqa: E402
from tinygrad_edu.eager import Observer, observe  # noqa: E402
from tinygrad_edu.viz.examples import seed, seed_inputs  # noqa: E402

from .torch_cases import CASES, observed_order, walk  # noqa: E402


def _names(nodes):
    return [type(n).__name__ for n in nodes]


@pytest.mark.parametrize("case", sorted(CASES))
def test_drawn_order_is_the_order_pytorch_runs(case):
    out, leaves = CASES[case]()
    dot = viz.draw_backward_order(out, params=leaves)
    ran = observed_order(out)
    assert len(ran) == len(walk(out.grad_fn)[0])  # every node ran once
    assert dot.order == _names(ran)
    assert [id(n) for n in dot.order_nodes] == [id(n) for n in ran]  # the very same nodes
    # numbered in the drawing: "1. <first node>" ... "N. <last node>"
    src = dot.source
    for k, name in enumerate(dot.order, 1):
        assert f"<B>{k}. {name}</B>" in src
    assert f"<B>{len(ran) + 1}. " not in src


def test_public_observer_agrees_with_pre_hooks():
    out, _ = CASES["cnn"]()
    expected = _names(observed_order(out))  # retain_graph=True inside
    assert _names(viz.torch_run_order(out)) == expected
    # the hooks were removed again: a second backward records nothing extra
    out2, _ = CASES["seed"]()
    viz.torch_run_order(out2, retain_graph=True)
    assert _names(viz.torch_run_order(out2)) == _names(viz.backward_order(out2))


def test_several_outputs():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([0.5, -1.0], requires_grad=True)
    u = (a * b).sum()
    v = (a.exp() + b).sum()
    ours = viz.draw_backward_order([u, v], names={"a": a, "b": b}).order_nodes
    theirs = viz.torch_run_order([u, v])
    assert [id(n) for n in ours] == [id(n) for n in theirs]
    assert len(theirs) == len({id(n) for out in (u, v) for n in walk(out.grad_fn)[0]})


def test_accumulate_grad_runs_as_soon_as_it_is_ready():
    """PyTorch's rule (AccumulateGrad has sequence_nr 2**64 - 1): the seed example's last two
    leaves run in the order they became ready, A then B, not by creation."""
    out, leaves = CASES["seed"]()
    order = viz.backward_order(out)
    accs = [n for n in order if type(n).__name__ == "AccumulateGrad"]
    assert all(n._sequence_nr() == 2**64 - 1 for n in accs)
    filled = [next(k for k, t in leaves.items() if t is n.variable) for n in accs]
    assert filled == ["C", "A", "B"]
    assert filled == [
        next(k for k, t in leaves.items() if t is n.variable)
        for n in observed_order(out)
        if type(n).__name__ == "AccumulateGrad"
    ]


def test_deep_chain():
    x = torch.tensor([0.1], requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0001
    out = y.sum()
    assert [id(n) for n in viz.backward_order(out)] == [id(n) for n in observed_order(out)]


def test_three_leaves_ready_at_once():
    """Three AccumulateGrads made ready by one node tie. We run ties in the order they became
    ready; PyTorch's std::priority_queue promises no order among equals. The nodes before
    and after the tie agree; the tie holds the same nodes."""
    ws = [torch.tensor([float(k)], requires_grad=True) for k in range(4)]
    out = torch.stack(ws).sum()
    ours = viz.backward_order(out)
    theirs = observed_order(out)
    assert _names(ours[:2]) == _names(theirs[:2]) == ["SumBackward0", "StackBackward0"]
    assert [n.variable for n in ours[2:]] == ws  # first in, first out
    assert {id(n) for n in ours[2:]} == {id(n) for n in theirs[2:]}


def test_drawing_changes_nothing():
    out, leaves = CASES["seed"]()
    viz.draw_backward_order(out, names=leaves)
    assert all(t.grad is None for t in leaves.values())
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    assert viz.draw_backward_order(y).order == ["SumBackward0", "MulBackward0", "AccumulateGrad"]
    assert x.grad is None
    y.backward()  # the graph is intact (nothing was freed)
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_errors():
    leaf = torch.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="no grad_fn"):
        viz.draw_backward_order(leaf)
    with pytest.raises(ValueError, match="no tensors"):
        viz.backward_order([])
    with pytest.raises(TypeError, match="eager Tensors or PyTorch tensors"):
        viz.backward_order([np.ones(2)])


# -- our engine, really run, against PyTorch ---------------------------------------------------
class _Ran(Observer):
    def __init__(self):
        self.nodes = []

    def node_started(self, task, node, grads):
        if node is not task.root:
            self.nodes.append(node)


def _mlp(x, W1, b1, W2, b2):
    h = (x @ W1 + b1).relu()
    out = h @ W2 + b2
    return (out * out).mean()


def _branches(u, v):
    p = (u.exp() * 2).sum()
    q = (v.tanh() * 3).sum()
    return p + q


def _fan(a, b):
    c = a * b
    d = c + a
    return (d * c).sum()


def _seed(A, B, C):
    return seed(A, B, C).sum()


def _cnn(F, x, w, b, W2):
    h = F.max_pool2d(F.conv2d(x, w, b, padding=1).relu(), 2)
    out = h.reshape(2, 64) @ W2
    return (out * out).mean()


def _inputs(name):
    rng = np.random.default_rng(1)
    if name == "seed":
        return seed_inputs(), None
    if name == "mlp":
        arrays = {
            "W1": rng.standard_normal((4, 5)),
            "b1": rng.standard_normal(5),
            "W2": rng.standard_normal((5, 3)),
            "b2": rng.standard_normal(3),
        }
        return {k: v.astype(np.float32) for k, v in arrays.items()}, {
            "x": rng.standard_normal((6, 4)).astype(np.float32)
        }
    if name == "cnn":
        arrays = {
            "w": rng.standard_normal((4, 1, 3, 3)),
            "b": rng.standard_normal(4),
            "W2": rng.standard_normal((64, 10)) * 0.1,
        }
        return {k: v.astype(np.float32) for k, v in arrays.items()}, {
            "x": rng.standard_normal((2, 1, 8, 8)).astype(np.float32)
        }
    if name == "branches":
        return {"u": np.float32([0.5, -0.5]), "v": np.float32([1.0, 2.0])}, None
    return {"a": np.float32([1.0, -2.0]), "b": np.float32([3.0, 0.5])}, None


@pytest.mark.parametrize(
    "name, fn",
    [("seed", _seed), ("mlp", _mlp), ("branches", _branches), ("fan", _fan), ("cnn", _cnn)],
)
def test_our_engine_runs_the_order_pytorch_runs(name, fn):
    leaves, constants = _inputs(name)
    constants = constants or {}
    libs = [{}, {}]
    if name == "cnn":  # layer functions come from each library's functional module
        from tinygrad_edu.nn import functional as tgF

        libs = [{"F": torch.nn.functional}, {"F": tgF}]
    t_leaves = {k: torch.tensor(v, requires_grad=True) for k, v in leaves.items()}
    t_out = fn(**libs[0], **{k: torch.tensor(v) for k, v in constants.items()}, **t_leaves)
    g_leaves = {k: tg.tensor(v, requires_grad=True) for k, v in leaves.items()}
    g_out = fn(**libs[1], **{k: tg.tensor(v) for k, v in constants.items()}, **g_leaves)

    rec = _Ran()
    with observe(rec):
        g_out.backward()
    theirs = observed_order(t_out)

    def tagged(nodes, named):
        # a node's name, and for an AccumulateGrad the leaf it fills
        out = []
        for n in nodes:
            name = type(n).__name__ if hasattr(n, "_sequence_nr") else n.name()
            if hasattr(n, "variable"):
                name += f"({next(k for k, t in named.items() if t is n.variable)})"
            out.append(name)
        return out

    # our nodes carry PyTorch's names, so the names compare as they are
    assert tagged(rec.nodes, g_leaves) == tagged(theirs, t_leaves)
    # and the stand-in run of draw_backward_order agrees with the real run
    assert viz.backward_order(g_out) == rec.nodes
    for k in leaves:
        np.testing.assert_allclose(
            g_leaves[k].grad.numpy(), t_leaves[k].grad.numpy(), rtol=1e-5, atol=1e-5
        )
