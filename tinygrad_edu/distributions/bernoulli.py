"""``Bernoulli(probs=...)`` or ``Bernoulli(logits=...)``: 1 with probability ``probs``."""

from __future__ import annotations

from ..eager.dispatch import apply_op
from ..eager.factories import rand
from ..eager.grad_mode import no_grad
from ..ops import REGISTRY
from .distribution import Distribution, ProbsOrLogits, broadcast_all, check, clamp_probs

__all__ = ["Bernoulli"]

_BCE = REGISTRY["binary_cross_entropy_with_logits"]


def _one_of(name, probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError(f"{name}: either `probs` or `logits` must be specified, but not both")


class Bernoulli(ProbsOrLogits, Distribution):
    r"""1 with probability $p$, 0 otherwise (PyTorch's ``Bernoulli``). Give ``probs`` $p$ or
    ``logits`` $\log(p / (1 - p))$; the other is computed from it (``sigmoid``, or the log-odds
    of $p$ kept inside $[\epsilon, 1 - \epsilon]$). ``log_prob`` and ``entropy`` are binary
    cross-entropies on the logits, stable for large logits."""

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of("Bernoulli", probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            self._params = ("probs",)
        else:
            (self.logits,) = broadcast_all(logits)
            self._params = ("logits",)
        param = self.probs if probs is not None else self.logits
        super().__init__(param.shape, (), validate_args)

    def _check_args(self):
        with no_grad():
            if "probs" in self._params:
                check(self, "probs", self.probs, (self.probs >= 0) & (self.probs <= 1),
                      "Interval(lower_bound=0.0, upper_bound=1.0)")  # fmt: skip
            else:
                check(self, "logits", self.logits, self.logits == self.logits, "Real()")

    @staticmethod
    def _logits_of(probs):
        p = clamp_probs(probs)
        return p.log() - (-p).log1p()

    @staticmethod
    def _probs_of(logits):
        return logits.sigmoid()

    @property
    def param_shape(self):
        return self.batch_shape

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return mode.masked_fill(self.probs == 0.5, float("nan"))

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            u = rand(shape, dtype=self.probs.dtype)
            return (u < self.probs.expand(shape)).to(self.probs.dtype)

    def log_prob(self, value):
        value = self._as_value(value)
        if self._validate_args:
            with no_grad():
                if not bool(((value == 0) | (value == 1)).all()):
                    self._support_error(value, "Boolean()")
        logits, value = broadcast_all(self.logits, value)
        return -apply_op(_BCE, logits, value, reduction="none")

    def entropy(self):
        return apply_op(_BCE, self.logits, self.probs, reduction="none")
