r"""Layer functions that build symbolic nodes: ``conv2d``, ``max_pool2d``, ``avg_pool2d``,
``adaptive_avg_pool2d``, ``pad``, ``batch_norm``, ``layer_norm``, ``embedding``, ``dropout``.

They are generated from the same declarations as ``tinygrad_edu.nn.functional``'s (one beside
each op, see :mod:`tinygrad_edu.ops.layer_surface`), so they take PyTorch's arguments, in
PyTorch's order, in both engines; here they build the ops instead of running them, and
:func:`~tinygrad_edu.symbolic.gradients` differentiates them (to any order) like every op.

>>> import numpy as np
>>> from tinygrad_edu.symbolic import Executor, Variable, gradients
>>> from tinygrad_edu.symbolic import conv2d, max_pool2d
>>> x = Variable("x", shape=(2, 1, 6, 6))
>>> w = Variable("w", shape=(4, 1, 3, 3))
>>> y = max_pool2d(conv2d(x, w, padding=1).relu(), 2)
>>> y.shape
(2, 4, 3, 3)
>>> (dw,) = gradients(y.sum(), [w])
>>> dw.shape
(4, 1, 3, 3)

A graph has no side effects, so what PyTorch's functions change in place cannot be done
here, and says so: ``batch_norm`` in training takes ``None`` for the running statistics (build
their update as nodes, as the CNN of ``tinygrad-edu demo`` does), ``embedding`` takes no
``max_norm``, ``dropout`` no ``inplace``. ``dropout``'s mask is a ``uniform_random`` node, drawn
afresh at every run.

Until this release the symbolic ``batch_norm`` took ``(x, weight, bias, running_mean,
running_var, training=True)`` and the first arguments were named ``x``, ``w``, ``b``,
``indices``: a call in the old order or with the old names gets an error naming the new ones,
and for this release a ``batch_norm`` call must give ``training=`` (see the changelog).
"""

from __future__ import annotations

import functools
import inspect

import numpy as _np  # Python lists of indices -> integer arrays (no math)

from ..ops.layer_surface import Engine, generate_layers
from ..ops.surface import shape_of
from .tensor_node import Node, apply_op, constant

__all__ = [
    "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "pad", "batch_norm",
    "layer_norm", "embedding", "dropout", "ENGINE", "LAYERS",
]  # fmt: skip


def _value(name: str, what: str, x) -> Node:
    if isinstance(x, Node):
        return x
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return constant(x)
    raise TypeError(f"{name}: {what} must be a symbolic Node or an array, got {type(x).__name__}")


def _dropout_mask(x: Node, p: float) -> Node:
    dtype = x.dtype or "float32"
    u = apply_op("uniform_random", shape=shape_of("dropout", x), low=0.0, high=1.0, seed=None,
                 dtype=dtype)  # fmt: skip
    keep = apply_op("astype", apply_op("greater_equal", u, p), dtype=dtype, src="bool")
    return keep * (1.0 / (1.0 - p)) if p < 1 else keep * 0.0


#: What the symbolic engine hands the layer templates: no side effects.
ENGINE = Engine(name="symbolic", apply=apply_op, value=_value,
                  full_like=lambda x, v: apply_op("fill", x, value=v),
                  index=lambda x, ints: _np.asarray(ints),
                  indices=lambda ints, like: constant(_np.asarray(ints)), update_running_stats=None,
                  renorm_rows=None, dropout_mask=_dropout_mask, mul_=None)  # fmt: skip

#: the names the first arguments had until this release, per function (-> the new name)
_OLD_NAMES = {"conv2d": {"x": "input", "w": "weight", "b": "bias"},
              "embedding": {"indices": "input"}}  # fmt: skip


def _refusing_old_names(fn):
    """``fn`` with an error naming the new argument for an old keyword (``conv2d(x=...)``),
    and, for ``batch_norm``, for a call that leaves ``training`` to its default, which was
    True and is PyTorch's False now (``batch_norm(x, w, b)`` would read ``w`` and ``b`` as
    running statistics)."""
    old = {"x": "input", **_OLD_NAMES.get(fn.__name__, {})}
    signature = inspect.signature(fn)
    position = list(signature.parameters).index("training") if fn.__name__ == "batch_norm" else 0

    @functools.wraps(fn)
    def layer(*args, **kwargs):
        renamed = [k for k in kwargs if k in old and k not in signature.parameters]
        if renamed:
            new = ", ".join(f"{k}= -> {old[k]}=" for k in renamed)
            raise TypeError(
                f"{fn.__name__}: the arguments are PyTorch's now ({new}): "
                f"{fn.__name__}{signature} (see the changelog)"
            )
        if position and len(args) <= position and "training" not in kwargs:
            raise TypeError(
                "batch_norm: pass training= in the symbolic engine for this release: its "
                "default was True and is PyTorch's False now, and the arguments are PyTorch's, "
                "batch_norm(input, running_mean, running_var, weight=None, bias=None, "
                "training=False, ...): batch_norm(x, None, None, weight, bias, training=True) "
                "normalises with the batch's statistics (see the changelog)"
            )
        return fn(*args, **kwargs)

    return layer


#: name -> the symbolic layer function
LAYERS = {name: _refusing_old_names(fn) for name, fn in generate_layers(ENGINE).items()}
conv2d = LAYERS["conv2d"]
max_pool2d = LAYERS["max_pool2d"]
avg_pool2d = LAYERS["avg_pool2d"]
adaptive_avg_pool2d = LAYERS["adaptive_avg_pool2d"]
pad = LAYERS["pad"]
batch_norm = LAYERS["batch_norm"]
layer_norm = LAYERS["layer_norm"]
embedding = LAYERS["embedding"]
dropout = LAYERS["dropout"]
# the layers composed of those ops (in ops/conv.py, pooling.py, normalization.py, upsampling.py
# ...): conv1d, conv_transpose2d, unfold, ...
_MORE = sorted(set(LAYERS) - set(__all__))
globals().update({_name: LAYERS[_name] for _name in _MORE})
__all__ += _MORE
