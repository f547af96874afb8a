r"""NAdam: Adam with Nesterov momentum (Dozat), with PyTorch's momentum schedule.

$$\mu_t = \beta_1\bigl(1 - \tfrac12\, 0.96^{t\psi}\bigr), \qquad
\Pi_t = \textstyle\prod_{i \le t} \mu_i$$

$$p_t = p_{t-1} - \eta\,\frac{1-\mu_t}{1-\Pi_t}\,\frac{g_t}{d_t}
- \eta\,\frac{\mu_{t+1}}{1-\Pi_t\mu_{t+1}}\,\frac{m_t}{d_t}, \qquad
d_t = \sqrt{v_t / (1-\beta_2^t)} + \epsilon$$

($m_t$, $v_t$ are Adam's averages, $\psi$ is ``momentum_decay``.)

>>> import tinygrad_edu as tg
>>> w = tg.nn.Parameter([1.0])
>>> opt = tg.optim.NAdam([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()
>>> w.item() < 1.0
True
"""

from __future__ import annotations

from .. import backend
from .adamax import _check_betas
from .optimizer import Optimizer

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam (see the module docstring).

    Args:
        params: parameters or parameter groups.
        lr: learning rate $\\eta$ (default 0.002, PyTorch's).
        betas: $(\\beta_1, \\beta_2)$.
        eps: $\\epsilon$.
        weight_decay: the weight decay $\\lambda$.
        momentum_decay: $\\psi$ in the momentum schedule.
        decoupled_weight_decay: shrink the weights by $1 - \\eta\\lambda$ (as AdamW) instead
            of adding $\\lambda p$ to the gradient.
        maximize: ascend the objective.
    """

    def __init__(self, params, lr: float = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, maximize: bool = False):  # fmt: skip
        _check_betas(self, betas)
        self._check(lr=lr, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize))  # fmt: skip

    def _update(self, p, grad, state, group):
        # BEGIN SOLUTION A3.4
        xp = backend.namespace_of(p)
        if not state:
            state["step"] = 0
            state["mu_product"] = 1.0
            state["exp_avg"] = xp.zeros_like(p)
            state["exp_avg_sq"] = xp.zeros_like(p)
        state["step"] += 1
        t, lr = state["step"], group["lr"]
        b1, b2 = group["betas"]
        grad = _weight_decay(p, grad, group)
        mu = b1 * (1.0 - 0.5 * 0.96 ** (t * group["momentum_decay"]))
        mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * group["momentum_decay"]))
        state["mu_product"] *= mu
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m += (1 - b1) * (grad - m)
        v *= b2
        v += (1 - b2) * (grad * grad)
        denom = xp.sqrt(v / (1 - b2**t)) + group["eps"]
        p -= lr * (1.0 - mu) / (1.0 - state["mu_product"]) * (grad / denom)
        p -= lr * mu_next / (1.0 - state["mu_product"] * mu_next) * (m / denom)
        return p
        # END SOLUTION


def _weight_decay(p, grad, group):
    """Weight decay as NAdam and RAdam take it: decoupled (``p`` shrinks, in place) or added
    to the gradient. Returns the gradient to use."""
    wd = group["weight_decay"]
    if not wd:
        return grad
    if group["decoupled_weight_decay"]:
        p *= 1 - group["lr"] * wd
        return grad
    return grad + wd * p
