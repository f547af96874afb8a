"""``Categorical(probs=...)`` or ``Categorical(logits=...)``: one of ``K`` categories."""

from __future__ import annotations

import math

from ..eager.dispatch import FUNCTIONS
from ..eager.factories import full, rand
from ..eager.grad_mode import no_grad
from .bernoulli import _one_of
from .distribution import Distribution, ProbsOrLogits, check, clamp_probs

__all__ = ["Categorical"]

_broadcast_tensors = FUNCTIONS["broadcast_tensors"]


class Categorical(ProbsOrLogits, Distribution):
    r"""Category $k \in \{0, \dots, K-1\}$ with probability $p_k$, over the last dim of
    ``probs`` (normalised to sum to 1) or of ``logits`` (unnormalised log-probabilities,
    normalised by subtracting their ``logsumexp``); the other dims are the batch (PyTorch's
    ``Categorical``). ``log_prob(k)`` gathers $\log p_k$; ``entropy`` is
    $-\sum_k p_k \log p_k$."""

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of("Categorical", probs, logits)
        param = probs if probs is not None else logits
        if not hasattr(param, "ndim") or param.ndim < 1:
            raise ValueError("Categorical: `probs` or `logits` must be at least one-dimensional "
                             "(the categories are the last dim)")  # fmt: skip
        if probs is not None:
            self.probs = probs / probs.sum(-1, keepdim=True)
            self._params = ("probs",)
        else:
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
            self._params = ("logits",)
        self._num_events = param.shape[-1]
        super().__init__(param.shape[:-1], (), validate_args)

    def _check_args(self):
        with no_grad():
            if "probs" in self._params:
                p = self.probs
                ok = (p >= 0).all(-1) & ((p.sum(-1) - 1).abs() < 1e-6)
                check(self, "probs", p, ok, "Simplex()")
            else:
                check(self, "logits", self.logits, self.logits == self.logits,
                      "IndependentConstraint(Real(), 1)")  # fmt: skip

    @staticmethod
    def _logits_of(probs):
        return clamp_probs(probs).log()

    @staticmethod
    def _probs_of(logits):
        return logits.softmax(-1)

    @property
    def param_shape(self):
        return tuple(self.probs.shape)

    @property
    def mean(self):
        return full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    def sample(self, sample_shape=()):
        """Categories drawn by inverting the running sum of the probabilities at a uniform
        number from the library's generator (int64)."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            cdf = self.probs.cumsum(-1)
            u = rand((*shape, 1), dtype=cdf.dtype) * cdf[..., -1:]
            below = (cdf.expand(*shape, self._num_events) <= u).long().sum(-1)
            return below.clamp(max=self._num_events - 1)

    def log_prob(self, value):
        value = self._as_value(value)
        if self._validate_args:
            with no_grad():
                ok = (value == value.floor()) & (value >= 0) & (value <= self._num_events - 1)
                if not bool(ok.all()):
                    self._support_error(value, f"IntegerInterval(lower_bound=0, upper_bound="
                                               f"{self._num_events - 1})")  # fmt: skip
        value = value.long().unsqueeze(-1)
        value, log_pmf = _broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        import numpy as _np  # noqa: PLC0415  (the dtype's smallest number)

        logits = self.logits.clamp(min=float(_np.finfo(self.logits.dtype).min))
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        from ..eager.factories import arange  # noqa: PLC0415

        values = arange(self._num_events).reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand(-1, *self.batch_shape) if expand else values
