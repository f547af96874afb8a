"""What a GPU changes, beyond single ops (those are ``test_ops_table.py``): tensors and their
gradients moving between the CPU and the GPU, both engines, the Executor and ``tg.compile``
on the GPU, the per-device backward engine with a real GPU beside the CPU, and the errors
(devices mixed in one op, out of memory). Values are checked against the same computation on
the CPU in float64."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import tinygrad_edu as tg
from tests.gpu.device import DEVICE, SIMULATED, needs_device, needs_real_gpu
from tinygrad_edu import backend
from tinygrad_edu.eager import Observer, engine, observe
from tinygrad_edu.symbolic import Executor, Variable, gradients

pytestmark = needs_device
NAME = str(backend.parse_device(DEVICE))  # "cuda:0"


def _rng(seed=0):
    return np.random.default_rng(seed)


def _mlp_loss(L_device, x, labels, w1, w2):
    """Cross-entropy of a two-layer ReLU MLP, its inputs made on ``L_device``."""
    X, Y = tg.tensor(x, device=L_device), tg.tensor(labels, device=L_device)
    W1 = tg.tensor(w1, requires_grad=True, device=L_device)
    W2 = tg.tensor(w2, requires_grad=True, device=L_device)
    loss = tg.nn.functional.cross_entropy((X @ W1).relu() @ W2, Y)
    loss.backward()
    return loss, W1, W2


def test_a_tensor_lives_on_the_device():
    x = tg.tensor([1.0, 2.0, 3.0], device=DEVICE)
    assert x.device == NAME and (x * 2).device == NAME
    assert x.is_cuda == (not SIMULATED)
    np.testing.assert_array_equal((x * 2).cpu().numpy(), [2.0, 4.0, 6.0])
    if not SIMULATED:
        assert type(x._data).__module__.startswith("cupy")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_eager_forward_and_backward_match_the_cpu(dtype):
    rng = _rng()
    x = rng.standard_normal((32, 20)).astype(dtype)
    labels = rng.integers(0, 5, 32)
    w1, w2 = (rng.standard_normal(s).astype(dtype) * 0.3 for s in ((20, 16), (16, 5)))
    cpu = _mlp_loss("cpu", x, labels, w1, w2)
    gpu = _mlp_loss(DEVICE, x, labels, w1, w2)
    rtol = 1e-10 if dtype == "float64" else 1e-4
    np.testing.assert_allclose(gpu[0].item(), cpu[0].item(), rtol=rtol)
    for g, c in zip(gpu[1:], cpu[1:]):
        assert g.grad.device == NAME and str(g.grad.dtype) == str(c.grad.dtype)
        np.testing.assert_allclose(g.grad.numpy(), c.grad.numpy(), rtol=rtol, atol=rtol * 1e-2)


def test_to_and_cpu_carry_gradients_back_across():
    """A CPU leaf moved to the GPU and back: its gradient comes home, equal to the CPU's."""
    rng = _rng(1)
    w0, x0 = rng.standard_normal((4, 3)), rng.standard_normal((5, 4))
    w = tg.tensor(w0, requires_grad=True)
    h = (tg.tensor(x0, device=DEVICE) @ w.to(DEVICE)).tanh()
    assert h.device == NAME and h.grad_fn is not None
    loss = (h.cpu() ** 2).sum()
    loss.backward()
    assert w.grad.device == "cpu"
    expected = x0.T @ (2 * np.tanh(x0 @ w0) * (1 - np.tanh(x0 @ w0) ** 2))
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-10)
    # a leaf on the GPU, used on the CPU: its gradient lands on the GPU
    v = tg.tensor(w0, requires_grad=True, device=DEVICE)
    (v.cpu() * 3).sum().backward()
    assert v.grad.device == NAME
    np.testing.assert_allclose(v.grad.numpy(), np.full((4, 3), 3.0))


def test_a_module_moves_and_trains_on_the_device():
    tg.manual_seed(0)
    model = tg.nn.Sequential(tg.nn.Linear(6, 8), tg.nn.Tanh(), tg.nn.Linear(8, 2)).to(DEVICE)
    assert {str(p.device) for p in model.parameters()} == {NAME}
    opt = tg.optim.Adam(model.parameters(), lr=0.05)
    x = tg.randn(16, 6, device=DEVICE)
    y = tg.randn(16, 2, device=DEVICE)
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = tg.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0]
    assert {str(p.device) for p in model.parameters()} == {NAME}


def test_the_executor_on_the_device_matches_the_cpu():
    rng = _rng(2)
    x, w = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)) * 0.5
    X, W = Variable("x"), Variable("W")
    y = (X @ W).exp().sum()
    (dW,) = gradients(y, [W])
    cpu = Executor([y, dW]).run({X: x, W: w})
    gpu = Executor([y, dW], device=DEVICE).run({X: x, W: w})
    for g, c in zip(gpu, cpu):
        np.testing.assert_allclose(backend.to_numpy(g), backend.to_numpy(c), rtol=1e-10)


def test_compile_on_the_device_matches_eager():
    rng = _rng(3)
    x, labels = rng.standard_normal((16, 10)), rng.integers(0, 3, 16)
    w0 = rng.standard_normal((10, 3)) * 0.3

    def train(compiled: bool):
        W = tg.tensor(w0.copy(), requires_grad=True, device=DEVICE)
        opt = tg.optim.SGD([W], lr=0.1)
        X, Y = tg.tensor(x, device=DEVICE), tg.tensor(labels, device=DEVICE)

        def step(xb, yb):
            opt.zero_grad()
            loss = tg.nn.functional.cross_entropy(xb @ W, yb)
            loss.backward()
            opt.step()
            return loss

        fn = tg.compile(step) if compiled else step
        losses = [fn(X, Y).item() for _ in range(4)]
        return losses, W

    eager, w_eager = train(False)
    compiled, w_compiled = train(True)
    assert w_compiled.device == NAME
    np.testing.assert_allclose(compiled, eager, rtol=1e-10)
    np.testing.assert_allclose(w_compiled.detach().numpy(), w_eager.detach().numpy(), rtol=1e-10)


class _Where(Observer):
    def __init__(self):
        self.ran, self.lock = [], threading.Lock()

    def node_started(self, task, node, grads):
        with self.lock:
            self.ran.append((type(node).__name__, engine.current_queue_device()))


def test_the_per_device_engine_runs_the_gpu_nodes_on_their_own_queue():
    """cpu -> GPU -> cpu with a parameter on each side: the GPU's backward nodes run on the
    GPU's queue (its worker thread), the CPU's on the caller's, and the gradients are the
    CPU's."""
    rng = _rng(4)
    x0, w0, v0 = (rng.standard_normal(s) for s in ((3, 4), (4, 5), (5, 2)))

    def loss_of(device):
        x = tg.tensor(x0, requires_grad=True)
        w = tg.tensor(w0, requires_grad=True, device=device)
        v = tg.tensor(v0, requires_grad=True)
        h = (x.to(device) @ w).tanh()
        return ((h.cpu() @ v).exp().sum() + h.sum().cpu()), (x, w, v)

    loss, leaves = loss_of(DEVICE)
    where = _Where()
    with observe(where):
        loss.backward()
    ref_loss, ref_leaves = loss_of("cpu")
    ref_loss.backward()
    np.testing.assert_allclose(loss.item(), ref_loss.item(), rtol=1e-10)
    for a, b in zip(leaves, ref_leaves):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10)
    assert leaves[1].grad.device == NAME
    queues = {q for _, q in where.ran}
    assert queues == {"cpu", NAME}, where.ran
    assert ("TanhBackward0", NAME) in where.ran, where.ran
    assert NAME in engine.worker_threads()


def test_mixing_devices_in_one_op_is_an_error_naming_both():
    a, b = tg.ones(2), tg.ones(2, device=DEVICE)
    with pytest.raises(RuntimeError, match=rf"add: .*cpu and {NAME}|add: .*{NAME} and cpu"):
        a + b
    with pytest.raises(RuntimeError, match="different devices"):
        tg.ones(2, 2, device=DEVICE) @ tg.ones(2, 2)


@needs_real_gpu
def test_out_of_memory_is_a_clear_error_naming_device_and_size():
    n = 2**40 // 4  # 4 TiB of float32: more than any GPU holds
    with pytest.raises(tg.cuda.OutOfMemoryError) as info:
        tg.empty(n, dtype=tg.float32, device=DEVICE)
    message = str(info.value)
    assert NAME in message and "4.00 TiB" in message and str(n * 4) in message, message
    assert "empty_cache" in message
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, MemoryError)
    # the device still works afterwards
    assert tg.ones(3, device=DEVICE).sum().item() == 3.0


@needs_real_gpu
def test_dlpack_both_ways_with_pytorch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    from benchmarks.gpu_check import dlpack_round_trip

    facts = dlpack_round_trip(tg, torch, "cuda")
    assert facts["into_device"] == NAME and facts["out_device"] == "cuda:0"
