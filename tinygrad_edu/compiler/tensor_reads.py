"""The tracer in force (:data:`ACTIVE`) and the Tensor methods that report to it while a
function is traced: ``item``/``bool`` become guards or traced scalars; ``numpy``, ``tolist``,
printing a traced value are graph breaks (see :mod:`~tinygrad_edu.compiler.trace`)."""

from __future__ import annotations

from ..eager.tensor import Tensor

__all__ = ["ACTIVE", "patch_tensor_reads", "escaping_format"]


# -- the hooks the eager engine calls while a tracer is active ----------------------------------
class _Active:
    tracer = None  # the Tracer recording now, if any


ACTIVE = _Active()


def patch_tensor_reads(tracer):
    """While tracing, the few Tensor methods that hand a tensor's values to Python report to
    the tracer: ``item``/``bool`` become guards or traced scalars; ``numpy``, ``tolist``,
    ``repr`` of a traced value are graph breaks. Returns the function that undoes it."""
    saved = {n: Tensor.__dict__[n] for n in ("item", "__bool__", "numpy", "tolist",
                                             "__repr__", "__format__", "__float__", "__int__",
                                             "__index__") if n in Tensor.__dict__}  # fmt: skip

    quiet = [0]  # > 0 while item/bool read values through numpy(): not an escape

    def item(self):
        quiet[0] += 1
        try:
            value = saved["item"](self)
        finally:
            quiet[0] -= 1
        return tracer.read_item(self, value)

    def to_bool(self):
        quiet[0] += 1
        try:
            value = saved["__bool__"](self)
        finally:
            quiet[0] -= 1
        return tracer.read_bool(self, value)

    def escaping(name, what):
        def method(self, *a, **k):
            if not quiet[0] and tracer.is_traced(self) and ACTIVE.tracer is tracer:
                tracer.graph_break(f"{what} of a tensor computed in the function", read=self)
            quiet[0] += 1
            try:
                return saved[name](self, *a, **k)
            finally:
                quiet[0] -= 1

        return method

    Tensor.item = item
    Tensor.__bool__ = to_bool
    for name, what in (("numpy", ".numpy()"), ("tolist", ".tolist()"),
                       ("__repr__", "printing (repr/str)"), ("__float__", "float()"),
                       ("__int__", "int()"), ("__index__", "using as a Python index")):  # fmt: skip
        if name in saved:
            setattr(Tensor, name, escaping(name, what))
    if "__format__" not in saved:
        Tensor.__format__ = escaping_format(tracer)

    def undo():
        for n in ("item", "__bool__", "numpy", "tolist", "__repr__", "__float__", "__int__",
                  "__index__", "__format__"):  # fmt: skip
            if n in saved:
                setattr(Tensor, n, saved[n])
            elif n in Tensor.__dict__:
                delattr(Tensor, n)

    return undo


def escaping_format(tracer):
    def __format__(self, spec):  # noqa: N807
        if tracer.is_traced(self):
            tracer.graph_break(
                "formatting (print, f-string) of a tensor computed in the function", read=self
            )
        return format(str(self) if not spec else self.item(), spec)

    return __format__
