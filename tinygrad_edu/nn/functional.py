r"""Functions for networks, on eager tensors, with PyTorch's names and arguments:
activations, losses, ``linear``, ``one_hot`` (and, in the last section, the layer functions:
convolution, pooling, padding, normalisation, ``embedding``, ``dropout``, generated in
:mod:`~tinygrad_edu.nn.functional_layers` from the declarations both engines share).

The activations ``leaky_relu``, ``gelu`` and ``softplus`` are ops of the library, declared
with their names in ``ops/activation.py``; the losses are compositions of ops
(``cross_entropy`` is ``log_softmax`` then ``nll_loss``, as in PyTorch), so their
derivatives, to any order, come from the op library.

>>> import tinygrad_edu as tg
>>> import tinygrad_edu.nn.functional as F
>>> logits = tg.tensor([[2.0, 0.0, -1.0]], requires_grad=True)
>>> loss = F.cross_entropy(logits, tg.tensor([0]))
>>> round(loss.item(), 4), loss.grad_fn
(0.1698, <NllLossBackward0 #...>)
"""

from __future__ import annotations

import math
import warnings

from .. import backend
from ..eager.dispatch import NN_FUNCTIONS
from ..eager.factories import as_tensor
from ..eager.tensor import Tensor, apply_op
from ..ops import REGISTRY

__all__ = [
    "relu", "sigmoid", "tanh", "softmax", "log_softmax", "leaky_relu", "gelu", "softplus",
    "linear", "dropout", "one_hot", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits",
]  # fmt: skip

leaky_relu = NN_FUNCTIONS["leaky_relu"]
gelu = NN_FUNCTIONS["gelu"]
softplus = NN_FUNCTIONS["softplus"]


def _tensor_input(name: str, x) -> Tensor:
    if isinstance(x, Tensor):
        return x
    raise TypeError(
        f"{name}: input must be a Tensor, got {type(x).__module__}.{type(x).__name__}; wrap it "
        "first: tg.tensor(x) (a copy) or tg.from_numpy(x) (shared memory)"
    )


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    r"""$\max(x, 0)$ elementwise."""
    return input.relu_() if inplace else input.relu()


def sigmoid(input: Tensor) -> Tensor:
    r"""$1/(1+e^{-x})$ elementwise."""
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    r"""$\tanh x$ elementwise."""
    return input.tanh()


def _softmax_dim(name, input, dim):
    if dim is not None:
        return dim
    warnings.warn(f"{name}: give dim (PyTorch's implicit choice of dim is deprecated, and "
                  "follows it here: 0 for 0-, 1- and 3-dim inputs, else 1)", UserWarning,
                  stacklevel=3)  # fmt: skip
    return 0 if input.ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    r"""$e^{x_i}/\sum_j e^{x_j}$ along ``dim``."""
    input = input if dtype is None else input.to(dtype)
    return input.softmax(_softmax_dim("softmax", input, dim))


def log_softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    r"""$x_i - \log\sum_j e^{x_j}$ along ``dim``."""
    input = input if dtype is None else input.to(dtype)
    return input.log_softmax(_softmax_dim("log_softmax", input, dim))


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    r"""$y = x W^\top + b$ with ``weight`` of shape (out, in), as in PyTorch."""
    x = _tensor_input("linear", input)
    # BEGIN SOLUTION A3.1
    y = x.matmul(weight, trans_B=True)
    return y if bias is None else y + bias
    # END SOLUTION


def one_hot(tensor, num_classes: int = -1) -> Tensor:
    """Class indices -> int64 one-hot rows of shape ``tensor.shape + (num_classes,)``
    (``num_classes=-1``: the largest index plus one)."""
    return apply_op(REGISTRY["one_hot"], as_tensor(tensor), num_classes=num_classes)


def _reduce(name, loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{name}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _legacy(reduction, size_average, reduce):
    """PyTorch's deprecated ``size_average``/``reduce`` flags, as a ``reduction``."""
    if size_average is None and reduce is None:
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        return reduction
    if reduce is False:
        return "none"
    return "sum" if size_average is False else "mean"


def _class_targets(name, input, target):
    t = as_tensor(target)
    c = 1 if input.ndim >= 2 else 0
    want = input.shape[:c] + input.shape[c + 1 :]
    if t.shape != want or backend.is_floating(t.dtype):
        raise ValueError(
            f"{name}: input of shape {input.shape} needs a target of class indices (integers) "
            f"of shape {want}, or of class probabilities of shape {input.shape}; got "
            f"{t.dtype} of shape {t.shape}"
        )
    return t


def nll_loss(input: Tensor, target, weight=None, size_average=None, ignore_index: int = -100,
             reduce=None, reduction: str = "mean") -> Tensor:  # fmt: skip
    r"""Negative log-likelihood of log-probabilities ``input`` (N, C) (or (C,), or
    (N, C, d1, ...)) at the class indices ``target``: $-w_{y_n} x_{n, y_n}$, then
    ``reduction`` (``"mean"`` divides by the summed weights of the targets used; a target equal
    to ``ignore_index`` contributes nothing)."""
    x = _tensor_input("nll_loss", input)
    t = _class_targets("nll_loss", x, target)
    w = None if weight is None else as_tensor(weight).data
    return apply_op(REGISTRY["nll_loss"], x, t, weight=w, ignore_index=ignore_index,
                    reduction=_legacy(reduction, size_average, reduce))  # fmt: skip


def cross_entropy(input: Tensor, target, weight=None, size_average=None,
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:  # fmt: skip
    r"""Softmax cross-entropy: ``nll_loss(log_softmax(input, 1), target)`` for class indices
    (classes on dim 1, or dim 0 for one sample), or $-\sum_c y_c \log\mathrm{softmax}(x)_c$
    for class probabilities of the input's shape. Stable for logits of any size.

    ``label_smoothing`` $\varepsilon$ mixes the targets with the uniform distribution:
    $(1-\varepsilon)\,y + \varepsilon/C$. The mean of an empty batch is nan, as in PyTorch.
    """
    x = _tensor_input("cross_entropy", input)
    reduction = _legacy(reduction, size_average, reduce)
    c = 1 if x.ndim >= 2 else 0
    n_classes = x.shape[c]
    logp = x.log_softmax(c)
    w = None if weight is None else as_tensor(weight, dtype=x.dtype)
    w_c = None if w is None else w.reshape((n_classes,) + (1,) * (x.ndim - c - 1))
    t = as_tensor(target)
    if t.shape == x.shape and backend.is_floating(t.dtype):  # class probabilities
        if label_smoothing:
            t = t * (1 - label_smoothing) + label_smoothing / n_classes
        per = logp * t if w_c is None else logp * t * w_c
        return _reduce("cross_entropy", -per.sum(c), reduction)
    t = _class_targets("cross_entropy", x, t)
    nll = nll_loss(logp, t, weight=w, ignore_index=ignore_index, reduction=reduction)
    if not label_smoothing:
        return nll
    # PyTorch's label smoothing for class indices: the uniform part is the mean of -logp over
    # the classes, with the same weights and the same ignored targets
    keep = (t != ignore_index).unsqueeze(c)
    smooth = -(logp if w_c is None else logp * w_c).masked_fill(keep.logical_not(), 0.0).sum(c)
    if reduction == "mean":
        denom = keep.sum() if w is None else (w[t.masked_fill(t == ignore_index, 0)]
                                              * (t != ignore_index)).sum()  # fmt: skip
        smooth = smooth.sum() / denom
    else:
        smooth = _reduce("cross_entropy", smooth, reduction)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / n_classes)


def _same_shape(name, input, target):
    t = as_tensor(target, dtype=input.dtype)
    if t.shape != input.shape:
        raise ValueError(
            f"{name}: input has shape {input.shape} but target has {t.shape}; they must match "
            "(PyTorch would broadcast them with a warning; here it is an error)"
        )
    return t


def mse_loss(input: Tensor, target, size_average=None, reduce=None,
             reduction: str = "mean") -> Tensor:  # fmt: skip
    r"""Mean squared error $\frac1n\sum (x - y)^2$ (or the sum, or each, by ``reduction``)."""
    input = _tensor_input("mse_loss", input)
    target = _same_shape("mse_loss", input, target)
    reduction = _legacy(reduction, size_average, reduce)
    if reduction != "mean":
        d = input - target
        return _reduce("mse_loss", d * d, reduction)
    # BEGIN SOLUTION A3.2
    d = input - target
    return (d * d).mean()
    # END SOLUTION


def l1_loss(input: Tensor, target, size_average=None, reduce=None,
            reduction: str = "mean") -> Tensor:  # fmt: skip
    r"""Mean absolute error $\frac1n\sum |x - y|$."""
    input = _tensor_input("l1_loss", input)
    target = _same_shape("l1_loss", input, target)
    return _reduce("l1_loss", (input - target).abs(), _legacy(reduction, size_average, reduce))


def binary_cross_entropy(input: Tensor, target, weight=None, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:  # fmt: skip
    r"""$-w\,(y \log p + (1 - y)\log(1 - p))$ for probabilities ``input`` $p \in [0, 1]$;
    each log is clamped at $-100$, as in PyTorch, so $p = 0$ or 1 gives a finite loss."""
    p = _tensor_input("binary_cross_entropy", input)
    t = _same_shape("binary_cross_entropy", p, target)
    if p.numel() and (float(p.data.min()) < 0 or float(p.data.max()) > 1):
        raise ValueError("binary_cross_entropy: every input must be a probability in [0, 1]; "
                         "for logits use binary_cross_entropy_with_logits")  # fmt: skip
    loss = -(t * p.log().clamp(min=-100) + (1 - t) * (1 - p).log().clamp(min=-100))
    if weight is not None:
        loss = loss * as_tensor(weight, dtype=p.dtype)
    return _reduce("binary_cross_entropy", loss, _legacy(reduction, size_average, reduce))


def binary_cross_entropy_with_logits(input: Tensor, target, weight=None, size_average=None,
                                     reduce=None, reduction: str = "mean",
                                     pos_weight=None) -> Tensor:  # fmt: skip
    r"""Binary cross-entropy of $\sigma(x)$, computed stably from the logits $x$:
    $(1 - y)\,x + (1 + (w_+ - 1)\,y)\,\mathrm{softplus}(-x)$ (``pos_weight`` $w_+$)."""
    x = _tensor_input("binary_cross_entropy_with_logits", input)
    t = _same_shape("binary_cross_entropy_with_logits", x, target)
    soft = softplus(-x, threshold=math.inf)
    if pos_weight is not None:
        soft = soft * ((as_tensor(pos_weight, dtype=x.dtype) - 1) * t + 1)
    loss = (1 - t) * x + soft
    if weight is not None:
        loss = loss * as_tensor(weight, dtype=x.dtype)
    return _reduce("binary_cross_entropy_with_logits", loss,
                   _legacy(reduction, size_average, reduce))  # fmt: skip


# -- layers: convolution, pooling, padding, normalisation, embedding, dropout ---------------------
# (generated in functional_layers.py from one declaration each, shared with the symbolic engine;
# re-exported here so that `import tinygrad_edu.nn.functional as F` offers PyTorch's whole set)
from .functional_layers import (  # noqa: E402
    adaptive_avg_pool2d,
    avg_pool2d,
    batch_norm,
    conv2d,
    dropout,
    embedding,
    layer_norm,
    max_pool2d,
    pad,
)

__all__ += [
    "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "pad", "batch_norm",
    "layer_norm", "embedding",
]  # fmt: skip
