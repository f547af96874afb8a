"""Rows of the differential table for the PyTorch names built from existing ops:
take_along_dim, tensordot, broadcast_shapes, logspace, tril_indices/triu_indices,
hsplit/vsplit/dsplit, split_with_sizes, sum_to_size, index_fill/index_fill_ and the in-place
view methods squeeze_/unsqueeze_/t_/transpose_ (tests/ops/test_missing_names.py tests them
one by one). Imported at the end of ``torch_core.py``, whose helpers it uses."""

from __future__ import annotations

import numpy as np

from tests.opinfo.torch_core import C, E, G, S, T, call_default

__all__: list = []

# -- take_along_dim, tensordot -------------------------------------------------------------------
_J = np.array([[0, 2], [1, 1], [3, 0]])
C(None, (E(S(3, 4), args=(_J, 1)), E(S(3, 4), args=(np.array([[0, 1, 2, 0]]), 0)),
         E(S(3, 4, layout="T"), args=(_J, -1)), E(S(3, 4), args=(np.array([[1], [0], [3]]), 1)),
         E(S(3, 4), args=(np.array([5, 0, 11]),)), E(S(3, 4), args=(np.array([0]), 1))),
  names=("Tensor.take_along_dim", "tg.take_along_dim"), raises=RuntimeError)  # fmt: skip
C(None, (E(S(3, 4, 5), S(4, 5, 2)), E(S(3, 4), S(4, 2), dims=1), E(S(2, 3), S(4), dims=0),
         E(S(3, 4, 5), S(5, 3, 2), dims=([0, 2], [1, 0])),
         E(S(3, 4, layout="T"), S(2, 4), dims=([1], [1])), E(S(2, 3), S(2, 3), dims=([0], [1]))),
  names=("tg.tensordot",), raises=RuntimeError)  # fmt: skip

# -- splits --------------------------------------------------------------------------------------
C(None, (E(S(6), args=(3,)), E(S(2, 6), args=(2,)), E(S(2, 6, layout="T"), args=([1, 4],)),
         E(S(2, 5), args=(2,)), E(S(), args=(1,))),
  names=("Tensor.hsplit", "tg.hsplit"), raises=RuntimeError)  # fmt: skip
C(None, (E(S(4, 3), args=(2,)), E(S(4, 3), args=([3],)), E(S(4), args=(2,))),
  names=("Tensor.vsplit", "tg.vsplit"), raises=RuntimeError)  # fmt: skip
C(None, (E(S(2, 3, 4), args=(2,)), E(S(2, 3, 4), args=([1, 1, 3],)), E(S(2, 4), args=(2,))),
  names=("Tensor.dsplit", "tg.dsplit"), raises=RuntimeError)  # fmt: skip
C(None, (E(S(5, 2), args=([2, 3],)), E(S(2, 5), args=([1, 0, 4], 1)),
         E(S(2, 5, layout="T"), args=([5],), dim=-1), E(S(5), args=([1, 2],))),
  names=("Tensor.split_with_sizes", "tg.split_with_sizes"), raises=RuntimeError)  # fmt: skip

# -- sum_to_size, index_fill ---------------------------------------------------------------------
T("sum_to_size", (E(S(2, 3), args=(1, 3)), E(S(2, 3), args=((3,),)), E(S(4, 2, 3), args=(2, 1)),
                  E(S(2, 3, layout="T"), args=(2, 3)), E(S(2, 3, dtype="int64"), args=(3,)),
                  E(S(2, 3), args=(4,))), call=call_default, raises=RuntimeError)  # fmt: skip
_K = np.array([0, 2])


def _index_fill(L, name, x, *rest):
    if rest and hasattr(rest[0], "shape"):  # a 0-d value tensor (differentiated): move it last
        rest = (*rest[1:], rest[0])
    return call_default(L, name, x, *rest)


C(None, (E(S(2, 3), args=(1, _K, -1.5)), E(S(3, 4, layout="T"), args=(0, np.array([-1]), 2.0)),
         E(S(2, 3), S(), args=(1, _K)), E(S(2, 3, dtype="int64"), args=(1, _K, 7)),
         E(S(2, 3), args=(1, np.array([3]), 0.0))),
  names=("Tensor.index_fill", "tg.index_fill", "Tensor.index_fill_"), call=_index_fill,
  raises=IndexError)

# -- broadcast_shapes and the factories ----------------------------------------------------------
G("broadcast_shapes", (E(args=((2, 1), (3,))), E(args=(2, (3, 1))), E(args=()),
                       E(args=((1,), (4, 1, 1), (5, 1))), E(args=((2,), (3,)))),
  call=lambda L, name, args: L.broadcast_shapes(*args), raises=RuntimeError)
G("logspace", (E(args=(0, 2, 3)), E(args=(0, 1, 5), base=2), E(args=(-1.5, 2.5, 7)),
               E(args=(0, 3, 1)), E(args=(0, 2, 3), dtype="float64"),
               E(args=(0, 2, 3), dtype="int64"), E(args=(0, 1, -1))),
  call=lambda L, name, args, dtype=None, **kw: L.logspace(*args, dtype=dtype and getattr(
      L, dtype), **kw), rtol=1e-6, atol=1e-6, raises=RuntimeError)  # fmt: skip
for _name in ("tril_indices", "triu_indices"):
    G(_name, (E(args=(3, 3)), E(args=(3, 4, 1)), E(args=(4, 3, -1)), E(args=(0, 3)),
              E(args=(3, 3), dtype="int32"), E(args=(-1, 3))),
      call=lambda L, name, args, dtype=None: getattr(L, name[3:])(
          *args, dtype=dtype and getattr(L, dtype)), raises=RuntimeError)  # fmt: skip

# -- the in-place view methods (on a non-leaf copy: call_default) --------------------------------
T("squeeze_", (E(S(2, 1, 3)), E(S(2, 1, 3), args=(1,)), E(S(2, 1, 3), args=(0,)),
               E(S(1, 2, 1), args=((0, 2),)), E(S(2, 3), args=(5,))), call=call_default,
  raises=IndexError)
T("unsqueeze_", (E(S(2, 3), args=(0,)), E(S(2, 3), args=(-1,)), E(S(), args=(0,)),
                 E(S(2, 3, layout="T"), args=(1,)), E(S(2, 3), args=(4,))), call=call_default,
  raises=IndexError)
T("t_", (E(S(2, 3)), E(S(4)), E(S()), E(S(2, 3, 4))), call=call_default, raises=RuntimeError)
T("transpose_", (E(S(2, 3, 4), args=(0, 2)), E(S(2, 3), args=(-1, -2)),
                 E(S(3, 4, layout="T"), args=(0, 1)), E(S(2, 3), args=(0, 2))),
  call=call_default, raises=IndexError)  # fmt: skip
