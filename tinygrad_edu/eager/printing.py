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

__all__ = ["tensor_repr", "set_printoptions", "PRINT_OPTS"]


class _PrintOptions:
    """The print options (PyTorch's ``torch._tensor_str.PRINT_OPTS``): digits after the
    point, how many elements print in full, how many at each edge of a summary, the line
    width, and the notation (None: chosen from the values; True/False: always/never
    scientific)."""

    precision, threshold, edgeitems, linewidth, sci_mode = 4, 1000, 3, 80, None


PRINT_OPTS = _PrintOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
             "full": (4, math.inf, 3, 80)}  # fmt: skip


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None) -> None:  # fmt: skip
    """PyTorch's ``torch.set_printoptions``: how tensors print from now on.

    ``profile`` (``"default"``, ``"short"``: two digits and two edge items, ``"full"``: no
    summary) sets the first four options, then each option given overrides it;
    ``sci_mode`` is set by every call (None: chosen from the values), as in PyTorch.
    ``tg.set_printoptions(profile="default")`` restores the defaults.

    >>> import tinygrad_edu as tg
    >>> tg.set_printoptions(precision=2)
    >>> tg.tensor([1.12345])
    tensor([1.12])
    >>> tg.set_printoptions(profile="default")
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}, "
                             f"got {profile!r}")  # fmt: skip
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]  # fmt: skip
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):  # fmt: skip
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"set_printoptions: {name} must be a number, got {value!r}")
            setattr(PRINT_OPTS, name, value)
    if sci_mode is not None and not isinstance(sci_mode, bool):
        raise TypeError(f"set_printoptions: sci_mode must be None, True or False, got "
                        f"{sci_mode!r}")  # fmt: skip
    PRINT_OPTS.sci_mode = sci_mode


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
        if PRINT_OPTS.sci_mode is not None:
            self.sci_mode = PRINT_OPTS.sci_mode
        values_ = finite.tolist()
        digits = PRINT_OPTS.precision
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{digits}e}") for v in values_)
        elif self.int_mode:
            self.max_width = max(len(f"{v:.0f}") + 1 for v in values_)
        else:
            self.max_width = max(len(f"{v:.{digits}f}") for v in values_)

    @staticmethod
    def _plain(v) -> str:
        return str(v)

    def format(self, v) -> str:
        digits = PRINT_OPTS.precision
        if not self.floating:
            text = self._plain(v)
        elif self.sci_mode:
            text = f"{v:{self.max_width}.{digits}e}"
        elif self.int_mode:
            text = f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
        else:
            text = f"{v:.{digits}f}"
        return " " * (self.max_width - len(text)) + text


def _summarized(values: _np.ndarray) -> _np.ndarray:
    """The elements a summarised print shows (the edges of every dim), for the formatter."""
    edge = PRINT_OPTS.edgeitems
    if values.ndim == 0:
        return values
    if values.shape[0] > 2 * edge:
        rows = list(values[:edge]) + list(values[-edge:])
    else:
        rows = list(values)
    if values.ndim == 1:
        return _np.asarray(rows, dtype=values.dtype)
    return _np.stack([_summarized(r) for r in rows])


def _vector(values, indent, summarize, fmt) -> str:
    width, edge = PRINT_OPTS.linewidth, PRINT_OPTS.edgeitems
    per_line = max(1, (width - indent) // (fmt.max_width + 2))
    if summarize and values.shape[0] > 2 * edge:
        data = ([fmt.format(v) for v in values[:edge].tolist()] + [" ..."]
                + [fmt.format(v) for v in values[-edge:].tolist()])  # fmt: skip
    else:
        data = [fmt.format(v) for v in values.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(values, indent, summarize, fmt) -> str:
    if values.ndim == 0:
        return fmt.format(values.item())
    if values.ndim == 1:
        return _vector(values, indent, summarize, fmt)
    n, edge = values.shape[0], PRINT_OPTS.edgeitems
    cut = summarize and n > 2 * edge
    picked = [*range(edge), None, *range(n - edge, n)] if cut else range(n)
    rows = ["..." if i is None else _nested(values[i], indent + 1, summarize, fmt)
            for i in picked]  # fmt: skip
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _body(values: _np.ndarray, indent: int) -> str:
    if values.dtype == _np.float16:
        values = values.astype(_np.float32)
    summarize = values.size > PRINT_OPTS.threshold
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
    width = PRINT_OPTS.linewidth
    out = [prefix + body]
    last = len(out[0]) - out[0].rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > width:
            out.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            out.append(", " + s)
            last += len(s) + 2
    return "".join(out) + ")"
