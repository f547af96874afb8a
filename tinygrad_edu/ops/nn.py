r"""Ops for classifiers: ``softmax``, ``log_softmax`` and ``softmax_cross_entropy``, all
computed after subtracting the row maximum, so logits of $\pm 1000$ stay finite."""

from __future__ import annotations

from .base import Op, ShapeError, fmt_shapes, normalize_axes, register

__all__ = ["Softmax", "LogSoftmax", "SoftmaxCrossEntropy"]


def _log_softmax(xp, x, axis):
    z = x - xp.max(x, axis=axis, keepdims=True)
    return z - xp.log(xp.sum(xp.exp(z), axis=axis, keepdims=True))


class _AlongAxis(Op):
    def shape(self, shape, axis=-1):
        normalize_axes(self.name, axis, len(shape), shape)
        return tuple(shape)


@register
class Softmax(_AlongAxis):
    r"""$s_i = e^{x_i} / \sum_j e^{x_j}$ along ``axis``.
    $\partial L/\partial x = s \odot (g - \sum_j g_j s_j)$ (reuses the output)."""

    name, saves_output = "softmax", True

    def forward(self, xp, x, axis=-1):
        e = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
        return e / xp.sum(e, axis=axis, keepdims=True)

    def vjp(self, F, g, inputs, out, shapes, needs, axis=-1):
        return (out * (g - F.sum(g * out, axis=axis, keepdims=True)),)


@register
class LogSoftmax(_AlongAxis):
    r"""$\log s_i = x_i - \log\sum_j e^{x_j}$ along ``axis``.
    $\partial L/\partial x = g - e^{\mathrm{out}} \sum_j g_j$ (reuses the output)."""

    name, saves_output = "log_softmax", True

    def forward(self, xp, x, axis=-1):
        return _log_softmax(xp, x, axis)

    def vjp(self, F, g, inputs, out, shapes, needs, axis=-1):
        return (g - F.exp(out) * F.sum(g, axis=axis, keepdims=True),)


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
