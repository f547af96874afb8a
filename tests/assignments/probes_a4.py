"""Probes of assignment A4 (the GPU backend): they run your code and return plain data.

Called by the graded tests (``test_a4_gpu.py``) through the ``run`` fixture (see
``probes_a1.py``); they need CuPy and a CUDA GPU.
"""

import numpy as np

import tinygrad_edu as tg
from tinygrad_edu.backend import get_namespace, namespace_of

__all__ = ["cuda_namespace", "eager_on", "symbolic_on", "missing_gpu"]


def cuda_namespace():
    """What ``get_namespace`` returns for CUDA devices, and where an array lands."""
    import cupy

    xp = get_namespace("cuda")
    a = xp.ones(3)
    return {
        "is_cupy": xp is cupy, "cuda0_is_cupy": get_namespace("cuda:0") is cupy,
        "array_namespace_is_cupy": namespace_of(a) is cupy, "device": int(a.device.id),
    }  # fmt: skip


def eager_on(device, a, b):
    """Forward and backward of a small expression on ``device``: loss, gradients, devices."""
    ta = tg.tensor(np.asarray(a), requires_grad=True, device=device)
    tb = tg.tensor(np.asarray(b), requires_grad=True, device=device)
    loss = (ta @ tb).tanh().sum() + (ta * ta).exp().mean()
    loss.backward()
    return {"loss": loss.item(), "da": ta.grad.numpy(), "db": tb.grad.numpy(),
            "same_device": str(ta.grad.device) == str(ta.device)}  # fmt: skip


def symbolic_on(device, x, w):
    """The symbolic Executor on ``device``: ``sum(exp(x @ W))`` and its gradient."""
    from tinygrad_edu.symbolic import Executor, Variable, gradients

    X, W = Variable("x"), Variable("W")
    y = (X @ W).exp().sum()
    (dW,) = gradients(y, [W])
    out = Executor([y, dW], device=device).run({X: np.asarray(x), W: np.asarray(w)})
    return {"values": [np.asarray(v) for v in out],
            "numpy": [isinstance(v, np.ndarray) for v in out]}  # fmt: skip


def missing_gpu():
    """``get_namespace`` for the first CUDA index past the last GPU: what it raised."""
    import cupy

    count = cupy.cuda.runtime.getDeviceCount()
    try:
        get_namespace(f"cuda:{count}")
    except Exception as e:  # noqa: BLE001 - the test checks which
        return {"count": count, "error": [type(e).__name__, str(e)]}
    return {"count": count, "error": None}
