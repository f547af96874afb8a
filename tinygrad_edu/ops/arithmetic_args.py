"""PyTorch's argument conventions for the ops of :mod:`tinygrad_edu.ops.arithmetic`: the rows
of the surface table (see :mod:`tinygrad_edu.ops.surface`) that give ``x + y``, ``x.add(y,
alpha=2)``, ``x ** 2``, ``x % y``, ``tg.clamp(x, min=0)``, ``tg.isclose(x, y)`` ... their
PyTorch names and arguments, and the composites built on those ops (``lerp``,
``clamp_min``/``clamp_max``, ``allclose``, ``equal``, ``addcmul``/``addcdiv``, ``hypot``,
``logaddexp``, ``xlogy``). The ops themselves (forwards, shape rules, derivative rules) are in
``arithmetic.py``; this module parses arguments and declares the rows."""

from __future__ import annotations

import math

import numpy as _np  # the promoted dtype of two int inputs (no math)

from .base import REGISTRY
from .surface import binary, cast, declare, reflected, unary


def _alpha(op, apply):
    """``add``/``sub`` with PyTorch's ``alpha``: ``x.add(y, alpha=2)`` is ``x + 2 * y``."""

    def fn(input, other, *, alpha=1):
        if alpha != 1:
            other = other * alpha
        return apply(op, input, other)

    return fn


def _pow(op, apply):
    """``pow(input, exponent)``: a number exponent (``pow``) or a tensor one (``pow_tensor``)."""
    tensor_exponent = REGISTRY["pow_tensor"]

    def pow(input, exponent):
        if hasattr(exponent, "shape"):
            return apply(tensor_exponent, input, exponent)
        return apply(op, input, exponent=exponent)

    return pow


def _rpow(op, apply):
    def rpow(input, base):  # base ** input
        return apply(op, base, input)

    return rpow


def _square(op, apply):
    def square(input):
        return apply(op, input, exponent=2)

    return square


def _clamp(op, apply):
    """``clamp(input, min=None, max=None)``: number bounds (``clamp``), or tensor bounds
    (``clamp_tensor``; a missing bound is the dtype's extreme)."""
    tensor_bounds = REGISTRY["clamp_tensor"]

    def clamp(input, min=None, max=None):
        if min is None and max is None:
            raise TypeError("clamp: give at least one of min and max")
        if hasattr(min, "shape") or hasattr(max, "shape"):
            lo, hi = _extremes(input)
            return apply(tensor_bounds, input, lo if min is None else min,
                         hi if max is None else max)  # fmt: skip
        return apply(op, input, min=min, max=max)

    return clamp


def _extremes(x):
    kind = str(getattr(x, "dtype", "float"))
    if "int" in kind:
        return -(2**63), 2**63 - 1
    return -math.inf, math.inf


def _div(op, apply):
    def div(input, other, *, rounding_mode=None):
        """``input / other``; ``rounding_mode="trunc"`` rounds the quotient toward zero,
        ``"floor"`` down (``//``), as PyTorch's. Rounded, the gradient is zero (PyTorch's), and
        two int inputs give an int result."""
        if rounding_mode is None:
            return apply(op, input, other)
        if rounding_mode not in ("trunc", "floor"):
            raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or "
                             f"'floor' but found '{rounding_mode}'")  # fmt: skip
        q = apply(op, input, other)
        in_place = q is input  # div_: each op below then writes into the input too
        rounded = apply(REGISTRY[rounding_mode], q)
        if rounding_mode == "floor" and not in_place:
            # the exact floor of the quotient, PyTorch's (floor(a/b) can be one off after
            # rounding a/b), its gradient the zero one of floor
            exact = apply(REGISTRY["floor_divide"], input, other)
            rounded = apply(REGISTRY["where"], apply(REGISTRY["equal"], rounded, exact),
                            rounded, exact)  # fmt: skip
        kinds = [str(getattr(v, "dtype", "float" if isinstance(v, float) else "int64"))
                 for v in (input, other)]  # fmt: skip
        if not in_place and all(k.startswith(("int", "uint", "bool")) for k in kinds):
            dtype = "int64" if "int64" in kinds else _int_result(kinds)
            return cast(apply, rounded, dtype)
        return rounded

    return div


def _int_result(kinds):
    """The promoted int dtype of two int inputs (numpy's rule; bool as uint8)."""
    return str(_np.result_type(*[k if k != "bool" else "uint8" for k in kinds]))


# -- composites: clamp_min/clamp_max, lerp, isclose, allclose, equal ----------------------------
def _clamp_bound(side):
    """``clamp_min(input, min)`` / ``clamp_max(input, max)``: ``clamp`` with one bound."""

    def template(op, apply):
        op = REGISTRY["clamp"]

        def bound(input, value):
            if hasattr(value, "shape"):

                lo, hi = _extremes(input)
                pair = (value, hi) if side == "min" else (lo, value)
                return apply(REGISTRY["clamp_tensor"], input, *pair)
            return apply(op, input, **{side: value})

        if side == "min":
            def clamp_min(input, min):
                return bound(input, min)

            return clamp_min

        def clamp_max(input, max):
            return bound(input, max)

        return clamp_max

    return template


def _lerp(op, apply):
    r"""``lerp(input, end, weight)``: $\mathrm{input} + w\,(\mathrm{end} - \mathrm{input})$, a
    composite of ``sub``, ``mul`` and ``add`` (their gradients are lerp's)."""
    sub, mul, add = REGISTRY["sub"], REGISTRY["mul"], REGISTRY["add"]

    def lerp(input, end, weight):
        return apply(add, input, apply(mul, weight, apply(sub, end, input)))

    return lerp


def _isclose(op, apply):
    def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return apply(op, input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)

    return isclose


def _allclose(op, apply):
    """``allclose(input, other, rtol, atol, equal_nan)``: a Python bool, whether every pair is
    close (``isclose`` then ``all``)."""

    def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        close = apply(op, input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)
        return bool(apply(REGISTRY["all"], close))

    return allclose


def _equal(op, apply):
    """``equal(input, other)``: a Python bool, True when the shapes and every element are
    equal."""
    op = REGISTRY["equal"]

    def equal(input, other):
        if tuple(input.shape) != tuple(other.shape):
            return False
        return bool(apply(REGISTRY["all"], apply(op, input, other)))

    return equal


# -- composites of arithmetic: addcmul, addcdiv, hypot, logaddexp, xlogy ----------------------
def _addc(kind):
    """``addcmul``/``addcdiv(input, tensor1, tensor2, *, value=1)``: $\\mathrm{input} +
    v\\,t_1 t_2$ (or $t_1 / t_2$), from ``mul``/``div`` and ``add``."""

    def template(op, apply):
        add, mul, combine = REGISTRY["add"], REGISTRY["mul"], REGISTRY[kind]

        def addc(input, tensor1, tensor2, *, value=1):
            term = apply(combine, tensor1, tensor2)
            if value != 1:
                term = apply(mul, term, value)
            return apply(add, input, term)

        return addc

    return template


def _hypot(op, apply):
    r"""``hypot(input, other)``: $\sqrt{a^2 + b^2}$ (``mul``, ``add``, ``sqrt``)."""
    mul, add, sqrt = REGISTRY["mul"], REGISTRY["add"], REGISTRY["sqrt"]

    def hypot(input, other):
        return apply(sqrt, apply(add, apply(mul, input, input), apply(mul, other, other)))

    return hypot


def _logaddexp(op, apply):
    r"""``logaddexp(input, other)``: $\log(e^a + e^b) = \max(a, b) + \log(1 + e^{-|a - b|})$,
    stable (a ``logsumexp`` of the two, stacked)."""
    stack, lse = REGISTRY["stack"], REGISTRY["logsumexp"]

    def logaddexp(input, other):
        from .base import broadcast_shapes as _b  # noqa: PLC0415

        shape = _b("logaddexp", getattr(input, "shape", ()), getattr(other, "shape", ()))
        a, b = (x if getattr(x, "shape", None) == shape else
                apply(REGISTRY["broadcast_to"], x, shape=shape) for x in (input, other))
        return apply(lse, apply(stack, a, b, dim=0), axis=0, keepdims=False)

    return logaddexp


def _xlogy(op, apply):
    r"""``xlogy(input, other)``: $x \log y$, 0 where $x = 0$ (unless $y$ is nan)."""
    R = REGISTRY

    def xlogy(input, other):
        zero = apply(R["equal"], input, 0)
        safe = apply(R["where"], zero, 1.0, other)
        out = apply(R["mul"], input, apply(R["log"], safe))
        if hasattr(other, "shape"):
            nan = apply(R["isnan"], other)
            return apply(R["where"], nan, other, apply(R["where"], zero, 0.0, out))
        return apply(R["where"], zero, 0.0, out)

    return xlogy


declare("neg", unary, methods=("__neg__", "neg", "negative"), functions=("neg", "negative"),
        inplace=("neg_",))  # fmt: skip
for _name, _dunder, _names in (
    ("add", "add", ("add",)),
    ("sub", "sub", ("sub", "subtract")),
    ("mul", "mul", ("mul", "multiply")),
    ("div", "truediv", ("div", "divide", "true_divide")),
):
    _named = _alpha if _name in ("add", "sub") else _div if _name == "div" else binary
    declare(_name, _named, methods=_names, functions=_names, inplace=(_names[0] + "_",))
    declare(_name, binary, methods=(f"__{_dunder}__",), inplace=(f"__i{_dunder}__",))
    declare(_name, reflected, methods=(f"__r{_dunder}__",))
declare("pow", _pow, methods=("__pow__", "pow"), functions=("pow",),
        inplace=("pow_", "__ipow__"))  # fmt: skip
declare("pow_tensor", _rpow, methods=("__rpow__",))
declare("pow", _square, methods=("square",), functions=("square",), inplace=("square_",))
declare("clamp", _clamp, methods=("clamp", "clip"), functions=("clamp", "clip"),
        inplace=("clamp_", "clip_"))  # fmt: skip
declare("maximum", binary, methods=("maximum",), functions=("maximum",))
declare("minimum", binary, methods=("minimum",), functions=("minimum",))
declare("fmod", binary, methods=("fmod",), functions=("fmod",), inplace=("fmod_",))
declare("remainder", binary, methods=("remainder",), functions=("remainder",),
        inplace=("remainder_",))  # fmt: skip
declare("remainder", binary, methods=("__mod__",), inplace=("__imod__",))
declare("remainder", reflected, methods=("__rmod__",))
declare("floor_divide", binary, methods=("floor_divide", "__floordiv__"),
        functions=("floor_divide",), inplace=("floor_divide_", "__ifloordiv__"))  # fmt: skip
declare("floor_divide", reflected, methods=("__rfloordiv__",))
declare("atan2", binary, methods=("atan2", "arctan2"), functions=("atan2", "arctan2"),
        inplace=("atan2_",))  # fmt: skip
declare(None, _clamp_bound("min"), methods=("clamp_min",), functions=("clamp_min",),
        inplace=("clamp_min_",))  # fmt: skip
declare(None, _clamp_bound("max"), methods=("clamp_max",), functions=("clamp_max",),
        inplace=("clamp_max_",))  # fmt: skip
declare(None, _lerp, methods=("lerp",), functions=("lerp",))
declare("isclose", _isclose, methods=("isclose",), functions=("isclose",))
declare("isclose", _allclose, methods=("allclose",), functions=("allclose",), symbolic=False)
declare(None, _equal, methods=("equal",), functions=("equal",), symbolic=False)
declare(None, _addc("mul"), methods=("addcmul",), functions=("addcmul",))
declare(None, _addc("div"), methods=("addcdiv",), functions=("addcdiv",))
declare(None, _hypot, methods=("hypot",), functions=("hypot",))
declare(None, _logaddexp, methods=("logaddexp",), functions=("logaddexp",))
declare(None, _xlogy, methods=("xlogy",), functions=("xlogy",))
