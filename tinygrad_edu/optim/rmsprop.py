r"""RMSprop: divide the gradient by a running root mean square of recent gradients.

With $\alpha$ the smoothing constant (PyTorch's update, step for step):

$$v_t = \alpha v_{t-1} + (1-\alpha) g_t^2, \qquad
\tilde v_t = v_t - \bar g_t^2 \ \text{(centered, } \bar g_t \text{ the running mean of } g)$$

$$b_t = \mu b_{t-1} + \frac{g_t}{\sqrt{\tilde v_t} + \epsilon}, \qquad p_t = p_{t-1} - \eta b_t
\quad (\text{without momentum: } p_t = p_{t-1} - \eta\, g_t / (\sqrt{\tilde v_t} + \epsilon))$$

>>> import tinygrad_edu as tg
>>> w = tg.nn.Parameter([1.0])
>>> opt = tg.optim.RMSprop([w], lr=0.01)
>>> (w * w).sum().backward()
>>> opt.step()   # g = 2: v = 0.01 * 4, so the step is 0.01 * 2 / 0.2 = 0.1
>>> round(w.item(), 4)
0.9
"""

from __future__ import annotations

from .. import backend
from .optimizer import Optimizer

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop (see the module docstring).

    Args:
        params: parameters or parameter groups.
        lr: learning rate $\\eta$ (default 0.01).
        alpha: smoothing constant of the running average of $g^2$.
        eps: added to the denominator.
        weight_decay: L2 penalty added to the gradient.
        momentum: momentum factor $\\mu$.
        centered: subtract the squared running mean of the gradient (an estimate of its
            variance instead of its second moment).
        maximize: ascend the objective.
    """

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False, *,
                 maximize: bool = False):  # fmt: skip
        self._check(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum)
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered,
                                      maximize=maximize))  # fmt: skip

    def _update(self, p, grad, state, group):
        xp = backend.namespace_of(p)
        if not state:
            state["step"] = 0
            state["square_avg"] = xp.zeros_like(p)
            if group["momentum"] > 0:
                state["momentum_buffer"] = xp.zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = xp.zeros_like(p)
        state["step"] += 1
        alpha = group["alpha"]
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * p
        sq = state["square_avg"]
        sq *= alpha
        sq += (1 - alpha) * (grad * grad)
        if group["centered"]:
            ga = state["grad_avg"]
            ga += (1 - alpha) * (grad - ga)
            avg = xp.sqrt(sq - ga * ga)
        else:
            avg = xp.sqrt(sq)
        avg += group["eps"]
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            buf *= group["momentum"]
            buf += grad / avg
            p -= group["lr"] * buf
        else:
            p -= group["lr"] * (grad / avg)
        return p
