r"""Losses as modules, with PyTorch's names and arguments: ``CrossEntropyLoss``, ``NLLLoss``,
``MSELoss``, ``L1Loss``, ``BCELoss``, ``BCEWithLogitsLoss``, ``SmoothL1Loss``, ``HuberLoss``,
``KLDivLoss``, ``MarginRankingLoss``, ``HingeEmbeddingLoss``, ``SoftMarginLoss``,
``TripletMarginLoss``, ``CosineEmbeddingLoss``, ``MultiLabelSoftMarginLoss``,
``MultiMarginLoss``, ``PoissonNLLLoss``, ``GaussianNLLLoss``; and the distances
``CosineSimilarity`` and ``PairwiseDistance``. Each calls the function of the same name in
:mod:`tinygrad_edu.nn.functional`.

>>> import tinygrad_edu as tg
>>> loss = tg.nn.MSELoss()(tg.tensor([1.0, 3.0]), tg.tensor([0.0, 0.0]))
>>> loss.item()
5.0
"""

from __future__ import annotations

from ..eager.tensor import Tensor
from . import functional as F
from .module import Module

__all__ = ["CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "BCELoss", "BCEWithLogitsLoss",
           "SmoothL1Loss", "HuberLoss", "KLDivLoss", "MarginRankingLoss", "HingeEmbeddingLoss",
           "SoftMarginLoss", "TripletMarginLoss", "CosineEmbeddingLoss",
           "MultiLabelSoftMarginLoss", "MultiMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss",
           "CosineSimilarity", "PairwiseDistance"]  # fmt: skip


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


class _Options(_Loss):
    """A loss module whose options (PyTorch's names and defaults, in ``_options``) are passed
    to ``F.<_function>`` by name, after the inputs; ``size_average``/``reduce`` are PyTorch's
    deprecated spelling of ``reduction``."""

    _function = ""
    _options: tuple = ()

    def __init__(self, *args, size_average=None, reduce=None, reduction: str = "mean", **kw):
        names = [n for n, _ in self._options]
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__}: takes at most {len(names)} options "
                            f"({', '.join(names)}) by position, got {len(args)}")  # fmt: skip
        if reduction == "batchmean" and self._function == "kl_div":
            super().__init__("mean")
            self.reduction = reduction
        else:
            super().__init__(F._legacy(reduction, size_average, reduce))
        values = dict(self._options)
        values.update(zip(names, args))
        for key, value in kw.items():
            if key not in values:
                raise TypeError(f"{type(self).__name__}: unexpected argument {key!r}")
            values[key] = value
        for key, value in values.items():
            setattr(self, key, value)

    def forward(self, *inputs) -> Tensor:
        options = {n: getattr(self, n) for n, _ in self._options}
        return getattr(F, self._function)(*inputs, reduction=self.reduction, **options)


def _options(name, function, options=(), doc=""):
    return type(name, (_Options,), {"__doc__": doc, "_function": function,
                                    "_options": options})  # fmt: skip


SmoothL1Loss = _options("SmoothL1Loss", "smooth_l1_loss", (("beta", 1.0),),
                        "Squared error below ``beta``, absolute error above (scaled).")
HuberLoss = _options("HuberLoss", "huber_loss", (("delta", 1.0),),
                     "Squared error below ``delta``, ``delta`` times the absolute error above.")
KLDivLoss = _options("KLDivLoss", "kl_div", (("log_target", False),),
                     "KL divergence of log-probabilities from a target distribution "
                     "(``reduction='batchmean'`` for the true KL).")
MarginRankingLoss = _options("MarginRankingLoss", "margin_ranking_loss", (("margin", 0.0),),
                             "Ranks two inputs by a +1/-1 label, with a margin.")
HingeEmbeddingLoss = _options("HingeEmbeddingLoss", "hinge_embedding_loss", (("margin", 1.0),),
                              "$x$ for label 1, $\\max(0, margin - x)$ for label -1.")
SoftMarginLoss = _options("SoftMarginLoss", "soft_margin_loss", (),
                          "Logistic loss of +1/-1 labels.")
TripletMarginLoss = _options("TripletMarginLoss", "triplet_margin_loss",
                             (("margin", 1.0), ("p", 2.0), ("eps", 1e-6), ("swap", False)),
                             "Anchor closer to the positive than to the negative, by a margin.")
CosineEmbeddingLoss = _options("CosineEmbeddingLoss", "cosine_embedding_loss", (("margin", 0.0),),
                               "Cosine similarity pulled up for label 1, down for -1.")
MultiLabelSoftMarginLoss = _options("MultiLabelSoftMarginLoss", "multilabel_soft_margin_loss",
                                    (("weight", None),), "One logistic loss per label, averaged.")
MultiMarginLoss = _options("MultiMarginLoss", "multi_margin_loss",
                           (("p", 1), ("margin", 1.0), ("weight", None)),
                           "Multi-class hinge loss on class indices.")
PoissonNLLLoss = _options("PoissonNLLLoss", "poisson_nll_loss",
                          (("log_input", True), ("full", False), ("eps", 1e-8)),
                          "Negative log-likelihood of a Poisson target.")
GaussianNLLLoss = _options("GaussianNLLLoss", "gaussian_nll_loss", (("full", False),
                           ("eps", 1e-6)), "Negative log-likelihood of a Gaussian target, "
                           "given a predicted variance.")  # fmt: skip


class CosineSimilarity(Module):
    """The cosine similarity of two inputs along ``dim``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PairwiseDistance(Module):
    """The ``p``-norm distance of two inputs over the last dim."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
