r"""``matmul(a, b, trans_A=False, trans_B=False)``: $\mathrm{op}(A)\,\mathrm{op}(B)$ where
$\mathrm{op}$ transposes the last two axes when asked. Leading (batch) axes broadcast."""

from __future__ import annotations

from .base import REGISTRY, Op, ShapeError, broadcast_shapes, fmt_shapes, register
from .surface import declare

__all__ = ["MatMul", "matrix_transpose"]


def matrix_transpose(xp, a):
    """Swap the last two axes of ``a``."""
    return a.T if a.ndim == 2 else xp.matrix_transpose(a)


@register
class MatMul(Op):
    r"""Matrix product with optional transposes (CSE599W's ``matmul_op``).

    For $C = AB$: $\partial L/\partial A = G B^\top$ and $\partial L/\partial B = A^\top G$.
    Each transposed case is the same product with the roles swapped, so no transpose is ever
    materialised.
    """

    name, arity, saves = "matmul", 2, (0, 1)
    saves_for = {0: (1,), 1: (0,)}  # A is read only for B's gradient, B only for A's
    torch_names = ("MmBackward0", "BmmBackward0")

    def variant(self, inputs, attrs):
        return 0 if inputs[0].ndim == 2 and inputs[1].ndim == 2 else 1

    def forward(self, xp, a, b, trans_A=False, trans_B=False):
        if trans_A:
            a = matrix_transpose(xp, a)
        if trans_B:
            b = matrix_transpose(xp, b)
        if a.ndim > 2 and b.ndim == 2:  # (..., n, k) @ (k, m) as one 2-D product: one BLAS
            # call instead of one per batch row (nn.Linear on (B, T, C) inputs, as in GPTs)
            out = xp.matmul(xp.reshape(a, (-1, a.shape[-1])), b)
            return xp.reshape(out, tuple(a.shape[:-1]) + (b.shape[-1],))
        return xp.matmul(a, b)

    def shape(self, ashape, bshape, trans_A=False, trans_B=False):
        if len(ashape) < 2 or len(bshape) < 2:
            raise ShapeError(
                f"matmul: shapes {fmt_shapes([ashape, bshape])} must both have at least 2 dims; "
                "reshape vectors to (1, n) or (n, 1)"
            )
        n, k = (ashape[-1], ashape[-2]) if trans_A else (ashape[-2], ashape[-1])
        k2, m = (bshape[-1], bshape[-2]) if trans_B else (bshape[-2], bshape[-1])
        if k != k2:
            flags = "".join(
                f", {f}=True" for f, on in (("trans_A", trans_A), ("trans_B", trans_B)) if on
            )
            raise ShapeError(
                f"matmul: shapes {fmt_shapes([ashape, bshape])} do not align{flags} "
                f"(inner sizes {k} and {k2}); transpose one side or fix the shapes"
            )
        try:
            batch = broadcast_shapes("matmul", ashape[:-2], bshape[:-2])
        except ShapeError:
            raise ShapeError(
                f"matmul: shapes {fmt_shapes([ashape, bshape])}: the batch axes "
                f"{tuple(ashape[:-2])} and {tuple(bshape[:-2])} cannot be broadcast together"
            ) from None
        return batch + (n, m)

    def vjp(self, F, g, inputs, out, shapes, needs, trans_A=False, trans_B=False):
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
            gb = (
                F.matmul(g, a, trans_A=True, trans_B=trans_A)
                if trans_B
                else F.matmul(a, g, trans_A=not trans_A)
            )
            gb = F.sum_to(gb, shapes[1])
        return ga, gb
        # END SOLUTION


# -- public surfaces: rows beside the ops (see tinygrad_edu.ops.surface) ---------------------
def _matmul(op, apply):
    """``matmul(input, other)`` with numpy's (and PyTorch's) rules for 1-D operands: a vector
    on the left is a row, on the right a column, and that dim is dropped from the result.
    ``trans_A``/``trans_B`` (keywords, not in PyTorch) transpose the last two dims first."""
    reshape = REGISTRY["reshape"]

    def matmul(input, other, *, trans_A=False, trans_B=False):
        sa, sb = getattr(input, "shape", None), getattr(other, "shape", None)
        if sa is None or sb is None or (len(sa) >= 2 and len(sb) >= 2):
            return apply(op, input, other, trans_A=trans_A, trans_B=trans_B)
        if len(sa) == 0 or len(sb) == 0:
            raise ShapeError(f"matmul: both inputs need at least 1 dim, got shapes "
                             f"{fmt_shapes([sa, sb])}; use * to multiply by a scalar")  # fmt: skip
        k_a = sa[-1] if len(sa) == 1 or not trans_A else sa[-2]
        k_b = sb[0] if len(sb) == 1 else sb[-1] if trans_B else sb[-2]
        if k_a != k_b:
            raise ShapeError(f"matmul: shapes {fmt_shapes([sa, sb])} do not align (inner sizes "
                             f"{k_a} and {k_b}); transpose one side or fix the shapes")  # fmt: skip
        a = apply(reshape, input, shape=(1, sa[0])) if len(sa) == 1 else input
        b = apply(reshape, other, shape=(sb[0], 1)) if len(sb) == 1 else other
        out = apply(op, a, b, trans_A=trans_A and len(sa) > 1, trans_B=trans_B and len(sb) > 1)
        shape = list(out.shape)
        if len(sb) == 1:
            del shape[-1]
        if len(sa) == 1:
            del shape[-1 if len(sb) == 1 else -2]
        return apply(reshape, out, shape=tuple(shape))

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
