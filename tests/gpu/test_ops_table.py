"""Every public op's forward and first derivative on the GPU (CuPy) against the CPU (numpy),
in float64, float32 and float16: the rows of the per-op table (``tests/opinfo``), run on both
devices with the same inputs.

Each test is one row of the table in one dtype. In float64 it runs every public name of the
row on its first example and the first name on every example; in float32 and float16 the
first name on every example (the names of a row share one op). The float inputs are cast to
the dtype; indices and masks stay as they are.

Tolerance: the two devices agree to a few units in the dtype's last place (CuPy sums in
another order, and its float16 arithmetic goes through float32). Where they differ more, the
GPU passes if it is no further from the float64 answer than the CPU is (four times as far,
plus the tolerance): an op that float16 cannot compute well is no GPU bug. An input that the
CPU refuses is not compared.
"""

from __future__ import annotations

import contextlib
import re
import warnings

import numpy as np
import pytest

import tinygrad_edu as tg
from tests.gpu.device import DEVICE, needs_device
from tests.opinfo import ROWS as CASES
from tests.opinfo import call_row, rng_for

pytestmark = needs_device

# rtol, atol per dtype
TOLERANCE = {"float64": (1e-9, 1e-10), "float32": (2e-4, 2e-5), "float16": (2e-2, 2e-2)}
# rows whose answer is about the device itself, and PyTorch's legacy CPU tensor types (which
# refuse a tensor on a GPU, as PyTorch's do)
DEVICE_DEPENDENT = {"Tensor.is_cuda", "Tensor.is_cpu", "Tensor.get_device", "Tensor.device",
                    *(f"tg.{k}Tensor" for k in ("Float", "Double", "Long", "Int", "Byte",
                                                "Bool"))}  # fmt: skip
PARAMS = [(i, dtype) for i, case in enumerate(CASES) for dtype in case.dtypes
          if not set(case.names) <= DEVICE_DEPENDENT]  # fmt: skip


def _layout(leaf, spec):
    if spec.layout == "T":  # stored with dims reversed; permuted back: non-contiguous
        return leaf.permute(*reversed(range(len(spec.shape))))
    return leaf


def _tensors(out):
    if isinstance(out, tuple | list):
        return [t for o in out for t in _tensors(o)]
    return [out] if isinstance(out, tg.Tensor) else []


def _plain(out):
    """An output as data to compare: (kind, dtype name, numpy array) for arrays."""
    if isinstance(out, tg.Tensor):
        return ("tensor", str(out.dtype), np.array(out.detach().numpy(), copy=True))
    if isinstance(out, tuple | list):
        return tuple(_plain(o) for o in out)
    if type(out).__name__ == "Size":
        return tuple(out)
    if isinstance(out, np.ndarray):
        return ("array", str(out.dtype), np.array(out, copy=True))
    if isinstance(out, str) or type(out).__name__ == "device":
        # a tensor's repr names its device when it is not the CPU
        return re.sub(r",\s*device='[^']*'", "", str(out))
    return out


@contextlib.contextmanager
def _default_device(device):
    """Factories inside a row (``L.tensor``, ``L.ones`` ...) make tensors on ``device``."""
    old = tg.get_default_device()
    tg.set_default_device(device)
    try:
        yield
    finally:
        tg.set_default_device(None if str(old) == "cpu" else old)


def run_row(case, name, example, arrays, device, seeds):
    """The row on ``device``: its output and the gradient of a random projection of it."""
    tg.manual_seed(0)  # random rows draw the same numbers on every device
    with _default_device(device), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        leaves = [tg.tensor(a, requires_grad=a.dtype.kind == "f", device=device) for a in arrays]
        inputs = [_layout(leaf, spec) for leaf, spec in zip(leaves, example.specs)]

        def convert(value):
            if isinstance(value, np.ndarray):
                return tg.tensor(value, device=device)
            if isinstance(value, tuple):
                return tuple(convert(v) for v in value)
            return value

        extra = {k: convert(v) for k, v in example.extra.items() if k != "args"}
        args = convert(tuple(example.extra.get("args", ())))
        out = call_row(case, tg, name, inputs, args, extra)
        result = {"out": _plain(out)}
        floats = [o for o in _tensors(out) if o.requires_grad]
        wanted = [leaf for leaf in leaves if leaf.requires_grad]
        if floats and wanted:
            rng = np.random.default_rng(seeds)
            projection = sum((o * tg.tensor(rng.standard_normal(tuple(o.shape)).astype(
                str(o.dtype).removeprefix("tinygrad_edu.")), device=o.device)).sum()
                for o in floats)  # fmt: skip
            grads = tg.grad(projection, wanted, allow_unused=True)
            result["grad"] = [None if g is None else g.detach().numpy().copy() for g in grads]
    return result


def _arrays(index, j, example, dtype):
    rng = rng_for(index, j)
    arrays = [spec.array(rng) for spec in example.specs]
    arrays = [np.ascontiguousarray(a.transpose()) if s.layout == "T" else a
              for a, s in zip(arrays, example.specs)]  # fmt: skip
    return [a.astype(dtype) if a.dtype.kind == "f" else a for a in arrays]


def _close(gpu, cpu, ref, where, rtol, atol):
    """GPU against CPU; past the tolerance, no further from the float64 answer than the CPU."""
    if gpu.dtype.kind not in "fc":
        np.testing.assert_array_equal(gpu, cpu, err_msg=where)
        return
    g, c = gpu.astype(np.float64), cpu.astype(np.float64)
    if np.allclose(g, c, rtol=rtol, atol=atol, equal_nan=True):
        return
    r = None if ref is None else np.asarray(ref, np.float64)
    if r is not None and r.shape == g.shape:
        with np.errstate(invalid="ignore"):
            err_gpu = np.nan_to_num(np.abs(g - r), nan=np.inf)
            err_cpu = np.nan_to_num(np.abs(c - r), nan=np.inf)
        bound = 4 * err_cpu + atol + rtol * np.abs(r)
        if np.all((err_gpu <= bound) | (np.isnan(g) & np.isnan(c))):
            return
    np.testing.assert_allclose(g, c, rtol=rtol, atol=atol, equal_nan=True, err_msg=where)


def _same(gpu, cpu, ref, where, rtol, atol):
    if isinstance(cpu, tuple) and cpu and cpu[0] in ("tensor", "array"):
        assert isinstance(gpu, tuple) and gpu[0] == cpu[0], f"{where}: {gpu!r} vs {cpu!r}"
        assert gpu[1] == cpu[1], f"{where}: dtype {gpu[1]} on the GPU, {cpu[1]} on the CPU"
        assert gpu[2].shape == cpu[2].shape, f"{where}: shape {gpu[2].shape} vs {cpu[2].shape}"
        ref_array = ref[2] if isinstance(ref, tuple) and len(ref) == 3 else None
        _close(gpu[2], cpu[2], ref_array, where, rtol, atol)
    elif isinstance(cpu, tuple | list):
        assert isinstance(gpu, tuple | list) and len(gpu) == len(cpu), f"{where}: {gpu!r}"
        refs = ref if isinstance(ref, tuple | list) and len(ref) == len(cpu) else [None] * len(cpu)
        for i, (g, c, r) in enumerate(zip(gpu, cpu, refs)):
            _same(g, c, r, f"{where}[{i}]", rtol, atol)
    elif isinstance(cpu, float) and np.isnan(cpu):
        assert isinstance(gpu, float) and np.isnan(gpu), f"{where}: {gpu!r} vs nan"
    elif isinstance(cpu, float) and isinstance(gpu, float):
        _close(np.float64(gpu), np.float64(cpu), None if ref is None else np.float64(ref),
               where, rtol, atol)  # fmt: skip
    else:
        assert gpu == cpu, f"{where}: {gpu!r} on the GPU, {cpu!r} on the CPU"


def _runs(case, dtype):
    """(name, example index) pairs this test runs (see the module docstring)."""
    first = case.names[0]
    pairs = [(first, j) for j in range(len(case.examples))]
    if dtype == "float64":
        pairs += [(name, 0) for name in case.names[1:]]
    return pairs


@pytest.mark.parametrize(("index", "dtype"), PARAMS,
                         ids=[f"{CASES[i].names[0]}-{i}-{d}" for i, d in PARAMS])  # fmt: skip
def test_op_on_the_gpu_matches_the_cpu(index, dtype):
    case = CASES[index]
    rtol, atol = TOLERANCE[dtype]
    rtol, atol = max(rtol, case.rtol), max(atol, case.atol)
    compared = 0
    for name, j in _runs(case, dtype):
        if name in DEVICE_DEPENDENT:
            continue
        example = case.examples[j]
        arrays = _arrays(index, j, example, dtype)
        where = f"{name} in {dtype} on example {j} ({example})"
        try:
            cpu = run_row(case, name, example, arrays, "cpu", seeds=(index, j))
        except Exception:  # noqa: BLE001 - the CPU refuses this input: nothing to compare
            continue
        gpu = run_row(case, name, example, arrays, DEVICE, seeds=(index, j))
        ref = cpu
        if dtype != "float64":
            try:
                ref = run_row(case, name, example, _arrays(index, j, example, "float64"), "cpu",
                              seeds=(index, j))  # fmt: skip
            except Exception:  # noqa: BLE001 - no float64 answer: compare with the CPU alone
                ref = {}
        _same(gpu["out"], cpu["out"], ref.get("out"), where, rtol, atol)
        assert ("grad" in gpu) == ("grad" in cpu), f"{where}: gradients on one device only"
        for k, (g, c) in enumerate(zip(gpu.get("grad", []), cpu.get("grad", []))):
            assert (g is None) == (c is None), f"{where}: gradient {k} is None on one device"
            if g is not None:
                r = (ref.get("grad") or [None] * (k + 1))[k]
                _same(("tensor", str(g.dtype), g), ("tensor", str(c.dtype), c),
                      None if r is None else ("tensor", str(r.dtype), r),
                      f"{where}: gradient {k}", rtol, atol)  # fmt: skip
        compared += 1
    if compared == 0:
        pytest.skip(f"the CPU refuses every example of {case.names[0]} in {dtype}")
