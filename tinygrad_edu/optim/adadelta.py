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

import numpy as _np

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
        if _in_place(xp, p, grad, v, u):  # NOTE [Adadelta in two buffers]
            a, delta = _np.empty_like(p), _np.empty_like(p)  # (0-d ones stay arrays)
            _np.multiply(grad, grad, out=a)
            a *= 1 - rho
            v *= rho
            v += a
            _np.add(u, eps, out=delta)
            _np.sqrt(delta, out=delta)
            _np.add(v, eps, out=a)
            _np.sqrt(a, out=a)
            delta /= a
            delta *= grad
            u *= rho
            _np.multiply(delta, delta, out=a)
            a *= 1 - rho
            u += a
            delta *= group["lr"]
            p -= delta
            return p
        v *= rho
        v += (1 - rho) * (grad * grad)
        delta = xp.sqrt(u + eps) / xp.sqrt(v + eps) * grad
        u *= rho
        u += (1 - rho) * (delta * delta)
        p -= group["lr"] * delta
        return p


# NOTE [Adadelta in two buffers]
# On numpy float32 or float64 arrays (all four of one dtype) the update writes its intermediates
# into two arrays (``out=`` and in-place operators) instead of a new array per operation: the
# same operations on the same values in the same order (``c * a`` and ``a *= c`` are one
# product, IEEE multiplication being commutative), so the same bits
# (tests/optim/test_adadelta_in_place.py compares them with the expressions above); a large
# layer's update (mnist's 9216 x 128 weight) then takes two new arrays instead of nine. Anything
# else (other dtypes, mixed ones, other namespaces) takes the expressions.
_FLOATS = (_np.dtype(_np.float32), _np.dtype(_np.float64))


def _in_place(xp, p, grad, v, u) -> bool:
    if xp is not _np:
        return False
    arrays = (p, grad, v, u)
    if not all(isinstance(a, _np.ndarray) for a in arrays):
        return False
    dt = p.dtype
    return dt in _FLOATS and all(a.dtype == dt and a.shape == p.shape for a in arrays)
