r"""Dropout: ``dropout`` zeroes each element with probability ``p``, ``dropout1d``/``2d``/``3d``
whole channels (each ``(N, C)`` map), and both scale what they keep by ``1/(1-p)`` so the
expected value is unchanged. In evaluation (``training=False``) they are the identity.

The mask comes from the engine (``engine.dropout_mask``): the eager engine draws it from the
library's generator, a symbolic graph has a ``uniform_random`` node that draws it afresh at
every run. Declared once for both engines (see :mod:`tinygrad_edu.ops.layer_surface`).
"""

from __future__ import annotations

from .base import REGISTRY, ShapeError
from .layer_surface import declare_layer, side_effect_error
from .surface import shape_of


def dropout_layer(engine):
    mul = REGISTRY["mul"]

    def dropout(input, p=0.5, training=True, inplace=False):
        """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``, so the
        expected value is unchanged; the identity when not ``training``. (In a symbolic graph
        the mask is drawn afresh at every run: a ``uniform_random`` node.)

        >>> import tinygrad_edu as tg
        >>> dropout(tg.ones(4), p=0.5, training=False).tolist()
        [1.0, 1.0, 1.0, 1.0]
        """
        if not 0 <= p <= 1:
            raise ValueError(f"dropout: p must be in [0, 1], got {p}")
        if not training or p == 0:
            return input
        x = engine.value("dropout", "input", input)
        mask = engine.dropout_mask(x, p)
        if inplace:
            if engine.mul_ is None:
                raise side_effect_error(engine, "dropout", "inplace=True", "pass inplace=False")
            return engine.mul_(x, mask)
        return engine.apply(mul, x, mask)

    return dropout



def _dropout_channels_layer(name, nd):
    def template(engine):
        def dropout_channels(input, p=0.5, training=True, inplace=False):
            x = engine.value(name, "input", input)
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"{name}: dropout probability has to be between 0 and 1, "
                                 f"but got {p}")  # fmt: skip
            shape = shape_of(name, x)
            if len(shape) not in (nd + 1, nd + 2):
                raise ShapeError(f"{name}: expects an input with {nd + 1} or {nd + 2} axes "
                                 f"(channels, then {nd} spatial), got shape {tuple(shape)}")
            if not training or p == 0.0:
                return x
            spatial = tuple(range(-nd, 0))
            like = engine.apply(REGISTRY["mean"], x, axis=spatial, keepdims=True)
            mask = engine.dropout_mask(like, p)
            if inplace:
                if engine.mul_ is None:
                    raise side_effect_error(engine, name, "inplace=True", "pass inplace=False")
                return engine.mul_(x, mask)
            return engine.apply(REGISTRY["mul"], x, mask)

        dropout_channels.__doc__ = (
            f"Zero whole channels (each ``(N, C)`` {nd}-D map) with probability ``p`` and scale "
            "the rest by ``1/(1-p)``, in training (``training=True``, the default of the "
            "function); the identity otherwise."
        )
        return dropout_channels

    return template


declare_layer("dropout", dropout_layer)
declare_layer("dropout1d", _dropout_channels_layer("dropout1d", 1))
declare_layer("dropout2d", _dropout_channels_layer("dropout2d", 2))
declare_layer("dropout3d", _dropout_channels_layer("dropout3d", 3))
