r"""The elementwise functions of one input: ``exp``, ``log`` (also ``log1p``, ``log2``,
``log10``, ``expm1``, ``exp2``), ``sqrt``/``rsqrt``, the trigonometric and hyperbolic functions,
``abs``, ``sign``, ``erf``, ``tanh``, ``sigmoid``, ``relu``, ``reciprocal``; rounding (``floor``,
``ceil``, ``round``, ``trunc``, ``frac``); the tests ``isnan``/``isinf``/``isfinite`` and
``nan_to_num``; and the ops that copy or fill (``astype``, ``clone``, ``zeros_like``,
``ones_like``, ``fill``). The ops of two inputs are in :mod:`~tinygrad_edu.ops.arithmetic`.

An integer input computes in the default float, float32, as in PyTorch (rounding returns it
unchanged). Rounding is flat almost everywhere: its gradient is zero, as PyTorch's
``FloorBackward0`` gives.

>>> import tinygrad_edu as tg
>>> x = tg.tensor([-1.5, 2.25, 7.0])
>>> x.floor(), x.abs()
(tensor([-2.,  2.,  7.]), tensor([1.5000, 2.2500, 7.0000]))
"""

from __future__ import annotations

import math

import numpy as _np  # relu's numpy path

from ..backend import astype
from .base import REGISTRY, Op, quiet, register
from .promotion import category, floating
from .surface import cast, declare, unary

_F32_F64 = (_np.dtype(_np.float32), _np.dtype(_np.float64))

__all__ = [
    "Exp", "Log", "Log1p", "Sqrt", "Rsqrt", "Sin", "Cos", "Abs", "Sign", "Erf", "Tanh",
    "Sigmoid", "Relu", "ReluGrad", "UNARY", "Round", "NanToNum", "ZerosLike", "OnesLike",
    "Astype", "Clone", "Fill", "erf",
]  # fmt: skip


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


@quiet()  # exp(-x) overflows to inf, and 1 / inf is the 0 wanted (a decorator: see quiet)
def sigmoid_of(xp, x):
    """$1/(1+e^{-x})$ of a floating array, as PyTorch computes it: where $e^{-x}$ overflows
    (below about -88.7 in float32) the result is 0, as PyTorch's is. (The textbook stable form
    ``where(x >= 0, 1/(1+e), e/(1+e))`` with ``e = exp(-|x|)`` keeps subnormal values there
    instead, and numpy's ``where`` does not vectorise: it took 20 times as long on a 100 x 512
    array.) float16 is computed in float32 and rounded, as PyTorch computes half precision."""
    if x.dtype == getattr(xp, "float16", None):  # (the Array API has no float16)
        return astype(sigmoid_of(xp, astype(x, xp.float32)), xp.float16)
    return 1 / (1 + xp.exp(-x))


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
        if xp is _np and isinstance(x, _np.ndarray) and x.dtype in _F32_F64:
            # a zero scalar instead of an array of zeros: the same bits (the same maximum of
            # each element with +0, NaN and -0 included), one large fresh array fewer
            return _np.maximum(x, x.dtype.type(0))
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


def _unary_op(opname, doc, forward, vjp=None, *, saves=(0,), saves_output=False, ints="float",
              torch_name=None):  # fmt: skip
    """Register a one-input op: ``forward(xp, x)``, ``vjp(F, g, x, out)`` (None: not
    differentiable). ``ints`` says what an integer or bool input becomes: ``"float"``
    computed in float32 (PyTorch's default float), ``"keep"`` returned unchanged (rounding),
    ``"raw"`` passed as it is (the tests ``isnan``...)."""

    def fwd(self, xp, x):
        if ints == "raw" or category(x.dtype) == 2:
            return forward(xp, x)
        return xp.asarray(x, copy=True) if ints == "keep" else forward(xp, floating(xp, x))

    body = {"__doc__": doc, "name": opname, "forward": fwd, "saves": saves if vjp else (),
            "saves_output": saves_output, "differentiable": vjp is not None}  # fmt: skip
    if vjp is not None:
        body["vjp"] = lambda self, F, g, inputs, out, shapes, needs: (vjp(F, g, inputs[0], out),)
    if torch_name:
        body["torch_name"] = torch_name
    cls = type("".join(p.capitalize() for p in opname.split("_")), (Op,), body)
    return register(cls)


def _zero(F, g, x, out):
    return F.zeros_like(g)


UNARY = {
    "floor": _unary_op("floor", r"$\lfloor x \rfloor$. Its gradient is 0.",
                       lambda xp, x: xp.floor(x), _zero, saves=(), ints="keep"),
    "ceil": _unary_op("ceil", r"$\lceil x \rceil$. Its gradient is 0.",
                      lambda xp, x: xp.ceil(x), _zero, saves=(), ints="keep"),
    "trunc": _unary_op("trunc", "$x$ rounded toward zero. Its gradient is 0.",
                       lambda xp, x: xp.trunc(x), _zero, saves=(), ints="keep"),
    "frac": _unary_op("frac", r"$x - \mathrm{trunc}(x)$. $\partial L/\partial x = g$.",
                      lambda xp, x: x - xp.trunc(x), lambda F, g, x, out: g, saves=()),
    "tan": _unary_op("tan", r"$\tan x$. $\partial L/\partial x = g(1 + \tan^2 x)$.",
                     lambda xp, x: xp.tan(x), lambda F, g, x, out: g * (out * out + 1),
                     saves=(), saves_output=True),
    "atan": _unary_op("atan", r"$\arctan x$. $\partial L/\partial x = g/(1 + x^2)$.",
                      lambda xp, x: xp.atan(x), lambda F, g, x, out: g / (x * x + 1)),
    "asin": _unary_op("asin", r"$\arcsin x$. $\partial L/\partial x = g/\sqrt{1 - x^2}$.",
                      lambda xp, x: xp.asin(x), lambda F, g, x, out: g * F.rsqrt(1 - x * x)),
    "acos": _unary_op("acos", r"$\arccos x$. $\partial L/\partial x = -g/\sqrt{1 - x^2}$.",
                      lambda xp, x: xp.acos(x), lambda F, g, x, out: -g * F.rsqrt(1 - x * x)),
    "sinh": _unary_op("sinh", r"$\sinh x$. $\partial L/\partial x = g\cosh x$.",
                      lambda xp, x: xp.sinh(x), lambda F, g, x, out: g * F.cosh(x)),
    "cosh": _unary_op("cosh", r"$\cosh x$. $\partial L/\partial x = g\sinh x$.",
                      lambda xp, x: xp.cosh(x), lambda F, g, x, out: g * F.sinh(x)),
    "expm1": _unary_op("expm1", r"$e^x - 1$, accurate for small $x$. "
                       r"$\partial L/\partial x = g(\mathrm{out} + 1)$.",
                       lambda xp, x: xp.expm1(x), lambda F, g, x, out: g * (out + 1),
                       saves=(), saves_output=True),
    "exp2": _unary_op("exp2", r"$2^x$. $\partial L/\partial x = g\,2^x \ln 2$.",
                      lambda xp, x: 2.0**x if not hasattr(x, "dtype") else xp.exp2(x)
                      if hasattr(xp, "exp2") else xp.exp(x * math.log(2)),
                      lambda F, g, x, out: g * out * math.log(2), saves=(), saves_output=True),
    "log2": _unary_op("log2", r"$\log_2 x$. $\partial L/\partial x = g/(x \ln 2)$.",
                      lambda xp, x: xp.log2(x), lambda F, g, x, out: g / (x * math.log(2))),
    "log10": _unary_op("log10", r"$\log_{10} x$. $\partial L/\partial x = g/(x \ln 10)$.",
                       lambda xp, x: xp.log10(x), lambda F, g, x, out: g / (x * math.log(10))),
    "reciprocal": _unary_op("reciprocal", r"$1/x$. $\partial L/\partial x = -g/x^2$.",
                            lambda xp, x: 1.0 / x, lambda F, g, x, out: -g * out * out,
                            saves=(), saves_output=True),
    "isnan": _unary_op("isnan", "True where $x$ is nan. Not differentiable.",
                       lambda xp, x: xp.isnan(x) if category(x.dtype) == 2 else
                       xp.zeros(x.shape, dtype=xp.bool), ints="raw"),
    "isinf": _unary_op("isinf", "True where $x$ is $\\pm\\infty$. Not differentiable.",
                       lambda xp, x: xp.isinf(x) if category(x.dtype) == 2 else
                       xp.zeros(x.shape, dtype=xp.bool), ints="raw"),
    "isfinite": _unary_op("isfinite", "True where $x$ is neither nan nor infinite. Not "
                          "differentiable.", lambda xp, x: xp.isfinite(x)
                          if category(x.dtype) == 2 else xp.ones(x.shape, dtype=xp.bool),
                          ints="raw"),
}  # fmt: skip


def _onnx_trunc(frac):
    def form(self, ex, node, args):  # trunc(x) = sign(x) floor(|x|); frac(x) = x - trunc(x)
        steps = [("Abs", args, {}), ("Floor", ["{0}"], {}), ("Sign", args, {}),
                 ("Mul", ["{2}", "{1}"], {})]
        return ex.chain(steps + [("Sub", [args[0], "{3}"], {})] * frac, self.name)

    return form


def _onnx_log(base):
    def form(self, ex, node, args):
        return ex.chain([("Log", args, {}),
                         ("Div", ["{0}", ex.like(math.log(base), node, "ln_base")], {})],
                        self.name)  # fmt: skip

    return form


def _onnx_expm1(self, ex, node, args):
    return ex.chain([("Exp", args, {}), ("Sub", ["{0}", ex.like(1, node, "one")], {})], "expm1")


def _onnx_exp2(self, ex, node, args):
    return ex.one("Pow", [ex.like(2, node, "two"), args[0]], "exp2")


def _onnx_isfinite(self, ex, node, args):
    return ex.chain([("IsNaN", args, {}), ("IsInf", args, {}), ("Or", ["{0}", "{1}"], {}),
                     ("Not", ["{2}"], {})], "isfinite")  # fmt: skip


# each op's ONNX form (``Op.onnx``): one ONNX operator, or its decomposition
for _name, _form in {
    "floor": "Floor", "ceil": "Ceil", "tan": "Tan", "atan": "Atan", "asin": "Asin",
    "acos": "Acos", "sinh": "Sinh", "cosh": "Cosh", "reciprocal": "Reciprocal",
    "isnan": "IsNaN", "isinf": "IsInf", "trunc": _onnx_trunc(False),
    "frac": _onnx_trunc(True), "expm1": _onnx_expm1,
    "exp2": _onnx_exp2, "log2": _onnx_log(2), "log10": _onnx_log(10),
    "isfinite": _onnx_isfinite,
}.items():  # fmt: skip
    UNARY[_name].onnx = _form


@register
class Round(Op):
    r"""$x$ rounded to ``decimals`` places, halves to even (as PyTorch and numpy). Its
    gradient is 0."""

    name = "round"

    def forward(self, xp, x, decimals=0):
        if category(x.dtype) != 2:
            return xp.asarray(x, copy=True)
        if decimals == 0:
            return xp.round(x)
        scale = 10.0**decimals
        return xp.round(x * scale) / scale

    def vjp(self, F, g, inputs, out, shapes, needs, decimals=0):
        return (F.zeros_like(g),)

    def onnx(self, ex, node, args):  # ONNX's Round, as numpy's, rounds halves to even
        decimals = node.attrs.get("decimals", 0)
        if not decimals:
            return ex.one("Round", args, "round")
        scale = ex.like(10.0**decimals, node, "scale")
        return ex.chain([("Mul", [args[0], scale], {}), ("Round", ["{0}"], {}),
                         ("Div", ["{1}", scale], {})], "round")


@register
class NanToNum(Op):
    r"""nan, $+\infty$ and $-\infty$ replaced by ``nan`` (0), ``posinf`` and ``neginf`` (the
    dtype's largest and smallest finite values by default). $\partial L/\partial x = g$ where
    $x$ is finite, else 0."""

    name, saves = "nan_to_num", (0,)

    def forward(self, xp, x, nan=0.0, posinf=None, neginf=None):
        if category(x.dtype) != 2:
            return xp.asarray(x, copy=True)
        info = xp.finfo(x.dtype)
        out = xp.where(xp.isnan(x), xp.asarray(nan, dtype=x.dtype), x)
        top = xp.asarray(info.max if posinf is None else posinf, dtype=x.dtype)
        bottom = xp.asarray(info.min if neginf is None else neginf, dtype=x.dtype)
        out = xp.where(xp.isinf(x) & (x > 0), top, out)
        return xp.where(xp.isinf(x) & (x < 0), bottom, out)

    def vjp(self, F, g, inputs, out, shapes, needs, **attrs):
        return (F.where(F.isfinite(inputs[0]), g, 0.0),)

    def onnx(self, ex, node, args):
        a, x, info = node.attrs, args[0], ex.finfo(node)
        nan = ex.like(a.get("nan", 0.0), node, "nan")
        top = ex.like(info.max if a.get("posinf") is None else a["posinf"], node, "posinf")
        bottom = ex.like(info.min if a.get("neginf") is None else a["neginf"], node, "neginf")
        return ex.chain([("IsNaN", [x], {}), ("Where", ["{0}", nan, x], {}),
                         ("IsInf", [x], {"detect_negative": 0}), ("Where", ["{2}", top, "{1}"], {}),
                         ("IsInf", [x], {"detect_positive": 0}),
                         ("Where", ["{4}", bottom, "{3}"], {})], "nan_to_num")


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


# -- public surfaces: rows beside the ops (see tinygrad_edu.ops.surface) ----------------------


def _type_as(op, apply):
    def type_as(input, other):  # x.to(other.dtype)
        return cast(apply, input, other.dtype)

    return type_as


def _round(op, apply):
    def round(input, *, decimals=0):
        return apply(op, input, decimals=decimals)

    return round


def _nan_to_num(op, apply):
    def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
        return apply(op, input, nan=nan, posinf=posinf, neginf=neginf)

    return nan_to_num


def _logit(op, apply):
    r"""``logit(input, eps=None)``: $\log(p / (1 - p))$, $p$ clamped to $[\epsilon, 1 -
    \epsilon]$ when ``eps`` is given."""
    log, sub, div, clamp = REGISTRY["log"], REGISTRY["sub"], REGISTRY["div"], REGISTRY["clamp"]

    def logit(input, eps=None):
        p = input if eps is None else apply(clamp, input, min=eps, max=1 - eps)
        return apply(log, apply(div, p, apply(sub, 1.0, p)))

    return logit


for _name in ("exp", "log", "log1p", "sqrt", "rsqrt", "sin", "cos", "abs", "sign", "erf",
              "tanh", "sigmoid", "relu"):  # fmt: skip
    declare(_name, unary, methods=(_name,), functions=(_name,), inplace=(_name + "_",))
declare("abs", unary, methods=("__abs__", "absolute"), functions=("absolute",))
declare("clone", unary, methods=("clone",), functions=("clone",))
declare("astype", _type_as, methods=("type_as",))
for _name in ("floor", "ceil", "trunc", "frac", "tan", "atan", "asin", "acos", "sinh", "cosh",
              "expm1", "exp2", "log2", "log10", "reciprocal"):  # fmt: skip
    declare(_name, unary, methods=(_name,), functions=(_name,), inplace=(_name + "_",))
for _name in ("isnan", "isinf", "isfinite"):
    declare(_name, unary, methods=(_name,), functions=(_name,))
declare("round", _round, methods=("round",), functions=("round",), inplace=("round_",))
declare("nan_to_num", _nan_to_num, methods=("nan_to_num",), functions=("nan_to_num",),
        inplace=("nan_to_num_",))  # fmt: skip
declare(None, _logit, methods=("logit",), functions=("logit",))
