"""Memory planning: liveness, the memory-aware order, buffer reuse (out= and in place), views,
control flow, and the peak memory of an MLP's loss-and-gradients graph (tracemalloc)."""

import tracemalloc

import numpy as np
import pytest

from tinygrad_edu.backend import cuda_available
from tinygrad_edu.symbolic import (
    Executor,
    Variable,
    gradients,
    matmul,
    relu,
    softmax_cross_entropy,
    while_loop,
)
from tinygrad_edu.symbolic import training as st
from tinygrad_edu.symbolic.memory import liveness

needs_gpu = [pytest.mark.gpu, pytest.mark.skipif(not cuda_available(), reason="needs a GPU")]


def _same(outs, feed, runs=3, device="cpu"):
    want = Executor(outs, device).run(feed)
    ex = Executor(outs, device, plan_memory=True)
    results = [ex.run(feed) for _ in range(runs)]
    for got in results:  # earlier results are not overwritten by later runs either
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    return ex


def _mlp(n=64, d=100, h=64, c=10, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = np.eye(c, dtype=np.float32)[rng.integers(0, c, n)]
    w1 = (rng.standard_normal((d, h)) / np.sqrt(d)).astype(np.float32)
    w2 = (rng.standard_normal((h, c)) / np.sqrt(h)).astype(np.float32)
    X, Y = Variable("x", shape=x.shape), Variable("y", shape=y.shape)
    V1, V2 = Variable("W1", shape=w1.shape), Variable("W2", shape=w2.shape)
    loss = softmax_cross_entropy(matmul(relu(matmul(X, V1)), V2), Y)
    return [loss, *gradients(loss, [V1, V2])], {X: x, Y: y, V1: w1, V2: w2}


def _peak(fn) -> int:
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_liveness_frees_each_value_once_after_its_last_reader():
    outs, _ = _mlp()
    order = Executor(outs).order
    last_use, frees = liveness(order, outs)
    freed = [n for step in frees for n in step]
    assert len(freed) == len(set(freed)) == len(order) - len(set(outs))
    position = {n: k for k, n in enumerate(order)}
    for k, step in enumerate(frees):
        for n in step:
            readers = [position[c] for c in order if n in c.inputs]
            assert k == max(readers, default=position[n])
    assert all(last_use[o] == len(order) for o in outs)


def test_mlp_peak_memory_at_most_60_percent_of_the_unplanned_executor():
    outs, feed = _mlp(n=256, d=784, h=256, c=10)
    plain, planned = Executor(outs), Executor(outs, plan_memory=True)
    plain.run(feed)
    planned.run(feed)  # the profiling run
    ratio = _peak(lambda: planned.run(feed)) / _peak(lambda: plain.run(feed))
    assert ratio <= 0.6, f"planned/unplanned peak = {ratio:.2f}"
    for g, w in zip(planned.run(feed), plain.run(feed)):
        np.testing.assert_array_equal(g, w)
    plan = planned.memory_plan
    assert plan.n_buffers < len(plan.buffers)  # buffers are shared by several values
    # the memory-aware order computes dW2 (which reads relu) before the big dW1
    names = [n.op.name for n in plan.order]
    assert names[-1] == "matmul" and plan.order[-1] is outs[1]


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=needs_gpu)])
def test_values_equal_with_planning_and_buffers_written_in_place(device):
    x = Variable("x")
    y = ((x * 2).exp() + 1).tanh() * 3 - x
    ex = _same([y], {x: np.linspace(-1, 1, 10)}, device=device)
    assert ex.memory_plan.n_buffers == 1 and len(ex.memory_plan.buffers) == 6


def test_views_keep_their_base_buffer_alive():
    a = Variable("a", shape=(4, 6), dtype="float64")
    h = a * 2.0
    t = h.T  # a view of h's buffer
    r = h.reshape(6, 4)  # another view
    k = (a + 1.0) * 3.0  # could take h's buffer if views were ignored
    out = [(t + r) * 1.0 + k.T, t[1:3]]
    _same(out, {a: np.arange(24.0).reshape(4, 6)})


@pytest.mark.parametrize("seed", range(8))
def test_random_graphs_give_the_same_values_for_several_feed_shapes(seed):
    rng = np.random.default_rng(seed)
    a, b = Variable("a", dtype="float64"), Variable("b", dtype="float64")
    pool = [a, b]
    for _ in range(30):
        u, v = (pool[k] for k in rng.integers(len(pool), size=2))
        choice = rng.integers(7)
        pool.append([u + v, u * v, u - v, (u * 0.5).tanh(), (-u).exp() * 0.1, u.T.T,
                     relu(u) + v][choice])  # fmt: skip
    y = pool[-1] + pool[-2] * pool[-3]
    outs = [y, *gradients(y.sum(), [a, b])]
    ex = Executor(outs, plan_memory=True)
    for shape in [(3, 4), (2, 5), (3, 4)]:
        feed = {a: rng.normal(size=shape), b: rng.normal(size=shape)}
        want = Executor(outs).run(feed)
        for _ in range(2):
            for g, w in zip(ex.run(feed), want):
                np.testing.assert_allclose(g, w, rtol=1e-13)
    assert len(ex.memory_plan.replays) == 2  # one plan per set of feed shapes


def test_control_flow_under_a_plan():
    x = Variable("x", shape=(3,), dtype="float64")
    w = Variable("w", shape=(3,), dtype="float64")
    n, v = while_loop(lambda n, v: (v * v).sum() < 40.0,
                      lambda n, v: (n + 1, (v * w).tanh() + v * 1.2), (0, x * 1.0))  # fmt: skip
    loss = (v * w).sum()
    outs = [n, loss, *gradients(loss, [x, w])]
    for xv in ([0.5, 1.0, -1.0], [0.1, 0.1, 0.1], [9.0, 9.0, 9.0]):
        _same(outs, {x: np.array(xv), w: np.array([1.5, -0.5, 0.8])})


def test_return_all_and_observer_with_a_plan():
    x = Variable("x")
    h = x * 2
    y = h + 1
    ex = Executor([y], plan_memory=True)
    seen = []
    ex.run({x: np.ones(2)}, observer=lambda node, value: seen.append(node))
    assert seen == ex.order
    assert set(ex.run({x: np.ones(2)}, return_all=True)) == {y}  # the others were freed


def test_strict_array_namespace_runs_without_out_buffers():
    import array_api_strict as xp

    from tinygrad_edu.backend import use_cpu_namespace

    outs, feed = _mlp(n=8, d=6, h=5, c=3)
    want = Executor(outs).run(feed)
    with use_cpu_namespace(xp):
        ex = Executor(outs, plan_memory=True)
        for _ in range(2):
            got = ex.run(feed)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6)


def test_training_with_a_plan_follows_the_same_trajectory():
    def train(plan):
        scope = st.Scope()
        rng = np.random.default_rng(0)
        w = scope.parameter("w", rng.normal(size=(4, 3)).astype(np.float32))
        x, y = Variable("x"), Variable("y")
        loss = softmax_cross_entropy(matmul(x, w), y)
        step = st.TrainingExecutor([loss], st.Adam(lr=0.1).minimize(loss, [w]), plan_memory=plan)
        xs = rng.normal(size=(8, 4)).astype(np.float32)
        ys = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 8)]
        losses = [float(step.run({x: xs, y: ys})[0]) for _ in range(6)]
        return losses, scope["w"]

    (l0, w0), (l1, w1) = train(False), train(True)
    assert l0 == l1 and l0[-1] < l0[0]
    np.testing.assert_array_equal(w0, w1)
