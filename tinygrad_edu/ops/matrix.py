r"""Linear algebra beyond ``matmul``, with PyTorch's names: the ops ``einsum``, ``inv``,
``det`` and ``solve``; and composites built on ops: ``bmm``, ``addmm``, ``baddbmm``,
``addmv``, ``addr``, ``outer``/``ger``, ``dot``/``inner``/``vdot``, ``mv``, ``kron``,
``cross``, ``cdist``, ``tensordot``. The ``torch.linalg`` spellings are in
:mod:`tinygrad_edu.linalg`.

``einsum``'s rule is ``einsum`` again: the gradient of operand $i$ contracts the output's
gradient with the other operands back to operand $i$'s subscripts (and broadcasts over any
index only operand $i$ had). For $X = A^{-1}$: $\partial L/\partial A = -X^\top G X^\top$;
for $d = \det A$: $\partial L/\partial A = g\,d\,A^{-\top}$ (invertible $A$); for
$X = A^{-1}B$: $\partial L/\partial B = A^{-\top}G$, $\partial L/\partial A = -(A^{-\top}G)
X^\top$.

>>> import tinygrad_edu as tg
>>> a = tg.tensor([[2.0, 1.0], [0.0, 4.0]])
>>> tg.einsum("ij,j->i", a, tg.tensor([1.0, 1.0])), tg.outer(a[0], tg.tensor([3.0]))[:, 0]
(tensor([3., 4.]), tensor([6., 3.]))
"""

from __future__ import annotations

import string
from math import prod

from .base import (
    REGISTRY,
    NoOnnx,
    Op,
    ShapeError,
    broadcast_shapes,
    fmt_shapes,
    normalize_axes,
    register,
)
from .promotion import category
from .surface import declare, shape_of

__all__ = ["Einsum", "Inv", "Det", "Solve", "parse_einsum"]


# -- einsum ------------------------------------------------------------------------------------
def parse_einsum(equation: str, shapes) -> tuple[list[str], str]:
    """``(operand subscripts, output subscripts)`` with any ``...`` spelled out as capital
    letters (right-aligned, as broadcasting aligns dims); the output of an equation without
    ``->`` is numpy's: the ellipsis dims, then the letters used once, sorted."""
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: the equation {equation!r} has {len(terms)} operand(s) but "
                         f"{len(shapes)} were given")  # fmt: skip
    spare = iter(c for c in string.ascii_uppercase if c not in eq)
    ell_n = max((len(s) - len(t.replace("...", "")) for t, s in zip(terms, shapes)
                 if "..." in t), default=0)  # fmt: skip
    ell = "".join(next(spare) for _ in range(ell_n))
    subs = []
    for t, s in zip(terms, shapes):
        n = len(s) - len(t.replace("...", "")) if "..." in t else 0
        t = t.replace("...", ell[ell_n - n :]) if "..." in t else t
        if len(t) != len(s) or t and not t.isalpha():
            raise ValueError(f"einsum: the subscripts {t!r} do not fit an operand of shape "
                             f"{tuple(s)} in {equation!r}")  # fmt: skip
        if len(set(t)) != len(t):
            raise ValueError(f"einsum: an index repeated within one operand ({t!r}, a "
                             "diagonal) is not supported; take .diagonal() first")  # fmt: skip
        subs.append(t)
    if arrow:
        out = out.replace("...", ell)
    else:
        letters = "".join(subs)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1
                                   and c not in ell))  # fmt: skip
    if len(set(out)) != len(out) or any(c not in "".join(subs) for c in out):
        raise ValueError(f"einsum: the output subscripts {out!r} of {equation!r} must be "
                         "distinct and appear among the operands'")  # fmt: skip
    return subs, out


def _sizes(subs, shapes, equation):
    sizes: dict = {}
    for t, s in zip(subs, shapes):
        for c, n in zip(t, s):
            if sizes.get(c, 1) not in (1, n) and n != 1:
                raise ShapeError(f"einsum: index {c!r} has sizes {sizes[c]} and {n} in "
                                 f"{equation!r} (operands {fmt_shapes(shapes)})")  # fmt: skip
            sizes[c] = max(sizes.get(c, 1), n)
    return sizes


def _contract(xp, subs, out, arrays):
    """``einsum`` by broadcasting: each operand laid out over every index (size 1 where it
    has none), multiplied, summed over the indices not in ``out``. Any namespace; sizes of 1
    broadcast."""
    letters = sorted(set("".join(subs)), key=lambda c: (c not in out, out.find(c), c))
    total = None
    for t, a in zip(subs, arrays):
        order = sorted(range(len(t)), key=lambda i: letters.index(t[i]))
        a = xp.permute_dims(a, tuple(order)) if order != list(range(len(t))) else a
        placed = [t[i] for i in order]
        shape = tuple(a.shape[placed.index(c)] if c in placed else 1 for c in letters)
        a = xp.reshape(a, shape)
        total = a if total is None else total * a
    if len(letters) > len(out):
        total = xp.sum(total, axis=tuple(range(len(out), len(letters))))
    return total


@register
class Einsum(Op):
    r"""``einsum(equation, *operands)``: products summed over the indices the output lacks
    (``"ij,jk->ik"`` is a matrix product). $\partial L/\partial$ operand $i$ is ``einsum`` of
    $g$ with the other operands back to operand $i$'s indices."""

    name, arity = "einsum", -1
    saves = tuple(range(16))
    view = True  # a permutation or a diagonal ("ij->ji", "ii->i") is a view, as in PyTorch

    def forward(self, xp, *arrays, equation=""):
        shapes = [tuple(a.shape) for a in arrays]
        subs, out = parse_einsum(equation, shapes)
        sizes = _sizes(subs, shapes, equation)
        if len({a.dtype for a in arrays}) > 1:
            raise TypeError(f"einsum: the operands have different dtypes "
                            f"({', '.join(str(a.dtype) for a in arrays)}); convert them to one")
        einsum = getattr(xp, "einsum", None)
        same = all(n == sizes[c] for t, s in zip(subs, shapes) for c, n in zip(t, s))
        if einsum is not None and same:
            return xp.asarray(einsum(",".join(subs) + "->" + out, *arrays))
        return _contract(xp, subs, out, arrays)

    def shape(self, *shapes, equation=""):
        subs, out = parse_einsum(equation, shapes)
        sizes = _sizes(subs, shapes, equation)
        return tuple(sizes[c] for c in out)

    def vjp(self, F, g, inputs, out, shapes, needs, equation=""):
        shapes = [_static_shape(s) for s in shapes]
        subs, outs = parse_einsum(equation, shapes)
        product = _as_product(subs, outs)
        if product is not None:  # a product or a matrix product: that op's rule, written once
            name, attrs = product
            return tuple(REGISTRY[name].vjp(F, g, inputs, out, shapes, needs, **attrs))
        grads = []
        for i, need in enumerate(needs):
            if not need:
                grads.append(None)
                continue
            others = [t for j, t in enumerate(subs) if j != i]
            seen = set(outs + "".join(others))
            kept = "".join(c for c in subs[i] if c in seen)
            operands = [g] + [x for j, x in enumerate(inputs) if j != i]
            gi = F.einsum(*operands, equation=",".join([outs] + others) + "->" + kept)
            if kept != subs[i]:  # indices only operand i had: the gradient is constant there
                gi = F.reshape(gi, tuple(gi.shape[kept.index(c)] if c in kept else 1
                                         for c in subs[i]))  # fmt: skip
                gi = F.broadcast_to(gi, shapes[i])
            grads.append(F.sum_to(gi, shapes[i]))
        return tuple(grads)

    def onnx(self, ex, node, args):
        return ex.one("Einsum", args, "einsum", equation=node.attrs["equation"])


def _as_product(subs: list[str], out: str):
    """``("mul", {})`` for an elementwise product (``"ij,j->ij"``), ``("matmul", {trans_A,
    trans_B})`` for a (batched) matrix product (``"bij,bkj->bik"``), else None: these
    equations take the ``mul`` and ``matmul`` derivative rules rather than a second copy."""
    if len(subs) != 2:
        return None
    a, b = subs
    if len(set(a)) < len(a) or len(set(b)) < len(b):  # a diagonal ("ii,i->i")
        return None
    if len(out) == max(len(a), len(b)) and a == out[len(out) - len(a):] and (
            b == out[len(out) - len(b):]):  # fmt: skip
        return "mul", {}
    if not (len(a) == len(b) == len(out) >= 2 and a[:-2] == b[:-2] == out[:-2]):
        return None
    i, k = out[-2:]
    shared = set(a[-2:]) & set(b[-2:])
    if i == k or len(shared) != 1 or set(a[-2:]) != {i, *shared} or set(b[-2:]) != {k, *shared}:
        return None
    (j,) = shared
    if j in out or len({i, j, k} & set(out[:-2])):
        return None
    return "matmul", {"trans_A": a[-2:] == j + i, "trans_B": b[-2:] == k + j}


def _static_shape(shape):
    if not isinstance(shape, tuple):
        raise ShapeError("einsum: its derivative needs the operands' static shapes; declare "
                         "the Variables' shapes (Variable(name, shape=...))")  # fmt: skip
    return shape


# -- inverse, determinant, solve ---------------------------------------------------------------
def _square(opname, shape):
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ShapeError(f"{opname}: expects square matrices (..., n, n), got shape "
                         f"{tuple(shape)}")  # fmt: skip


def _floating(opname, x):
    if category(x.dtype) != 2:
        raise TypeError(f"{opname}: the input is {x.dtype}; it needs a floating dtype (convert "
                        "first, e.g. A.double())")  # fmt: skip


def _mT(F, x):
    return F.transpose(x, dim0=-2, dim1=-1)


@register
class Inv(Op):
    r"""$A^{-1}$ (batched). A singular matrix is an error. $\partial L/\partial A =
    -A^{-\top} G A^{-\top}$ (reuses the output)."""

    name, saves_output, torch_name = "inv", True, "LinalgInvExBackward0"
    onnx = NoOnnx("no ONNX operator: ONNX has Det, but no inverse or linear solve")

    def forward(self, xp, a):
        _floating(self.name, a)
        self.shape(a.shape)
        try:
            out = xp.linalg.inv(a)
        except Exception as e:  # numpy's LinAlgError: a singular matrix
            raise RuntimeError(f"inv: the matrix is singular (not invertible): {e}") from None
        return out

    def shape(self, shape):
        _square(self.name, shape)
        return tuple(shape)

    def vjp(self, F, g, inputs, out, shapes, needs):
        t = _mT(F, out)
        return (-F.matmul(F.matmul(t, g), t),)


@register
class Det(Op):
    r"""$\det A$ (batched). $\partial L/\partial A = g\,\det A\,A^{-\top}$ (for invertible
    $A$)."""

    name, saves, saves_output, torch_name = "det", (0,), True, "LinalgDetBackward0"
    onnx = "Det"

    def forward(self, xp, a):
        _floating(self.name, a)
        self.shape(a.shape)
        return xp.linalg.det(a)

    def shape(self, shape):
        _square(self.name, shape)
        return tuple(shape[:-2])

    def vjp(self, F, g, inputs, out, shapes, needs):
        scale = F.expand_dims(F.expand_dims(g * out, axis=-1), axis=-1)
        return (scale * _mT(F, F.inv(inputs[0])),)


@register
class Solve(Op):
    r"""$X = A^{-1}B$ (``b`` a matrix or, when ``vector``, a batch of vectors).
    $\partial L/\partial B = A^{-\top}G$ and $\partial L/\partial A = -(A^{-\top}G)X^\top$."""

    name, arity, saves, saves_output = "solve", 2, (0,), True
    onnx = NoOnnx("no ONNX operator: ONNX has Det, but no inverse or linear solve")
    torch_name = "LinalgSolveExBackward0"

    def forward(self, xp, a, b, vector=False):
        _floating(self.name, a)
        self.shape(a.shape, b.shape, vector)
        bb = b[..., None] if vector else b
        try:
            if bb.ndim == 2 and a.ndim == 2:
                out = xp.linalg.solve(a, bb)
            else:
                batch = broadcast_shapes("solve", a.shape[:-2], bb.shape[:-2])
                out = xp.linalg.solve(xp.broadcast_to(a, batch + a.shape[-2:]),
                                      xp.broadcast_to(bb, batch + bb.shape[-2:]))  # fmt: skip
        except Exception as e:  # numpy's LinAlgError: a singular matrix
            raise RuntimeError(f"solve: the matrix A is singular (not invertible): {e}") from None
        return out[..., 0] if vector else out

    def shape(self, ashape, bshape, vector=False):
        _square(self.name, ashape)
        n = ashape[-1]
        rows = bshape[-1] if vector else (bshape[-2] if len(bshape) >= 2 else None)
        if rows != n:
            raise ShapeError(f"solve: A of shape {tuple(ashape)} and B of shape {tuple(bshape)} "
                             f"do not fit: B needs {n} rows")  # fmt: skip
        cols = () if vector else (bshape[-1],)
        lead = bshape[:-1] if vector else bshape[:-2]
        return broadcast_shapes("solve", ashape[:-2], lead) + (n,) + cols

    def vjp(self, F, g, inputs, out, shapes, needs, vector=False):
        a = inputs[0]
        gb = F.solve(_mT(F, a), g, vector=vector)
        ga = None
        if needs[0]:
            if vector:
                ga = -F.expand_dims(gb, axis=-1) * F.expand_dims(out, axis=-2)
            else:
                ga = -F.matmul(gb, _mT(F, out))
            ga = F.sum_to(ga, shapes[0])
        return ga, F.sum_to(gb, shapes[1]) if needs[1] else None


# -- public surfaces: rows beside the ops (see tinygrad_edu.ops.surface) ---------------------
def _einsum(op, apply):
    """``einsum(equation, *operands)``. An index repeated within one operand (``"ii->i"``)
    takes that operand's ``diagonal`` first."""
    diagonal = REGISTRY["diagonal"]

    def einsum(equation, *operands):
        if len(operands) == 1 and isinstance(operands[0], list | tuple):
            operands = tuple(operands[0])
        if not isinstance(equation, str):
            raise TypeError("einsum: the first argument is the equation, e.g. "
                            "einsum('ij,jk->ik', a, b)")  # fmt: skip
        lhs, arrow, rhs = equation.replace(" ", "").partition("->")
        terms, operands = lhs.split(","), list(operands)
        if not arrow and "..." not in lhs:  # implicit output: the indices used once, sorted
            arrow, rhs = "->", "".join(sorted(c for c in set(lhs) if lhs.count(c) == 1
                                              and c.isalpha()))  # fmt: skip
        for k, t in enumerate(terms):
            while "..." not in t and len(set(t)) < len(t) and k < len(operands):
                c = next(c for c in t if t.count(c) > 1)
                i, j = t.index(c), t.index(c, t.index(c) + 1)
                operands[k] = apply(diagonal, operands[k], offset=0, dim1=i, dim2=j)
                t = t[:i] + t[i + 1 : j] + t[j + 1 :] + c
            terms[k] = t
        return apply(op, *operands, equation=",".join(terms) + arrow + rhs)

    return einsum


def _need(opname, x, ndims):
    n = len(shape_of(opname, x))
    if n not in ndims:
        raise ShapeError(f"{opname}: expects {' or '.join(map(str, ndims))}-D input(s), got a "
                         f"tensor of shape {shape_of(opname, x)}")  # fmt: skip


def _bmm(op, apply):
    matmul = REGISTRY["matmul"]

    def bmm(input, mat2):
        _need("bmm", input, (3,))
        _need("bmm", mat2, (3,))
        if shape_of("bmm", input)[0] != shape_of("bmm", mat2)[0]:
            raise ShapeError(f"bmm: batch sizes differ: {fmt_shapes([input.shape, mat2.shape])}")
        return apply(matmul, input, mat2)

    return bmm


def _add_product(name, ndims):
    """``addmm``/``baddbmm``/``addmv``/``addr``: $\\beta\\,\\mathrm{input} + \\alpha\\,
    \\mathrm{product}$ (``mul``, ``add`` and the product's op)."""

    def template(op, apply):
        matmul, mul, add = REGISTRY["matmul"], REGISTRY["mul"], REGISTRY["add"]
        outer = _outer(None, apply)

        def product(a, b):
            for x, n in zip((a, b), ndims):
                _need(name, x, (n,))
            if name == "addr":
                return outer(a, b)
            if name == "addmv":
                return _matmul_fn(apply)(a, b)
            return apply(matmul, a, b)

        def add_product(input, a, b, *, beta=1, alpha=1):
            p = product(a, b)
            if alpha != 1:
                p = apply(mul, p, alpha)
            if beta == 0:  # as in PyTorch: input is ignored (nan in it does not spread)
                want = shape_of(name, p)
                if broadcast_shapes(name, shape_of(name, input), want) != want:
                    raise ShapeError(f"{name}: input of shape {shape_of(name, input)} does not "
                                     f"broadcast to the product's shape {want}")  # fmt: skip
                return p
            return apply(add, input if beta == 1 else apply(mul, input, beta), p)

        return add_product

    return template


def _matmul_fn(apply):
    from .linalg import _matmul  # noqa: PLC0415

    return _matmul(REGISTRY["matmul"], apply)


def _outer(op, apply):
    """``outer(input, vec2)``: ``input[:, None] * vec2[None, :]`` (a ``mul``)."""
    expand, mul = REGISTRY["expand_dims"], REGISTRY["mul"]

    def outer(input, vec2):
        _need("outer", input, (1,))
        _need("outer", vec2, (1,))
        return apply(mul, apply(expand, input, axis=1), apply(expand, vec2, axis=0))

    return outer


def _dot(name):
    """``dot``/``vdot``/``inner`` of two vectors (``inner`` also of larger tensors): a
    ``matmul`` of vectors (``einsum`` for ``inner``)."""

    def template(op, apply):
        matmul = _matmul_fn(apply)

        def dot(input, other):
            if name == "inner" and (len(shape_of(name, input)) != 1
                                    or len(shape_of(name, other)) != 1):  # fmt: skip
                sa, sb = shape_of(name, input), shape_of(name, other)
                if not sa or not sb:
                    return apply(REGISTRY["mul"], input, other)
                left = string.ascii_lowercase[: len(sa) - 1]
                right = string.ascii_lowercase[len(sa) - 1 : len(sa) + len(sb) - 2]
                return apply(REGISTRY["einsum"], input, other,
                             equation=f"{left}z,{right}z->{left}{right}")  # fmt: skip
            _need(name, input, (1,))
            _need(name, other, (1,))
            if getattr(input, "dtype", None) != getattr(other, "dtype", None):
                raise RuntimeError(f"{name}: expects both vectors to have the same dtype, got "
                                   f"{input.dtype} and {other.dtype}")  # fmt: skip
            return matmul(input, other)

        return dot

    return template


def _mv(op, apply):
    matmul = _matmul_fn(apply)

    def mv(input, vec):
        _need("mv", input, (2,))
        _need("mv", vec, (1,))
        return matmul(input, vec)

    return mv


def _kron(op, apply):
    """``kron(input, other)``: every element of ``input`` times ``other``, laid out in blocks
    (an ``einsum`` of the two, then a ``reshape``)."""

    def kron(input, other):
        sa, sb = shape_of("kron", input), shape_of("kron", other)
        n = max(len(sa), len(sb))
        sa, sb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
        a = apply(REGISTRY["reshape"], input, shape=sa)
        b = apply(REGISTRY["reshape"], other, shape=sb)
        left, right = string.ascii_lowercase[:n], string.ascii_uppercase[:n]
        pairs = "".join(x + y for x, y in zip(left, right))
        out = apply(REGISTRY["einsum"], a, b, equation=f"{left},{right}->{pairs}")
        return apply(REGISTRY["reshape"], out, shape=tuple(x * y for x, y in zip(sa, sb)))

    return kron


def _cross(op, apply):
    """``cross(input, other, dim=None)``: the cross product of 3-vectors along ``dim`` (the
    first dim of size 3 when None; ``linalg.cross``'s default is -1), from slices, ``mul``
    and ``sub``."""
    getitem, mul, sub, stack = (REGISTRY[n] for n in ("getitem", "mul", "sub", "stack"))

    def cross(input, other, dim=None):
        sa, sb = shape_of("cross", input), shape_of("cross", other)
        shape = broadcast_shapes("cross", sa, sb)
        if len(sa) != len(sb):
            raise ShapeError(f"cross: inputs must have the same number of dims, got "
                             f"{fmt_shapes([sa, sb])}")  # fmt: skip
        if dim is None:
            dim = next((i for i, n in enumerate(shape) if n == 3), None)
            if dim is None:
                raise ShapeError(f"cross: no dim of size 3 in shapes {fmt_shapes([sa, sb])}")
        d = dim % len(shape) if shape else 0
        if not shape or shape[d] != 3 or sa[d] != 3 or sb[d] != 3:
            raise ShapeError(f"cross: dim {dim} must have size 3 in both inputs, got shapes "
                             f"{fmt_shapes([sa, sb])}")  # fmt: skip

        def part(x, i):
            return apply(getitem, x, index=(slice(None),) * d + (i,))

        a, b = [part(input, i) for i in range(3)], [part(other, i) for i in range(3)]
        comps = [apply(sub, apply(mul, a[(i + 1) % 3], b[(i + 2) % 3]),
                       apply(mul, a[(i + 2) % 3], b[(i + 1) % 3])) for i in range(3)]
        return apply(stack, *comps, dim=d)

    return cross


def _cdist(op, apply):
    r"""``cdist(x1, x2, p=2.0)``: the ``p``-norm distance between every row of ``x1`` (..., P,
    M) and every row of ``x2`` (..., R, M): differences by broadcasting, then
    ``vector_norm`` over the last dim."""
    expand, sub, norm = REGISTRY["expand_dims"], REGISTRY["sub"], REGISTRY["vector_norm"]

    def cdist(x1, x2, p=2.0, compute_mode=None):
        sa, sb = shape_of("cdist", x1), shape_of("cdist", x2)
        if len(sa) < 2 or len(sb) < 2 or sa[-1] != sb[-1]:
            raise ShapeError(f"cdist: expects x1 (..., P, M) and x2 (..., R, M) with the same "
                             f"M, got {fmt_shapes([sa, sb])}")  # fmt: skip
        if p < 0:
            raise RuntimeError(f"cdist: p must be non-negative, got {p}")
        diff = apply(sub, apply(expand, x1, axis=-2), apply(expand, x2, axis=-3))
        return apply(norm, diff, ord=float(p), axis=-1, keepdims=False)

    return cdist


def _inverse(op, apply):
    def inverse(input):
        return apply(op, input)

    return inverse


def _det(op, apply):
    def det(input):
        return apply(op, input)

    return det


declare("einsum", _einsum, functions=("einsum",))
declare(None, _bmm, methods=("bmm",), functions=("bmm",))
declare(None, _add_product("addmm", (2, 2)), methods=("addmm",), functions=("addmm",))
declare(None, _add_product("baddbmm", (3, 3)), methods=("baddbmm",), functions=("baddbmm",))
declare(None, _add_product("addmv", (2, 1)), methods=("addmv",), functions=("addmv",))
declare(None, _add_product("addr", (1, 1)), methods=("addr",), functions=("addr",))
declare(None, _outer, methods=("outer", "ger"), functions=("outer", "ger"))
declare(None, _dot("dot"), methods=("dot",), functions=("dot",))
declare(None, _dot("vdot"), methods=("vdot",), functions=("vdot",))
declare(None, _dot("inner"), methods=("inner",), functions=("inner",))
declare(None, _mv, methods=("mv",), functions=("mv",))
declare(None, _kron, methods=("kron",), functions=("kron",))
declare(None, _cross, methods=("cross",), functions=("cross",))
declare(None, _cdist, functions=("cdist",))
declare("inv", _inverse, methods=("inverse",), functions=("inverse",))
declare("det", _det, methods=("det",), functions=("det",))


# -- tensordot, a permute, a reshape and one matmul ------------------------------------------
def _tensordot(op, apply):
    """``tensordot(a, b, dims=2)``: the dims of ``a`` and ``b`` named by ``dims`` (an int:
    the last ``dims`` of ``a`` with the first of ``b``; or two lists) contracted. A
    ``permute`` and ``reshape`` of each operand into a matrix, one ``matmul``, a
    ``reshape``."""
    permute, reshape, matmul = REGISTRY["permute"], REGISTRY["reshape"], REGISTRY["matmul"]

    def tensordot(a, b, dims=2):
        sa, sb = shape_of("tensordot", a), shape_of("tensordot", b)
        if hasattr(dims, "tolist"):
            dims = dims.tolist()
        if isinstance(dims, int):
            if dims < 0:
                raise ShapeError(f"tensordot: expects dims >= 0, but got dims={dims}")
            if dims > min(len(sa), len(sb)):
                raise ShapeError(f"tensordot: dims={dims} is more than the dims of shapes {sa} "
                                 f"and {sb}")  # fmt: skip
            da, db = list(range(len(sa) - dims, len(sa))), list(range(dims))
        else:
            if len(dims) != 2 or any(isinstance(d, int) for d in dims):
                raise TypeError(f"tensordot: dims must be an int or two lists of dims, got "
                                f"{dims!r}")  # fmt: skip
            da, db = (list(d) for d in dims)
            if len(da) != len(db):
                raise ShapeError(f"tensordot: both dimension lists should have same length, got "
                                 f"{da} and {db}")  # fmt: skip
            da = [normalize_axes("tensordot", d, max(len(sa), 1), sa)[0] for d in da]
            db = [normalize_axes("tensordot", d, max(len(sb), 1), sb)[0] for d in db]
        for i, j in zip(da, db):
            if sa[i] != sb[j]:
                raise ShapeError(
                    f"tensordot: contracted dimensions need to match, but the first (shape "
                    f"{sa}) has size {sa[i]} in dim {i} and the second (shape {sb}) has size "
                    f"{sb[j]} in dim {j}"
                )
        fa = [i for i in range(len(sa)) if i not in da]
        fb = [j for j in range(len(sb)) if j not in db]
        k = prod(sa[i] for i in da)
        ma = apply(reshape, apply(permute, a, axes=tuple(fa + da)),
                   shape=(prod(sa[i] for i in fa), k))  # fmt: skip
        mb = apply(reshape, apply(permute, b, axes=tuple(db + fb)),
                   shape=(k, prod(sb[j] for j in fb)))  # fmt: skip
        return apply(reshape, apply(matmul, ma, mb),
                     shape=tuple(sa[i] for i in fa) + tuple(sb[j] for j in fb))  # fmt: skip

    return tensordot


declare(None, _tensordot, functions=("tensordot",), symbolic=False)
