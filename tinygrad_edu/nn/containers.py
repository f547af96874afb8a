"""The containers, as PyTorch's: ``Sequential`` (modules called in order), ``ModuleList``,
``ModuleDict``, ``ParameterList`` and ``ParameterDict``. Each registers what it holds, so
``parameters()``, ``state_dict()`` and ``to()`` see it.

>>> import tinygrad_edu as tg
>>> tg.manual_seed(0)
>>> net = tg.nn.Sequential(tg.nn.Linear(4, 8), tg.nn.ReLU(), tg.nn.Linear(8, 3))
>>> net
Sequential(
  (0): Linear(in_features=4, out_features=8, bias=True)
  (1): ReLU()
  (2): Linear(in_features=8, out_features=3, bias=True)
)
>>> net(tg.randn(5, 4)).shape
(5, 3)

>>> import tinygrad_edu as tg
>>> heads = tg.nn.ModuleDict({"cls": tg.nn.Linear(4, 3), "reg": tg.nn.Linear(4, 1)})
>>> sorted(heads.state_dict())
['cls.bias', 'cls.weight', 'reg.bias', 'reg.weight']
>>> scales = tg.nn.ParameterList([tg.nn.Parameter(tg.ones(2)) for _ in range(3)])
>>> len(list(scales.parameters())), [n for n, _ in scales.named_parameters()]
(3, ['0', '1', '2'])
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from itertools import chain

from ..eager.tensor import Tensor
from .module import Module, Parameter

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


def _delete(container: Module, i, op: str) -> None:
    """Remove the modules at index or slice ``i``; the others are renamed ``"0"``, ``"1"``,
    ... in order, as PyTorch's containers do."""
    names = list(container._modules)
    gone = names[i] if isinstance(i, slice) else [names[_position(container, i, op)]]
    for name in gone:
        del container._modules[name]
    _renumber(container, list(container._modules.values()))


def _position(container: Module, i, op: str) -> int:
    """The non-negative position of index ``i`` in ``container`` (negative counts from the
    end); a clear IndexError or TypeError naming ``op`` otherwise."""
    n = len(container)
    try:
        i = operator.index(i)
    except TypeError:
        raise TypeError(f"{op}: index must be an integer (or a slice where allowed), got "
                        f"{type(i).__name__} {i!r}") from None  # fmt: skip
    if not -n <= i < n:
        raise IndexError(f"{op}: index {i} is out of range for {n} modules"
                         + (f" (use -{n} to {n - 1})" if n else " (it is empty)"))  # fmt: skip
    return i % n


def _insert_position(container: Module, index, module, op: str) -> int:
    """Check ``insert(index, module)``'s arguments; the position the module will take."""
    if not isinstance(module, Module):
        raise TypeError(f"{op}: expected a Module, got {type(module).__name__} (call layer "
                        "classes, e.g. nn.ReLU() rather than nn.ReLU)")  # fmt: skip
    n = len(container)
    index = operator.index(index)
    if not -n <= index <= n:
        raise IndexError(f"{op}: index {index} is out of range for {n} modules (use -{n} to "
                         f"{n}; {n} appends)")  # fmt: skip
    return index + n if index < 0 else index


def _renumber(container: Module, modules) -> None:
    """Make ``modules`` the children of ``container``, named ``"0"``, ``"1"``, ... (what
    PyTorch's list-like containers do after ``del``, ``pop`` and ``insert``)."""
    container._modules.clear()
    container._modules.update((str(k), m) for k, m in enumerate(modules))


class Sequential(Module):
    """Modules applied one after another; sub-modules are named ``"0"``, ``"1"``, ... (or by
    the keys of an ``OrderedDict`` passed as the only argument, as in PyTorch).

    List operations behave as PyTorch's: indexing (``net[0]``, ``net[-1]``), slicing
    (``net[1:]`` is a Sequential whose children keep their names, ``"1"``, ``"2"``...),
    ``net[i] = layer`` (the name and place stay), ``del net[i]`` / ``del net[1:3]`` and
    ``pop`` (the rest are renamed ``"0"``, ``"1"``...), ``insert``, ``append``, ``extend``,
    ``net + other``, ``net += other``, ``net * 2``, ``len(net)`` and iteration.
    """

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], dict):
            items = list(modules[0].items())
        else:
            items = [(str(i), m) for i, m in enumerate(modules)]
        for name, m in items:
            if m is not None and not isinstance(m, Module):
                raise TypeError(
                    f"Sequential: argument {name} is a {type(m).__name__}, not a Module (call "
                    "layer classes, e.g. nn.ReLU() rather than nn.ReLU)"
                )
            self.add_module(name, m)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end, named ``str(len(self))``; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules) -> Sequential:
        """Append each module of the iterable ``modules`` (a Sequential, a list...); returns
        self."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Put ``module`` at position ``index`` (``-len`` to ``len``); the children are then
        renamed ``"0"``, ``"1"``, ... as in PyTorch. Returns self."""
        index = _insert_position(self, index, module, "Sequential.insert")
        mods = list(self._modules.values())
        mods.insert(index, module)
        _renumber(self, mods)
        return self

    def pop(self, key: int | slice) -> Module:
        """Remove and return the module at ``key`` (a slice: a Sequential of them)."""
        v = self[key]
        del self[key]
        return v

    def __getitem__(self, i):
        if isinstance(i, slice):  # the children keep their names (PyTorch)
            return type(self)(OrderedDict(list(self._modules.items())[i]))
        return list(self._modules.values())[_position(self, i, "Sequential[i]")]

    def __setitem__(self, i: int, module: Module) -> None:
        """``net[1] = nn.ReLU()``: replace the module at position ``i`` (its name and place
        stay)."""
        names = list(self._modules)
        setattr(self, names[_position(self, i, "Sequential[i] = module")], module)

    def __delitem__(self, i) -> None:
        """``del net[1]``, ``del net[1:3]``: remove modules; the others are renamed ``"0"``,
        ``"1"``, ... in order (PyTorch)."""
        _delete(self, i, "del Sequential[i]")

    def __add__(self, other) -> Sequential:
        """A new Sequential with this one's modules and then ``other``'s (the same module
        objects, renamed ``"0"``, ``"1"``, ...)."""
        if not isinstance(other, Sequential):
            raise ValueError(f"Sequential + {type(other).__name__}: add operator supports only "
                             "objects of Sequential class; wrap it: net + nn.Sequential(layer), "
                             "or use net.append(layer)")  # fmt: skip
        return Sequential().extend(self).extend(other)

    def __iadd__(self, other) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(f"Sequential += {type(other).__name__}: add operator supports only "
                             "objects of Sequential class; use net.append(layer) or "
                             "net.extend(layers)")  # fmt: skip
        offset = len(self)
        for k, m in enumerate(list(other)):
            self.add_module(str(offset + k), m)
        return self

    def __mul__(self, times: int) -> Sequential:
        """A new Sequential repeating these modules ``times`` times (the same objects, so the
        copies share their weights, as in PyTorch)."""
        _check_times(self, times)
        return Sequential(*(list(self) * times))

    def __rmul__(self, times: int) -> Sequential:
        return self.__mul__(times)

    def __imul__(self, times: int) -> Sequential:
        _check_times(self, times)
        return self.extend(list(self) * (times - 1))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


def _check_times(seq: Sequential, times) -> None:
    if not isinstance(times, int):
        raise TypeError(f"unsupported operand type(s) for *: Sequential and "
                        f"{type(times).__name__} (repeat it a whole number of times)")  # fmt: skip
    if times <= 0:
        raise ValueError(f"Sequential * {times}: non-positive multiplication factor (use 1 or "
                         "more)")  # fmt: skip


class ModuleList(Module):
    """A list of sub-modules, registered as ``"0"``, ``"1"``, ... (their parameters count as
    the owner's); it has no ``forward``.

    List operations behave as PyTorch's: indexing (``layers[-1]``), slicing (a new
    ModuleList), ``layers[i] = m``, ``del layers[i]`` / ``del layers[::2]``, ``pop``,
    ``insert`` (the children are then renamed ``"0"``, ``"1"``, ...), ``append``,
    ``extend``, ``layers += [...]``, ``layers + other`` (a new ModuleList), ``len`` and
    iteration.
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def append(self, module: Module) -> ModuleList:
        """Add ``module`` at the end; returns self."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"ModuleList: expected a Module, got {type(module).__name__}")
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules) -> ModuleList:
        """Append each module of the iterable ``modules``; returns self."""
        if not isinstance(modules, Iterable):
            raise TypeError(f"ModuleList.extend should be called with an iterable of modules "
                            f"(a list), but got {type(modules).__name__}")  # fmt: skip
        for m in list(modules):
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Put ``module`` before position ``index`` (``-len`` to ``len``); the children are
        then renamed ``"0"``, ``"1"``, ..."""
        index = _insert_position(self, index, module, "ModuleList.insert")
        mods = list(self._modules.values())
        mods.insert(index, module)
        _renumber(self, mods)

    def pop(self, key: int | slice) -> Module:
        """Remove and return the module at ``key`` (a slice: a ModuleList of them)."""
        v = self[key]
        del self[key]
        return v

    def __getitem__(self, i):
        mods = list(self._modules.values())
        if isinstance(i, slice):
            return type(self)(mods[i])
        return mods[_position(self, i, "ModuleList[i]")]

    def __setitem__(self, i: int, module: Module) -> None:
        """``layers[1] = m``: replace the module at position ``i`` (its name stays)."""
        names = list(self._modules)
        setattr(self, names[_position(self, i, "ModuleList[i] = module")], module)

    def __delitem__(self, i) -> None:
        """``del layers[1]``, ``del layers[::2]``: remove modules; the others are renamed
        ``"0"``, ``"1"``, ... in order (PyTorch)."""
        _delete(self, i, "del ModuleList[i]")

    def __iadd__(self, modules) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other) -> ModuleList:
        """A new ModuleList with this one's modules and then those of the iterable ``other``."""
        if not isinstance(other, Iterable):
            raise TypeError(f"ModuleList + {type(other).__name__}: can only add an iterable of "
                            "modules (a ModuleList or a list)")  # fmt: skip
        return ModuleList(chain(self, other))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


def _pairs(items, what: str):
    if isinstance(items, Mapping):
        return list(items.items())
    pairs = []
    for i, kv in enumerate(items):
        if not isinstance(kv, tuple | list) or len(kv) != 2:
            raise TypeError(f"{what}.update: element #{i} should be a (key, value) pair, got "
                            f"{type(kv).__name__}")  # fmt: skip
        pairs.append(tuple(kv))
    return pairs


def _as_parameter(value):
    """A tensor that is not yet a Parameter becomes one (PyTorch's rule for these
    containers); other values are refused."""
    if isinstance(value, Parameter) or value is None:
        return value
    if isinstance(value, Tensor):
        return Parameter(value)
    raise TypeError(f"expected a Parameter or a Tensor, got {type(value).__name__}")


class ModuleDict(Module):
    """Sub-modules by name, in insertion order: index, iterate (the keys), ``keys()``,
    ``values()``, ``items()``, ``update``, ``pop``, ``in``, ``len`` as a dict. It has no
    ``forward``."""

    def __init__(self, modules: Mapping | Iterable | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        if not isinstance(key, str):
            raise TypeError(f"module name should be a string. Got {type(key).__name__}")
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        v = self[key]
        del self[key]
        return v

    def update(self, modules) -> None:
        for k, m in _pairs(modules, "ModuleDict"):
            self[k] = m


class ParameterList(Module):
    """Parameters in a list, registered as ``"0"``, ``"1"``, ...: index, iterate, ``append``
    and ``extend`` as a list. Tensors put in become Parameters."""

    def __init__(self, values: Iterable | None = None) -> None:
        super().__init__()
        if values is not None:
            self.extend(values)

    def _key(self, i: int) -> str:
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of range for a ParameterList of length {n}")
        return str(i % n)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return ParameterList(list(self)[i])
        return self._parameters[self._key(i)]

    def __setitem__(self, i: int, value) -> None:
        self.register_parameter(self._key(i), _as_parameter(value))

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def append(self, value) -> ParameterList:
        self.register_parameter(str(len(self)), _as_parameter(value))
        return self

    def extend(self, values) -> ParameterList:
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        return "\n".join(f"({i}): Parameter containing: [{p.dtype} of size "
                         f"{'x'.join(map(str, p.shape))}]" for i, p in enumerate(self))  # fmt: skip


class ParameterDict(Module):
    """Parameters by name, in insertion order, used as a dict. Tensors put in become
    Parameters."""

    def __init__(self, parameters: Mapping | Iterable | None = None) -> None:
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str):
        return self._parameters[key]

    def __setitem__(self, key: str, value) -> None:
        if not isinstance(key, str):
            raise TypeError(f"parameter name should be a string. Got {type(key).__name__}")
        self.register_parameter(key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._parameters[key]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key) -> bool:
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def values(self):
        return self._parameters.values()

    def items(self):
        return self._parameters.items()

    def get(self, key: str, default=None):
        return self._parameters.get(key, default)

    def pop(self, key: str):
        v = self[key]
        del self[key]
        return v

    def clear(self) -> None:
        self._parameters.clear()

    def update(self, parameters) -> None:
        for k, v in _pairs(parameters, "ParameterDict"):
            self[k] = v
