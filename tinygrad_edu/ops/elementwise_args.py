"""PyTorch's argument conventions for the ops of :mod:`tinygrad_edu.ops.elementwise`: the rows
of the surface table (see :mod:`tinygrad_edu.ops.surface`) that give ``x + y``, ``x.add(y,
alpha=2)``, ``x ** 2``, ``tg.clamp(x, min=0)``, ``tg.where(c, x, y)``, ``x.masked_fill(m, v)``,
the comparisons and the logic ops their PyTorch names and arguments. The ops themselves
(forwards, shape rules, derivative rules) are in ``elementwise.py``; this module only parses
arguments and declares the rows."""

from __future__ import annotations

import math

import numpy as _np  # the promoted dtype of two int inputs (no math)

from .base import REGISTRY
from .surface import binary, cast, declare, reflected, shape_of, unary

__all__: list = []


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


def _type_as(op, apply):
    def type_as(input, other):  # x.to(other.dtype)
        return cast(apply, input, other.dtype)

    return type_as


def _where(op, apply):
    def where(condition, input=None, other=None):
        """``input`` where ``condition`` holds, else ``other``; with the condition alone,
        ``nonzero(condition, as_tuple=True)`` (eager only)."""
        if input is None and other is None:
            return _nonzero_tuple(apply, condition)
        if input is None or other is None:
            raise TypeError("where() takes the condition alone, or the condition, input and "
                            "other (a number or a tensor each)")  # fmt: skip
        if hasattr(input, "shape") or hasattr(other, "shape"):
            return apply(op, condition, input, other)
        # two Python numbers: PyTorch's dtype for them (where(c, 1, 0.5) is float32). NOTE:
        # derivative rules call the op itself with numbers and keep their float64 precision.
        pair = (input, other)
        dtype = ("float32" if any(isinstance(v, float) for v in pair) else
                 "bool" if all(isinstance(v, bool) for v in pair) else "int64")  # fmt: skip
        return cast(apply, apply(op, condition, input, other), dtype)

    return where


def _nonzero_tuple(apply, condition):
    """``nonzero(condition, as_tuple=True)``: one index tensor per axis (a 0-d one as (1,))."""
    getitem, nonzero = REGISTRY["getitem"], REGISTRY["nonzero"]
    if shape_of("where", condition) == ():
        condition = apply(REGISTRY["reshape"], condition, shape=(1,))
    out = apply(nonzero, condition)
    n = len(shape_of("where", condition))
    return tuple(apply(getitem, out, index=(slice(None), i)) for i in range(n))


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


def _where_method(op, apply):
    def where(input, condition, other):  # x.where(cond, y) == where(cond, x, y)
        return apply(op, condition, input, other)

    return where


def _masked_fill(op, apply):
    def masked_fill(input, mask, value):
        return apply(op, input, mask, value)

    return masked_fill


for _name in ("exp", "log", "log1p", "sqrt", "rsqrt", "sin", "cos", "abs", "sign", "erf",
              "tanh", "sigmoid", "relu"):  # fmt: skip
    declare(_name, unary, methods=(_name,), functions=(_name,), inplace=(_name + "_",))
declare("abs", unary, methods=("__abs__", "absolute"), functions=("absolute",))
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
declare("clone", unary, methods=("clone",), functions=("clone",))
declare("maximum", binary, methods=("maximum",), functions=("maximum",))
declare("minimum", binary, methods=("minimum",), functions=("minimum",))
declare("where", _where, functions=("where",))
declare("astype", _type_as, methods=("type_as",))
declare("where", _where_method, methods=("where",))
declare("masked_fill", _masked_fill, methods=("masked_fill",), functions=("masked_fill",),
        inplace=("masked_fill_",))  # fmt: skip
for _name, _dunder, _short in (("greater", "__gt__", "gt"), ("greater_equal", "__ge__", "ge"),
                               ("less", "__lt__", "lt"), ("less_equal", "__le__", "le")):
    declare(_name, binary, methods=(_dunder, _short, _name), functions=(_short, _name))
# `==` on a symbolic Node stays identity (nodes are dict keys): these are tensor methods only
declare("equal", binary, methods=("__eq__", "eq"), functions=("eq",), symbolic=False)
declare("not_equal", binary, methods=("__ne__", "ne", "not_equal"),
        functions=("ne", "not_equal"), symbolic=False)  # fmt: skip
for _name in ("logical_and", "logical_or", "logical_xor"):
    declare(_name, binary, methods=(_name,), functions=(_name,))
declare("logical_not", unary, methods=("logical_not",), functions=("logical_not",))
for _name, _dunder in (("bitwise_and", "and"), ("bitwise_or", "or"), ("bitwise_xor", "xor")):
    declare(_name, binary, methods=(f"__{_dunder}__", _name), functions=(_name,))
    declare(_name, reflected, methods=(f"__r{_dunder}__",))
declare("bitwise_not", unary, methods=("__invert__", "bitwise_not"), functions=("bitwise_not",))
