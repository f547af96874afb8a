r"""Layers: ``Linear``, the activations, ``Dropout``, ``Sequential``, ``Flatten``.

Each layer is a thin :class:`~tinygrad_edu.nn.Module` over a function of
:mod:`tinygrad_edu.nn.functional`; the gradients come from the op library like any other.

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
"""

from __future__ import annotations

import math
import operator
from collections import OrderedDict
from collections.abc import Iterable
from itertools import chain

from .. import backend
from ..eager.tensor import Tensor
from ..ops import ShapeError
from . import functional as F
from . import init
from .loss_args import _same_dtype
from .module import Module, Parameter

__all__ = ["Linear", "ReLU", "Tanh", "Sigmoid", "Dropout", "Sequential", "ModuleList", "Flatten",
           "Identity"]  # fmt: skip


class Linear(Module):
    r"""$y = x W^\top + b$, with ``weight`` of shape (out_features, in_features).

    Weights and bias start uniform in $[-1/\sqrt{\text{in}}, 1/\sqrt{\text{in}}]$ (PyTorch's
    default, ``kaiming_uniform_(w, a=sqrt(5))``), drawn from the library's seeded generator
    (``tg.manual_seed``).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None):  # fmt: skip
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        xp = backend.get_namespace(device)
        dt = getattr(xp, dtype) if isinstance(dtype, str) else (dtype or backend.default_float(xp))
        self.weight = Parameter(xp.zeros((out_features, in_features), dtype=dt), device=device)
        self.bias = Parameter(xp.zeros((out_features,), dtype=dt), device=device) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        r"""PyTorch's default initialisation (see the class docstring): weight and bias
        $U(\pm 1/\sqrt{\text{in}})$, which is ``kaiming_uniform_(w, a=sqrt(5))``."""
        bound = init._default_bound(self.in_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x: Tensor) -> Tensor:
        if x.shape[-1] != self.in_features:
            raise ShapeError(
                f"Linear({self.in_features}, {self.out_features}): input has shape {x.shape}, "
                f"but its last axis must be in_features={self.in_features}"
            )
        _same_dtype(f"Linear({self.in_features}, {self.out_features})", x, self.weight,
                    self.bias, owner="model")  # fmt: skip
        # BEGIN SOLUTION A3.1
        return F.linear(x, self.weight, self.bias)
        # END SOLUTION

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")  # fmt: skip


class ReLU(Module):
    r"""$\max(x, 0)$ elementwise (``inplace=True``: overwrite the input, as PyTorch's)."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    r"""$\tanh x$ elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return F.tanh(x)


class Sigmoid(Module):
    r"""$1/(1+e^{-x})$ elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return F.sigmoid(x)


class Identity(Module):
    """Returns its input unchanged (a placeholder layer). As in PyTorch, any arguments are
    accepted and ignored, so ``nn.Identity(54, unused=0.1)`` can stand in for another layer."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        return x


class Flatten(Module):
    """Flattens axes ``start_dim`` .. ``end_dim`` into one (by default every axis after the
    first: (N, 16, 7, 7) -> (N, 784)), as PyTorch's ``nn.Flatten``."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        n = x.ndim
        start, end = self.start_dim % max(n, 1), self.end_dim % max(n, 1)
        if n == 0 or start > end:
            if n == 0:
                return x.reshape(1)
            raise ValueError(
                f"Flatten: start_dim {self.start_dim} comes after end_dim {self.end_dim} for an "
                f"input of shape {x.shape}"
            )
        shape = x.shape[:start] + (math.prod(x.shape[start : end + 1]),) + x.shape[end + 1 :]
        return x.reshape(*shape)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Dropout(Module):
    r"""In training mode, zero each element with probability ``p`` and scale the survivors by
    $1/(1-p)$, so the expected value is unchanged; in ``eval()`` mode, pass values through.
    ``inplace=True``: overwrite the input (in training) and return it, as PyTorch's."""

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"Dropout: dropout probability has to be between 0 and 1, but got "
                             f"{p}")  # fmt: skip
        self.p, self.inplace = p, inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"  # (PyTorch shows both)


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
