"""The per-device backward engine: ready queues, worker threads, simulated devices, reentrant
backward, thread safety and errors (issue #14).

Every test that could hang (threads waiting for each other) runs its body under
:func:`_within`, which fails the test with every thread's stack instead of hanging the run.
"""

from __future__ import annotations

import sys
import threading
import traceback

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu import backend
from tinygrad_edu.eager import AccumulateGrad, Observer, engine_threads, observe
from tinygrad_edu.eager.node import ToCopyBackward

TIMEOUT = 60  # seconds; the bodies take well under one


def _within(fn, timeout=TIMEOUT):
    """Run ``fn()`` in a thread; its result, its exception, or a failure after ``timeout``
    seconds that shows where every thread was stuck."""
    box = {}

    def body():
        try:
            box["result"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the test's thread
            box["error"] = e

    thread = threading.Thread(target=body, name="test body", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        stacks = "\n".join(
            f"--- {t.name}\n" + "".join(traceback.format_stack(sys._current_frames()[t.ident]))
            for t in threading.enumerate()
            if t.ident in sys._current_frames()
        )
        pytest.fail(f"no result after {timeout} s (deadlock?); thread stacks:\n{stacks}")
    if "error" in box:
        raise box["error"]
    return box.get("result")


class _Where(Observer):
    """Records, per node, the queue's device and the thread that ran it."""

    def __init__(self):
        self.ran, self.lock = [], threading.Lock()

    def node_started(self, task, node, grads):
        with self.lock:
            here = engine_threads.current_queue_device()
            self.ran.append((node, here, threading.current_thread()))


def _cross_device(devices=("sim:0", "sim:1"), seed=0):
    """cpu -> devices[0] -> devices[1] -> cpu, with a parameter on each device; float64."""
    rng = np.random.default_rng(seed)
    x = tg.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w0 = tg.tensor(rng.standard_normal((4, 5)), requires_grad=True, device=devices[0])
    w1 = tg.tensor(rng.standard_normal((5, 2)), requires_grad=True, device=devices[1])
    h = (x.to(devices[0]) @ w0).tanh()
    z = (h.to(devices[1]) @ w1).exp() + h.sum().to(devices[1])
    loss = (z.to("cpu") * x.sum()).sum()
    return loss, (x, w0, w1)


# -- simulated devices ----------------------------------------------------------------------


def test_sim_devices_are_devices_of_their_own():
    assert str(backend.parse_device("sim:1")) == "sim:1"
    assert backend.parse_device("sim") == backend.parse_device("sim:0")
    assert backend.parse_device("sim:0") != backend.parse_device("sim:1")
    assert backend.get_namespace("sim:3") is np
    a = tg.ones(2, device="sim:0")
    assert a.device == "sim:0" and "device='sim:0'" in repr(a)
    with pytest.raises(backend.DeviceError, match="must be a number"):
        backend.parse_device("sim:x")
    with pytest.raises(backend.DeviceError, match="sim:N"):
        backend.parse_device("tpu")


@pytest.mark.parametrize(("d0", "d1"), [("sim:0", "sim:1"), ("cpu", "sim:0"), ("sim:1", "cpu")])
def test_mixing_devices_in_one_op_names_both_and_the_fix(d0, d1):
    a, b = tg.ones(2, device=d0), tg.ones(2, device=d1)
    for op in (lambda: a + b, lambda: a * b, lambda: tg.matmul(a, b)):
        with pytest.raises(RuntimeError, match="different devices") as err:
            op()
        assert d0 in str(err.value) and d1 in str(err.value) and ".to(" in str(err.value)


def test_to_copies_between_devices():
    x = tg.tensor([1.0, 2.0])
    y = x.to("sim:0")
    assert y.device == "sim:0" and y.is_leaf and not y.requires_grad
    assert not np.shares_memory(x._data, y._data)
    z = y.to("sim:1")
    assert z.device == "sim:1" and not np.shares_memory(y._data, z._data)
    back = z.cpu()
    assert back.device == "cpu" and not np.shares_memory(z._data, back._data)
    assert y.to("sim:0") is y
    assert not np.shares_memory(y.numpy(), y._data), "numpy() of a device tensor is a host copy"
    np.testing.assert_array_equal(back.numpy(), [1.0, 2.0])


def test_to_is_recorded_and_sends_the_gradient_back():
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.to("sim:1")
    assert isinstance(y.grad_fn, ToCopyBackward) and y.grad_fn.name() == "ToCopyBackward0"
    assert not y.is_leaf and y.grad_fn.device == backend.parse_device("sim:1")
    assert y.grad_fn.next_functions[0][0].variable is x
    (y * y).sum().backward()
    assert x.grad.device == "cpu"
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])
    with tg.no_grad():
        assert x.to("sim:0").grad_fn is None


def test_leaf_on_a_device_gets_its_grad_there():
    w = tg.tensor([1.0, -2.0], requires_grad=True, device="sim:1")
    hooked = []
    w.register_hook(lambda g: hooked.append(g.device))
    (w * w).sum().backward()
    assert w.grad.device == "sim:1" and hooked == ["sim:1"]
    np.testing.assert_allclose(w.grad.numpy(), [2.0, -4.0])


def test_hooks_and_retained_grads_see_their_device():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = x.to("sim:0") * 2
    y.retain_grad()
    seen = []
    y.grad_fn.register_prehook(lambda gs: seen.append(("pre", gs[0].device)))
    y.grad_fn.register_hook(lambda gins, gouts: seen.append(("post", gins[0].device)))
    y.grad_fn.next_functions[0][0].register_hook(
        lambda gins, gouts: seen.append(("copy back", gins[0].device, gouts[0].device))
    )
    _within(lambda: (y.cpu() * 3).sum().backward())
    assert y.grad.device == "sim:0" and x.grad.device == "cpu"
    assert seen == [("pre", "sim:0"), ("post", "sim:0"), ("copy back", "cpu", "sim:0")]
    np.testing.assert_allclose(y.grad.numpy(), [3.0, 3.0])
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])


def test_backward_gradient_on_the_wrong_device_is_an_error():
    y = tg.tensor([1.0, 2.0], requires_grad=True, device="sim:0") * 2
    with pytest.raises(RuntimeError, match="gradient is on cpu but the output is on sim:0"):
        y.backward(tg.ones(2))


# -- the engine -----------------------------------------------------------------------------


def test_cross_device_gradients_equal_cpu_only_and_torch():
    ref_loss, ref = _cross_device(("cpu", "cpu"))
    ref_loss.backward()
    loss, params = _cross_device()
    _within(loss.backward)
    for p, r in zip(params, ref):
        assert p.grad.device == p.device
        np.testing.assert_allclose(p.grad.numpy(), r.grad.numpy(), rtol=1e-12, atol=0)
    import torch
    tx, t0, t1 = (torch.tensor(r.detach().numpy(), requires_grad=True) for r in ref)
    h = (tx @ t0).tanh()
    ((((h @ t1).exp() + h.sum()) * tx.sum()).sum()).backward()
    for p, t in zip(params, (tx, t0, t1)):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-10)


def test_each_node_runs_on_its_devices_worker_thread():
    loss, _ = _cross_device()
    where = _Where()
    with observe(where):
        _within(loss.backward)
    caller = {t for n, q, t in where.ran if q == "cpu"}
    assert len(caller) == 1 and next(iter(caller)).name == "test body", caller
    workers = engine_threads.worker_threads()
    for node, queue, thread in where.ran:
        assert queue == str(node.device), (node, queue)
        if queue != "cpu":
            assert thread is workers[queue] and thread.name == f"autograd {queue}"
    assert {q for _, q, _ in where.ran} == {"cpu", "sim:0", "sim:1"}


def test_graph_task_state_after_a_cross_device_backward():
    loss, _ = _cross_device()
    tasks = []

    class Keep(Observer):
        def begin(self, task):
            tasks.append(task)

    with observe(Keep()):
        _within(loss.backward)
    (task,) = tasks
    assert {str(d) for d in task.devices} == {"sim:0", "sim:1"}
    assert task.outstanding_tasks == 0 and engine_threads.wait(task, timeout=1)
    assert task.exception is None
    assert not task.not_ready and not task.ready and all(v == 0 for v in task.dependencies.values())


def test_workers_start_once_per_device_and_are_reused():
    _within(_cross_device()[0].backward)
    before = engine_threads.worker_threads()
    assert {"sim:0", "sim:1"} <= set(before)
    for _ in range(3):
        _within(_cross_device()[0].backward)
    after = engine_threads.worker_threads()
    assert all(after[d] is before[d] and after[d].is_alive() for d in before)
    names = [t.name for t in threading.enumerate() if t.name.startswith("autograd ")]
    assert len(names) == len(set(names)), f"a device got two workers: {names}"


def _child_backward(conn):
    loss, params = _cross_device()
    loss.backward()
    conn.send([p.grad.numpy() for p in params])


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_forked_child_starts_its_own_workers():
    import multiprocessing

    _within(_cross_device()[0].backward)  # the parent's workers exist before the fork
    ctx = multiprocessing.get_context("fork")
    here, there = ctx.Pipe()
    child = ctx.Process(target=_child_backward, args=(there,))
    child.start()
    child.join(TIMEOUT)
    if child.is_alive():
        child.kill()
        pytest.fail("a cross-device backward in a forked child hung")
    assert child.exitcode == 0 and here.poll(1)
    loss, params = _cross_device()
    loss.backward()
    for got, p in zip(here.recv(), params):
        np.testing.assert_allclose(got, p.grad.numpy())


def test_a_cpu_only_graph_stays_on_the_calling_thread():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    where = _Where()
    with observe(where):
        (x.exp() * x).sum().backward()
    assert {t for _, _, t in where.ran} == {threading.current_thread()}


def test_tg_grad_and_create_graph_across_devices():
    x = tg.tensor([0.5, -1.0], dtype="float64", requires_grad=True)

    def f():
        y = x.to("sim:0")
        (g,) = tg.grad((y * y * y).sum(), x, create_graph=True)  # 3x^2, recorded
        assert g.device == "cpu" and g.grad_fn is not None
        (gg,) = tg.grad(g.sum(), x)  # 6x
        return g, gg

    g, gg = _within(f)
    np.testing.assert_allclose(g.detach().numpy(), 3 * x.detach().numpy() ** 2)
    np.testing.assert_allclose(gg.detach().numpy(), 6 * x.detach().numpy())


def test_gradient_check_through_devices():
    from tinygrad_edu.autograd import gradcheck

    rng = np.random.default_rng(3)
    a = tg.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    b = tg.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    _within(lambda: gradcheck(lambda a, b: (a.to("sim:0") @ b.to("sim:0")).tanh().cpu(), [a, b]))


def test_accumulate_grad_runs_first_as_in_pytorch():
    import torch

    class Three(tg.Function):
        @staticmethod
        def forward(ctx, a, b, c):
            return a * b * c

        @staticmethod
        def backward(ctx, g):
            return g, g, g

    class TorchThree(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, c):
            return a * b * c

        @staticmethod
        def backward(ctx, g):
            return g, g, g

    def graph(make, three):
        a, b, c, d = (make(v) for v in ([1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]))
        h = (a * b).tanh()
        y = ((h * c + h * d).sum() * (a + d).sum() + (three.apply(a, b, c) * d).sum()).sum()
        return y, {id(a): "a", id(b): "b", id(c): "c", id(d): "d"}

    def label(node, names):
        v = getattr(node, "variable", None)
        name = node.name() if callable(node.name) else node.name
        return names[id(v)] if v is not None else name.rstrip("0").replace("TorchThree", "Three")

    y, names = graph(lambda v: torch.tensor(v, dtype=torch.float64, requires_grad=True),
                     TorchThree)  # fmt: skip
    theirs, seen, stack = [], set(), [y.grad_fn]
    while stack:  # a pre-hook on every node records the order PyTorch runs them in
        node = stack.pop()
        if node is not None and node not in seen:
            seen.add(node)
            node.register_prehook(lambda g, n=node: theirs.append(label(n, names)))
            stack.extend(n for n, _ in node.next_functions)
    y.backward()

    y, names = graph(lambda v: tg.tensor(np.array(v), requires_grad=True), Three)
    ours, events = [], []

    class Order(Observer):
        def node_ready(self, task, node):
            events.append(("ready", node))

        def node_started(self, task, node, grads):
            events.append(("run", node))
            if node is not task.root:
                ours.append(label(node, names))

    with observe(Order()):
        y.backward()
    assert ours == theirs
    # a ready AccumulateGrad runs before any other node (only other AccumulateGrads between)
    for i, (kind, node) in enumerate(events):
        if kind == "ready" and isinstance(node, AccumulateGrad):
            later = [n for k, n in events[i:] if k == "run"]
            before = later[: later.index(node)]
            assert all(isinstance(n, AccumulateGrad) for n in before), (node, before)


# -- reentrant backward ---------------------------------------------------------------------


class _InnerGrad(tg.Function):
    """Its backward differentiates a small graph of its own: a nested backward call."""

    device = "cpu"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        inner = x.detach().to(_InnerGrad.device).requires_grad_(True)
        with tg.enable_grad():  # backward runs with grad mode off, as in PyTorch
            (d,) = tg.grad((inner * inner * inner).sum(), inner)  # 3x^2, a nested backward
        return g * d.to(g.device)


@pytest.mark.parametrize("device", ["cpu", "sim:0"])
@pytest.mark.parametrize("inner_device", ["cpu", "sim:1"])
def test_backward_inside_a_custom_function_runs_nested(device, inner_device):
    _InnerGrad.device = inner_device
    x = tg.tensor([1.0, -2.0], dtype="float64", requires_grad=True, device=device)

    def run():
        y = _InnerGrad.apply(x)
        (y * 2).sum().backward()
        return x.grad

    grad = _within(run)
    np.testing.assert_allclose(grad.detach().numpy(), 2 * 3 * x.detach().numpy() ** 2)


def test_backward_inside_a_hook_runs_nested():
    x = tg.tensor([1.0, 2.0], requires_grad=True, device="sim:0")
    w = tg.tensor([3.0, 4.0], requires_grad=True)
    seen = []

    def hook(g):
        with tg.enable_grad():
            (w * w).sum().backward()  # a whole other backward, from inside this one
        seen.append(w.grad.numpy().copy())

    y = x * 5
    y.register_hook(hook)

    _within(lambda: (y.to("cpu") * w).sum().backward())
    # w's own AccumulateGrad (x * 5 = [5, 10]) ran first: it outranks the rest, then the
    # hook's nested backward added d(w.w)/dw = 2w
    np.testing.assert_allclose(seen[0], [5.0 + 6.0, 10.0 + 8.0])
    np.testing.assert_allclose(w.grad.numpy(), [5.0 + 6.0, 10.0 + 8.0])
    np.testing.assert_allclose(x.grad.numpy(), [15.0, 20.0])


# -- errors ---------------------------------------------------------------------------------


class _Boom(tg.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        raise ValueError("boom in backward")


def test_worker_error_reaches_the_caller_and_workers_survive():
    x = tg.tensor([1.0, 2.0], requires_grad=True, device="sim:0")

    def failing():
        with pytest.raises(ValueError, match="boom in backward") as err:
            (_Boom.apply(x).cpu() * 3).sum().backward()
        return err.value

    error = _within(failing)
    assert "_BoomBackward" in str(error) and "autograd sim:0" in str(error)
    assert isinstance(error.__cause__, ValueError)
    assert engine_threads.worker_threads()["sim:0"].is_alive()
    x.grad = None
    _within(lambda: (x.cpu() * 3).sum().backward())  # the same worker serves the next call
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_worker_error_in_anomaly_mode_shows_the_forward_trace():
    x = tg.tensor([1.0, 2.0], requires_grad=True, device="sim:1")

    def failing():
        with tg.detect_anomaly():
            y = _Boom.apply(x)  # the line the trace must show
            with pytest.raises(ValueError) as err:
                (y.cpu() * 3).sum().backward()
        return str(err.value)

    message = _within(failing)
    assert "The forward call that created _BoomBackward" in message
    assert "y = _Boom.apply(x)" in message


def test_retain_graph_error_from_a_worker():
    x = tg.tensor([1.0, 2.0], requires_grad=True, device="sim:0")
    y = (x.exp() * x).sum().cpu()
    _within(y.backward)
    with pytest.raises(RuntimeError, match="retain_graph"):
        _within(y.backward)
    assert engine_threads.worker_threads()["sim:0"].is_alive()


# -- threads --------------------------------------------------------------------------------


def test_backward_from_several_threads_into_one_leaf_loses_nothing():
    # NOTE [One leaf, several threads] in eager/node.py: without the leaf's lock this fails
    # (numpy releases the GIL inside large additions; a tiny switch interval interleaves the
    # threads between reading and writing .grad); 3 rounds of 4 threads x 25 calls
    n_threads, calls = 4, 25

    def round_():
        w = tg.tensor(np.zeros(200_000), requires_grad=True)
        barrier = threading.Barrier(n_threads)

        def user():
            barrier.wait()
            for _ in range(calls):
                (w * 1.0).sum().backward()

        threads = [threading.Thread(target=user) for _ in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return w.grad.numpy()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        grads = [_within(round_) for _ in range(3)]
    finally:
        sys.setswitchinterval(interval)
    for g in grads:
        np.testing.assert_array_equal(g, n_threads * calls)


def test_stress_threads_share_leaves_across_devices():
    """4 user threads x 10 backward calls over graphs spanning cpu, sim:0 and sim:1 that share
    their parameters: every gradient arrives exactly once."""
    rng = np.random.default_rng(7)
    w0 = tg.tensor(rng.standard_normal((6, 6)), requires_grad=True, device="sim:0")
    w1 = tg.tensor(rng.standard_normal((6, 6)), requires_grad=True, device="sim:1")
    c = tg.tensor(rng.standard_normal((6,)), requires_grad=True)
    xs = [rng.standard_normal((5, 6)) for _ in range(4)]

    def loss(xv):
        h = (tg.tensor(xv, device="sim:0") @ w0).tanh()
        return ((h.to("sim:1") @ w1).cpu() * c).sum()

    expected = [np.zeros(p.shape) for p in (w0, w1, c)]
    for xv in xs:
        for e, g in zip(expected, tg.grad(loss(xv), [w0, w1, c])):
            e += 10 * g.numpy()

    def user(xv):
        for _ in range(10):
            loss(xv).backward()

    def run():
        threads = [threading.Thread(target=user, args=(xv,)) for xv in xs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    _within(run)
    for p, e in zip((w0, w1, c), expected):
        np.testing.assert_allclose(p.grad.numpy(), e, rtol=1e-10)


def test_hundred_cross_device_backward_calls_never_deadlock():
    loss, params = _cross_device()
    loss.backward(retain_graph=True)
    once = [p.grad.numpy().copy() for p in params]

    def run():
        for _ in range(99):
            loss.backward(retain_graph=True)

    _within(run)
    for p, g in zip(params, once):
        np.testing.assert_allclose(p.grad.numpy(), 100 * g, rtol=1e-10)
