r"""``torch.special``: the special functions, on eager tensors.

Most are the library's ops under ``torch.special``'s names (``expit`` is ``sigmoid``,
``gammaln`` is ``lgamma``, ``psi`` is ``digamma``); ``entr``, ``i1`` and ``ndtr`` live only
here, as in PyTorch. Every one has a derivative (of any order): see
:mod:`tinygrad_edu.ops.special` for how each is computed.

>>> import tinygrad_edu as tg
>>> x = tg.tensor([0.5, 2.0], requires_grad=True)
>>> y = tg.special.gammaln(x)
>>> tg.grad(y.sum(), [x])[0]
tensor([-1.9635,  0.4228])
"""

from __future__ import annotations

import math

from .eager.dispatch import FUNCTIONS, apply_op
from .ops import REGISTRY
from .ops.surface import unary

__all__ = ["erf", "erfc", "erfinv", "expit", "logit", "xlogy", "gammaln", "digamma", "psi",
           "polygamma", "log_softmax", "softmax", "log1p", "expm1", "exp2", "sinc", "entr",
           "ndtr", "i0", "i1", "logsumexp"]  # fmt: skip

erf = FUNCTIONS["erf"]
erfc = FUNCTIONS["erfc"]
erfinv = FUNCTIONS["erfinv"]
expit = FUNCTIONS["sigmoid"]
logit = FUNCTIONS["logit"]
xlogy = FUNCTIONS["xlogy"]
gammaln = FUNCTIONS["lgamma"]
digamma = psi = FUNCTIONS["digamma"]
polygamma = FUNCTIONS["polygamma"]
log1p = FUNCTIONS["log1p"]
expm1 = FUNCTIONS["expm1"]
exp2 = FUNCTIONS["exp2"]
sinc = FUNCTIONS["sinc"]
i0 = FUNCTIONS["i0"]
logsumexp = FUNCTIONS["logsumexp"]
entr = unary(REGISTRY["entr"], apply_op)
entr.__name__ = entr.__qualname__ = "entr"
entr.__doc__ = REGISTRY["entr"].__doc__
i1 = unary(REGISTRY["i1"], apply_op)
i1.__name__ = i1.__qualname__ = "i1"
i1.__doc__ = REGISTRY["i1"].__doc__


def softmax(input, dim, *, dtype=None):
    """``torch.special.softmax``: ``dim`` is required, as in PyTorch."""
    return FUNCTIONS["softmax"](input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """``torch.special.log_softmax``: ``dim`` is required, as in PyTorch."""
    return FUNCTIONS["log_softmax"](input, dim, dtype=dtype)


def ndtr(input):
    r"""The standard normal distribution function $\Phi(x) = \frac{1}{2}(1 +
    \mathrm{erf}(x/\sqrt 2))$ (from ``erf``, whose derivative it inherits)."""
    half = apply_op(REGISTRY["mul"], apply_op(REGISTRY["erf"], apply_op(
        REGISTRY["mul"], input, 1 / math.sqrt(2))), 0.5)  # fmt: skip
    return apply_op(REGISTRY["add"], half, 0.5)
