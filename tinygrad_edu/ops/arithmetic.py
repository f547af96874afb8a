r"""Arithmetic: the elementwise ops of two inputs, ``add``, ``sub``, ``mul``, ``div``, ``pow``
(and ``neg``), ``maximum``/``minimum``, the clamps, the division remainders (``fmod``,
``remainder`` / ``%``, ``floor_divide`` / ``//``), ``atan2`` and ``isclose``. Their PyTorch
names and arguments are the rows of :mod:`~tinygrad_edu.ops.arithmetic_args`; the functions of
one input are in :mod:`~tinygrad_edu.ops.unary`, the comparisons, logic, ``where`` and
``masked_fill`` in :mod:`~tinygrad_edu.ops.logic`.

Binary ops broadcast like numpy and give PyTorch's result dtype
(:mod:`~tinygrad_edu.ops.promotion`); their derivative rules sum each gradient back to its
input's shape with ``F.sum_to`` (the reduction that undoes broadcasting). ``floor_divide`` has
no derivative in PyTorch (its backward is an error there), so here it is not differentiable.

>>> import tinygrad_edu as tg
>>> x = tg.tensor([-1.5, 2.25, 7.0])
>>> x % 2, x // 2
(tensor([0.5000, 0.2500, 1.0000]), tensor([-1.,  1.,  3.]))
"""

from __future__ import annotations

import math

from .base import Op, quiet, register
from .promotion import category, floating, torch_result

__all__ = [
    "Add", "Sub", "Mul", "Div", "Neg", "Pow", "PowTensor", "Maximum", "Minimum", "Clamp",
    "ClampTensor", "Fmod", "Remainder", "FloorDivide", "Atan2", "IsClose",
]  # fmt: skip


def _to_shapes(F, grads, shapes):
    """Sum each gradient back to its input's shape (None stays None)."""
    out = []
    for g, s in zip(grads, shapes):
        if g is not None and g.shape != s:
            g = F.sum_to(g, s)
        out.append(g)
    return out


@register
class Add(Op):
    r"""$a + b$. $\partial L/\partial a = g$, $\partial L/\partial b = g$ (summed to shape)."""

    name, arity = "add", 2
    onnx = "Add"

    def forward(self, xp, a, b):
        return torch_result(xp, a + b, a, b)

    def vjp(self, F, g, inputs, out, shapes, needs):
        # BEGIN SOLUTION A1.3
        return _to_shapes(F, (g if needs[0] else None, g if needs[1] else None), shapes)
        # END SOLUTION


@register
class Sub(Op):
    r"""$a - b$. $\partial L/\partial a = g$, $\partial L/\partial b = -g$."""

    name, arity = "sub", 2
    onnx = "Sub"

    def forward(self, xp, a, b):
        return torch_result(xp, a - b, a, b)

    def vjp(self, F, g, inputs, out, shapes, needs):
        return _to_shapes(F, (g if needs[0] else None, -g if needs[1] else None), shapes)


@register
class Mul(Op):
    r"""$a b$. $\partial L/\partial a = g\,b$, $\partial L/\partial b = g\,a$.

    >>> import numpy as np
    >>> from tinygrad_edu.ops import RAW, get_op
    >>> get_op("mul").vjp(RAW, np.ones(2), (np.array([1., 2.]), np.array([3., 4.])), None,
    ...                   ((2,), (2,)), (True, True))
    [array([3., 4.]), array([1., 2.])]
    """

    name, arity, saves = "mul", 2, (0, 1)
    onnx = "Mul"
    saves_for = {0: (1,), 1: (0,)}  # a is read only for b's gradient, b only for a's

    def forward(self, xp, a, b):
        return torch_result(xp, a * b, a, b)

    def vjp(self, F, g, inputs, out, shapes, needs):
        # BEGIN SOLUTION A1.3
        a, b = inputs
        return _to_shapes(F, (g * b if needs[0] else None, g * a if needs[1] else None), shapes)
        # END SOLUTION


@register
class Div(Op):
    r"""$a / b$ (true division: integers give floats). $\partial L/\partial a = g/b$,
    $\partial L/\partial b = -g\,a/b^2$."""

    name, arity, saves = "div", 2, (0, 1)
    onnx = "Div"
    saves_for = {0: (1,)}  # a is read only for b's gradient; b for both

    @quiet()  # x / 0 is inf or nan, silently (as in PyTorch)
    def forward(self, xp, a, b):
        return torch_result(xp, a / b, a, b, floating=True)

    def vjp(self, F, g, inputs, out, shapes, needs):
        a, b = inputs
        ga = g / b if needs[0] else None
        gb = -g * a / (b * b) if needs[1] else None
        return _to_shapes(F, (ga, gb), shapes)


@register
class Neg(Op):
    r"""$-x$. $\partial L/\partial x = -g$."""

    name = "neg"
    onnx = "Neg"

    def forward(self, xp, x):
        return -x

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (-g,)


def _no_negative_int_power(xp, base, exponent):
    """PyTorch's error for an integer raised to a negative integer (numpy's is a ValueError
    without the op's name)."""
    if hasattr(base, "dtype") and _category(base) == 1 and _category(exponent) == 1 and (
            exponent < 0 if isinstance(exponent, int) else bool(xp.any(exponent < 0))):
        raise RuntimeError(
            "pow: Integers to negative integer powers are not allowed. Convert the base to a "
            "floating dtype first, e.g. x.float() ** -1"
        )


def _int_power(xp, a, b):
    """PyTorch's integer ``a ** b`` for a tensor exponent: a negative exponent gives what
    integer division would (1 for a base of 1, +-1 for -1, else 0) where numpy raises."""
    neg = b < 0
    if not bool(xp.any(neg)):
        return a**b
    mag = a ** xp.where(neg, -b, b)
    odd = xp.where(b % 2 == 0, xp.ones_like(mag), -xp.ones_like(mag))
    small = xp.where(a == 1, xp.ones_like(mag), xp.where(a == -1, odd, xp.zeros_like(mag)))
    return xp.where(neg, small, mag)


def _category(x):
    if isinstance(x, bool):
        return 0
    if isinstance(x, int):
        return 1
    dt = getattr(x, "dtype", None)
    return category(dt) if dt is not None else 2


@register
class Pow(Op):
    r"""$x^c$ for a constant exponent $c$. $\partial L/\partial x = g\,c\,x^{c-1}$, and 0 for
    $c = 0$ (also at $x = 0$, where $0 \cdot 0^{-1}$ would be nan)."""

    name, saves = "pow", (0,)

    @quiet()
    def forward(self, xp, x, exponent):
        # x ** 3 as two products, as PyTorch's CPU kernel computes it (the same bits): numpy
        # has fast paths for 2, 0.5 and -1 but calls powf for 3, 400 times slower (the cube
        # in GELU's tanh form took most of a small transformer's step)
        if exponent == 3 and getattr(getattr(x, "dtype", None), "char", "?") in "fd":
            return x * x * x
        _no_negative_int_power(xp, x, exponent)
        return torch_result(xp, x**exponent, x, exponent)

    def vjp(self, F, g, inputs, out, shapes, needs, exponent):
        (x,) = inputs
        if exponent == 0:
            return (F.zeros_like(g),)
        if exponent == 2:
            return (g * x * 2,)
        return (g * exponent * x ** (exponent - 1),)

    def onnx(self, ex, node, args):
        e = ex.const(node.attrs["exponent"], "exponent", ex.dtype(node) or "float32")
        return ex.one("Pow", [args[0], e], "pow")


@register
class PowTensor(Op):
    r"""$a^b$ with a tensor exponent (or a number base: ``2 ** x``).

    $\partial L/\partial a = g\,b\,a^{b-1}$ (0 where $b = 0$) and
    $\partial L/\partial b = g\,a^b \ln a$ (0 where $a = 0$ and $b \ge 0$; nan for $a < 0$,
    as in PyTorch).
    """

    name, arity, saves, saves_output = "pow_tensor", 2, (0, 1), True
    onnx = "Pow"
    torch_names = ("PowBackward1", "PowBackward2")

    def variant(self, inputs, attrs):
        return 0 if hasattr(inputs[0], "shape") else 1  # PowBackward2: a number base

    @quiet()
    def forward(self, xp, a, b):
        if _category(a) == 1 and _category(b) == 1:
            return torch_result(xp, _int_power(xp, a, b), a, b)
        return torch_result(xp, a**b, a, b)

    def vjp(self, F, g, inputs, out, shapes, needs):
        a, b = inputs
        ga = gb = None
        if needs[0]:
            ga = F.where(F.equal(b, 0), 0.0, g * b * a ** (b - 1))
        if needs[1]:
            flat = F.logical_and(F.equal(a, 0), F.greater_equal(b, 0))
            gb = F.where(flat, 0.0, g * out * F.log(F.where(flat, 1.0, a)))
        return _to_shapes(F, (ga, gb), shapes)


class _Extremum(Op):
    """Elementwise max or min: the gradient goes to the winner; ties split it in half."""

    arity, saves = 2, (0, 1)
    _wins = ""

    def vjp(self, F, g, inputs, out, shapes, needs):
        a, b = inputs
        wins = getattr(F, self._wins)
        tie = F.where(F.equal(a, b), g * 0.5, F.zeros_like(g))
        ga = F.where(wins(a, b), g, tie) if needs[0] else None
        gb = F.where(wins(b, a), g, tie) if needs[1] else None
        return _to_shapes(F, (ga, gb), shapes)


@register
class Maximum(_Extremum):
    r"""Elementwise $\max(a, b)$. The gradient goes to the larger input; ties split it."""

    name, _wins = "maximum", "greater"
    onnx = "Max"

    def forward(self, xp, a, b):
        return torch_result(xp, xp.maximum(*_arrays(xp, a, b)), a, b)


@register
class Minimum(_Extremum):
    r"""Elementwise $\min(a, b)$. The gradient goes to the smaller input; ties split it."""

    name, _wins = "minimum", "less"
    onnx = "Min"

    def forward(self, xp, a, b):
        return torch_result(xp, xp.minimum(*_arrays(xp, a, b)), a, b)


def _arrays(xp, a, b):
    """Python numbers as arrays of the other operand's namespace (some functions need it)."""
    if not hasattr(a, "shape") and not hasattr(b, "shape"):  # where(cond, 1, 0): see _where
        return xp.asarray(a), xp.asarray(b)
    if not hasattr(a, "shape"):
        a = xp.asarray(a, dtype=b.dtype if isinstance(a, int) else None)
    if not hasattr(b, "shape"):
        b = xp.asarray(b, dtype=a.dtype if isinstance(b, int) else None)
    return a, b


@register
class Clamp(Op):
    r"""``clamp(x, min, max)`` with number bounds (either may be None).

    $\partial L/\partial x = g$ where $\min \le x \le \max$, else 0.
    """

    name, saves, torch_name = "clamp", (0,), "ClampBackward1"

    def forward(self, xp, x, min=None, max=None):
        out = x
        if min is not None:
            out = torch_result(xp, xp.maximum(*_arrays(xp, out, min)), out, min)
        if max is not None:
            out = torch_result(xp, xp.minimum(*_arrays(xp, out, max)), out, max)
        return out

    def vjp(self, F, g, inputs, out, shapes, needs, min=None, max=None):
        x = inputs[0]
        inside = None
        for bound, test in ((min, F.greater_equal), (max, F.less_equal)):
            if bound is not None:
                ok = test(x, bound)
                inside = ok if inside is None else F.logical_and(inside, ok)
        return (g if inside is None else F.where(inside, g, 0.0),)

    def onnx(self, ex, node, args):
        ins = [args[0]]
        for bound in ("min", "max"):
            value = node.attrs.get(bound)
            ins.append("" if value is None else ex.like(value, node, bound))
        return ex.one("Clip", ins, "clamp")


@register
class ClampTensor(Op):
    r"""``clamp(x, lo, hi)`` with tensor bounds (broadcasting): $\min(\max(x, lo), hi)$.

    $\partial L/\partial x = g$ where $lo \le x \le hi$; each bound gets $g$ where it is the
    result.
    """

    name, arity, saves, torch_name = "clamp_tensor", 3, (0, 1, 2), "ClampBackward0"

    def forward(self, xp, x, lo, hi):
        out = torch_result(xp, xp.maximum(*_arrays(xp, x, lo)), x, lo)
        return torch_result(xp, xp.minimum(*_arrays(xp, out, hi)), out, hi)

    def vjp(self, F, g, inputs, out, shapes, needs):
        x, lo, hi = inputs
        raised = F.maximum(x, lo)  # the forward's first step; x wins ties, as PyTorch's does
        under_hi = F.less_equal(raised, hi)
        gx = F.where(F.logical_and(F.greater_equal(x, lo), under_hi), g, 0.0) if needs[0] else None
        glo = F.where(F.logical_and(F.less(x, lo), under_hi), g, 0.0) if needs[1] else None
        ghi = F.where(F.greater(raised, hi), g, 0.0) if needs[2] else None
        return _to_shapes(F, (gx, glo, ghi), shapes)

    def onnx(self, ex, node, args):
        x, lo, hi = args
        return ex.chain([("Max", [x, lo], {}), ("Min", ["{0}", hi], {})], "clamp")


class _Remainder(Op):
    """``a - b * rounded(a / b)``: the gradient is $g$ for $a$ and $-g\\,$rounded$(a/b)$ for
    $b$."""

    arity, saves = 2, (0, 1)
    saves_for = {0: (1,)}
    _round = ""

    def vjp(self, F, g, inputs, out, shapes, needs):
        a, b = inputs
        gb = -g * getattr(F, self._round)(a / b) if needs[1] else None
        return _to_shapes(F, (g if needs[0] else None, gb), shapes)


def _zero_division(opname, xp, a, b):
    """PyTorch refuses an integer division by zero; numpy would warn and give 0."""
    if category(getattr(b, "dtype", None) or type(b)) == 2 or isinstance(b, float):
        return
    if category(getattr(a, "dtype", None) or type(a)) == 2 or isinstance(a, float):
        return
    if bool(xp.any(xp.asarray(b) == 0)):
        raise ZeroDivisionError(f"{opname}: integer division by zero (a divisor is 0); use "
                                "floats, or keep the divisors nonzero")  # fmt: skip


@register
class Fmod(_Remainder):
    r"""C's ``fmod``: $a - b\,\mathrm{trunc}(a/b)$, the sign of $a$.
    $\partial L/\partial b = -g\,\mathrm{trunc}(a/b)$."""

    name, _round = "fmod", "trunc"

    def forward(self, xp, a, b):
        _zero_division(self.name, xp, a, b)
        fmod = getattr(xp, "fmod", None)
        if fmod is None:
            out = a - b * xp.trunc(a / b)
        else:
            out = fmod(a, b)
        return torch_result(xp, out, a, b)

    def onnx(self, ex, node, args):
        return ex.one("Mod", args, "fmod", fmod=1)


@register
class Remainder(_Remainder):
    r"""Python's ``%``: $a - b\lfloor a/b \rfloor$, the sign of $b$.
    $\partial L/\partial b = -g\lfloor a/b \rfloor$."""

    name, _round = "remainder", "floor"

    def forward(self, xp, a, b):
        _zero_division(self.name, xp, a, b)
        return torch_result(xp, xp.remainder(a, b) if hasattr(a, "shape") or hasattr(b, "shape")
                            else a % b, a, b)  # fmt: skip

    def onnx(self, ex, node, args):  # ONNX's Mod takes fmod=0 for integers only
        if ex.is_integer(node):
            return ex.one("Mod", args, "remainder", fmod=0)
        a, b = args
        return ex.chain([("Div", [a, b], {}), ("Floor", ["{0}"], {}), ("Mul", ["{1}", b], {}),
                         ("Sub", [a, "{2}"], {})], "remainder")


@register
class FloorDivide(Op):
    r"""``a // b``: $\lfloor a/b \rfloor$ (integers stay integers). Not differentiable (as in
    PyTorch, whose backward for it is an error)."""

    name, arity, differentiable = "floor_divide", 2, False

    def forward(self, xp, a, b):
        _zero_division(self.name, xp, a, b)
        if not hasattr(a, "shape") and not hasattr(b, "shape"):
            return a // b
        return torch_result(xp, xp.floor_divide(a, b), a, b)

    def onnx(self, ex, node, args):
        if ex.is_integer(node):  # ONNX's Div truncates integers: take the floor remainder off
            return ex.chain([("Mod", args, {"fmod": 0}), ("Sub", [args[0], "{0}"], {}),
                             ("Div", ["{1}", args[1]], {})], "floor_divide")
        return ex.chain([("Div", args, {}), ("Floor", ["{0}"], {})], "floor_divide")


@register
class Atan2(Op):
    r"""$\mathrm{atan2}(a, b)$, the angle of the point $(b, a)$.
    $\partial L/\partial a = g\,b/(a^2+b^2)$, $\partial L/\partial b = -g\,a/(a^2+b^2)$."""

    name, arity, saves = "atan2", 2, (0, 1)

    def forward(self, xp, a, b):
        a, b = floating(xp, a), floating(xp, b)
        return torch_result(xp, xp.atan2(a, b), a, b, floating=True)

    def vjp(self, F, g, inputs, out, shapes, needs):
        a, b = inputs
        r2 = a * a + b * b
        return _to_shapes(F, (g * b / r2 if needs[0] else None,
                              -g * a / r2 if needs[1] else None), shapes)  # fmt: skip

    def onnx(self, ex, node, args):  # atan(y/x), moved by pi into the quadrant of (x, y)
        y, x = args
        zero, pi = ex.like(0, node, "zero"), ex.like(math.pi, node, "pi")
        half_pi = ex.like(math.pi / 2, node, "half_pi")
        return ex.chain([("Div", [y, x], {}), ("Atan", ["{0}"], {}),
                         ("Less", [y, zero], {}), ("Neg", [pi], {}),
                         ("Where", ["{2}", "{3}", pi], {}), ("Add", ["{1}", "{4}"], {}),
                         ("Sign", [y], {}), ("Mul", ["{6}", half_pi], {}),
                         ("Less", [x, zero], {}), ("Where", ["{8}", "{5}", "{1}"], {}),
                         ("Equal", [x, zero], {}), ("Where", ["{10}", "{7}", "{9}"], {})],
                        "atan2")


def _quiet(xp):
    errstate = getattr(xp, "errstate", None)
    if errstate is None:
        import contextlib  # noqa: PLC0415

        return contextlib.nullcontext()
    return errstate(invalid="ignore", over="ignore")


@register
class IsClose(Op):
    r"""``isclose(a, b, rtol, atol, equal_nan)``: $|a - b| \le \mathrm{atol} +
    \mathrm{rtol}\,|b|$, elementwise (equal infinities are close; nan only with
    ``equal_nan``). Not differentiable."""

    name, arity, differentiable = "isclose", 2, False

    def forward(self, xp, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
        a, b = xp.asarray(a), xp.asarray(b)
        if a.dtype != b.dtype and category(a.dtype) == category(b.dtype) == 2:
            raise TypeError(f"isclose: the inputs have different dtypes ({a.dtype} and "
                            f"{b.dtype}), as PyTorch refuses; convert one, e.g. b.to(a.dtype)")
        same = a == b
        if category(a.dtype) != 2 and category(b.dtype) != 2:
            close = same | (xp.abs(a - b) <= atol + rtol * xp.abs(b))
            return close
        with _quiet(xp):
            close = same | (xp.abs(a - b) <= atol + rtol * xp.abs(b))
            close = close & xp.isfinite(a - b) | same
        if equal_nan:
            close = close | (xp.isnan(a) & xp.isnan(b))
        return close

    def onnx(self, ex, node, args):  # a == b, or |a - b| <= atol + rtol |b|
        a, (x, y) = node.attrs, args
        rtol = ex.like(a.get("rtol", 1e-05), node.inputs[1], "rtol")
        atol = ex.like(a.get("atol", 1e-08), node.inputs[1], "atol")
        steps = [("Equal", [x, y], {}), ("Sub", [x, y], {}), ("Abs", ["{1}"], {}),
                 ("Abs", [y], {}), ("Mul", ["{3}", rtol], {}), ("Add", ["{4}", atol], {}),
                 ("LessOrEqual", ["{2}", "{5}"], {}), ("Or", ["{0}", "{6}"], {})]
        if a.get("equal_nan"):
            steps += [("IsNaN", [x], {}), ("IsNaN", [y], {}), ("And", ["{8}", "{9}"], {}),
                      ("Or", ["{7}", "{10}"], {})]
        return ex.chain(steps, "isclose")
