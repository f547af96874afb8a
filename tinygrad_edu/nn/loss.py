r"""Losses as modules: ``CrossEntropyLoss`` and ``MSELoss``.

>>> import tinygrad_edu as tg
>>> loss = tg.nn.MSELoss()(tg.tensor([1.0, 3.0]), tg.tensor([0.0, 0.0]))
>>> loss.item()
5.0
"""

from __future__ import annotations

from ..eager.tensor import Tensor
from . import functional as F
from .module import Module

__all__ = ["CrossEntropyLoss", "MSELoss"]


class CrossEntropyLoss(Module):
    r"""Softmax cross-entropy averaged over the batch:
    $L = -\frac1N\sum_n \log \mathrm{softmax}(z_n)_{y_n}$.

    Call it as ``loss_fn(logits, target)`` with logits of shape (N, C) and integer class
    indices of shape (N,) (or class probabilities of shape (N, C)). Its gradient with respect to
    the logits is $(\mathrm{softmax}(z) - \mathrm{onehot}(y))/N$.
    """

    def forward(self, logits: Tensor, target) -> Tensor:
        return F.cross_entropy(logits, target)


class MSELoss(Module):
    r"""Mean squared error $\frac1n\sum_i (x_i - y_i)^2$."""

    def forward(self, input: Tensor, target) -> Tensor:
        return F.mse_loss(input, target)
