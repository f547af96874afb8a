"""Rows of the differential table for the ops PyTorch's tutorials and language-model lectures
call (issue 24): each name against PyTorch (values, dtypes, gradients, errors). Imported at
the end of ``cases.py``, whose helpers it uses."""

from __future__ import annotations

import numpy as np

from tests.compare.cases import (
    C,
    E,
    S,
    binary,
    call_default,
    unary,
    with_number,
)  # fmt: skip

__all__: list = []

# -- pointwise: rounding, remainders, tests, trigonometry ---------------------------------------
for _op in ("floor", "ceil", "trunc", "round"):
    C(_op, unary("wide") + (E(S(2, 3, dtype="int64")),))
C("frac", unary("wide"))
C("round", (E(S(2, 3, fill="wide"), decimals=1), E(S(4, fill="wide"), decimals=-1),
            E(S(3, fill="wide"), decimals=2)), only=("round", "round_"))  # fmt: skip
for _op, _fill in (("tan", "normal"), ("atan", "wide"), ("sinh", "normal"), ("cosh", "normal"),
                   ("expm1", "normal"), ("exp2", "normal"), ("log2", "positive"),
                   ("log10", "positive"), ("reciprocal", "away"), ("asin", "unit"),
                   ("acos", "unit")):
    C(_op, unary(_fill) + (E(S(2, 3, dtype="int64")),), rtol=1e-6, atol=1e-7)
C("tan", (E(S(3, fill="unit")),))
for _op in ("fmod", "remainder"):
    C(_op, binary("wide", "away") + with_number(1.5, "wide") + with_number(-2, "wide")
      + (E(S(3, dtype="int64"), S(3, dtype="int64", fill="classes"), ),
         E(S(4, dtype="int64"), args=(3,))), exclude=("Tensor.__rmod__",))
# 7 % x: PyTorch has no derivative for a number's remainder by a tensor (here: d/dx exists)
C("remainder", (E(S(4, dtype="int64", fill="classes"), args=(7,)),
                E(S(3, dtype="float32"), args=(2.5,))), names=("Tensor.__rmod__",),
  call=lambda L, name, x, *a: call_default(L, name, x.detach() + 5, *a), rtol=1e-6)
C("remainder", (E(S(3, dtype="int64"), args=(0,)),), only=("remainder",))  # int by 0: error
C("floor_divide", (E(S(2, 3, dtype="int64"), S(3, dtype="int64", fill="classes")),
                   E(S(4, dtype="int64"), args=(2,)), E(S(4, dtype="int64"), args=(-3,)),
                   E(S(3, dtype="int64"), args=(0,))))  # fmt: skip
C("floor_divide", (E(S(2, 3, dtype="float32"), args=(2.0,)),), rtol=1e-6,
  names=("Tensor.__floordiv__", "tg.floor_divide"),
  call=lambda L, name, x, *a: call_default(L, name, x.detach(), *a))  # no derivative in either
C("floor_divide", (E(S(4, dtype="int64"), args=(7,)),), names=("Tensor.__rfloordiv__",))
for _op in ("isnan", "isinf", "isfinite"):
    C(_op, unary() + (E(S(3, dtype="int64")),
                      E(data=np.array([np.nan, np.inf, -np.inf, 1.0]))),
      call=lambda L, name, *x, data=None: call_default(L, name, *(x or (_t(L, data),))))
C("nan_to_num", (E(S(2, 3)), E(S(3), nan=1.5, posinf=2.0, neginf=-2.0),
                 E(S(3, dtype="int64"))))  # fmt: skip
C("nan_to_num", (E(data=np.array([np.nan, np.inf, -np.inf, 1.0]), nan=0.5),
                 E(data=np.array([np.nan, np.inf, -np.inf, 1.0]), posinf=9.0)),
  call=lambda L, name, data, **kw: call_default(L, name, _t(L, data, True), **kw))
C("atan2", binary("wide", "wide") + (E(S(3, dtype="int64"), S(3, dtype="int64")),),
  rtol=1e-6, atol=1e-7)
C("clamp", (E(S(2, 3, fill="quarter"), args=(0.5,)), E(S(3, fill="quarter"), S(3)),
            E(S(3, 2, fill="quarter", layout="T"), S(2, fill="quarter"))),
  only=("clamp_min", "clamp_max", "clamp_min_", "clamp_max_"))  # fmt: skip
C(None, (E(S(2, 3), S(2, 3), args=(0.3,)), E(S(4), S(4), S(4, fill="unit")),
         E(S(2, 3), S(3), args=(1.5,)), E(S(3, 2, layout="T"), S(3, 2), S(2, fill="unit"))),
  names=("Tensor.lerp", "tg.lerp"))  # fmt: skip


def _t(L, data, requires_grad=False):
    return L.tensor(data, requires_grad=requires_grad)


_close_a = np.array([1.0, 2.0, np.nan, np.inf, 1e-9, 3.0])
_close_b = np.array([1.0 + 1e-6, 2.1, np.nan, np.inf, 0.0, -3.0])
for _name in ("isclose", "allclose"):
    C("isclose", (E(a=_close_a, b=_close_b), E(a=_close_a, b=_close_b, equal_nan=True),
                  E(a=_close_a, b=_close_b, rtol=0.1, atol=0.0),
                  E(a=np.arange(3), b=np.array([0, 1, 3]), atol=0),
                  E(a=_close_a, b=_close_b.astype(np.float32))),
      only=(_name,), call=lambda L, name, a, b, **kw: call_default(L, name, a, b, **kw))
C("equal", (E(S(2, 3), S(2, 3)), E(a=np.arange(3), b=np.arange(3)),
            E(a=np.arange(3), b=np.arange(4)), E(a=np.zeros((2, 1)), b=np.zeros(2))),
  only=("equal",), call=lambda L, name, *x, a=None, b=None: call_default(
      L, name, *(x or (a, b))))  # fmt: skip
