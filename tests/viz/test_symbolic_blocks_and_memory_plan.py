"""Drawings of control-flow sub-blocks (nested clusters) and of memory plans (buffer colours)."""

import re

import numpy as np
import pytest

from tinygrad_edu.symbolic import (
    Executor,
    Program,
    Variable,
    cond,
    gradients,
    matmul,
    program_guard,
    relu,
    softmax_cross_entropy,
    while_loop,
)
from tinygrad_edu.viz import draw_memory_plan, draw_symbolic, render
from tinygrad_edu.viz.traverse import symbolic_graph

from .conftest import needs_dot


def _loop_with_cond():
    x = Variable("x", shape=(3,), dtype="float64")
    w = Variable("w", shape=(3,), dtype="float64")

    def body(n, v):
        return n + 1, cond(v.sum() > 0, lambda: (v * w).tanh(), lambda: v * 2.0) + v

    n, v = while_loop(lambda n, v: (v * v).sum() < 30.0, body, (0, x))
    loss = (v * w).sum()
    loss.name = "loss"
    return x, w, loss


def test_blocks_become_nested_clusters_with_their_nodes():
    with program_guard(Program()):
        x, w, loss = _loop_with_cond()
    data = symbolic_graph([loss])
    labels = {key: label for key, _, label in data.blocks}
    parents = {key: parent for key, parent, _ in data.blocks}
    assert sorted(labels.values()) == [
        "cond: false branch (block 4)", "cond: true branch (block 3)",
        "while: body (block 2)", "while: condition (block 1)",
    ]  # fmt: skip
    body = next(k for k, v in labels.items() if "body" in v)
    branch = next(k for k, v in labels.items() if "true branch" in v)
    assert parents[branch] == body and parents[body] is None
    inside = [r for r in data.nodes if r.info.get("block") == branch and r.kind == "tensor"]
    assert {r.label for r in inside} == {"(v*w)", "tanh((v*w))"}
    params = [r.label for r in data.nodes if r.info.get("param") and r.info["block"] == body]
    assert params == ["n", "v"]  # named after the body function's arguments
    w_id = data.id_of(w)  # the outer w feeds the nodes inside the branch
    assert any(e.src == w_id and e.dst.startswith("op") for e in data.edges)
    assert sum(e.kind == "block" for e in data.edges) == 5  # one per block output


def test_gradient_body_reads_the_stack():
    x, w, loss = _loop_with_cond()
    (dx,) = gradients(loss, [x])
    data = symbolic_graph([dx])
    grad_body = next(k for k, _, label in data.blocks if "gradient body" in label)
    stack = next(r.id for r in data.nodes if r.label == "while[stack]")
    into_body = {e.dst for e in data.edges if e.src == stack}
    ids_in_body = {r.id for r in data.nodes if r.info.get("block") is not None}
    assert into_body & ids_in_body, "saved values enter the gradient body from the stack"
    assert grad_body


@needs_dot
def test_cluster_dot_and_png(tmp_path):
    _loop_with_cond()  # blocks made before do not change the drawing
    x, w, loss = _loop_with_cond()
    (dx,) = gradients(loss, [x])
    dot = draw_symbolic([loss, dx]).source
    assert dot == draw_symbolic([loss, dx]).source and "(block " not in dot
    assert len(re.findall(r"subgraph cluster_b\d+", dot)) == 7  # 4 forward, 3 gradient
    path = render(draw_symbolic([loss, dx]), tmp_path / "loop")
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_collapse_keeps_block_nodes_and_clusters():
    x = Variable("x")
    y = x
    for _ in range(40):
        y = y.exp()
    z = cond(y.sum() > 0, lambda: y.tanh().tanh().tanh().tanh(), lambda: y)
    dot = draw_symbolic([z], max_nodes=20, legend=False).source
    assert "exp ×" in dot and dot.count("tanh(") >= 4 and "cluster_b0" in dot


def _mlp_executor():
    rng = np.random.default_rng(0)
    X, Y = Variable("x", shape=(8, 5)), Variable("y", shape=(8, 3))
    V1, V2 = Variable("W1", shape=(5, 4)), Variable("W2", shape=(4, 3))
    loss = softmax_cross_entropy(matmul(relu(matmul(X, V1)), V2), Y)
    ex = Executor([loss, *gradients(loss, [V1, V2])], plan_memory=True)
    feed = {X: rng.normal(size=(8, 5)).astype(np.float32),
            Y: np.eye(3, dtype=np.float32)[rng.integers(0, 3, 8)],
            V1: rng.normal(size=(5, 4)).astype(np.float32),
            V2: rng.normal(size=(4, 3)).astype(np.float32)}  # fmt: skip
    return ex, feed


def test_memory_plan_drawing_colours_nodes_by_buffer():
    import graphviz  # noqa: F401  (installed by make test)
    ex, feed = _mlp_executor()
    with pytest.raises(ValueError, match="run the executor once first"):
        draw_memory_plan(ex)
    ex.run(feed)
    dot = draw_memory_plan(ex).source
    plan = ex.memory_plan
    for b in range(plan.n_buffers):
        assert f"buffer {b}: " in dot  # the legend
    in_boxes = sum(dot.count(f"buffer {b} ·") for b in set(plan.buffers.values()))
    assert in_boxes == len(plan.buffers)  # every planned node's box names its buffer
    assert dot.count("kept (output)") == 3 and "own memory" in dot
    with pytest.raises(ValueError, match="plan_memory=True"):
        draw_memory_plan(Executor(ex.nodes))
