"""``tg.autograd``: the names PyTorch code reaches through ``torch.autograd``.

Everything here is defined in :mod:`tinygrad_edu.eager` and is also at the top level
(``tg.grad``, ``tg.Function``, ``tg.no_grad`` ...); this module only lets PyTorch spellings
such as ``torch.autograd.Function`` and ``torch.autograd.grad`` run unchanged.

>>> import tinygrad_edu as tg
>>> x = tg.tensor(2.0, requires_grad=True)
>>> tg.autograd.grad(x * x, x)[0].item()
4.0
"""

from .eager import (
    Function,
    FunctionCtx,
    backward,
    detect_anomaly,
    enable_grad,
    grad,
    inference_mode,
    no_grad,
    set_grad_enabled,
)

__all__ = [
    "Function", "FunctionCtx", "backward", "grad", "no_grad", "enable_grad",
    "set_grad_enabled", "inference_mode", "detect_anomaly",
]  # fmt: skip
