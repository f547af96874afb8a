"""``Uniform(low, high)``: constant density on $[\\mathrm{low}, \\mathrm{high})$, with a
reparameterised sample."""

from __future__ import annotations

from ..eager.factories import rand
from ..eager.grad_mode import no_grad
from .distribution import Distribution, broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    r"""The uniform distribution on $[\mathrm{low}, \mathrm{high})$ (PyTorch's ``Uniform``).
    ``rsample`` is $\mathrm{low} + u\,(\mathrm{high} - \mathrm{low})$ with $u \sim U[0, 1)$:
    gradients reach both bounds."""

    has_rsample = True
    _params = ("low", "high")

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.shape, (), validate_args)

    def _check_args(self):
        with no_grad():
            if not bool((self.low < self.high).all()):
                raise ValueError(f"Uniform is not defined when low >= high: got low "
                                 f"{self.low} and high {self.high}")  # fmt: skip

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return self.mean * float("nan")

    @property
    def stddev(self):
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        u = rand(self._extended_shape(sample_shape), dtype=self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        value = self._as_value(value)
        if self._validate_args:
            with no_grad():
                if not bool(((self.low <= value) & (value < self.high)).all()):
                    self._support_error(value, f"Interval(lower_bound={self.low}, "
                                               f"upper_bound={self.high})")  # fmt: skip
        lb = (self.low <= value).to(self.low.dtype)
        ub = (self.high > value).to(self.low.dtype)
        return (lb * ub).log() - (self.high - self.low).log()

    def cdf(self, value):
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()
