"""``TracedScalar``: a Python number read from a traced tensor (``loss.item()``), which keeps
the graph node it came from (see :mod:`~tinygrad_edu.compiler.trace`)."""

from __future__ import annotations

from .. import symbolic as S

__all__ = ["TracedScalar"]


class TracedScalar:
    """A Python number read from a traced tensor (``loss.item()``): behaves as the number,
    and remembers the graph node it came from, so ``if x.sum().item() > 0`` becomes a guard
    on the graph's value instead of a constant baked into the program."""

    __slots__ = ("value", "node", "tracer")

    def __init__(self, value, node, tracer):
        self.value, self.node, self.tracer = value, node, tracer

    def _wrap(self, value, node):
        return self.tracer.scalar(value, node)

    def _binary(self, other, fn, opname, reverse=False):
        if isinstance(other, TracedScalar):
            onode, oval = other.node, other.value
        elif isinstance(other, bool | int | float):
            onode, oval = other, other
        else:
            return NotImplemented
        a, b = (oval, self.value) if reverse else (self.value, oval)
        if self.tracer.done:  # kept past its trace: a plain number
            return fn(a, b)
        na, nb = (onode, self.node) if reverse else (self.node, onode)
        return self._wrap(fn(a, b), S.apply_op(opname, na, nb))

    def __add__(self, o):
        return self._binary(o, lambda a, b: a + b, "add")

    def __radd__(self, o):
        return self._binary(o, lambda a, b: a + b, "add", True)

    def __sub__(self, o):
        return self._binary(o, lambda a, b: a - b, "sub")

    def __rsub__(self, o):
        return self._binary(o, lambda a, b: a - b, "sub", True)

    def __mul__(self, o):
        return self._binary(o, lambda a, b: a * b, "mul")

    def __rmul__(self, o):
        return self._binary(o, lambda a, b: a * b, "mul", True)

    def __truediv__(self, o):
        return self._binary(o, lambda a, b: a / b, "div")

    def __rtruediv__(self, o):
        return self._binary(o, lambda a, b: a / b, "div", True)

    def __neg__(self):
        return self._wrap(-self.value, S.apply_op("neg", self.node))

    def __gt__(self, o):
        return self._binary(o, lambda a, b: a > b, "greater")

    def __ge__(self, o):
        return self._binary(o, lambda a, b: a >= b, "greater_equal")

    def __lt__(self, o):
        return self._binary(o, lambda a, b: a < b, "less")

    def __le__(self, o):
        return self._binary(o, lambda a, b: a <= b, "less_equal")

    def __bool__(self):
        value = bool(self.value)
        if not self.tracer.done:
            self.tracer.guard(self.node, value)
        return value

    def _escape(self, what):
        if self.tracer.done:
            return self.value
        self.tracer.graph_break(
            f"{what} of a value read from a tensor (.item()) leaves the graph", read=self
        )
        return self.value

    def __float__(self):
        return float(self._escape("float()"))

    def __int__(self):
        return int(self._escape("int()"))

    def __index__(self):
        return int(self._escape("using as an index"))

    def __round__(self, ndigits=None):
        return round(self._escape("round()"), ndigits)

    def __format__(self, spec):
        return format(self._escape("formatting (print, f-string)"), spec)

    def __repr__(self):
        return repr(self._escape("printing"))

    __str__ = __repr__

    def __hash__(self):
        return hash(self._escape("hashing"))

    def __eq__(self, o):
        return self._binary(o, lambda a, b: a == b, "equal")

    def __ne__(self, o):
        return self._binary(o, lambda a, b: a != b, "not_equal")
