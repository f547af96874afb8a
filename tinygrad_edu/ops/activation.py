r"""Activation functions beyond ``relu``/``sigmoid``/``tanh``: ``leaky_relu``, ``gelu`` (exact,
through ``erf``, or PyTorch's ``tanh`` approximation), ``softplus``, ``silu``, ``elu`` (also
``selu`` and ``celu``), ``mish``, ``hardtanh`` (also ``relu6``), ``hardswish``,
``hardsigmoid``, ``log_sigmoid``, ``softmax`` and ``log_softmax``. They are the ops behind
``tg.nn.functional``'s functions of the same names; ``softsign``, ``tanhshrink``,
``hardshrink``, ``softshrink``, ``threshold``, ``glu`` and ``prelu`` are composites of other
ops."""

from __future__ import annotations

import math

import numpy as _np  # the type check of a numpy array (numpy's reductions, without wrappers)

from .base import Op, normalize_axes, quiet, register
from .promotion import category
from .surface import cast, declare
from .unary import erf

__all__ = ["LeakyRelu", "Gelu", "Softplus", "Silu", "Elu", "Mish", "Hardtanh", "Hardswish",
           "Hardsigmoid", "LogSigmoid", "Softmax", "LogSoftmax"]  # fmt: skip

_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


@register
class LeakyRelu(Op):
    r"""$x$ for $x > 0$, else $\alpha x$ (``negative_slope`` $\alpha$).
    $\partial L/\partial x = g$ or $\alpha g$."""

    name, saves = "leaky_relu", (0,)

    def forward(self, xp, x, negative_slope=0.01):
        return xp.where(x > 0, x, x * negative_slope)

    def vjp(self, F, g, inputs, out, shapes, needs, negative_slope=0.01):
        return (F.where(F.greater(inputs[0], 0), g, g * negative_slope),)

    def onnx(self, ex, node, args):
        slope = float(node.attrs.get("negative_slope", 0.01))
        return ex.one("LeakyRelu", args, "leaky_relu", alpha=slope)


@register
class Gelu(Op):
    r"""$x\,\Phi(x)$, $\Phi$ the standard normal CDF: $\tfrac12 x (1 + \mathrm{erf}(x/\sqrt2))$.
    With ``approximate="tanh"``: $\tfrac12 x (1 + \tanh(\sqrt{2/\pi}(x + 0.044715 x^3)))$.

    $\partial L/\partial x = g\,(\Phi(x) + x\,\varphi(x))$ (exact form).
    """

    name, saves = "gelu", (0,)

    def forward(self, xp, x, approximate="none"):
        if approximate not in ("none", "tanh"):
            raise ValueError(approximate)  # the shape rule below says what is wrong
        if approximate == "tanh":
            return x * 0.5 * (1 + xp.tanh((x + 0.044715 * x * x * x) * _SQRT_2_OVER_PI))
        return x * 0.5 * (1 + erf(xp, x / math.sqrt(2)))

    def shape(self, shape, approximate="none"):
        if approximate not in ("none", "tanh"):
            raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
        return tuple(shape)

    def vjp(self, F, g, inputs, out, shapes, needs, approximate="none"):
        x = inputs[0]
        if approximate == "tanh":
            t = F.tanh((x + x * x * x * 0.044715) * _SQRT_2_OVER_PI)
            inner = (1 + x * x * (3 * 0.044715)) * _SQRT_2_OVER_PI
            return (g * ((1 + t) * 0.5 + x * 0.5 * (1 - t * t) * inner),)
        cdf = (F.erf(x / math.sqrt(2)) + 1) * 0.5
        pdf = F.exp(x * x * -0.5) / math.sqrt(2 * math.pi)
        return (g * (cdf + x * pdf),)

    def onnx(self, ex, node, args):
        x, half, one = args[0], ex.like(0.5, node, "half"), ex.like(1, node, "one")
        if node.attrs.get("approximate", "none") == "tanh":
            k = ex.like(math.sqrt(2 / math.pi), node, "k")
            c = ex.like(0.044715, node, "c")
            steps = [("Mul", [x, x], {}), ("Mul", ["{0}", x], {}), ("Mul", ["{1}", c], {}),
                     ("Add", [x, "{2}"], {}), ("Mul", ["{3}", k], {}), ("Tanh", ["{4}"], {}),
                     ("Add", ["{5}", one], {}), ("Mul", [x, half], {}),
                     ("Mul", ["{7}", "{6}"], {})]  # fmt: skip
        else:
            r2 = ex.like(math.sqrt(2), node, "sqrt2")
            steps = [("Div", [x, r2], {}), ("Erf", ["{0}"], {}), ("Add", ["{1}", one], {}),
                     ("Mul", [x, half], {}), ("Mul", ["{3}", "{2}"], {})]  # fmt: skip
        return ex.chain(steps, "gelu")


@register
class Softplus(Op):
    r"""$\frac1\beta \ln(1 + e^{\beta x})$, and $x$ itself where $\beta x >$ ``threshold``
    (PyTorch's rule). $\partial L/\partial x = g\,\sigma(\beta x)$ (or $g$ above the
    threshold)."""

    name, saves = "softplus", (0,)

    def forward(self, xp, x, beta=1.0, threshold=20.0):
        z = x * beta
        soft = (xp.log1p(xp.exp(-xp.abs(z))) + xp.maximum(z, xp.zeros_like(z))) / beta
        return xp.where(z > threshold, x, soft)

    def vjp(self, F, g, inputs, out, shapes, needs, beta=1.0, threshold=20.0):
        z = inputs[0] * beta
        return (F.where(F.greater(z, threshold), g, g * F.sigmoid(z)),)

    def onnx(self, ex, node, args):
        beta = ex.like(node.attrs.get("beta", 1.0), node, "beta")
        limit = ex.like(node.attrs.get("threshold", 20.0), node, "threshold")
        x = args[0]
        return ex.chain([("Mul", [x, beta], {}), ("Softplus", ["{0}"], {}),
                            ("Div", ["{1}", beta], {}), ("Greater", ["{0}", limit], {}),
                            ("Where", ["{3}", x, "{2}"], {})], "softplus")  # fmt: skip


# -- public surfaces: tg.nn.functional names (PyTorch has no Tensor methods for these) ----------
def _leaky_relu(op, apply):
    def leaky_relu(input, negative_slope=0.01, inplace=False):
        return apply(op, input, negative_slope=negative_slope)

    return leaky_relu


def _gelu(op, apply):
    def gelu(input, approximate="none"):
        return apply(op, input, approximate=approximate)

    return gelu


def _softplus(op, apply):
    def softplus(input, beta=1.0, threshold=20.0):
        return apply(op, input, beta=beta, threshold=threshold)

    return softplus


declare("leaky_relu", _leaky_relu, nn=("leaky_relu",))
declare("gelu", _gelu, nn=("gelu",))
declare("softplus", _softplus, nn=("softplus",))


# -- silu, elu (selu, celu), mish, the hard ones, log_sigmoid ---------------------------------
_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772, 1.0507009873554805


@register
class Silu(Op):
    r"""$x\,\sigma(x)$ (``swish``). $\partial L/\partial x = g\,\sigma(x)(1 + x(1 -
    \sigma(x)))$."""

    name, saves = "silu", (0,)

    def forward(self, xp, x):
        return x * (xp.tanh(x * 0.5) * 0.5 + 0.5)  # sigmoid through tanh: no overflow

    def vjp(self, F, g, inputs, out, shapes, needs):
        x = inputs[0]
        s = F.sigmoid(x)
        return (g * s * (1 + x * (1 - s)),)

    def onnx(self, ex, node, args):
        return ex.chain([("Sigmoid", args, {}), ("Mul", [args[0], "{0}"], {})], "silu")


@register
class Elu(Op):
    r"""$x$ for $x > 0$, else $\alpha(e^x - 1)$, times ``scale`` (``selu`` is
    ``scale``$\cdot$``elu`` with fixed constants; ``celu`` divides the exponent by $\alpha$).
    $\partial L/\partial x = g\,\mathrm{scale}$ or $g\,\mathrm{scale}\,\alpha e^{x/c}/c$."""

    name, saves = "elu", (0,)

    def forward(self, xp, x, alpha=1.0, scale=1.0, input_scale=1.0):
        neg = (xp.exp(xp.minimum(x, xp.zeros_like(x)) * input_scale) - 1) * alpha
        return xp.where(x > 0, x, neg) * scale

    def vjp(self, F, g, inputs, out, shapes, needs, alpha=1.0, scale=1.0, input_scale=1.0):
        x = inputs[0]
        slope = F.exp(F.minimum(x, 0.0) * input_scale) * (alpha * input_scale)
        return (F.where(F.greater(x, 0), g * scale, g * scale * slope),)

    def onnx(self, ex, node, args):
        a = node.attrs
        alpha, scale, inner = a.get("alpha", 1.0), a.get("scale", 1.0), a.get("input_scale", 1.0)
        if scale == 1 and inner == 1:
            return ex.one("Elu", args, "elu", alpha=float(alpha))
        x, zero = args[0], ex.like(0, node, "zero")
        return ex.chain([("Min", [x, zero], {}), ("Mul", ["{0}", ex.like(inner, node, "k")], {}),
                         ("Exp", ["{1}"], {}), ("Sub", ["{2}", ex.like(1, node, "one")], {}),
                         ("Mul", ["{3}", ex.like(alpha, node, "alpha")], {}),
                         ("Greater", [x, zero], {}), ("Where", ["{5}", x, "{4}"], {}),
                         ("Mul", ["{6}", ex.like(scale, node, "scale")], {})], "elu")


@register
class Mish(Op):
    r"""$x \tanh(\mathrm{softplus}(x))$. $\partial L/\partial x = g(t + x\,\sigma(x)(1 -
    t^2))$ with $t = \tanh(\mathrm{softplus}(x))$."""

    name, saves = "mish", (0,)

    def forward(self, xp, x):
        soft = xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(x, xp.zeros_like(x))
        return x * xp.tanh(soft)

    def vjp(self, F, g, inputs, out, shapes, needs):
        x = inputs[0]
        t = F.tanh(F.softplus(x, beta=1.0, threshold=20.0))
        return (g * (t + x * F.sigmoid(x) * (1 - t * t)),)

    def onnx(self, ex, node, args):  # ONNX's Mish is opset 18: x tanh(softplus(x))
        return ex.chain([("Softplus", args, {}), ("Tanh", ["{0}"], {}),
                         ("Mul", [args[0], "{1}"], {})], "mish")


@register
class Hardtanh(Op):
    r"""$x$ clipped to [``min_val``, ``max_val``] (``relu6`` is ``hardtanh(0, 6)``).
    $\partial L/\partial x = g$ strictly inside, else 0 (as PyTorch)."""

    name, saves = "hardtanh", (0,)

    def forward(self, xp, x, min_val=-1.0, max_val=1.0):
        if min_val > max_val:
            raise ValueError(f"hardtanh: min_val {min_val} is above max_val {max_val}")
        lo = xp.asarray(min_val, dtype=x.dtype)
        return xp.minimum(xp.maximum(x, lo), xp.asarray(max_val, dtype=x.dtype))

    def vjp(self, F, g, inputs, out, shapes, needs, min_val=-1.0, max_val=1.0):
        x = inputs[0]
        inside = F.logical_and(F.greater(x, min_val), F.less(x, max_val))
        return (F.where(inside, g, 0.0),)

    def onnx(self, ex, node, args):
        a = node.attrs
        return ex.one("Clip", [args[0], ex.like(a.get("min_val", -1.0), node, "min"),
                               ex.like(a.get("max_val", 1.0), node, "max")], "hardtanh")


@register
class Hardswish(Op):
    r"""$x\,\mathrm{relu6}(x + 3)/6$. $\partial L/\partial x = g(2x + 3)/6$ on $[-3, 3]$, $g$
    above, 0 below."""

    name, saves = "hardswish", (0,)
    onnx = "HardSwish"

    def forward(self, xp, x):
        return x * xp.minimum(xp.maximum(x + 3, xp.zeros_like(x)), xp.full_like(x, 6)) / 6

    def vjp(self, F, g, inputs, out, shapes, needs):
        x = inputs[0]
        mid = F.where(F.less_equal(x, 3.0), g * (x * 2 + 3) / 6, g)
        return (F.where(F.less(x, -3.0), 0.0, mid),)


@register
class Hardsigmoid(Op):
    r"""$\mathrm{relu6}(x + 3)/6$. $\partial L/\partial x = g/6$ strictly inside $(-3, 3)$,
    else 0."""

    name, saves = "hardsigmoid", (0,)

    def forward(self, xp, x):
        return xp.minimum(xp.maximum(x + 3, xp.zeros_like(x)), xp.full_like(x, 6)) / 6

    def vjp(self, F, g, inputs, out, shapes, needs):
        x = inputs[0]
        inside = F.logical_and(F.greater(x, -3.0), F.less(x, 3.0))
        return (F.where(inside, g / 6, 0.0),)

    def onnx(self, ex, node, args):
        return ex.one("HardSigmoid", args, "hardsigmoid", alpha=1 / 6, beta=0.5)


@register
class LogSigmoid(Op):
    r"""$\log \sigma(x) = \min(x, 0) - \log(1 + e^{-|x|})$ (stable).
    $\partial L/\partial x = g\,\sigma(-x)$."""

    name, saves = "log_sigmoid", (0,)

    def forward(self, xp, x):
        return xp.minimum(x, xp.zeros_like(x)) - xp.log1p(xp.exp(-xp.abs(x)))

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (g * F.sigmoid(-inputs[0]),)

    def onnx(self, ex, node, args):  # min(x, 0) - log(1 + exp(-|x|)), as the forward
        x = args[0]
        return ex.chain([("Min", [x, ex.like(0, node, "zero")], {}), ("Abs", [x], {}),
                         ("Neg", ["{1}"], {}), ("Exp", ["{2}"], {}),
                         ("Add", ["{3}", ex.like(1, node, "one")], {}), ("Log", ["{4}"], {}),
                         ("Sub", ["{0}", "{5}"], {})], "log_sigmoid")


def _unary_nn(op, apply):
    def fn(input, inplace=False):
        return apply(op, input)

    return fn


def _plain(op, apply):
    def fn(input):
        return apply(op, input)

    return fn


def _elu(kind):
    def template(op, apply):
        if kind == "selu":
            def selu(input, inplace=False):
                return apply(op, input, alpha=_SELU_ALPHA, scale=_SELU_SCALE)

            return selu
        if kind == "celu":
            def celu(input, alpha=1.0, inplace=False):
                if alpha == 0:
                    raise ValueError("celu: alpha must not be 0 (it divides the input)")
                return apply(op, input, alpha=alpha, input_scale=1.0 / alpha)

            return celu

        def elu(input, alpha=1.0, inplace=False):
            return apply(op, input, alpha=alpha)

        return elu

    return template


def _hardtanh(op, apply):
    def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
        return apply(op, input, min_val=min_val, max_val=max_val)

    return hardtanh


def _relu6(op, apply):
    def relu6(input, inplace=False):
        return apply(op, input, min_val=0.0, max_val=6.0)

    return relu6


def _composite(kind):
    """The activations that are a few ops: ``softsign`` $x/(1+|x|)$, ``tanhshrink``
    $x - \\tanh x$, ``hardshrink``/``softshrink`` (``where`` of the thresholds),
    ``threshold`` (``where``), ``glu`` (halves along ``dim``: $a\\,\\sigma(b)$), ``prelu``
    (``where`` with a learnt slope per channel, dim 1)."""

    def template(op, apply):
        from .base import REGISTRY  # noqa: PLC0415

        R = REGISTRY

        def where(c, a, b):
            return apply(R["where"], c, a, b)

        if kind == "softsign":
            def softsign(input):
                return apply(R["div"], input, apply(R["add"], apply(R["abs"], input), 1))

            return softsign
        if kind == "tanhshrink":
            def tanhshrink(input):
                return apply(R["sub"], input, apply(R["tanh"], input))

            return tanhshrink
        if kind == "hardshrink":
            def hardshrink(input, lambd=0.5):
                keep = apply(R["greater"], apply(R["abs"], input), lambd)
                return where(keep, input, 0.0)

            return hardshrink
        if kind == "softshrink":
            def softshrink(input, lambd=0.5):
                if lambd < 0:
                    raise ValueError(f"softshrink: lambd must be non-negative, got {lambd}")
                up = where(apply(R["greater"], input, lambd), apply(R["sub"], input, lambd), 0.0)
                return where(apply(R["less"], input, -lambd), apply(R["add"], input, lambd), up)

            return softshrink
        if kind == "threshold":
            def threshold(input, threshold, value, inplace=False):
                return where(apply(R["greater"], input, threshold), input, value)

            return threshold
        if kind == "glu":
            def glu(input, dim=-1):
                shape = getattr(input, "shape", None)
                n = shape[dim] if shape else 0
                if not shape or n % 2:
                    raise RuntimeError(f"glu: dim {dim} of shape {shape} must have an even "
                                       "size (it is halved)")  # fmt: skip
                d = dim % len(shape)
                half = (slice(None),) * d
                a = apply(R["getitem"], input, index=half + (slice(0, n // 2),))
                b = apply(R["getitem"], input, index=half + (slice(n // 2, n),))
                return apply(R["mul"], a, apply(R["sigmoid"], b))

            return glu

        def prelu(input, weight):
            shape, wshape = getattr(input, "shape", ()), getattr(weight, "shape", ())
            count = 1
            for d in wshape:
                count *= d
            channels = shape[1] if len(shape) >= 2 else 1
            if len(wshape) > 1 or count not in (1, channels):
                raise RuntimeError(f"prelu: weight of shape {tuple(wshape)} must have 1 or "
                                   f"{channels} elements (one per channel, dim 1 of input "
                                   f"{tuple(shape)})")  # fmt: skip
            if count > 1 and len(shape) >= 2:
                weight = apply(R["reshape"], weight, shape=(count,) + (1,) * (len(shape) - 2))
            elif len(wshape):
                weight = apply(R["reshape"], weight, shape=())
            return where(apply(R["greater"], input, 0), input, apply(R["mul"], weight, input))

        return prelu

    return template


declare("silu", _unary_nn, nn=("silu",))
declare("mish", _unary_nn, nn=("mish",))
declare("elu", _elu("elu"), nn=("elu",))
declare("elu", _elu("selu"), nn=("selu",))
declare("elu", _elu("celu"), nn=("celu",))
declare("hardtanh", _hardtanh, nn=("hardtanh",))
declare("hardtanh", _relu6, nn=("relu6",))
declare("hardswish", _unary_nn, nn=("hardswish",))
declare("hardsigmoid", _unary_nn, nn=("hardsigmoid",))
declare("log_sigmoid", _plain, nn=("logsigmoid",))
for _kind in ("softsign", "tanhshrink", "hardshrink", "softshrink", "threshold", "glu", "prelu"):
    declare(None, _composite(_kind), nn=(_kind,))


# -- softmax and log_softmax: computed after subtracting the row maximum, so logits of
# +-1000 stay finite ------------------------------------------------------------------------
def _log_softmax(xp, x, axis):
    if isinstance(x, _np.ndarray):  # the methods: numpy's same reductions, without wrappers
        z = x - x.max(axis=axis, keepdims=True)
        return z - xp.log(xp.exp(z).sum(axis=axis, keepdims=True))
    z = x - xp.max(x, axis=axis, keepdims=True)
    return z - xp.log(xp.sum(xp.exp(z), axis=axis, keepdims=True))


@quiet()
def log_softmax_rows(xp, x, axis):
    """``log_softmax`` of a non-empty floating array (what the kernel computes, silently)."""
    return _log_softmax(xp, x, axis)


def _need_float(opname, x):
    if getattr(x, "dtype", None) is not None and category(x.dtype) != 2:
        raise TypeError(
            f"{opname}: the input is {x.dtype}, but {opname} needs a floating dtype (as in "
            f"PyTorch); convert first, e.g. x.float(), or pass dtype=tg.float32"
        )


class _AlongAxis(Op):
    def shape(self, shape, axis=-1):
        normalize_axes(self.name, axis, len(shape), shape)
        return tuple(shape)


@register
class Softmax(_AlongAxis):
    r"""$s_i = e^{x_i} / \sum_j e^{x_j}$ along ``axis``.
    $\partial L/\partial x = s \odot (g - \sum_j g_j s_j)$ (reuses the output)."""

    name, saves_output = "softmax", True

    @quiet()  # inf - inf in a row holding inf gives nan, silently (as in PyTorch)
    def forward(self, xp, x, axis=-1):
        _need_float(self.name, x)
        if x.size == 0:  # nothing to normalise (numpy's max of nothing would fail)
            return xp.asarray(x, copy=True)
        e = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
        return e / xp.sum(e, axis=axis, keepdims=True)

    def vjp(self, F, g, inputs, out, shapes, needs, axis=-1):
        return (out * (g - F.sum(g * out, axis=axis, keepdims=True)),)

    def onnx(self, ex, node, args):
        return ex.one("Softmax", args, "softmax", axis=node.attrs.get("axis", -1))


@register
class LogSoftmax(_AlongAxis):
    r"""$\log s_i = x_i - \log\sum_j e^{x_j}$ along ``axis``.
    $\partial L/\partial x = g - e^{\mathrm{out}} \sum_j g_j$ (reuses the output)."""

    name, saves_output = "log_softmax", True

    @quiet()
    def forward(self, xp, x, axis=-1):
        _need_float(self.name, x)
        if x.size == 0:
            return xp.asarray(x, copy=True)
        return _log_softmax(xp, x, axis)

    def vjp(self, F, g, inputs, out, shapes, needs, axis=-1):
        return (g - F.exp(out) * F.sum(g, axis=axis, keepdims=True),)

    def onnx(self, ex, node, args):
        return ex.one("LogSoftmax", args, "log_softmax", axis=node.attrs.get("axis", -1))


# -- public surfaces: rows beside the ops (see tinygrad_edu.ops.surface) ---------------------
def _along_dim(op, apply):
    """``softmax(input, dim=-1)``; numpy's ``axis`` is an alias. (PyTorch's ``F.softmax``
    without ``dim`` picks one by a deprecated rule; here it is always the last dim.)"""

    def along_dim(input, dim=-1, *, dtype=None, axis=None):
        return apply(op, cast(apply, input, dtype), axis=dim if axis is None else axis)

    return along_dim


declare("softmax", _along_dim, methods=("softmax",), functions=("softmax",))
declare("log_softmax", _along_dim, methods=("log_softmax",), functions=("log_softmax",))
