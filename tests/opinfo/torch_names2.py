"""Rows of the differential table for the everyday names of round 2: the special functions
(lgamma, digamma, polygamma, erfc, erfinv, i0, sinc), histc/histogram, masked_scatter,
cumsum_, empty_strided, set_printoptions, char/byte and resize_
(tests/ops/test_missing_names2.py tests them one by one, with the modules tg.special,
tg.fft, tg.jit and tg.distributions). Imported at the end of torch_core.py."""

from __future__ import annotations

import numpy as np

from tests.opinfo.torch_core import C, E, G, S, T, call_default, unary

__all__: list = []

# -- special functions: values, gradients and second derivatives (float64) -------------------
C("lgamma", unary("wide") + (E(S(2, 3, fill="positive")),), rtol=1e-9)
C("digamma", unary("wide") + (E(S(2, 3, fill="positive")),), rtol=1e-9)
C("erfc", unary("wide") + (E(S(4, fill="normal")),))
C("erfinv", unary("unit") + (E(S(2, 3)), E(S(3, 4, fill="unit", layout="T"))), rtol=1e-9)
C("i0", unary("wide"))
C("sinc", unary("wide"))
# exact zeros: PyTorch's second derivative there is nan (it is -pi^2/3; test_missing_names2)
C("sinc", (E(S(2, 3, fill="unit_edges")),), second=False)


def _polygamma(L, name, x, n):
    where, attr = name.split(".")
    if where == "Tensor":
        return call_default(L, name, x, n)
    return L.polygamma(n, x)


C(None, (E(S(2, 3, fill="wide"), n=1), E(S(4, fill="positive"), n=2), E(S(3, fill="wide"), n=0),
         E(S(3, 4, fill="positive", layout="T"), n=3), E(S(2), n=-1)),
  names=("Tensor.polygamma", "tg.polygamma", "Tensor.polygamma_"),
  call=lambda L, name, x, n: _polygamma(L, name, x, n), rtol=1e-9, raises=RuntimeError)  # fmt: skip

# -- histograms (counts: no gradients) -------------------------------------------------------
C(None, (E(S(20)), E(S(4, 5), args=(7,)), E(S(30), bins=4, min=-1, max=1),
         E(S(3, 4, layout="T"), bins=3, min=0.5, max=0.5), E(S(0), bins=3), E(S(5), bins=0),
         E(S(5), bins=3, min=2, max=1), E(S(5, dtype="int64"), bins=3)),
  names=("Tensor.histc", "tg.histc"), raises=(NotImplementedError, RuntimeError))  # fmt: skip
_EDGES = np.array([-1.0, 0.0, 0.5, 2.0])
C(None, (E(S(20), args=(5,)), E(S(4, 5), args=(3,), range=(-1.0, 1.0)),
         E(S(30), args=(4,), density=True), E(S(12), S(12, fill="positive"), args=(3,)),
         E(S(25), args=(_EDGES,)), E(S(25), args=(_EDGES,), density=True),
         E(S(3, 4, layout="T"), args=(2,)), E(S(5), args=(0,)),
         E(S(5), args=(3,), range=(1.0, -1.0)), E(S(5, dtype="int64"), args=(3,))),
  names=("Tensor.histogram", "tg.histogram"),
  call=lambda L, name, x, *w, args, **kw: call_default(
      L, name, x.detach(), *args, **kw, **({"weight": w[0].detach()} if w else {})),
  raises=(NotImplementedError, RuntimeError))


# -- masked_scatter (gradients to input and source), cumsum_ ---------------------------------
def _masked_scatter(L, name, x, source, mask):
    return call_default(L, name, x, mask, source)


_ROW = np.array([True, False, True])
_FULL = np.array([[True, False, True], [False, True, True]])
C(None, (E(S(2, 3), S(6), mask=_ROW), E(S(2, 3), S(2, 2), mask=_FULL), E(S(3), S(2), mask=_ROW),
         E(S(3, 2, layout="T"), S(4), mask=_FULL), E(S(2, 3), S(3), mask=_ROW),
         E(S(2, 3), S(6), mask=_ROW.astype(np.int64)), E(S(2, 3), S(6, dtype="float32"),
                                                           mask=_ROW)),
  names=("Tensor.masked_scatter", "tg.masked_scatter", "Tensor.masked_scatter_"),
  call=_masked_scatter, raises=RuntimeError)  # fmt: skip


# -- factories, print options, conversions, resize_ ------------------------------------------
def _empty_strided(L, name, args, dtype=None):
    t = L.empty_strided(*args, dtype=dtype and getattr(L, dtype))
    return ("shape and dtype", tuple(t.shape), str(t.dtype).removeprefix("torch."))


G("empty_strided", (E(args=((2, 3), (3, 1))), E(args=((2, 3), (1, 2)), dtype="int64"),
                    E(args=((), ())), E(args=((2, 3), (1,))), E(args=((2,), (-1,)))),
  call=_empty_strided, raises=RuntimeError)  # fmt: skip


def _printed(L, name, data, **options):
    """The repr of float32 tensors under ``options``, then the defaults back."""
    L.set_printoptions(**options)
    try:
        return tuple(repr(L.tensor(np.asarray(d, dtype=np.float32))) for d in data)
    finally:
        L.set_printoptions(profile="default")


_VALUES = ([1.12345, 200.5], [1e-5, 1.0], np.arange(2000.0), np.arange(12.0).reshape(3, 4) * 1.5,
           [1.0, 2.0, 3.0], np.arange(30.0).reshape(5, 6) / 7)  # fmt: skip
G("set_printoptions", (E(data=_VALUES, precision=2), E(data=_VALUES, sci_mode=True),
                       E(data=_VALUES, sci_mode=False), E(data=_VALUES, profile="short"),
                       E(data=_VALUES, profile="full", linewidth=40),
                       E(data=_VALUES, threshold=5, edgeitems=1),
                       E(data=_VALUES, precision=6, linewidth=30), E(data=_VALUES)),
  call=_printed)  # fmt: skip
for _name in ("char", "byte"):
    T(_name, (E(S(2, 3, fill="wide")), E(S(3, dtype="int64")), E(S(2, dtype="bool")),
              E(S(2, fill="positive"))),
      call=lambda L, name, x: getattr(x, name.split(".")[1])())  # fmt: skip


def _resize(L, name, x, args, grad=False):
    y = x if grad else x.detach().clone()  # a tensor that requires grad: PyTorch's error
    out = y.resize_(*args)
    assert out is y
    return y, y._version


T("resize_", (E(S(2, 3), args=(6,)), E(S(2, 3), args=(2, 2)), E(S(6), args=((3, 2),)),
              E(S(2, 3), args=(0,)), E(S(2, 3), args=(2, 3), grad=True), E(S(2, 3), args=(-1,))),
  call=_resize, raises=RuntimeError)  # fmt: skip
