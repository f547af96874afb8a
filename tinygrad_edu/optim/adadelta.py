r"""Adadelta: step sizes from the ratio of two running averages, of squared updates and of
squared gradients, so that the units of the update match the weights'.

$$v_t = \rho v_{t-1} + (1-\rho) g_t^2, \qquad
\Delta_t = \frac{\sqrt{u_{t-1} + \epsilon}}{\sqrt{v_t + \epsilon}}\, g_t, \qquad
u_t = \rho u_{t-1} + (1-\rho) \Delta_t^2, \qquad p_t = p_{t-1} - \eta \Delta_t$$

>>> import tinygrad_edu as tg
>>> w = tg.nn.Parameter([1.0])
>>> opt = tg.optim.Adadelta([w])
>>> (w * w).sum().backward()
>>> opt.step()
>>> w.item() < 1.0
True
"""

from __future__ import annotations

from .. import backend
from .optimizer import Optimizer

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta (see the module docstring).

    Args:
        params: parameters or parameter groups.
        lr: scales the update (default 1.0, PyTorch's).
        rho: $\\rho$, the decay of both running averages.
        eps: $\\epsilon$, inside both square roots.
        weight_decay: L2 penalty added to the gradient.
        maximize: ascend the objective.
    """

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0.0, *, maximize: bool = False):  # fmt: skip
        self._check(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay)
        if rho > 1:
            raise ValueError(f"Adadelta: invalid rho {rho}; it must be in [0, 1]")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize))  # fmt: skip

    def _update(self, p, grad, state, group):
        xp = backend.namespace_of(p)
        if not state:
            state["step"] = 0
            state["square_avg"] = xp.zeros_like(p)
            state["acc_delta"] = xp.zeros_like(p)
        state["step"] += 1
        rho, eps = group["rho"], group["eps"]
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * p
        v, u = state["square_avg"], state["acc_delta"]
        v *= rho
        v += (1 - rho) * (grad * grad)
        delta = xp.sqrt(u + eps) / xp.sqrt(v + eps) * grad
        u *= rho
        u += (1 - rho) * (delta * delta)
        p -= group["lr"] * delta
        return p
