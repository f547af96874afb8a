"""Every public op against PyTorch (float64): values and dtypes, first derivatives, second
derivatives, and agreement on what is an error. The rows are the per-op table's
(``tests/opinfo``, written in ``torch_*.py``); the coverage test (``test_coverage.py``) fails
when a public name has no row there."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
from tests.opinfo import ROWS as CASES
from tests.opinfo import call_row, rng_for

PARAMS = [(i, name) for i, case in enumerate(CASES) for name in case.names]


class Lib:
    """What the runner needs from each library (the cases themselves use the module)."""

    def __init__(self, module):
        self.module = module
        self.is_torch = module is torch

    def leaf(self, array, requires_grad):
        return self.module.tensor(array, requires_grad=requires_grad)

    def grad(self, out, inputs, create_graph):
        fn = torch.autograd.grad if self.is_torch else tg.grad
        return fn(out, inputs, allow_unused=True, create_graph=create_graph)

    def convert(self, value):
        """numpy arrays in the arguments become this library's tensors (indices, masks)."""
        if isinstance(value, np.ndarray):
            return self.module.tensor(value)
        if isinstance(value, tuple):
            return tuple(self.convert(v) for v in value)
        return value


TG, TORCH = Lib(tg), Lib(torch)


def _layout(leaf, spec):
    if spec.layout == "T":  # stored with dims reversed; permuted back: non-contiguous
        return leaf.permute(*reversed(range(len(spec.shape))))
    return leaf


def _tensors(out):
    """The tensors in an output (a tensor, or tuples of them), in order."""
    if isinstance(out, tuple | list):
        return [t for o in out for t in _tensors(o)]
    return [out] if hasattr(out, "requires_grad") and hasattr(out, "shape") else []


def _plain(out):
    """An output as plain data to compare: arrays with dtype names, Python values."""
    if hasattr(out, "requires_grad") and hasattr(out, "shape"):
        data = out.detach().numpy() if hasattr(out, "detach") else out.numpy()
        return ("tensor", str(out.dtype).removeprefix("torch."), np.array(data, copy=True))
    if isinstance(out, tuple | list):
        return tuple(_plain(o) for o in out)
    if type(out).__name__ == "Size":
        return tuple(out)
    if isinstance(out, np.ndarray):
        return ("array", str(out.dtype), np.array(out, copy=True))
    if hasattr(out, "dtype") is False and type(out).__module__.startswith("torch"):
        return str(out).removeprefix("torch.")  # a torch dtype
    if isinstance(out, np.dtype) or (isinstance(out, type) and issubclass(out, np.generic)):
        return str(np.dtype(out))
    return out


def run(lib: Lib, case, name, example, arrays, seeds):
    specs = example.specs
    leaves = [lib.leaf(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    inputs = [_layout(leaf, spec) for leaf, spec in zip(leaves, specs)]
    extra = {k: lib.convert(v) for k, v in example.extra.items() if k != "args"}
    args = lib.convert(tuple(example.extra.get("args", ())))
    out = call_row(case, lib.module, name, inputs, args, extra)
    result = {"out": _plain(out)}
    floats = [o for o in _tensors(out) if o.requires_grad]
    wanted = [leaf for leaf in leaves if leaf.requires_grad]
    if not floats or not wanted:
        return result
    rng = np.random.default_rng(seeds)
    projection = sum((o * lib.module.tensor(rng.standard_normal(tuple(o.shape)))).sum()
                     for o in floats)  # fmt: skip
    grads = lib.grad(projection, wanted, create_graph=case.second)
    result["grad"] = [None if g is None else g.detach().numpy().copy() for g in grads]
    inner = [g for g in grads if g is not None and g.requires_grad]
    if case.second and inner:
        w = [lib.module.tensor(rng.standard_normal(tuple(g.shape))) for g in inner]
        total = sum((g * wi).sum() for g, wi in zip(inner, w))
        try:
            second = lib.grad(total, wanted, create_graph=False)
            result["grad2"] = [None if g is None else g.detach().numpy().copy() for g in second]
        except RuntimeError as e:
            if not lib.is_torch:
                raise
            result["grad2"] = ("torch has no second derivative here", str(e)[:80])
    return result


def _same(ours, theirs, where, rtol, atol):
    if isinstance(theirs, tuple) and theirs and theirs[0] in ("tensor", "array"):
        assert isinstance(ours, tuple) and ours[0] == theirs[0], f"{where}: {ours!r} vs {theirs!r}"
        assert ours[1] == theirs[1], f"{where}: dtype {ours[1]} here, {theirs[1]} in PyTorch"
        a, b = ours[2], theirs[2]
        assert a.shape == b.shape, f"{where}: shape {a.shape} here, {b.shape} in PyTorch"
        if a.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=where)
        else:
            np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(theirs, tuple | list) and not isinstance(theirs, str):
        assert isinstance(ours, tuple | list) and len(ours) == len(theirs), (
            f"{where}: {ours!r} vs {theirs!r}")
        for i, (o, t) in enumerate(zip(ours, theirs)):
            _same(o, t, f"{where}[{i}]", rtol, atol)
    elif isinstance(theirs, float) and math.isnan(theirs):
        assert isinstance(ours, float) and math.isnan(ours), f"{where}: {ours!r} vs nan"
    else:
        assert type(ours) is type(theirs) or isinstance(theirs, bool | int | float) and isinstance(
            ours, bool | int | float), f"{where}: {type(ours)} vs {type(theirs)}"  # fmt: skip
        assert ours == theirs, f"{where}: {ours!r} here, {theirs!r} in PyTorch"


def _grads_same(ours, theirs, arrays, where, rtol, atol):
    for i, (g, t) in enumerate(zip(ours, theirs)):
        g = np.zeros_like(t) if g is None and t is not None else g
        t = np.zeros_like(g) if t is None and g is not None else t
        if g is None:
            continue
        assert g.shape == t.shape, f"{where} {i}: shape {g.shape} vs {t.shape}"
        np.testing.assert_allclose(g, t, rtol=max(rtol, 1e-9), atol=max(atol, 1e-10),
                                   equal_nan=True, err_msg=f"{where} {i}")  # fmt: skip


def check_row(case, index: int, name: str) -> int:
    """Run ``name`` of a row on each of its examples in both libraries and compare; returns how
    many examples were compared. An example PyTorch refuses passes only where the row declares
    that error (``raises=``) and this library refuses it too."""
    compared = 0
    for j, example in enumerate(case.examples):
        rng = rng_for(index, j)
        arrays = [spec.array(rng) for spec in example.specs]
        # a leaf stored transposed (the layout is permuted back before the op)
        arrays = [np.ascontiguousarray(a.transpose()) if s.layout == "T" else a
                  for a, s in zip(arrays, example.specs)]  # fmt: skip
        where = f"{name} on example {j} ({example})"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                theirs = run(TORCH, case, name, example, arrays, seeds=(index, j))
            except Exception as e:  # PyTorch refuses this input: so must we
                assert case.raises and isinstance(e, case.raises), (
                    f"{where}: PyTorch raises {type(e).__name__}: {str(e)[:200]}; a row that "
                    f"expects an error declares it (raises={type(e).__name__}), and a row that "
                    "does not has a wrong call or input")
                with pytest.raises(Exception) as ours_error:
                    run(TG, case, name, example, arrays, seeds=(index, j))
                assert not isinstance(ours_error.value, AssertionError), ours_error.value
                continue
            ours = run(TG, case, name, example, arrays, seeds=(index, j))
        _same(ours["out"], theirs["out"], where, case.rtol, case.atol)
        assert ("grad" in ours) == ("grad" in theirs), f"{where}: gradients exist in one only"
        if "grad" in theirs:
            _grads_same(ours["grad"], theirs["grad"], arrays, f"{where}: gradient", case.rtol,
                        case.atol)  # fmt: skip
        if isinstance(theirs.get("grad2"), list):
            # no second derivative here means a first derivative that is constant: zeros
            mine = ours.get("grad2", [None] * len(theirs["grad2"]))
            _grads_same(mine, theirs["grad2"], arrays, f"{where}: 2nd derivative", case.rtol,
                        case.atol)  # fmt: skip
        compared += 1
    return compared


@pytest.mark.parametrize(("index", "name"), PARAMS, ids=[f"{n}-{i}" for i, n in PARAMS])
def test_matches_pytorch(index, name):
    case = CASES[index]
    compared = check_row(case, index, name)
    if not case.raises:  # a row that expects no error compares every example
        assert compared == len(case.examples), (
            f"{name}: row {index} compared {compared} of {len(case.examples)} examples")


def _row(call, *examples, **options):
    from tests.opinfo.torch_core import Case

    return Case(("tg.zeros",), call, tuple(examples), **options)


def test_a_wrong_call_fails_the_row():
    """A call that is wrong in both libraries (a TypeError in each) is no agreement."""
    from tests.opinfo.torch_core import E

    wrong = _row(lambda L, name, size: L.zeros(size), E(args=((2,), 1.0)))  # one too many
    with pytest.raises(AssertionError, match="PyTorch raises TypeError"):
        check_row(wrong, 0, "tg.zeros")


def test_args_reach_a_call_that_takes_them_as_one():
    from tests.opinfo.torch_core import E

    row = _row(lambda L, name, args: L.zeros(*args), E(args=(2, 3)), E(args=((4,),)))
    assert check_row(row, 0, "tg.zeros") == 2


def test_a_declared_error_passes_only_when_both_refuse():
    from tests.opinfo.torch_core import E

    row = _row(lambda L, name, args: L.zeros(*args), E(args=(2,)), E(args=(-1,)),
               raises=RuntimeError)  # fmt: skip
    assert check_row(row, 0, "tg.zeros") == 1
    other = _row(lambda L, name, args: L.zeros(*args), E(args=(-1,)), raises=TypeError)
    with pytest.raises(AssertionError, match="declares it"):
        check_row(other, 0, "tg.zeros")
