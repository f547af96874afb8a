r"""``embedding(indices, weight)``: rows of a table picked by integer indices, and its
derivative ``embedding_grad`` (the rows' gradients added back into a table of zeros); and
``one_hot(indices)``, the rows of an identity table.

For ``weight`` of shape $(V, D)$ and integer ``indices`` of any shape $S$, the result has shape
$S + (D,)$: $y_{s} = w_{\mathrm{idx}_s}$. A row picked several times gets the sum of its
gradients (a scatter-add). ``padding_idx``, when given, names a row that never gets a
gradient (PyTorch's convention for a padding token).

>>> import numpy as np
>>> from tinygrad_edu.ops import get_op
>>> w = np.arange(6.0).reshape(3, 2)
>>> get_op("embedding").forward(np, np.array([2, 0, 2]), w)
array([[4., 5.],
       [0., 1.],
       [4., 5.]])
>>> get_op("embedding_grad").forward(np, np.array([2, 0, 2]), np.ones((3, 2)), shape=(3, 2))
array([[1., 1.],
       [0., 0.],
       [2., 2.]])
"""

from __future__ import annotations

import numpy as _np

from .base import NO_ONNX_GRAD, REGISTRY, Op, ShapeError, register
from .layer_surface import declare_layer, known_shape, side_effect_error

__all__ = ["Embedding", "EmbeddingGrad", "OneHot", "embedding_layer"]

_INT64 = _np.dtype("int64")


def _check_indices(xp, opname, idx, rows):
    if idx.dtype is not _INT64 and "int" not in str(idx.dtype):  # (str() of a dtype is slow)
        raise TypeError(
            f"{opname}: indices must be integers, got dtype {idx.dtype}; convert them, e.g. "
            "idx.long() or idx.astype('int64')"
        )
    if idx.size:
        if type(idx) is _np.ndarray:  # the methods: numpy's reductions without the wrappers
            lo, hi = int(idx.min()), int(idx.max())
        else:
            lo, hi = int(xp.min(idx)), int(xp.max(idx))
        if lo < 0 or hi >= rows:
            raise IndexError(
                f"{opname}: index {lo if lo < 0 else hi} is out of range for a table of "
                f"{rows} rows (valid: 0..{rows - 1})"
            )


@register
class Embedding(Op):
    r"""``embedding(indices, weight, padding_idx=None)``: ``weight[indices]``.

    $\partial L/\partial w$ = ``embedding_grad(indices, g)``; the indices get no gradient.
    """

    name, arity, saves = "embedding", 2, (0,)

    def forward(self, xp, idx, weight, padding_idx=None):
        _check_indices(xp, self.name, idx, weight.shape[0])
        rows = xp.take(weight, xp.reshape(idx, (-1,)), axis=0)
        return xp.reshape(rows, tuple(idx.shape) + tuple(weight.shape[1:]))

    def shape(self, ishape, wshape, padding_idx=None):
        if len(wshape) != 2:
            raise ShapeError(
                f"embedding: the weight must be a (num_embeddings, embedding_dim) table, got "
                f"shape {tuple(wshape)} (indices {tuple(ishape)})"
            )
        return tuple(ishape) + (wshape[1],)

    def vjp(self, F, g, inputs, out, shapes, needs, padding_idx=None):
        if not needs[1]:
            return (None, None)
        idx, wshape = inputs[0], shapes[1]
        if isinstance(wshape, tuple):
            return (None, F.embedding_grad(idx, g, shape=wshape, padding_idx=padding_idx))
        return (None, F.embedding_grad(idx, g, wshape, padding_idx=padding_idx))

    def onnx(self, ex, node, args):
        idx, n1 = ex.node("Cast", [args[0]], "indices", to=ex.onnx.TensorProto.INT64)
        name, n2 = ex.node("Gather", [args[1], idx], "embedding", axis=0)
        return [n1, n2], name


@register
class EmbeddingGrad(Op):
    r"""``embedding_grad(indices, g, shape=(V, D), padding_idx=None)``: zeros of ``shape`` with
    each row ``g[s]`` added at row ``indices[s]`` (row ``padding_idx`` stays zero).

    Linear in ``g``: its derivative is ``embedding(indices, gg)`` (zero where the index is
    ``padding_idx``).
    """

    name, arity, saves = "embedding_grad", 2, (0,)
    onnx = NO_ONNX_GRAD

    def forward(self, xp, idx, g, like=None, shape=None, padding_idx=None):
        shape = tuple(like.shape) if shape is None else tuple(shape)
        _check_indices(xp, self.name, idx, shape[0])
        flat = xp.reshape(idx, (-1,))
        rows = xp.reshape(g, (flat.shape[0], shape[1]))
        out = REGISTRY["getitem_grad"].forward(xp, rows, shape=shape, index=flat)
        if padding_idx is not None:
            out[padding_idx, ...] = 0
        return out

    def shape(self, ishape, gshape, like=None, shape=None, padding_idx=None):
        target = tuple(like if shape is None else shape)
        if len(target) != 2 or tuple(gshape) != tuple(ishape) + (target[1],):
            raise ShapeError(
                f"embedding_grad: a gradient of shape {tuple(gshape)} does not fit indices "
                f"{tuple(ishape)} into a table of shape {target}"
            )
        return target

    def vjp(self, F, gg, inputs, out, shapes, needs, like=None, shape=None, padding_idx=None):
        idx = inputs[0]
        dg = None
        if needs[1]:
            dg = F.embedding(idx, gg)
            if padding_idx is not None:
                keep = F.expand_dims(F.not_equal(idx, padding_idx), axis=-1)
                dg = F.where(keep, dg, F.zeros_like(dg))
        return (None, dg) + (None,) * (len(inputs) - 2)


# -- the layer function (see tinygrad_edu.ops.layer_surface) ------------------------------------
def embedding_layer(engine):
    apply, value = engine.apply, engine.value
    op = REGISTRY["embedding"]

    def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
                  scale_grad_by_freq=False, sparse=False):  # fmt: skip
        """Rows of ``weight`` (num_embeddings, embedding_dim) picked by the integer ``input``;
        the result has shape ``input.shape + (embedding_dim,)``. ``padding_idx`` names a row
        that gets no gradient; ``max_norm`` renormalises (in place, as PyTorch) the rows looked
        up whose ``norm_type``-norm exceeds it (eager only: a symbolic graph has no side
        effects).

        >>> import tinygrad_edu as tg
        >>> embedding(tg.tensor([2, 0], dtype="int64"), tg.tensor([[0.0], [1.0], [2.0]])).tolist()
        [[2.0], [0.0]]
        """
        if scale_grad_by_freq or sparse:
            raise NotImplementedError(
                "embedding: scale_grad_by_freq and sparse gradients are not supported; the "
                "gradient is a dense table"
            )
        w = value("embedding", "weight", weight)
        if isinstance(input, list | tuple) or type(input).__module__ in ("numpy", "cupy"):
            idx = engine.indices(input, w)  # on the weight's device
        else:
            idx = value("embedding", "input", input)
        wshape = known_shape(w)
        if wshape is not None and len(wshape) != 2:
            raise ShapeError(f"embedding: the weight must be 2-D (num, dim), got shape {wshape}")
        if padding_idx is not None:
            if wshape is None:
                if padding_idx < 0:
                    raise TypeError(
                        "embedding: a negative padding_idx needs the weight's shape; declare "
                        "it, e.g. Variable(name, shape=(V, D))"
                    )
            elif not -wshape[0] <= padding_idx < wshape[0]:
                raise ValueError(
                    f"embedding: padding_idx {padding_idx} is out of range for {wshape[0]} rows"
                )
            else:
                padding_idx = int(padding_idx) % wshape[0]
        if max_norm is not None:
            if engine.renorm_rows is None:
                raise side_effect_error(engine, "embedding", "max_norm",
                                        "renormalise the weight between runs instead")  # fmt: skip
            engine.renorm_rows(idx, w, float(max_norm), float(norm_type))
        return apply(op, idx, w, padding_idx=padding_idx)

    return embedding


declare_layer("embedding", embedding_layer)


# -- one_hot: a row of the identity matrix per index -------------------------------------------
@register
class OneHot(Op):
    """``one_hot(target, num_classes=-1)``: int64 one-hot rows along a new last dim
    (``num_classes=-1``: the largest class plus one). Not differentiable."""

    name, differentiable = "one_hot", False

    def forward(self, xp, target, num_classes=-1):
        if num_classes < 0:
            num_classes = int(xp.max(target)) + 1 if target.size else 0
        if target.size and (int(xp.min(target)) < 0 or int(xp.max(target)) >= num_classes):
            bad = int(xp.max(target)) if int(xp.max(target)) >= num_classes else int(
                xp.min(target))  # fmt: skip
            raise IndexError(
                f"one_hot: target holds class {bad}, but there are {num_classes} classes "
                f"(0..{num_classes - 1})"
            )
        return xp.astype(xp.expand_dims(target, axis=-1) == xp.arange(num_classes), xp.int64)

    def shape(self, tshape, num_classes=-1):
        return tuple(tshape) + (num_classes,)

    def onnx(self, ex, node, args):
        depth = ex.need_shape(node, "one_hot")[-1]
        dtype = ex.dtype(node) or "int64"
        idx, n1 = ex.node("Cast", [args[0]], "index", to=ex.onnx.TensorProto.INT64)
        name, n2 = ex.node("OneHot", [idx, ex.const(depth, "depth", "int64"),
                                        ex.const([0, 1], "values", dtype)], "one_hot",
                             axis=-1)  # fmt: skip
        return [n1, n2], name
