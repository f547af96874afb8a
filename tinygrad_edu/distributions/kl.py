r"""``kl_divergence(p, q)``: $\mathrm{KL}(p \,\|\, q) = \mathbb E_p[\log p - \log q]$ in
closed form, for pairs of the same family (PyTorch's ``torch.distributions.kl``); more pairs
are added with ``@register_kl(P, Q)``."""

from __future__ import annotations

import math

from ..eager.dispatch import FUNCTIONS, apply_op
from ..ops import REGISTRY
from .bernoulli import Bernoulli
from .categorical import Categorical
from .normal import Normal
from .uniform import Uniform

__all__ = ["kl_divergence", "register_kl"]

_KL: dict = {}
_where = FUNCTIONS["where"]


def register_kl(type_p, type_q):
    """Decorator: ``@register_kl(P, Q)`` over ``def kl(p, q)`` adds the pair."""

    def decorate(fn):
        _KL[type_p, type_q] = fn
        return fn

    return decorate


def kl_divergence(p, q):
    """$\\mathrm{KL}(p \\,\\|\\, q)$, one value per batch member (a graph of ops: it has
    gradients with respect to both distributions' parameters)."""
    for (tp, tq), fn in _KL.items():
        if isinstance(p, tp) and isinstance(q, tq):
            return fn(p, q)
    raise NotImplementedError(f"No KL(p || q) is implemented for p of type "
                              f"{type(p).__name__} and q of type {type(q).__name__}; pairs "
                              f"here: {sorted(f'{a.__name__}-{b.__name__}' for a, b in _KL)}")


def _softplus(x):
    return apply_op(REGISTRY["softplus"], x)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _where((q.probs == 0).expand_as(t), math.inf, t)
    t = _where((p.probs == 0).expand_as(t), 0.0, t)
    return t.sum(-1)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (_softplus(-q.logits) - _softplus(-p.logits))
    t1 = _where(p.probs == 0, 0.0, _where(q.probs == 0, math.inf, t1))
    t2 = (1 - p.probs) * (_softplus(q.logits) - _softplus(p.logits))
    t2 = _where(p.probs == 1, 0.0, _where(q.probs == 1, math.inf, t2))
    return t1 + t2


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _where((q.low > p.low) | (q.high < p.high), math.inf, result)
