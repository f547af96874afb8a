"""The table of the differential suite: every public op of ``tinygrad_edu`` against PyTorch.

A :class:`Case` runs the *same* code on both libraries: ``fn(L, *inputs, **extra)`` where
``L`` is ``tinygrad_edu`` or ``torch`` (``L.nn.functional`` is ``F`` in both), which is the
point: PyTorch code runs unchanged. Most rows are one line naming an op's public names, the
calling form they share and the inputs:

    C("exp", UNARY)                        # x.exp(), tg.exp(x), x.exp_() ...

Every input spec becomes float64 leaves (deterministic values) in both libraries, in several
layouts: 0-d, empty, broadcast, and non-contiguous (a leaf stored transposed and permuted back
before the op). The runner compares values and dtypes, first derivatives and (unless
``second=False``) second derivatives, and that an input PyTorch rejects is rejected here too.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tinygrad_edu.ops.surface import SURFACES

__all__ = ["Case", "Spec", "Example", "CASES", "names_of", "call_row", "takes_args"]


@dataclass(frozen=True)
class Spec:
    """One input: ``shape``, how to fill it, and whether the leaf is stored transposed."""

    shape: tuple
    fill: str = "normal"
    layout: str = ""  # "T": stored with dims reversed, permuted back (non-contiguous)
    dtype: str = "float64"

    def array(self, rng) -> np.ndarray:
        n = int(np.prod(self.shape, dtype=int))
        if self.dtype == "bool":
            return rng.random(self.shape) > 0.5
        if self.dtype.startswith("int"):
            low = 0 if self.fill == "classes" else -3
            return rng.integers(low, 4, self.shape).astype(self.dtype)
        if self.fill == "positive":
            a = rng.uniform(0.5, 2.0, self.shape)
        elif self.fill == "away":  # away from 0 (abs, relu, sign, division)
            a = rng.uniform(0.3, 2.0, self.shape) * rng.choice([-1.0, 1.0], self.shape)
        elif self.fill == "distinct":  # no ties (max, sort-like ops)
            a = (rng.permutation(n) * 0.37 - n * 0.15 + rng.uniform(0, 0.05, n)).reshape(self.shape)
        elif self.fill == "quarter":  # k + 0.25..0.35: never ties bounds at k + 0.5 or k
            a = rng.integers(-3, 3, self.shape) + 0.25 + rng.uniform(0, 0.1, self.shape)
        elif self.fill == "unit":  # in (0, 1): probabilities
            a = rng.uniform(0.05, 0.95, self.shape)
        elif self.fill == "unit_edges":  # probabilities exactly 0 and 1 among others
            a = rng.choice([0.0, 1.0, 0.25, 0.5], self.shape)
        elif self.fill == "wide":
            a = rng.uniform(-5, 5, self.shape) + 0.013
        else:
            a = rng.standard_normal(self.shape)
        return a.astype(self.dtype)


def S(*shape, fill="normal", layout="", dtype="float64") -> Spec:
    return Spec(tuple(shape), fill, layout, dtype)


@dataclass(frozen=True)
class Example:
    """Inputs to differentiate (``specs``) and other arguments (``extra``: numbers pass as
    they are, numpy arrays become tensors of each library, e.g. indices and masks)."""

    specs: tuple
    extra: dict = field(default_factory=dict)


def E(*specs, **extra) -> Example:
    return Example(tuple(specs), extra)


@dataclass(frozen=True)
class Case:
    """Public names and how to call them; each name is checked on every example."""

    names: tuple  # "Tensor.exp", "tg.exp", "F.gelu", "Tensor.exp_" ...
    call: Callable  # call(L, name, *inputs, **extra) -> output(s)
    examples: tuple
    second: bool = True  # compare second derivatives
    rtol: float = 1e-10
    atol: float = 1e-12
    # the error(s) PyTorch raises on some of the examples (an input it rejects); an example
    # that PyTorch refuses passes only when the row declares the error and this library
    # refuses it too. Undeclared, a refusal fails: a wrong call must not pass as "both refuse"
    raises: type | tuple = ()
    op: str | None = None  # the registry op the names share (None: not one op)
    dtypes: tuple = ("float64", "float32", "float16")  # the float dtypes the GPU test runs


CASES: list[Case] = []


def takes_args(call) -> bool:
    """Whether a row's call takes ``args`` as one parameter (``lambda L, name, args: ...``)
    rather than spread after the inputs (``F.softmax(x, *args)``)."""
    try:
        param = inspect.signature(call).parameters.get("args")
    except (TypeError, ValueError):
        return False
    return param is not None and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD)


def call_row(case: Case, L, name: str, inputs, args: tuple, extra: dict):
    """Run one name of a row on ``inputs`` (the converted tensors) in library ``L``: the
    example's ``args`` go after the inputs, or as one parameter where the call names it."""
    if takes_args(case.call):
        return case.call(L, name, *inputs, args=args, **extra)
    return case.call(L, name, *inputs, *args, **extra)


# -- calling forms ---------------------------------------------------------------------------
def _resolve(L, name):
    where, _, attr = name.partition(".")
    return where, attr


def call_default(L, name, x, *rest, **kw):
    """``Tensor.n`` -> ``x.n(*rest)``; ``Tensor.n_`` (in place) -> on a non-leaf copy of x;
    ``tg.n`` -> ``L.n(x, *rest)``; ``F.n`` -> ``L.nn.functional.n(x, *rest)``."""
    where, attr = _resolve(L, name)
    if where == "Tensor":
        if attr in ("T", "mT", "H", "mH"):
            return getattr(x, attr)
        inplace = attr.endswith("_") and not attr.endswith("__") or attr in _INPLACE_DUNDERS
        target = x * 1 if inplace else x
        out = getattr(target, attr)(*rest, **kw)
        if inplace:
            assert out is target, f"{name} must return the tensor it changed"
        return out
    if where == "F":
        return getattr(L.nn.functional, attr)(x, *rest, **kw)
    return getattr(L, attr)(x, *rest, **kw)


_INPLACE_DUNDERS = {"__iadd__", "__isub__", "__imul__", "__itruediv__", "__ipow__"}


def names_of(op: str, *, only=None, exclude=()) -> tuple:
    """The public names the surface table declares for ``op`` (every row of it)."""
    out = []
    for row in SURFACES:
        if row.op != op:
            continue
        out += [f"Tensor.{n}" for n in row.methods + row.properties + row.inplace]
        out += [f"tg.{n}" for n in row.functions] + [f"F.{n}" for n in row.nn]
    out = [n for n in dict.fromkeys(out) if n not in exclude]
    return tuple(n for n in out if only is None or n.split(".", 1)[1] in only)


def C(op, examples, *, names=None, only=None, exclude=(), call=call_default, **options):
    """A row: ``op``'s public names (or ``names``), called the same way on ``examples``."""
    names = tuple(names) if names is not None else names_of(op, only=only, exclude=exclude)
    assert names, f"no public names for {op!r}"
    CASES.append(Case(names, call, tuple(examples), op=op, **options))



# -- example sets ----------------------------------------------------------------------------
def unary(fill="normal"):
    return (E(S(fill=fill)), E(S(0, fill=fill)), E(S(5, fill=fill)), E(S(2, 3, fill=fill)),
            E(S(3, 4, fill=fill, layout="T")))  # fmt: skip


def binary(fill_a="normal", fill_b="normal"):
    return (
        E(S(fill=fill_a), S(fill=fill_b)),
        E(S(4, fill=fill_a), S(fill=fill_b)),
        E(S(2, 1, fill=fill_a), S(1, 3, fill=fill_b)),
        E(S(0, 3, fill=fill_a), S(3, fill=fill_b)),
        E(S(3, 4, fill=fill_a, layout="T"), S(4, fill=fill_b)),
    )


def with_number(number, fill="normal"):
    """An input and a Python number (``x + 2.5``)."""
    return (E(S(fill=fill), args=(number,)), E(S(2, 3, fill=fill), args=(number,)),
            E(S(3, 2, fill=fill, layout="T"), args=(number,)))  # fmt: skip


def reductions(fill="normal", empty=True):
    shapes = [S(fill=fill), S(4, fill=fill), S(2, 3, fill=fill), S(2, 3, 2, fill=fill, layout="T")]
    out = [E(shapes[0]), E(shapes[1]), E(shapes[2]), E(shapes[3])]
    for spec, dims in ((shapes[2], (0, 1, -1)), (shapes[3], (1, -1, (0, 2)))):
        for d in dims:
            out += [E(spec, dim=d), E(spec, dim=d, keepdim=True)]
    if empty:
        out += [E(S(0, 3, fill=fill), dim=1), E(S(0, 3, fill=fill))]
    return tuple(out)


def rng_for(case_index: int, example_index: int):
    return np.random.default_rng(1000 * case_index + example_index)


def call_on(method_form, function_form=None):
    """A calling form for ops whose arguments are not (input, *rest): ``method_form(x, ...)``
    for Tensor names, ``function_form(L, ...)`` for tg./F. names."""

    def call(L, name, *args, **kw):
        where, attr = _resolve(L, name)
        if where == "Tensor":
            return method_form(attr, *args, **kw)
        space = L.nn.functional if where == "F" else L
        return (function_form or _plain)(getattr(space, attr), *args, **kw)

    return call


def _plain(fn, *args, **kw):
    return fn(*args, **kw)


# == the table ==================================================================================
# -- pointwise functions ----------------------------------------------------------------------
C("exp", unary())
C("log", unary("positive"))
C("log1p", unary("positive"))
C("sqrt", unary("positive"))
C("rsqrt", unary("positive"))
C("sin", unary())
C("cos", unary())
C("abs", unary("away"))
C("sign", unary("away"))
C("erf", unary("wide"))
C("tanh", unary())
C("sigmoid", unary("wide") + (E(S(3, fill="normal")),))
C("relu", unary("away"))
C("neg", unary())
C("clone", unary())
C("pow", unary("positive"), names=("Tensor.square", "tg.square", "Tensor.square_"))
# integer and bool inputs: computed in float32, PyTorch's default float (numpy: float64); the
# in-place forms (x.exp_() of an int tensor) are errors in both
for _op in ("exp", "log", "log1p", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "erf"):
    C(_op, (E(S(2, 3, dtype="int64")), E(S(3, dtype="bool"))), rtol=1e-6, atol=1e-7,
      raises=RuntimeError)

# -- arithmetic: tensors, numbers, broadcasting; x.add(y, alpha=2) -------------------------------
for _op, _fill in (("add", "normal"), ("sub", "normal"), ("mul", "normal"), ("div", "away")):
    C(_op, binary("normal", _fill) + with_number(2.5) + with_number(-3), raises=RuntimeError)
C("add", (E(S(2, 3), S(3), alpha=2.0),), only=("add", "add_"))
C("sub", (E(S(2, 3), S(3), alpha=-0.5),), only=("sub", "sub_", "subtract"))
C("pow", with_number(2, "positive") + with_number(0.5, "positive") + with_number(-1.5, "positive")
  + with_number(0) + with_number(3) + binary("positive", "normal"),
  exclude=("Tensor.square", "tg.square", "Tensor.square_"), raises=RuntimeError)
C("pow", (E(S(3), args=(0.0,)),), names=("Tensor.pow",))  # d/dx x**0 at 0 is 0, not nan
C("pow_tensor", with_number(2.0) + with_number(-2.0))  # 2 ** x, (-2) ** x
# 0 ** x: PyTorch's second derivative is nan where the function is flat at 0 (ours: 0)
C("pow_tensor", with_number(0.0), second=False)
C("maximum", binary("quarter", "normal"))
C("minimum", binary("quarter", "normal"))
C("clamp", tuple(E(S(*s, fill="quarter", layout=lay), **b) for s, lay in (((), ""), ((2, 3), ""),
                 ((3, 4), "T")) for b in ({"min": -0.5, "max": 0.5}, {"min": -0.5}, {"max": 0.5},
                                          {"args": (-1.5, 1.5)})))  # fmt: skip
C("clamp", (E(S(2, 3, fill="quarter"), S(2, 3), S(3)), E(S(4, fill="quarter"), S(4)),
            E(S(3, 2, fill="quarter", layout="T"), S(2, fill="quarter"))))  # fmt: skip
C("clamp", (E(S(4, fill="quarter"), max=np.array([0.1, -0.2, 1.5, 0.0])),))


def _where(attr, x, y, condition):
    return x.where(condition, y)


C("where", (E(S(2, 3), S(3), condition=np.array([True, False, True])),
            E(S(), S(2, 2), condition=np.array([[True], [False]])),
            E(S(3, 2, layout="T"), S(), condition=np.eye(3, 2) > 0)),
  call=call_on(_where, lambda fn, x, y, condition: fn(condition, x, y)))  # fmt: skip
C("where", tuple(E(condition=np.array([True, False, True]), a=a, b=b)
                for a, b in ((1, 0), (1, 0.5), (2.5, False), (True, False))),
  names=("tg.where",), call=lambda L, name, condition, a, b: L.where(condition, a, b))
C("where", (E(S(2, 3), condition=np.array([True, False, True]), y=0.5),),
  call=call_on(lambda attr, x, condition, y: x.where(condition, y),
               lambda fn, x, condition, y: fn(condition, x, y)))


def _masked_fill(L, name, x, *value, mask, number=None):
    return call_default(L, name, x, mask, value[0] if value else number)


C("masked_fill", (E(S(2, 3), mask=np.array([1, 0, 1]), number=0.5),), call=_masked_fill,
  raises=RuntimeError)  # error
C("masked_fill", (E(S(2, 3), mask=np.array([True, False, True]), number=0.5),
                  E(S(3, 2, layout="T"), mask=np.eye(3, 2) > 0, number=-1.0),
                  E(S(2, 3), S(), mask=np.array([[True], [False]])),
                  E(S(), mask=np.array(True), number=2.0)), call=_masked_fill)  # fmt: skip


# -- comparisons and logic: bool results that never require grad -------------------------------
for _op in ("greater", "greater_equal", "less", "less_equal", "equal", "not_equal"):
    C(_op, binary("quarter", "quarter") + with_number(0.3, "quarter")
      + (E(S(3, dtype="int64"), S(3, dtype="int64")), E(S(2, 2), S(2, 2)), E(S(4), args=(1,))))
for _op in ("logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"):
    C(_op, (E(S(2, 3, dtype="bool"), S(3, dtype="bool")),
            E(S(4, dtype="bool"), S(4, dtype="bool"))))
C("bitwise_and", (E(S(3, dtype="int64"), S(3, dtype="int64")),), only=("bitwise_and", "__and__"))
for _op in ("logical_not", "bitwise_not"):
    C(_op, (E(S(2, 3, dtype="bool")), E(S(3, dtype="int64"))))
C("logical_and", (E(S(4), S(4, dtype="int64")),), only=("logical_and",))  # nonzero is true

# -- reductions ------------------------------------------------------------------------------
C("sum", reductions() + (E(S(2, 3), axis=1, keepdims=True), E(S(3, dtype="int64")),
                         E(S(2, 2, dtype="bool"), dim=0)))  # fmt: skip
C("mean", reductions() + (E(S(2, 3), axis=(0, 1)),))


def _with_dtype(L, name, x, *rest, dtype, **kw):
    """``dtype=`` given by name (``"float64"``) in the table, as each library's dtype."""
    return call_default(L, name, x, *rest, dtype=getattr(L, dtype), **kw)


# dtype=: the input is converted first (sum of an int tensor in float64, ...)
C("sum", (E(S(2, 3, dtype="int64"), dtype="float64"), E(S(2, 3), dim=1, dtype="float32"),
          E(S(3, dtype="bool"), dtype="int32")), call=_with_dtype, rtol=1e-6, atol=1e-7)
C("mean", (E(S(2, 3, dtype="int64"), dim=0, dtype="float64"), E(S(4), dtype="float32")),
  call=_with_dtype, rtol=1e-6, atol=1e-7)
# a 0-d input has one dim for PyTorch: 0 or -1 (anything else, or both, is an error)
_SCALAR_DIMS = (E(S(), dim=0), E(S(), dim=-1, keepdim=True), E(S(), axis=0), E(S(), dim=1),
                E(S(), dim=(0, -1)), E(S(), dim=(0,)))  # fmt: skip
for _op in ("sum", "mean", "all", "any"):
    C(_op, _SCALAR_DIMS, raises=(IndexError, RuntimeError))
C("var", (E(S(), dim=0), E(S(), dim=-1, correction=0), E(S(), dim=1)), raises=IndexError)
C("std", (E(S(), dim=0, unbiased=False), E(S(), dim=2)), raises=IndexError)
C("max", (E(S(), dim=0), E(S(), dim=(0,))), only=("amax",))
for _op in ("max", "min"):  # (values, indices) of a 0-d tensor along dim 0 or -1
    C(_op, (E(S(), dim=0), E(S(), dim=-1, keepdim=True), E(S(), dim=1)), raises=IndexError)
for _op in ("argmax", "argmin"):
    C(_op, (E(S(), dim=0), E(S(), dim=-1), E(S(), dim=1)), raises=IndexError)
C("all", (E(S(2, 3, dtype="bool")), E(S(2, 3), dim=1), E(S(2, 3, dtype="int64"), dim=0,
          keepdim=True), E(S(0, 3, dtype="bool")), E(S(2, 3, dtype="bool"), axis=-1),
          E(S(3, 2, layout="T"), dim=(0, 1))))  # fmt: skip
C("any", (E(S(2, 3, dtype="bool")), E(S(2, 3), dim=0), E(S(4, dtype="int64"), dim=0),
          E(S(0, 3, dtype="bool")), E(S(0, 3, dtype="bool"), dim=1)))  # fmt: skip
C("var", reductions() + (E(S(3, 4), dim=1, correction=0), E(S(3, 4), dim=0, unbiased=False),
                         E(S(5), unbiased=True), E(S(2, 5), args=(1, False, True))))  # fmt: skip
C("std", reductions() + (E(S(3, 4), dim=1, correction=0), E(S(5), unbiased=False)))
C("max", tuple(e for e in reductions("distinct", empty=False) if not isinstance(
    e.extra.get("dim"), tuple)) + (E(S(0, 3), dim=1), E(S(2, 3, fill="quarter"), S(3)),),
  raises=TypeError)
C("min", tuple(e for e in reductions("distinct", empty=False) if not isinstance(
    e.extra.get("dim"), tuple)) + (E(S(0, 3), dim=1), E(S(2, 3, fill="quarter"), S(3)),),
  raises=TypeError)
C("max", reductions("distinct", empty=False) + (E(S(0, 3), dim=1),), only=("amax",))
C("min", reductions("distinct", empty=False), only=("amin",))
C("argmax", reductions("distinct", empty=False), raises=TypeError)
C("argmin", reductions("distinct", empty=False), raises=TypeError)
C("cumsum", (E(S(5), dim=0), E(S(2, 3), dim=1), E(S(2, 3), dim=-2),
             E(S(3, 4, layout="T"), dim=0), E(S(), dim=0), E(S(0, 2), dim=0),
             E(S(3, dtype="int64"), dim=0)))  # fmt: skip
C("cumsum", (E(S(3, dtype="int64"), dim=0, dtype="float64"), E(S(2, 3), dim=1, dtype="float32"),
             E(S(), dim=1, dtype="float64")), call=_with_dtype, rtol=1e-6, atol=1e-7,
  raises=(IndexError, RuntimeError))  # fmt: skip
for _op in ("softmax", "log_softmax"):  # int inputs need dtype=; empty inputs stay empty
    C(_op, (E(S(2, 3, dtype="int64"), dim=1, dtype="float64"), E(S(2, 3), dim=0, dtype="float32"),
            E(S(0, 3), dim=0, dtype="float64")), call=_with_dtype, rtol=1e-6, atol=1e-7)
    C(_op, (E(S(2, 3, dtype="int64"), dim=1), E(S(0, 3), dim=0), E(S(3, 0), dim=0)),
      raises=NotImplementedError)
C("softmax", (E(S(2, 3), dim=1), E(S(2, 3), dim=0), E(S(4), dim=-1), E(S(3, 4, layout="T"), dim=1),
              E(S(2, 3, 2), dim=1), E(S(0, 3), dim=1)))  # fmt: skip
C("log_softmax", (E(S(2, 3), dim=1), E(S(4), dim=0), E(S(3, 4, layout="T"), dim=-1),
                  E(S(2, 0), dim=0)))  # fmt: skip

# -- shapes: views, joins, splits, indexing ------------------------------------------------------
C("reshape", (E(S(2, 3), args=(3, 2)), E(S(2, 3), args=((6,),)), E(S(2, 3), args=(-1,)),
              E(S(3, 4, layout="T"), args=(2, -1)), E(S(), args=(1, 1)), E(S(0, 3), args=(3, 0)),
              E(S(2, 3), args=((2, 2),))), only=("reshape",), raises=(RuntimeError, TypeError))
C("reshape", (E(S(2, 3), args=(3, 2)), E(S(2, 3), args=((-1,),)),
              E(S(3, 4, layout="T"), args=(12,)), E(S(3, 4, layout="T"), args=(3, 4))),
  only=("view",), raises=RuntimeError)
C("reshape", (E(S(2, 3), S(3, 2)), E(S(4, 3, layout="T"), S(12))), only=("reshape_as", "view_as"),
  raises=RuntimeError)
C("flatten", (E(S(2, 3, 2)), E(S(2, 3, 2), args=(1,)), E(S(2, 3, 2), args=(0, 1)),
              E(S(2, 3, 4, layout="T"), args=(1, -1)), E(S())))  # fmt: skip
C("expand_dims", (E(S(2, 3), args=(0,)), E(S(2, 3), args=(-1,)), E(S(), args=(0,)),
                  E(S(3, 4, layout="T"), args=(1,))))  # fmt: skip
C("squeeze", (E(S(1, 3, 1)), E(S(1, 3, 1), args=(0,)), E(S(1, 3, 1), args=(1,)),
              E(S(1, 3, 1), dim=-1), E(S()), E(S(3, 1, layout="T"), args=(0,))))  # fmt: skip
C("broadcast_to", (E(S(3), args=(2, 3)), E(S(2, 1), args=(2, -1, 4)), E(S(), args=((3,),)),
                   E(S(1, 3, layout="T"), args=(4, 3))), only=("expand",))  # fmt: skip
C("broadcast_to", (E(S(3), args=((2, 3),)), E(S(2, 1), args=((3, 2, 4),))), only=("broadcast_to",))
C("broadcast_to", (E(S(3), S(2, 3)), E(S(2, 1), S(3, 2, 4)), E(S(), S(2)), E(S(2), S(3))),
  only=("expand_as",), raises=RuntimeError)
C("astype", (E(S(2, 3), S(3, dtype="float32")), E(S(3, dtype="int64"), S(2)),
             E(S(2), S(2, dtype="int64")), E(S(2), S(2))), only=("type_as",), rtol=1e-6)
C("repeat", (E(S(2, 3, 2), args=(2, 1)), E(S(2, 3), args=(2,))),
  raises=RuntimeError)  # fewer repeats than dims
C("repeat", (E(S(3), args=(2,)), E(S(2, 3), args=(2, 1)), E(S(2, 3), args=((1, 2, 3),)),
             E(S(2, 3, layout="T"), args=(2, 2)), E(S(), args=(3,))))  # fmt: skip
C("permute", (E(S(2, 3, 4), args=(2, 0, 1)), E(S(2, 3, 4), args=((1, 0, 2),)), E(S(), args=()),
              E(S(), args=((),)),
              E(S(2, 3, 4, layout="T"), args=(0, 2, 1))), exclude=("Tensor.T",),
  raises=TypeError)  # fmt: skip
C("permute", (E(S(2, 3)), E(S(4)), E(S(3, 4, layout="T"))), only=("T",))
C("transpose", (E(S(2, 3), args=(0, 1)), E(S(2, 3, 4), args=(-1, 0)), E(S(2, 3), args=(1, 1)),
                E(S(4), args=(0, 0)), E(S(3, 4, layout="T"), args=(0, 1))),
  only=("transpose", "swapaxes", "swapdims"))  # fmt: skip
C("transpose", (E(S(2, 3)), E(S(4)), E(S()), E(S(3, 4, layout="T"))), only=("t",))
C("transpose", (E(S(2, 3)), E(S(2, 3, 4)), E(S(2, 3, 4, layout="T"))), only=("mT",))
C("getitem", (E(S(5, 2), args=(2,)), E(S(7, 2), args=([2, 2, 3],)), E(S(5, 3), args=(2, 1)),
              E(S(4, 3, layout="T"), args=(2,)), E(S(0, 3), args=(2,))), only=("split",))
C("getitem", (E(S(5, 2), args=(2,)), E(S(6, 3), args=(3, 1)), E(S(4, 3, layout="T"), args=(2,)),
              E(S(0, 3), args=(2,)), E(S(3, 0), args=(3, 1)), E(S(4), args=(0,))),
  only=("chunk",), raises=RuntimeError)  # fmt: skip
C("flatten", (E(S(), args=(0,)), E(S(), args=(-1, 0)), E(S(), args=(1,)), E(S(), args=(0, 1))),
  raises=IndexError)
C("squeeze", (E(S(), args=(0,)), E(S(), dim=-1), E(S(), args=(1,))), raises=IndexError)
C("getitem", (E(S(3, 2)), E(S(3, 2), args=(1,)), E(S(2, 4, layout="T"), args=(0,))),
  only=("unbind",))  # fmt: skip
C("gather", (E(S(3, 4), args=(1, np.array([[0, 3], [1, 1], [2, 0]]))),
             E(S(3, 4), args=(0, np.array([[0, 2, 2, 1]]))),
             E(S(4, 3, layout="T"), args=(-1, np.array([[3], [0], [1]]))),
             E(S(3, 4), args=(1, np.zeros((2, 0), dtype=np.int64)))),
  raises=RuntimeError)  # fmt: skip


def _join(attr, *tensors, **kw):
    raise AssertionError("cat/stack have no Tensor form")


C("cat", (E(S(2, 3), S(1, 3)), E(S(2, 3), S(2, 1), dim=1), E(S(2, 3), S(0, 3)),
          E(S(3, 2, layout="T"), S(2, 2), dim=-1), E(S(4), S(4))),
  call=call_on(_join, lambda fn, *xs, **kw: fn(list(xs), **kw)), raises=RuntimeError)  # fmt: skip
C("cat", (E(S(2, 3, dtype="float32"), S(1, 3, dtype="int64")), E(S(2, dtype="int64"),
          S(2, dtype="bool")), E(S(1, 2), S(1, 2, dtype="float32"), dim=1)),
  call=call_on(_join, lambda fn, *xs, **kw: fn(list(xs), **kw)), rtol=1e-6)  # promotion
C("stack", (E(S(2, 3), S(2, 3)), E(S(2, 3), S(2, 3), dim=2), E(S(), S()),
            E(S(3, 2, layout="T"), S(2, 3), dim=-1)),
  call=call_on(_join, lambda fn, *xs, **kw: fn(xs, **kw)), raises=RuntimeError)  # fmt: skip

# -- linear algebra ------------------------------------------------------------------------------
C("matmul", (E(S(2, 3), S(3, 4)), E(S(3), S(3)), E(S(2, 3), S(3)), E(S(3), S(3, 4)),
             E(S(2, 2, 3), S(3, 4)), E(S(2, 1, 2, 3), S(3, 3, 2)), E(S(0, 3), S(3, 2)),
             E(S(3, 2, layout="T"), S(4, 3, layout="T")), E(S(2, 3), S(4, 3))),
  exclude=("Tensor.mm", "tg.mm"), raises=RuntimeError)  # fmt: skip
C("matmul", (E(S(2, 3), S(3, 4)), E(S(3, 2, layout="T"), S(3, 3)), E(S(3), S(3, 4))),
  only=("mm",), raises=RuntimeError)  # fmt: skip

# -- activations of tg.nn.functional (ops of the library) -----------------------------------------
C("leaky_relu", unary("away") + (E(S(2, 3, fill="away"), args=(0.2,)),
                                 E(S(4, fill="away"), negative_slope=0.5)))  # fmt: skip
C("gelu", unary("wide") + (E(S(2, 3, fill="wide"), approximate="tanh"),
                           E(S(3), approximate="fast")), raises=RuntimeError)  # fmt: skip
C("softplus", unary("wide") + (E(S(2, 3, fill="wide"), beta=2.0, threshold=3.0),))


# -- tg.nn.functional: the functions written out (PyTorch's signatures) ------------------------
def F(name, examples, **options):
    C(None, examples, names=(f"F.{name}",), **options)


_target = np.array([0, 2, 1, 2])
F("relu", unary("away") + (E(S(3), inplace=True),),
  raises=RuntimeError)  # in place on a leaf: an error in both
F("sigmoid", unary("wide"))
F("tanh", unary())
F("softmax", (E(S(2, 3), args=(1,)), E(S(2, 3), dim=0), E(S(4, 3, layout="T"), dim=-1)))
F("log_softmax", (E(S(2, 3), args=(1,)), E(S(2, 3), dim=0), E(S(4, 3, layout="T"), dim=-1)))
F("linear", (E(S(4, 3), S(2, 3)), E(S(4, 3), S(2, 3), S(2)), E(S(3), S(2, 3), S(2)),
             E(S(2, 4, 3), S(2, 3), S(2)), E(S(3, 4, layout="T"), S(2, 3, layout="T"))),
  raises=RuntimeError)
F("dropout", (E(S(3, 4), p=0.0), E(S(3, 4), training=False), E(S(3, 4), p=1.0),
              E(S(3), p=1.5)), raises=ValueError)  # fmt: skip
F("one_hot", (E(S(5, dtype="int64", fill="classes")), E(S(5, dtype="int64", fill="classes"),
              num_classes=6), E(S(2, 3, dtype="int64", fill="classes"), args=(4,)),
              E(S(3, dtype="int64"), num_classes=4)), second=False,
  raises=RuntimeError)  # fmt: skip
F("cross_entropy", (
    E(S(4, 3), args=(_target,)),
    E(S(4, 3), args=(_target,), reduction="sum"),
    E(S(4, 3), args=(_target,), reduction="none"),
    E(S(4, 3), args=(np.array([0, -100, 1, 2]),)),
    E(S(4, 3), args=(np.array([0, 1, 1, 2]),), ignore_index=1),
    E(S(4, 3), args=(_target,), weight=np.array([0.5, 2.0, 1.0])),
    E(S(4, 3), args=(np.array([0, -100, 1, 2]),), weight=np.array([0.5, 2.0, 1.0])),
    E(S(4, 3), args=(_target,), label_smoothing=0.1),
    E(S(4, 3), args=(np.array([0, -100, 1, 2]),), label_smoothing=0.2,
      weight=np.array([0.5, 2.0, 1.0])),
    E(S(4, 3), S(4, 3, fill="unit")),
    E(S(4, 3), S(4, 3, fill="unit"), label_smoothing=0.1, reduction="sum"),
    E(S(3), args=(np.array(1),)),
    E(S(2, 3, 4), args=(np.array([[0, 1, 2, 0], [2, 2, 1, 0]]),)),
    E(S(0, 3), args=(np.zeros(0, dtype=np.int64),)),
    E(S(3, 4, layout="T"), args=(np.array([3, 0, 1]),)),
    E(S(4, 3), args=(np.array([0, 3, 1, 2]),)),
    E(S(4, 3), args=(_target,), reduction="avg"),
), raises=(IndexError, ValueError))
F("nll_loss", (
    E(S(4, 3), args=(_target,)),
    E(S(4, 3), args=(np.array([0, -100, 1, 2]),), reduction="sum"),
    E(S(4, 3), args=(_target,), weight=np.array([0.5, 2.0, 1.0]), reduction="none"),
    E(S(3), args=(np.array(2),)),
    E(S(0, 3), args=(np.zeros(0, dtype=np.int64),)),
    E(S(4, 3), args=(np.array([-100, -100, -100, -100]),)),
    # NOTE [The plain case of nll_loss]: no weights, no target equal to ignore_index
    E(S(4, 3), args=(_target,), reduction="none"),
    E(S(2, 3, 4), args=(np.array([[0, 1, 2, 0], [2, 2, 1, 0]]),), reduction="sum"),
    E(S(4, 3), args=(np.array([0, 1, 1, 0]),), ignore_index=2),  # above every target
    E(S(4, 3), args=(np.array([0, 2, 2, 0]),), ignore_index=1),  # between them, absent
    E(S(3), args=(np.array(2),), reduction="none"),  # one sample: a 0-d target
    E(S(3), args=(np.array(0),), reduction="sum"),
    E(S(5, 4), args=(np.array([3, 3, 0, 3, 1]),)),  # a class picked several times
))
F("mse_loss", (E(S(2, 3), S(2, 3)), E(S(4), S(4), reduction="sum"),
               E(S(3, 2, layout="T"), S(3, 2), reduction="none"), E(S(), S())))
F("l1_loss", (E(S(2, 3), S(2, 3)), E(S(4), S(4), reduction="sum"),
              E(S(3, 2, layout="T"), S(3, 2), reduction="none")))
F("binary_cross_entropy", (E(S(2, 3, fill="unit"), S(2, 3, fill="unit")),
                           E(S(4, fill="unit"), S(4, fill="unit"), reduction="sum"),
                           E(S(4, fill="unit"), S(4, fill="unit"), weight=np.array([1.0, 2, 0, 1])),
                           E(S(3, fill="unit"), args=(np.array([0.0, 1.0, 1.0]),)),
                           E(S(2, fill="wide"), args=(np.array([0.0, 1.0]),))),
  raises=RuntimeError)  # fmt: skip
# probabilities of exactly 0 and 1: PyTorch's closed-form gradient, finite (its second
# derivative there is another regularisation of 1/0: not compared)
F("binary_cross_entropy", (E(S(3, 4, fill="unit_edges"), args=(np.full((3, 4), 0.5),)),
                           E(S(8, fill="unit_edges"), S(8, fill="unit"), reduction="sum")),
  second=False)  # fmt: skip
F("binary_cross_entropy_with_logits", (
    E(S(2, 3, fill="wide"), S(2, 3, fill="unit")),
    E(S(4, fill="wide"), S(4, fill="unit"), reduction="none",
      pos_weight=np.array([1.0, 2, 3, 0.5])),
    E(S(4, fill="wide"), S(4, fill="unit"), weight=np.array([1.0, 2, 0, 1]), reduction="sum"),
    E(S(3, fill="wide"), args=(np.array([0.0, 1.0, 1.0]),)),
))
F("conv2d", (E(S(2, 3, 5, 5), S(4, 3, 3, 3)), E(S(2, 3, 5, 5), S(4, 3, 3, 3), S(4), padding=1),
             E(S(1, 4, 6, 5), S(4, 2, 2, 3), stride=2, groups=2, dilation=(1, 2))))  # fmt: skip
F("max_pool2d", (E(S(2, 3, 6, 6, fill="distinct"), args=(2,)),
                 E(S(1, 2, 5, 5, fill="distinct"), args=(3, 2, 1))), second=False)  # fmt: skip
F("avg_pool2d", (E(S(2, 3, 6, 6), args=(2,)), E(S(1, 2, 5, 5), args=(3, 2, 1), ceil_mode=True)))
F("adaptive_avg_pool2d", (E(S(2, 3, 6, 6), args=(2,)), E(S(1, 2, 4, 6), args=((1, 3),))))
F("pad", (E(S(2, 3), args=((1, 2),)), E(S(2, 3, 4), args=((1, 0, 2, 1),), value=0.5)))


def _batch_norm(L, name, x, *weight_bias, args, **kw):
    return L.nn.functional.batch_norm(x, *args, *weight_bias, **kw)


F("batch_norm", (E(S(4, 3), args=(None, None), training=True),
                 E(S(2, 3, 2, 2), S(3, fill="positive"), S(3), args=(None, None), training=True)),
  call=_batch_norm)
F("layer_norm", (E(S(2, 3), args=((3,),)), E(S(2, 3, 4), S(3, 4), S(3, 4), args=((3, 4),))),
  call=lambda L, name, x, *wb, args: L.nn.functional.layer_norm(x, *args, *wb))
F("embedding", (E(S(5, 3), args=(np.array([[0, 4], [2, 2]]),)),),
  call=lambda L, name, w, args: L.nn.functional.embedding(_as(L, args[0]), w))


def _as(L, value):
    return value if not isinstance(value, np.ndarray) else L.tensor(value)


# -- Tensor methods written out in tensor.py: indexing, dtypes, conversions --------------------
def T(name, examples, call, **options):
    C(None, examples, names=(f"Tensor.{name}",), call=call, **options)


_INDEXES = [2, -1, slice(1, None), (slice(None), 1), (1, slice(None, 2)), (Ellipsis, 0), None,
            (None, slice(None, None, 2)), [0, 2, 2], np.array([3, 0]), np.array([True, False,
            True, False]), (np.array([0, 1]), np.array([1, 0])), np.array(1)]  # fmt: skip
T("__getitem__", tuple(E(S(4, 3), index=i) for i in _INDEXES)
  + (E(S(3, 4, layout="T"), index=(slice(None), 2)), E(S(5), index=3)),
  call=lambda L, name, x, index: x[_index(L, index)])


def _index(L, index):
    if isinstance(index, tuple):
        return tuple(_index(L, i) for i in index)
    return L.tensor(index) if isinstance(index, np.ndarray) else index


def _setitem(L, name, x, *value, index, number=None):
    y = x * 1
    y[_index(L, index)] = value[0] if value else number
    return y


T("__setitem__", (E(S(4, 3), S(3), index=1), E(S(4, 3), index=(slice(None), 0), number=2.5),
                  E(S(4, 3), S(2, 1), index=slice(1, 3)), E(S(4, 3), S(), index=np.array([0, 2])),
                  E(S(4, 3), index=np.array([True, False, True, False]), number=0.0),
                  E(S(3, 4, layout="T"), S(4), index=0), E(S(4), S(2), index=slice(0, 4, 2)),
                  E(S(4, 3), S(5), index=0)), call=_setitem, raises=RuntimeError)  # fmt: skip
T("__iter__", (E(S(3, 2)), E(S(2)), E(S())), call=lambda L, name, x: tuple(x), raises=TypeError)
T("__len__", (E(S(3, 2)), E(S())), call=lambda L, name, x: len(x), raises=TypeError)
T("__contains__", (E(S(3, dtype="int64"), value=1), E(S(2, 2), value=0.5), E(S(0), value=0),
                   E(S(2), S(), value=None)),
  call=lambda L, name, x, *other, value: (other[0] if other else value) in x)  # fmt: skip
for _name in ("float", "double", "half", "long", "int", "bool"):
    T(_name, (E(S(2, 3)), E(S(3, dtype="int64")), E(S(2, dtype="bool"))),
      call=lambda L, name, x: getattr(x, name.split(".")[1])(), rtol=1e-3, atol=1e-3)
T("to", (E(S(2, 3), dtype="float32"), E(S(2, 3), dtype="int64"), E(S(3, dtype="int64"),
         dtype="float64"), E(S(2), S(2, dtype="float32"), dtype=None)),
  call=lambda L, name, x, *other, dtype: x.to(other[0] if other else getattr(L, dtype)),
  rtol=1e-6, atol=1e-7)  # fmt: skip
T("type", (E(S(2, 3), dtype="float32"),), call=lambda L, name, x, dtype: x.type(getattr(L, dtype)),
  rtol=1e-6, atol=1e-7)
for _name in ("item", "tolist"):
    T(_name, (E(S()), E(S(1)), E(S(2, 2)), E(S(dtype="int64"))),
      call=lambda L, name, x: getattr(x, name.split(".")[1])(), raises=RuntimeError)
for _name in ("size", "dim", "numel", "nelement", "ndimension", "is_floating_point",
              "is_contiguous", "contiguous", "detach"):
    T(_name, (E(S(2, 3)), E(S()), E(S(3, 4, layout="T")), E(S(2, dtype="int64"))),
      call=lambda L, name, x: _plain_value(getattr(x, name.split(".")[1])()))
# (PyTorch refuses numpy() on a tensor that requires grad; here it is allowed: see the docs)
T("numpy", (E(S(2, 3)), E(S(3, 4, layout="T")), E(S(2, dtype="int64"))),
  call=lambda L, name, x: x.detach().numpy())
T("size", (E(S(2, 3), args=(1,)), E(S(2, 3), args=(-1,))), call=lambda L, name, x, *a: x.size(*a))
for _name in ("shape", "ndim", "dtype", "requires_grad", "is_leaf"):
    T(_name, (E(S(2, 3)), E(S(dtype="int64"))), call=lambda L, name, x: getattr(x, name[7:]))
for _name, _args in (("new_zeros", (2, 3)), ("new_ones", ((2,),)), ("new_full", ((2,), 1.5)),
                     ("new_tensor", ([1.0, 2.0],)), ("new_empty", (0,))):
    T(_name, (E(S(2, dtype="float64")), E(S(2, dtype="int64"))),
      call=lambda L, name, x, a=_args: getattr(x, name.split(".")[1])(*a))


def _plain_value(v):
    return v.detach() if hasattr(v, "detach") and hasattr(v, "requires_grad") else v


# -- tg. factories and helpers -----------------------------------------------------------------
def G(name, examples, call, **options):
    C(None, examples, names=(f"tg.{name}",), call=call, **options)


_DATA = [[1, 2], [3, 4]], [1.0, 2], [True, False], 3, 2.5, [], [[1.5]], np.arange(3),
_DATA += (np.float64(2.0), np.ones((2, 2), np.float32), np.array([1, 2], np.int32))
G("tensor", tuple(E(data=d) for d in _DATA) + (E(data=[1, 2], dtype="float64"),),
  call=lambda L, name, data, dtype=None: L.tensor(data, dtype=dtype and getattr(L, dtype)))
for _name in ("as_tensor", "from_numpy"):  # (the runner makes ``data`` a tensor: back to numpy)
    G(_name, (E(data=np.arange(3.0)), E(data=np.ones((2, 2), np.int64))),
      call=lambda L, name, data: getattr(L, name[3:])(data.numpy()))
for _name in ("zeros", "ones", "empty"):
    G(_name, (E(args=(2, 3)), E(args=((2,),)), E(args=(3,), dtype="int64"), E(args=())),
      call=lambda L, name, args, dtype=None: _shaped_only(
          name, getattr(L, name[3:])(*args, dtype=dtype and getattr(L, dtype))), raises=TypeError)
G("full", (E(args=((2,), 7)), E(args=((2, 2), 1.5)), E(args=((1,), True))),
  call=lambda L, name, args: L.full(*args))
G("arange", (E(args=(5,)), E(args=(1, 4)), E(args=(0.0, 1.0, 0.25)),
             E(args=(5,), dtype="float64")),
  call=lambda L, name, args, dtype=None: L.arange(*args, dtype=dtype and getattr(L, dtype)))
G("linspace", (E(args=(0, 1, 5)), E(args=(-1.0, 1.0, 3))),
  call=lambda L, name, args: L.linspace(*args))
G("eye", (E(args=(3,)), E(args=(2, 3))), call=lambda L, name, args: L.eye(*args))
for _name in ("zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"):
    G(_name, (E(S(2, 3)), E(S(2, dtype="int64"))) if "rand" not in _name else (E(S(2, 3)),),
      call=lambda L, name, x: _shaped_only(name, getattr(L, name[3:])(x)))
G("full_like", (E(S(2, 3), args=(1.5,)), E(S(2, dtype="int64"), args=(3,))),
  call=lambda L, name, x, args: L.full_like(x, *args))
for _name, _args in (("rand", (2, 3)), ("randn", (2, 3)), ("randint", (0, 5, (3,))),
                     ("randn", ((2,),))):
    G(_name, (E(args=_args),), call=lambda L, name, args: _shaped_only(name, getattr(
        L, name[3:])(*args)))  # fmt: skip
G("numel", (E(S(2, 3)), E(S())), call=lambda L, name, x: L.numel(x))
G("is_tensor", (E(S(2)), E(value=[1.0])), call=lambda L, name, *x, value=None: L.is_tensor(
    x[0] if x else value))  # fmt: skip
G("manual_seed", (E(args=(0,)),), call=lambda L, name, args: L.manual_seed(*args) and None)
for _name in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
              "half", "float", "double", "short", "int", "long"):
    G(_name, (E(),), call=lambda L, name: L.zeros(2, dtype=getattr(L, name[3:])))


def _shaped_only(name, t):
    """Random or uninitialised tensors: only the shape and dtype can agree."""
    return ("shape and dtype", tuple(t.shape), str(t.dtype).removeprefix("torch."))


def _inplace_call(L, name, x, *rest, **kw):
    y = x * 1  # a non-leaf: in-place ops record on it
    out = getattr(y, name.split(".")[1])(*rest, **kw)
    assert out is y
    return y


T("fill_", (E(S(2, 3), args=(1.5,)), E(S(3, dtype="int64"), args=(2,)), E(S(2), S(), args=())),
  call=_inplace_call)
T("zero_", (E(S(2, 3)), E(S(3, 4, layout="T"))), call=_inplace_call)
T("copy_", (E(S(2, 3), S(2, 3)), E(S(2, 3), S(3)), E(S(3, 2, layout="T"), S(3, 2)),
            E(S(2, 3), S(4))), call=_inplace_call, raises=RuntimeError)  # fmt: skip
T("cpu", (E(S(2, 3)),), call=lambda L, name, x: x.cpu())
T("requires_grad_", (E(S(2)),), call=lambda L, name, x: x.detach().requires_grad_().requires_grad)
G("from_dlpack", (E(data=np.arange(4.0)), E(data=np.ones((2, 3), np.int64))),
  call=lambda L, name, data: L.from_dlpack(data))


# -- attention (nn/functional.py): PyTorch's math kernel, its mask conventions -------------------
_ATT_MASK = np.array([[True, False, True, True, False], [False] * 5, [True] * 5])  # row 1: none
_PAD_MASK = np.array([[False, False, True, False, True], [False, True, False, False, False]])
F("scaled_dot_product_attention", (
    E(S(2, 3, 4), S(2, 5, 4), S(2, 5, 3)),
    E(S(1, 2, 4, 4), S(1, 2, 4, 4), S(1, 2, 4, 4), is_causal=True),
    E(S(3, 4), S(5, 4), S(5, 2), attn_mask=_ATT_MASK),  # bool: True may attend
    E(S(3, 4), S(5, 4), S(5, 2), S(3, 5)),  # a float mask is added (and differentiated)
    E(S(2, 3, 4), S(2, 5, 4), S(2, 5, 3), scale=0.25),
))  # fmt: skip


def _mha(L, name, q, k, v, w_in, b_in, w_out, b_out, **kw):
    out = L.nn.functional.multi_head_attention_forward(
        q, k, v, 4, 2, w_in, b_in, None, None, False, 0.0, w_out, b_out, **kw)
    return tuple(o for o in out if o is not None)


_MHA = (S(3, 2, 4), S(5, 2, 4), S(5, 2, 4), S(12, 4), S(12), S(4, 4), S(4))
F("multi_head_attention_forward", (
    E(*_MHA), E(*_MHA, need_weights=False), E(*_MHA, key_padding_mask=_PAD_MASK),
    E(*_MHA, attn_mask=~_ATT_MASK[[0, 0, 1]], average_attn_weights=False),  # True: may not
    E(S(3, 4), S(5, 4), S(5, 4), *_MHA[3:]),  # unbatched
), call=_mha)  # fmt: skip
# the ops of issue 24 (pointwise, sorting, indexing, reductions, linear algebra, activations,
# random fills) have their rows in torch_torchops.py, the layer functions composed of ops
# (in ops/conv.py, pooling.py, normalization.py ...) theirs in torch_layers.py; they join the
# table here
import tests.opinfo.torch_layers  # noqa: E402, F401
import tests.opinfo.torch_torchops  # noqa: E402, F401


# -- PyTorch's legacy spellings the lectures use (tests/eager/test_factories_pytorch.py) -------
def _detach_in_place(L, name, x):
    y = x * 1  # a non-leaf made by an op: detach_ cuts it off the graph, in place
    out = y.detach_()
    return out is y, y.requires_grad, y.is_leaf, y.grad_fn is None, y.detach()


T("detach_", (E(S(2, 3)), E(S(2, dtype="int64"))), call=_detach_in_place)
for _name in ("is_cpu", "is_cuda"):
    T(_name, (E(S(2, 3)), E(S(dtype="int64"))), call=lambda L, name, x: getattr(x, name[7:]))
for _name in ("FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ByteTensor",
              "BoolTensor"):  # fmt: skip
    G(_name, (E(data=[1, 0, 2]), E(data=[[1.5, 0.0]]), E(data=np.arange(3)), E(data=(2, 3))),
      call=lambda L, name, data: getattr(L, name[3:])(data), raises=TypeError)
    G(_name, (E(args=(2, 3)), E(args=()), E(args=(0,))),
      call=lambda L, name, args: _shaped_only(name, getattr(L, name[3:])(*args)))
import tests.opinfo.torch_layers2  # noqa: E402, F401
import tests.opinfo.torch_missing  # noqa: E402, F401
import tests.opinfo.torch_names2  # noqa: E402, F401
