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

from ..eager.factories import generator
from ..eager.tensor import Tensor
from . import functional as F
from .module import Module, Parameter

__all__ = ["Linear", "ReLU", "Tanh", "Sigmoid", "Dropout", "Sequential", "Flatten", "Identity"]


class Linear(Module):
    r"""$y = x W^\top + b$, with ``weight`` of shape (out_features, in_features).

    Weights and bias start uniform in $[-1/\sqrt{\text{in}}, 1/\sqrt{\text{in}}]$ (PyTorch's
    default), drawn from the library's seeded generator (``tg.manual_seed``).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None):
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        bound = 1.0 / math.sqrt(in_features) if in_features else 0.0
        rng = generator()
        w = rng.uniform(-bound, bound, (out_features, in_features)).astype("float32")
        self.weight = Parameter(w, device=device)
        if bias:
            b = rng.uniform(-bound, bound, (out_features,)).astype("float32")
            self.bias = Parameter(b, device=device)
        else:
            self.bias = None

    def forward(self, x: Tensor) -> Tensor:
        if x.shape[-1] != self.in_features:
            raise ValueError(
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
    """Flattens every axis after the first: (N, 8, 8) -> (N, 64)."""

    def forward(self, x: Tensor) -> Tensor:
        return x.reshape(x.shape[0], -1)


class Dropout(Module):
    r"""In training mode, zero each element with probability ``p`` and scale the survivors by
    $1/(1-p)$, so the expected value is unchanged; in ``eval()`` mode, pass values through."""

    def __init__(self, p: float = 0.5):
        super().__init__()
        if not 0 <= p < 1:
            raise ValueError(f"Dropout: p must be in [0, 1), got {p}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Sequential(Module):
    """Modules applied one after another; sub-modules are named ``"0"``, ``"1"``, ...

    Indexing (``net[0]``), ``len(net)`` and iteration work as on a list.
    """

    def __init__(self, *modules: Module):
        super().__init__()
        for i, m in enumerate(modules):
            if not isinstance(m, Module):
                raise TypeError(f"Sequential: argument {i} is a {type(m).__name__}, not a Module")
            self.add_module(str(i), m)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x

    def __getitem__(self, i: int) -> Module:
        return list(self._modules.values())[i]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())
