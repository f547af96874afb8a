r"""AdamW: Adam with *decoupled* weight decay (Loshchilov & Hutter).

Adam's ``weight_decay`` adds $\lambda p$ to the gradient, so the decay is scaled by Adam's
per-parameter step sizes. AdamW shrinks the weights directly before Adam's step instead:

$$p \leftarrow p\,(1 - \eta\lambda), \qquad \text{then Adam's update with } \lambda = 0.$$

As in PyTorch, AdamW is ``Adam(..., decoupled_weight_decay=True)`` with a default
``weight_decay`` of 0.01 (its groups hold ``decoupled_weight_decay: True``).

>>> import tinygrad_edu as tg
>>> w = tg.nn.Parameter([1.0, -1.0])
>>> opt = tg.optim.AdamW([w], lr=0.1, weight_decay=0.5)
>>> (w * 0).sum().backward()   # a zero gradient: only the decay moves w
>>> opt.step()
>>> w
Parameter containing:
tensor([ 0.95, -0.95], requires_grad=True)
"""

from __future__ import annotations

from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """AdamW (see the module docstring). Arguments as :class:`Adam`'s, but ``weight_decay``
    (default 0.01, PyTorch's) is decoupled from the gradient."""

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False):  # fmt: skip
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad, maximize=maximize,
                         decoupled_weight_decay=True)  # fmt: skip
