"""``tg.autograd``: the names PyTorch code reaches through ``torch.autograd``.

Everything here is defined in :mod:`tinygrad_edu.eager` and most of it is also at the top
level (``tg.grad``, ``tg.Function``, ``tg.no_grad`` ...); this module only lets PyTorch
spellings such as ``torch.autograd.Function``, ``torch.autograd.grad`` and
``torch.autograd.function.once_differentiable`` run unchanged. ``gradcheck`` and
``gradgradcheck`` (:mod:`tinygrad_edu.autograd.gradcheck`) check the engine's derivatives
against finite differences; the symbolic engine's are :func:`tinygrad_edu.symbolic.gradcheck`.

>>> import tinygrad_edu as tg
>>> x = tg.tensor(2.0, requires_grad=True)
>>> tg.autograd.grad(x * x, x)[0].item()
4.0
"""

import sys as _sys

from ..eager import (
    Function,
    FunctionCtx,
    backward,
    detect_anomaly,
    enable_grad,
    function,
    grad,
    inference_mode,
    no_grad,
    set_grad_enabled,
)
from ..eager.grad_mode import set_detect_anomaly

# GradcheckError is importable from here, though not in __all__: PyTorch keeps it in
# torch.autograd.gradcheck (so does this package: tinygrad_edu.autograd.gradcheck)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401

# ``from tinygrad_edu.autograd.function import once_differentiable`` (PyTorch's import path)
_sys.modules[__name__ + ".function"] = function

__all__ = [
    "Function", "FunctionCtx", "backward", "grad", "no_grad", "enable_grad",
    "set_grad_enabled", "inference_mode", "detect_anomaly", "set_detect_anomaly", "function",
    "gradcheck", "gradgradcheck",
]  # fmt: skip
