r"""Activation functions beyond ``relu``/``sigmoid``/``tanh``: ``leaky_relu``, ``gelu`` (exact,
through ``erf``, or PyTorch's ``tanh`` approximation) and ``softplus``. They are the ops behind
``tg.nn.functional``'s functions of the same names."""

from __future__ import annotations

import math

from .base import Op, register
from .elementwise import erf
from .surface import declare

__all__ = ["LeakyRelu", "Gelu", "Softplus"]

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
