r"""Adagrad: each weight's step shrinks with the sum of its squared gradients so far.

$$s_t = s_{t-1} + g_t^2, \qquad
p_t = p_{t-1} - \frac{\eta}{1 + (t-1)\,\delta}\;\frac{g_t}{\sqrt{s_t} + \epsilon}$$

($\delta$ is ``lr_decay``.)

>>> import tinygrad_edu as tg
>>> w = tg.nn.Parameter([1.0])
>>> opt = tg.optim.Adagrad([w], lr=0.5)
>>> (w * w).sum().backward()
>>> opt.step()   # the first step is lr * g / |g| = 0.5
>>> round(w.item(), 6)
0.5
"""

from __future__ import annotations

from .. import backend
from .optimizer import Optimizer

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad (see the module docstring).

    Args:
        params: parameters or parameter groups.
        lr: learning rate $\\eta$ (default 0.01).
        lr_decay: $\\delta$, divides the rate by $1 + (t-1)\\delta$.
        weight_decay: L2 penalty added to the gradient.
        initial_accumulator_value: the starting value of $s$.
        eps: added to the denominator.
        maximize: ascend the objective.
    """

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, *, maximize: bool = False):  # fmt: skip
        self._check(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay, eps=eps,
                    initial_accumulator_value=initial_accumulator_value)  # fmt: skip
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      eps=eps, maximize=maximize))  # fmt: skip

    def _update(self, p, grad, state, group):
        xp = backend.namespace_of(p)
        if not state:
            state["step"] = 0
            state["sum"] = xp.full_like(p, group["initial_accumulator_value"])
        state["step"] += 1
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * p
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        state["sum"] += grad * grad
        p -= clr * (grad / (xp.sqrt(state["sum"]) + group["eps"]))
        return p
