r"""The connectionist temporal classification loss (CTC, Graves et al. 2006):
``F.ctc_loss`` and ``nn.CTCLoss``, with PyTorch's arguments.

CTC scores a target sequence $l$ (length $L$) against per-frame class log-probabilities
without knowing which frames produce which label: it adds up every *alignment*, a path over
the $T$ frames through the extended target $l' = (b, l_1, b, l_2, \dots, l_L, b)$ ($b$ the
blank class) that at each frame stays, moves one step, or skips a blank between two
different labels. The **forward algorithm** adds the paths up one frame at a time, in log
space so that nothing underflows:

$$\alpha_t(s) = \log p_t(l'_s) + \operatorname{logsumexp}\big(\alpha_{t-1}(s),\,
  \alpha_{t-1}(s-1),\, \alpha_{t-1}(s-2)\big)$$

(the last term only when $l'_s \ne b$ and $l'_s \ne l'_{s-2}$), and the loss is
$-\operatorname{logsumexp}(\alpha_{T-1}(2L), \alpha_{T-1}(2L-1))$. Every step is a
``gather``, a ``cat``, a ``logsumexp`` and a ``where``, for the whole batch at once, so the
gradient comes from autograd over the recursion.

NOTE [CTC's gradient in PyTorch]
    The derivative of the loss for ``log_probs`` is $-\gamma$ ($\gamma_t(c)$ the posterior
    probability that frame $t$ emits class $c$; each frame's $\gamma$ sums to 1). PyTorch's
    backward returns $\exp(\log p) - \gamma$ instead: the gradient for the *logits* when
    ``log_probs = log_softmax(logits)`` (``log_softmax``'s backward leaves it unchanged, since
    it sums to 0 over the classes). Both give the same gradient for the logits. To return
    PyTorch's numbers for ``log_probs`` too, the recursion reads
    ``log_probs - (s - s.detach())`` with ``s = exp(log_probs).sum(-1)``: the same values
    (the added term is exactly 0), and the extra gradient $\exp(\log p)\sum_c(-\gamma) =
    \exp(\log p)$ per frame.

>>> import tinygrad_edu as tg
>>> import tinygrad_edu.nn.functional as F
>>> log_probs = tg.randn(6, 2, 4).log_softmax(2)     # (T, N, C), class 0 the blank
>>> targets = tg.tensor([[1, 2], [3, 3]])
>>> loss = F.ctc_loss(log_probs, targets, [6, 5], [2, 2])
>>> loss.shape
()
"""

from __future__ import annotations

import numpy as _np  # the extended targets and masks: integer tables, no math on tensors

from ..eager.dispatch import FUNCTIONS
from ..eager.tensor import Tensor
from ..ops import ShapeError
from .module import Module

__all__ = ["ctc_loss", "CTCLoss"]

_cat, _stack, _where = FUNCTIONS["cat"], FUNCTIONS["stack"], FUNCTIONS["where"]

#: log(0) for the recursion: finite, so that no gradient meets inf - inf; exp(NEG - x) is 0
_NEG = -1e30


def _ints(name: str, what: str, value) -> list[int]:
    if isinstance(value, Tensor):
        if value.is_floating_point():
            raise RuntimeError(f"{name}: {what} must be integers, got a {value.dtype} tensor")
        value = value.tolist()
    arr = _np.asarray(value)
    if arr.dtype.kind not in "iu" and arr.size:
        raise RuntimeError(f"{name}: {what} must be integers, got {value!r}")
    return [int(v) for v in arr.reshape(-1)]


def _target_rows(name, targets, target_lengths, N) -> list[list[int]]:
    """Each sample's labels, from a padded (N, S) ``targets`` or a 1-D concatenation."""
    if isinstance(targets, Tensor) and targets.is_floating_point():
        raise RuntimeError(f"{name}: targets must be integers, got a {targets.dtype} tensor")
    t = _np.asarray(targets.tolist() if isinstance(targets, Tensor) else targets)
    if t.ndim == 2:
        if t.shape[0] != N:
            raise RuntimeError(f"{name}: targets has {t.shape[0]} rows but the batch has {N}")
        for length in target_lengths:
            if length > t.shape[1]:
                raise RuntimeError(f"Expected tensor to have size at least {length} at "
                                   f"dimension 1, but got size {t.shape[1]} for argument #2 "
                                   f"'targets' (while checking arguments for ctc_loss)")
        return [[int(v) for v in t[n, :length]] for n, length in enumerate(target_lengths)]
    if t.ndim != 1:
        raise RuntimeError(f"{name}: targets must be (N, S) or 1-D, got shape {t.shape}")
    if sum(target_lengths) > t.shape[0]:
        raise RuntimeError(f"{name}: the target lengths add up to {sum(target_lengths)}, more "
                           f"than the {t.shape[0]} concatenated targets")  # fmt: skip
    starts = _np.cumsum([0] + list(target_lengths))
    return [[int(v) for v in t[a:b]] for a, b in zip(starts[:-1], starts[1:])]


def _extended_targets(rows, tg_lens, blank: int):
    """The extended targets (blank, l1, blank, l2, ..., blank), padded with blanks to
    S = 2 max(L) + 1, as an (N, S) table; ``skip``: may position s be reached from s - 2
    (skipping a blank); ``start``: the positions an alignment may start at (0 and 1)."""
    N, S = len(rows), 2 * max(tg_lens, default=0) + 1
    ext = _np.full((N, S), blank, dtype=_np.int64)
    for n, row in enumerate(rows):
        ext[n, 1:2 * len(row):2] = row
    skip = _np.zeros((N, S), dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    start = _np.zeros((N, S), dtype=bool)
    start[:, 0] = True
    start[:, 1] = _np.asarray(tg_lens) > 0 if S > 1 else False
    return ext, skip, start


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:  # fmt: skip
    """The CTC loss of ``log_probs`` (T, N, C) (log-softmax outputs; (T, C) for one sample)
    for ``targets`` ((N, S) padded, or the N sequences concatenated), with ``input_lengths``
    frames and ``target_lengths`` labels per sample (see the module docstring).

    ``reduction``: ``"mean"`` (each loss divided by its target length, then the batch mean,
    as PyTorch), ``"sum"`` or ``"none"``. A target no alignment can produce (too long for
    its frames) has an infinite loss; ``zero_infinity=True`` makes it 0 (and its gradient 0).
    """
    name = "ctc_loss"
    if not isinstance(log_probs, Tensor):
        raise TypeError(f"{name}: argument 'log_probs' must be a Tensor, not "
                        f"{type(log_probs).__name__}")  # fmt: skip
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    single = log_probs.dim() == 2
    lp = log_probs.unsqueeze(1) if single else log_probs
    if lp.dim() != 3:
        raise ShapeError(f"{name}: log_probs must be (T, N, C) or (T, C), got shape "
                         f"{tuple(log_probs.shape)}")  # fmt: skip
    if not lp.is_floating_point():
        raise RuntimeError(f"{name}: log_probs must be floating point, got {lp.dtype}")
    T, N, C = lp.shape
    if not 0 <= blank < C:
        raise RuntimeError(f"blank must be in label range (blank={blank}, {C} classes)")
    in_lens = _ints(name, "input_lengths", input_lengths)
    tg_lens = _ints(name, "target_lengths", target_lengths)
    if len(in_lens) != N or len(tg_lens) != N:
        raise RuntimeError(f"{name}: input_lengths and target_lengths must have one entry per "
                           f"sample ({N}), got {len(in_lens)} and {len(tg_lens)}")
    for v in in_lens:
        if not 0 <= v <= T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got "
                               f"value {v} (while checking arguments for ctc_loss)")
    if min(tg_lens, default=0) < 0:
        raise RuntimeError(f"{name}: target_lengths must be >= 0, got {tg_lens}")
    rows = _target_rows(name, [targets] if single and not isinstance(targets, Tensor) else
                        (targets.unsqueeze(0) if single and targets.dim() == 1 else targets),
                        tg_lens, N)  # fmt: skip
    for row in rows:
        if any(not 0 <= v < C for v in row):
            raise IndexError(f"{name}: target labels must be in [0, {C}), got {row}")

    ext, skip, start = _extended_targets(rows, tg_lens, blank)
    S = ext.shape[1]
    dev = lp.device

    def const(a):
        return Tensor(a, device=dev)

    mass = lp.exp().sum(-1, keepdim=True)  # see NOTE [CTC's gradient in PyTorch]
    lp = lp - (mass - mass.detach())
    lp_ext = lp.gather(2, const(_np.ascontiguousarray(_np.broadcast_to(ext, (T, N, S)))))
    neg = lp.new_full((N, S), _NEG)
    neg2 = lp.new_full((N, 2), _NEG)
    skip_t = const(skip)
    alpha = _where(const(start), lp_ext[0], neg)
    lens = _np.asarray(in_lens)
    for t in range(1, T):
        padded = _cat([neg2, alpha], 1)
        stay, step, jump = alpha, padded[:, 1:S + 1], _where(skip_t, padded[:, :S], neg)
        new = lp_ext[t] + _stack([stay, step, jump]).logsumexp(0)
        alpha = _where(const((t < lens)[:, None]), new, alpha)  # a sample's frames are over
    ends = _np.stack([2 * _np.asarray(tg_lens), _np.maximum(2 * _np.asarray(tg_lens) - 1, 0)], 1)
    two = _np.stack([_np.ones(N, bool), _np.asarray(tg_lens) > 0], 1)
    last = _where(const(two), alpha.gather(1, const(ends)), lp.new_full((N, 2), _NEG))
    loss = -last.logsumexp(1)
    impossible = (loss.detach() > -_NEG / 10) | const(lens == 0)
    if bool(impossible.any().item()):
        fill = 0.0 if zero_infinity else float("inf")
        loss = _where(impossible, lp.new_full((N,), fill), loss)
    if reduction == "none":
        return loss.squeeze(0) if single else loss
    if reduction == "sum":
        return loss.sum()
    divisor = const(_np.maximum(_np.asarray(tg_lens), 1).astype(str(loss.dtype)))
    return (loss / divisor).mean()


class CTCLoss(Module):
    """``F.ctc_loss`` as a module: ``CTCLoss(blank=0, reduction="mean",
    zero_infinity=False)(log_probs, targets, input_lengths, target_lengths)``."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__()
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"CTCLoss: reduction must be 'mean', 'sum' or 'none', got "
                             f"{reduction!r}")  # fmt: skip
        self.blank, self.reduction, self.zero_infinity = blank, reduction, zero_infinity

    def forward(self, log_probs: Tensor, targets, input_lengths, target_lengths) -> Tensor:
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                        self.reduction, self.zero_infinity)  # fmt: skip
