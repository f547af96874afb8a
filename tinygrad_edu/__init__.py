"""tinygrad_edu: an educational autograd library.

Two engines over one op library: the eager engine (backward ops are the nodes, PyTorch's
design) is the top-level API; the symbolic engine (tensors are the nodes, ops the edges,
CSE599W's design) lives in :mod:`tinygrad_edu.symbolic`.

>>> import tinygrad_edu as tg
>>> x = tg.tensor([1.0, 2.0], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad
tensor([2., 4.])
"""

from . import eager
from .eager import (
    Function,
    Tensor,
    arange,
    detect_anomaly,
    enable_grad,
    eye,
    from_dlpack,
    full,
    full_like,
    grad,
    is_grad_enabled,
    manual_seed,
    no_grad,
    ones,
    ones_like,
    rand,
    rand_like,
    randn,
    randn_like,
    set_grad_enabled,
    tensor,
    zeros,
    zeros_like,
)
from .eager.functional import (
    broadcast_to,
    exp,
    log,
    matmul,
    maximum,
    relu,
    sigmoid,
    softmax_cross_entropy,
    sum_to,
    tanh,
    where,
)
from .ops import ShapeError

__version__ = "0.1.0"

__all__ = [
    "Tensor", "tensor", "grad", "Function", "no_grad", "enable_grad", "set_grad_enabled",
    "is_grad_enabled", "detect_anomaly", "zeros", "ones", "full", "randn", "rand", "arange",
    "eye", "zeros_like", "ones_like", "full_like", "randn_like", "rand_like", "manual_seed",
    "exp", "log", "tanh", "sigmoid", "relu", "matmul", "maximum", "where", "sum_to",
    "broadcast_to", "softmax_cross_entropy", "ShapeError", "eager", "nn", "symbolic", "optim",
    "from_dlpack",
]  # fmt: skip


def __getattr__(name):
    # subpackages load on first use: `import tinygrad_edu as tg; tg.nn.Linear(...)`
    if name in ("nn", "symbolic", "optim", "viz", "data", "grading"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'tinygrad_edu' has no attribute {name!r}")
