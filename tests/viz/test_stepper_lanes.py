"""The backward stepper's lanes: one ready queue per device, the thread that ran each node."""

import threading

import numpy as np

import tinygrad_edu as tg
from tinygrad_edu import viz
from tinygrad_edu.eager import Observer, observe

from .conftest import needs_dot


def _two_devices():
    rng = np.random.default_rng(0)
    x = tg.tensor(rng.standard_normal((2, 2)), requires_grad=True)
    w0 = tg.tensor(rng.standard_normal((2, 2)), requires_grad=True, device="sim:0")
    w1 = tg.tensor(rng.standard_normal((2, 2)), requires_grad=True, device="sim:1")
    a = (x.to("sim:0") @ w0).tanh().sum()
    b = (x.to("sim:1") * w1).exp().sum()
    return a.cpu() + b.cpu(), {"x": x, "w0": w0, "w1": w1}


class _Ran(Observer):
    def __init__(self):
        self.nodes, self.lock = [], threading.Lock()

    def node_started(self, task, node, grads):
        with self.lock:
            self.nodes.append(node)


def test_frames_record_queue_and_thread():
    loss, names = _two_devices()
    ran = _Ran()
    with observe(ran):
        loss.backward(retain_graph=True)
    st = viz.BackwardStepper.record(loss, names=names)
    runs = [f for f in st.frames if f.kind == "run"]
    assert len(st.frames) == len(ran.nodes) + 2

    def ids(nodes):  # each backward call makes its own GraphRoot
        return sorted(id(n) for n in nodes if n.name() != "GraphRoot")

    assert ids(f.node for f in runs) == ids(ran.nodes), "each node once"
    for f in runs:
        assert f.queue == str(f.node.device)
        expected = threading.current_thread().name if f.queue == "cpu" else f"autograd {f.queue}"
        assert f.thread == expected
    assert st.lanes == ["cpu", "sim:0", "sim:1"]
    # dependencies: a node's frame comes after the frames of all nodes that send it gradients
    position = {f.node: i for i, f in enumerate(st.frames) if f.kind == "run"}
    for f in runs:
        for nxt, _ in f.node.next_functions:
            if nxt in position:
                assert position[nxt] > position[f.node]
    assert all(g is not None for g in st.frames[-1].leaf_grads.values())
    for t in names.values():
        np.testing.assert_allclose(st.frames[-1].leaf_grads[t], t.grad.numpy())
    assert "[sim:0 queue, thread 'autograd sim:0']" in " ".join(f.caption for f in runs)


def test_single_device_frames_have_one_lane():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    st = viz.BackwardStepper.record((x * x).sum(), names={"x": x})
    assert st.lanes == ["cpu"]
    assert all(f.queue == "cpu" for f in st.frames)
    assert "thread autograd" not in st.draw(2).source


@needs_dot
def test_lane_drawing_has_a_column_per_queue():
    loss, names = _two_devices()
    st = viz.BackwardStepper.record(loss, names=names)
    last_run = max(i for i, f in enumerate(st.frames) if f.kind == "run")
    src = st.draw(last_run).source
    for lane in ("cpu", "sim:0", "sim:1"):
        assert f"<B>{lane}</B>" in src
    assert "thread autograd sim:0" in src and "thread autograd sim:1" in src
    assert "· sim:1" in src  # each node's box names its lane
    png = st.render_png(last_run)
    assert png.startswith(b"\x89PNG")


def test_nodes_made_ready_on_a_device_show_queued_in_its_lane():
    """A worker pushes the nodes its step made ready only after the step's frame is taken:
    the frame shows them waiting in their device's lane (in the queue's order), not running."""
    x = tg.tensor([[1.0, 2.0]], requires_grad=True)
    w = tg.tensor([[0.5], [-1.0]], requires_grad=True, device="sim:0")
    loss = ((x.to("sim:0") @ w).tanh().to("cpu") * 3).sum()
    st = viz.BackwardStepper.record(loss, names={"x": x, "w": w})
    for f in st.frames:
        for node in f.newly_ready:
            assert node in f.lanes.get(str(node.device), []), (f.title, node.name())
    matmul = next(f for f in st.frames if f.kind == "run" and f.node.name() == "MmBackward0")
    assert [n.name() for n in matmul.lanes["sim:0"]] == ["AccumulateGrad", "ToCopyBackward0"]
    assert "running (another thread)" not in st.draw(st.frames.index(matmul)).source
