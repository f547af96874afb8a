r"""``matmul(a, b, trans_A=False, trans_B=False)``: $\mathrm{op}(A)\,\mathrm{op}(B)$ where
$\mathrm{op}$ transposes the last two axes when asked. Leading (batch) axes broadcast."""

from __future__ import annotations

from .base import Op, ShapeError, broadcast_shapes, fmt_shapes, register

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

    @property
    def backward_name(self) -> str:
        return "MatMulBackward"

    def forward(self, xp, a, b, trans_A=False, trans_B=False):
        if trans_A:
            a = matrix_transpose(xp, a)
        if trans_B:
            b = matrix_transpose(xp, b)
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
