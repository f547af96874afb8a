"""docs/concepts/autodidax.md: the engine's algorithm in about sixty lines, run on the lessons'
graphs, computes the same gradients as the real engine and runs the same nodes, each after
every node that sends it a gradient."""

import re
from pathlib import Path

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu import nn
from tinygrad_edu.eager import Observer, observe
from tinygrad_edu.eager.node import GraphRoot
from tinygrad_edu.viz.examples import seed, seed_inputs

PAGE = Path(__file__).resolve().parents[2] / "docs" / "concepts" / "autodidax.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)


@pytest.fixture(scope="module")
def mini():
    namespace: dict = {}
    exec(compile(_blocks()[0], str(PAGE), "exec"), namespace)  # noqa: S102
    return namespace


def test_the_algorithm_is_about_sixty_lines():
    lines = [ln for ln in _blocks()[0].splitlines() if ln.strip()]
    assert 30 <= len(lines) <= 65, len(lines)


def test_the_pages_example_runs(mini, capsys):
    exec(compile(_blocks()[-1], str(PAGE), "exec"), dict(mini))  # noqa: S102
    out = capsys.readouterr().out
    assert "SumBackward0" in out and "AccumulateGrad" in out


class _Order(Observer):
    def __init__(self):
        self.ran = []

    def node_started(self, task, node, grads):
        if not isinstance(node, GraphRoot):
            self.ran.append(node)


def _seed_graph(requires=("A", "B", "C")):
    ins = seed_inputs(3, seed=1)
    leaves = {k: tg.tensor(v.astype(np.float64), requires_grad=k in requires)
              for k, v in ins.items()}
    return leaves, seed(**leaves).sum()


def _mlp_graph():
    tg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    x = tg.tensor(np.linspace(-1, 1, 20).reshape(5, 4), dtype=tg.float32)
    y = tg.tensor([0, 2, 1, 1, 0])
    loss = nn.functional.cross_entropy(model(x), y)
    return dict(model.named_parameters()), loss


def _chain_graph():
    x = tg.tensor([0.5, -0.25], requires_grad=True, dtype=tg.float64)
    y = x
    for i in range(300):
        y = (y * 1.001).tanh() if i % 2 else y + 0.01 * y.exp()
    return {"x": x}, y.sum()


def _diamond_graph():
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True, dtype=tg.float64)
    a = x * 2.0
    b = a.exp()
    c = a.sin()
    return {"x": x}, (b * c + a).sum()


def _split_graph():
    x = tg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    first, second = x.split(1, dim=0)
    return {"x": x}, (first * 3.0).sum()  # `second` is never used: a node gets no gradient


GRAPHS = {
    "seed": _seed_graph,
    "seed, B needs no grad": lambda: _seed_graph(requires=("A", "C")),
    "mlp with cross_entropy": _mlp_graph,
    "300-op chain": _chain_graph,
    "diamond": _diamond_graph,
    "split, one piece unused": _split_graph,
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_sixty_lines_agree_with_the_engine(mini, name):
    leaves_a, loss_a = GRAPHS[name]()
    leaves_b, loss_b = GRAPHS[name]()
    order = _Order()
    with observe(order):
        loss_a.backward()
    ran = mini["backward"](loss_b)
    assert sorted(n.name() for n in ran) == sorted(n.name() for n in order.ran)
    position = {node: i for i, node in enumerate(ran)}
    for node in ran:  # every node runs after each node that sends it a gradient
        for nxt, _ in node.next_functions:
            if nxt in position:
                assert position[nxt] > position[node], (node.name(), nxt.name())
    engine_order = [n for n in order.ran if type(n).__name__ != "AccumulateGrad"]
    mini_order = [n for n in ran if type(n).__name__ != "AccumulateGrad"]
    assert [n.name() for n in mini_order] == [n.name() for n in engine_order]
    for key, leaf in leaves_a.items():
        other = leaves_b[key]
        assert (leaf.grad is None) == (other.grad is None), key
        if leaf.grad is not None:
            np.testing.assert_array_equal(leaf.grad.numpy(), other.grad.numpy(), err_msg=key)


def test_a_wrong_delivery_is_caught(mini):
    """The comparison is not vacuous: an engine that forgets to sum a fan-in disagrees."""
    source = _blocks()[0].replace(
        "slots[input_nr] = g if slots[input_nr] is None else slots[input_nr] + g",
        "slots[input_nr] = g",
    )
    assert source != _blocks()[0]
    broken: dict = {}
    exec(compile(source, "broken", "exec"), broken)  # noqa: S102
    leaves_a, loss_a = _seed_graph()
    leaves_b, loss_b = _seed_graph()
    loss_a.backward()
    broken["backward"](loss_b)
    assert not np.allclose(leaves_a["A"].grad.numpy(), leaves_b["A"].grad.numpy())
