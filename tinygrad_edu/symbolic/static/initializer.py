r"""Parameters and their initialisers: what goes into the startup program.

The initialiser ops themselves live in the op library (:mod:`tinygrad_edu.ops.creation`).

In Fluid a parameter exists twice. The **startup program** holds its *initialiser*, an op
with no inputs (``fill_constant``, ``uniform_random``, ``gaussian_random``) whose value is
stored in the scope when the startup program runs, once. The **main program** holds a
persistable Variable of the same name, read from the scope at every run.

>>> import numpy as np
>>> from tinygrad_edu.symbolic import Program, program_guard
>>> main, startup = Program(), Program()
>>> with program_guard(main, startup):
...     w = create_parameter((2, 3), name="w", default_initializer=Uniform(-1, 1, seed=0))
...     b = create_parameter((3,), name="b")  # zeros by default for a 1-D parameter
>>> [u.value.op.name for u in startup.global_block().updates]
['uniform_random', 'fill_constant']
>>> w.persistable, [p.name for p in main.all_parameters()]
(True, ['w', 'b'])
"""

from __future__ import annotations

import math

import numpy as _np  # NumpyArrayInitializer keeps its value as a host array

from ..tensor_node import Node, Variable, apply_op, constant
from .program import Update, building_in, default_main_program, default_startup_program

__all__ = [
    "Initializer", "Constant", "Uniform", "Normal", "Xavier", "NumpyArrayInitializer",
    "create_parameter", "create_global_var", "data",
]  # fmt: skip


class Initializer:
    """Builds the startup-program node that makes a parameter's first value."""

    def __call__(self, shape, dtype: str) -> Node:
        raise NotImplementedError


class Constant(Initializer):
    """Every element ``value`` (Fluid's ``initializer.Constant``)."""

    def __init__(self, value: float = 0.0):
        self.value = value

    def __call__(self, shape, dtype):
        return _typed(apply_op("fill_constant", shape=tuple(shape), value=self.value,
                               dtype=dtype), dtype)  # fmt: skip


class Uniform(Initializer):
    """Uniform on $[low, high)$ (Fluid's ``initializer.Uniform``)."""

    def __init__(self, low: float = -1.0, high: float = 1.0, seed: int | None = None):
        self.low, self.high, self.seed = low, high, seed

    def __call__(self, shape, dtype):
        node = apply_op("uniform_random", shape=tuple(shape), low=self.low, high=self.high,
                        seed=self.seed, dtype=dtype)  # fmt: skip
        return _typed(node, dtype)


class Normal(Initializer):
    """Normal with mean ``loc`` and standard deviation ``scale`` (``initializer.Normal``)."""

    def __init__(self, loc: float = 0.0, scale: float = 1.0, seed: int | None = None):
        self.loc, self.scale, self.seed = loc, scale, seed

    def __call__(self, shape, dtype):
        node = apply_op("gaussian_random", shape=tuple(shape), mean=self.loc, std=self.scale,
                        seed=self.seed, dtype=dtype)  # fmt: skip
        return _typed(node, dtype)


class Xavier(Initializer):
    r"""Glorot's uniform: $\pm\sqrt{6/(n_{in}+n_{out})}$ for a 2-D ``(in, out)`` shape."""

    def __init__(self, seed: int | None = None):
        self.seed = seed

    def __call__(self, shape, dtype):
        fan_in, fan_out = (shape[0], shape[-1]) if len(shape) >= 2 else (shape[0], shape[0])
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        return Uniform(-limit, limit, self.seed)(shape, dtype)


class NumpyArrayInitializer(Initializer):
    """Exactly the given array (Fluid's ``assign`` of a numpy value)."""

    def __init__(self, value):
        self.value = _np.asarray(value)

    def __call__(self, shape, dtype):
        if tuple(self.value.shape) != tuple(shape):
            raise ValueError(f"NumpyArrayInitializer: the array has shape {self.value.shape}, "
                             f"the parameter {tuple(shape)}")  # fmt: skip
        return constant(self.value.astype(dtype))


def _typed(node: Node, dtype: str) -> Node:
    node.dtype = dtype
    return node


def _persistable(name: str, shape, dtype: str) -> Node:
    var = Variable(name, shape=tuple(shape), dtype=dtype)
    var.persistable = True
    return var


def create_global_var(shape, value: float, dtype: str = "float32", name: str | None = None,
                      initializer: Initializer | None = None) -> Node:  # fmt: skip
    """A persistable Variable in the main program, set by the startup program (to ``value``
    everywhere, or by ``initializer``): Fluid's ``create_global_var``. Optimizer state (a
    momentum buffer, Adam's moments) is made this way."""
    main, startup = default_main_program(), default_startup_program()
    if main is startup:
        raise ValueError("the main and the startup program must be different Programs")
    shape = tuple(int(d) for d in shape)
    name = name or f"global_var_{len(main.global_block().nodes)}"
    if name in _persistable_names(main):
        raise ValueError(f"a persistable variable named {name!r} exists already in this "
                         "program; pick another name")  # fmt: skip
    with building_in(startup.global_block()):
        target = _persistable(name, shape, dtype)
        init = (initializer or Constant(value))(shape, dtype)
        init.name = f"{name} init"
        startup.global_block().updates.append(Update(target, init))
    with building_in(main.global_block()):
        return _persistable(name, shape, dtype)


def create_parameter(shape, dtype: str = "float32", name: str | None = None,
                     default_initializer: Initializer | None = None) -> Node:  # fmt: skip
    """A trainable parameter: a persistable Variable in the main program, whose initialiser
    goes to the startup program (Fluid's ``create_parameter``). The default initialiser is
    :class:`Xavier` for 2-D and larger shapes, zeros otherwise."""
    main = default_main_program()
    shape = tuple(int(d) for d in shape)
    name = name or f"param_{len(main.global_block().parameters)}"
    init = default_initializer or (Xavier() if len(shape) >= 2 else Constant(0.0))
    param = create_global_var(shape, 0.0, dtype, name=name, initializer=init)
    main.global_block().parameters.append(param)
    return param


def data(name: str, shape=None, dtype: str | None = None) -> Node:
    """An input fed at every run (Fluid's ``fluid.data``); ``None`` or ``-1`` in ``shape``
    (a batch size not known yet) leaves the static shape unknown, and the known sizes stay
    as the node's ``partial_shape`` (which layers such as Fluid's ``fc`` read)."""
    partial = None if shape is None else tuple(None if d is None or d == -1 else int(d)
                                               for d in shape)  # fmt: skip
    node = Variable(name, shape=None if partial is None or None in partial else partial,
                    dtype=dtype)  # fmt: skip
    node.partial_shape = partial
    return node


def _persistable_names(program) -> set:
    return {n.name for n in program.global_block().nodes if n.persistable}
