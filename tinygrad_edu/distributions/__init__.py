"""``torch.distributions``: ``Normal``, ``Uniform``, ``Bernoulli``, ``Categorical`` and
``kl_divergence``, on eager tensors.

A distribution holds its parameters as tensors (numbers become tensors of the default dtype,
then all are broadcast together, as PyTorch's ``broadcast_all``), so ``log_prob``,
``entropy``, ``kl_divergence`` and the reparameterised ``rsample`` (``Normal``, ``Uniform``)
are ordinary graphs of ops: gradients flow back to the parameters. ``sample`` draws from the
library's generator (``tg.manual_seed``) without a graph. Arguments are checked as PyTorch
checks them (``validate_args``, on by default): ``Normal(0.0, -1.0)`` is a ``ValueError``.

>>> import tinygrad_edu as tg
>>> import tinygrad_edu.distributions as D
>>> loc = tg.tensor(0.0, requires_grad=True)
>>> d = D.Normal(loc, 1.0)
>>> d.log_prob(tg.tensor(1.0))
tensor(-1.4189, grad_fn=<SubBackward0>)
>>> D.kl_divergence(d, D.Normal(1.0, 1.0))
tensor(0.5000, grad_fn=<MulBackward0>)
"""

from . import kl
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .normal import Normal
from .uniform import Uniform

__all__ = ["Distribution", "Normal", "Uniform", "Bernoulli", "Categorical", "kl_divergence",
           "register_kl", "kl"]  # fmt: skip
