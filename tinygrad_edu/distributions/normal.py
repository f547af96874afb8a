"""``Normal(loc, scale)``: the Gaussian, with a reparameterised sample."""

from __future__ import annotations

import math

from ..eager.dispatch import apply_op
from ..eager.factories import randn
from ..eager.grad_mode import no_grad
from ..ops import REGISTRY
from .distribution import LOG_SQRT_2PI, Distribution, broadcast_all, check

__all__ = ["Normal"]


class Normal(Distribution):
    r"""The normal distribution $\mathcal N(\mathrm{loc}, \mathrm{scale}^2)$ (PyTorch's
    ``Normal``). ``rsample`` is $\mathrm{loc} + \epsilon\,\mathrm{scale}$ with
    $\epsilon \sim \mathcal N(0, 1)$ from the library's generator: a function of the
    parameters, so gradients reach them."""

    has_rsample = True
    _params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, (), validate_args)

    def _check_args(self):
        with no_grad():
            check(self, "loc", self.loc, self.loc == self.loc, "Real()")
            check(self, "scale", self.scale, self.scale > 0, "GreaterThan(lower_bound=0.0)")

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale.pow(2)

    def rsample(self, sample_shape=()):
        eps = randn(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        value = self._as_value(value)
        if self._validate_args:
            with no_grad():
                if not bool((value == value).all()):
                    self._support_error(value, "Real()")
        var = self.scale**2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - LOG_SQRT_2PI

    def cdf(self, value):
        z = (value - self.loc) * self.scale.reciprocal() / math.sqrt(2)
        return 0.5 * (1 + apply_op(REGISTRY["erf"], z))

    def icdf(self, value):
        return self.loc + self.scale * apply_op(REGISTRY["erfinv"], 2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
