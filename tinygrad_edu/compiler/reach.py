r"""What a compiled function can see besides its arguments, and the fingerprints that guard it.

A trace bakes into its program whatever plain Python values the function read (``scale``,
``K["v"]``, ``self.p``, a submodule's choice of activation) and captures the tensors it
reached (parameters, buffers, a global ``W``). A later call may only run the program while
all of that is as it was: the **fingerprint** of everything in reach is part of every
call's guard. In reach are:

* the globals the function's code names (also in its nested code: comprehensions, lambdas),
  its closure's variables and its default arguments, and, one call deep, the same of each
  plain Python function it names (a helper it calls);
* every module it reaches (a module, a bound method's owner, modules held in the above):
  its ``training`` flag, the identities of its parameters, buffers and submodules, and its
  public attributes;
* the attributes of other objects held there (a trainer object's ``self.scale``), a few
  levels deep.

A fingerprint holds numbers, strings and ``None`` by value, containers (lists, dicts,
tuples, sets) by their items, arrays of up to 256 elements by their bytes, and tensors,
modules, functions, optimizers and other objects by identity. The same fingerprint, taken
again when the trace ends, tells whether the function **changed** Python state (``calls[0] += 1``,
``self.count += 1``): such a function cannot be one program (the program would skip the
change); it runs its Python every call instead (:mod:`~tinygrad_edu.compiler.replay`).

What is not in reach: objects only a called library function or a deeper helper reads.
Where the fingerprint would be too large to take every call (more than ``BUDGET``
values, or a larger array), or where the state cannot be fingerprinted at all (an
iterator, whose ``next()`` changes what it gives unseen), the function also runs its Python
every call: never a stale constant.
"""

from __future__ import annotations

import dis
import types
from collections.abc import Iterator

import numpy as _np

from ..eager.tensor import Tensor
from ..nn.module import Module
from ..optim.lr_scheduler import LRScheduler
from ..optim.optimizer import Optimizer

__all__ = ["modules_of", "optimizers_of", "python_reads", "watched_tensors", "BUDGET", "Unguarded"]

BUDGET = 4096  # values one call's fingerprint may hold
_SMALL_ARRAY = 256  # arrays up to this many elements are fingerprinted by their bytes
_DEPTH = 3  # levels of plain objects' attributes followed
_PLAIN = (bool, int, float, complex, str, bytes, type(None))
_LIBRARY = __name__.rsplit(".", 2)[0] + "."  # "tinygrad_edu."


class _Unguardable(Exception):
    pass


class Unguarded:
    """What a read returns where the fingerprint cannot be taken (``reason``): never equal
    to anything, so the function runs its Python every call."""

    def __init__(self, reason: str):
        self.reason = reason

    def __eq__(self, other):
        return False

    __hash__ = object.__hash__

    def __repr__(self):
        return f"<not guarded: {self.reason}>"


def _has_contents(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018
        return True
    except ValueError:
        return False


def _names(code) -> set:
    """The global names ``code`` and its nested code (comprehensions, lambdas) read (not the
    attribute names ``co_names`` also holds: ``opt.step()`` reads no global ``step``)."""
    out = {i.argval for i in dis.get_instructions(code)
           if i.opname in ("LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL")}  # fmt: skip
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names(c)
    return out


def _user_function(v) -> bool:
    return isinstance(v, types.FunctionType) and not (v.__module__ or "").startswith(_LIBRARY)


def _roots(fn, depth: int = 2) -> list:
    """``(what, value)`` for every value the function holds directly (see the module
    docstring): globals named, closure variables, defaults, a bound method's owner."""
    out, seen, todo = [], set(), [(fn, "", depth)]
    while todo:
        f, prefix, d = todo.pop()
        owner = getattr(f, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType):
            out.append((f"{prefix}self", owner))
            f = getattr(f, "__func__", f)
        if isinstance(f, Module):
            out.append((f"{prefix}module", f))
            continue
        code = getattr(f, "__code__", None)
        if code is None or id(f) in seen or (f.__module__ or "").startswith(_LIBRARY):
            continue  # (the library's own functions hold no state of the user's)
        seen.add(id(f))
        scope = f.__globals__
        found = [(f"global {n}", scope[n]) for n in sorted(_names(code))
                 if n in scope and n[:2] != "__"]  # fmt: skip
        cells = zip(code.co_freevars, f.__closure__ or ())
        found += [(f"closure variable {n}", c.cell_contents) for n, c in cells if _has_contents(c)]
        found += [(f"default argument {i}", v) for i, v in enumerate(f.__defaults__ or ())]
        found += [(f"default argument {k}", v) for k, v in (f.__kwdefaults__ or {}).items()]
        for what, v in found:
            if isinstance(v, types.ModuleType):
                continue  # (`np`, `tg`: library modules; their functions are not state)
            out.append((prefix + what, v))
            if d > 0 and _user_function(v):
                todo.append((v, f"{prefix}{what} -> ", d - 1))
    return out


def modules_of(fn) -> list:
    """The modules a compiled callable reaches (see the module docstring), each once, with
    all their submodules."""
    found, todo = [], [v for _, v in _roots(fn)]
    for v in todo:
        if isinstance(v, Module):
            found.append(v)
        elif not isinstance(v, Tensor | Optimizer | LRScheduler) and hasattr(v, "__dict__") and (
                not isinstance(v, type | types.FunctionType)):  # fmt: skip
            found += [a for a in vars(v).values() if isinstance(a, Module)]  # a trainer's model
    out: list = []
    for m in found:
        out += [sub for sub in m.modules() if all(sub is not o for o in out)]
    return out


def optimizers_of(fn) -> list:
    """The optimizers a compiled callable holds directly (a global, a default argument ...)."""
    return [v for _, v in _roots(fn) if isinstance(v, Optimizer)]


def watched_tensors(args, modules, fn) -> list:
    """The tensors whose in-place changes a trace must account for: the arguments, the
    modules' parameters and buffers, the parameters of the optimizers in reach, and the
    tensors the function holds directly or in a list, tuple or dict."""
    out = [a for a in args if isinstance(a, Tensor)]
    for m in modules:
        out += [*m._parameters.values(), *m._buffers.values()]
    for opt in optimizers_of(fn):
        out += [p for g in opt.param_groups for p in g["params"]]
    for _, v in _roots(fn):  # a global W, a list of parameters held by the function
        items = v.values() if isinstance(v, dict) else v if isinstance(v, list | tuple) else (v,)
        out += [t for t in items if isinstance(t, Tensor)]
    seen, unique = set(), []
    for t in out:
        if t is not None and id(t) not in seen:
            seen.add(id(t))
            unique.append(t)
    return unique


def _fingerprint(v, budget: list, depth: int = _DEPTH):
    budget[0] -= 1
    if budget[0] < 0:
        raise _Unguardable("holds too much to guard every call")
    if isinstance(v, float) and v != v:
        return ("nan",)
    if isinstance(v, _PLAIN):
        return v
    if isinstance(v, Tensor | Module | Optimizer | LRScheduler | type | types.FunctionType |
                  types.BuiltinFunctionType | types.MethodType):  # fmt: skip
        return ("id", id(v))
    if isinstance(v, tuple | list):
        return (type(v).__name__, tuple(_fingerprint(x, budget, depth) for x in v))
    if isinstance(v, dict):
        return ("dict", tuple((_fingerprint(k, budget, depth), _fingerprint(x, budget, depth))
                              for k, x in v.items()))  # fmt: skip
    if isinstance(v, set | frozenset):
        return ("set", frozenset(_fingerprint(x, budget, depth) for x in v))
    if isinstance(v, Iterator | types.GeneratorType):  # next() changes it, unseen
        raise _Unguardable("is an iterator (what next() gives changes every call)")
    if isinstance(v, _np.ndarray | _np.generic):
        if v.size <= _SMALL_ARRAY:
            return ("array", v.shape, str(v.dtype), v.tobytes())
        # a constant of the program if an op reads it; too large to compare every call
        raise _Unguardable(f"holds an array of {v.size} elements (too large to compare "
                           "every call; pass it as a tensor argument)")  # fmt: skip
    if type(v).__module__.startswith(_LIBRARY):  # the library's objects (a compiled function)
        return ("id", id(v))
    if depth > 0 and hasattr(v, "__dict__") and not isinstance(v, types.ModuleType):
        return ("object", id(v), tuple((k, _fingerprint(x, budget, depth - 1))
                                       for k, x in vars(v).items()))  # fmt: skip
    return ("id", id(v))


def _guard_of(v):
    def read():
        try:
            return _fingerprint(v(), [BUDGET])
        except _Unguardable as e:
            return Unguarded(str(e))

    return read


def _module_state(m, class_attrs) -> tuple:
    """A module's identities (parameters, buffers, submodules), its public attributes and
    ``class_attrs``, the public data attributes of its class where the class is the user's
    (``scale = 2.0`` in the class body). (Read for every module at every call: the common
    values, numbers and strings, are taken without a call.)"""
    ids = (*map(id, m._parameters.values()), *map(id, m._buffers.values()),
           *m._modules.items())  # fmt: skip  (modules compare by identity)
    budget = [BUDGET]
    attrs = []
    try:
        for a, x in vars(m).items():
            if a[:1] == "_" or a == "training":
                continue
            t = type(x)
            attrs.append((a, x if t is int or t is str or t is bool or x is None or (
                t is float and x == x) else _fingerprint(x, budget)))  # fmt: skip
        for a in class_attrs:
            attrs.append((a, _fingerprint(getattr(type(m), a, None), budget)))
    except _Unguardable as e:
        return Unguarded(str(e))
    return ids, attrs


def _module_read(m):
    names = _class_attrs(type(m))
    return lambda: _module_state(m, names)


def _class_attrs(cls) -> tuple:
    """The public data attributes the user's classes in ``cls``'s bases define."""
    names = []
    for c in cls.__mro__:
        if c.__module__.startswith(_LIBRARY) or c is object:
            break
        names += [a for a, x in vars(c).items() if a[:1] != "_" and not callable(x) and
                  not isinstance(x, property | staticmethod | classmethod)]  # fmt: skip
    return tuple(dict.fromkeys(names))


def python_reads(fn, modules) -> list:
    """``(read, what)``: each ``read()`` gives the fingerprint of one thing in reach (see the
    module docstring), compared by every call's guard and once more when a trace ends."""
    reads = []
    for what, v in _roots(fn):
        if isinstance(v, Module | types.ModuleType):
            continue  # (modules: below, each with its submodules)
        if isinstance(v, Optimizer | LRScheduler):
            continue  # (their state is the program's input: fed, or guarded by training_capture.py)
        reads.append((_cell_read(fn, what, v), what))
    for i, m in enumerate(modules):
        reads.append((_module_read(m), f"module {i}: {type(m).__name__}"))
    return reads


def _cell_read(fn, what, v):
    """A read of a root's current value: a global or closure variable is looked up again
    every call (it may be rebound); a default argument or owner is the object itself."""
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    if " -> " in what:  # in a helper's reach: the object itself
        code = None
    if code is not None and what.startswith("global "):
        name, scope = what[len("global "):], fn.__globals__
        return _guard_of(lambda: scope.get(name))
    if code is not None and what.startswith("closure variable "):
        name = what[len("closure variable "):]
        cell = dict(zip(code.co_freevars, fn.__closure__ or ())).get(name)
        if cell is not None:
            return _guard_of(lambda: cell.cell_contents if _has_contents(cell) else None)
    return _guard_of(lambda: v)
