r"""Losses of classifiers: ``softmax_cross_entropy`` (computed after subtracting the row
maximum, so logits of $\pm 1000$ stay finite, as ``log_softmax`` in
:mod:`~tinygrad_edu.ops.activation`), ``nll_loss`` (PyTorch's, with class weights,
``ignore_index`` and ``reduction``) and ``binary_cross_entropy`` (also ``_with_logits``)."""

from __future__ import annotations

import math

import numpy as _np

from .activation import _log_softmax
from .base import (
    NO_ONNX_GRAD,
    REGISTRY,
    Op,
    ShapeError,
    fmt_shapes,
    quiet,
    register,
)
from .promotion import category

__all__ = ["SoftmaxCrossEntropy", "NllLoss", "NllLossGrad", "NllLogSoftmaxGrad",
           "BinaryCrossEntropy", "BinaryCrossEntropyWithLogits"]  # fmt: skip


@register
class SoftmaxCrossEntropy(Op):
    r"""``softmax_cross_entropy(logits, labels)``: $-\frac1N\sum_n \sum_c y_{nc}\log s_{nc}$,
    classes on the last axis, the mean over the other $N$ rows.

    $\partial L/\partial \mathrm{logits} = g\,(s - y)/N$ and
    $\partial L/\partial y = -g \log s / N$.
    """

    name, arity, saves = "softmax_cross_entropy", 2, (0, 1)

    def forward(self, xp, logits, labels):
        n = logits.shape[-1] and (logits.size // logits.shape[-1])
        return -xp.sum(labels * _log_softmax(xp, logits, -1)) / max(n, 1)

    def shape(self, lshape, yshape):
        if tuple(lshape) != tuple(yshape) or len(lshape) < 1:
            raise ShapeError(
                "softmax_cross_entropy: logits and labels have shapes "
                f"{fmt_shapes([lshape, yshape])}; labels must be one-hot (or probabilities) "
                "of the logits' shape"
            )
        return ()

    def vjp(self, F, g, inputs, out, shapes, needs):
        # BEGIN SOLUTION A1.7
        logits, labels = inputs
        scale = g / (F.numel(shapes[0]) / F.numel(shapes[0], -1))
        gl = (F.softmax(logits, axis=-1) - labels) * scale if needs[0] else None
        gy = -F.log_softmax(logits, axis=-1) * scale if needs[1] else None
        return gl, gy
        # END SOLUTION

    def onnx(self, ex, node, args):
        logits, labels = args
        shape = ex.need_shape(node.inputs[0], "softmax_cross_entropy")
        rows = math.prod(shape[:-1]) if len(shape) > 1 else 1
        ls, n1 = ex.node("LogSoftmax", [logits], "log_softmax", axis=-1)
        prod, n2 = ex.node("Mul", [labels, ls], "y_log_p")
        total, n3 = ex.node("ReduceSum", [prod], "total", keepdims=0)
        neg, n4 = ex.node("Neg", [total], "neg_total")
        rows_c = ex.const(max(rows, 1), "rows", ex.dtype(node) or "float32")
        name, n5 = ex.node("Div", [neg, rows_c], "cross_entropy")
        return [n1, n2, n3, n4, n5], name


def _class_dim(ndim):
    return 1 if ndim >= 2 else 0


def _nll_targets(xp, target, n_classes, dtype, weight, ignore_index):
    """``(safe, ws)``: each sample's class (0 where the target is ``ignore_index``) and its
    weight (that class's weight, 1 without weights, 0 where ignored), or ``ws = None`` when
    every weight is 1. Raises for a class outside ``0..n_classes - 1``.

    NOTE [The plain case of nll_loss]
        Most calls have no class weights and no target equal to ``ignore_index`` (its default,
        -100, is never a class). Two reductions of the raw target prove that: then ``safe``
        is the target itself and ``ws`` is ``None`` (all ones), which saves the masks, the
        weight array and its products in the forward and in the gradient (about half of
        ``F.cross_entropy``'s time on a batch of 64). With at most 2 dims, the forward then
        picks ``logp[rows, target]`` with one index and the gradient writes ``-g / n`` into
        zeros at the same places, instead of numpy's general ``take_along_axis`` and a
        one-hot mask divided by the count: 11 µs instead of 42 for each, batch 256 and 10
        classes. The gradient is then ``-g / n`` rounded once, as PyTorch computes it. What it
        costs a reader: every user of ``ws`` below has a branch for ``None``, and the two ops
        a second, shorter way to their answer.
    """
    if weight is None and plain_targets(xp, target, n_classes, ignore_index):
        return target, None
    valid = target != ignore_index
    safe = xp.where(valid, target, xp.zeros_like(target))
    # two reductions test the whole target; the element-wise test only runs to name a culprit
    if safe.size and not (bool(xp.min(safe) >= 0) and bool(xp.max(safe) < n_classes)):
        bad = xp.logical_and(valid, xp.logical_or(safe < 0, safe >= n_classes))
        if bool(xp.any(bad)):
            wrong = [int(v) for v in xp.reshape(safe[bad], (-1,))][0]
            raise IndexError(
                f"nll_loss: target holds class {wrong}, but there are {n_classes} classes "
                f"(0..{n_classes - 1}); ignore_index is {ignore_index}"
            )
    ws = xp.astype(valid, dtype)
    if weight is not None:
        picked = xp.take(xp.asarray(weight, dtype=dtype), xp.reshape(safe, (-1,)), axis=0)
        ws = ws * xp.reshape(picked, safe.shape)
    return safe, ws


def plain_targets(xp, target, n_classes, ignore_index) -> bool:
    """Does ``target`` hold classes ``0..n_classes - 1`` only, none ``ignore_index`` (two
    reductions, see NOTE [The plain case of nll_loss])? False for an empty target."""
    if not target.size:
        return False
    if isinstance(target, _np.ndarray):
        lo, hi = int(target.min()), int(target.max())
    else:
        lo, hi = int(xp.min(target)), int(xp.max(target))
    return 0 <= lo and hi < n_classes and not lo <= ignore_index <= hi


def plain_index(xp, target, n_classes, ignore_index):
    """``(rows, target)``, the index of each row's target class, where the batch of labels
    ``target`` (1-D) is plain for :func:`plain_targets`; else None. Compiled code tests the
    labels once with it for every op that reads them."""
    if plain_targets(xp, target, n_classes, ignore_index):
        return (xp.arange(target.shape[0]), target)
    return None


def nll_pick(xp, logp, index, n, reduction):
    """``nll_loss`` in the plain case (no weights): ``-logp`` at ``index`` (``n`` samples),
    then ``reduction``."""
    loss = -logp[index]
    if reduction == "none":
        return loss
    total = loss.sum() if isinstance(loss, _np.ndarray) else xp.sum(loss)
    return total if reduction == "sum" else total / n  # (never empty here)


def nll_log_softmax_plain(xp, g, logp, index, n, reduction):
    """``nll_log_softmax_grad`` in the plain case (see its docstring)."""
    v = -(g / n if reduction == "mean" else g)  # G at each target (nll_loss_grad)
    out = xp.exp(logp) * (v + 0.0)  # exp(logp) * (the row sum of G: 0.0 + v)
    at_target = v - out[index]
    out = xp.subtract(0.0, out, out=out)  # G - ... where G is 0
    out[index] = at_target
    return out


def _plain_index(xp, target):
    """The index of each sample's target class in log-probabilities of at most 2 dims:
    ``(rows, target)`` for a batch, ``target`` itself for one sample."""
    return (xp.arange(target.shape[0]), target) if target.ndim else target


def _nll_weights(xp, safe, ws, shape, dtype):
    """An array of ``shape`` (the log-probabilities') and ``dtype``: at each sample's target
    class, the sample's weight ``ws`` (1 where ``ws`` is ``None``); 0 elsewhere (``safe``,
    ``ws``: from :func:`_nll_targets`)."""
    c = _class_dim(len(shape))
    n_classes = shape[c]
    tail = (1,) * (len(shape) - c - 1)
    hit = xp.astype(xp.expand_dims(safe, axis=c) == xp.reshape(xp.arange(n_classes),
                                                               (n_classes,) + tail), dtype)
    return hit if ws is None else hit * xp.expand_dims(ws, axis=c)


def _nll_denominator(xp, n, ws, dtype):
    """The mean's denominator: the summed weights (``ws is None``: the ``n`` samples)."""
    return xp.sum(ws) if ws is not None else xp.asarray(n, dtype=dtype)


def _reduce(xp, loss, ws, reduction):
    if reduction == "none":
        return loss
    total = xp.sum(loss)
    if reduction == "sum":
        return total
    denom = _nll_denominator(xp, loss.size, ws, total.dtype)
    empty = denom == 0  # every target ignored, or an empty batch: nan, as in PyTorch
    return xp.where(empty, xp.asarray(math.nan, dtype=total.dtype),
                    total / xp.where(empty, xp.ones_like(denom), denom))  # fmt: skip


def _check_reduction(opname, reduction):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{opname}: reduction must be 'mean', 'sum' or 'none', got "
                         f"{reduction!r}")  # fmt: skip


@register
class NllLoss(Op):
    r"""``nll_loss(logp, target)``: $-w_{y_n}\,\mathrm{logp}_{n, y_n}$ per sample, classes on
    dim 1 (dim 0 for one sample), then ``reduction``: ``"mean"`` divides by the sum of the
    weights used (a target equal to ``ignore_index`` counts for nothing). ``weight`` (an
    attribute: PyTorch gives it no gradient either) holds one weight per class.

    $\partial L/\partial\,\mathrm{logp} = -g\,W/\textstyle\sum W$ for the mean
    (``nll_loss_grad``), where $W$ holds each sample's weight at its target class.
    """

    name, arity, saves = "nll_loss", 2, (1,)

    def forward(self, xp, logp, target, weight=None, ignore_index=-100, reduction="mean"):
        c = _class_dim(logp.ndim)
        safe, ws = _nll_targets(xp, target, logp.shape[c], logp.dtype, weight, ignore_index)
        if ws is None and logp.ndim <= 2:  # see NOTE [The plain case of nll_loss]
            return nll_pick(xp, logp, _plain_index(xp, safe), safe.size, reduction)
        picked = xp.take_along_axis(logp, xp.expand_dims(safe, axis=c), axis=c)  # logp[n, y_n]
        loss = -xp.squeeze(picked, axis=c)
        return _reduce(xp, loss if ws is None else loss * ws, ws, reduction)

    def shape(self, lshape, tshape, weight=None, ignore_index=-100, reduction="mean"):
        c = _class_dim(len(lshape))
        want = tuple(lshape[:c]) + tuple(lshape[c + 1 :])
        if len(lshape) < 1 or tuple(tshape) != want:
            raise ShapeError(
                f"nll_loss: input of shape {tuple(lshape)} needs a target of class indices of "
                f"shape {want}, got {tuple(tshape)}"
            )
        _check_reduction(self.name, reduction)
        return want if reduction == "none" else ()

    def vjp(self, F, g, inputs, out, shapes, needs, weight=None, ignore_index=-100,
            reduction="mean"):  # fmt: skip
        grad = F.with_shape("nll_loss_grad", shapes[0], g, inputs[1], weight=weight,
                            ignore_index=ignore_index, reduction=reduction)  # fmt: skip
        return grad, None

    def onnx(self, ex, node, args):
        a = node.attrs
        idx, n1 = ex.node("Cast", [args[1]], "target", to=ex.onnx.TensorProto.INT64)
        ins = [args[0], idx] + ([args[2]] if len(args) > 2 else [])
        if a.get("weight") is not None:
            ins.append(ex.const(a["weight"], "weight", ex.dtype(node.inputs[0])))
        name, n2 = ex.node("NegativeLogLikelihoodLoss", ins, "nll_loss",
                             reduction=a.get("reduction", "mean"),
                             ignore_index=int(a.get("ignore_index", -100)))  # fmt: skip
        return [n1, n2], name


@register
class NllLossGrad(Op):
    r"""``nll_loss_grad(g, target, shape)``: the gradient of ``nll_loss`` with respect to its
    input, $-g\,W$ (divided by $\sum W$ for the mean). It is linear in $g$, and its own
    derivative rule is ``nll_loss`` again."""

    name, arity, saves = "nll_loss_grad", 2, (1,)
    onnx = NO_ONNX_GRAD

    def forward(self, xp, g, target, like=None, shape=None, weight=None, ignore_index=-100,
                reduction="mean"):  # fmt: skip
        shape = tuple(like.shape) if shape is None else tuple(shape)
        n_classes = shape[_class_dim(len(shape))]
        safe, ws = _nll_targets(xp, target, n_classes, g.dtype, weight, ignore_index)
        # see NOTE [The plain case of nll_loss]; ``add.at`` marks numpy and CuPy, whose arrays
        # take writes at integer-array indices (the Array API standard's need not)
        if ws is None and len(shape) <= 2 and hasattr(getattr(xp, "add", None), "at"):
            grad = xp.zeros(shape, dtype=g.dtype)
            grad[_plain_index(xp, safe)] = -(g / safe.size if reduction == "mean" else g)
            return grad
        w = _nll_weights(xp, safe, ws, shape, g.dtype)
        if reduction == "none":
            return -xp.expand_dims(g, axis=_class_dim(len(shape))) * w
        if reduction == "mean":
            denom = _nll_denominator(xp, safe.size, ws, g.dtype)
            w = w / xp.where(denom == 0, xp.ones_like(denom), denom)
        return -g * w

    def shape(self, gshape, tshape, like=None, shape=None, **attrs):
        return tuple(like if shape is None else shape)

    def vjp(self, F, gg, inputs, out, shapes, needs, shape=None, weight=None, ignore_index=-100,
            reduction="mean"):  # fmt: skip
        back = F.nll_loss(gg, inputs[1], weight=weight, ignore_index=ignore_index,
                          reduction=reduction)  # fmt: skip
        return (back, None) + (None,) * (len(shapes) - 2)


@register
class NllLogSoftmaxGrad(Op):
    r"""``nll_log_softmax_grad(g, logp, target)``: the gradient of ``nll_loss(logp, target)``
    with respect to the logits of ``logp = log_softmax(logits, axis)``, in one op.

    The two derivative rules build it in four more steps: ``G = nll_loss_grad(g, target)``,
    then ``G - exp(logp) * sum(G, axis, keepdims=True)``; the symbolic engine's fusion pass
    (``symbolic.static.passes.fuse``) puts this op in their place. It computes the same numbers:
    in the plain case (see NOTE [The plain case of nll_loss]) ``G`` has one entry per row,
    ``v``, so the row sum is ``0.0 + v``; the op multiplies ``exp(logp)`` by it once, negates
    it in place (``0.0 - x``, as ``G - ...`` computes it where ``G`` is zero) and writes
    ``v - x`` at the targets, as a hand-written step subtracts 1 at the label. Elsewhere it
    computes the four steps themselves.
    """

    name, arity, saves = "nll_log_softmax_grad", 3, (0, 1, 2)
    onnx = NO_ONNX_GRAD

    def forward(self, xp, g, logp, target, axis=-1, weight=None, ignore_index=-100,
                reduction="mean"):  # fmt: skip
        nll = {"weight": weight, "ignore_index": ignore_index, "reduction": reduction}
        c = _class_dim(logp.ndim)
        plain = (logp.ndim <= 2 and axis % max(logp.ndim, 1) == c and reduction != "none"
                 and g.dtype == logp.dtype and category(logp.dtype) == 2
                 and hasattr(getattr(xp, "add", None), "at"))  # fmt: skip
        if plain:
            safe, ws = _nll_targets(xp, target, logp.shape[c], g.dtype, weight, ignore_index)
            plain = ws is None
        if not plain:  # the four steps, as the rules build them
            grad = REGISTRY["nll_loss_grad"].forward(xp, g, target, shape=logp.shape, **nll)
            total = REGISTRY["sum"].forward(xp, grad, axis=axis, keepdims=True)
            e = REGISTRY["exp"].forward(xp, logp)
            return REGISTRY["sub"].forward(xp, grad, REGISTRY["mul"].forward(xp, e, total))
        return nll_log_softmax_plain(xp, g, logp, _plain_index(xp, safe), safe.size, reduction)

    def shape(self, gshape, lshape, tshape, axis=-1, **attrs):
        return tuple(lshape)

    def vjp(self, F, gg, inputs, out, shapes, needs, axis=-1, weight=None, ignore_index=-100,
            reduction="mean"):  # fmt: skip
        g, logp, target = inputs
        nll = {"weight": weight, "ignore_index": ignore_index, "reduction": reduction}
        e = F.exp(logp)
        ga = gl = None
        if needs[0]:  # through G, directly and through its row sum
            back = gg - F.sum(gg * e, axis=axis, keepdims=True)
            ga = F.nll_loss(back, target, **nll)
        if needs[1]:
            grad = F.with_shape("nll_loss_grad", shapes[1], g, target, **nll)
            gl = -(gg * F.sum(grad, axis=axis, keepdims=True)) * e
        return ga, gl, None


class _BinaryLoss(Op):
    """A loss of ``(input, target)`` pairs of one shape, times ``weight`` (an attribute: no
    gradient, as in PyTorch), then ``reduction``. Subclasses give the loss of each element
    (``_each``) and its two partial derivatives (``_partials``)."""

    arity, saves = 2, (0, 1)

    @quiet()  # log(0) and the mean of nothing, as in PyTorch (silent)
    def forward(self, xp, x, t, weight=None, reduction="mean", **attrs):
        loss = self._each(xp, x, t, **attrs)
        if weight is not None:
            loss = loss * weight
        if reduction == "none":
            return loss
        return xp.sum(loss) if reduction == "sum" else xp.mean(loss)

    def shape(self, xshape, tshape, weight=None, reduction="mean", **attrs):
        if tuple(xshape) != tuple(tshape):
            raise ShapeError(f"{self.name}: input and target have shapes "
                             f"{fmt_shapes([xshape, tshape])}; they must match")  # fmt: skip
        _check_reduction(self.name, reduction)
        return tuple(xshape) if reduction == "none" else ()

    def vjp(self, F, g, inputs, out, shapes, needs, weight=None, reduction="mean", **attrs):
        if reduction == "mean":
            n = F.numel(shapes[0])
            g = g / n if not isinstance(n, int) or n else g
        if reduction != "none":
            g = F.broadcast_to(g, shapes[0])
        if weight is not None:
            g = g * weight
        with quiet():  # a zero gradient times an infinite partial
            gx, gt = self._partials(F, *inputs, needs, **attrs)
        return (g * gx if gx is not None else None, g * gt if gt is not None else None)


def _onnx_reduced(ex, node, nodes, each):
    """The ONNX form of a binary loss after its per-element loss ``each``: times ``weight``,
    then ``reduction``."""
    a = node.attrs
    if a.get("weight") is not None:
        more, each = ex.one("Mul", [each, ex.like(a["weight"], node.inputs[0], "weight")], "w")
        nodes = nodes + more
    reduction = a.get("reduction", "mean")
    if reduction == "none":
        return nodes, each
    more, out = ex.one("ReduceSum" if reduction == "sum" else "ReduceMean", [each], node.op.name,
                       keepdims=0)  # fmt: skip
    return nodes + more, out


_EPSILON = 9.999999960041972e-13  # PyTorch's 1e-12 for this rule, a C float: float32(1e-12)


def _clamped_log(xp, x):
    return xp.maximum(xp.log(x), xp.full_like(x, -100.0))


@register
class BinaryCrossEntropy(_BinaryLoss):
    r"""``binary_cross_entropy(p, t)``: $-(t \log p + (1 - t)\log(1 - p))$ for probabilities
    $p$, each log clamped at $-100$ (PyTorch's rule), so $p = 0$ or 1 gives a finite loss.

    $\partial L/\partial p = g\,(p - t) / \max(p(1 - p), 10^{-12})$: PyTorch's closed form,
    finite where $p$ is exactly 0 or 1 (the clamped logs' own derivative would be $0/0$
    there); $\partial L/\partial t = g\,(\log(1 - p) - \log p)$ (infinite there, as in
    PyTorch).
    """

    name = "binary_cross_entropy"

    def _each(self, xp, p, t):
        return -(t * _clamped_log(xp, p) + (1 - t) * _clamped_log(xp, 1 - p))

    def _partials(self, F, p, t, needs):
        gp = (p - t) / F.clamp(p * (1 - p), min=_EPSILON) if needs[0] else None
        gt = None
        if needs[1]:
            gt = F.log(1 - p) - F.log(p)  # not clamped: +-inf at p = 0 or 1, as in PyTorch
        return gp, gt

    def onnx(self, ex, node, args):
        (p, t), like = args, node.inputs[0]
        floor, one = ex.like(-100.0, like, "min_log"), ex.like(1, like, "one")
        nodes, each = ex.chain([("Log", [p], {}), ("Max", ["{0}", floor], {}),
                                ("Sub", [one, p], {}), ("Log", ["{2}"], {}),
                                ("Max", ["{3}", floor], {}), ("Mul", [t, "{1}"], {}),
                                ("Sub", [one, t], {}), ("Mul", ["{6}", "{4}"], {}),
                                ("Add", ["{5}", "{7}"], {}), ("Neg", ["{8}"], {})], "bce")
        return _onnx_reduced(ex, node, nodes, each)


@register
class BinaryCrossEntropyWithLogits(_BinaryLoss):
    r"""``binary_cross_entropy_with_logits(x, t)``: the binary cross-entropy of
    $\sigma(x)$, computed stably from the logits: $(1 - t)\,x + w\,\mathrm{softplus}(-x)$
    with $w = 1 + (w_+ - 1)\,t$ (``pos_weight`` $w_+$, an attribute, default 1).

    $\partial L/\partial x = g\,((1 - t) - w\,\sigma(-x))$ ($g\,(\sigma(x) - t)$ without
    ``pos_weight``) and $\partial L/\partial t = g\,((w_+ - 1)\,\mathrm{softplus}(-x) - x)$.
    """

    name = "binary_cross_entropy_with_logits"

    def _each(self, xp, x, t, pos_weight=None):
        soft = xp.maximum(-x, xp.zeros_like(x)) + xp.log1p(xp.exp(-xp.abs(x)))  # softplus(-x)
        w = 1 if pos_weight is None else t * (pos_weight - 1) + 1
        return (1 - t) * x + w * soft

    def _partials(self, F, x, t, needs, pos_weight=None):
        gx = gt = None
        if needs[0]:
            if pos_weight is None:
                gx = F.sigmoid(x) - t
            else:
                gx = (1 - t) - (t * (pos_weight - 1) + 1) * F.sigmoid(-x)
        if needs[1]:
            gt = -x if pos_weight is None else (
                F.softplus(-x, threshold=math.inf) * (pos_weight - 1) - x)  # fmt: skip
        return gx, gt

    def onnx(self, ex, node, args):
        (x, t), like = args, node.inputs[0]
        one = ex.like(1, like, "one")
        steps = [("Neg", [x], {}), ("Relu", ["{0}"], {}), ("Abs", [x], {}), ("Neg", ["{2}"], {}),
                 ("Exp", ["{3}"], {}), ("Add", ["{4}", one], {}), ("Log", ["{5}"], {}),
                 ("Add", ["{1}", "{6}"], {}),  # 7: softplus(-x), stably
                 ("Sub", [one, t], {}), ("Mul", ["{8}", x], {})]
        pos_weight = node.attrs.get("pos_weight")
        if pos_weight is None:
            steps.append(("Add", ["{9}", "{7}"], {}))
        else:
            steps += [("Sub", [ex.like(pos_weight, like, "pos_weight"), one], {}),
                      ("Mul", [t, "{10}"], {}), ("Add", ["{11}", one], {}),
                      ("Mul", ["{12}", "{7}"], {}), ("Add", ["{9}", "{13}"], {})]
        nodes, each = ex.chain(steps, "bce_logits")
        return _onnx_reduced(ex, node, nodes, each)
