r"""Layer surfaces: one declaration per layer function gives it to both engines.

The layer functions of ``nn.functional`` (``conv2d``, ``max_pool2d``, ``avg_pool2d``,
``adaptive_avg_pool2d``, ``pad``, ``batch_norm``, ``layer_norm``, ``embedding``, ``dropout``)
check and normalise PyTorch's arguments, then apply one op (or a few). Each is declared once,
beside its op (``ops/conv.py``, ``ops/pooling.py`` ...), as a *template*: a function of an
:class:`Engine` that returns the public function, with PyTorch's signature (names, order,
defaults). The eager engine's ``tg.nn.functional.conv2d`` and the symbolic engine's
``symbolic.conv2d`` are the same template run with two engines, so their signatures cannot
drift apart (as the elementwise ops' surfaces, :mod:`tinygrad_edu.ops.surface`).

>>> from tinygrad_edu.ops.layer_surface import LAYERS
>>> [name for name in sorted(LAYERS) if name.endswith("pool2d")]
['adaptive_avg_pool2d', 'adaptive_max_pool2d', 'avg_pool2d', 'max_pool2d']

What differs between the engines is small and named in :class:`Engine`: how an argument
becomes the engine's value, a constant made alongside, and the side effects PyTorch's functions
have (``batch_norm`` updating running statistics, ``embedding``'s ``max_norm``, in-place
``dropout``), which a symbolic graph cannot have: there the hook is ``None`` and the template
says so in an error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as _np  # index and weight tables (constants of the graph), no math on values

from .base import REGISTRY, ShapeError

__all__ = [
    "Engine", "LAYERS", "declare_layer", "generate_layers", "known_shape", "side_effect_error",
]  # fmt: skip


class Engine(NamedTuple):
    """What an engine hands the layer templates.

    Attributes:
        name: ``"eager"`` or ``"symbolic"`` (for messages).
        apply: ``apply(op, *inputs, **attrs)``: run (eager) or build (symbolic) one op.
        value: ``value(opname, what, x)``: ``x`` as the engine's value (a ``Tensor``, a
            ``Node``), or a ``TypeError`` naming the op and the argument.
        full_like: ``full_like(x, v)``: a constant shaped like ``x`` holding ``v``, with no
            gradient (a missing ``weight`` or ``bias``).
        index: ``index(x, ints)``: an integer index array for ``x`` (on its device).
        indices: ``indices(ints, like)``: integer indices (a list or an array) as the engine's
            value, on ``like``'s device (``embedding``'s ``input``).
        update_running_stats: ``(x, running_mean, running_var, momentum)``: PyTorch's
            in-place update in training; None where values cannot change (symbolic).
        renorm_rows: ``(indices, weight, max_norm, norm_type)``: ``embedding``'s in-place
            renormalisation; None where values cannot change.
        dropout_mask: ``(x, p)``: the kept elements' scale, ``1/(1-p)`` or 0, shaped like ``x``.
        mul_: ``(x, y)``: ``x *= y`` in place; None where values cannot change.
    """

    name: str
    apply: Callable
    value: Callable
    full_like: Callable
    index: Callable
    indices: Callable
    update_running_stats: Callable | None
    renorm_rows: Callable | None
    dropout_mask: Callable
    mul_: Callable | None


#: layer function name -> its template (``template(engine) -> function``)
LAYERS: dict[str, Callable] = {}


def declare_layer(name: str, template: Callable) -> None:
    """Declare the layer function ``name`` (called beside the op it applies)."""
    if name in LAYERS:
        raise ValueError(f"layer function {name!r} is declared twice")
    LAYERS[name] = template


def generate_layers(engine: Engine) -> dict:
    """Every declared layer function for ``engine``: a dict name -> function."""
    out = {}
    for name, template in LAYERS.items():
        fn = template(engine)
        fn.__name__ = fn.__qualname__ = name
        out[name] = fn
    return out


def known_shape(x):
    """``x.shape`` as a tuple, or None where a symbolic node's shape is not declared."""
    shape = getattr(x, "shape", None)
    return None if shape is None else tuple(shape)


def side_effect_error(engine: Engine, opname: str, what: str, fix: str) -> Exception:
    """The error for a side effect a symbolic graph cannot have."""
    return NotImplementedError(
        f"{opname}: {what} changes a tensor in place, which a {engine.name} graph cannot do "
        f"(running it must not change its inputs); {fix}"
    )


# -- what several layer templates use ----------------------------------------------------------
def _reshape(engine, x, shape):
    return engine.apply(REGISTRY["reshape"], x, shape=tuple(shape))


def _const(engine, x, values):
    """``values`` as a constant of ``x``'s dtype and device (no gradient)."""
    dtype = getattr(x, "dtype", None)
    arr = _np.asarray(values, dtype=str(dtype) if dtype is not None else "float32")
    return engine.indices(arr, x)


def _via(opname, how, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with a shape error renamed: it names ``opname`` and how it is
    computed (``conv1d`` as ``conv2d`` of a height-1 image: the shapes are the 4-D ones)."""
    try:
        return fn(*args, **kwargs)
    except ShapeError as e:
        raise ShapeError(f"{opname} (computed as {how}): {e}") from e


def _ndim_check(opname, shape, nd, what):
    """True for one example (``nd`` axes), False for a batch (``nd + 1``), else an error."""
    if len(shape) not in (nd, nd + 1):
        raise ShapeError(f"{opname}: expects an input {what} (with or without the batch axis), "
                         f"got shape {tuple(shape)}")  # fmt: skip
    return len(shape) == nd


def _one(opname, what, value, minimum=1):
    """An int, or a 1-tuple of one, at least ``minimum``."""
    if isinstance(value, (tuple, list)) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{opname}: {what} must be an int >= {minimum} (or a 1-tuple), got "
                         f"{value!r}")  # fmt: skip
    return value



def _layer(engine, name):
    """The layer function ``name`` for ``engine`` (a layer written with another: ``conv1d``
    with ``conv2d``)."""
    return LAYERS[name](engine)
