"""``tg.testing.assert_close``: PyTorch's comparison of tensors for tests.

Tensors (and numpy arrays, numbers, and lists, tuples and dicts of them) are close when
they have the same shape, dtype and device and every element satisfies
$|a - e| \\le \\mathrm{atol} + \\mathrm{rtol}\\,|e|$. The default tolerances depend on the
dtype, as in PyTorch (float32: rtol 1.3e-6, atol 1e-5; float64: 1e-7 both; integers and
bools: exact). A failure is an ``AssertionError`` in PyTorch's words: how many elements
differ, and the largest absolute and relative differences with their indices.

>>> import tinygrad_edu as tg
>>> tg.testing.assert_close(tg.tensor([1.0, 2.0]), tg.tensor([1.0, 2.0 + 1e-7]))
>>> tg.testing.assert_close(tg.tensor([1.0, 2.0]), tg.tensor([1.0, 2.1]))
Traceback (most recent call last):
    ...
AssertionError: Tensor-likes are not close!
<BLANKLINE>
Mismatched elements: 1 / 2 (50.0%)
Greatest absolute difference: 0.099999... at index (1,) (up to 1e-05 allowed)
Greatest relative difference: 0.047619... at index (1,) (up to 1.3e-06 allowed)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as _np  # comparisons on host copies

from . import backend

__all__ = ["assert_close"]

_TOLERANCES = {"float16": (1e-3, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}


def _is_tensor_like(x) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype")


def _host(x):
    """A numpy copy of a tensor's values (or of a number or array)."""
    data = x._data if hasattr(x, "grad_fn") else x  # a Tensor: its backend array
    return _np.asarray(backend.to_numpy(data))


def _fail(msg, default):
    raise AssertionError(default if msg is None else (msg(default) if callable(msg) else msg))


def assert_close(actual, expected, *, allow_subclasses: bool = True, rtol=None, atol=None,
                 equal_nan: bool = False, check_device: bool = True, check_dtype: bool = True,
                 check_layout: bool = True, check_stride: bool = False,
                 msg=None) -> None:  # fmt: skip
    """Assert that ``actual`` and ``expected`` are close (see the module docstring)."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")  # fmt: skip
    _compare(actual, expected, (), rtol, atol, equal_nan, check_device, check_dtype, msg)


def _compare(actual, expected, path, rtol, atol, equal_nan, check_device, check_dtype, msg):
    where = "" if not path else f" at item {''.join(f'[{p!r}]' for p in path)}"
    if isinstance(expected, Mapping) and not _is_tensor_like(expected):
        if not isinstance(actual, Mapping) or set(actual) != set(expected):
            _fail(msg, f"The keys of the mappings do not match{where}: "
                       f"{sorted(map(str, getattr(actual, 'keys', list)()))} != "
                       f"{sorted(map(str, expected))}")  # fmt: skip
        for k in expected:
            _compare(actual[k], expected[k], (*path, k), rtol, atol, equal_nan, check_device,
                     check_dtype, msg)  # fmt: skip
        return
    if isinstance(expected, Sequence) and not isinstance(expected, str):
        if not isinstance(actual, Sequence) or len(actual) != len(expected):
            _fail(msg, f"The length of the sequences mismatch{where}: "
                       f"{len(actual) if isinstance(actual, Sequence) else actual!r} != "
                       f"{len(expected)}")  # fmt: skip
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, (*path, i), rtol, atol, equal_nan, check_device, check_dtype, msg)
        return
    if _is_tensor_like(expected) != _is_tensor_like(actual):
        _fail(msg, f"Expected both inputs to be tensors or both numbers{where}, got "
                   f"{type(actual).__name__} and {type(expected).__name__}")  # fmt: skip
    a, e = _host(actual), _host(expected)
    kind = "Tensor-likes" if _is_tensor_like(expected) else "Scalars"
    if a.shape != e.shape:
        _fail(msg, f"The values for attribute 'shape' do not match{where}: "
                   f"{a.shape} != {e.shape}.")  # fmt: skip
    if check_dtype and a.dtype != e.dtype:
        _fail(msg, f"The values for attribute 'dtype' do not match{where}: "
                   f"{a.dtype} != {e.dtype}.")  # fmt: skip
    if check_device and _is_tensor_like(expected):
        da, de = str(getattr(actual, "device", "cpu")), str(getattr(expected, "device", "cpu"))
        if da != de:
            _fail(msg, f"The values for attribute 'device' do not match{where}: {da} != {de}.")
    if rtol is None:
        rtol, atol = max(_TOLERANCES.get(a.dtype.name, (0.0, 0.0)),
                         _TOLERANCES.get(e.dtype.name, (0.0, 0.0)))  # fmt: skip
    if a.dtype == _np.bool_ or e.dtype == _np.bool_:
        a, e = a.astype(_np.int64), e.astype(_np.int64)
    wide = _np.float64 if a.dtype.kind in "fc" or e.dtype.kind in "fc" else _np.int64
    a, e = a.astype(wide), e.astype(wide)
    with _np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        diff = _np.abs(a - e)
        ok = diff <= atol + rtol * _np.abs(e)
        ok |= a == e  # equal infinities
        if equal_nan:
            ok |= _np.isnan(a) & _np.isnan(e)
        if ok.all():
            return
        bad = int((~ok).sum())
        rel = diff / _np.abs(e)
    diff = _np.where(_np.isnan(diff), _np.inf, diff)
    rel = _np.where(_np.isnan(rel), _np.inf, rel)
    i_abs = _np.unravel_index(int(_np.argmax(diff)), diff.shape) if diff.ndim else ()
    i_rel = _np.unravel_index(int(_np.argmax(rel)), rel.shape) if rel.ndim else ()
    at_abs = f" at index {tuple(int(i) for i in i_abs)}" if diff.ndim else ""
    at_rel = f" at index {tuple(int(i) for i in i_rel)}" if rel.ndim else ""
    lines = [f"{kind} are not close{where}!", ""]
    if diff.ndim:
        lines.append(f"Mismatched elements: {bad} / {ok.size} ({100 * bad / ok.size:.1f}%)")
    lines.append(f"Greatest absolute difference: {diff.max()}{at_abs} (up to {atol} allowed)")
    lines.append(f"Greatest relative difference: {rel.max()}{at_rel} (up to {rtol} allowed)")
    _fail(msg, "\n".join(lines))
