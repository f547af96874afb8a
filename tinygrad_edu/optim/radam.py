r"""RAdam: Adam whose adaptive step is switched on gradually (Liu et al., "rectified" Adam).

While the variance estimate is unreliable ($\rho_t \le 5$) the step is plain momentum,
$\eta\,\hat m_t$; after that it is Adam's step times a rectification factor $r_t$:

$$\rho_\infty = \frac{2}{1-\beta_2} - 1, \quad
\rho_t = \rho_\infty - \frac{2t\beta_2^t}{1-\beta_2^t}, \quad
r_t = \sqrt{\frac{(\rho_t-4)(\rho_t-2)\rho_\infty}{(\rho_\infty-4)(\rho_\infty-2)\rho_t}}$$

$$p_t = p_{t-1} - \eta\,\hat m_t\, r_t\,\frac{\sqrt{1-\beta_2^t}}{\sqrt{v_t} + \epsilon}$$

>>> import tinygrad_edu as tg
>>> w = tg.nn.Parameter([1.0])
>>> opt = tg.optim.RAdam([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()   # the first steps are momentum steps: lr * m_hat = 0.1 * 2
>>> round(w.item(), 4)
0.8
"""

from __future__ import annotations

import math

from .. import backend
from .adamax import _check_betas
from .nadam import _weight_decay
from .optimizer import Optimizer

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam (see the module docstring).

    Args:
        params: parameters or parameter groups.
        lr: learning rate $\\eta$ (default 0.001).
        betas: $(\\beta_1, \\beta_2)$.
        eps: $\\epsilon$.
        weight_decay: the weight decay $\\lambda$.
        decoupled_weight_decay: shrink the weights by $1 - \\eta\\lambda$ (as AdamW) instead
            of adding $\\lambda p$ to the gradient.
        maximize: ascend the objective.
    """

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, decoupled_weight_decay: bool = False, *,
                 maximize: bool = False):  # fmt: skip
        _check_betas(self, betas)
        self._check(lr=lr, eps=eps, weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize))  # fmt: skip

    def _update(self, p, grad, state, group):
        # BEGIN SOLUTION A3.4
        xp = backend.namespace_of(p)
        if not state:
            state["step"] = 0
            state["exp_avg"] = xp.zeros_like(p)
            state["exp_avg_sq"] = xp.zeros_like(p)
        state["step"] += 1
        t, lr = state["step"], group["lr"]
        b1, b2 = group["betas"]
        grad = _weight_decay(p, grad, group)
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m += (1 - b1) * (grad - m)
        v *= b2
        v += (1 - b2) * (grad * grad)
        bc1, bc2 = 1 - b1**t, 1 - b2**t
        m_hat = m / bc1
        rho_inf = 2 / (1 - b2) - 1
        rho_t = rho_inf - 2 * t * (b2**t) / bc2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5  # fmt: skip
            adaptive = math.sqrt(bc2) / (xp.sqrt(v) + group["eps"])
            p -= m_hat * lr * adaptive * rect
        else:
            p -= m_hat * lr
        return p
        # END SOLUTION
