r"""Gradient clipping, in place, as PyTorch does it.

``clip_grad_norm_`` scales every gradient by $\min(1, c / (\lVert g \rVert_p + 10^{-6}))$,
where $\lVert g \rVert_p$ is the norm of all the gradients together (the norm of the
per-tensor norms) and $c$ is ``max_norm``; it returns that total norm.
``clip_grad_value_`` clamps each gradient element to $[-c, c]$.
"""

from __future__ import annotations

import math

import numpy as _np

from ...eager.dispatch import FUNCTIONS
from ...eager.grad_mode import no_grad
from ...eager.tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm"]


def _grads(parameters) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _norm(t: Tensor, p: float) -> Tensor:
    if p == math.inf:
        return t.abs().max() if t.numel() else t.new_zeros(())
    if p == 2.0:
        return (t * t).sum().sqrt()
    return (t.abs() ** p).sum() ** (1.0 / p)


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:  # fmt: skip
    """The ``norm_type``-norm of all of ``tensors`` together (as one long vector)."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if norm_type <= 0 and norm_type != math.inf:
        raise ValueError(f"clip_grad_norm_: norm_type must be positive or inf, got {norm_type}")
    if not tensors:
        return Tensor._make(_np.asarray(0.0, dtype=_np.float32))
    devices = {t._device for t in tensors}
    if len(devices) > 1:
        raise RuntimeError(f"clip_grad_norm_: the gradients are on different devices "
                           f"({sorted(map(str, devices))}); move the model to one device")
    with no_grad():  # tensor ops: tg.compile records them as any op
        norms = [_norm(t.detach(), norm_type) for t in tensors]
        total = _norm(FUNCTIONS["stack"]([n.to(norms[0].dtype) for n in norms]), norm_type)
    if error_if_nonfinite and not bool(total.isfinite()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` "
                           "is non-finite, so it cannot be clipped. To disable this error and "
                           "scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`")  # fmt: skip
    return total


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:  # fmt: skip
    """Scale the gradients of ``parameters`` in place so that their total ``norm_type``-norm
    is at most ``max_norm``; returns the total norm before clipping (a 0-d tensor)."""
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    if not grads:
        return total
    with no_grad():  # tensor ops in place: tg.compile records the clipping as any op
        coef = (float(max_norm) / (total + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))
    return total


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient element of ``parameters`` to ``[-clip_value, clip_value]``, in
    place."""
    c = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-c, c)
