r"""Stochastic gradient descent, with momentum, Nesterov momentum and weight decay.

With gradient $g_t$, weight decay $\lambda$, momentum $\mu$, dampening $\tau$ and learning rate
$\eta$ (PyTorch's formulas, step for step):

$$d_t = g_t + \lambda p_{t-1}, \qquad
b_t = \begin{cases} d_1 & t = 1 \\ \mu b_{t-1} + (1-\tau) d_t & t > 1 \end{cases}$$

$$p_t = p_{t-1} - \eta \cdot \begin{cases} d_t + \mu b_t & \text{Nesterov} \\
b_t & \text{momentum} \\ d_t & \mu = 0 \end{cases}$$

>>> import tinygrad_edu as tg
>>> w = tg.nn.Parameter([1.0])
>>> opt = tg.optim.SGD([w], lr=0.1, momentum=0.9)
>>> for _ in range(2):
...     opt.zero_grad()
...     (w * w).sum().backward()   # gradient 2w
...     opt.step()
>>> round(w.item(), 4)   # 1 - 0.2 = 0.8, then 0.8 - 0.1*(0.9*2 + 1.6) = 0.46
0.46
"""

from __future__ import annotations

from .optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent (see the module docstring for the update).

    Args:
        params: parameters or parameter groups.
        lr: learning rate $\\eta$.
        momentum: momentum factor $\\mu$ (0: plain SGD).
        weight_decay: L2 penalty $\\lambda$ added to the gradient.
        nesterov: use Nesterov momentum (needs momentum > 0 and dampening 0).
        dampening: $\\tau$, scales the new gradient in the momentum buffer.
        maximize: ascend the objective instead of descending it.
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 *, maximize: bool = False):  # fmt: skip
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError(f"SGD: lr, momentum and weight_decay must be >= 0 "
                             f"(got lr={lr}, momentum={momentum}, weight_decay={weight_decay})")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: Nesterov momentum needs momentum > 0 and dampening = 0")
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay,
                                      nesterov=nesterov, dampening=dampening,
                                      maximize=maximize))  # fmt: skip

    def _update(self, p, grad, state, group):
        # BEGIN SOLUTION A3.3
        d = grad
        if group["weight_decay"]:
            d = d + group["weight_decay"] * p
        mu = group["momentum"]
        if mu:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = d.copy()
            else:
                buf *= mu
                buf += (1 - group["dampening"]) * d
            d = d + mu * buf if group["nesterov"] else buf
        p -= group["lr"] * d
        return p
        # END SOLUTION
