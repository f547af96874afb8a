r"""Adam: per-parameter step sizes from running averages of the gradient and its square.

With gradient $g_t$ (plus $\lambda p_{t-1}$ when ``weight_decay`` is set), PyTorch's update:

$$m_t = \beta_1 m_{t-1} + (1-\beta_1) g_t, \qquad v_t = \beta_2 v_{t-1} + (1-\beta_2) g_t^2$$

$$p_t = p_{t-1} - \frac{\eta}{1-\beta_1^t}\,
\frac{m_t}{\sqrt{v_t}/\sqrt{1-\beta_2^t} + \epsilon}$$

The factors $1-\beta^t$ undo the bias of averages that start at zero.

With ``decoupled_weight_decay=True`` (PyTorch's keyword) the decay is not added to the
gradient: the weights shrink by $1 - \eta\lambda$ before the step instead, which is
:class:`~tinygrad_edu.optim.AdamW`.

>>> import tinygrad_edu as tg
>>> w = tg.nn.Parameter([1.0, -1.0])
>>> opt = tg.optim.Adam([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()   # the first Adam step moves each weight by about lr, against the gradient
>>> w
Parameter containing:
tensor([ 0.9000, -0.9000], requires_grad=True)
"""

from __future__ import annotations

import math

from .. import backend
from .optimizer import Optimizer

__all__ = ["Adam"]


class Adam(Optimizer):
    """Adam (see the module docstring for the update).

    Args:
        params: parameters or parameter groups.
        lr: learning rate $\\eta$.
        betas: $(\\beta_1, \\beta_2)$, decay rates of the two running averages.
        eps: $\\epsilon$, added to the denominator for stability.
        weight_decay: L2 penalty $\\lambda$ added to the gradient.
        amsgrad: divide by the largest $v_t$ seen so far instead of the current one (AMSGrad).
        maximize: ascend the objective instead of descending it.
        decoupled_weight_decay: shrink the weights by $1 - \\eta\\lambda$ before the step
            instead of adding $\\lambda p$ to the gradient (AdamW's decay; AdamW sets it).
    """

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *,
                 maximize: bool = False, decoupled_weight_decay: bool = False):  # fmt: skip
        if lr < 0 or eps < 0 or weight_decay < 0 or not all(0 <= b < 1 for b in betas):
            raise ValueError(f"Adam: need lr, eps, weight_decay >= 0 and 0 <= betas < 1 "
                             f"(got lr={lr}, betas={betas}, eps={eps}, "
                             f"weight_decay={weight_decay})")  # fmt: skip
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize,
                                      decoupled_weight_decay=decoupled_weight_decay))  # fmt: skip

    def _update(self, p, grad, state, group):
        if group.get("decoupled_weight_decay") and group["weight_decay"]:  # AdamW's decay
            p *= 1 - group["lr"] * group["weight_decay"]
            group = {**group, "weight_decay": 0.0}  # and none added to the gradient
        # BEGIN SOLUTION A3.4
        b1, b2 = group["betas"]
        xp = backend.namespace_of(p)
        if not state:
            state["step"] = 0
            state["exp_avg"] = xp.zeros_like(p)
            state["exp_avg_sq"] = xp.zeros_like(p)
        state["step"] += 1
        t = state["step"]
        g = grad + group["weight_decay"] * p if group["weight_decay"] else grad
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m += (1 - b1) * (g - m)  # PyTorch's lerp: m + (1 - b1) (g - m)
        v *= b2
        v += (1 - b2) * (g * g)
        if group.get("amsgrad"):  # the running maximum of v
            vmax = state.setdefault("max_exp_avg_sq", xp.zeros_like(p))
            vmax[...] = xp.maximum(vmax, v)
            v = vmax
        step_size = group["lr"] / (1 - b1**t)
        denom = xp.sqrt(v) / math.sqrt(1 - b2**t) + group["eps"]
        p -= step_size * (m / denom)
        return p
        # END SOLUTION
