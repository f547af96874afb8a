r"""The linear layers, with PyTorch's arguments, parameter names and initialisation:
``Linear`` ($y = x W^\top + b$), ``Bilinear`` ($y_k = x_1^\top W_k x_2 + b_k$) and
``Identity``.

>>> import tinygrad_edu as tg
>>> tg.manual_seed(0)
>>> tg.nn.Linear(4, 3)
Linear(in_features=4, out_features=3, bias=True)
>>> tg.nn.Bilinear(2, 3, 4)(tg.randn(5, 2), tg.randn(5, 3)).shape
(5, 4)
"""

from __future__ import annotations

import math

from .. import backend
from ..eager.tensor import Tensor
from ..ops import ShapeError
from . import functional as F
from . import init
from .arguments import _same_dtype
from .init import _dtype
from .module import Module, Parameter

__all__ = ["Identity", "Linear", "Bilinear"]


class Identity(Module):
    """Returns its input unchanged (a placeholder layer). As in PyTorch, any arguments are
    accepted and ignored, so ``nn.Identity(54, unused=0.1)`` can stand in for another layer."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        return x


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


class Bilinear(Module):
    r"""$y_k = x_1^\top W_k\, x_2 + b_k$, with ``weight`` (out_features, in1_features,
    in2_features) and ``bias`` (out_features,), both $U(\pm 1/\sqrt{\mathrm{in1\_features}})$
    at the start, as PyTorch's."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None):  # fmt: skip
        super().__init__()
        self.in1_features, self.in2_features = int(in1_features), int(in2_features)
        self.out_features = int(out_features)
        xp = backend.get_namespace(device)
        dt = _dtype(xp, dtype)
        shape = (out_features, in1_features, in2_features)
        self.weight = Parameter(xp.zeros(shape, dtype=dt), device=device)
        self.bias = Parameter(xp.zeros((out_features,), dtype=dt), device=device) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
