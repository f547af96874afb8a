r"""More of ``tg.nn.functional``, with PyTorch's names and arguments, each a composite of
ops (so every derivative, to any order, comes from the op library): the distances
``normalize``, ``cosine_similarity``, ``pairwise_distance``; ``gumbel_softmax``; and the
losses ``smooth_l1_loss``, ``huber_loss``, ``kl_div``, ``margin_ranking_loss``,
``hinge_embedding_loss``, ``soft_margin_loss``, ``triplet_margin_loss``,
``cosine_embedding_loss``, ``multilabel_soft_margin_loss``, ``multi_margin_loss``,
``poisson_nll_loss``, ``gaussian_nll_loss``.

>>> import tinygrad_edu as tg
>>> import tinygrad_edu.nn.functional as F
>>> F.smooth_l1_loss(tg.tensor([0.5, 3.0]), tg.tensor([0.0, 0.0])).item()
1.3125
>>> F.normalize(tg.tensor([[3.0, 4.0]]))
tensor([[0.6000, 0.8000]])
"""

from __future__ import annotations

import math

from ..eager.dispatch import FUNCTIONS, NN_FUNCTIONS
from ..eager.factories import as_tensor, empty_like
from ..eager.loss_node import smooth_l1_mean
from ..eager.tensor import Tensor, apply_op
from ..linalg import vector_norm
from ..ops import REGISTRY
from .arguments import _legacy, _reduce, _same_shape, _tensor_input

where = FUNCTIONS["where"]  # where(condition, input, other)

__all__ = [
    "normalize", "cosine_similarity", "pairwise_distance", "gumbel_softmax", "smooth_l1_loss",
    "huber_loss", "kl_div", "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
    "triplet_margin_loss", "cosine_embedding_loss", "multilabel_soft_margin_loss",
    "multi_margin_loss", "poisson_nll_loss", "gaussian_nll_loss",
]  # fmt: skip


# -- distances ---------------------------------------------------------------------------------
def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None):
    r"""$x / \max(\|x\|_p, \epsilon)$ along ``dim``."""
    if out is not None:
        raise TypeError("normalize: out= is not supported; assign the result instead")
    input = _tensor_input("normalize", input)
    norm = vector_norm(input, p, dim, keepdim=True).clamp_min(eps)
    return input / norm


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    r"""$\frac{x_1}{\max(\|x_1\|, \epsilon)} \cdot \frac{x_2}{\max(\|x_2\|, \epsilon)}$ along
    ``dim`` (the inputs broadcast together)."""
    x1, x2 = _tensor_input("cosine_similarity", x1), _tensor_input("cosine_similarity", x2)
    n1, n2 = (vector_norm(x, 2, dim, keepdim=True) for x in (x1, x2))
    # PyTorch clamps the norms in place without recording it: the value is clamped, the
    # gradient is the unclamped norm's
    n1, n2 = (n + (n.clamp_min(eps) - n).detach() for n in (n1, n2))
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:  # fmt: skip
    r"""$\|x_1 - x_2 + \epsilon\|_p$ over the last dim."""
    x1, x2 = _tensor_input("pairwise_distance", x1), _tensor_input("pairwise_distance", x2)
    d = x1 - x2 + eps
    return vector_norm(d, p, -1 if d.ndim else None, keepdim=keepdim)


def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:  # fmt: skip
    r"""$\mathrm{softmax}((\ell + G)/\tau)$ with Gumbel noise $G = -\log E$, $E \sim
    \mathrm{Exp}(1)$; with ``hard``, the one-hot of its largest entry, carrying the soft
    sample's gradient (straight-through)."""
    logits = _tensor_input("gumbel_softmax", logits)
    gumbels = -empty_like(logits).exponential_().log()
    soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return soft
    index = soft.argmax(dim, keepdim=True)
    one = (soft.detach() * 0).scatter(dim, index, 1.0)
    return one - soft.detach() + soft


# -- losses ------------------------------------------------------------------------------------
def _loss(name, input, target, size_average, reduce, reduction):
    input = _tensor_input(name, input)
    return input, _same_shape(name, input, target), _legacy(reduction, size_average, reduce)


def smooth_l1_loss(input: Tensor, target, size_average=None, reduce=None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:  # fmt: skip
    r"""$\frac{0.5 d^2}{\beta}$ where $d = |x - y| < \beta$, else $d - 0.5\beta$."""
    input, target, reduction = _loss("smooth_l1_loss", input, target, size_average, reduce,
                                     reduction)  # fmt: skip
    if beta < 0:
        raise RuntimeError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    if beta > 0 and reduction == "mean":
        fused = smooth_l1_mean(input, target, beta)  # the ops below as one node, same numbers
        if fused is not None:
            return fused
    d = (input - target).abs()
    if beta == 0:
        return _reduce("smooth_l1_loss", d, reduction)
    loss = where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta)
    return _reduce("smooth_l1_loss", loss, reduction)


def huber_loss(input: Tensor, target, reduction: str = "mean", delta: float = 1.0,
               weight=None) -> Tensor:  # fmt: skip
    r"""$0.5 d^2$ where $d = |x - y| < \delta$, else $\delta(d - 0.5\delta)$."""
    input, target, reduction = _loss("huber_loss", input, target, None, None, reduction)
    if delta <= 0:
        raise RuntimeError(f"huber_loss: delta must be positive, got {delta}")
    d = (input - target).abs()
    loss = where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta)
    if weight is not None:
        loss = loss * weight
    return _reduce("huber_loss", loss, reduction)


def _xlogy(t):
    """$t \\log t$, 0 where $t = 0$."""
    positive = t > 0
    return where(positive, t * where(positive, t, 1.0).log(), 0.0)


def kl_div(input: Tensor, target, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:  # fmt: skip
    r"""$y (\log y - x)$ for log-probabilities $x$ and probabilities $y$ (log-probabilities
    with ``log_target``); ``reduction='batchmean'`` divides the sum by the batch size, which is
    the KL divergence (``'mean'`` divides by every element, as PyTorch does)."""
    input = _tensor_input("kl_div", input)
    target = _same_shape("kl_div", input, target) if not isinstance(target, Tensor) else target
    if reduction == "batchmean":
        batch = input.shape[0] if input.ndim else 1
        loss = target.exp() * (target - input) if log_target else _xlogy(target) - target * input
        return loss.sum() / batch
    reduction = _legacy(reduction, size_average, reduce)
    loss = target.exp() * (target - input) if log_target else _xlogy(target) - target * input
    return _reduce("kl_div", loss, reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target, margin: float = 0.0,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    r"""$\max(0, -y(x_1 - x_2) + \mathrm{margin})$ for labels $y = \pm 1$."""
    input1 = _tensor_input("margin_ranking_loss", input1)
    loss = (-target * (input1 - input2) + margin).clamp_min(0)
    return _reduce("margin_ranking_loss", loss, _legacy(reduction, size_average, reduce))


def hinge_embedding_loss(input: Tensor, target, margin: float = 1.0, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:  # fmt: skip
    r"""$x$ where $y = 1$, $\max(0, \mathrm{margin} - x)$ where $y = -1$."""
    input, target, reduction = _loss("hinge_embedding_loss", input, target, size_average,
                                     reduce, reduction)  # fmt: skip
    loss = where(target == 1, input, 0.0) + where(target == -1, (margin - input).clamp_min(0),
                                                  0.0)  # fmt: skip
    return _reduce("hinge_embedding_loss", loss, reduction)


def soft_margin_loss(input: Tensor, target, size_average=None, reduce=None,
                     reduction: str = "mean") -> Tensor:  # fmt: skip
    r"""$\log(1 + e^{-y x})$ for labels $y = \pm 1$."""
    softplus = NN_FUNCTIONS["softplus"]
    input, target, reduction = _loss("soft_margin_loss", input, target, size_average, reduce,
                                     reduction)  # fmt: skip
    return _reduce("soft_margin_loss", softplus(-target * input), reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    r"""$\max(d(a, p) - d(a, n) + \mathrm{margin}, 0)$ with ``pairwise_distance`` $d$
    (``swap``: the smaller of $d(a, n)$ and $d(p, n)$)."""
    for t in (anchor, positive, negative):
        _tensor_input("triplet_margin_loss", t)
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"triplet_margin_loss: the inputs must have the same number of dims, "
                           f"got {anchor.shape}, {positive.shape}, {negative.shape}")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(pairwise_distance(positive, negative, p, eps))
    loss = (d_pos - d_neg + margin).clamp_min(0)
    return _reduce("triplet_margin_loss", loss, _legacy(reduction, size_average, reduce))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target, margin: float = 0.0,
                          size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    r"""$1 - \cos(x_1, x_2)$ where $y = 1$, $\max(0, \cos(x_1, x_2) - \mathrm{margin})$ where
    $y = -1$ (cosines along the last dim)."""
    input1 = _tensor_input("cosine_embedding_loss", input1)
    dim = input1.ndim - 1 if input1.ndim else 0
    eps = 1e-12  # PyTorch's EPSILON: added to the squared norms
    prod = (input1 * input2).sum(dim)
    mag = ((input1 * input1).sum(dim) + eps) * ((input2 * input2).sum(dim) + eps)
    cos = prod / mag.sqrt()
    loss = where(target == 1, 1 - cos, 0.0) + where(target == -1, (cos - margin).clamp_min(0),
                                                    0.0)  # fmt: skip
    return _reduce("cosine_embedding_loss", loss, _legacy(reduction, size_average, reduce))


def multilabel_soft_margin_loss(input: Tensor, target, weight=None, size_average=None,
                                reduce=None, reduction: str = "mean") -> Tensor:  # fmt: skip
    r"""$-\frac1C\sum_c y_c \log\sigma(x_c) + (1 - y_c)\log\sigma(-x_c)$ per sample."""
    logsigmoid = NN_FUNCTIONS["logsigmoid"]
    input, target, reduction = _loss("multilabel_soft_margin_loss", input, target, size_average,
                                     reduce, reduction)  # fmt: skip
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.mean(-1) if input.ndim else loss
    return _reduce("multilabel_soft_margin_loss", loss, reduction)


def multi_margin_loss(input: Tensor, target, p: int = 1, margin: float = 1.0, weight=None,
                      size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    r"""$\frac1C \sum_{i \ne y} \max(0, \mathrm{margin} - x_y + x_i)^p$ per sample (class
    indices $y$)."""
    input = _tensor_input("multi_margin_loss", input)
    if p not in (1, 2):
        raise ValueError(f"multi_margin_loss: p must be 1 or 2, got {p}")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    t = target.reshape(-1)
    if x.ndim != 2 or t.shape[0] != x.shape[0]:
        raise RuntimeError(f"multi_margin_loss: input {input.shape} and target "
                           f"{tuple(target.shape)} do not fit (N, C) and (N,)")  # fmt: skip
    picked = x.gather(1, t.reshape(-1, 1))
    hinge = (x - picked + margin).clamp_min(0)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * weight.index_select(0, t).reshape(-1, 1)
    others = apply_op(REGISTRY["one_hot"], as_tensor(t), num_classes=x.shape[1]) == 0
    loss = where(others, hinge, 0.0).sum(1) / x.shape[1]
    loss = loss if input.ndim == 2 else loss.reshape(())
    return _reduce("multi_margin_loss", loss, _legacy(reduction, size_average, reduce))


def poisson_nll_loss(input: Tensor, target, log_input: bool = True, full: bool = False,
                     size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean") -> Tensor:  # fmt: skip
    r"""$e^x - y x$ (``log_input``) or $x - y\log(x + \epsilon)$; ``full`` adds Stirling's
    $y\log y - y + \frac12\log(2\pi y)$ where $y > 1$."""
    input, target, reduction = _loss("poisson_nll_loss", input, target, size_average, reduce,
                                     reduction)  # fmt: skip
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        big = target > 1
        safe = where(big, target, 1.0)
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + where(big, stirling, 0.0)
    return _reduce("poisson_nll_loss", loss, reduction)


def gaussian_nll_loss(input: Tensor, target, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:  # fmt: skip
    r"""$\frac12(\log \max(v, \epsilon) + (x - y)^2/\max(v, \epsilon))$ (plus
    $\frac12\log 2\pi$ with ``full``)."""
    input = _tensor_input("gaussian_nll_loss", input)
    if isinstance(var, int | float):
        if var < 0:
            raise ValueError("gaussian_nll_loss: var has negative entries")
        var = input.new_full((), float(var))
    if bool((var < 0).any()):
        raise ValueError("gaussian_nll_loss: var has negative entries")
    if var.ndim == input.ndim - 1 and var.shape == input.shape[:-1]:
        var = var.unsqueeze(-1)
    v = var.clamp_min(eps)
    loss = 0.5 * (v.log() + (input - target) ** 2 / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce("gaussian_nll_loss", loss, reduction)
