r"""Losses as modules, with PyTorch's names and arguments: ``CrossEntropyLoss``, ``NLLLoss``,
``MSELoss``, ``L1Loss``, ``BCELoss``, ``BCEWithLogitsLoss``. Each calls the function of the
same name in :mod:`tinygrad_edu.nn.functional`.

>>> import tinygrad_edu as tg
>>> loss = tg.nn.MSELoss()(tg.tensor([1.0, 3.0]), tg.tensor([0.0, 0.0]))
>>> loss.item()
5.0
"""

from __future__ import annotations

from ..eager.tensor import Tensor
from . import functional as F
from .module import Module

__all__ = ["CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "BCELoss", "BCEWithLogitsLoss"]


class _Loss(Module):
    def __init__(self, reduction: str = "mean"):
        super().__init__()
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"{type(self).__name__}: reduction must be 'mean', 'sum' or "
                             f"'none', got {reduction!r}")  # fmt: skip
        self.reduction = reduction

    def extra_repr(self) -> str:
        return "" if self.reduction == "mean" else f"reduction={self.reduction!r}"


class CrossEntropyLoss(_Loss):
    r"""Softmax cross-entropy: $L = -\frac1N\sum_n \log \mathrm{softmax}(z_n)_{y_n}$ for
    logits (N, C) and class indices (N,) (or class probabilities (N, C)); ``weight``,
    ``ignore_index`` and ``label_smoothing`` as in
    :func:`~tinygrad_edu.nn.functional.cross_entropy`.
    Its gradient with respect to the logits is $(\mathrm{softmax}(z) - \mathrm{onehot}(y))/N$.
    """

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0):  # fmt: skip
        super().__init__(F._legacy(reduction, size_average, reduce))
        self.weight, self.ignore_index, self.label_smoothing = weight, ignore_index, label_smoothing

    def forward(self, input: Tensor, target) -> Tensor:
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_Loss):
    """Negative log-likelihood of log-probabilities at class indices."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):  # fmt: skip
        super().__init__(F._legacy(reduction, size_average, reduce))
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input: Tensor, target) -> Tensor:
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)  # fmt: skip


class MSELoss(_Loss):
    r"""Mean squared error $\frac1n\sum_i (x_i - y_i)^2$."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(F._legacy(reduction, size_average, reduce))

    def forward(self, input: Tensor, target) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(MSELoss):
    r"""Mean absolute error $\frac1n\sum_i |x_i - y_i|$."""

    def forward(self, input: Tensor, target) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class BCELoss(_Loss):
    r"""Binary cross-entropy of probabilities: $-(y\log p + (1-y)\log(1-p))$."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(F._legacy(reduction, size_average, reduce))
        self.weight = weight

    def forward(self, input: Tensor, target) -> Tensor:
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    r"""Binary cross-entropy of $\sigma(x)$ from the logits $x$, computed stably."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean",
                 pos_weight=None):  # fmt: skip
        super().__init__(F._legacy(reduction, size_average, reduce))
        self.weight, self.pos_weight = weight, pos_weight

    def forward(self, input: Tensor, target) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)  # fmt: skip
