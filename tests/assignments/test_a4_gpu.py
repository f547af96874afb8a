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

from tinygrad_course.grading import compare_gradients, numeric_gradient
from tinygrad_edu.backend import cuda_available

from . import probes_a4 as probes

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
def test_cuda_namespace_is_cupy(run):
    """get_namespace("cuda") is the cupy module"""
    got = run(probes.cuda_namespace)
    assert got["is_cupy"], 'get_namespace("cuda") must return the cupy module'
    assert got["cuda0_is_cupy"] and got["array_namespace_is_cupy"] and got["device"] == 0, got


@pytest.mark.points(2)
def test_eager_forward_and_backward_on_the_gpu_match_the_cpu(run):
    """the eager engine on the GPU matches the CPU"""
    av, bv = _rng(1).standard_normal((4, 3)), _rng(2).standard_normal((3, 2))
    cpu = run(probes.eager_on, device="cpu", a=av, b=bv)
    gpu = run(probes.eager_on, device="cuda", a=av, b=bv)
    assert gpu["same_device"], "the gradient stays on the GPU"
    for what in ("loss", "da", "db"):
        np.testing.assert_allclose(gpu[what], cpu[what], rtol=1e-10, err_msg=f"{what} on the GPU")
    # and both are right: numpy's value, and central differences of it
    f = lambda a, b: np.tanh(a @ b).sum() + np.exp(a * a).mean()  # noqa: E731
    np.testing.assert_allclose(gpu["loss"], f(av, bv), rtol=1e-10, err_msg="the loss")
    compare_gradients([gpu["da"], gpu["db"]], numeric_gradient(lambda v: f(*v), [av, bv]),
                      names=["a", "b"], what="backward() on the GPU")  # fmt: skip


@pytest.mark.points(1)
def test_symbolic_executor_on_the_gpu(run):
    """the symbolic Executor on the GPU matches the CPU"""
    xv, wv = _rng(3).standard_normal((2, 3)), _rng(4).standard_normal((3, 2)) * 0.3
    cpu = run(probes.symbolic_on, device="cpu", x=xv, w=wv)
    gpu = run(probes.symbolic_on, device="cuda", x=xv, w=wv)
    assert all(gpu["numpy"]), "run() hands results back as numpy arrays"
    assert len(cpu["values"]) == len(gpu["values"]) == 2, "run([y, dW]) gives two values"
    for c, g in zip(cpu["values"], gpu["values"]):
        np.testing.assert_allclose(g, c, rtol=1e-10)
    h = np.exp(xv @ wv)  # y = sum(exp(x W)), dy/dW = x^T exp(x W)
    np.testing.assert_allclose(gpu["values"][0], h.sum(), rtol=1e-10, err_msg="y")
    np.testing.assert_allclose(gpu["values"][1], xv.T @ h, rtol=1e-10, err_msg="dy/dW")


@pytest.mark.points(1)
def test_a_missing_gpu_index_is_a_clear_error(run):
    """get_namespace: a missing GPU index is a clear DeviceError"""
    got = run(probes.missing_gpu)
    assert got["error"] is not None, f"cuda:{got['count']} does not exist: raise DeviceError"
    assert got["error"][0] == "DeviceError" and f"cuda:{got['count']}" in got["error"][1], got
