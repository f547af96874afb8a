"""The device the ``gpu`` tests run on, and why they skip.

They run on ``"cuda"`` where CuPy sees a GPU and skip elsewhere with the reason. Setting
``TG_GPU_TEST_DEVICE=sim:0`` runs them on a simulated device instead (numpy underneath, but a
device of its own for every rule: NOTE [Simulated devices] in ``tinygrad_edu/backend``), which
checks the tests' own logic on a machine without a GPU; the tests that only a real GPU can
answer (CuPy's arrays, out of memory) still skip there.
"""

from __future__ import annotations

import os

import pytest

from tinygrad_edu import backend

DEVICE = os.environ.get("TG_GPU_TEST_DEVICE") or "cuda"
SIMULATED = backend.parse_device(DEVICE).type == "sim"


def _why_not() -> str | None:
    if SIMULATED:
        return None
    try:
        backend.get_namespace(DEVICE)
    except backend.DeviceError as e:
        return f"needs CuPy and a CUDA GPU: {e}"
    return None


REASON = _why_not()
# every test here: the gpu mark, and a skip with the reason where the device is missing
needs_device = [pytest.mark.gpu, pytest.mark.skipif(REASON is not None, reason=REASON or "")]
needs_real_gpu = pytest.mark.skipif(
    SIMULATED or REASON is not None, reason=REASON or f"a real GPU only ({DEVICE} is simulated)"
)
