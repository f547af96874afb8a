r"""Public surfaces: one declaration per op gives its ``Tensor`` method, its ``tg.`` function
and its symbolic ``Node`` method (PyTorch declares ops once in ``native_functions.yaml`` and
generates ``Tensor.x``, ``torch.x`` and the autograd node from it).

A row beside each op says which names it has and which *template* writes them:

>>> from tinygrad_edu.ops.surface import SURFACES
>>> row = next(s for s in SURFACES if "exp" in s.functions)
>>> row.op, row.template.__name__, row.methods, row.inplace
('exp', 'unary', ('exp',), ('exp_',))

A template is a function of ``(op, apply)`` that returns the public function, with PyTorch's
argument names (``dim``, ``keepdim``; numpy's ``axis``/``keepdims`` accepted as aliases) and
the input first, so the same function object serves as a method (``x.sum(1)``) and as a
function (``tg.sum(x, 1)``). ``apply(op, *inputs, **attrs)`` is the engine's: the eager engine
computes and records (``eager.tensor.apply_op``), the symbolic engine builds a node
(``symbolic.tensor_node.apply_op``), and the eager in-place methods (``add_``) write into the first
input. One template, three meanings, as with derivative rules and ``F``.

The generated functions are closures over ``op`` and ``apply``: a call costs what a
hand-written method costs (no lookups by name, no argument parsing on the plain path).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from typing import NamedTuple

__all__ = [
    "Surface", "SURFACES", "declare", "generate", "unary", "binary", "reflected",
    "reduction", "dims", "scalar_dims", "cast", "shape_of", "ValuesIndices",
]  # fmt: skip


class Surface(NamedTuple):
    """One row of the table: the public names of one op (or of a composite of ops)."""

    op: str | None  # the registry op the template applies (None: the template picks)
    template: Callable  # template(op, apply) -> the public function (input first)
    methods: tuple[str, ...]  # Tensor (and Node) method names, dunders included
    functions: tuple[str, ...]  # tg. function names
    inplace: tuple[str, ...]  # eager in-place method names (add_, __iadd__)
    properties: tuple[str, ...]  # names installed as properties (T, mT)
    symbolic: bool  # whether symbolic Nodes get the methods too
    nn: tuple[str, ...] = ()  # tg.nn.functional names


SURFACES: list[Surface] = []


def declare(op, template, *, methods=(), functions=(), inplace=(), properties=(), nn=(),
            symbolic=True) -> None:  # fmt: skip
    """Add a row to :data:`SURFACES` (called beside the op's definition)."""
    SURFACES.append(Surface(op, template, tuple(methods), tuple(functions), tuple(inplace),
                            tuple(properties), symbolic, tuple(nn)))  # fmt: skip


def generate(apply, *, symbolic: bool = False, apply_inplace=None):
    """Run every template with ``apply``: ``(methods, functions, nn)``, three dicts
    name -> function (``nn``: the ``tg.nn.functional`` names).

    Properties come back as ``property`` objects among the methods; in-place methods only
    when ``apply_inplace`` is given. A name declared twice is an error (one declaration per
    name).
    """
    from .base import REGISTRY  # noqa: PLC0415  (base imports nothing from here)

    methods: dict = {}
    functions: dict = {}
    nn: dict = {}

    def put(table, name, value, row):
        if name in table:
            raise ValueError(f"surface name {name!r} is declared twice (op {row.op!r})")
        table[name] = value

    for row in SURFACES:
        if symbolic and not row.symbolic:
            continue
        op = REGISTRY[row.op] if row.op else None
        fn = _named(row.template(op, apply), row, op)
        for name in row.methods:
            put(methods, name, fn, row)
        for name in row.functions:
            put(functions, name, fn, row)
        for name in row.nn:
            put(nn, name, fn, row)
        for name in row.properties:
            put(methods, name, property(fn, doc=fn.__doc__), row)
        if row.inplace and apply_inplace is not None:
            fn_ = _named(row.template(op, apply_inplace), row, op, inplace=True)
            for name in row.inplace:
                put(methods, name, fn_, row)
    return methods, functions, nn


def _named(fn, row, op, inplace=False):
    names = row.inplace if inplace else (row.functions or row.methods or row.properties or row.nn
                                         or row.inplace)  # fmt: skip
    fn.__name__ = fn.__qualname__ = names[0]
    if fn.__doc__ is None and op is not None:
        fn.__doc__ = op.__doc__
    if inplace:
        fn.__doc__ = f"In place: writes the result into the input.\n\n{fn.__doc__ or ''}"
    return fn


# -- templates ---------------------------------------------------------------------------------
def unary(op, apply):
    """``f(input)``."""

    def unary(input):
        return apply(op, input)

    return unary


def binary(op, apply):
    """``f(input, other)``: numbers and arrays are allowed on either side."""

    def binary(input, other):
        return apply(op, input, other)

    return binary


def reflected(op, apply):
    """``__radd__`` and friends: ``2 - x`` is ``sub(2, x)``."""

    def reflected(input, other):
        return apply(op, other, input)

    return reflected


def _alias(opname, value, default, alias, torch_name, numpy_name):
    if alias is None:
        return value
    if value is not default and value != alias:
        raise TypeError(f"{opname}: got both {torch_name}={value!r} and {numpy_name}={alias!r}")
    return alias


def dims(opname: str, dim):
    """``dim`` as None, an int or a tuple of ints; a clear error for anything else."""
    if dim is None or type(dim) is int:
        return dim
    if isinstance(dim, list | tuple) and all(type(d) is int for d in dim):
        return tuple(dim)
    if hasattr(dim, "__index__") and not isinstance(dim, bool):
        return int(dim)
    raise TypeError(
        f"{opname}: dim must be an int or a tuple of ints, got {dim!r} "
        f"({type(dim).__name__})"
    )


def scalar_dims(opname: str, input, dim):
    """``dim`` for ``input``, except that a 0-d input's only valid dims, 0 and -1 (PyTorch
    treats a 0-d tensor as having one dim of size 1), become None: nothing to reduce over."""
    if dim is None or getattr(input, "shape", None) != ():
        return dim
    for d in (dim,) if type(dim) is int else dim:
        if d not in (0, -1):
            raise IndexError(f"{opname}: dim {d} is out of range for a 0-d tensor (use 0 or -1)")
    if type(dim) is not int and len(dim) > 1:
        from .base import ShapeError  # noqa: PLC0415

        raise ShapeError(f"{opname}: dims {dim} name the one dim of a 0-d tensor twice")
    return None


def cast(apply, input, dtype):
    """``input`` converted to ``dtype`` first (the ``dtype=`` argument of PyTorch's ``sum``,
    ``mean``, ``cumsum``, ``softmax``...), recorded like ``x.to(dtype)``."""
    if dtype is None or dtype == getattr(input, "dtype", None):
        return input
    if hasattr(input, "astype"):  # the engine's own conversion (an int result leaves the graph)
        return input.astype(dtype)
    from .base import REGISTRY  # noqa: PLC0415  (base imports nothing from here)

    return apply(REGISTRY["astype"], input, dtype=dtype, src=getattr(input, "dtype", None))


def reduction(op, apply):
    """``f(input, dim=None, keepdim=False, *, dtype=None)``; numpy's ``axis``/``keepdims``
    are aliases."""

    def reduction(input, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
        if axis is not None or keepdims is not None:
            dim = _alias(op.name, dim, None, axis, "dim", "axis")
            keepdim = _alias(op.name, keepdim, False, keepdims, "keepdim", "keepdims")
        if dim is not None:
            dim = scalar_dims(op.name, input, dim if type(dim) is int else dims(op.name, dim))
        if dtype is not None:  # before and after: numpy sums int32 into int64
            return cast(apply, apply(op, cast(apply, input, dtype), axis=dim, keepdims=keepdim),
                        dtype)  # fmt: skip
        return apply(op, input, axis=dim, keepdims=keepdim)

    return reduction


def shape_of(opname: str, x) -> tuple:
    """``x.shape``, or an error saying the shape must be known (a symbolic Node may not know
    it: declare the Variable's shape)."""
    shape = getattr(x, "shape", ())
    if shape is None:
        raise TypeError(
            f"{opname} needs the input's shape, which is unknown here; declare it, e.g. "
            "Variable(name, shape=(...))"
        )
    return tuple(shape)


#: ``max(dim)`` and ``min(dim)`` return ``(values, indices)`` with names, as in PyTorch.
ValuesIndices = namedtuple("ValuesIndices", ["values", "indices"])
