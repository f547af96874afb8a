"""The differential suite covers the whole public API: every Tensor method, ``tg.`` function
and ``tg.nn.functional`` function has a PyTorch comparison in the per-op table
(``tests/opinfo``), or a reason here why not (autograd machinery and modes, tested item by
item in ``tests/eager/test_spec.py``)."""

from __future__ import annotations

import inspect

import tinygrad_edu as tg
from tests.opinfo import OPS
from tinygrad_edu.eager import dispatch

_SPEC = "autograd machinery: tests/eager/test_spec.py checks it against SPEC-eager.md"
_SURFACE = "not an op: tests/test_torch_surface.py checks it against PyTorch"
_AUTOGRAD2 = "autograd hooks and modes: tests/eager/test_autograd_torch2.py (with torch)"
_ANATOMY = "a tensor's anatomy: tests/eager/test_anatomy.py (view chains against PyTorch)"
EXEMPT = {
    "Tensor.backward": _SPEC, "Tensor.grad": _SPEC, "Tensor.grad_fn": _SPEC,
    "Tensor.register_hook": _SPEC, "Tensor.retain_grad": _SPEC, "Tensor.zero_grad": _SPEC,
    "tg.grad": _SPEC, "tg.Function": _SPEC, "tg.no_grad": _SPEC, "tg.enable_grad": _SPEC,
    "tg.set_grad_enabled": _SPEC, "tg.is_grad_enabled": _SPEC, "tg.inference_mode": _SPEC,
    "tg.detect_anomaly": _SPEC,
    "Tensor.register_post_accumulate_grad_hook": _AUTOGRAD2, "tg.is_anomaly_enabled": _AUTOGRAD2,
    "tg.is_anomaly_check_nan_enabled": _AUTOGRAD2, "tg.set_anomaly_enabled": _AUTOGRAD2,
    "tg.is_inference_mode_enabled": _AUTOGRAD2,
    "Tensor.retain_grads": "Paddle's name for retain_grad (test_spec item 29)",
    "Tensor.clear_gradient": "Paddle's name (test_spec item 29)",
    "Tensor.stop_gradient": "Paddle's name (test_spec item 29)",
    "Tensor.astype": "numpy's to(dtype), no PyTorch name (tests/eager/test_torch_api.py)",
    "Tensor.name": "a label for drawings (viz), not an op",
    "Tensor.data": "a tensor outside autograd: tests/eager/test_pytorch_parity.py (with torch)",
    "Tensor.device": "device names: tests/eager (and the per-device engine's tests)",
    "Tensor.cuda": "needs a GPU: tests/nn and tests/assignments run it where CuPy sees one",
    "tg.Tensor": "the class itself; its methods are checked one by one",
    "tg.ShapeError": "the error class; every op's shape errors: tests/ops/test_shape_rules.py",
    "tg.softmax_cross_entropy": "not a PyTorch name: CSE599W's fused loss (tests/ops, tests/"
    "assignments); PyTorch's cross_entropy is F.cross_entropy",
    "tg.sum_to": "not a PyTorch name: the reduction that undoes broadcasting (tests/ops)",
    "tg.save": "files: tests/eager/test_torch_api.py (torch.save/torch.load's spelling)",
    "tg.load": "files: tests/eager/test_torch_api.py (torch.save/torch.load's spelling)",
    "tg.Generator": _SURFACE,
    "tg.Size": _SURFACE,
    "tg.default_generator": _SURFACE,
    "tg.device": _SURFACE,
    "tg.dtype": _SURFACE,
    "tg.finfo": _SURFACE,
    "tg.get_default_device": _SURFACE,
    "tg.get_default_dtype": _SURFACE,
    "tg.get_float32_matmul_precision": _SURFACE,
    "tg.get_rng_state": _SURFACE,
    "tg.iinfo": _SURFACE,
    "tg.initial_seed": _SURFACE,
    "tg.is_floating_point": _SURFACE,
    "tg.seed": _SURFACE,
    "tg.set_default_device": _SURFACE,
    "tg.set_default_dtype": _SURFACE,
    "tg.set_float32_matmul_precision": _SURFACE,
    "tg.set_rng_state": _SURFACE,
    "tg.autocast": "not an op: accepted, changes no dtype (tests/optim/test_amp.py)",
    "Tensor.stride": _ANATOMY, "Tensor.storage_offset": _ANATOMY,
    "Tensor.untyped_storage": _ANATOMY, "Tensor.data_ptr": _ANATOMY,
    "Tensor.element_size": _ANATOMY, "Tensor.nbytes": _ANATOMY, "Tensor.itemsize": _ANATOMY,
    "Tensor.as_strided": _ANATOMY, "Tensor.output_nr": _ANATOMY,
    "Tensor.persistable": "Paddle's name (tests/eager/test_anatomy.py)",
    "Tensor.bfloat16": "left out (numpy has no bfloat16): the error is tested in "
    "tests/ops/test_missing_names2.py",
}  # fmt: skip


def public_names() -> set:
    tensor = {f"Tensor.{n}" for n in dir(tg.Tensor) if not n.startswith("_")}
    tensor |= {f"Tensor.{n}" for n in dispatch.METHODS if n.startswith("__")}
    tensor |= {"Tensor.__getitem__", "Tensor.__setitem__", "Tensor.__iter__", "Tensor.__len__",
               "Tensor.__contains__"}
    functions = {f"tg.{n}" for n in tg.__all__ if not inspect.ismodule(getattr(tg, n))}
    nn_functions = {f"F.{n}" for n in tg.nn.functional.__all__}
    linalg = {f"tg.linalg.{n}" for n in tg.linalg.__all__}
    return tensor | functions | nn_functions | linalg


def test_every_public_name_has_a_pytorch_comparison():
    covered = {n for info in OPS.values() for n in info.names}
    missing = sorted(public_names() - covered - set(EXEMPT))
    assert not missing, (
        f"public names with no PyTorch comparison: {missing}; add a row to tests/opinfo/"
        "torch_core.py (one line: C(op, examples) or F/T/G(name, examples, ...))"
    )


def test_exemptions_are_current():
    covered = {n for info in OPS.values() for n in info.names}
    public = public_names()
    stale = sorted(n for n in EXEMPT if n not in public or n in covered)
    assert not stale, f"remove these from EXEMPT (gone, or now compared): {stale}"
    unknown = sorted(n for info in OPS.values() for n in info.names if n not in public)
    assert not unknown, f"cases name things that are not public: {unknown}"
