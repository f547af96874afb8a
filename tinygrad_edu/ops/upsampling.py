r"""Upsampling and rearranging pixels: ``interpolate`` and ``pixel_shuffle``/``pixel_unshuffle``,
layer functions composed of existing ops (so their gradients are those ops'), declared once for
both engines (see :mod:`tinygrad_edu.ops.layer_surface`).

* ``interpolate`` gathers rows (nearest) or blends two gathered rows per axis with constant
  weights (linear, bilinear), axis by axis;
* ``pixel_shuffle`` moves each ``r*r`` block of channels into an ``r x r`` block of pixels
  (a reshape, a permute and a reshape), ``pixel_unshuffle`` the other way.

>>> import tinygrad_edu as tg
>>> import tinygrad_edu.nn.functional as F
>>> F.interpolate(tg.tensor([[[1.0, 2.0]]]), scale_factor=2).tolist()
[[[1.0, 1.0, 2.0, 2.0]]]
"""

from __future__ import annotations

import math

import numpy as _np  # index and weight tables (constants of the graph), no math on values

from .base import REGISTRY
from .layer_surface import _const, _reshape, declare_layer
from .surface import shape_of

# -- interpolate ---------------------------------------------------------------------------------
_MODES = {"nearest": None, "linear": 1, "bilinear": 2, "trilinear": 3, "nearest-exact": None}


def _source(out, n, scale, align_corners, mode):
    """The source coordinate of each output position along an axis (PyTorch's formulas)."""
    i = _np.arange(out, dtype=_np.float64)
    if mode == "nearest":
        return _np.minimum(_np.floor(i * scale), n - 1).astype(_np.int64)
    if mode == "nearest-exact":
        return _np.minimum(_np.floor((i + 0.5) * scale), n - 1).astype(_np.int64)
    if align_corners:
        return i * ((n - 1) / (out - 1)) if out > 1 else _np.zeros(out)
    return _np.maximum((i + 0.5) * scale - 0.5, 0.0)


def interpolate_layer(engine):
    def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                    recompute_scale_factor=None, antialias=False):  # fmt: skip
        """Resize the spatial axes of ``input`` (N, C, ...) to ``size`` or by
        ``scale_factor``: ``mode`` ``"nearest"`` (and ``"nearest-exact"``) copies the source
        pixel, ``"linear"``/``"bilinear"``/``"trilinear"`` blends the two nearest along each
        axis, with PyTorch's ``align_corners`` (default False: pixel centres).

        >>> import tinygrad_edu as tg
        >>> interpolate(tg.tensor([[[0.0, 1.0]]]), size=3, mode="linear",
        ...             align_corners=True).tolist()
        [[[0.0, 0.5, 1.0]]]
        """
        x = engine.value("interpolate", "input", input)
        shape = shape_of("interpolate", x)
        nd = len(shape) - 2
        if mode not in _MODES:
            raise NotImplementedError(f"interpolate: mode {mode!r} is not supported; use one of "
                                      f"{sorted(_MODES)}")  # fmt: skip
        if nd < 1:
            raise ValueError(f"interpolate: expects an input (N, C, *spatial), got shape "
                             f"{tuple(shape)}")  # fmt: skip
        if _MODES[mode] is not None and _MODES[mode] != nd:
            raise NotImplementedError(
                f"interpolate: mode {mode!r} needs a {_MODES[mode] + 2}-D input, got "
                f"{nd + 2}-D (shape {tuple(shape)})"
            )
        if _MODES[mode] is None and align_corners is not None:
            raise ValueError("interpolate: align_corners option can only be set with the "
                             "interpolating modes: linear | bilinear | trilinear")  # fmt: skip
        if antialias:
            raise NotImplementedError("interpolate: antialias=True is not supported")
        if (size is None) == (scale_factor is None):
            raise ValueError("interpolate: either size or scale_factor should be defined "
                             "(and not both)")  # fmt: skip
        spatial = shape[2:]
        if size is not None:
            out = (size,) * nd if isinstance(size, int) else tuple(size)
            if len(out) != nd:
                raise ValueError(f"interpolate: size {size!r} must have {nd} elements for an "
                                 f"input of shape {tuple(shape)}")  # fmt: skip
            scales = [n / o for n, o in zip(spatial, out)]
        else:
            sf = (scale_factor,) * nd if isinstance(scale_factor, (int, float)) \
                else tuple(scale_factor)  # fmt: skip
            if len(sf) != nd:
                raise ValueError(f"interpolate: scale_factor {scale_factor!r} must have {nd} "
                                 f"elements for an input of shape {tuple(shape)}")  # fmt: skip
            out = tuple(int(math.floor(n * f)) for n, f in zip(spatial, sf))
            scales = [n / o if recompute_scale_factor else 1.0 / f
                      for n, o, f in zip(spatial, out, sf)]  # fmt: skip
        if min(out) < 1:
            raise ValueError(f"interpolate: the output size {out} must be positive")
        apply = engine.apply
        for a in range(nd):
            axis = 2 + a
            if out[a] == spatial[a] and (mode.startswith("nearest") or scales[a] == 1.0):
                continue
            src = _source(out[a], spatial[a], scales[a], bool(align_corners), mode)
            lead = (slice(None),) * axis
            if mode.startswith("nearest"):
                x = apply(REGISTRY["getitem"], x, index=lead + (engine.index(x, src),))
                continue
            i0 = _np.minimum(_np.floor(src).astype(_np.int64), spatial[a] - 1)
            i1 = _np.minimum(i0 + 1, spatial[a] - 1)
            lam = (src - i0).reshape((-1,) + (1,) * (nd - 1 - a))
            x0 = apply(REGISTRY["getitem"], x, index=lead + (engine.index(x, i0),))
            x1 = apply(REGISTRY["getitem"], x, index=lead + (engine.index(x, i1),))
            x = apply(REGISTRY["add"], apply(REGISTRY["mul"], x0, _const(engine, x, 1.0 - lam)),
                      apply(REGISTRY["mul"], x1, _const(engine, x, lam)))  # fmt: skip
        return x

    return interpolate


# -- pixel shuffles ------------------------------------------------------------------------------
def _shuffle(engine, name, input, r, up):
    x = engine.value(name, "input", input)
    xs = tuple(shape_of(name, x))
    what = "upscale_factor" if up else "downscale_factor"
    if isinstance(r, bool) or not isinstance(r, int) or r < 1:
        raise ValueError(f"{name}: {what} must be a positive int, got {r!r}")
    if len(xs) < 3:
        raise RuntimeError(f"{name}: expects an input (*, C, H, W), got shape {xs}")
    *lead, C, H, W = xs
    n = len(lead)
    if up:
        if C % (r * r):
            raise RuntimeError(f"{name}: the channels ({C}, shape {xs}) must be divisible by "
                               f"upscale_factor**2 = {r * r}")  # fmt: skip
        y = _reshape(engine, x, (*lead, C // (r * r), r, r, H, W))
        y = engine.apply(REGISTRY["permute"], y, axes=(*range(n), n, n + 3, n + 1, n + 4, n + 2))
        return _reshape(engine, y, (*lead, C // (r * r), H * r, W * r))
    if H % r or W % r:
        raise RuntimeError(f"{name}: height and width ({H}, {W}; shape {xs}) must be divisible "
                           f"by downscale_factor = {r}")  # fmt: skip
    y = _reshape(engine, x, (*lead, C, H // r, r, W // r, r))
    y = engine.apply(REGISTRY["permute"], y, axes=(*range(n), n, n + 2, n + 4, n + 1, n + 3))
    return _reshape(engine, y, (*lead, C * r * r, H // r, W // r))


def pixel_shuffle_layer(engine):
    def pixel_shuffle(input, upscale_factor):
        """``(*, C*r*r, H, W)`` -> ``(*, C, H*r, W*r)``: each group of ``r*r`` channels
        becomes an ``r``-by-``r`` block of pixels (a reshape and a permute).

        >>> import tinygrad_edu as tg
        >>> pixel_shuffle(tg.arange(4.0).reshape(1, 4, 1, 1), 2).tolist()
        [[[[0.0, 1.0], [2.0, 3.0]]]]
        """
        return _shuffle(engine, "pixel_shuffle", input, upscale_factor, True)

    return pixel_shuffle


def pixel_unshuffle_layer(engine):
    def pixel_unshuffle(input, downscale_factor):
        """``pixel_shuffle`` undone: ``(*, C, H*r, W*r)`` -> ``(*, C*r*r, H, W)``.

        >>> import tinygrad_edu as tg
        >>> pixel_unshuffle(tg.arange(4.0).reshape(1, 1, 2, 2), 2).flatten().tolist()
        [0.0, 1.0, 2.0, 3.0]
        """
        return _shuffle(engine, "pixel_unshuffle", input, downscale_factor, False)

    return pixel_unshuffle


declare_layer("pixel_shuffle", pixel_shuffle_layer)
declare_layer("pixel_unshuffle", pixel_unshuffle_layer)
declare_layer("interpolate", interpolate_layer)
