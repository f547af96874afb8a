"""Comparisons (``greater`` ... ``not_equal``), logic (``logical_*``, ``bitwise_*``) and the
selections by a condition (``where``, ``masked_fill``). The comparisons and logic give bools
(the bitwise ops of integers give integers) and are not differentiable; all broadcast like
numpy, and a Python number takes its partner's dtype.
"""

from __future__ import annotations

from .arithmetic import _arrays, _to_shapes
from .base import REGISTRY, Op, ShapeError, broadcast_shapes, register
from .promotion import torch_result
from .surface import binary, cast, declare, reflected, shape_of, unary

__all__ = ["COMPARISONS", "LOGICAL", "Where", "MaskedFill"]


@register
class Where(Op):
    r"""``where(cond, a, b)``: $a$ where cond holds, else $b$. Gradients are masked likewise."""

    name, arity, saves = "where", 3, (0,)
    onnx = "Where"

    def forward(self, xp, cond, a, b):
        return torch_result(xp, xp.where(cond, *_arrays(xp, a, b)), a, b)

    def vjp(self, F, g, inputs, out, shapes, needs):
        cond = inputs[0]
        zero = F.zeros_like(g)
        ga = F.where(cond, g, zero) if needs[1] else None
        gb = F.where(cond, zero, g) if needs[2] else None
        return _to_shapes(F, (None, ga, gb), shapes)


@register
class MaskedFill(Op):
    r"""``masked_fill(x, mask, value)``: ``value`` (a number or a 0-d tensor) where ``mask``
    holds, else $x$. $\partial L/\partial x = g$ where the mask is false, else 0; a tensor
    ``value`` gets the sum of $g$ where it is true."""

    name, arity, saves = "masked_fill", 3, (1,)

    def forward(self, xp, x, mask, value):
        if "bool" not in str(getattr(mask, "dtype", "bool")):
            raise TypeError(
                f"masked_fill: the mask must be a bool tensor (as in PyTorch), not "
                f"{mask.dtype}; make one with a comparison (x > 0) or mask.bool()"
            )
        return xp.where(mask, xp.asarray(value, dtype=x.dtype), x)

    def shape(self, xshape, mshape, vshape=()):
        if broadcast_shapes(self.name, xshape, mshape) != tuple(xshape) or len(vshape):
            raise ShapeError(
                f"masked_fill: the mask of shape {tuple(mshape)} must broadcast to the "
                f"input's shape {tuple(xshape)}, and the value (shape {tuple(vshape)}) must "
                "be a number or a 0-d tensor"
            )
        return tuple(xshape)

    def vjp(self, F, g, inputs, out, shapes, needs):
        mask = inputs[1]
        gx = F.where(mask, 0.0, g) if needs[0] else None
        gv = F.sum_to(F.where(mask, g, 0.0), shapes[2]) if needs[2] else None
        return gx, None, gv

    def onnx(self, ex, node, args):
        x, mask, value = args
        pre, (m,) = ex.to_bool([mask])
        like, n1 = ex.node("CastLike", [value, x], "fill_value")
        name, n2 = ex.node("Where", [m, like, x], "masked_fill")
        return pre + [n1, n2], name


def _flat_op(opname: str, doc: str, fn, arity: int = 2, onnx=None):
    """A non-differentiable elementwise op (comparison or logic) with a bool result;
    ``onnx`` is its ONNX form (see ``Op.onnx``)."""
    forward = (lambda self, xp, a, b: fn(xp, a, b)) if arity == 2 else (
        lambda self, xp, a: fn(xp, a)
    )
    cls = type(
        "".join(p.capitalize() for p in opname.split("_")),
        (Op,),
        {"__doc__": doc, "name": opname, "arity": arity, "differentiable": False,
         "forward": forward, "onnx": onnx},
    )  # fmt: skip
    return register(cls)


COMPARISONS = {
    name: _flat_op(name, f"``a {sym} b`` elementwise, as booleans. Not differentiable.", fn,
                   onnx=onnx)
    for name, sym, fn, onnx in [
        ("greater", ">", lambda xp, a, b: a > b, "Greater"),
        ("greater_equal", ">=", lambda xp, a, b: a >= b, "GreaterOrEqual"),
        ("less", "<", lambda xp, a, b: a < b, "Less"),
        ("less_equal", "<=", lambda xp, a, b: a <= b, "LessOrEqual"),
        ("equal", "==", lambda xp, a, b: a == b, "Equal"),
        ("not_equal", "!=", lambda xp, a, b: a != b,
         lambda self, ex, node, args: ex.chain([("Equal", args, {}), ("Not", ["{0}"], {})],
                                               "not_equal")),
    ]
}


def _logical(fn):
    return lambda xp, a, b: fn(xp, *_bools(xp, a, b))


def _bools(xp, *xs):
    return [x if getattr(x, "dtype", None) == xp.bool else xp.astype(xp.asarray(x), xp.bool)
            if hasattr(x, "shape") else bool(x) for x in xs]  # fmt: skip


def _onnx_logical(op_type):
    """The ONNX form of a logical op: ``op_type`` of its inputs cast to bool."""
    return lambda self, ex, node, args: ex.logical(node, args, op_type)


LOGICAL = {
    name: _flat_op(name, doc, fn, arity, _onnx_logical(onnx))
    for name, doc, fn, arity, onnx in [
        ("logical_and", "Elementwise AND of truth values (nonzero is true).",
         _logical(lambda xp, a, b: xp.logical_and(a, b)), 2, "And"),
        ("logical_or", "Elementwise OR of truth values.",
         _logical(lambda xp, a, b: xp.logical_or(a, b)), 2, "Or"),
        ("logical_xor", "Elementwise XOR of truth values.",
         _logical(lambda xp, a, b: xp.logical_xor(a, b)), 2, "Xor"),
        ("logical_not", "Elementwise NOT of truth values.",
         lambda xp, a: xp.logical_not(_bools(xp, a)[0]), 1, "Not"),
        ("bitwise_and", "``a & b``: AND of bools or of integer bits.",
         lambda xp, a, b: xp.bitwise_and(*_arrays(xp, a, b)), 2, "And"),
        ("bitwise_or", "``a | b``: OR of bools or of integer bits.",
         lambda xp, a, b: xp.bitwise_or(*_arrays(xp, a, b)), 2, "Or"),
        ("bitwise_xor", "``a ^ b``: XOR of bools or of integer bits.",
         lambda xp, a, b: xp.bitwise_xor(*_arrays(xp, a, b)), 2, "Xor"),
        ("bitwise_not", "``~a``: NOT of bools, or of integer bits.",
         lambda xp, a: xp.bitwise_invert(a), 1, "Not"),
    ]
}  # fmt: skip


# -- public surfaces: rows beside the ops (see tinygrad_edu.ops.surface) ----------------------
def _where(op, apply):
    def where(condition, input=None, other=None):
        """``input`` where ``condition`` holds, else ``other``; with the condition alone,
        ``nonzero(condition, as_tuple=True)`` (eager only)."""
        if input is None and other is None:
            return _nonzero_tuple(apply, condition)
        if input is None or other is None:
            raise TypeError("where() takes the condition alone, or the condition, input and "
                            "other (a number or a tensor each)")  # fmt: skip
        if hasattr(input, "shape") or hasattr(other, "shape"):
            return apply(op, condition, input, other)
        # two Python numbers: PyTorch's dtype for them (where(c, 1, 0.5) is float32). NOTE:
        # derivative rules call the op itself with numbers and keep their float64 precision.
        pair = (input, other)
        dtype = ("float32" if any(isinstance(v, float) for v in pair) else
                 "bool" if all(isinstance(v, bool) for v in pair) else "int64")  # fmt: skip
        return cast(apply, apply(op, condition, input, other), dtype)

    return where


def _nonzero_tuple(apply, condition):
    """``nonzero(condition, as_tuple=True)``: one index tensor per axis (a 0-d one as (1,))."""
    getitem, nonzero = REGISTRY["getitem"], REGISTRY["nonzero"]
    if shape_of("where", condition) == ():
        condition = apply(REGISTRY["reshape"], condition, shape=(1,))
    out = apply(nonzero, condition)
    n = len(shape_of("where", condition))
    return tuple(apply(getitem, out, index=(slice(None), i)) for i in range(n))


def _where_method(op, apply):
    def where(input, condition, other):  # x.where(cond, y) == where(cond, x, y)
        return apply(op, condition, input, other)

    return where


def _masked_fill(op, apply):
    def masked_fill(input, mask, value):
        return apply(op, input, mask, value)

    return masked_fill


declare("where", _where, functions=("where",))
declare("where", _where_method, methods=("where",))
declare("masked_fill", _masked_fill, methods=("masked_fill",), functions=("masked_fill",),
        inplace=("masked_fill_",))  # fmt: skip
for _name, _dunder, _short in (("greater", "__gt__", "gt"), ("greater_equal", "__ge__", "ge"),
                               ("less", "__lt__", "lt"), ("less_equal", "__le__", "le")):
    declare(_name, binary, methods=(_dunder, _short, _name), functions=(_short, _name))
# `==` on a symbolic Node stays identity (nodes are dict keys): these are tensor methods only
declare("equal", binary, methods=("__eq__", "eq"), functions=("eq",), symbolic=False)
declare("not_equal", binary, methods=("__ne__", "ne", "not_equal"),
        functions=("ne", "not_equal"), symbolic=False)  # fmt: skip
for _name in ("logical_and", "logical_or", "logical_xor"):
    declare(_name, binary, methods=(_name,), functions=(_name,))
declare("logical_not", unary, methods=("logical_not",), functions=("logical_not",))
for _name, _dunder in (("bitwise_and", "and"), ("bitwise_or", "or"), ("bitwise_xor", "xor")):
    declare(_name, binary, methods=(f"__{_dunder}__", _name), functions=(_name,))
    declare(_name, reflected, methods=(f"__r{_dunder}__",))
declare("bitwise_not", unary, methods=("__invert__", "bitwise_not"), functions=("bitwise_not",))
