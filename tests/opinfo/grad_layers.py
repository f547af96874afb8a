"""Cases for the layer ops (convolution, pooling, padding, normalisation, embedding) in the
per-op table (``grad_core.py``): every engine's central-difference tests run them.

The layer functions have different homes in the two engines (``tinygrad_edu.symbolic`` builds
nodes, ``tinygrad_edu.nn.functional`` applies ops to tensors), so each build goes through
:func:`_layers`, and the gradient ops, which have no public function, through :func:`_op`.
Shapes stay tiny: central differences evaluate the function twice per input element.

Import it through ``tests.opinfo.grad_core`` (which imports this module at its end).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.opinfo.grad_core import Case, Example, _distinct, _normal, _positive, _seeds
from tests.ops.layer_configs import CONV_CONFIGS, POOL_CONFIGS

__all__ = ["LAYER_CASES", "LAYER_SECOND_ORDER", "CONV_CONFIGS", "POOL_CONFIGS"]


def _is_symbolic(M) -> bool:
    return M.__name__.startswith("tinygrad_edu.symbolic")


def _layers(M):
    """The layer functions of ``M``'s engine."""
    if _is_symbolic(M):
        import tinygrad_edu.symbolic as S

        return S
    import tinygrad_edu.nn.functional as F

    return F


def _op(M, name, *args, **attrs):
    """Apply a registry op (one without a public function) in ``M``'s engine."""
    if _is_symbolic(M):
        from tinygrad_edu.symbolic import apply_op

        return apply_op(name, *args, **attrs)
    import tinygrad_edu as tg
    from tinygrad_edu.eager import apply_op
    from tinygrad_edu.ops import REGISTRY

    args = [tg.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    return apply_op(REGISTRY[name], *args, **attrs)


def _const(M, a):
    """An integer array as a constant input of ``M``'s engine (indices)."""
    if _is_symbolic(M):
        return a
    import tinygrad_edu as tg

    return tg.tensor(a)


def _conv_attrs(cfg):
    *_, k, s, p, d, g = cfg
    return dict(stride=s, padding=p, dilation=d, groups=g)


def _shapes(cfg):
    N, C, H, W, O, k, s, p, d, g = cfg
    oh = (H + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (W + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    return (N, C, H, W), (O, C // g, *k), (N, O, oh, ow)


@st.composite
def _conv(draw, which="conv2d"):
    cfg = draw(st.sampled_from(CONV_CONFIGS))
    rng = np.random.default_rng(draw(_seeds))
    xs, ws, ys = _shapes(cfg)
    attrs = _conv_attrs(cfg)
    if which == "conv2d":
        return Example([_normal(rng, s) for s in (xs, ws, ys[1:2])], attrs)
    if which == "input_grad":
        return Example([_normal(rng, ys), _normal(rng, ws)], {**attrs, "shape": xs})
    return Example([_normal(rng, xs), _normal(rng, ys)], {**attrs, "shape": ws})


def _pool_out(cfg):
    import tinygrad_edu.ops.pooling as P

    shape, k, s, p, d, ceil = cfg
    oh, ow = P.pool_output_hw("test", shape, k, s or k, p, d, ceil)
    return tuple(shape[:-2]) + (oh, ow)


@st.composite
def _pool(draw, kind="max", with_grad=False):
    cfg = draw(st.sampled_from(POOL_CONFIGS))
    shape, k, s, p, d, ceil = cfg
    rng = np.random.default_rng(draw(_seeds))
    attrs = dict(kernel_size=k, stride=s, padding=p, ceil_mode=ceil)
    if kind == "max":
        attrs["dilation"] = d
    else:
        attrs["count_include_pad"] = draw(st.booleans())
    x = _distinct(rng, shape) if kind == "max" else _normal(rng, shape)
    arrays = [x]
    if with_grad == "out":
        arrays.append(_normal(rng, _pool_out((shape, k, s, p, d if kind == "max" else (1, 1),
                                              ceil))))  # fmt: skip
    elif with_grad == "like_x":
        arrays.append(_normal(rng, shape))
    return Example(arrays, attrs)


@st.composite
def _avg_grad(draw):
    ex = draw(_pool("avg"))
    shape = ex.arrays[0].shape
    attrs = ex.extra
    out = _pool_out((shape, attrs["kernel_size"], attrs["stride"], attrs["padding"], (1, 1),
                     attrs["ceil_mode"]))  # fmt: skip
    rng = np.random.default_rng(draw(_seeds))
    return Example([_normal(rng, out)], {**attrs, "shape": shape})


@st.composite
def _pad(draw):
    shape = draw(st.sampled_from([(2, 3), (1, 2, 3, 4), (3,)]))
    n = draw(st.integers(1, len(shape)))
    pads = []
    for k in range(n):  # (left, right) for the last axis first; cropping never empties an axis
        size = shape[-1 - k]
        left = draw(st.integers(-1 if size > 1 else 0, 2))
        pads += [left, draw(st.integers(max(-1, 1 - size - left), 2))]
    pads = tuple(pads)
    rng = np.random.default_rng(draw(_seeds))
    return Example([_normal(rng, shape)], {"pad": pads, "value": draw(st.sampled_from([0, 1.5]))})


@st.composite
def _norm(draw, kind):
    rng = np.random.default_rng(draw(_seeds))
    if kind == "layer":
        shape, k = draw(st.sampled_from([((3, 4), 1), ((2, 2, 3), 2), ((2, 3, 2), 1)]))
        norm = shape[len(shape) - k :]
        affine = draw(st.sampled_from(["both", "weight", "none"]))
        arrays = [_normal(rng, shape)]
        if affine != "none":
            arrays.append(_positive(rng, norm))
        if affine == "both":
            arrays.append(_normal(rng, norm))
        return Example(arrays, {"normalized_shape": norm})
    shape = draw(st.sampled_from([(4, 3), (3, 2, 3), (2, 2, 2, 3)]))
    C = shape[1]
    training = draw(st.booleans())
    arrays = [_normal(rng, shape) * 2 + 1, _positive(rng, (C,)), _normal(rng, (C,))]
    if not training:
        arrays += [_normal(rng, (C,)), _positive(rng, (C,))]
    return Example(arrays, {"training": training, "ndim": len(shape)})


@st.composite
def _embedding(draw, grad=False):
    rng = np.random.default_rng(draw(_seeds))
    V, D = draw(st.sampled_from([(5, 3), (4, 1)]))
    idx_shape = draw(st.sampled_from([(3,), (2, 3)]))
    idx = rng.integers(0, V, idx_shape)
    idx.reshape(-1)[0] = idx.reshape(-1)[-1]  # a repeated row: its gradients add up
    # padding_idx deliberately withholds a gradient (not the true derivative), so only the
    # gradient op, a plain linear function of g, is checked with it here
    pad_idx = draw(st.sampled_from([None, int(idx.reshape(-1)[1])])) if grad else None
    extra = {"idx": idx, "padding_idx": pad_idx}
    if grad:
        return Example([_normal(rng, idx_shape + (D,))], {**extra, "shape": (V, D)})
    return Example([_normal(rng, (V, D))], extra)


def _batch_norm(M, x, w, b, *stats, training, ndim):
    """One call for both engines (one signature); ``ndim`` is for the symbolic engine, where an
    undeclared shape says nothing of the rank."""
    return _layers(M).batch_norm(x, *(stats or (None, None)), w, b, training=training, ndim=ndim)


def _layer_norm(M, x, *wb, normalized_shape):
    return _layers(M).layer_norm(x, normalized_shape, *wb)


LAYER_CASES: list[Case] = [
    Case("conv2d", ("conv2d",),
         lambda M, x, w, b, **k: _layers(M).conv2d(x, w, b, **k), _conv()),
    Case("conv2d_no_bias", ("conv2d",),
         lambda M, x, w, b, **k: _layers(M).conv2d(x, w, None, **k) * 1.0 + b.sum() * 0.0,
         _conv()),
    Case("conv2d_input_grad", ("conv2d_input_grad",),
         lambda M, g, w, **k: _op(M, "conv2d_input_grad", g, w, **k), _conv("input_grad")),
    Case("conv2d_weight_grad", ("conv2d_weight_grad",),
         lambda M, x, g, **k: _op(M, "conv2d_weight_grad", x, g, **k), _conv("weight_grad")),
    Case("max_pool2d", ("max_pool2d",),
         lambda M, x, **k: _layers(M).max_pool2d(x, **k), _pool("max")),
    Case("max_pool2d_grad", ("max_pool2d_grad",),
         lambda M, x, g, **k: _op(M, "max_pool2d_grad", x, g, **k), _pool("max", "out")),
    Case("max_pool2d_select", ("max_pool2d_select",),
         lambda M, x, v, **k: _op(M, "max_pool2d_select", x, v, **k), _pool("max", "like_x")),
    Case("avg_pool2d", ("avg_pool2d",),
         lambda M, x, **k: _layers(M).avg_pool2d(x, **k), _pool("avg")),
    Case("avg_pool2d_grad", ("avg_pool2d_grad",),
         lambda M, g, **k: _op(M, "avg_pool2d_grad", g, **k), _avg_grad()),
    Case("pad", ("pad",), lambda M, x, **k: _layers(M).pad(x, k["pad"], value=k["value"]),
         _pad()),
    Case("layer_norm", ("layer_norm",), _layer_norm, _norm("layer")),
    Case("batch_norm", ("batch_norm",), _batch_norm, _norm("batch")),
    Case("embedding", ("embedding",),
         lambda M, w, idx, padding_idx: _layers(M).embedding(_const(M, idx), w,
                                                            padding_idx=padding_idx),
         _embedding()),
    Case("embedding_grad", ("embedding_grad",),
         lambda M, g, idx, padding_idx, shape: _op(M, "embedding_grad", _const(M, idx), g,
                                                   shape=shape, padding_idx=padding_idx),
         _embedding(grad=True)),
]  # fmt: skip

LAYER_SECOND_ORDER = ("conv2d", "max_pool2d", "layer_norm", "batch_norm", "conv2d_input_grad")


# -- one example per layer op for tests/ops/test_strict_namespace.py: (inputs, attrs) ---------
_r = np.random.default_rng(2)
_x, _w = _r.standard_normal((2, 4, 5, 6)), _r.standard_normal((6, 2, 3, 2))
_conv_kw = dict(stride=(2, 1), padding=(1, 1), dilation=(1, 2), groups=2)
_g = _r.standard_normal((2, 6, 3, 6))
_pool_kw = dict(kernel_size=(3, 2), stride=(2, 2), padding=(1, 1), ceil_mode=True)
_px = _distinct(_r, (2, 3, 5, 6))
_pg = _r.standard_normal((2, 3, 3, 4))
_idx = np.array([[1, 0, 1], [3, 3, 2]])

LAYER_EXAMPLES = {
    "conv2d": ((_x, _w, _r.standard_normal(6)), _conv_kw),
    # stride 1 here (col2im on the padded grid); conv2d's own rule above runs the strided path
    "conv2d_input_grad": ((_r.standard_normal((2, 6, 5, 6)), _w),
                          {**_conv_kw, "stride": (1, 1), "shape": _x.shape}),
    "conv2d_weight_grad": ((_x, _g), {**_conv_kw, "shape": _w.shape}),
    "max_pool2d": ((_px,), {**_pool_kw, "dilation": (1, 1)}),
    "max_pool2d_grad": ((_px, _pg), {**_pool_kw, "dilation": (1, 1)}),
    "max_pool2d_select": ((_px, _x[:, :3]), {**_pool_kw, "dilation": (1, 1)}),
    "avg_pool2d": ((_x,), {**_pool_kw, "count_include_pad": False}),
    "avg_pool2d_grad": ((_r.standard_normal((2, 4, 3, 4)),),
                        {**_pool_kw, "count_include_pad": False, "shape": _x.shape}),
    "pad": ((_x,), {"pad": (1, -1, 2, 0), "value": 0.5}),
    "layer_norm": ((_x, _r.standard_normal((5, 6)), _r.standard_normal((5, 6))),
                   {"normalized_ndim": 2, "eps": 1e-5}),
    "batch_norm": ((_x, _r.standard_normal(4), _r.standard_normal(4), _r.standard_normal(4),
                    _r.uniform(0.5, 2, 4)), {"training": False, "affine": True, "ndim": 4}),
    "embedding": ((_idx, _r.standard_normal((4, 3))), {"padding_idx": 2}),
    "embedding_grad": ((_idx, _r.standard_normal((2, 3, 3))), {"shape": (4, 3),
                                                              "padding_idx": 2}),
}  # fmt: skip
__all__ += ["LAYER_EXAMPLES"]
