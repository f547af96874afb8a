r"""Normalisation layers: ``batch_norm`` and ``layer_norm``.

Both compute $\hat x = (x - \mu)/\sqrt{\sigma^2 + \epsilon}$ and then $y = \gamma\hat x + \beta$;
they differ in which axes $\mu$ and $\sigma^2$ (the biased variance) are taken over:

* ``layer_norm``: the last ``normalized_ndim`` axes of each example;
* ``batch_norm``: every axis but the channels (axis 1), i.e. over the batch and the pixels. In
  training it uses the batch's statistics; in evaluation the running mean and variance given
  as inputs. (Updating the running statistics is a side effect, done by
  ``nn.functional.batch_norm``, not by the op.)

The derivative through batch statistics, with $n$ the number of values averaged and
$\hat g = g\gamma$, is the classic

$$\frac{\partial L}{\partial x} = \frac{1}{\sqrt{\sigma^2+\epsilon}}\Big(\hat g
  - \mathrm{mean}(\hat g) - \hat x\,\mathrm{mean}(\hat g\,\hat x)\Big).$$

The rules recompute $\mu, \sigma^2, \hat x$ from the saved input with ``F`` ops (``mean``,
``pow``, ...), so under ``create_graph`` or in the symbolic engine the derivative is an ordinary
graph and can be differentiated again.

>>> import numpy as np
>>> from tinygrad_edu.ops import get_op
>>> get_op("layer_norm").forward(np, np.array([[1.0, 3.0]]), normalized_ndim=1, eps=0.0)
array([[-1.,  1.]])
"""

from __future__ import annotations

import math
import re

import numpy as _np  # rms_norm's default eps; the numpy batch_norm paths below

from .base import REGISTRY, Op, ShapeError, fmt_shapes, register
from .layer_surface import _reshape, declare_layer, known_shape, side_effect_error
from .surface import shape_of
from .vjp_namespace import RawFunctional

__all__ = ["BatchNorm", "LayerNorm", "batch_norm_layer", "layer_norm_layer"]


def _normalize(xp, x, axes, eps):
    mu = xp.mean(x, axis=axes, keepdims=True)
    xc = x - mu
    var = xp.mean(xc * xc, axis=axes, keepdims=True)
    return xc * (1.0 / xp.sqrt(var + eps))


def _stats_f(F, x, axes, eps):
    """$\\hat x$ and $1/\\sqrt{\\sigma^2+\\epsilon}$ as ``F`` ops (differentiable)."""
    xc = x - F.mean(x, axis=axes, keepdims=True)
    rstd = (F.mean(xc * xc, axis=axes, keepdims=True) + eps) ** -0.5
    return xc * rstd, rstd


# NOTE [batch_norm's arrays in place]: on numpy arrays, batch_norm's forward in training and its
# plain backward (F the raw namespace: no create_graph, not the symbolic engine) run the same
# numpy operations on the same values as _normalize and the rule with F ops, in the same order,
# but write the full-size intermediates into a few buffers they own instead of a new array per
# operation (a ufunc's result does not depend on where it is written, so the bits are the
# same; tests/ops/test_cnn_fast_paths.py compares them). The rule's backward made about ten
# arrays as big as x (the ConvNet's first layer: 50x16x28x28 float32, 2.5 MB each), each fresh
# memory the kernel maps page by page when the allocator has none to reuse: that backward alone
# 9-10 -> 2.7-3.0 ms (with freed memory kept for reuse the old one took 2.8 ms as well).
def _same_float(*arrays) -> bool:
    """Whether these are numpy arrays of one float dtype (the in-place paths' condition)."""
    dt = arrays[0].dtype
    return dt.kind == "f" and all(type(a) is _np.ndarray and a.dtype == dt for a in arrays)


def _train_forward_arrays(x, w, b, axes, eps):
    """``batch_norm``'s training forward as :func:`_normalize` then the affine map computes
    it, with the results written into ``x - mu``'s buffer (NOTE [batch_norm's arrays in
    place])."""
    mu = _np.mean(x, axis=axes, keepdims=True)
    xc = x - mu
    var = _np.mean(xc * xc, axis=axes, keepdims=True)
    y = _np.multiply(xc, 1.0 / _np.sqrt(var + eps), out=xc)
    if w is not None:
        shape = (w.shape[0],) + (1,) * (x.ndim - 2)
        _np.multiply(y, w.reshape(shape), out=y)
        _np.add(y, b.reshape(shape), out=y)
    return y


def _train_vjp_arrays(g, x, w, axes, eps, needs):
    """The training rule of :meth:`BatchNorm.vjp` with ``F`` the raw namespace: the same
    operations as :func:`_stats_f`, :func:`_through_stats` and the affine gradients, in three
    buffers (NOTE [batch_norm's arrays in place])."""
    mean, total = REGISTRY["mean"].forward, REGISTRY["sum"].forward
    xc = x - mean(_np, x, axis=axes, keepdims=True)
    tmp = xc * xc
    rstd = (mean(_np, tmp, axis=axes, keepdims=True) + eps) ** -0.5
    xhat = _np.multiply(xc, rstd, out=xc)
    gh = g if w is None else g * w.reshape((w.shape[0],) + (1,) * (x.ndim - 2))
    gx = None
    if needs[0]:
        m1 = mean(_np, gh, axis=axes, keepdims=True)
        m2 = mean(_np, _np.multiply(gh, xhat, out=tmp), axis=axes, keepdims=True)
        a = _np.subtract(gh, m1, out=None if gh is g else gh)  # gh - mean(gh)
        _np.subtract(a, _np.multiply(xhat, m2, out=tmp), out=a)  # ... - xhat * mean(gh xhat)
        gx = _np.multiply(rstd, a, out=a)
    grads = [gx]
    if w is not None:
        grads.append(total(_np, _np.multiply(g, xhat, out=tmp), axis=axes) if needs[1] else None)
        grads.append(total(_np, g, axis=axes) if needs[2] else None)
    return tuple(grads)


def _through_stats(F, gh, xhat, rstd, axes):
    """$\\partial L/\\partial x$ through batch statistics, from $\\hat g$ and $\\hat x$."""
    return rstd * (
        gh
        - F.mean(gh, axis=axes, keepdims=True)
        - xhat * F.mean(gh * xhat, axis=axes, keepdims=True)
    )


@register
class LayerNorm(Op):
    r"""``layer_norm(x[, weight[, bias]], normalized_ndim=1, eps=1e-5)``: normalise over the
    last ``normalized_ndim`` axes, then scale by ``weight`` and shift by ``bias`` (both shaped
    like those axes).

    $\partial L/\partial x$ as in the module docstring (over the normalised axes),
    $\partial L/\partial\gamma = \sum g\hat x$, $\partial L/\partial\beta = \sum g$ (over the
    other axes).
    """

    name, arity, saves = "layer_norm", 1, (0, 1)
    torch_name = "NativeLayerNormBackward0"  # PyTorch's node name

    def forward(self, xp, x, weight=None, bias=None, normalized_ndim=1, eps=1e-5):
        axes = tuple(range(-normalized_ndim, 0))
        y = _normalize(xp, x, axes, eps)
        if weight is not None:
            y = y * weight
        if bias is not None:
            y = y + bias
        return y

    def shape(self, xshape, wshape=None, bshape=None, normalized_ndim=1, eps=1e-5):
        k = normalized_ndim
        norm = tuple(xshape[len(xshape) - k :])
        if not isinstance(k, int) or k < 1 or k > len(xshape):
            raise ShapeError(
                f"layer_norm: cannot normalise the last {k} axes of an input of shape "
                f"{tuple(xshape)}"
            )
        for what, s in (("weight", wshape), ("bias", bshape)):
            if s is not None and tuple(s) != norm:
                raise ShapeError(
                    f"layer_norm: the {what} has shape {tuple(s)}, but the normalised axes of "
                    f"the input {tuple(xshape)} have shape {norm}; normalized_shape, weight and "
                    "bias must all equal the input's last axes"
                )
        return tuple(xshape)

    def vjp(self, F, g, inputs, out, shapes, needs, normalized_ndim=1, eps=1e-5):
        axes = tuple(range(-normalized_ndim, 0))
        x = inputs[0]
        xhat, rstd = _stats_f(F, x, axes, eps)
        gh = g * inputs[1] if len(inputs) > 1 else g
        grads = [_through_stats(F, gh, xhat, rstd, axes) if needs[0] else None]
        if len(inputs) > 1:
            grads.append(F.sum_to(g * xhat, shapes[1]) if needs[1] else None)
        if len(inputs) > 2:
            grads.append(F.sum_to(g, shapes[2]) if needs[2] else None)
        return tuple(grads)

    def onnx(self, ex, node, args):
        a = node.attrs
        rank = len(ex.need_shape(node.inputs[0], "layer_norm"))
        axes = list(range(rank - a.get("normalized_ndim", 1), rank))
        extra = []
        if len(args) > 1 and args[1]:
            extra.append(("Mul", ["{6}", args[1]], {}))
        if len(args) > 2 and args[2]:
            extra.append(("Add", [f"{{{6 + len(extra)}}}", args[2]], {}))
        return ex.normalized(node, args[0], axes, a.get("eps", 1e-5), extra)


def _bn_inputs(inputs, training, affine):
    """``(x, weight, bias, mean, var)`` from the op's inputs (None where absent)."""
    x, rest = inputs[0], list(inputs[1:])
    w = b = mean = var = None
    if affine:
        w, b = rest[0], rest[1]
        rest = rest[2:]
    if not training:
        mean, var = rest[0], rest[1]
    return x, w, b, mean, var


@register
class BatchNorm(Op):
    r"""``batch_norm(x, [weight, bias,] [running_mean, running_var,] training, affine, eps,
    ndim)``: normalise each channel (axis 1) of ``x`` (``(N, C)``, ``(N, C, L)`` or
    ``(N, C, H, W)``, ``ndim`` axes).

    The inputs are ``x``, then ``weight, bias`` when ``affine``, then ``running_mean,
    running_var`` when not ``training`` (evaluation uses them instead of the batch's
    statistics). Every parameter has shape ``(C,)``.
    """

    name, arity, saves = "batch_norm", 1, (0, 1, 2, 3, 4)
    torch_name = "NativeBatchNormBackward0"  # PyTorch's node name

    @staticmethod
    def _axes(ndim):
        return (0,) + tuple(range(2, ndim))

    @staticmethod
    def _per_channel(op, v, ndim):
        """A (C,) parameter shaped to broadcast against (N, C, ...)."""
        return op(v, tuple(range(1, ndim - 1))) if ndim > 2 else v

    def forward(self, xp, x, *params, training=True, affine=True, eps=1e-5, ndim=None):
        nd = x.ndim

        def expand(v, axes):
            return xp.reshape(v, (v.shape[0],) + (1,) * len(axes))

        _, w, b, mean, var = _bn_inputs((x, *params), training, affine)
        axes = self._axes(nd)
        if training and x.shape[1] and math.prod(x.shape) // x.shape[1] == 1:
            self.shape(tuple(x.shape), *(tuple(p.shape) for p in params), training=training,
                       affine=affine)  # fmt: skip  (raises: one value per channel)
        if training and xp is _np and _same_float(x, *params):
            return _train_forward_arrays(x, w, b, axes, eps)  # the same bits, fewer arrays
        if training:
            y = _normalize(xp, x, axes, eps)
        else:
            m, v = self._per_channel(expand, mean, nd), self._per_channel(expand, var, nd)
            y = (x - m) * (1.0 / xp.sqrt(v + eps))
        if affine:
            y = y * self._per_channel(expand, w, nd) + self._per_channel(expand, b, nd)
        return y

    def shape(self, xshape, *pshapes, training=True, affine=True, eps=1e-5, ndim=None):
        if len(xshape) < 2 or (ndim is not None and len(xshape) != ndim):
            raise ShapeError(
                f"batch_norm: expects an input (N, C), (N, C, L) or (N, C, H, W), got shape "
                f"{tuple(xshape)}" + (f" (declared with {ndim} axes)" if ndim else "")
            )
        want = 2 * affine + 2 * (not training)
        if len(pshapes) != want:
            raise ValueError(
                f"batch_norm: with training={training}, affine={affine} it takes {want} "
                f"parameter inputs after x, got {len(pshapes)}"
            )
        C = xshape[1]
        for s in pshapes:
            if tuple(s) != (C,):
                raise ShapeError(
                    f"batch_norm: input {tuple(xshape)} has {C} channels (axis 1), so every "
                    f"parameter and running statistic must have shape ({C},); got "
                    f"{fmt_shapes(pshapes)}"
                )
        if training and xshape[0] * math.prod(xshape[2:]) == 1:
            raise ValueError(
                f"batch_norm: expected more than 1 value per channel when training, got input "
                f"of shape {tuple(xshape)}; use a batch of 2 or more (or eval mode)"
            )
        return tuple(xshape)

    def vjp(self, F, g, inputs, out, shapes, needs, training=True, affine=True, eps=1e-5,
            ndim=None):  # fmt: skip
        nd = ndim if ndim is not None else len(shapes[0])
        axes = self._axes(nd)
        x, w, b, mean, var = _bn_inputs(inputs, training, affine)
        if (training and type(F) is RawFunctional and _same_float(x, g, *inputs[1:])
                and g.shape == x.shape):  # fmt: skip
            return _train_vjp_arrays(g, x, w, axes, eps, needs)  # the same bits, fewer arrays

        def expand(v, axes_):
            return F.expand_dims(v, axis=axes_)

        gh = g * self._per_channel(expand, w, nd) if affine else g
        if training:
            xhat, rstd = _stats_f(F, x, axes, eps)
            gx = _through_stats(F, gh, xhat, rstd, axes) if needs[0] else None
        else:
            rstd = (self._per_channel(expand, var, nd) + eps) ** -0.5
            xhat = (x - self._per_channel(expand, mean, nd)) * rstd
            gx = gh * rstd if needs[0] else None
        grads = [gx]
        k = 1
        if affine:
            grads.append(F.sum(g * xhat, axis=axes) if needs[1] else None)
            grads.append(F.sum(g, axis=axes) if needs[2] else None)
            k = 3
        if not training:
            grads.append(-F.sum(gh * rstd, axis=axes) if needs[k] else None)
            gv = F.sum(gh * xhat, axis=axes) * -0.5 / (var + eps) if needs[k + 1] else None
            grads.append(gv)
        return tuple(grads)

    def onnx(self, ex, node, args):
        a = node.attrs
        rank = len(ex.need_shape(node.inputs[0], "batch_norm"))
        shape = ex.const([1, -1] + [1] * (rank - 2), "channel", "int64")
        pre, params = [], []
        for p in args[1:]:
            name, n = ex.node("Reshape", [p, shape], "per_channel")
            pre.append(n)
            params.append(name)
        affine, training = a.get("affine", True), a.get("training", True)
        w, b = params[:2] if affine else (None, None)
        extra = [("Mul", ["{6}", w], {}), ("Add", ["{7}", b], {})] if affine else []
        if training:
            nodes, name = ex.normalized(node, args[0], [0, *range(2, rank)],
                                           a.get("eps", 1e-5), extra)  # fmt: skip
            return pre + nodes, name
        mean, var = params[-2:]
        e = ex.like(a.get("eps", 1e-5), node, "eps")
        steps = [("Sub", [args[0], mean], {}), ("Add", [var, e], {}), ("Sqrt", ["{1}"], {}),
                 ("Reciprocal", ["{2}"], {}), ("Mul", ["{0}", "{3}"], {})]  # fmt: skip
        if affine:
            steps += [("Mul", ["{4}", w], {}), ("Add", ["{5}", b], {})]
        nodes, name = ex.chain(steps, "batch_norm")
        return pre + nodes, name


# -- the layer functions (see tinygrad_edu.ops.layer_surface) -----------------------------------
_BATCH_NORM = ("batch_norm(input, running_mean, running_var, weight=None, bias=None, "
               "training=False, momentum=0.1, eps=1e-05)")  # fmt: skip
_WEIGHT_WORDS = {"weight", "bias", "gamma", "beta", "scale", "shift"}
_STAT_WORDS = {"running", "mean", "var", "moving", "rm", "rv", "stats"}


def _words(x) -> set:
    name = getattr(x, "name", None)
    return set(re.split(r"[^a-z]+", name.lower())) if isinstance(name, str) else set()


def _old_symbolic_order(running_mean, running_var, weight, bias) -> None:
    """Until the next release: the symbolic ``batch_norm`` took ``(x, weight, bias,
    running_mean, running_var, training=True)``. A call in that order names a weight where a
    running statistic now goes (or the reverse): say so, naming the new order."""
    for what, arg, words in (("running_mean", running_mean, _WEIGHT_WORDS),
                             ("running_var", running_var, _WEIGHT_WORDS),
                             ("weight", weight, _STAT_WORDS),
                             ("bias", bias, _STAT_WORDS)):  # fmt: skip
        if _words(arg) & words:
            raise TypeError(
                f"batch_norm: {arg.name!r} was passed as {what}; the arguments are PyTorch's "
                f"now, {_BATCH_NORM} (the symbolic engine took weight and bias first until "
                "this release, see the changelog): e.g. batch_norm(x, None, None, weight, bias, "
                "training=True)"
            )


def batch_norm_layer(engine):
    apply, value = engine.apply, engine.value
    op = REGISTRY["batch_norm"]

    def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
                   momentum=0.1, eps=1e-05, *, ndim=None):  # fmt: skip
        r"""Normalise each channel (axis 1) of ``input`` (N, C), (N, C, L) or (N, C, H, W).

        In training (``training=True``) the batch's mean and (biased) variance are used, and
        the running statistics, when given, are updated in place as PyTorch does:
        $\hat\mu \leftarrow (1-m)\hat\mu + m\,\mu_B$ and
        $\hat\sigma^2 \leftarrow (1-m)\hat\sigma^2 + m\,\frac{n}{n-1}\sigma_B^2$ (the unbiased
        variance; $m$ = ``momentum``). In evaluation the running statistics are used. (A
        symbolic graph has no side effects: there, training takes None for both, and the
        update is built as nodes of its own.) ``ndim``, the rank of ``input``, is needed only
        for a symbolic input whose shape is not declared.

        >>> import tinygrad_edu as tg
        >>> x = tg.tensor([[1.0], [3.0]])
        >>> rm, rv = tg.zeros(1), tg.ones(1)
        >>> batch_norm(x, rm, rv, training=True, eps=0.0).tolist()
        [[-1.0], [1.0]]
        >>> rm.numpy().round(4), rv.numpy().round(4)  # mean 2, unbiased variance 2, momentum 0.1
        (array([0.2], dtype=float32), array([1.1], dtype=float32))
        """
        x = value("batch_norm", "input", input)
        if engine.update_running_stats is None:
            _old_symbolic_order(running_mean, running_var, weight, bias)
        shape = known_shape(x)
        if shape is None and ndim is None:
            raise ValueError(
                f"batch_norm: the rank of {getattr(x, 'name', 'the input')!r} is unknown; "
                "declare its shape (Variable(name, shape=...)) or pass ndim=, e.g. ndim=4 for "
                "(N, C, H, W)"
            )
        if shape is not None and len(shape) < 2:
            raise ShapeError(f"batch_norm: expects an input (N, C, ...), got shape {shape}")
        stats = [value("batch_norm", what, s) for what, s in
                 (("running_mean", running_mean), ("running_var", running_var))
                 if s is not None]  # fmt: skip
        for s in stats:
            if shape is not None and known_shape(s) not in (None, (shape[1],)):
                raise ShapeError(
                    f"batch_norm: running statistics must be tensors of shape ({shape[1]},) "
                    f"for an input {shape}; got {known_shape(s)}"
                )
        if len(stats) == 1:
            raise ValueError("batch_norm: give both running_mean and running_var, or neither")
        if not training and not stats:
            raise ValueError(
                "batch_norm: running_mean and running_var must be given in evaluation mode "
                "(training=False); pass training=True to use the batch's statistics"
            )
        if weight is None and bias is not None:
            weight = engine.full_like(value("batch_norm", "bias", bias), 1.0)
        if bias is None and weight is not None:
            bias = engine.full_like(value("batch_norm", "weight", weight), 0.0)
        affine = weight is not None
        args = [x]
        if affine:
            args += [value("batch_norm", "weight", weight), value("batch_norm", "bias", bias)]
        if not training:
            args += stats
        elif stats:
            if engine.update_running_stats is None:
                raise side_effect_error(
                    engine, "batch_norm", "training=True with running_mean and running_var",
                    "pass None for both, batch_norm(x, None, None, weight, bias, training=True), "
                    "and build the update as nodes (the CNN of `tinygrad-edu demo` does). If these "
                    f"were the weight and bias: the arguments are PyTorch's now, {_BATCH_NORM}",
                )  # fmt: skip
            engine.update_running_stats(x, *stats, momentum)
        nd = int(ndim) if ndim is not None else len(shape)  # the op checks that they agree
        return apply(op, *args, training=bool(training), affine=affine, eps=float(eps), ndim=nd)

    return batch_norm


def layer_norm_layer(engine):
    apply, value = engine.apply, engine.value
    op = REGISTRY["layer_norm"]

    def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
        r"""Normalise over the last axes (``normalized_shape``), then scale by ``weight`` and
        shift by ``bias`` (both of ``normalized_shape``):
        $y = \frac{x - \mu}{\sqrt{\sigma^2+\epsilon}}\gamma + \beta$ per example.

        >>> import tinygrad_edu as tg
        >>> layer_norm(tg.tensor([[1.0, 3.0]]), (2,), eps=0.0).tolist()
        [[-1.0, 1.0]]
        """
        x = value("layer_norm", "input", input)
        norm = ((normalized_shape,) if isinstance(normalized_shape, int)
                else tuple(normalized_shape))  # fmt: skip
        k, shape = len(norm), known_shape(x)
        if k == 0 or (shape is not None and (k > len(shape) or shape[len(shape) - k :] != norm)):
            raise ShapeError(
                f"layer_norm: normalized_shape {norm} must equal the last axes of the input, "
                f"whose shape is {shape}"
            )
        if weight is None and bias is not None:
            weight = engine.full_like(value("layer_norm", "bias", bias), 1.0)
        args = [x] + [value("layer_norm", what, t) for what, t in
                      (("weight", weight), ("bias", bias)) if t is not None]  # fmt: skip
        return apply(op, *args, normalized_ndim=k, eps=float(eps))

    return layer_norm


declare_layer("batch_norm", batch_norm_layer)
declare_layer("layer_norm", layer_norm_layer)


# -- group_norm and instance_norm (layer_norm of the input reshaped to (N, groups, -1), then the
# per-channel affine) and rms_norm ------------------------------------------------------------
def _affine(engine, opname, y, weight, bias, channels_axis_shape):
    channels = shape_of(opname, y)[1]
    for what, v in (("weight", weight), ("bias", bias)):
        vs = None if v is None else known_shape(engine.value(opname, what, v))
        if vs is not None and vs != (channels,):
            raise RuntimeError(f"{opname}: expected {what} of shape ({channels},), one per "
                               f"channel of the input {tuple(shape_of(opname, y))}, got {vs}")
    if weight is not None:
        w = _reshape(engine, engine.value(opname, "weight", weight), channels_axis_shape)
        y = engine.apply(REGISTRY["mul"], y, w)
    if bias is not None:
        b = _reshape(engine, engine.value(opname, "bias", bias), channels_axis_shape)
        y = engine.apply(REGISTRY["add"], y, b)
    return y


def group_norm_layer(engine):
    def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
        """Normalise each example's channels in ``num_groups`` groups (over the group's
        channels and the pixels), then scale and shift per channel: ``layer_norm`` of the
        input reshaped to ``(N, num_groups, -1)``.

        >>> import tinygrad_edu as tg
        >>> group_norm(tg.tensor([[[1.0], [3.0]]]), 1, eps=0.0).tolist()
        [[[-1.0], [1.0]]]
        """
        x = engine.value("group_norm", "input", input)
        shape = shape_of("group_norm", x)
        if len(shape) < 2 or shape[1] % int(num_groups):
            raise RuntimeError(f"group_norm: expected an input (N, C, *) with C divisible by "
                               f"num_groups={num_groups}, got shape {tuple(shape)}")  # fmt: skip
        y = engine.apply(REGISTRY["layer_norm"], _reshape(engine, x, (shape[0], num_groups, -1)),
                         normalized_ndim=1, eps=float(eps))  # fmt: skip
        y = _reshape(engine, y, shape)
        return _affine(engine, "group_norm", y, weight, bias, (1, -1) + (1,) * (len(shape) - 2))

    return group_norm


def instance_norm_layer(engine):
    def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                      use_input_stats=True, momentum=0.1, eps=1e-5):  # fmt: skip
        """Normalise each channel of each example over its pixels (``InstanceNorm1d/2d``):
        ``layer_norm`` of the input reshaped to ``(N, C, -1)``, then the per-channel affine.

        >>> import tinygrad_edu as tg
        >>> instance_norm(tg.tensor([[[1.0, 3.0]]]), eps=0.0).tolist()
        [[[-1.0, 1.0]]]
        """
        x = engine.value("instance_norm", "input", input)
        shape = shape_of("instance_norm", x)
        if running_mean is not None or running_var is not None or not use_input_stats:
            raise NotImplementedError(
                "instance_norm: running statistics (track_running_stats=True) are not "
                "supported; use PyTorch's default track_running_stats=False"
            )
        if len(shape) < 3:
            raise ShapeError(f"instance_norm: expects an input (N, C, *) with at least one "
                             f"spatial axis, got shape {tuple(shape)}")  # fmt: skip
        y = engine.apply(REGISTRY["layer_norm"], _reshape(engine, x, (shape[0], shape[1], -1)),
                         normalized_ndim=1, eps=float(eps))  # fmt: skip
        y = _reshape(engine, y, shape)
        return _affine(engine, "instance_norm", y, weight, bias,
                       (1, -1) + (1,) * (len(shape) - 2))  # fmt: skip

    return instance_norm


def rms_norm_layer(engine):
    def rms_norm(input, normalized_shape, weight=None, eps=None):
        r"""$y = x / \sqrt{\mathrm{mean}(x^2) + \epsilon}\cdot w$ over the last
        ``normalized_shape`` axes; ``eps`` defaults to the dtype's machine epsilon, as
        PyTorch's.

        >>> import tinygrad_edu as tg
        >>> rms_norm(tg.tensor([[3.0, -3.0]]), (2,), eps=0.0).tolist()
        [[1.0, -1.0]]
        """
        x = engine.value("rms_norm", "input", input)
        shape = shape_of("rms_norm", x)
        ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        if not ns or tuple(shape[len(shape) - len(ns):]) != ns or len(ns) > len(shape):
            raise RuntimeError(f"rms_norm: normalized_shape {list(ns)} must be the last axes of "
                               f"the input, got shape {tuple(shape)}")  # fmt: skip
        if eps is None:
            dtype = getattr(x, "dtype", None)
            eps = float(_np.finfo(str(dtype) if dtype is not None else "float32").eps)
        apply = engine.apply
        ms = apply(REGISTRY["mean"], apply(REGISTRY["mul"], x, x),
                   axis=tuple(range(-len(ns), 0)), keepdims=True)  # fmt: skip
        y = apply(REGISTRY["mul"], x, apply(REGISTRY["rsqrt"], apply(REGISTRY["add"], ms,
                                                                     float(eps))))  # fmt: skip
        if weight is not None:
            y = apply(REGISTRY["mul"], y, engine.value("rms_norm", "weight", weight))
        return y

    return rms_norm


declare_layer("group_norm", group_norm_layer)
declare_layer("instance_norm", instance_norm_layer)
declare_layer("rms_norm", rms_norm_layer)
