r"""Activation modules beyond ``ReLU``/``Tanh``/``Sigmoid``: ``LeakyReLU``, ``GELU``,
``Softplus``, ``Softmax``, ``LogSoftmax``, each a thin module over the function of the same
name in :mod:`tinygrad_edu.nn.functional`, with PyTorch's arguments.

>>> import tinygrad_edu as tg
>>> tg.nn.LeakyReLU(0.1)(tg.tensor([-1.0, 2.0]))
tensor([-0.1,  2. ])
"""

from __future__ import annotations

from ..eager.tensor import Tensor
from . import functional as F
from .module import Module

__all__ = ["LeakyReLU", "GELU", "Softplus", "Softmax", "LogSoftmax"]


class LeakyReLU(Module):
    r"""$x$ for $x > 0$, else ``negative_slope`` $\cdot x$."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class GELU(Module):
    r"""$x\,\Phi(x)$ (``approximate="tanh"``: PyTorch's tanh approximation)."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Softplus(Module):
    r"""$\frac1\beta\log(1 + e^{\beta x})$ (linear above ``threshold``)."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softmax(Module):
    r"""$e^{x_i}/\sum_j e^{x_j}$ along ``dim``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    r"""$x_i - \log\sum_j e^{x_j}$ along ``dim``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim)
