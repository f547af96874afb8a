"""How a tensor prints: PyTorch's layout, so that printed values read the same in both.

Four decimals, or integers with a trailing ``.`` when every float is whole, or scientific
notation when the values span more than three orders of magnitude (or pass $10^8$, or fall
under $10^{-4}$); every element padded to one width; rows wrapped at 80 columns and nested
rows indented under the first; more than 1000 elements summarised with ``...`` (three items
at each edge). This follows ``torch._tensor_str`` (its default print options).

>>> import tinygrad_edu as tg
>>> tg.tensor([[1.0, 2.5], [-3.0, 4.0]])
tensor([[ 1.0000,  2.5000],
        [-3.0000,  4.0000]])
>>> tg.tensor([1e-5, 1.0])
tensor([1.0000e-05, 1.0000e+00])
"""

from __future__ import annotations

import math

import numpy as _np

from .. import backend

__all__ = ["tensor_repr"]

_PRECISION, _LINEWIDTH, _THRESHOLD, _EDGEITEMS = 4, 80, 1000, 3


class _Formatter:
    """One width and one notation for every element (PyTorch's ``_Formatter``)."""

    def __init__(self, values: _np.ndarray):
        self.floating = values.dtype.kind in "fc"
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        flat = values.reshape(-1)
        if not self.floating:
            self.max_width = max([len(self._plain(v)) for v in flat.tolist()] or [1])
            return
        finite = flat[_np.isfinite(flat) & (flat != 0)].astype(_np.float64)
        if finite.size == 0:
            return
        magnitude = _np.abs(finite)
        lo, hi = float(magnitude.min()), float(magnitude.max())
        self.int_mode = bool(_np.all(finite == _np.ceil(finite)))
        self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or (not self.int_mode and lo < 1.0e-4)
        values_ = finite.tolist()
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{_PRECISION}e}") for v in values_)
        elif self.int_mode:
            self.max_width = max(len(f"{v:.0f}") + 1 for v in values_)
        else:
            self.max_width = max(len(f"{v:.{_PRECISION}f}") for v in values_)

    @staticmethod
    def _plain(v) -> str:
        return str(v)

    def format(self, v) -> str:
        if not self.floating:
            text = self._plain(v)
        elif self.sci_mode:
            text = f"{v:{self.max_width}.{_PRECISION}e}"
        elif self.int_mode:
            text = f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
        else:
            text = f"{v:.{_PRECISION}f}"
        return " " * (self.max_width - len(text)) + text


def _summarized(values: _np.ndarray) -> _np.ndarray:
    """The elements a summarised print shows (the edges of every dim), for the formatter."""
    if values.ndim == 0:
        return values
    if values.shape[0] > 2 * _EDGEITEMS:
        rows = list(values[:_EDGEITEMS]) + list(values[-_EDGEITEMS:])
    else:
        rows = list(values)
    if values.ndim == 1:
        return _np.asarray(rows, dtype=values.dtype)
    return _np.stack([_summarized(r) for r in rows])


def _vector(values, indent, summarize, fmt) -> str:
    per_line = max(1, (_LINEWIDTH - indent) // (fmt.max_width + 2))
    if summarize and values.shape[0] > 2 * _EDGEITEMS:
        data = ([fmt.format(v) for v in values[:_EDGEITEMS].tolist()] + [" ..."]
                + [fmt.format(v) for v in values[-_EDGEITEMS:].tolist()])  # fmt: skip
    else:
        data = [fmt.format(v) for v in values.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(values, indent, summarize, fmt) -> str:
    if values.ndim == 0:
        return fmt.format(values.item())
    if values.ndim == 1:
        return _vector(values, indent, summarize, fmt)
    n = values.shape[0]
    cut = summarize and n > 2 * _EDGEITEMS
    picked = [*range(_EDGEITEMS), None, *range(n - _EDGEITEMS, n)] if cut else range(n)
    rows = ["..." if i is None else _nested(values[i], indent + 1, summarize, fmt)
            for i in picked]  # fmt: skip
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _body(values: _np.ndarray, indent: int) -> str:
    if values.dtype == _np.float16:
        values = values.astype(_np.float32)
    summarize = values.size > _THRESHOLD
    fmt = _Formatter(_summarized(values) if summarize else values)
    return _nested(values, indent, summarize, fmt)


def tensor_repr(values: _np.ndarray, device: str | None, grad_fn_name: str | None,
                requires_grad: bool) -> str:  # fmt: skip
    """``tensor(...)`` for host ``values`` with the suffixes PyTorch prints (a device other
    than the CPU, a dtype other than float32/int64/bool, ``grad_fn`` or ``requires_grad``)."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if device is not None:
        suffixes.append(f"device='{device}'")
    float_default = backend.default_float(_np)  # float32 unless tg.set_default_dtype
    default = values.dtype in (float_default, _np.int64, _np.bool_)
    if values.size == 0:
        if values.ndim != 1:
            suffixes.append(f"size={tuple(values.shape)}")
        if values.dtype != float_default:
            suffixes.append(f"dtype={values.dtype}")
        body = "[]"
    else:
        if not default:
            suffixes.append(f"dtype={values.dtype}")
        body = _body(values, indent)
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    out = [prefix + body]
    last = len(out[0]) - out[0].rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > _LINEWIDTH:
            out.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            out.append(", " + s)
            last += len(s) + 2
    return "".join(out) + ")"
