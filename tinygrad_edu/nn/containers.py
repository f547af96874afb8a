"""``ModuleDict``, ``ParameterList`` and ``ParameterDict``: PyTorch's containers that register
what they hold, so ``parameters()``, ``state_dict()`` and ``to()`` see it.

>>> import tinygrad_edu as tg
>>> heads = tg.nn.ModuleDict({"cls": tg.nn.Linear(4, 3), "reg": tg.nn.Linear(4, 1)})
>>> sorted(heads.state_dict())
['cls.bias', 'cls.weight', 'reg.bias', 'reg.weight']
>>> scales = tg.nn.ParameterList([tg.nn.Parameter(tg.ones(2)) for _ in range(3)])
>>> len(list(scales.parameters())), [n for n, _ in scales.named_parameters()]
(3, ['0', '1', '2'])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..eager.tensor import Tensor
from .module import Module, Parameter

__all__ = ["ModuleDict", "ParameterList", "ParameterDict"]


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
