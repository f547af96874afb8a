r"""Functions for networks, on eager tensors: activations, losses, ``linear``, ``dropout``.

>>> import tinygrad_edu as tg
>>> import tinygrad_edu.nn.functional as F
>>> logits = tg.tensor([[2.0, 0.0, -1.0]], requires_grad=True)
>>> round(F.cross_entropy(logits, tg.tensor([0], dtype="int64")).item(), 4)
0.1698
"""

from __future__ import annotations

from .. import backend
from ..eager.factories import generator
from ..eager.grad_mode import no_grad
from ..eager.tensor import Tensor, apply_op
from ..ops import REGISTRY

__all__ = [
    "relu", "sigmoid", "tanh", "softmax", "log_softmax", "linear", "dropout",
    "cross_entropy", "mse_loss", "one_hot",
]  # fmt: skip


def relu(x: Tensor) -> Tensor:
    return x.relu()


def sigmoid(x: Tensor) -> Tensor:
    return x.sigmoid()


def tanh(x: Tensor) -> Tensor:
    return x.tanh()


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    return x.softmax(axis)


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    return x.log_softmax(axis)


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    r"""$y = x W^\top + b$ with ``weight`` of shape (out, in), as in PyTorch."""
    # BEGIN SOLUTION A3.1
    y = x.matmul(weight, trans_B=True)
    return y if bias is None else y + bias
    # END SOLUTION


def dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``."""
    if not training or p == 0:
        return x
    if not 0 <= p < 1:
        raise ValueError(f"dropout: p must be in [0, 1), got {p}")
    keep = generator().random(x.shape) >= p
    mask = Tensor((keep / (1 - p)).astype(str(x.dtype)), device=x.device)
    return x * mask


def one_hot(target, num_classes: int, dtype="float32", like: Tensor | None = None):
    """Integer class indices -> a one-hot tensor of shape ``target.shape + (num_classes,)``."""
    t = target if isinstance(target, Tensor) else Tensor(target)
    xp = backend.namespace_of(t.data)
    idx = xp.astype(t.data, xp.int64)
    lo, hi = (int(xp.min(idx)), int(xp.max(idx))) if t.numel() else (0, 0)
    if lo < 0 or hi >= num_classes:
        raise ValueError(
            f"one_hot: target holds class {hi if hi >= num_classes else lo}, but there are "
            f"{num_classes} classes (0..{num_classes - 1})"
        )
    classes = xp.arange(num_classes)
    dt = getattr(xp, dtype) if isinstance(dtype, str) else dtype
    return Tensor._make(xp.astype(idx[..., None] == classes, dt), device=t._device)


def cross_entropy(logits: Tensor, target) -> Tensor:
    r"""Softmax cross-entropy, the mean over the batch.

    ``target`` holds integer class indices of shape (N,) (or probabilities of the logits'
    shape). Stable for logits of any size: $\log\sum e^{x}$ is taken after subtracting the max.
    """
    t = target if isinstance(target, Tensor) else Tensor(target)
    if t.shape == logits.shape and backend.is_floating(t.dtype):
        labels = t
    else:
        if t.shape != logits.shape[:-1]:
            raise ValueError(
                f"cross_entropy: logits have shape {logits.shape}, so target must hold class "
                f"indices of shape {logits.shape[:-1]} (or probabilities of shape "
                f"{logits.shape}); got {t.shape}"
            )
        with no_grad():
            labels = one_hot(t, logits.shape[-1], dtype=logits.dtype)
    return apply_op(REGISTRY["softmax_cross_entropy"], logits, labels)


def mse_loss(input: Tensor, target) -> Tensor:
    r"""Mean squared error $\frac1n\sum (x - y)^2$."""
    if isinstance(target, Tensor) and target.shape != input.shape:
        raise ValueError(
            f"mse_loss: input has shape {input.shape} but target has {target.shape}; they "
            "must match"
        )
    # BEGIN SOLUTION A3.2
    d = input - target
    return (d * d).mean()
    # END SOLUTION


# -- layers: convolution, pooling, padding, normalisation, embedding ------------------------------
# (defined in functional_layers.py, one thin function over one op each; re-exported here so
# that `import tinygrad_edu.nn.functional as F` offers PyTorch's whole set)
from .functional_layers import (  # noqa: E402
    adaptive_avg_pool2d,
    avg_pool2d,
    batch_norm,
    conv2d,
    embedding,
    layer_norm,
    max_pool2d,
    pad,
)

__all__ += [
    "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "pad", "batch_norm",
    "layer_norm", "embedding",
]  # fmt: skip
