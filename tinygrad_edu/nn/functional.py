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

import functools
import inspect
import math
import warnings

import numpy as _np

from .. import backend
from ..eager.dispatch import NN_FUNCTIONS
from ..eager.factories import arange, as_tensor, zeros
from ..eager.tensor import Tensor, apply_op
from ..ops import REGISTRY
from ..ops.surface import SURFACES
from .arguments import (
    _legacy,
    _reduce,
    _same_dtype,
    _same_shape,
    _tensor,
    _tensor_input,
    _to_dtype,
)

__all__ = [
    "relu", "sigmoid", "tanh", "softmax", "log_softmax", "leaky_relu", "gelu", "softplus",
    "linear", "bilinear", "dropout", "one_hot", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits",
]  # fmt: skip

leaky_relu = NN_FUNCTIONS["leaky_relu"]
gelu = NN_FUNCTIONS["gelu"]
softplus = NN_FUNCTIONS["softplus"]
_INT64, _UINT8 = _np.dtype("int64"), _np.dtype("uint8")  # class indices (one object each)
# the activations of issue 24 (ops/activation.py), by their generated names
_ACTIVATIONS = ("silu", "mish", "elu", "selu", "celu", "hardtanh", "relu6", "hardswish",
                "hardsigmoid", "logsigmoid", "softsign", "tanhshrink", "hardshrink",
                "softshrink", "threshold", "glu", "prelu")  # fmt: skip
globals().update({_name: NN_FUNCTIONS[_name] for _name in _ACTIVATIONS})
__all__ += list(_ACTIVATIONS)


# -- inplace=True: the activation written into its input, through Tensor._inplace --------------
def _apply_in_place(op, input, *others, **attrs):
    """The ``apply`` handed to an activation's template for ``inplace=True``: run ``op`` and
    write its result into ``input`` (the version counter goes up and a non-leaf's history is
    re-based, as for ``x.relu_()``), returning ``input`` itself."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op.name}_: argument 'input' must be a Tensor, not "
                        f"{type(input).__name__}")  # fmt: skip
    return input._inplace(op, *others, **attrs)


def _with_inplace(name):
    """``NN_FUNCTIONS[name]``, with ``inplace=True`` (by keyword or position) changing the
    input in place and returning it, as PyTorch's ``F.<name>(x, ..., inplace=True)``."""
    plain = NN_FUNCTIONS[name]
    row = next(r for r in SURFACES if name in r.nn)
    in_place = row.template(REGISTRY[row.op], _apply_in_place)
    position = list(inspect.signature(plain).parameters).index("inplace")

    @functools.wraps(plain)
    def fn(*args, **kwargs):
        inplace = args[position] if len(args) > position else kwargs.get("inplace", False)
        return (in_place if inplace else plain)(*args, **kwargs)

    return fn


for _name in ("leaky_relu", "silu", "mish", "elu", "selu", "celu", "hardtanh", "relu6",
              "hardswish"):  # fmt: skip
    globals()[_name] = _with_inplace(_name)


@functools.wraps(NN_FUNCTIONS["threshold"])
def threshold(input, threshold, value, inplace=False):
    if not inplace:
        return NN_FUNCTIONS["threshold"](input, threshold, value)
    # PyTorch's threshold_: x <= threshold becomes value (a NaN stays NaN)
    return input.masked_fill_(input <= threshold, value)


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
    r"""$y = x W^\top + b$ with ``weight`` of shape (out, in), as in PyTorch. The input, the
    weight and the bias must have one dtype (a float64 or integer input into float32 weights
    is an error, as in PyTorch: convert one of them)."""
    x = _tensor_input("linear", input)
    _same_dtype("linear", x, weight, bias)
    # BEGIN SOLUTION A3.1
    y = x.matmul(weight, trans_B=True)
    return y if bias is None else y + bias
    # END SOLUTION


# -- bilinear -------------------------------------------------------------------------------------
def bilinear(input1, input2, weight, bias=None) -> Tensor:
    r"""$y_k = x_1^\top W_k\, x_2 + b_k$ for ``weight`` (out, in1, in2): every output is a
    bilinear form of the two inputs (``input1`` (..., in1), ``input2`` (..., in2)). Computed
    as one product ``x1 @ W`` (all forms at once) and a sum against ``x2``.

    >>> import tinygrad_edu as tg
    >>> bilinear(tg.ones(1, 2), tg.ones(1, 3), tg.ones(4, 2, 3)).tolist()
    [[6.0, 6.0, 6.0, 6.0]]
    """
    x1, x2 = _tensor("bilinear", "input1", input1), _tensor("bilinear", "input2", input2)
    w = _tensor("bilinear", "weight", weight)
    if w.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional (out, in1, in2), got "
                           f"shape {tuple(w.shape)}")  # fmt: skip
    out_f, in1, in2 = w.shape
    if x1.dim() == 0 or x1.dim() != x2.dim() or tuple(x1.shape[:-1]) != tuple(x2.shape[:-1]):
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{tuple(x1.shape)} and {tuple(x2.shape)}")  # fmt: skip
    if x1.shape[-1] != in1 or x2.shape[-1] != in2:
        raise RuntimeError(f"bilinear(): input sizes {x1.shape[-1]} and {x2.shape[-1]} do not "
                           f"match the weight {tuple(w.shape)} (in1={in1}, in2={in2})")
    t = x1 @ w.permute(1, 0, 2).reshape(in1, out_f * in2)  # (..., out*in2)
    t = t.reshape(*x1.shape[:-1], out_f, in2)
    y = (t * x2.unsqueeze(-2)).sum(-1)
    if bias is not None:
        b = _tensor("bilinear", "bias", bias)
        if tuple(b.shape) != (out_f,):
            raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                               f"{tuple(b.shape)} but weight makes {out_f} outputs")
        y = y + b
    return y


def one_hot(tensor, num_classes: int = -1) -> Tensor:
    """Class indices -> int64 one-hot rows of shape ``tensor.shape + (num_classes,)``
    (``num_classes=-1``: the largest index plus one). The indices must be int64, as in
    PyTorch (a float tensor of labels is an error: convert it with ``.long()``)."""
    t = as_tensor(tensor)
    if str(t.dtype) != "int64":
        raise RuntimeError(f"one_hot is only applicable to index tensor of type LongTensor: "
                           f"got {t.dtype} indices of shape {t.shape}; convert them: "
                           "labels.long()")  # fmt: skip
    return apply_op(REGISTRY["one_hot"], t, num_classes=num_classes)


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
    dt = t.dtype  # PyTorch takes Long (and Byte) class indices (``is`` first: str() is slow)
    if dt is not _INT64 and dt is not _UINT8 and str(dt) not in ("int64", "uint8"):
        raise RuntimeError(f"{name}: expected target dtype to be Long or Byte (int64), but got "
                           f"{t.dtype} class indices of shape {t.shape}; convert them: "
                           "target.long()")  # fmt: skip
    return t


def _class_weight(name, weight, n_classes):
    """PyTorch's check of a per-class ``weight``: one value for each of the ``n_classes``."""
    shape = None if weight is None else list(as_tensor(weight).shape)
    if shape is not None and shape != [n_classes]:
        raise RuntimeError(f"{name}: weight tensor should be defined either for all "
                           f"{n_classes} classes or no classes but got weight tensor of shape: "
                           f"{shape} (give one weight per class: length {n_classes})")


def nll_loss(input: Tensor, target, weight=None, size_average=None, ignore_index: int = -100,
             reduce=None, reduction: str = "mean") -> Tensor:  # fmt: skip
    r"""Negative log-likelihood of log-probabilities ``input`` (N, C) (or (C,), or
    (N, C, d1, ...)) at the class indices ``target``: $-w_{y_n} x_{n, y_n}$, then
    ``reduction`` (``"mean"`` divides by the summed weights of the targets used; a target equal
    to ``ignore_index`` contributes nothing)."""
    x = _tensor_input("nll_loss", input)
    t = _class_targets("nll_loss", x, target)
    if x.ndim:
        _class_weight("nll_loss", weight, x.shape[1 if x.ndim >= 2 else 0])
    w = None if weight is None else as_tensor(weight)._data
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
    _class_weight("cross_entropy", weight, n_classes)
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


def _attr_array(value, like):
    """A tensor-or-array argument that gets no gradient (a loss's ``weight``), as a raw array
    of ``like``'s dtype and device."""
    return None if value is None else as_tensor(value, dtype=like.dtype, device=like.device)._data


def _float_target(name, input, target, same: bool) -> None:
    """PyTorch's RuntimeError for a target tensor of 0/1 labels that is not floating (int64
    labels; for ``binary_cross_entropy`` also a float dtype other than the input's): a BCE
    target is a probability, so it is converted by the caller, never silently here."""
    dtype = target.dtype if isinstance(target, Tensor) else None
    if dtype is None or dtype == input.dtype or (not same and backend.is_floating(dtype)):
        return
    want = input.dtype if same else "a floating dtype"
    raise RuntimeError(f"{name}: found target dtype {dtype} but expected {want} (the input is "
                       f"{input.dtype}); BCE targets are probabilities: convert them, e.g. "
                       f"target{_to_dtype(input.dtype)}")  # fmt: skip


def binary_cross_entropy(input: Tensor, target, weight=None, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:  # fmt: skip
    r"""$-w\,(y \log p + (1 - y)\log(1 - p))$ for probabilities ``input`` $p \in [0, 1]$;
    each log is clamped at $-100$, as in PyTorch, so $p = 0$ or 1 gives a finite loss, and
    the gradient is PyTorch's closed form $(p - y) / \max(p(1 - p), 10^{-12})$, finite there
    too (one op, ``BinaryCrossEntropyBackward0``)."""
    p = _tensor_input("binary_cross_entropy", input)
    _float_target("binary_cross_entropy", p, target, same=True)
    t = _same_shape("binary_cross_entropy", p, target)
    if p.numel() and (float(p._data.min()) < 0 or float(p._data.max()) > 1):
        raise ValueError("binary_cross_entropy: every input must be a probability in [0, 1]; "
                         "for logits use binary_cross_entropy_with_logits")  # fmt: skip
    return apply_op(_BCE, p, t, weight=_attr_array(weight, p),
                    reduction=_legacy(reduction, size_average, reduce))  # fmt: skip


def binary_cross_entropy_with_logits(input: Tensor, target, weight=None, size_average=None,
                                     reduce=None, reduction: str = "mean",
                                     pos_weight=None) -> Tensor:  # fmt: skip
    r"""Binary cross-entropy of $\sigma(x)$, computed stably from the logits $x$:
    $(1 - y)\,x + (1 + (w_+ - 1)\,y)\,\mathrm{softplus}(-x)$ (``pos_weight`` $w_+$)."""
    x = _tensor_input("binary_cross_entropy_with_logits", input)
    _float_target("binary_cross_entropy_with_logits", x, target, same=False)
    t = _same_shape("binary_cross_entropy_with_logits", x, target)
    attrs = {} if pos_weight is None else {"pos_weight": _attr_array(pos_weight, x)}
    return apply_op(_BCE_LOGITS, x, t, weight=_attr_array(weight, x),
                    reduction=_legacy(reduction, size_average, reduce), **attrs)  # fmt: skip


_BCE, _BCE_LOGITS = REGISTRY["binary_cross_entropy"], REGISTRY["binary_cross_entropy_with_logits"]


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
# the layers composed of those ops (in ops/conv.py, pooling.py, normalization.py, dropout.py,
# upsampling.py): conv1d, conv_transpose2d, unfold, fold, the adaptive pools, group_norm,
# instance_norm, rms_norm, dropout2d, interpolate ...
from . import functional_layers as _layers  # noqa: E402

_MORE_LAYERS = _layers.__all__[_layers.__all__.index("LAYERS") + 1 :]
globals().update({_name: getattr(_layers, _name) for _name in _MORE_LAYERS})
__all__ += _MORE_LAYERS


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated in PyTorch (with its warning): ``interpolate``."""
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=2)  # fmt: skip
    return interpolate(input, size, scale_factor, mode, align_corners)  # noqa: F821


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated in PyTorch (with its warning): ``interpolate(..., mode="nearest")``."""
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use "
                  "nn.functional.interpolate instead.", stacklevel=2)  # fmt: skip
    return interpolate(input, size, scale_factor, mode="nearest")  # noqa: F821


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated in PyTorch (with its warning): ``interpolate(..., mode="bilinear",
    align_corners=True)``."""
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use "
                  "nn.functional.interpolate instead.", stacklevel=2)  # fmt: skip
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)  # noqa: F821


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    r"""$e^{-x_i}/\sum_j e^{-x_j}$ along ``dim``: ``softmax(-input)``.

    >>> import tinygrad_edu as tg
    >>> softmin(tg.tensor([0.0, 0.0]), dim=0).tolist()
    [0.5, 0.5]
    """
    return softmax(-input, dim, dtype=dtype)


__all__ += ["upsample", "upsample_nearest", "upsample_bilinear", "softmin"]


# -- attention ------------------------------------------------------------------------------------
# Written with ordinary ops, so the graph can be drawn and the gradients come from the op table
# (nn.MultiheadAttention and the transformer layers in attention.py call these).
def _causal(L: int, S: int, device) -> Tensor:
    """The (L, S) bool mask that lets query i see keys 0..i (``ones(L, S).tril()``)."""
    return arange(S, device=device).reshape(1, S) <= arange(L, device=device).reshape(L, 1)


def _repeat_heads(t: Tensor, r: int) -> Tensor:
    """Each head of ``t`` (axis -3) repeated ``r`` times in place (``repeat_interleave``)."""
    if r == 1:
        return t
    *lead, h, s, e = t.shape
    return t.unsqueeze(-3).expand(*lead, h, r, s, e).reshape(*lead, h * r, s, e)


def _is_bool(t) -> bool:
    return isinstance(t, Tensor) and str(t.dtype).endswith("bool")


def _safe_softmax(scores: Tensor, dim: int = -1) -> Tensor:
    """softmax that gives 0 (not NaN) on a row whose every entry is -inf, as PyTorch's
    attention kernels do; its gradient there is 0 too."""
    dead = (scores == float("-inf")).all(dim=dim, keepdim=True)
    if not bool(dead.any()):
        return softmax(scores, dim=dim)
    return softmax(scores.masked_fill(dead, 0.0), dim=dim).masked_fill(dead, 0.0)


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask=None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale=None,
                                 enable_gqa: bool = False) -> Tensor:  # fmt: skip
    r"""$\mathrm{softmax}(QK^\top \cdot \text{scale} + B)\,V$ over the last two axes
    (``(..., L, E)`` queries, ``(..., S, E)`` keys, ``(..., S, Ev)`` values), as
    ``torch.nn.functional.scaled_dot_product_attention``.

    ``attn_mask``: a bool tensor (``True`` = may attend) or a float tensor of the query's
    dtype added to the scores, broadcast to ``(..., L, S)`` (an integer 0/1 mask is an error,
    as in PyTorch: say which it means, ``mask.bool()`` or ``mask.float()``).
    ``is_causal=True`` lets query ``i`` see keys ``0..i`` only (and cannot be combined with
    ``attn_mask``). ``scale`` defaults to $1/\sqrt{E}$. ``dropout_p`` drops attention weights
    (always, as in PyTorch: pass 0 in evaluation)."""
    name = "scaled_dot_product_attention"
    for what, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: {what} must be a Tensor, not {type(t).__name__}")
        if t.dim() < 2:
            raise RuntimeError(f"{name}: {what} needs at least 2 dims (..., L, E), got shape "
                               f"{tuple(t.shape)}")  # fmt: skip
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(f"{name}: expected query, key, and value to have the same dtype, but "
                           f"got query {query.dtype}, key {key.dtype} and value {value.dtype}; "
                           f"convert them, e.g. key{_to_dtype(query.dtype)}")  # fmt: skip
    if attn_mask is not None and not _is_bool(attn_mask) \
            and getattr(attn_mask, "dtype", query.dtype) != query.dtype:
        raise RuntimeError(
            f"{name}: expected attn_mask dtype to be bool or float or to match query dtype, but "
            f"got attn_mask {attn_mask.dtype} and query {query.dtype}; give a bool mask (True "
            f"= may attend: mask.bool()) or an additive float mask (mask{_to_dtype(query.dtype)})"
        )
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(
            f"{name}: query {tuple(query.shape)}, key {tuple(key.shape)} and value "
            f"{tuple(value.shape)} do not fit: query and key need the same last size, key and "
            "value the same length"
        )
    if enable_gqa:
        hq, hk = query.shape[-3], key.shape[-3]
        if hq % hk:
            raise RuntimeError(f"{name}: {hq} query heads is not a multiple of {hk} key heads")
        key, value = _repeat_heads(key, hq // hk), _repeat_heads(value, hq // hk)
    if is_causal and attn_mask is not None:
        raise RuntimeError(f"{name}: _scaled_dot_product_attention: Explicit attn_mask should "
                           "not be set when is_causal=True")  # fmt: skip
    L, S = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    scores = (query @ key.transpose(-2, -1)) * scale
    if is_causal:
        attn_mask = _causal(L, S, query.device)
    if attn_mask is not None:
        if _is_bool(attn_mask):
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
    weights = _safe_softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return weights @ value


def _additive_mask(mask, dtype, what: str):
    """A bool mask (``True`` = may not attend: ``MultiheadAttention``'s convention) as an
    additive float mask of -inf and 0; a float mask as it is."""
    if mask is None:
        return None
    if not isinstance(mask, Tensor):
        raise TypeError(f"multi_head_attention_forward: {what} must be a Tensor, not "
                        f"{type(mask).__name__}")  # fmt: skip
    if _is_bool(mask):
        return zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, -math.inf)
    if not str(mask.dtype).startswith("float"):
        raise AssertionError(f"only bool and floating types of {what} are supported, got "
                             f"{mask.dtype} (True/bool = may not attend: {what}.bool(); or an "
                             f"additive float mask: {what}{_to_dtype(dtype)})")  # fmt: skip
    if mask.dtype != dtype:
        raise RuntimeError(f"multi_head_attention_forward: the float {what} is {mask.dtype} but "
                           f"the input is {dtype}; they must have the same dtype: convert it: "
                           f"{what}{_to_dtype(dtype)}")  # fmt: skip
    return mask


def _mha_project(query, key, value, weights, b, separate: bool):
    """Multi-head attention's input projections: ``q``, ``k``, ``v`` (not yet split into
    heads). ``weights`` is ``(in_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight)``;
    ``in_proj_weight`` stacks the three (3E, E), ``b`` their biases (3E,)."""
    in_proj_weight, *separate_weights = weights
    E = query.shape[-1]
    bq, bk, bv = (None, None, None) if b is None else (b[:E], b[E:2 * E], b[2 * E:])
    if not separate and query is key and key is value:
        return linear(query, in_proj_weight, b).chunk(3, -1)  # self-attention: one product
    if separate:
        wq, wk, wv = separate_weights
    else:
        w = in_proj_weight
        wq, wk, wv = w[:E], w[E:2 * E], w[2 * E:]
    return linear(query, wq, bq), linear(key, wk, bk), linear(value, wv, bv)


def _mha_mask(attn_mask, key_padding_mask, dtype, sizes):
    """The additive mask (N*H, L, S) or (1, L, S) of ``attn_mask`` plus ``key_padding_mask``
    (N, S), each checked against ``sizes`` ``(N, H, L, S)``; None when neither is given."""
    N, H, L, S = sizes
    mask = _additive_mask(attn_mask, dtype, "attn_mask")
    if mask is not None:
        want = (L, S) if mask.dim() == 2 else (N * H, L, S)
        if tuple(mask.shape) != want:
            raise RuntimeError(f"The shape of the {mask.dim()}D attn_mask is "
                               f"{tuple(mask.shape)}, but should be {want}.")  # fmt: skip
        mask = mask.unsqueeze(0) if mask.dim() == 2 else mask
    pad = _additive_mask(key_padding_mask, dtype, "key_padding_mask")
    if pad is not None:
        if tuple(pad.shape) != (N, S):
            raise AssertionError(f"expecting key_padding_mask shape of {(N, S)}, but got "
                                 f"{tuple(pad.shape)}")  # fmt: skip
        pad = pad.reshape(N, 1, 1, S).expand(N, H, 1, S).reshape(N * H, 1, S)
        mask = pad if mask is None else mask + pad
    return mask


def multi_head_attention_forward(query, key, value, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v,
                                 add_zero_attn: bool, dropout_p: float, out_proj_weight,
                                 out_proj_bias, training: bool = True, key_padding_mask=None,
                                 need_weights: bool = True, attn_mask=None,
                                 use_separate_proj_weight: bool = False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights: bool = True,
                                 is_causal: bool = False):  # fmt: skip
    r"""PyTorch's multi-head attention on ``(L, N, E)`` query and ``(S, N, E)`` key/value
    (or unbatched ``(L, E)``): project, split into heads, attend, join, project out.
    Returns ``(output, weights)`` (``weights`` ``None`` unless ``need_weights``)."""
    name = "multi_head_attention_forward"
    if bias_k is not None or bias_v is not None or add_zero_attn or static_k is not None \
            or static_v is not None:
        raise NotImplementedError(f"{name}: bias_k/bias_v, add_zero_attn and static_k/static_v "
                                  "are not supported")  # fmt: skip
    batched = query.dim() == 3
    if not batched:
        query, key, value = (t.unsqueeze(1) for t in (query, key, value))
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    L, N, E = query.shape
    S = key.shape[0]
    if E != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {E}")  # fmt: skip
    if key.shape[:2] != value.shape[:2] or key.shape[1] != N:
        raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape "
                             f"{tuple(value.shape)} or the batch of query {tuple(query.shape)}")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")  # fmt: skip
    H = num_heads
    hd = E // H
    proj_weights = (in_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight)
    q, k, v = _mha_project(query, key, value, proj_weights, in_proj_bias,
                           use_separate_proj_weight)
    q = q.reshape(L, N * H, hd).transpose(0, 1)  # (N*H, L, hd)
    k = k.reshape(S, N * H, hd).transpose(0, 1)
    v = v.reshape(S, N * H, hd).transpose(0, 1)
    mask = _mha_mask(attn_mask, key_padding_mask, q.dtype, (N, H, L, S))
    scores = (q * (1.0 / math.sqrt(hd))) @ k.transpose(-2, -1)
    scores = scores if mask is None else scores + mask
    # PyTorch: with need_weights a plain softmax (a query with every key masked gets NaN);
    # without, its attention kernel (that query gets zeros). Both are followed here.
    weights = softmax(scores, -1) if need_weights else _safe_softmax(scores, -1)
    if dropout_p > 0.0 and training:
        weights = dropout(weights, dropout_p, True)
    out = (weights @ v).transpose(0, 1).reshape(L * N, E)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(L, N, E)
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(N, H, L, S)
    if average_attn_weights:
        weights = weights.mean(dim=1)
    return out, (weights if batched else weights.squeeze(0))


__all__ += ["scaled_dot_product_attention", "multi_head_attention_forward"]
# distances and more losses (issue 24): composites of ops in their own module
from . import functional_losses as _more  # noqa: E402

globals().update({_name: getattr(_more, _name) for _name in _more.__all__})
__all__ += list(_more.__all__)
# the composites by concept: conv3d; the 3-D pools and max_unpool; embedding_bag; affine_grid
# and grid_sample; ctc_loss
from . import functional_conv as _conv  # noqa: E402
from . import functional_embedding as _embedding  # noqa: E402
from . import functional_pooling as _pooling  # noqa: E402
from . import functional_vision as _vision  # noqa: E402
from .ctc import ctc_loss  # noqa: E402

for _part in (_conv, _pooling, _embedding, _vision):
    globals().update({_name: getattr(_part, _name) for _name in _part.__all__})
    __all__ += list(_part.__all__)
__all__ += ["ctc_loss"]
