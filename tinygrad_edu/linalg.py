r"""``torch.linalg``'s basic functions on eager tensors: ``vector_norm``, ``matrix_norm``,
``norm``, ``inv``, ``det``, ``solve``, ``cross``, ``matmul``, ``multi_dot``, ``vecdot``.

Each is an op of the library (``vector_norm``, ``inv``, ``det``, ``solve``) or a composite of
ops (``matrix_norm`` is ``vector_norm`` and ``amax``), so derivatives of any order come from
the op library's rules. Decompositions (``svd``, ``eig``, ``qr``, ``cholesky``) are not here.

>>> import tinygrad_edu as tg
>>> a = tg.tensor([[3.0, 0.0], [0.0, 4.0]], requires_grad=True)
>>> tg.linalg.norm(a), tg.linalg.det(a), tg.linalg.inv(a)[1]
(tensor(5., grad_fn=<LinalgVectorNormBackward0>), tensor(12., grad_fn=<LinalgDetBackward0>), \
tensor([0.  , 0.25], grad_fn=<SelectBackward0>))
"""

from __future__ import annotations

import math

from .eager.dispatch import apply_op
from .ops import REGISTRY
from .ops.base import ShapeError
from .ops.linalg import _matmul
from .ops.matrix import _cross
from .ops.reductions import _vector_norm
from .ops.surface import cast

__all__ = ["vector_norm", "matrix_norm", "norm", "inv", "det", "solve", "cross", "matmul",
           "multi_dot", "vecdot"]  # fmt: skip

vector_norm = _vector_norm(REGISTRY["vector_norm"], apply_op)
matmul = _matmul(REGISTRY["matmul"], apply_op)
_cross_any = _cross(None, apply_op)


def cross(input, other, *, dim=-1):
    """The cross product of 3-vectors along ``dim`` (default the last)."""
    return _cross_any(input, other, dim=dim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The matrix norm over the two ``dim``: ``'fro'`` (the root of the sum of squares), 1 /
    -1 (the largest / smallest column sum of absolute values), ``inf`` / ``-inf`` (the same
    over rows). ``'nuc'`` and 2 need singular values and are not here."""
    A = cast(apply_op, A, dtype)
    if A.ndim < 2:
        raise ShapeError(f"matrix_norm: expects at least 2 dims, got shape {tuple(A.shape)}")
    rows, cols = (d % A.ndim for d in dim)
    if ord == "fro":
        return apply_op(REGISTRY["vector_norm"], A, ord=2.0, axis=(rows, cols), keepdims=keepdim)
    if ord in (1, -1, math.inf, -math.inf):
        inner, outer = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = apply_op(REGISTRY["vector_norm"], A, ord=1.0, axis=inner, keepdims=True)
        pick = REGISTRY["max" if ord > 0 else "min"]
        out = apply_op(pick, sums, axis=outer, keepdims=True)
        return out if keepdim else out.squeeze((rows, cols))
    raise ValueError(f"matrix_norm: ord={ord!r} is not supported here ('fro', 1, -1, inf, -inf; "
                     "'nuc' and 2 need singular values)")  # fmt: skip


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """``vector_norm`` when ``dim`` is an int or ``A`` is 1-D (or ``ord`` is None and ``dim``
    None: the 2-norm of all elements); ``matrix_norm`` when ``dim`` names two dims or ``A`` is
    2-D with a matrix ``ord``."""
    if ord is None and dim is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if isinstance(dim, int) or (dim is None and A.ndim == 1):
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if dim is None and A.ndim != 2:
        raise RuntimeError(f"linalg.norm: with ord={ord!r} and no dim, A must be 1-D or 2-D, "
                           f"got shape {tuple(A.shape)}")  # fmt: skip
    return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim,
                       keepdim, dtype=dtype)  # fmt: skip


def inv(A):
    """$A^{-1}$ (batched); a singular matrix is an error."""
    return apply_op(REGISTRY["inv"], A)


def det(A):
    r"""$\det A$ (batched)."""
    return apply_op(REGISTRY["det"], A)


def solve(A, B, *, left=True):
    r"""$X$ with $AX = B$ (``B`` a matrix, a batch of them, or a vector when ``B`` has one dim
    less than ``A``, as PyTorch decides)."""
    if not left:
        raise NotImplementedError("linalg.solve: left=False is not supported; transpose: "
                                  "solve(A.mT, B.mT).mT")  # fmt: skip
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    return apply_op(REGISTRY["solve"], A, B, vector=vector)


def multi_dot(tensors):
    """The product of a list of matrices (the first and last may be vectors), left to
    right."""
    if len(tensors) < 2:
        raise RuntimeError("multi_dot: expects at least two tensors")
    out = tensors[0]
    for t in tensors[1:]:
        out = matmul(out, t)
    return out


def vecdot(x, y, *, dim=-1):
    """The dot product of vectors along ``dim`` (``(x * y).sum(dim)``)."""
    return (x * y).sum(dim)
