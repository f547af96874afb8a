"""The eager engine's inside: saved values, views, devices, memory, the observer."""

import gc
import tracemalloc

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu.backend import parse_device
from tinygrad_edu.eager import Observer, observe
from tinygrad_edu.eager.engine import GraphTask


def test_ops_that_need_only_shapes_save_no_data():
    a = tg.tensor(np.ones((3, 4)), requires_grad=True)
    b = tg.tensor(np.ones((4,)), requires_grad=True)
    for y in (a + b, a - b, a.sum(axis=0), a.mean(), a.reshape(12), a.T, -a):
        node = y.grad_fn
        assert all(s is None for s in node.saved), node.name()
        assert node.saved_out is None
    m = a * b
    assert [type(s).__name__ for s in m.grad_fn.saved] == ["SavedTensor", "SavedTensor"]
    e = a.exp()
    assert all(s is None for s in e.grad_fn.saved) and e.grad_fn.saved_out is not None


def test_views_share_the_version_counter():
    a = tg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    h = a * 1
    for view in (h.reshape(3, 2), h.T, h[0], h[:, 1:], h.detach()):
        assert view._counter is h._counter
    copy = h[np.array([0, 0])]  # integer-array indexing copies: its own counter
    assert copy._counter is not h._counter
    y = (h * h).sum()  # saves h
    v = h.detach().reshape(3, 2)
    v.add_(1.0)  # in-place through a view of h
    with pytest.raises(RuntimeError, match="in-place"):
        y.backward()


def test_inplace_on_a_view_of_a_leaf_that_requires_grad_is_refused():
    a = tg.tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        a[0].add_(1.0)
    assert a.tolist() == [[1.0] * 3] * 2  # nothing changed
    v = (a * 1)[0]  # a view of a non-leaf: recorded on the base (tests/eager/test_views.py)
    v.add_(1.0)
    assert v.grad_fn.name() == "SelectBackward0" and v._base.grad_fn.name() == "CopySlices"


def test_release_frees_saved_values():
    a = tg.tensor(np.ones(3), requires_grad=True)
    y = a * a
    node = y.grad_fn
    y.sum().backward()
    assert node.saved == () and node._freed


def test_mixing_devices_names_both():
    a = tg.tensor([1.0, 2.0])
    b = tg.tensor([1.0, 2.0])
    b._device = parse_device("cuda:1")  # a stand-in: no GPU needed to check the message
    with pytest.raises(
        RuntimeError, match=r"add: inputs are on different devices \(cpu and cuda:1\)"
    ):
        a + b


def test_shape_errors_name_op_and_shapes():
    a = tg.tensor(np.ones((3, 4)))
    with pytest.raises(tg.ShapeError, match=r"matmul: shapes \(3, 4\) and \(5, 4\) do not align"):
        a @ tg.tensor(np.ones((5, 4)))
    with pytest.raises(tg.ShapeError, match=r"add: shapes \(3, 4\) and \(2,\)"):
        a + tg.tensor([1.0, 2.0])
    with pytest.raises(tg.ShapeError, match=r"reshape: cannot reshape shape \(3, 4\)"):
        a.reshape(5, 2)


def test_graph_task_lives_for_one_call():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    y = (a.exp() * a).sum()
    tasks = []

    class Keep(Observer):
        def begin(self, task):
            tasks.append(task)

    with observe(Keep()):
        y.backward(retain_graph=True)
        y.backward()
    assert len(tasks) == 2 and tasks[0] is not tasks[1]
    assert all(isinstance(t, GraphTask) and not t.buffers and not t.ready for t in tasks)
    assert all(v == 0 for v in tasks[0].dependencies.values())


def test_observer_sees_every_step():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    h = a * 2
    y = (h * h + h).sum()
    events = []

    class Log(Observer):
        def node_started(self, task, node, grads):
            events.append(("run", node.name()))

        def gradient_arrived(self, task, node, nr, grad, summed):
            events.append(("arrive", node.name(), summed))

        def node_ready(self, task, node):
            events.append(("ready", node.name()))

    with observe(Log()):
        y.backward()
    runs = [e[1] for e in events if e[0] == "run"]
    assert runs[0] == "GraphRoot" and runs[-1] == "AccumulateGrad"
    assert runs.count("MulBackward0") == 2  # h*h and a*2, each once
    # h's node receives three gradients (h*h twice, + h once): two of them are summed
    assert [e for e in events if e[:2] == ("arrive", "MulBackward0") and e[2]]
    assert events.index(("ready", "AccumulateGrad")) < events.index(("run", "AccumulateGrad"))


def test_training_loop_memory_is_flat():
    rng = np.random.default_rng(0)
    X = tg.tensor(rng.standard_normal((64, 20)).astype(np.float32))
    y = rng.integers(0, 5, 64)
    W1 = tg.tensor(rng.standard_normal((20, 32)).astype(np.float32) * 0.1, requires_grad=True)
    W2 = tg.tensor(rng.standard_normal((32, 5)).astype(np.float32) * 0.1, requires_grad=True)

    def step():
        loss = tg.nn.functional.cross_entropy((X @ W1).relu() @ W2, y)
        loss.backward()
        with tg.no_grad():
            for p in (W1, W2):
                p.sub_(p.grad * 0.1)
                p.grad = None
        return loss.item()

    tracemalloc.start()
    first = step()
    for _ in range(200):  # warm-up: caches fill, allocator settles
        step()
    gc.collect()
    base = tracemalloc.get_traced_memory()[0]
    for _ in range(1000):
        last = step()
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert last < first
    assert grown < 16 * 1024, f"memory grew by {grown} bytes over 1000 steps"


def test_reshape_that_copies_gets_its_own_counter():
    """NOTE [Views and version counters]: a copy cannot pass changes back, so it does not
    share the counter."""
    a = tg.tensor(np.arange(6.0).reshape(2, 3))
    t = a.T  # a view, not contiguous
    flat = t.reshape(6)  # numpy must copy here
    assert t._counter is a._counter
    assert not np.shares_memory(flat._data, a._data)
    assert flat._counter is not a._counter
    flat.add_(1.0)
    assert a._version == 0 and flat._version == 1


def test_numpy_and_repr_under_a_strict_namespace():
    import array_api_strict as xps

    from tinygrad_edu import backend

    with backend.use_cpu_namespace(xps):
        x = tg.tensor([0.5, 1.5], requires_grad=True)
        (x * x).sum().backward()
        assert type(x.grad.numpy()) is np.ndarray
        np.testing.assert_allclose(x.grad.numpy(), [1.0, 3.0])
        assert repr(x) == "tensor([0.5000, 1.5000], requires_grad=True)"  # PyTorch's layout
