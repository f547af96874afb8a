"""`Functional`: what a derivative rule calls ``F``.

A derivative rule computes with Python operators and with ``F.<op>(...)``. Each engine supplies
its own ``F`` by saying how to *apply* an op:

* :data:`RAW` applies the op's forward to raw arrays (a plain backward: numbers, fast);
* the eager engine applies it to tensors, recording it (``create_graph=True``);
* the symbolic engine makes a new graph node (``gradients()`` builds a gradient graph).

One rule, three meanings.

A *shape* reaching a rule is a tuple when it is known, or (in the symbolic engine, before any
number exists) the node whose shape to take at run time. The helpers below accept both.
"""

from __future__ import annotations

import functools
import math

from .base import REGISTRY

__all__ = ["Functional", "RawFunctional", "RAW"]


class Functional:
    """Base class: subclasses define :meth:`apply`; ``F.exp(x)`` means ``apply(exp, x)``."""

    def apply(self, op, *inputs, **attrs):  # pragma: no cover - abstract
        raise NotImplementedError

    def __getattr__(self, name):
        if name.startswith("_") or name not in REGISTRY:
            raise AttributeError(f"{type(self).__name__} has no op {name!r}")
        fn = functools.partial(self.apply, REGISTRY[name])
        setattr(self, name, fn)  # cache: the next lookup is a plain attribute
        return fn

    # -- ops whose target shape may be a tuple or a node standing for a shape ----------------
    def _to_shape(self, opname, x, shape, **attrs):
        if isinstance(shape, tuple):
            if opname != "getitem_grad" and getattr(x, "shape", None) == shape:
                return x  # nothing to do: keeps graphs small and backward fast
            return self.apply(REGISTRY[opname], x, shape=shape, **attrs)
        return self.apply(REGISTRY[opname], x, shape, **attrs)

    def sum_to(self, x, shape):
        """Sum ``x`` down to ``shape``: the reduction that undoes broadcasting."""
        return self._to_shape("sum_to", x, shape)

    def broadcast_to(self, x, shape):
        return self._to_shape("broadcast_to", x, shape)

    def reshape(self, x, shape):
        return self._to_shape("reshape", x, shape)

    def getitem_grad(self, g, shape, index):
        """Zeros of ``shape`` with ``g`` added at ``index`` (the adjoint of indexing)."""
        return self._to_shape("getitem_grad", g, shape, index=index)

    def with_shape(self, opname, shape, *inputs, **attrs):
        """Apply ``opname`` to ``inputs`` with a target ``shape``: a tuple goes in as the
        ``shape`` attribute, a node standing for a shape as one more input."""
        if isinstance(shape, tuple):
            return self.apply(REGISTRY[opname], *inputs, shape=shape, **attrs)
        return self.apply(REGISTRY[opname], *inputs, shape, **attrs)

    def gather_grad(self, g, shape, index, dim):
        """Zeros of ``shape`` with ``g`` added where ``gather(x, dim, index)`` read."""
        return self.with_shape("gather_grad", shape, g, index, dim=dim)

    def numel(self, shape, axis=None):
        """How many elements ``axis`` covers: an int for a known shape, a node otherwise."""
        if isinstance(shape, tuple):
            if axis is None:
                return math.prod(shape)
            axes = (axis,) if isinstance(axis, int) else axis
            return math.prod(shape[a] for a in axes)
        return self.apply(REGISTRY["numel"], shape, axis=axis)


class RawFunctional(Functional):
    """Applies ops directly to raw arrays: the plain (non-recording) backward."""

    def apply(self, op, *inputs, **attrs):
        xp = None
        for x in inputs:
            if hasattr(x, "shape"):
                xp = _namespace_of(x)
                break
        xp = xp or _namespace_of(inputs[0])
        out = op.forward(xp, *inputs, **attrs)
        # numpy reduces to scalars (np.float64); a gradient is always an array, 0-d included
        return out if hasattr(out, "__setitem__") else xp.asarray(out)


def _namespace_of(array):
    """``backend.namespace_of``, imported on the first call (this module stays free of numpy),
    which then puts the real function in its own place: an ``import`` statement inside
    ``apply`` would run the import machinery on every op of every backward."""
    global _namespace_of
    from ..backend import namespace_of  # noqa: PLC0415

    _namespace_of = namespace_of
    return namespace_of(array)


RAW = RawFunctional()
