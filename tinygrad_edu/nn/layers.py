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

from .. import backend
from ..eager.tensor import Tensor
from ..ops import ShapeError
from . import functional as F
from . import init
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
        # BEGIN SOLUTION A3.1
        return F.linear(x, self.weight, self.bias)
        # END SOLUTION

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")  # fmt: skip


class ReLU(Module):
    r"""$\max(x, 0)$ elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x)


class Tanh(Module):
    r"""$\tanh x$ elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return F.tanh(x)


class Sigmoid(Module):
    r"""$1/(1+e^{-x})$ elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return F.sigmoid(x)


class Identity(Module):
    """Returns its input unchanged (a placeholder layer)."""

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
    $1/(1-p)$, so the expected value is unchanged; in ``eval()`` mode, pass values through."""

    def __init__(self, p: float = 0.5):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"Dropout: dropout probability has to be between 0 and 1, but got "
                             f"{p}")  # fmt: skip
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Sequential(Module):
    """Modules applied one after another; sub-modules are named ``"0"``, ``"1"``, ... (or by
    the keys of an ``OrderedDict`` passed as the only argument, as in PyTorch).

    Indexing (``net[0]``, ``net[-1]``, ``net[1:3]`` gives a Sequential), ``len(net)``,
    iteration and ``append`` work as on a list.
    """

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], dict):
            items = list(modules[0].items())
        else:
            items = [(str(i), m) for i, m in enumerate(modules)]
        for name, m in items:
            if not isinstance(m, Module):
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
        self.add_module(str(len(self)), module)
        return self

    def __getitem__(self, i):
        mods = list(self._modules.values())
        if isinstance(i, slice):
            return Sequential(*mods[i])
        return mods[i]

    def __setitem__(self, i: int, module: Module) -> None:
        """``net[1] = nn.ReLU()``: replace the module at position ``i`` (its name stays)."""
        names = list(self._modules)
        if not isinstance(i, int) or not -len(names) <= i < len(names):
            raise IndexError(f"Sequential: index {i!r} is out of range for {len(names)} modules")
        if not isinstance(module, Module):
            raise TypeError(f"Sequential: cannot assign a {type(module).__name__} at {i}; "
                            "assign a Module (e.g. nn.ReLU())")  # fmt: skip
        setattr(self, names[i], module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class ModuleList(Module):
    """A list of sub-modules, registered as ``"0"``, ``"1"``, ... (their parameters count as
    the owner's). Index, iterate, ``append`` and ``extend`` as a list; it has no ``forward``."""

    def __init__(self, modules=()):
        super().__init__()
        self.extend(modules)

    def append(self, module: Module) -> ModuleList:
        if not isinstance(module, Module):
            raise TypeError(f"ModuleList: expected a Module, got {type(module).__name__}")
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules) -> ModuleList:
        for m in modules:
            self.append(m)
        return self

    def __getitem__(self, i):
        mods = list(self._modules.values())
        return ModuleList(mods[i]) if isinstance(i, slice) else mods[i]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())
