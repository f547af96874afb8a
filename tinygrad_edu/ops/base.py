"""The `Op` base class, the registry of ops, and the shape helpers every shape rule uses."""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "Op",
    "ShapeError",
    "REGISTRY",
    "register",
    "get_op",
    "broadcast_shapes",
    "normalize_axes",
    "fmt_shapes",
]


class ShapeError(ValueError, RuntimeError):
    """An op was given inputs whose shapes it cannot combine. The message names the op and
    every input shape.

    A ``ValueError`` (numpy's habit) that is also a ``RuntimeError``, which is what PyTorch
    raises for shape mismatches: ``except RuntimeError`` in PyTorch code catches it too."""


REGISTRY: dict[str, Op] = {}


def register(cls: type[Op]) -> type[Op]:
    """Class decorator: create the op's single instance and enter it in ``REGISTRY``."""
    op = cls()
    if op.name in REGISTRY:
        raise ValueError(f"op {op.name!r} is defined twice")
    REGISTRY[op.name] = op
    return cls


def get_op(name: str) -> Op:
    """The op called ``name`` (``"mul"``, ``"matmul"``, ...)."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"no op named {name!r}; known ops: {', '.join(sorted(REGISTRY))}") from None


class Op:
    """One operation, defined once for every engine.

    Subclasses set ``name`` and ``arity`` and write three things:

    * ``forward(xp, *inputs, **attrs)``: the computation on raw arrays of namespace ``xp``;
    * ``shape(*shapes, **attrs)``: the shape rule, raising :class:`ShapeError` naming the op and
      every input shape;
    * ``vjp(F, g, inputs, out, shapes, needs, **attrs)``: the derivative rule. Given the
      gradient ``g`` of the output it returns one gradient per input (``None`` where
      ``needs[i]`` is false). It computes only with operators and ``F``, an engine's functional
      namespace, so the same rule runs on raw arrays, on eager tensors and on symbolic nodes.

    ``saves`` lists which inputs' *values* the rule reads (by position); ``saves_output`` says
    whether it reads the output. Everything else reaches the rule as a shape only (Paddle's
    "no need buffer"), so a graph holds only what backward truly needs. ``saves_for`` narrows
    ``saves`` further: ``{0: (1,)}`` means input 0 is read only for input 1's gradient, so
    the eager engine keeps it only when input 1 needs one (the rule then gets ``None`` there).
    """

    name: ClassVar[str] = ""
    arity: ClassVar[int] = 1
    saves: ClassVar[tuple[int, ...]] = ()
    saves_output: ClassVar[bool] = False
    saves_for: ClassVar[dict[int, tuple[int, ...]]] = {}
    differentiable: ClassVar[bool] = True
    #: the op's output is a view of input 0 (shares its memory), as in PyTorch.
    view: ClassVar[bool] = False
    #: PyTorch's ``grad_fn`` name for this op, when it is not ``<Name>Backward0``.
    torch_name: ClassVar[str | None] = None
    #: PyTorch's names for an op whose node name depends on the call (``x.sum()`` is
    #: ``SumBackward0``, ``x.sum(dim)`` ``SumBackward1``); :meth:`variant` picks one.
    torch_names: ClassVar[tuple[str, ...]] = ()

    @property
    def backward_name(self) -> str:
        """The eager engine's node name, PyTorch's: ``"mul"`` -> ``"MulBackward0"``."""
        if self.torch_name:
            return self.torch_name
        return "".join(p.capitalize() for p in self.name.split("_")) + "Backward0"

    def variant(self, inputs, attrs: dict) -> int:
        """Which of ``torch_names`` names the node of this call (ops that have several)."""
        return 0

    def forward(self, xp, *inputs: Any, **attrs: Any):
        raise NotImplementedError(f"{self.name}: forward is not written")

    def shape(self, *shapes: tuple[int, ...], **attrs: Any) -> tuple[int, ...]:
        return broadcast_shapes(self.name, *shapes)

    def vjp(self, F, g, inputs, out, shapes, needs, **attrs):
        raise NotImplementedError(f"{self.name} has no derivative rule (it is not differentiable)")

    def __repr__(self) -> str:
        return f"<op {self.name}>"


def fmt_shapes(shapes) -> str:
    """``[(3, 4), (5,)]`` -> ``"(3, 4) and (5,)"`` for error messages."""
    parts = [str(tuple(s)) for s in shapes]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def broadcast_shapes(opname: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """numpy's broadcasting rule, with an error that names the op and the shapes."""
    shapes = [tuple(s) for s in shapes if s is not None]
    if not shapes:
        return ()
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(ndim):
        dim = 1
        for s in shapes:
            d = s[i - ndim + len(s)] if i >= ndim - len(s) else 1
            if d != 1:
                if dim not in (1, d):
                    raise ShapeError(
                        f"{opname}: shapes {fmt_shapes(shapes)} cannot be broadcast together "
                        f"(axis {i - ndim}: {dim} vs {d}); make the sizes equal or 1"
                    )
                dim = d
        out.append(dim)
    return tuple(out)


def normalize_axes(opname: str, axis, ndim: int, shape=None) -> tuple[int, ...]:
    """``axis`` (None, int or tuple; negatives allowed) as sorted non-negative axes.

    ``shape``, when given, is the input shape that errors name."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    where = f"shape {tuple(shape)}" if shape is not None else "an input"
    out = []
    for a in axes:
        if not -max(ndim, 1) <= a < max(ndim, 1):  # a 0-d input takes 0 and -1, as in PyTorch
            raise ShapeError(f"{opname}: axis {a} is out of range for {where} ({ndim} dims)")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ShapeError(f"{opname}: axis {axis} names an axis twice (input {where})")
    return tuple(sorted(out))
