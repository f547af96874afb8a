r"""Assignment A4: the library on a GPU, through CuPy.

Task (the function to write, in the library):

- A4.1 ``backend/__init__.py`` ``get_namespace``: for a CUDA device, import CuPy, check that a
  GPU with that index is visible (a :class:`DeviceError` naming the device and the fix
  otherwise), make it the current device and return the ``cupy`` module as the namespace.

Everything above the backend asks it for ``xp``, so with this one function the eager engine,
the symbolic Executor and the optimizers all run on the GPU. These tests need CuPy and an
NVIDIA GPU; without them they are skipped (and, skipped, they score nothing: grade A4 on a
machine with a GPU).
"""

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu.backend import DeviceError, cuda_available, get_namespace, namespace_of

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.task("A4.1"),
    pytest.mark.skipif(
        not cuda_available(),
        reason='A4 needs CuPy and a CUDA GPU (pip install "tinygrad_edu[gpu]" on a GPU machine)',
    ),
]


def _rng(seed=0):
    return np.random.default_rng(seed)


@pytest.mark.points(2)
def test_cuda_namespace_is_cupy():
    import cupy

    xp = get_namespace("cuda")
    assert xp is cupy, f'get_namespace("cuda") must return the cupy module, got {xp!r}'
    assert get_namespace("cuda:0") is cupy
    a = xp.ones(3)
    assert namespace_of(a) is cupy and int(a.device.id) == 0


@pytest.mark.points(2)
def test_eager_forward_and_backward_on_the_gpu_match_the_cpu():
    av, bv = _rng(1).standard_normal((4, 3)), _rng(2).standard_normal((3, 2))
    results = {}
    for device in ("cpu", "cuda"):
        a = tg.tensor(av, requires_grad=True, device=device)
        b = tg.tensor(bv, requires_grad=True, device=device)
        loss = (a @ b).tanh().sum() + (a * a).exp().mean()
        loss.backward()
        assert a.grad.device == a.device, f"the gradient stays on {device}"
        results[device] = (loss.item(), a.grad.numpy(), b.grad.numpy())
    for cpu, gpu, what in zip(results["cpu"], results["cuda"], ["loss", "dL/da", "dL/db"]):
        np.testing.assert_allclose(gpu, cpu, rtol=1e-10, err_msg=f"{what} on the GPU")


@pytest.mark.points(1)
def test_symbolic_executor_on_the_gpu():
    from tinygrad_edu.symbolic import Executor, Variable, gradients

    x, W = Variable("x"), Variable("W")
    y = (x @ W).exp().sum()
    (dW,) = gradients(y, [W])
    xv, wv = _rng(3).standard_normal((2, 3)), _rng(4).standard_normal((3, 2)) * 0.3
    cpu = Executor([y, dW]).run({x: xv, W: wv})
    gpu = Executor([y, dW], device="cuda").run({x: xv, W: wv})
    for c, g in zip(cpu, gpu):
        assert isinstance(g, np.ndarray), "run() hands results back as numpy arrays"
        np.testing.assert_allclose(g, c, rtol=1e-10)


@pytest.mark.points(1)
def test_a_missing_gpu_index_is_a_clear_error():
    import cupy

    count = cupy.cuda.runtime.getDeviceCount()
    with pytest.raises(DeviceError, match=f"cuda:{count}"):
        get_namespace(f"cuda:{count}")
