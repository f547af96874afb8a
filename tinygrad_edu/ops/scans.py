r"""Scans, the running reductions along one dim: ``cumsum`` (also in place, ``cumsum_``),
``cumprod``, and ``diff`` (the differences of neighbours, a scan's inverse). The running
maximum and minimum with their indices (``cummax``, ``cummin``) are in
:mod:`~tinygrad_edu.ops.sorting`.

The derivative of ``cumsum`` is ``cumsum`` of the gradient from the other end; ``cumprod``'s
divides nothing (see ``Cumprod``), so it is exact where an element is zero.

>>> import tinygrad_edu as tg
>>> x = tg.tensor([1.0, 2.0, 3.0])
>>> x.cumsum(0), x.cumprod(0), x.diff()
(tensor([1., 3., 6.]), tensor([1., 2., 6.]), tensor([1., 1.]))
"""

from __future__ import annotations

from .base import REGISTRY, NoOnnx, Op, normalize_axes, register
from .promotion import category
from .reductions import _one_axis
from .surface import cast, declare, dims, shape_of

__all__ = ["Cumsum", "Cumprod"]


@register
class Cumsum(Op):
    r"""Running sums along ``dim`` (from the end when ``reverse``).
    $\partial L/\partial x$ = the running sums of $g$ in the other direction."""

    name = "cumsum"

    def forward(self, xp, x, dim=0, reverse=False):
        if x.ndim == 0:
            return xp.asarray(x, copy=True)
        if reverse:
            x = xp.flip(x, axis=dim)
        out = xp.cumulative_sum(x, axis=dim)
        return xp.flip(out, axis=dim) if reverse else out

    def shape(self, shape, dim=0, reverse=False):
        normalize_axes(self.name, dim, len(shape), shape)
        return tuple(shape)

    def vjp(self, F, g, inputs, out, shapes, needs, dim=0, reverse=False):
        return (F.cumsum(g, dim=dim, reverse=not reverse),)

    def onnx(self, ex, node, args):
        rank = len(ex.need_shape(node.inputs[0], "cumsum"))
        axis = ex.const(node.attrs.get("dim", 0) % max(rank, 1), "axis", "int64")
        return ex.one("CumSum", [args[0], axis], "cumsum",
                         reverse=int(bool(node.attrs.get("reverse"))))  # fmt: skip


@register
class Cumprod(Op):
    r"""Running products along ``dim`` (from the end when ``reverse``; each excluding its own
    element when ``exclusive``, so the first is 1).

    $\partial L/\partial x_k = \sum_i g_i \prod_{j \in S(i), j \ne k} x_j$ over the outputs
    $i$ whose products include $x_k$: the same running products of a matrix holding 1 in
    place of $x_k$ in row $k$ (exact where some $x_j = 0$; $O(n^2)$ in the length of ``dim``).
    """

    name, saves = "cumprod", (0,)
    onnx = NoOnnx("no ONNX operator: CumSum has no product form, and exp(cumsum(log x)) "
                  "is wrong at zeros and negatives")

    def forward(self, xp, x, dim=0, exclusive=False, reverse=False):
        if x.ndim == 0:
            return xp.ones_like(x) if exclusive else xp.asarray(x, copy=True)
        d = _one_axis(self.name, dim, x.shape)
        if reverse:
            x = xp.flip(x, axis=d)
        if exclusive:
            n = x.shape[d]
            keep = tuple(slice(None) if i != d else slice(0, max(n - 1, 0)) for i in range(x.ndim))
            one = xp.ones(tuple(1 if i == d else s for i, s in enumerate(x.shape)), dtype=x.dtype)
            x = xp.concat([one, x[keep]], axis=d) if n else x
        prod = getattr(xp, "cumulative_prod", None) or xp.cumprod
        out = prod(x, axis=d)
        if category(out.dtype) != 2 and out.dtype != xp.int64:
            out = xp.astype(out, xp.int64)
        return xp.flip(out, axis=d) if reverse else out

    def shape(self, shape, dim=0, exclusive=False, reverse=False):
        _one_axis(self.name, dim, shape)
        return tuple(shape)

    def vjp(self, F, g, inputs, out, shapes, needs, dim=0, exclusive=False, reverse=False):
        x = inputs[0]
        if shapes[0] == ():
            return (F.zeros_like(g) if exclusive else g,)
        xt = F.expand_dims(F.transpose(x, dim0=dim, dim1=-1), axis=-2)  # (..., 1, n): x_j
        ones = F.ones_like(xt * F.transpose(xt, dim0=-2, dim1=-1))  # (..., n, n)
        own = F.greater(F.tril(F.triu(ones)), 0.5)  # row k, column j: j == k
        runs = F.cumprod(F.where(own, 1.0, xt), dim=-1, exclusive=exclusive, reverse=reverse)
        if reverse:  # output i includes x_k: k >= i (k > i when exclusive)
            mask = F.tril(ones, diagonal=-1 if exclusive else 0)
        else:  # k <= i (k < i)
            mask = F.triu(ones, diagonal=1 if exclusive else 0)
        gt = F.expand_dims(F.transpose(g, dim0=dim, dim1=-1), axis=-2)  # (..., 1, n): g_i
        gk = F.sum(runs * mask * gt, axis=-1)  # (..., n): one per k
        return (F.transpose(gk, dim0=dim, dim1=-1),)


# -- public surfaces: rows beside the ops (see tinygrad_edu.ops.surface) ----------------------
def _cumsum(op, apply):
    def cumsum(input, dim=None, *, dtype=None, axis=None):
        dim = dims(op.name, axis if dim is None else dim)
        if type(dim) is not int:
            raise TypeError(f"cumsum: dim must be one int (PyTorch requires it), got {dim!r}")
        if getattr(input, "shape", None) == () and dim not in (0, -1):
            raise IndexError(f"cumsum: dim {dim} is out of range for a 0-d tensor (use 0 or -1)")
        return apply(op, cast(apply, input, dtype), dim=dim)

    return cumsum


def _cumprod(op, apply):
    def cumprod(input, dim, *, dtype=None):
        if type(dims("cumprod", dim)) is not int:
            raise TypeError(f"cumprod: dim must be one int, got {dim!r}")
        if getattr(input, "shape", None) == () and dim not in (0, -1):
            raise IndexError(f"cumprod: dim {dim} is out of range for a 0-d tensor (use 0 or -1)")
        return apply(op, cast(apply, input, dtype), dim=dim)

    return cumprod


def _cumsum_inplace(op, apply):
    """``x.cumsum_(dim, *, dtype=None)``: ``dtype`` must be ``x``'s own (PyTorch's rule: an
    in-place result keeps the tensor's dtype)."""
    cumsum = _cumsum(op, apply)

    def cumsum_(input, dim=None, *, dtype=None, axis=None):
        if dtype is not None and dtype != input.dtype:
            raise RuntimeError(f"cumsum_: dtype={dtype} differs from this tensor's "
                               f"{input.dtype}; an in-place result keeps the tensor's dtype "
                               "(use x.cumsum(dim, dtype=...) for a new tensor)")  # fmt: skip
        return cumsum(input, dim, axis=axis)

    return cumsum_


def _diff(op, apply):
    """``diff(input, n=1, dim=-1, prepend=None, append=None)``: differences of neighbours
    along ``dim``, ``n`` times (slices and ``sub``; ``cat`` for prepend/append)."""
    getitem, sub, cat = REGISTRY["getitem"], REGISTRY["sub"], REGISTRY["cat"]

    def diff(input, n=1, dim=-1, prepend=None, append=None):
        shape = shape_of("diff", input)
        if not shape:
            raise ValueError("diff: expects a tensor of at least 1 dim, got a 0-d tensor")
        d = _one_axis("diff", dim, shape)
        parts = [p for p in (prepend, input, append) if p is not None]
        x = apply(cat, *parts, dim=d) if len(parts) > 1 else input
        lead = (slice(None),) * d
        for _ in range(n):
            x = apply(sub, apply(getitem, x, index=lead + (slice(1, None),)),
                      apply(getitem, x, index=lead + (slice(None, -1),)))  # fmt: skip
        return x

    return diff


declare("cumsum", _cumsum, methods=("cumsum",), functions=("cumsum",))
declare("cumsum", _cumsum_inplace, inplace=("cumsum_",))
declare("cumprod", _cumprod, methods=("cumprod",), functions=("cumprod",))
declare(None, _diff, methods=("diff",), functions=("diff",))
