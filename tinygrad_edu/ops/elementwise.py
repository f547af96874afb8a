r"""Elementwise ops: arithmetic, the pointwise functions, clamps. The comparisons, logic,
``where`` and ``masked_fill`` are in :mod:`~tinygrad_edu.ops.logic`.

Binary ops broadcast like numpy and give PyTorch's result dtype
(:mod:`~tinygrad_edu.ops.dtypes`); their derivative rules sum each gradient back to its
input's shape with ``F.sum_to`` (the reduction that undoes broadcasting).
"""

from __future__ import annotations

import math

from .base import Op, quiet, register
from .dtypes import category, floating, torch_result

__all__ = [
    "Add", "Sub", "Mul", "Div", "Neg", "Pow", "PowTensor", "Exp", "Log", "Log1p", "Sqrt",
    "Rsqrt", "Sin", "Cos", "Abs", "Sign", "Erf", "Tanh", "Sigmoid", "Relu", "ReluGrad",
    "Maximum", "Minimum", "Clamp", "ClampTensor", "ZerosLike",
    "OnesLike", "Astype", "Clone", "Fill", "erf",
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


@register
class Exp(Op):
    r"""$e^x$. $\partial L/\partial x = g\,e^x$ (reuses the output)."""

    name, saves_output = "exp", True
    onnx = "Exp"

    @quiet()  # overflow gives inf
    def forward(self, xp, x):
        return xp.exp(floating(xp, x))

    def vjp(self, F, g, inputs, out, shapes, needs):
        # BEGIN SOLUTION A1.4
        return (g * out,)
        # END SOLUTION


@register
class Log(Op):
    r"""$\ln x$. $\partial L/\partial x = g / x$."""

    name, saves = "log", (0,)
    onnx = "Log"

    @quiet()  # log(0) is -inf, log(-1) nan
    def forward(self, xp, x):
        return xp.log(floating(xp, x))

    def vjp(self, F, g, inputs, out, shapes, needs):
        # BEGIN SOLUTION A1.4
        return (g / inputs[0],)
        # END SOLUTION


@register
class Log1p(Op):
    r"""$\ln(1 + x)$, accurate for small $x$. $\partial L/\partial x = g / (1 + x)$."""

    name, saves, torch_name = "log1p", (0,), "Log1PBackward0"

    @quiet()
    def forward(self, xp, x):
        return xp.log1p(floating(xp, x))

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (g / (inputs[0] + 1),)

    def onnx(self, ex, node, args):
        one = ex.like(1, node, "one")
        return ex.chain([("Add", [args[0], one], {}), ("Log", ["{0}"], {})], "log1p")


@register
class Sqrt(Op):
    r"""$\sqrt x$. $\partial L/\partial x = g / (2\sqrt x)$ (reuses the output)."""

    name, saves_output = "sqrt", True
    onnx = "Sqrt"

    @quiet()
    def forward(self, xp, x):
        return xp.sqrt(floating(xp, x))

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (g / (out * 2),)


@register
class Rsqrt(Op):
    r"""$1/\sqrt x$. $\partial L/\partial x = -\tfrac12 g\,x^{-3/2}$ (reuses the output)."""

    name, saves_output = "rsqrt", True

    @quiet()
    def forward(self, xp, x):
        return 1 / xp.sqrt(floating(xp, x))

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (g * out * out * out * -0.5,)

    def onnx(self, ex, node, args):
        return ex.chain([("Sqrt", args, {}), ("Reciprocal", ["{0}"], {})], "rsqrt")


@register
class Sin(Op):
    r"""$\sin x$. $\partial L/\partial x = g \cos x$."""

    name, saves = "sin", (0,)
    onnx = "Sin"

    def forward(self, xp, x):
        return xp.sin(floating(xp, x))

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (g * F.cos(inputs[0]),)


@register
class Cos(Op):
    r"""$\cos x$. $\partial L/\partial x = -g \sin x$."""

    name, saves = "cos", (0,)
    onnx = "Cos"

    def forward(self, xp, x):
        return xp.cos(floating(xp, x))

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (-g * F.sin(inputs[0]),)


@register
class Abs(Op):
    r"""$|x|$. $\partial L/\partial x = g\,\mathrm{sign}(x)$ (0 at $x = 0$)."""

    name, saves = "abs", (0,)
    onnx = "Abs"

    def forward(self, xp, x):
        return xp.abs(x)

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (g * F.sign(inputs[0]),)


@register
class Sign(Op):
    r"""$\mathrm{sign}(x) \in \{-1, 0, 1\}$. Flat almost everywhere: its gradient is 0."""

    name = "sign"
    onnx = "Sign"

    def forward(self, xp, x):
        return xp.sign(x)

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (F.zeros_like(g),)


def erf(xp, x):
    r"""$\mathrm{erf}(x) = \frac{2}{\sqrt\pi}\int_0^x e^{-t^2}dt$ to double precision, from
    array operations alone (the Array API has no ``erf``).

    For $|x| \le 2.5$ the series $\frac{2}{\sqrt\pi} e^{-x^2}\sum_n \frac{2^n x^{2n+1}}
    {1\cdot 3\cdots(2n+1)}$ (all terms positive: no cancellation, 40 terms); beyond, the
    continued fraction $\mathrm{erfc}(x) = \frac{e^{-x^2}}{\sqrt\pi}\,
    \cfrac{1}{x + \cfrac{1/2}{x + \cfrac{1}{x + \cfrac{3/2}{x + \cdots}}}}$ (30 terms).
    """
    s = xp.clip(x, -2.5, 2.5)
    s2 = s * s
    term = s
    total = s
    for k in range(1, 40):
        term = term * (2 * s2) / (2 * k + 1)
        total = total + term
    near = total * xp.exp(-s2) * (2 / math.sqrt(math.pi))
    a = xp.clip(xp.abs(x), 2.5, 6.0)
    f = a
    for k in range(30, 0, -1):
        f = a + (k / 2) / f
    far = 1 - xp.exp(-a * a) / (math.sqrt(math.pi) * f)
    return xp.where(xp.abs(x) <= 2.5, near, xp.sign(x) * far)


@register
class Erf(Op):
    r"""The error function. $\partial L/\partial x = g\,\frac{2}{\sqrt\pi} e^{-x^2}$."""

    name, saves = "erf", (0,)
    onnx = "Erf"

    def forward(self, xp, x):
        return erf(xp, floating(xp, x))

    def vjp(self, F, g, inputs, out, shapes, needs):
        x = inputs[0]
        return (g * F.exp(-(x * x)) * (2 / math.sqrt(math.pi)),)


@register
class Tanh(Op):
    r"""$\tanh x$. $\partial L/\partial x = g\,(1 - \tanh^2 x)$ (reuses the output)."""

    name, saves_output = "tanh", True
    onnx = "Tanh"

    def forward(self, xp, x):
        return xp.tanh(floating(xp, x))

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (g * (1 - out * out),)


def sigmoid_of(xp, x):
    """$1/(1+e^{-x})$ of a floating array, as PyTorch computes it: where $e^{-x}$ overflows
    (below about -88.7 in float32) the result is 0, as PyTorch's is. (The textbook stable form
    ``where(x >= 0, 1/(1+e), e/(1+e))`` with ``e = exp(-|x|)`` keeps subnormal values there
    instead, and numpy's ``where`` does not vectorise: it took 20 times as long on a 100 x 512
    array.) float16 is computed in float32 and rounded, as PyTorch computes half precision."""
    if x.dtype == xp.float16:
        return _astype(xp, sigmoid_of(xp, _astype(xp, x, xp.float32)), xp.float16)
    with quiet():  # exp(-x) overflows to inf, and 1 / inf is the 0 wanted
        return 1 / (1 + xp.exp(-x))


def _astype(xp, x, dtype):
    cast = getattr(xp, "astype", None)  # the Array API's spelling; numpy 1.x lacks it
    return cast(x, dtype) if cast is not None else x.astype(dtype)


@register
class Sigmoid(Op):
    r"""$\sigma(x) = 1/(1+e^{-x})$. $\partial L/\partial x = g\,\sigma(1-\sigma)$.

    Computed by :func:`sigmoid_of`, as PyTorch does: $\sigma(-20)$ is $2.06\cdot 10^{-9}$ in
    float32, and below about -88.7 (where $e^{-x}$ overflows) it is 0, as in PyTorch.
    """

    name, saves_output = "sigmoid", True
    onnx = "Sigmoid"

    def forward(self, xp, x):
        return sigmoid_of(xp, floating(xp, x))

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (g * out * (1 - out),)


@register
class Relu(Op):
    r"""$\max(x, 0)$. $\partial L/\partial x = g$ where $x > 0$, else 0 (``relu_grad``)."""

    name, saves_output = "relu", True
    onnx = "Relu"

    def forward(self, xp, x):
        return xp.maximum(x, xp.zeros_like(x))

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (F.relu_grad(out, g),)


@register
class ReluGrad(Op):
    r"""``relu_grad(y, g)``: $g$ where $y > 0$, else 0 (CSE599W's ``relu_gradient_op``)."""

    name, arity, saves = "relu_grad", 2, (0,)
    torch_name = "ThresholdBackwardBackward0"

    def forward(self, xp, y, g):
        # a multiply by the 0/1 mask: several times faster than `where` on random signs
        return g * xp.astype(y > 0, g.dtype)

    def vjp(self, F, gg, inputs, out, shapes, needs):
        # The step function is flat almost everywhere: no gradient reaches y.
        return (None, F.relu_grad(inputs[0], gg) if needs[1] else None)

    def onnx(self, ex, node, args):
        y, g = args
        zero = ex.const(0, "zero", ex.dtype(node.inputs[0]) or "float32")
        pos, n1 = ex.node("Greater", [y, zero], "positive")
        mask, n2 = ex.node("CastLike", [pos, g], "mask")
        name, n3 = ex.node("Mul", [g, mask], "relu_grad")
        return [n1, n2, n3], name


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


@register
class ZerosLike(Op):
    """An array of zeros shaped like ``x``. Its gradient is zero."""

    name, saves = "zeros_like", (0,)

    def forward(self, xp, x):
        return xp.zeros_like(x)

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (F.zeros_like(inputs[0]),)

    def onnx(self, ex, node, args):
        return ex.filled(node, args, 0)


@register
class OnesLike(Op):
    """An array of ones shaped like ``x``. Its gradient is zero."""

    name, saves = "ones_like", (0,)

    def forward(self, xp, x):
        return xp.ones_like(x)

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (F.zeros_like(inputs[0]),)

    def onnx(self, ex, node, args):
        return ex.filled(node, args, 1)


@register
class Astype(Op):
    r"""Convert to ``dtype``. The gradient is converted back to the input's dtype ``src``."""

    name, torch_name = "astype", "ToCopyBackward0"

    def forward(self, xp, x, dtype, src=None):
        return xp.astype(x, getattr(xp, dtype) if isinstance(dtype, str) else dtype)

    def vjp(self, F, g, inputs, out, shapes, needs, dtype, src=None):
        return (F.astype(g, dtype=src, src=dtype),)

    def onnx(self, ex, node, args):
        to = ex.tensor_type(node.attrs["dtype"])
        return ex.one("Cast", args, "astype", to=to)


@register
class Clone(Op):
    r"""A copy of ``x`` that shares nothing with it. $\partial L/\partial x = g$."""

    name = "clone"
    onnx = "Identity"

    def forward(self, xp, x):
        return xp.asarray(x, copy=True)

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (g,)


@register
class Fill(Op):
    r"""``fill(x, value)``: an array like ``x`` holding ``value`` everywhere. Its gradient is 0
    (the eager in-place ``fill_``/``zero_`` record this op)."""

    name = "fill"

    def forward(self, xp, x, value):
        return xp.full(x.shape, value, dtype=x.dtype)

    def vjp(self, F, g, inputs, out, shapes, needs, value):
        return (F.zeros_like(g),)

    def onnx(self, ex, node, args):
        return ex.filled(node, args, node.attrs["value"])
