"""Rows of the differential table for the ops PyTorch's tutorials and language-model lectures
call (issue 24): each name against PyTorch (values, dtypes, gradients, errors). Imported at
the end of ``torch_core.py``, whose helpers it uses."""

from __future__ import annotations

import numpy as np

from tests.opinfo.torch_core import (
    C,
    E,
    F,
    G,
    S,
    T,
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
    C(_op, unary(_fill) + (E(S(2, 3, dtype="int64")),), rtol=1e-6, atol=1e-7, raises=RuntimeError)
C("tan", (E(S(3, fill="unit")),))
for _op in ("fmod", "remainder"):
    C(_op, binary("wide", "away") + with_number(1.5, "wide") + with_number(-2, "wide")
      + (E(S(3, dtype="int64"), S(3, dtype="int64", fill="classes"), ),
         E(S(4, dtype="int64"), args=(3,))), exclude=("Tensor.__rmod__",), raises=RuntimeError)
# 7 % x: PyTorch has no derivative for a number's remainder by a tensor (here: d/dx exists)
C("remainder", (E(S(4, dtype="int64", fill="classes"), args=(7,)),
                E(S(3, dtype="float32"), args=(2.5,))), names=("Tensor.__rmod__",),
  call=lambda L, name, x, *a: call_default(L, name, x.detach() + 5, *a), rtol=1e-6)
C("remainder", (E(S(3, dtype="int64"), args=(0,)),), only=("remainder",),
  raises=RuntimeError)  # int by 0: error
C("floor_divide", (E(S(2, 3, dtype="int64"), S(3, dtype="int64", fill="classes")),
                   E(S(4, dtype="int64"), args=(2,)), E(S(4, dtype="int64"), args=(-3,)),
                   E(S(3, dtype="int64"), args=(0,))), raises=RuntimeError)  # fmt: skip
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
  rtol=1e-6, atol=1e-7, raises=RuntimeError)
C("clamp", (E(S(2, 3, fill="quarter"), args=(0.5,)), E(S(3, fill="quarter"), S(3)),
            E(S(3, 2, fill="quarter", layout="T"), S(2, fill="quarter"))),
  names=("Tensor.clamp_min", "tg.clamp_min", "Tensor.clamp_min_"))
C(None, (E(S(2, 3, fill="quarter"), args=(0.5,)), E(S(3, fill="quarter"), S(3))),
  names=("Tensor.clamp_max", "tg.clamp_max", "Tensor.clamp_max_"))  # fmt: skip
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
      only=(_name,), call=lambda L, name, a, b, **kw: call_default(L, name, a, b, **kw),
      raises=RuntimeError)
C(None, (E(S(2, 3), S(2, 3)), E(a=np.arange(3), b=np.arange(3)),
            E(a=np.arange(3), b=np.arange(4)), E(a=np.zeros((2, 1)), b=np.zeros(2))),
  names=("Tensor.equal", "tg.equal"), call=lambda L, name, *x, a=None, b=None: call_default(
      L, name, *(x or (a, b))))  # fmt: skip

# -- indexing: triangles, flips, selections, scatters, diagonals, windows -------------------------
C("tril", (E(S(3, 4)), E(S(3, 4), args=(1,)), E(S(2, 3, 3), diagonal=-1),
           E(S(4, 3, layout="T"), args=(-2,)), E(S(3)), E(S(2, 2, dtype="int64"))),
  raises=RuntimeError)
C("triu", (E(S(3, 4)), E(S(3, 4), args=(1,)), E(S(2, 3, 3), diagonal=-1),
           E(S(4, 3, layout="T"), args=(2,)), E(S(3))), raises=RuntimeError)
C("flip", (E(S(3, 4), args=(0,)), E(S(3, 4), args=((0, 1),)), E(S(2, 3, 4), args=(-1, 0)),
           E(S(3, 4, layout="T"), args=([1],)), E(S(), args=(0,)), E(S(3), args=(0, 0))),
  only=("flip",), raises=(RuntimeError, TypeError))  # fmt: skip
C("flip", (E(S(3, 4)), E(S(2, 3, 4)), E(S(3))), only=("fliplr", "flipud"), raises=RuntimeError)
C("roll", (E(S(5), args=(2,)), E(S(3, 4), args=(1,)), E(S(3, 4), args=(-1, 1)),
           E(S(3, 4), args=((1, 2), (0, 1))), E(S(3, 4, layout="T"), shifts=5, dims=0),
           E(S(3, 4), args=((1, 2), (0,)))), raises=RuntimeError)  # fmt: skip
_I = np.array([2, 0, 2])
C("index_select", (E(S(3, 4), args=(1, _I)), E(S(3, 4), args=(0, _I)),
                   E(S(4, 3, layout="T"), args=(-1, np.array([1]))),
                   E(S(3, 4), args=(0, np.zeros(0, dtype=np.int64))),
                   E(S(3, 4), args=(0, np.array([[0]]))), E(S(3, 4), args=(0, np.array(1)))),
  exclude=("Tensor.take", "tg.take"), raises=IndexError)  # take(index) has its own row
C("index_select", (E(S(6), args=(_I,)), E(S(2, 3), args=(np.array([[0, 5], [1, 1]]),))),
  only=("take",))  # fmt: skip
C("index_add", (E(S(4, 3), S(3, 3), args=(0, _I)), E(S(3, 4), S(3, 3), args=(1, _I)),
                E(S(4, 3), S(3, 3), args=(0, _I), alpha=2.5), E(S(4, 3), S(2, 3), args=(0, _I))),
  call=lambda L, name, x, src, dim, index, **kw: call_default(L, name, x, dim, index, src, **kw),
  raises=RuntimeError)
_G = np.array([[0, 1, 2, 0], [2, 0, 0, 1]])
C("scatter", (E(S(3, 4), S(2, 4), args=(0, _G)), E(S(4, 3), S(2, 3), args=(1, _G[:, :3] % 3)),
              E(S(3, 4), S(1, 4), args=(0, _G))),
  call=lambda L, name, x, src, dim, index: call_default(L, name, x, dim, index, src),
  raises=RuntimeError)
C("scatter", (E(S(3, 4), args=(0, _G, 2.5)), E(S(3, 4), args=(0, _G), value=-1.0)),
  only=("scatter", "scatter_"))  # fmt: skip
C("gather_grad", (E(S(3, 4), S(2, 4), args=(0, _G)), E(S(4, 3), S(2, 3), args=(1, _G[:, :3] % 3)),
                  E(S(3, 4), S(2), args=(0, _G)), E(S(2, 4), S(2, 4), args=(0, _G + 1))),
  call=lambda L, name, x, src, dim, index: call_default(L, name, x, dim, index, src),
  raises=(IndexError, RuntimeError))
C("masked_select", (E(S(2, 3), mask=np.array([True, False, True])),
                    E(S(3, 2, layout="T"), mask=np.eye(3, 2) > 0),
                    E(S(3), mask=np.array([[True], [False]])),
                    E(S(2, 3), mask=np.array([1, 0, 1]))),
  call=lambda L, name, x, mask: call_default(L, name, x, mask), raises=RuntimeError)  # fmt: skip
C("nonzero", (E(S(3, 4, dtype="int64")), E(S(5, dtype="bool")), E(S(2, 3)), E(S(dtype="int64")),
              E(S(2, 3, dtype="int64"), as_tuple=True)), only=("nonzero",))  # fmt: skip
C("nonzero", (E(S(3, 4, dtype="int64")), E(S(5, dtype="bool"))), only=("argwhere",))
C("diagonal", (E(S(3, 4)), E(S(3, 4), args=(1,)), E(S(3, 4), offset=-2),
               E(S(2, 3, 4), args=(0, 1, 2)), E(S(2, 3, 4), offset=1, dim1=-1, dim2=0),
               E(S(4, 3, layout="T")), E(S(3)), E(S(3, 4), args=(0, 1, 1))),
  only=("diagonal",), raises=(IndexError, RuntimeError))  # fmt: skip
C("diagonal_grad", (E(S(3)), E(S(2, 3), args=(1,)), E(S(3), offset=-1, dim1=0, dim2=1),
                    E(S(2, 3), dim1=0, dim2=2), E(S())), raises=IndexError)  # fmt: skip
C("diagonal", (E(S(3)), E(S(3), args=(1,)), E(S(3, 4)), E(S(3, 4), args=(-1,)), E(S(2, 2, 2))),
  only=("diag",), raises=RuntimeError)
C("diagonal", (E(S(3, 4)), E(S(4, 3, layout="T")), E(S(3))), only=("trace",), raises=RuntimeError)
C("unfold", (E(S(7), args=(0, 2, 1)), E(S(3, 6), args=(1, 3, 2)), E(S(5, 3), args=(0, 2, 3)),
             E(S(4, 5, layout="T"), args=(-1, 4, 1)), E(S(), args=(0, 1, 1)),
             E(S(3), args=(0, 4, 1))), raises=RuntimeError)  # fmt: skip
C("getitem", (E(S(5, 3), args=(0, 1, 3)), E(S(5, 3), args=(1, 0, 2)), E(S(5, 3), args=(-1, -2, 1)),
              E(S(3, 4, layout="T"), args=(0, 1, 2)), E(S(5), args=(0, 3, 3))),
  names=("Tensor.narrow", "tg.narrow"), raises=RuntimeError)
C("permute", (E(S(2, 3, 4), args=(0, 2)), E(S(2, 3, 4), args=((0, 1), (2, 0))),
              E(S(2, 3, 4), args=(-1, 0)), E(S(2, 3, 4), args=((0, 0), (1, 2)))),
  names=("Tensor.movedim", "tg.movedim", "Tensor.moveaxis", "tg.moveaxis"),
  raises=RuntimeError)  # fmt: skip
C("repeat", (E(S(2, 3), args=((2,),)), E(S(2, 3), args=((2, 1, 2),)), E(S(3), args=(2,)),
             E(S(2, 3), args=((1, 2),))), names=("Tensor.tile", "tg.tile"),
  raises=TypeError)  # fmt: skip
C("expand_dims", (E(S(3), args=(2,)), E(S(2, 3), args=(2,)), E(S(2, 3), args=(3,), dim=1),
                  E(S(2, 3), args=(np.array([1, 0]),), dim=0), E(S(3), args=(np.array(2),)),
                  E(S(), args=(3,)), E(S(3, 2, layout="T"), args=(2,), dim=-1)),
  names=("Tensor.repeat_interleave", "tg.repeat_interleave"))  # fmt: skip

# -- reductions and scans ----------------------------------------------------------------------
_ZEROS = np.array([[1.5, 0.0, -2.0], [0.0, 0.0, 3.0]])
C("prod", (E(S(4)), E(S(2, 3)), E(S(2, 3), args=(1,)), E(S(2, 3), dim=0, keepdim=True),
           E(S(3, 4, layout="T"), args=(-1,)), E(S()), E(S(), args=(0,)), E(S(0, 3), args=(1,)),
           E(S(2, 3, dtype="int64")), E(S(2, 3), args=((0, 1),)),
           E(S(3, dtype="int64"), dtype="float64")),
  call=lambda L, name, x, *a, dtype=None, **kw: call_default(
      L, name, x, *a, **kw, **({"dtype": getattr(L, dtype)} if dtype else {})), raises=TypeError)
C("prod", (E(data=_ZEROS), E(data=_ZEROS, args=(1,)), E(data=_ZEROS, args=(0,)),
           E(data=_ZEROS[:1], args=(1,))),
  call=lambda L, name, data, args=(): call_default(L, name, _t(L, data, True), *args))
C("cumprod", (E(S(5), args=(0,)), E(S(2, 3), args=(1,)), E(S(2, 3), dim=-2),
              E(S(3, 4, layout="T"), args=(0,)), E(S(), args=(0,)), E(S(3, dtype="int64"),
              args=(0,)), E(S(0, 2), args=(0,)), E(S(), args=(1,))), raises=IndexError)  # fmt: skip
C("cumprod", (E(data=_ZEROS, args=(1,)), E(data=_ZEROS, args=(0,)),
              E(data=np.array([0.0, 0.0, 2.0]), args=(0,))),
  call=lambda L, name, data, args=(): call_default(L, name, _t(L, data, True), *args))
C("logsumexp", (E(S(4), args=(0,)), E(S(2, 3), args=(1,)), E(S(2, 3), dim=(0, 1)),
                E(S(2, 3), args=(0,), keepdim=True), E(S(3, 4, layout="T"), args=(-1,)),
                E(S(), args=(0,)), E(S(0, 3), args=(0,)), E(S(2, 3, dtype="int64"), args=(1,)),
                E(S(2, 3), args=(2,)), E(S(2, 3))), rtol=1e-6,
  raises=(IndexError, TypeError))  # fmt: skip
C("logsumexp", (E(data=np.array([[-np.inf, -np.inf], [0.0, -np.inf]]), args=(1,)),),
  call=lambda L, name, data, args=(): call_default(L, name, _t(L, data, True), *args))
C("vector_norm", (E(S(4)), E(S(2, 3)), E(S(2, 3), args=(1,)), E(S(2, 3), args=(1, 1)),
                  E(S(2, 3), p=3.0, dim=0, keepdim=True), E(S(2, 3, fill="distinct"), p=np.inf),
                  E(S(2, 3, fill="distinct"), p=-np.inf, dim=1), E(S(2, 3), p=0),
                  E(S(2, 3), p="fro", dim=(0, 1)), E(S(3, 4, layout="T"), dim=-1), E(S()),
                  E(S(2, 3), p=0.5), E(S(3, dtype="int64"))), raises=RuntimeError)  # fmt: skip
C("vector_norm", (E(data=np.array([[0.0, 0.0], [3.0, -4.0]]), dim=1),
                  E(data=np.zeros(3), p=1), E(data=np.zeros(3), p=3)),
  call=lambda L, name, data, **kw: call_default(L, name, _t(L, data, True), **kw))
C(None, (E(S(2, 3)), E(S(2, 3, dtype="int64")), E(S(2, 3, dtype="int64"), dim=1),
         E(S(2, 3, dtype="bool"), dim=(0, 1))), names=("Tensor.count_nonzero",
                                                       "tg.count_nonzero"))  # fmt: skip
_NAN = np.array([[1.0, np.nan, 2.0], [np.nan, np.nan, 3.0]])
for _name in ("nansum", "nanmean"):
    C(None, (E(S(2, 3)), E(S(2, 3), dim=1), E(S(3, 4, layout="T"), args=(0,), keepdim=True)),
      names=(f"Tensor.{_name}", f"tg.{_name}"))
    C(None, (E(data=_NAN), E(data=_NAN, dim=1), E(data=_NAN, dim=0)),
      names=(f"Tensor.{_name}", f"tg.{_name}"),
      call=lambda L, name, data, **kw: call_default(L, name, _t(L, data, True), **kw))
for _name in ("var_mean", "std_mean"):
    C(None, (E(S(2, 3)), E(S(2, 3), dim=1), E(S(2, 3), dim=0, correction=0, keepdim=True),
             E(S(5), unbiased=False)), names=(f"tg.{_name}",))  # fmt: skip
C(None, (E(S(5)), E(S(2, 4), n=2), E(S(3, 4), dim=0), E(S(2, 3), S(2, 1), dim=1),
         E(S(2, 3), args=(1, -1, None, None)), E(S())),
  names=("Tensor.diff", "tg.diff"),
  call=lambda L, name, x, *p, **kw: call_default(L, name, x, **kw, **(
      {"prepend": p[0]} if p else {})), raises=(RuntimeError, TypeError))  # fmt: skip

# -- sorting and order statistics (distinct values: PyTorch leaves the order of ties open) -----
_D = "distinct"
C("argsort", (E(S(5, fill=_D)), E(S(3, 4, fill=_D), args=(0,)),
              E(S(3, 4, fill=_D), descending=True), E(S(4, 3, fill=_D, layout="T"), dim=-1),
              E(S(), args=(0,)), E(S(0, 3), args=(1,)),
              E(S(4, dtype="int64", fill="classes"), descending=True), E(S(3), args=(1,))),
  only=("sort", "argsort"), raises=IndexError)  # fmt: skip
C("argsort", (E(S(5, fill=_D)), E(S(3, 4, fill=_D)), E(S()), E(S(4, 3, fill=_D, layout="T"))),
  only=("msort",))
C("argsort", (E(S(5, fill=_D), args=(2,)), E(S(3, 4, fill=_D), args=(2, 0)),
              E(S(3, 4, fill=_D), args=(3,), largest=False), E(S(3, 4, fill=_D), args=(0,)),
              E(S(4, 3, fill=_D, layout="T"), k=1, dim=0), E(S(), args=(1,)),
              E(S(3), args=(4,))), only=("topk",), raises=RuntimeError)  # fmt: skip
C("argsort", (E(S(5, fill=_D), args=(2,)), E(S(3, 4, fill=_D), args=(2, 0)),
              E(S(3, 4, fill=_D), args=(4,), keepdim=True), E(S(4, 3, fill=_D, layout="T"),
              args=(1, -1)), E(S(), args=(1,)), E(S(3), args=(0,)), E(S(3), args=(4,))),
  only=("kthvalue",), raises=RuntimeError)  # fmt: skip
C("argsort", (E(S(5, fill=_D)), E(S(4, fill=_D)), E(S(3, 4, fill=_D)),
              E(S(3, 4, fill=_D), args=(1,)),
              E(S(3, 4, fill=_D), dim=0, keepdim=True), E(S(4, 3, fill=_D, layout="T"), dim=-1),
              E(S()), E(S(0,))), only=("median",))  # fmt: skip
C("argsort", (E(S(5, fill=_D), args=(0.3,)), E(S(3, 4, fill=_D), args=(0.5,), dim=1),
              E(S(3, 4, fill=_D), args=(0.25,), dim=0, keepdim=True),
              E(S(3, 4, fill=_D), args=(np.array([0.1, 0.9]),), dim=1),
              E(S(3, 4, fill=_D), args=(0.4,), keepdim=True),
              E(S(6, fill=_D), args=(0.3,), interpolation="lower"),
              E(S(6, fill=_D), args=(0.3,), interpolation="higher"),
              E(S(6, fill=_D), args=(0.3,), interpolation="midpoint"),
              E(S(6, fill=_D), args=(0.35,), interpolation="nearest"),
              E(S(5), args=(1.5,)), E(S(5), args=(0.5,), interpolation="cubic")),
  only=("quantile",), raises=RuntimeError)  # fmt: skip
_MODE = np.array([[1.0, 2.0, 2.0, 1.0, 3.0], [5.0, 5.0, 4.0, 4.0, 4.0], [7.0, 6.0, 8.0, 6.5, 9.0]])
C("mode_index", (E(data=_MODE), E(data=_MODE, dim=0), E(data=_MODE, dim=1, keepdim=True),
                 E(data=np.array(2.5))),
  call=lambda L, name, data, **kw: call_default(L, name, _t(L, data, True), **kw))
C("mode_index", (E(S(3, 4, dtype="int64")), E(S(5, dtype="int64"), dim=0)))
C("unique", (E(S(6, dtype="int64")), E(S(2, 3, dtype="int64"), return_inverse=True),
             E(S(2, 3, dtype="int64"), return_counts=True, return_inverse=True),
             E(S(4, 2, dtype="int64", fill="classes"), dim=0, return_counts=True)))

# -- random numbers: only shapes, dtypes and errors can agree -----------------------------------
def _random(L, name, x, *args, **kw):
    """``x`` (detached: PyTorch records zero-gradient nodes for some samplers) through the
    sampler, then only the shape and dtype."""
    from tests.opinfo.torch_core import _shaped_only

    where, attr = name.split(".")
    target = x.detach() * 1
    out = getattr(target, attr)(*args, **kw) if where == "Tensor" else getattr(L, attr)(
        target, *args, **kw)  # fmt: skip
    return _shaped_only(name, out)


for _name, _good, _bad in (
    ("normal_", ((0.0, 0.02), ()), ((0.0, -1.0),)),
    ("uniform_", ((-1.0, 1.0), ()), ((1.0, 0.0),)),
    ("bernoulli_", ((0.3,), ()), ((1.5,),)),
    ("exponential_", ((2.0,), ()), ((-1.0,),)),
    ("log_normal_", ((0.0, 0.5), ()), ((0.0, -1.0),)),
    ("cauchy_", ((0.0, 1.0), ()), ()),
    ("geometric_", ((0.3,), ()), ((1.5,),)),
    ("random_", ((5,), (2, 5)), ((5, 2),)),
):
    T(_name, tuple(E(S(2, 3), args=a) for a in _good + _bad)
      + (E(S(3, dtype="int64"), args=_good[0]),), call=_random,
      raises=(NotImplementedError, RuntimeError, TypeError))
C("multinomial", (E(S(4, fill="unit"), args=(2,)),
                  E(S(3, 4, fill="unit"), args=(3,), replacement=True),
                  E(S(4, fill="unit"), args=(5,)), E(S(4, fill="unit"), args=(5, True)),
                  E(S(4), args=(2,)), E(S(2, 2, 2, fill="unit"), args=(1,)),
                  E(S(4, fill="unit"), args=(0,))), call=_random, raises=RuntimeError)  # fmt: skip
C("sample", (E(S(2, 3, fill="unit")), E(S(3, fill="unit"), p=0.2), E(S(3, fill="wide"))),
  names=("Tensor.bernoulli", "tg.bernoulli"), call=_random, raises=RuntimeError)
C("sample", (E(S(2, 3, fill="positive")), E(S(3))), names=("tg.poisson",), call=_random,
  raises=RuntimeError)
C("sample", (E(S(2, 3), args=(0.5,)), E(S(2, 3), S(2, 3, fill="positive")), E(S(3), S(2, 3)),
             E(S(3), args=(-1.0,))), names=("tg.normal",), call=_random, raises=RuntimeError)
G("randperm", (E(args=(5,)), E(args=(0,)), E(args=(4,), dtype="float32"), E(args=(-1,))),
  call=lambda L, name, args, dtype=None: _shaped(
      L.randperm(*args, **({"dtype": getattr(L, dtype)} if dtype else {}))), raises=RuntimeError)
G("randint_like", (E(S(2, 3), args=(5,)), E(S(3, dtype="int64"), args=(1, 4)),
                   E(S(2), args=(3, 1))),
  call=lambda L, name, x, args: _shaped(L.randint_like(x, *args)), raises=RuntimeError)


def _shaped(t):
    from tests.opinfo.torch_core import _shaped_only

    return _shaped_only("", t)

# -- linear algebra ------------------------------------------------------------------------------
def _einsum(L, name, *xs, equation):
    return L.einsum(equation, *xs)


C("einsum", (E(S(2, 3), S(3, 4), equation="ij,jk->ik"), E(S(2, 3), equation="ij->ji"),
             E(S(2, 3), equation="ij->"), E(S(3), S(3), equation="i,i->"),
             E(S(3), S(4), equation="i,j->ij"), E(S(2, 3, 4), S(2, 4, 5), equation="bij,bjk->bik"),
             E(S(2, 2, 3, 4), S(2, 2, 5, 4), equation="bhqd,bhkd->bhqk"),
             E(S(2, 3), S(3), equation="...j,j->..."), E(S(2, 3, 4), equation="...ij->...ji"),
             E(S(2, 3), S(3, 4), equation="ij,jk"), E(S(2, 3), S(4, 3), equation="ij,kj->ik"),
             E(S(2, 3), S(3, 4), equation="ij,jk,kl->il"), E(S(2, 3), S(2, 4), equation="ij,ik->j"),
             E(S(3, 3), equation="ii->i"), E(S(3, 3), equation="ii"),
             E(S(2, 3, 3), S(3), equation="bii,i->b"), E(S(2, 3), S(4, 4), equation="ij,jk->ik"),
             E(S(4, 3, layout="T"), S(3), equation="ij,j->i")),
  call=_einsum, raises=RuntimeError)  # fmt: skip
C(None, (E(S(2, 3, 4), S(2, 4, 5)), E(S(3, 4, 2, layout="T"), S(2, 3, 3)), E(S(2, 3), S(3, 4)),
         E(S(2, 3, 4), S(3, 4, 5))), names=("Tensor.bmm", "tg.bmm"),
  raises=RuntimeError)  # fmt: skip
C(None, (E(S(2, 4), S(2, 3), S(3, 4)), E(S(4), S(2, 3), S(3, 4), beta=0.5, alpha=2.0),
         E(S(2, 4), S(2, 3), S(3, 4), beta=0.0), E(S(2, 4), S(3), S(3, 4))),
  names=("Tensor.addmm", "tg.addmm"), raises=RuntimeError)  # fmt: skip
C(None, (E(S(2, 3, 4), S(2, 3, 5), S(2, 5, 4)), E(S(3, 4), S(2, 3, 5), S(2, 5, 4), alpha=0.5)),
  names=("Tensor.baddbmm", "tg.baddbmm"))
C(None, (E(S(2), S(2, 3), S(3)), E(S(2), S(2, 3), S(3), beta=2.0, alpha=-1.0)),
  names=("Tensor.addmv", "tg.addmv"))
C(None, (E(S(2, 3), S(2), S(3)), E(S(3), S(2), S(3), alpha=2.0)), names=("Tensor.addr", "tg.addr"))
C(None, (E(S(3), S(4)), E(S(0), S(2)), E(S(2, 2), S(2))),
  names=("Tensor.outer", "tg.outer", "Tensor.ger", "tg.ger"), raises=RuntimeError)
C(None, (E(S(3), S(3)), E(S(3), S(4)), E(S(2, 3), S(3)), E(S(3), S(3, dtype="float32"))),
  names=("Tensor.dot", "tg.dot", "Tensor.vdot", "tg.vdot"), rtol=1e-6, raises=RuntimeError)
C(None, (E(S(3), S(3)), E(S(2, 3), S(4, 3)), E(S(2, 3), S(3)), E(S(), S(2, 3))),
  names=("Tensor.inner", "tg.inner"))
C(None, (E(S(2, 3), S(3)), E(S(3, 2, layout="T"), S(2)), E(S(2, 3), S(2))), names=("Tensor.mv",
                                                                                 "tg.mv"),
  raises=RuntimeError)
C(None, (E(S(2, 3), S(2, 2)), E(S(3), S(2)), E(S(2, 1, 2), S(3, 2))), names=("Tensor.kron",
                                                                           "tg.kron"))
C(None, (E(S(3), S(3)), E(S(4, 3), S(4, 3)), E(S(3, 2), S(3, 2), dim=0), E(S(2, 3), S(3)),
         E(S(4, 2), S(4, 2))), names=("Tensor.cross", "tg.cross"), raises=RuntimeError)  # fmt: skip
C(None, (E(S(3, 2), S(4, 2)), E(S(2, 3, 2), S(2, 4, 2), p=1.0), E(S(3, 2), S(4, 2), p=3.0),
         E(S(3, 2), S(4, 3))), names=("tg.cdist",), raises=RuntimeError)  # fmt: skip
_SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
C("inv", (E(data=_SPD), E(data=np.stack([_SPD, _SPD.T * 2])), E(data=np.zeros((2, 2))),
          E(data=np.ones((2, 3)))),
  call=lambda L, name, data: call_default(L, name, _t(L, data, True)), raises=RuntimeError)
C("det", (E(data=_SPD), E(data=np.stack([_SPD, _SPD * 2])), E(data=np.ones((2, 3)))),
  call=lambda L, name, data: call_default(L, name, _t(L, data, True)), raises=RuntimeError)


def _linalg(L, name, *xs, data=None, **kw):
    args = (_t(L, data, True),) if data is not None else ()
    fn = name.rsplit(".", 1)[1]
    xs = ([*args, *xs],) if fn == "multi_dot" else (*args, *xs)
    return getattr(L.linalg, fn)(*xs, **kw)


for _fn, _examples in (
    ("vector_norm", (E(S(2, 3)), E(S(2, 3), ord=1, dim=1), E(S(4), ord=np.inf))),
    ("matrix_norm", (E(S(2, 3)), E(S(2, 3), ord=1), E(S(2, 3, fill="distinct"), ord=-np.inf,
                                                      keepdim=True), E(S(3)))),
    ("norm", (E(S(2, 3)), E(S(2, 3), ord="fro"), E(S(4), ord=3), E(S(2, 3), dim=1),
              E(S(2, 3, 2), ord=1))),
    ("inv", (E(data=_SPD),)),
    ("det", (E(data=_SPD),)),
    ("solve", (E(S(3), data=_SPD), E(S(3, 2), data=_SPD), E(S(2), data=_SPD))),
    ("cross", (E(S(2, 3), S(2, 3)), E(S(3, 2), S(3, 2)))),
    ("matmul", (E(S(2, 3), S(3, 4)), E(S(3), S(3)))),
    ("multi_dot", (E(S(2, 3), S(3, 4), S(4)), E(S(3), S(3, 2), S(2, 2)))),
    ("vecdot", (E(S(2, 3), S(3)), E(S(2, 3), S(2, 3), dim=0))),
):
    C(None, _examples, names=(f"tg.linalg.{_fn}",), call=_linalg, raises=RuntimeError)

# -- joining and aligning tensors -----------------------------------------------------------------
def _join(L, name, *xs, listed=True, **kw):
    fn = getattr(L, name.split(".")[1])
    return fn(list(xs), **kw) if listed else fn(*xs, **kw)


for _name in ("hstack", "vstack", "row_stack", "dstack", "column_stack"):
    C(None, (E(S(2), S(3)), E(S(2, 3), S(2, 3)), E(S(2, 3), S(2, 1)), E(S(), S()),
             E(S(3, 2, layout="T"), S(2, 2)), E(S(2, 3, 2), S(2, 3, 2)), E(S(2), S(2))),
      names=(f"tg.{_name}",), call=_join, raises=RuntimeError)  # fmt: skip
for _n in (1, 2, 3):
    C(None, (E(S()), E(S(3)), E(S(2, 3)), E(S(2, 3, 4)), E(S(), S(3), listed=False),
             E(S(2), S(3), listed=True)), names=(f"tg.atleast_{_n}d",),
      call=lambda L, name, *xs, listed=False: _join(L, name, *xs, listed=listed) if len(xs) > 1
      else getattr(L, name.split(".")[1])(*xs))  # fmt: skip
C(None, (E(S(3, 1), S(2)), E(S(), S(2, 3), S(3)), E(S(2), S(3)), E(S(2, 3))),
  names=("tg.broadcast_tensors",), call=lambda L, name, *xs: _join(L, name, *xs, listed=False),
  raises=RuntimeError)
C(None, (E(S(3), S(2)), E(S(3), S(2), indexing="xy"), E(S(2), S(3), S(4), indexing="xy"),
         E(S(), S(2), indexing="ij"), E(S(2, 2), S(2), indexing="ij"),
         E(S(2), indexing="ji")),
  names=("tg.meshgrid",), call=lambda L, name, *xs, **kw: _join(L, name, *xs, listed=False,
                                                                 **kw),
  raises=RuntimeError)  # fmt: skip
C(None, (E(S(2, 2), S(1, 3)), E(S(3), S(2, 1)), E(S(), S(2, 2)), E(S(2, 2, 2))),
  names=("tg.block_diag",), call=lambda L, name, *xs: _join(L, name, *xs, listed=False),
  raises=RuntimeError)
C(None, (E(S(2), S(3)), E(S(2), S(2), S(2)), E(S(3))),
  names=("tg.cartesian_prod",), call=lambda L, name, *xs: _join(L, name, *xs, listed=False))

# -- activations (tg.nn.functional) -------------------------------------------------------------
for _name in ("silu", "mish", "selu", "hardswish", "logsigmoid", "softsign", "tanhshrink",
              "relu6"):
    F(_name, unary("wide"))
F("hardsigmoid", unary("wide"), rtol=1e-7)  # PyTorch's backward multiplies by a float32 1/6
F("elu", unary("wide") + (E(S(2, 3, fill="wide"), args=(0.5,)), E(S(3, fill="wide"), alpha=2.0)))
F("celu", unary("wide") + (E(S(2, 3, fill="wide"), args=(0.5,)), E(S(3), alpha=0.0)),
  raises=RuntimeError)
F("hardtanh", unary("wide") + (E(S(2, 3, fill="wide"), args=(-2.0, 2.0)),
                               E(S(3, fill="wide"), min_val=0.0, max_val=1.0),
                               E(S(3), min_val=1.0, max_val=0.0)), raises=ValueError)  # fmt: skip
F("hardshrink", unary("wide") + (E(S(2, 3, fill="wide"), args=(1.0,)),))
F("softshrink", unary("wide") + (E(S(2, 3, fill="wide"), lambd=1.0), E(S(3), lambd=-1.0)),
  raises=RuntimeError)
F("threshold", (E(S(2, 3, fill="wide"), args=(0.5, -2.0)), E(S(4, fill="wide"), args=(-1.0, 0.0))))
F("glu", (E(S(2, 4)), E(S(4, 2), dim=0), E(S(3, 4, layout="T"), dim=-1), E(S(3))),
  raises=RuntimeError)
F("prelu", (E(S(2, 3, 4, fill="wide"), S(3)), E(S(2, 3, fill="wide"), S(1)),
            E(S(5, fill="wide"), S(1)), E(S(2, 3), S(2))), raises=RuntimeError)  # fmt: skip

# -- distances and losses (tg.nn.functional) -----------------------------------------------------
_PM = np.array([1.0, -1.0, 1.0, -1.0])
F("normalize", (E(S(2, 3)), E(S(2, 3), dim=0), E(S(2, 3), p=1.0), E(S(4), dim=0),
                E(data=np.zeros((2, 2)))), call=lambda L, name, *x, data=None, **kw: call_default(
    L, name, *(x or (_t(L, data, True),)), **kw))  # fmt: skip
F("cosine_similarity", (E(S(2, 3), S(2, 3)), E(S(2, 3), S(3), dim=-1), E(S(3, 4), S(3, 4), dim=0),
                        E(S(3, 2, layout="T"), S(3, 2)), E(S(2, 3), S(2, 3), eps=10.0)))
F("pairwise_distance", (E(S(2, 3), S(2, 3)), E(S(2, 3), S(3), p=1.0), E(S(4), S(4), keepdim=True),
                        E(S(2, 3), S(2, 3), p=3.0, eps=0.0)))
F("smooth_l1_loss", (E(S(2, 3, fill="wide"), S(2, 3)), E(S(4, fill="wide"), S(4), beta=0.5),
                     E(S(4, fill="wide"), S(4), reduction="sum", beta=2.0),
                     E(S(4, fill="wide"), S(4), beta=0.0), E(S(3, fill="wide"), S(3),
                                                             reduction="none")))  # fmt: skip
F("huber_loss", (E(S(2, 3, fill="wide"), S(2, 3)), E(S(4, fill="wide"), S(4), delta=0.5),
                 E(S(4, fill="wide"), S(4), reduction="none", delta=2.0)))  # fmt: skip
F("kl_div", (E(S(2, 3), S(2, 3, fill="unit")), E(S(2, 3), S(2, 3, fill="unit"),
             reduction="batchmean"), E(S(2, 3), S(2, 3), log_target=True, reduction="sum"),
             E(S(4), S(4, fill="unit"), reduction="none"),
             E(S(3), data=np.array([0.0, 0.5, 0.5]), reduction="sum")),
  call=lambda L, name, x, *y, data=None, **kw: call_default(
      L, name, x, *(y or (_t(L, data, True),)), **kw))  # fmt: skip
F("margin_ranking_loss", (E(S(4), S(4), target=_PM), E(S(4), S(4), target=_PM, margin=0.5,
                          reduction="sum")), call=lambda L, name, a, b, target, **kw: call_default(
    L, name, a, b, L.tensor(target), **kw))  # fmt: skip
F("hinge_embedding_loss", (E(S(4), target=_PM), E(S(4), target=_PM, margin=0.5, reduction="none")),
  call=lambda L, name, a, target, **kw: call_default(L, name, a, L.tensor(target), **kw))
F("soft_margin_loss", (E(S(4), target=_PM), E(S(4), target=_PM, reduction="sum")),
  call=lambda L, name, a, target, **kw: call_default(L, name, a, L.tensor(target), **kw))
F("triplet_margin_loss", (E(S(3, 4), S(3, 4), S(3, 4)), E(S(3, 4), S(3, 4), S(3, 4), swap=True,
                          p=1.0, margin=2.0), E(S(4), S(4), S(4), reduction="none"),
                          E(S(3, 4), S(4), S(3, 4))), raises=RuntimeError)  # fmt: skip
F("cosine_embedding_loss", (E(S(4, 3), S(4, 3), target=_PM), E(S(4, 3), S(4, 3), target=_PM,
                            margin=0.2, reduction="none")),
  call=lambda L, name, a, b, target, **kw: call_default(L, name, a, b, L.tensor(target), **kw))
F("multilabel_soft_margin_loss", (E(S(3, 4), S(3, 4, fill="unit")),
                                  E(S(3, 4), S(3, 4, fill="unit"), reduction="none"),
                                  E(S(3, 4), S(3, 4, fill="unit"), weight=np.arange(1.0, 5.0))),
  call=lambda L, name, a, b, weight=None, **kw: call_default(
      L, name, a, b, **kw, **({"weight": L.tensor(weight)} if weight is not None else {})))
F("multi_margin_loss", (E(S(4, 3), target=np.array([0, 2, 1, 2])),
                        E(S(4, 3), target=np.array([0, 2, 1, 2]), p=2, margin=0.5),
                        E(S(4, 3), target=np.array([0, 2, 1, 2]), weight=np.array([1.0, 2, 3]),
                          reduction="none"),
                        E(S(3), target=np.array(1)), E(S(4, 3), target=np.array([0, 1, 1, 1]),
                                                       p=3)),
  call=lambda L, name, a, target, weight=None, **kw: call_default(
      L, name, a, L.tensor(target), **kw, **({"weight": L.tensor(weight)} if weight is not None
                                              else {})), raises=ValueError)  # fmt: skip
F("poisson_nll_loss", (E(S(2, 3), S(2, 3, fill="positive")),
                       E(S(2, 3, fill="positive"), S(2, 3, fill="positive"), log_input=False),
                       E(S(4), data=np.array([0.0, 1.0, 2.0, 5.0]), full=True)),
  call=lambda L, name, x, *y, data=None, **kw: call_default(
      L, name, x, *(y or (_t(L, data),)), **kw))  # fmt: skip
F("gaussian_nll_loss", (E(S(2, 3), S(2, 3), S(2, 3, fill="positive")),
                        E(S(2, 3), S(2, 3), S(2, fill="positive"), full=True),
                        E(S(4), S(4), S(4, fill="positive"), reduction="sum")))


def _gumbel(L, name, x, **kw):
    from tests.opinfo.torch_core import _shaped_only

    return _shaped_only(name, L.nn.functional.gumbel_softmax(x.detach(), **kw))


F("gumbel_softmax", (E(S(2, 3)), E(S(2, 3), tau=0.5, hard=True), E(S(4, 3), dim=0)),
  call=_gumbel)

# -- more composites: addcmul, addcdiv, hypot, logaddexp, logit, xlogy, unflatten, tensor_split,
# aminmax
C(None, (E(S(2, 3), S(2, 3), S(3)), E(S(3), S(2, 3), S(2, 3), value=0.5), E(S(), S(2), S(2)),
         E(S(2, 3), S(2, 3), S(4))), names=("Tensor.addcmul", "tg.addcmul"),
  raises=RuntimeError)  # fmt: skip
C(None, (E(S(2, 3), S(2, 3), S(3, fill="away")), E(S(3), S(2, 3), S(2, 3, fill="away"),
                                                    value=-2.0)),
  names=("Tensor.addcdiv", "tg.addcdiv"))  # fmt: skip
C(None, binary("away", "away"), names=("Tensor.hypot", "tg.hypot"))
C(None, binary("wide", "wide") + (E(S(3), args=(2.0,)),), names=("Tensor.logaddexp",
                                                                   "tg.logaddexp"),
  raises=TypeError)
C(None, (E(S(2, 3, fill="unit")), E(S(4, fill="unit"), eps=0.1), E(S(3, fill="wide"), eps=0.2)),
  names=("Tensor.logit", "tg.logit"))
C(None, (E(S(2, 3), S(2, 3, fill="positive")), E(data=np.array([0.0, 1.0, 0.0, 2.0]),
                                                 y=np.array([0.0, 2.0, np.nan, 3.0]))),
  names=("Tensor.xlogy", "tg.xlogy"), call=lambda L, name, *x, data=None, y=None: call_default(
      L, name, *(x or (_t(L, data, True), _t(L, y, True)))))  # fmt: skip
C(None, (E(S(2, 6), args=(1, (2, 3))), E(S(2, 6), args=(-1, (3, -1))), E(S(6), args=(0, (2, 3))),
         E(S(2, 6), args=(1, (4, 2)))), names=("Tensor.unflatten", "tg.unflatten"),
  raises=RuntimeError)
C(None, (E(S(7, 2), args=(3,)), E(S(2, 7), args=([1, 4],), dim=1), E(S(5), args=(2,)),
         E(S(5), args=([3, 1],)), E(S(4), args=(0,))),
  names=("Tensor.tensor_split", "tg.tensor_split"), raises=RuntimeError)  # fmt: skip
C(None, (E(S(2, 3, fill="distinct")), E(S(2, 3, fill="distinct"), dim=1),
         E(S(2, 3, fill="distinct"), dim=0, keepdim=True)),
  names=("Tensor.aminmax", "tg.aminmax"))  # fmt: skip
C(None, (E(S(3, 4), args=(0, 1)), E(S(3, 4), args=(1, -1)), E(S(2, 3, 4, layout="T"), args=(2, 3)),
         E(S(3, 4), args=(0, 3)), E(S(3), args=(0, 0))), names=("Tensor.select", "tg.select"),
  raises=IndexError)
