r"""Elementwise ops: arithmetic, the pointwise functions, comparisons, ``where``.

Binary ops broadcast like numpy; their derivative rules sum each gradient back to its input's
shape with ``F.sum_to`` (the reduction that undoes broadcasting).
"""

from __future__ import annotations

from .base import Op, register

__all__ = [
    "Add", "Sub", "Mul", "Div", "Neg", "Pow", "Exp", "Log", "Tanh", "Sigmoid", "Relu",
    "ReluGrad", "Maximum", "Where", "ZerosLike", "OnesLike", "Astype", "Clone", "Fill",
    "COMPARISONS",
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

    def forward(self, xp, a, b):
        return a + b

    def vjp(self, F, g, inputs, out, shapes, needs):
        # BEGIN SOLUTION A1.3
        return _to_shapes(F, (g if needs[0] else None, g if needs[1] else None), shapes)
        # END SOLUTION


@register
class Sub(Op):
    r"""$a - b$. $\partial L/\partial a = g$, $\partial L/\partial b = -g$."""

    name, arity = "sub", 2

    def forward(self, xp, a, b):
        return a - b

    def vjp(self, F, g, inputs, out, shapes, needs):
        return _to_shapes(F, (g if needs[0] else None, -g if needs[1] else None), shapes)


@register
class Mul(Op):
    r"""$a b$. $\partial L/\partial a = g\,b$, $\partial L/\partial b = g\,a$.

    >>> import numpy as np
    >>> from tinygrad_edu.ops import RAW, get_op
    >>> get_op("mul").vjp(RAW, np.ones(2), (np.array([1., 2.]), np.array([3., 4.])), None,
    ...                   ((2,), (2,)), (True, True))
    (array([3., 4.]), array([1., 2.]))
    """

    name, arity, saves = "mul", 2, (0, 1)

    def forward(self, xp, a, b):
        return a * b

    def vjp(self, F, g, inputs, out, shapes, needs):
        # BEGIN SOLUTION A1.3
        a, b = inputs
        return _to_shapes(F, (g * b if needs[0] else None, g * a if needs[1] else None), shapes)
        # END SOLUTION


@register
class Div(Op):
    r"""$a / b$. $\partial L/\partial a = g/b$, $\partial L/\partial b = -g\,a/b^2$."""

    name, arity, saves = "div", 2, (0, 1)

    def forward(self, xp, a, b):
        return a / b

    def vjp(self, F, g, inputs, out, shapes, needs):
        a, b = inputs
        ga = g / b if needs[0] else None
        gb = -g * a / (b * b) if needs[1] else None
        return _to_shapes(F, (ga, gb), shapes)


@register
class Neg(Op):
    r"""$-x$. $\partial L/\partial x = -g$."""

    name = "neg"

    def forward(self, xp, x):
        return -x

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (-g,)


@register
class Pow(Op):
    r"""$x^c$ for a constant exponent $c$. $\partial L/\partial x = g\,c\,x^{c-1}$."""

    name, saves = "pow", (0,)

    def forward(self, xp, x, exponent):
        return x**exponent

    def vjp(self, F, g, inputs, out, shapes, needs, exponent):
        (x,) = inputs
        if exponent == 2:
            return (g * x * 2,)
        return (g * exponent * x ** (exponent - 1),)


@register
class Exp(Op):
    r"""$e^x$. $\partial L/\partial x = g\,e^x$ (reuses the output)."""

    name, saves_output = "exp", True

    def forward(self, xp, x):
        return xp.exp(x)

    def vjp(self, F, g, inputs, out, shapes, needs):
        # BEGIN SOLUTION A1.4
        return (g * out,)
        # END SOLUTION


@register
class Log(Op):
    r"""$\ln x$. $\partial L/\partial x = g / x$."""

    name, saves = "log", (0,)

    def forward(self, xp, x):
        return xp.log(x)

    def vjp(self, F, g, inputs, out, shapes, needs):
        # BEGIN SOLUTION A1.4
        return (g / inputs[0],)
        # END SOLUTION


@register
class Tanh(Op):
    r"""$\tanh x$. $\partial L/\partial x = g\,(1 - \tanh^2 x)$ (reuses the output)."""

    name, saves_output = "tanh", True

    def forward(self, xp, x):
        return xp.tanh(x)

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (g * (1 - out * out),)


@register
class Sigmoid(Op):
    r"""$\sigma(x) = 1/(1+e^{-x})$. $\partial L/\partial x = g\,\sigma(1-\sigma)$.

    Computed as $(1 + \tanh(x/2))/2$, which never overflows.
    """

    name, saves_output = "sigmoid", True

    def forward(self, xp, x):
        return (xp.tanh(x * 0.5) + 1) * 0.5

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (g * out * (1 - out),)


@register
class Relu(Op):
    r"""$\max(x, 0)$. $\partial L/\partial x = g$ where $x > 0$, else 0 (``relu_grad``)."""

    name, saves_output = "relu", True

    def forward(self, xp, x):
        return xp.maximum(x, 0.0)

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (F.relu_grad(out, g),)


@register
class ReluGrad(Op):
    r"""``relu_grad(y, g)``: $g$ where $y > 0$, else 0 (CSE599W's ``relu_gradient_op``)."""

    name, arity, saves = "relu_grad", 2, (0,)

    def forward(self, xp, y, g):
        # a multiply by the 0/1 mask: several times faster than `where` on random signs
        return g * xp.astype(y > 0, g.dtype)

    def vjp(self, F, gg, inputs, out, shapes, needs):
        # The step function is flat almost everywhere: no gradient reaches y.
        return (None, F.relu_grad(inputs[0], gg) if needs[1] else None)


@register
class Maximum(Op):
    r"""Elementwise $\max(a, b)$. The gradient goes to the larger input; ties split it in half."""

    name, arity, saves = "maximum", 2, (0, 1)

    def forward(self, xp, a, b):
        return xp.maximum(a, b)

    def vjp(self, F, g, inputs, out, shapes, needs):
        a, b = inputs
        zero = F.zeros_like(g)
        tie = F.where(F.equal(a, b), g * 0.5, zero)
        ga = F.where(F.greater(a, b), g, tie) if needs[0] else None
        gb = F.where(F.greater(b, a), g, tie) if needs[1] else None
        return _to_shapes(F, (ga, gb), shapes)


@register
class Where(Op):
    r"""``where(cond, a, b)``: $a$ where cond holds, else $b$. Gradients are masked likewise."""

    name, arity, saves = "where", 3, (0,)

    def forward(self, xp, cond, a, b):
        return xp.where(cond, a, b)

    def vjp(self, F, g, inputs, out, shapes, needs):
        cond = inputs[0]
        zero = F.zeros_like(g)
        ga = F.where(cond, g, zero) if needs[1] else None
        gb = F.where(cond, zero, g) if needs[2] else None
        return _to_shapes(F, (None, ga, gb), shapes)


@register
class ZerosLike(Op):
    """An array of zeros shaped like ``x``. Its gradient is zero."""

    name, saves = "zeros_like", (0,)

    def forward(self, xp, x):
        return xp.zeros_like(x)

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (F.zeros_like(inputs[0]),)


@register
class OnesLike(Op):
    """An array of ones shaped like ``x``. Its gradient is zero."""

    name, saves = "ones_like", (0,)

    def forward(self, xp, x):
        return xp.ones_like(x)

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (F.zeros_like(inputs[0]),)


def _comparison(opname: str, symbol: str, fn):
    cls = type(
        opname.capitalize(),
        (Op,),
        {
            "__doc__": f"``a {symbol} b`` elementwise, as booleans. Not differentiable.",
            "name": opname,
            "arity": 2,
            "differentiable": False,
            "forward": lambda self, xp, a, b: fn(a, b),
        },
    )
    return register(cls)


COMPARISONS = {
    name: _comparison(name, sym, fn)
    for name, sym, fn in [
        ("greater", ">", lambda a, b: a > b),
        ("greater_equal", ">=", lambda a, b: a >= b),
        ("less", "<", lambda a, b: a < b),
        ("less_equal", "<=", lambda a, b: a <= b),
        ("equal", "==", lambda a, b: a == b),
        ("not_equal", "!=", lambda a, b: a != b),
    ]
}


@register
class Astype(Op):
    r"""Convert to ``dtype``. The gradient is converted back to the input's dtype ``src``."""

    name = "astype"

    def forward(self, xp, x, dtype, src=None):
        return xp.astype(x, getattr(xp, dtype) if isinstance(dtype, str) else dtype)

    def vjp(self, F, g, inputs, out, shapes, needs, dtype, src=None):
        return (F.astype(g, dtype=src, src=dtype),)


@register
class Clone(Op):
    r"""A copy of ``x`` that shares nothing with it. $\partial L/\partial x = g$."""

    name = "clone"

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
