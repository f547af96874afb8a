r"""``matmul(a, b, trans_A=False, trans_B=False)``: $\mathrm{op}(A)\,\mathrm{op}(B)$ where
$\mathrm{op}$ transposes the last two axes when asked. Leading (batch) axes broadcast."""

from __future__ import annotations

import math

from .base import Op, ShapeError, broadcast_shapes, fmt_shapes, register
from .promotion import result_type
from .surface import declare

__all__ = ["MatMul", "matrix_transpose"]


def matrix_transpose(xp, a):
    """Swap the last two axes of ``a``."""
    return a.T if a.ndim == 2 else xp.matrix_transpose(a)


@register
class MatMul(Op):
    r"""Matrix product with optional transposes (CSE599W's ``matmul_op``); a 1-D operand is a
    row on the left and a column on the right, and that dim is dropped from the result
    (numpy's and PyTorch's rule: matrix-vector, vector-matrix and dot products).

    For $C = AB$: $\partial L/\partial A = G B^\top$ and $\partial L/\partial B = A^\top G$.
    Each transposed case is the same product with the roles swapped, so no transpose is ever
    materialised; a vector's gradient is the matrix case's with the dropped dim restored.
    """

    name, arity, saves = "matmul", 2, (0, 1)
    saves_for = {0: (1,), 1: (0,)}  # A is read only for B's gradient, B only for A's
    # PyTorch's node depends on the operands' dims (its matmul dispatches to mm, mv, dot, and
    # folds batches into one mm whose result it views: UnsafeViewBackward0)
    torch_names = ("MmBackward0", "MvBackward0", "DotBackward0", "SqueezeBackward4",
                   "UnsafeViewBackward0")  # fmt: skip

    def variant(self, inputs, attrs):
        na, nb = inputs[0].ndim, inputs[1].ndim
        if na <= 2 and nb <= 2:
            return {(2, 2): 0, (2, 1): 1, (1, 1): 2, (1, 2): 3}[(na, nb)]
        return 4

    def forward(self, xp, a, b, trans_A=False, trans_B=False):
        if trans_A:
            a = matrix_transpose(xp, a)
        if trans_B:
            b = matrix_transpose(xp, b)
        if a.dtype != b.dtype:  # the library's promotion (numpy: int64 @ float32 is float64)
            dt = result_type(xp, a, b)
            a, b = (x if x.dtype == dt else xp.astype(x, dt) for x in (a, b))
        if a.ndim > 2 and b.ndim == 2:  # (..., n, k) @ (k, m) as one 2-D product: one BLAS
            # call instead of one per batch row (nn.Linear on (B, T, C) inputs, as in GPTs)
            out = xp.matmul(xp.reshape(a, (-1, a.shape[-1])), b)
            return xp.reshape(out, tuple(a.shape[:-1]) + (b.shape[-1],))
        return xp.matmul(a, b)

    def shape(self, ashape, bshape, trans_A=False, trans_B=False):
        if len(ashape) < 1 or len(bshape) < 1:
            raise ShapeError(
                f"matmul: both inputs need at least 1 dim, got shapes "
                f"{fmt_shapes([ashape, bshape])}; use * to multiply by a scalar"
            )
        if len(ashape) == 1 and trans_A or len(bshape) == 1 and trans_B:
            raise ShapeError(f"matmul: shapes {fmt_shapes([ashape, bshape])}: a 1-D operand "
                             "cannot be transposed (trans_A/trans_B)")  # fmt: skip
        a2 = (1,) + tuple(ashape) if len(ashape) == 1 else tuple(ashape)
        b2 = tuple(bshape) + (1,) if len(bshape) == 1 else tuple(bshape)
        n, k = (a2[-1], a2[-2]) if trans_A else (a2[-2], a2[-1])
        k2, m = (b2[-1], b2[-2]) if trans_B else (b2[-2], b2[-1])
        if k != k2:
            flags = "".join(
                f", {f}=True" for f, on in (("trans_A", trans_A), ("trans_B", trans_B)) if on
            )
            raise ShapeError(
                f"matmul: shapes {fmt_shapes([ashape, bshape])} do not align{flags} "
                f"(inner sizes {k} and {k2}); transpose one side or fix the shapes"
            )
        try:
            batch = broadcast_shapes("matmul", a2[:-2], b2[:-2])
        except ShapeError:
            raise ShapeError(
                f"matmul: shapes {fmt_shapes([ashape, bshape])}: the batch axes "
                f"{tuple(a2[:-2])} and {tuple(b2[:-2])} cannot be broadcast together"
            ) from None
        return batch + ((n,) if len(ashape) > 1 else ()) + ((m,) if len(bshape) > 1 else ())

    def vjp(self, F, g, inputs, out, shapes, needs, trans_A=False, trans_B=False):
        if _is_vector(shapes[0]) or _is_vector(shapes[1]):
            return self._vector_vjp(F, g, inputs, shapes, needs, trans_A, trans_B)
        # BEGIN SOLUTION A1.5
        a, b = inputs
        ga = gb = None
        if needs[0]:
            ga = (
                F.matmul(b, g, trans_A=trans_B, trans_B=True)
                if trans_A
                else F.matmul(g, b, trans_B=not trans_B)
            )
            ga = F.sum_to(ga, shapes[0])
        if needs[1]:
            if _folds(shapes, trans_A):  # (..., n, k) @ (k, m): one product over all rows
                rows, m = math.prod(shapes[0][:-1]), shapes[1][0 if trans_B else 1]
                a2, g2 = F.reshape(a, (rows, shapes[0][-1])), F.reshape(g, (rows, m))
                gb = F.matmul(g2, a2, trans_A=True) if trans_B else F.matmul(a2, g2, trans_A=True)
                return ga, gb
            gb = (
                F.matmul(g, a, trans_A=True, trans_B=trans_A)
                if trans_B
                else F.matmul(a, g, trans_A=not trans_A)
            )
            gb = F.sum_to(gb, shapes[1])
        return ga, gb
        # END SOLUTION

    def _vector_vjp(self, F, g, inputs, shapes, needs, trans_A, trans_B):
        """A vector operand: the matrix rule on ``(1, k)`` and ``(k, 1)``, then the dims
        dropped again (a 1-D operand is never transposed; the other one may be)."""
        row, col = _is_vector(shapes[0]), _is_vector(shapes[1])
        a, b = inputs
        # an operand is saved only when the other one needs its gradient (None otherwise)
        a2 = F.expand_dims(a, axis=0) if row and a is not None else a
        b2 = F.expand_dims(b, axis=-1) if col and b is not None else b
        g2 = F.expand_dims(g, axis=-1) if col else g
        g2 = F.expand_dims(g2, axis=-2) if row else g2
        sa = (1,) + shapes[0] if row else shapes[0]
        sb = shapes[1] + (1,) if col else shapes[1]
        ga, gb = self.vjp(F, g2, (a2, b2), None, (sa, sb), needs, trans_A, trans_B)
        return (F.squeeze(ga, dim=-2) if row and ga is not None else ga,
                F.squeeze(gb, dim=-1) if col and gb is not None else gb)  # fmt: skip

    def onnx(self, ex, node, args):
        a, b = args
        pre = []
        for k, flag in enumerate(("trans_A", "trans_B")):
            if node.attrs.get(flag):
                rank = len(ex.need_shape(node.inputs[k], "a transposed matmul"))
                perm = list(range(rank - 2)) + [rank - 1, rank - 2]
                t, n = ex.node("Transpose", [args[k]], "t", perm=perm)
                pre.append(n)
                a, b = (t, b) if k == 0 else (a, t)
        name, n = ex.node("MatMul", [a, b], "matmul")
        return pre + [n], name


def _folds(shapes, trans_A) -> bool:
    """Whether ``B``'s gradient of ``A @ B`` is one 2-D product: ``A`` (..., n, k) with batch
    dims, ``B`` a (k, m) matrix (``nn.Linear`` on (B, T, C) inputs, as in GPTs).

    NOTE [One product for a shared matrix's gradient]
        Each batch row adds ``A_i^T g_i`` into ``B``'s gradient. Done as one batched product
        and a sum over the batch, that is a small BLAS call per row and a reduction; with the
        rows of ``A`` and ``g`` stacked into 2-D matrices it is one product, as the forward
        already is (``forward``'s 2-D fold) and as PyTorch's ``matmul`` computes it (it folds
        the batch into one ``mm``). The sum over the rows then runs inside one GEMM instead
        of across per-row products and a reduction: the same terms added in another order,
        so the last bits differ from the batched form's, and the product is the one PyTorch
        computes (docs/performance.md, #32: makemore). Known shapes only; a transposed ``A``
        keeps the batched form."""
    return (not trans_A and isinstance(shapes[0], tuple) and isinstance(shapes[1], tuple)
            and len(shapes[0]) > 2 and len(shapes[1]) == 2
            and all(type(d) is int for d in shapes[0] + shapes[1]))  # fmt: skip


def _is_vector(shape) -> bool:
    """A known 1-D shape (an unknown one, a symbolic node, is taken as a matrix's)."""
    return isinstance(shape, tuple) and len(shape) == 1


# -- public surfaces: rows beside the ops (see tinygrad_edu.ops.surface) ---------------------
def _matmul(op, apply):
    """``matmul(input, other)`` with numpy's (and PyTorch's) rules for 1-D operands: a vector
    on the left is a row, on the right a column, and that dim is dropped from the result.
    ``trans_A``/``trans_B`` (keywords, not in PyTorch) transpose the last two dims first."""

    def matmul(input, other, *, trans_A=False, trans_B=False):
        return apply(op, input, other, trans_A=trans_A, trans_B=trans_B)

    return matmul


def _rmatmul(op, apply):
    forward = _matmul(op, apply)

    def rmatmul(input, other):
        return forward(other, input)

    return rmatmul


def _mm(op, apply):
    def mm(input, mat2):
        sa, sb = getattr(input, "shape", None), getattr(mat2, "shape", None)
        if (sa is not None and len(sa) != 2) or (sb is not None and len(sb) != 2):
            shapes = fmt_shapes([sa or (), sb or ()])
            raise ShapeError(f"mm: both inputs must be 2-D matrices, got shapes {shapes}; "
                             "use matmul for others")  # fmt: skip
        return apply(op, input, mat2)

    return mm


declare("matmul", _matmul, methods=("matmul", "__matmul__"), functions=("matmul",))
declare("matmul", _rmatmul, methods=("__rmatmul__",))
declare("matmul", _mm, methods=("mm",), functions=("mm",))
