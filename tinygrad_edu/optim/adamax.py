r"""Adamax: Adam with the infinity norm in place of the root mean square.

$$m_t = \beta_1 m_{t-1} + (1-\beta_1) g_t, \qquad
u_t = \max(\beta_2 u_{t-1}, |g_t| + \epsilon), \qquad
p_t = p_{t-1} - \frac{\eta}{1-\beta_1^t}\,\frac{m_t}{u_t}$$

>>> import tinygrad_edu as tg
>>> w = tg.nn.Parameter([1.0])
>>> opt = tg.optim.Adamax([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()   # the first step is about lr
>>> round(w.item(), 4)
0.9
"""

from __future__ import annotations

from .. import backend
from .optimizer import Optimizer

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax (see the module docstring).

    Args:
        params: parameters or parameter groups.
        lr: learning rate $\\eta$ (default 0.002, PyTorch's).
        betas: $(\\beta_1, \\beta_2)$.
        eps: $\\epsilon$, added to $|g|$.
        weight_decay: L2 penalty added to the gradient.
        maximize: ascend the objective.
    """

    def __init__(self, params, lr: float = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, *, maximize: bool = False):  # fmt: skip
        _check_betas(self, betas)
        self._check(lr=lr, eps=eps, weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, maximize=maximize))

    def _update(self, p, grad, state, group):
        # BEGIN SOLUTION A3.4
        xp = backend.namespace_of(p)
        if not state:
            state["step"] = 0
            state["exp_avg"] = xp.zeros_like(p)
            state["exp_inf"] = xp.zeros_like(p)
        state["step"] += 1
        b1, b2 = group["betas"]
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * p
        m, u = state["exp_avg"], state["exp_inf"]
        m += (1 - b1) * (grad - m)
        u[...] = xp.maximum(u * b2, xp.abs(grad) + group["eps"])
        p -= group["lr"] / (1 - b1 ** state["step"]) * (m / u)
        return p
        # END SOLUTION


def _check_betas(opt, betas) -> None:
    """Both betas in [0, 1), or a ValueError naming the optimizer and the beta."""
    if len(betas) != 2 or not all(0 <= b < 1 for b in betas):
        raise ValueError(f"{type(opt).__name__}: invalid betas {tuple(betas)}; need two "
                         "values in [0, 1), e.g. (0.9, 0.999)")  # fmt: skip
