r"""The special functions of ``torch.special`` that numpy lacks, written with array operations
alone (the Array API has none of them): ``lgamma``, ``digamma``, ``polygamma``, ``erfc``,
``erfinv``, ``i0``, ``i1``, ``sinc`` and ``entr``.

Each is an op with its derivative rule, and the rules call one another:
$\frac{d}{dx}\log\Gamma(x) = \psi(x)$ (``digamma``), $\psi^{(n)\prime} = \psi^{(n+1)}$
(``polygamma``), $I_0' = I_1$ and $I_1' = I_0 - I_1/x$, so derivatives of any order exist.

How each is computed, so that a student can check it on paper:

* $\log\Gamma(x)$: Lanczos' approximation ($g = 7$, nine coefficients, about 15 correct
  digits) for $x \ge 1/2$, and the reflection $\Gamma(x)\Gamma(1-x) = \pi/\sin(\pi x)$ below;
* $\psi^{(n)}(x)$: the recurrence $\psi^{(n)}(x) = \psi^{(n)}(x+1) - (-1)^n n!/x^{n+1}$ moves
  $x$ up until the asymptotic series in Bernoulli numbers is exact to double precision
  (``digamma`` reflects negative $x$ first: $\psi(x) = \psi(1-x) - \pi/\tan(\pi x)$);
* $\mathrm{erfc}$: $1 - \mathrm{erf}$ near 0 and the continued fraction of
  :func:`~tinygrad_edu.ops.unary.erf` beyond $|x| = 2.5$ (so the tail keeps its digits);
* $\mathrm{erf}^{-1}$: a rational first guess (Giles, 2010) polished by Newton's method on
  ``erf``;
* $I_0$, $I_1$: their power series (all terms positive), summed until the terms vanish.

>>> import tinygrad_edu as tg
>>> tg.lgamma(tg.tensor([0.5, 1.0, 5.0]))
tensor([0.5724, 0.0000, 3.1781])
>>> tg.special.erfinv(tg.tensor([0.0, 0.5]))
tensor([0.0000, 0.4769])
"""

from __future__ import annotations

import math

from .base import NoOnnx, Op, register
from .promotion import category, floating
from .surface import declare, unary
from .unary import erf

__all__ = ["lgamma", "digamma", "polygamma", "erfc", "erfinv", "i0", "i1", "Lgamma",
           "Digamma", "Polygamma", "Erfc", "Erfinv", "I0", "I1", "Sinc", "Entr"]  # fmt: skip

_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)  # fmt: skip
#: $B_2, B_4, \dots, B_{16}$, the Bernoulli numbers of the asymptotic series of $\psi^{(n)}$
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)


def _is_pole(xp, x):
    """True at 0 and the negative integers, where $\\Gamma$ has its poles."""
    return (x <= 0) & (xp.floor(x) == x)


def _sin_pi(xp, x):
    """$\\sin(\\pi x)$, exact at integers: $x$ is first reduced to $[-1, 1]$."""
    return xp.sin(math.pi * (x - 2 * xp.round(x / 2)))


def lgamma(xp, x):
    r"""$\log|\Gamma(x)|$ elementwise (``inf`` at the poles, as PyTorch)."""
    neg = x < 0.5
    y = xp.where(neg, 1 - x, x)  # y >= 1/2
    z = y - 1
    total = _LANCZOS[0]
    for i in range(1, len(_LANCZOS)):
        total = total + _LANCZOS[i] / (z + i)
    t = z + _LANCZOS_G + 0.5
    with _quiet(xp):
        big = 0.5 * math.log(2 * math.pi) + (z + 0.5) * xp.log(t) - t + xp.log(total)
        reflected = math.log(math.pi) - xp.log(xp.abs(_sin_pi(xp, x))) - big
        out = xp.where(neg, reflected, big)
    out = xp.where((x == 1) | (x == 2), 0.0, out)  # exact zeros (the sum rounds near them)
    return xp.where(_is_pole(xp, x) | xp.isinf(x), math.inf, out)


def _shift_up(xp, x, n, to):
    """``(y, acc)``: $y = x + m$ with $y \\ge$ ``to``, and $\\sum_{k<m} 1/(x+k)^{n+1}$."""
    low = xp.where(xp.isfinite(x), x, to)
    steps = max(0, math.ceil(to - float(xp.min(low)))) if low.size else 0
    if steps > 100_000:
        raise ValueError(f"polygamma: an input of {float(xp.min(low)):g} is too far below 0 "
                         "for the recurrence used here (one step per unit); keep x above "
                         "-100000")  # fmt: skip
    acc = xp.zeros_like(x)
    y = x
    with _quiet(xp):
        for _ in range(steps):
            small = y < to
            acc = acc + xp.where(small, 1 / y ** (n + 1), 0.0)
            y = xp.where(small, y + 1, y)
    return y, acc


def digamma(xp, x):
    r"""$\psi(x) = \frac{d}{dx}\log\Gamma(x)$: ``-inf`` at 0 and nan at the negative
    integers, as PyTorch."""
    neg = x < 0.5
    with _quiet(xp):
        y, acc = _shift_up(xp, xp.where(neg, 1 - x, x), 0, 10.0)
        inv2 = 1 / (y * y)
        series = 0.0
        for k in range(len(_BERNOULLI) - 1, -1, -1):
            series = (series + _BERNOULLI[k] / (2 * k + 2)) * inv2
        psi = xp.log(y) - 0.5 / y - series - acc
        r = x - xp.round(x)  # tan(pi x) has period 1: reduce first, exact at integers
        reflected = psi - math.pi / xp.tan(math.pi * r)
        out = xp.where(neg, reflected, psi)
        out = xp.where(_is_pole(xp, x), math.nan, out)
        out = xp.where(x == 0, -math.inf, out)
        return xp.where(x == math.inf, math.inf, out)


def polygamma(xp, x, n):
    r"""$\psi^{(n)}(x)$, the $n$-th derivative of ``digamma`` ($n \ge 1$):
    $(-1)^{n+1} n! \sum_k 1/(x+k)^{n+1}$, the sum's tail by its asymptotic series."""
    if n == 0:
        return digamma(xp, x)
    to = 15.0 + 2 * n
    with _quiet(xp):
        y, acc = _shift_up(xp, x, n, to)
        # (n-1)!/y^n + n!/(2 y^(n+1)) + sum_k B_2k (2k+n-1)!/(2k)! / y^(2k+n)
        tail = math.factorial(n - 1) / y**n + math.factorial(n) / (2 * y ** (n + 1))
        for k, b in enumerate(_BERNOULLI, start=1):
            coeff = b * math.factorial(2 * k + n - 1) / math.factorial(2 * k)
            tail = tail + coeff / y ** (2 * k + n)
        out = (-1) ** (n + 1) * (math.factorial(n) * acc + tail)
        return xp.where(_is_pole(xp, x), math.inf if n % 2 else -math.inf, out)


def erfc(xp, x):
    r"""$\mathrm{erfc}(x) = 1 - \mathrm{erf}(x)$, keeping its digits for large $x$ (where
    $1 - \mathrm{erf}(x)$ would round to 0)."""
    a = xp.clip(xp.abs(x), 2.5, 30.0)
    f = a
    for k in range(30, 0, -1):
        f = a + (k / 2) / f
    with _quiet(xp):
        tail = xp.exp(-a * a) / (math.sqrt(math.pi) * f)
    far = xp.where(x > 0, tail, 2 - tail)
    return xp.where(xp.abs(x) <= 2.5, 1 - erf(xp, x), far)


_GILES_SMALL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_LARGE = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)  # fmt: skip


def erfinv(xp, y):
    r"""The inverse of ``erf`` on $[-1, 1]$ ($\pm\infty$ at $\pm 1$, nan outside)."""
    with _quiet(xp):
        return _erfinv(xp, y)


def _erfinv(xp, y):
    inside = xp.abs(y) < 1
    t = xp.where(inside, y, 0.0)
    w = -xp.log((1 - t) * (1 + t))
    small, large = w - 2.5, xp.sqrt(w) - 3
    p_small, p_large = _GILES_SMALL[0], _GILES_LARGE[0]
    for a, b in zip(_GILES_SMALL[1:], _GILES_LARGE[1:]):
        p_small, p_large = a + p_small * small, b + p_large * large
    x = xp.where(w < 5, p_small, p_large) * t
    at, slope0 = xp.abs(t), 2 / math.sqrt(math.pi)
    for _ in range(4):  # Newton: each step doubles the correct digits
        step_small = (erf(xp, x) - t) / (slope0 * xp.exp(-x * x))
        # near |t| = 1, Newton on log erfc(|x|) = log(1 - |t|): 1 - |t| is exact there, and
        # the log is nearly a parabola in |x|, so the steps stay short
        ax = xp.abs(x)
        tail = erfc(xp, ax)
        step_tail = xp.sign(t) * (xp.log(tail) - xp.log(1 - at)) * tail / (
            -slope0 * xp.exp(-ax * ax))
        x = x - xp.where(at < 0.5, step_small, step_tail)
    out = xp.where(xp.abs(y) == 1, xp.sign(y) * math.inf, x)
    return xp.where(inside | (xp.abs(y) == 1), out, math.nan)


def _series_terms(xp, x) -> int:
    """How many terms the power series of $I_0$ and $I_1$ need: the terms grow until
    $k \\approx |x|/2$, then fall faster than any power."""
    if x.size == 0:
        return 0
    finite = xp.where(xp.isfinite(x), xp.abs(x), 0.0)
    m = min(float(xp.max(finite)), 720.0)  # beyond about 713 the result is inf anyway
    return int(m / 2 + 6 * math.sqrt(m) + 30)


def i0(xp, x):
    r"""$I_0(x) = \sum_k (x^2/4)^k / (k!)^2$, the modified Bessel function of order 0."""
    q = x * x / 4
    term = xp.ones_like(x)
    total = term
    with _quiet(xp):
        for k in range(1, _series_terms(xp, x) + 1):
            term = term * q / (k * k)
            total = total + term
    return total


def i1(xp, x):
    r"""$I_1(x) = \frac{x}{2}\sum_k (x^2/4)^k / (k!\,(k+1)!)$, the modified Bessel function of
    order 1."""
    q = x * x / 4
    term = xp.ones_like(x)
    total = term
    with _quiet(xp):
        for k in range(1, _series_terms(xp, x) + 1):
            term = term * q / (k * (k + 1))
            total = total + term
        return x / 2 * total


def _quiet(xp):
    """numpy's warnings off for one computation (poles give inf or nan silently)."""
    errstate = getattr(xp, "errstate", None)
    if errstate is None:
        import contextlib  # noqa: PLC0415

        return contextlib.nullcontext()
    return errstate(divide="ignore", invalid="ignore", over="ignore")


class _Special(Op):
    r"""A one-input special function. Integer inputs become the default float; the series
    run in float64 whatever the dtype (in float32 their rounding errors would show: Lanczos'
    sum for $\log\Gamma(1)$ gives 5e-7 instead of 0), and the result has the input's
    dtype."""

    saves = (0,)
    _fn = None

    def forward(self, xp, x, **attrs):
        x = floating(xp, x) if category(x.dtype) != 2 else x
        if x.dtype == xp.float64:
            return type(self)._fn(xp, x, **attrs)
        return xp.astype(type(self)._fn(xp, xp.astype(x, xp.float64), **attrs), x.dtype)


@register
class Lgamma(_Special):
    r"""$\log|\Gamma(x)|$. $\partial L/\partial x = g\,\psi(x)$ (``digamma``)."""

    name, _fn = "lgamma", staticmethod(lgamma)
    onnx = NoOnnx("no ONNX operator for this special function")

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (g * F.digamma(inputs[0]),)


@register
class Digamma(_Special):
    r"""$\psi(x)$. $\partial L/\partial x = g\,\psi^{(1)}(x)$ (``polygamma(1, x)``)."""

    name, _fn = "digamma", staticmethod(digamma)
    onnx = NoOnnx("no ONNX operator for this special function")

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (g * F.polygamma(inputs[0], n=1),)


@register
class Polygamma(_Special):
    r"""$\psi^{(n)}(x)$. $\partial L/\partial x = g\,\psi^{(n+1)}(x)$."""

    name, _fn = "polygamma", staticmethod(polygamma)
    onnx = NoOnnx("no ONNX operator for this special function")

    def vjp(self, F, g, inputs, out, shapes, needs, n):
        return (g * F.polygamma(inputs[0], n=n + 1),)


@register
class Erfc(_Special):
    r"""$1 - \mathrm{erf}(x)$. $\partial L/\partial x = -g\,\frac{2}{\sqrt\pi} e^{-x^2}$."""

    name, _fn = "erfc", staticmethod(erfc)

    def vjp(self, F, g, inputs, out, shapes, needs):
        x = inputs[0]
        return (g * F.exp(-(x * x)) * (-2 / math.sqrt(math.pi)),)

    def onnx(self, ex, node, args):
        return ex.chain([("Erf", args, {}), ("Sub", [ex.like(1, node, "one"), "{0}"], {})], "erfc")


@register
class Erfinv(_Special):
    r"""$\mathrm{erf}^{-1}(x)$. $\partial L/\partial x = g\,\frac{\sqrt\pi}{2}
    e^{\mathrm{out}^2}$ (the reciprocal of erf's slope at the output)."""

    name, _fn, saves, saves_output = "erfinv", staticmethod(erfinv), (), True
    onnx = NoOnnx("no ONNX operator for this special function")

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (g * F.exp(out * out) * (math.sqrt(math.pi) / 2),)


@register
class I0(_Special):
    r"""$I_0(x)$. $\partial L/\partial x = g\,I_1(x)$."""

    name, _fn = "i0", staticmethod(i0)
    onnx = NoOnnx("no ONNX operator for this special function")

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (g * F.i1(inputs[0]),)


@register
class I1(_Special):
    r"""$I_1(x)$. $\partial L/\partial x = g\,(I_0(x) - I_1(x)/x)$, which is $g/2$ at 0."""

    name, _fn, saves_output = "i1", staticmethod(i1), True
    onnx = NoOnnx("no ONNX operator for this special function")

    def vjp(self, F, g, inputs, out, shapes, needs):
        x = inputs[0]
        zero = F.equal(x, 0.0)
        safe = F.where(zero, 1.0, x)
        return (g * F.where(zero, 0.5, F.i0(x) - out / safe),)


def _sinc(xp, x):
    with _quiet(xp):
        px = math.pi * xp.where(x == 0, 1.0, x)
        return xp.where(x == 0, 1.0, xp.sin(px) / px)


def _entr(xp, x):
    with _quiet(xp):
        inner = -x * xp.log(xp.where(x > 0, x, 1.0))
        return xp.where(x > 0, inner, xp.where(x == 0, 0.0, xp.where(x < 0, -math.inf, x)))


@register
class Sinc(_Special):
    r"""$\sin(\pi x)/(\pi x)$, 1 at 0. $\partial L/\partial x = g\,(\cos(\pi x) -
    \mathrm{out})/x$, 0 at 0 (where the second derivative is $-\pi^2/3$; PyTorch's is
    nan there)."""

    name, _fn, saves_output = "sinc", staticmethod(_sinc), True

    def vjp(self, F, g, inputs, out, shapes, needs):
        x = inputs[0]
        zero = F.equal(x, 0.0)
        safe = F.where(zero, 1.0, x)
        # at 0: the slope is 0 and the curvature -pi^2/3 (x times it keeps both exact)
        return (g * F.where(zero, x * (-math.pi**2 / 3), (F.cos(safe * math.pi) - out) / safe),)

    def onnx(self, ex, node, args):
        x, zero = args[0], ex.like(0, node, "zero")
        return ex.chain([("Mul", [x, ex.like(math.pi, node, "pi")], {}), ("Sin", ["{0}"], {}),
                         ("Div", ["{1}", "{0}"], {}), ("Equal", [x, zero], {}),
                         ("Where", ["{3}", ex.like(1, node, "one"), "{2}"], {})], "sinc")


@register
class Entr(_Special):
    r"""The entropy term $-x\log x$ (0 at 0, $-\infty$ for $x < 0$).
    $\partial L/\partial x = -g\,(1 + \log x)$."""

    name, _fn = "entr", staticmethod(_entr)

    def vjp(self, F, g, inputs, out, shapes, needs):
        return (-g * (F.log(inputs[0]) + 1),)

    def onnx(self, ex, node, args):  # -x log x; 0 at 0; -inf below
        x, zero = args[0], ex.like(0, node, "zero")
        return ex.chain([("Log", [x], {}), ("Mul", [x, "{0}"], {}), ("Neg", ["{1}"], {}),
                         ("Equal", [x, zero], {}), ("Where", ["{3}", zero, "{2}"], {}),
                         ("Less", [x, zero], {}),
                         ("Where", ["{5}", ex.like(-math.inf, node, "minus_inf"), "{4}"], {})],
                        "entr")


def _polygamma_method(op, apply):
    """``x.polygamma(n)`` (the method takes ``n`` after the tensor)."""

    def polygamma(input, n):
        return apply(op, input, n=_order(n))

    return polygamma


def _polygamma_function(op, apply):
    """``tg.polygamma(n, input)`` (the function takes ``n`` first, as PyTorch)."""

    def polygamma(n, input):
        return apply(op, input, n=_order(n))

    return polygamma


def _order(n):
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise RuntimeError(f"polygamma: the order n must be a non-negative int, got {n!r}")
    return n


for _name in ("lgamma", "digamma", "erfc", "erfinv", "i0", "sinc"):
    declare(_name, unary, methods=(_name,), functions=(_name,), inplace=(_name + "_",))
declare("polygamma", _polygamma_method, methods=("polygamma",), inplace=("polygamma_",))
declare("polygamma", _polygamma_function, functions=("polygamma",))
# entr and i1 are torch.special's only: tg.special builds them from the op (no declared names)
