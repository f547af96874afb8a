"""The `Op` base class, the registry of ops, and the shape helpers every shape rule uses."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as _np  # its error state only: the ops' math goes through ``xp``

__all__ = [
    "Op",
    "ShapeError",
    "IndexShapeError",
    "REGISTRY",
    "register",
    "get_op",
    "broadcast_shapes",
    "normalize_axes",
    "fmt_shapes",
    "quiet",
    "NoOnnx",
    "NO_ONNX_GRAD",
    "NO_ONNX_RANDOM",
]


class ShapeError(ValueError, RuntimeError):
    """An op was given inputs whose shapes it cannot combine. The message names the op and
    every input shape.

    A ``ValueError`` (numpy's habit) that is also a ``RuntimeError``, which is what PyTorch
    raises for shape mismatches: ``except RuntimeError`` in PyTorch code catches it too."""


class IndexShapeError(ShapeError, IndexError):
    """An index or a dim out of range: an ``IndexError``, as PyTorch raises, that is also a
    :class:`ShapeError` (``x[5]`` of a 3-vector, ``x.sum(dim=2)`` of a matrix)."""


REGISTRY: dict[str, Op] = {}


class NoOnnx(str):
    """An op's ``onnx`` when it has no ONNX form: the reason, which the exporter's error and
    the generated list of ``docs/concepts/compiler.md`` give (``NoOnnx("an in-place write")``).
    """

    __slots__ = ()


#: the reason of the gradient ops that serve one layer's derivative rule
NO_ONNX_GRAD = NoOnnx("a gradient op of one layer, not written for ONNX: a gradient graph "
                      "that uses it does not export")  # fmt: skip
#: the reason of the ops that draw random numbers
NO_ONNX_RANDOM = NoOnnx("random: it draws from this library's generator, which an ONNX file "
                        "cannot reproduce (ONNX's RandomNormal draws other numbers)")  # fmt: skip


def quiet():
    """numpy's floating-point warnings off for one op's forward: ``log(0)``, ``x / 0``,
    ``inf - inf`` and overflow give ``-inf``, ``inf`` or ``nan`` silently, as in PyTorch.
    Only numpy warns (CuPy and the Array API namespaces do not), and only for this call:
    the user's own numpy settings are left as they are.

    As a decorator (``@quiet()`` on ``forward``) it costs about half of a ``with`` block
    (numpy builds no context object per call): about 1 us per call."""
    return _np.errstate(divide="ignore", invalid="ignore", over="ignore")


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
    #: the op in ONNX (the symbolic engine's ``to_onnx`` reads it): the name of one ONNX
    #: operator whose inputs are the op's (``"Exp"``); or a method ``onnx(self, ex, node,
    #: args) -> (onnx nodes, output name)`` that writes the op, or its decomposition into
    #: several operators, with the exporter ``ex`` (``ex.one``, ``ex.chain``, ``ex.const``
    #: ... of :mod:`tinygrad_edu.symbolic.static.onnx_ops`) from the node and its inputs' tensor
    #: names ``args``; or :class:`NoOnnx` with the reason there is none. Every op declares one
    #: (``tests/symbolic/test_onnx.py`` checks).
    onnx: ClassVar[Any] = None

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
    out = []
    for a in axes:
        if not -max(ndim, 1) <= a < max(ndim, 1):  # a 0-d input takes 0 and -1, as in PyTorch
            raise IndexShapeError(f"{opname}: axis {a} is out of range for "
                                  f"{_where(shape)} ({ndim} dims)")  # fmt: skip
        out.append(a % ndim if ndim else 0)
    if len(out) == 1:
        return (out[0],)
    if len(set(out)) != len(out):
        raise ShapeError(f"{opname}: axis {axis} names an axis twice (input {_where(shape)})")
    return tuple(sorted(out))


def _where(shape) -> str:
    """What :func:`normalize_axes`'s errors call the input (written only for an error: most
    calls of an op normalise an axis, few get one wrong)."""
    return f"shape {tuple(shape)}" if shape is not None else "an input"
