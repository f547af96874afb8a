r"""More pointwise ops, with PyTorch's names: rounding (``floor``, ``ceil``, ``round``,
``trunc``, ``frac``), division remainders (``fmod``, ``remainder`` / ``%``, ``floor_divide`` /
``//``), the tests ``isnan``/``isinf``/``isfinite``, ``nan_to_num``, ``atan2``, the
trigonometric and exponential relatives (``tan``, ``atan``, ``asin``, ``acos``, ``sinh``,
``cosh``, ``expm1``, ``exp2``, ``log2``, ``log10``, ``reciprocal``), ``isclose`` and the
composites built on ops: ``lerp``, ``clamp_min``/``clamp_max``, ``allclose``, ``equal``.

Rounding is flat almost everywhere: its gradient is zero, as PyTorch's ``FloorBackward0``
gives. ``floor_divide`` has no derivative in PyTorch (its backward is an error there), so here
it is not differentiable.

>>> import tinygrad_edu as tg
>>> x = tg.tensor([-1.5, 2.25, 7.0])
>>> x.floor(), x % 2, x // 2
(tensor([-2.,  2.,  7.]), tensor([0.5000, 0.2500, 1.0000]), tensor([-1.,  1.,  3.]))
"""

from __future__ import annotations

import math

from .base import REGISTRY, Op, register
from .dtypes import category, floating, torch_result
from .surface import binary, declare, reflected, unary

__all__ = ["UNARY", "Round", "Fmod", "Remainder", "FloorDivide", "NanToNum", "Atan2",
           "IsClose"]  # fmt: skip


def _to_shapes(F, grads, shapes):
    return [g if g is None or g.shape == s else F.sum_to(g, s) for g, s in zip(grads, shapes)]


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


def _quiet(xp):
    errstate = getattr(xp, "errstate", None)
    if errstate is None:
        import contextlib  # noqa: PLC0415

        return contextlib.nullcontext()
    return errstate(invalid="ignore", over="ignore")


# -- public surfaces: rows beside the ops (see tinygrad_edu.ops.surface) ---------------------
def _round(op, apply):
    def round(input, *, decimals=0):
        return apply(op, input, decimals=decimals)

    return round


def _nan_to_num(op, apply):
    def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
        return apply(op, input, nan=nan, posinf=posinf, neginf=neginf)

    return nan_to_num


def _clamp_bound(side):
    """``clamp_min(input, min)`` / ``clamp_max(input, max)``: ``clamp`` with one bound."""

    def template(op, apply):
        op = REGISTRY["clamp"]

        def bound(input, value):
            if hasattr(value, "shape"):
                from .elementwise_args import _extremes  # noqa: PLC0415

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


for _name in ("floor", "ceil", "trunc", "frac", "tan", "atan", "asin", "acos", "sinh", "cosh",
              "expm1", "exp2", "log2", "log10", "reciprocal"):  # fmt: skip
    declare(_name, unary, methods=(_name,), functions=(_name,), inplace=(_name + "_",))
for _name in ("isnan", "isinf", "isfinite"):
    declare(_name, unary, methods=(_name,), functions=(_name,))
declare("round", _round, methods=("round",), functions=("round",), inplace=("round_",))
declare("fmod", binary, methods=("fmod",), functions=("fmod",), inplace=("fmod_",))
declare("remainder", binary, methods=("remainder",), functions=("remainder",),
        inplace=("remainder_",))  # fmt: skip
declare("remainder", binary, methods=("__mod__",), inplace=("__imod__",))
declare("remainder", reflected, methods=("__rmod__",))
declare("floor_divide", binary, methods=("floor_divide", "__floordiv__"),
        functions=("floor_divide",), inplace=("floor_divide_", "__ifloordiv__"))  # fmt: skip
declare("floor_divide", reflected, methods=("__rfloordiv__",))
declare("nan_to_num", _nan_to_num, methods=("nan_to_num",), functions=("nan_to_num",),
        inplace=("nan_to_num_",))  # fmt: skip
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


# -- composites of arithmetic: addcmul, addcdiv, hypot, logaddexp, logit, xlogy ----------------
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


def _logit(op, apply):
    r"""``logit(input, eps=None)``: $\log(p / (1 - p))$, $p$ clamped to $[\epsilon, 1 -
    \epsilon]$ when ``eps`` is given."""
    log, sub, div, clamp = REGISTRY["log"], REGISTRY["sub"], REGISTRY["div"], REGISTRY["clamp"]

    def logit(input, eps=None):
        p = input if eps is None else apply(clamp, input, min=eps, max=1 - eps)
        return apply(log, apply(div, p, apply(sub, 1.0, p)))

    return logit


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


declare(None, _addc("mul"), methods=("addcmul",), functions=("addcmul",))
declare(None, _addc("div"), methods=("addcdiv",), functions=("addcdiv",))
declare(None, _hypot, methods=("hypot",), functions=("hypot",))
declare(None, _logaddexp, methods=("logaddexp",), functions=("logaddexp",))
declare(None, _logit, methods=("logit",), functions=("logit",))
declare(None, _xlogy, methods=("xlogy",), functions=("xlogy",))
