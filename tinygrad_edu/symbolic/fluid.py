r"""Paddle Fluid's names over this engine (PaddlePaddle 1.x's static-graph API).

A Fluid user builds a **main program** and a **startup program** under ``program_guard``,
runs the startup program once into a **scope**, then runs the main program at every step:

>>> import numpy as np
>>> from tinygrad_edu.symbolic import fluid
>>> main, startup = fluid.Program(), fluid.Program()
>>> with fluid.program_guard(main, startup):
...     x = fluid.data("x", shape=[None, 2], dtype="float64")
...     t = fluid.data("t", shape=[None, 1], dtype="float64")
...     pred = fluid.layers.fc(x, size=1, name="fc", in_features=2)
...     loss = fluid.layers.mean(fluid.layers.square_error_cost(pred, t))
...     _ = fluid.optimizer.SGD(learning_rate=0.2).minimize(loss)
>>> exe = fluid.Executor(fluid.CPUPlace())
>>> scope = fluid.Scope()
>>> exe.run(startup, scope=scope)  # initialisers, once
[]
>>> xs = np.random.default_rng(0).normal(size=(32, 2))
>>> ts = xs @ np.array([[2.0], [-1.0]]) + 0.5
>>> for step in range(200):
...     (l,) = exe.run(main, feed={"x": xs, "t": ts}, fetch_list=[loss], scope=scope)
>>> np.round(scope["fc.w"].ravel(), 3), np.round(scope["fc.b"], 3)
(array([ 2., -1.]), array([0.5]))

Feeds and fetches are named by string, as in Fluid (or given as the nodes themselves); this
is the one place where strings are keys, because a program read back from JSON has only
names. The core :class:`~tinygrad_edu.symbolic.Executor` takes Variables only.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from types import SimpleNamespace

from . import api
from . import initializer as _init
from .control_flow import cond, while_loop
from .initializer import create_global_var, create_parameter, data
from .node import PLACEHOLDER, Node, apply_op
from .program import Program, default_main_program, default_startup_program, program_guard
from .scope import Scope
from .training import SGD as _SGD
from .training import Adam as _Adam
from .training import TrainingExecutor

__all__ = [
    "Program", "program_guard", "default_main_program", "default_startup_program", "Scope",
    "global_scope", "scope_guard", "CPUPlace", "CUDAPlace", "Executor", "data",
    "create_parameter", "create_global_var", "layers", "initializer", "optimizer",
]  # fmt: skip


@dataclass(frozen=True)
class CPUPlace:
    """The CPU (numpy)."""

    @property
    def device(self) -> str:
        return "cpu"


@dataclass(frozen=True)
class CUDAPlace:
    """GPU number ``index`` (CuPy)."""

    index: int = 0

    @property
    def device(self) -> str:
        return f"cuda:{self.index}"


class _GlobalScope:
    scope = Scope()


def global_scope() -> Scope:
    """The scope runs use when none is given (Fluid's ``global_scope()``)."""
    return _GlobalScope.scope


@contextlib.contextmanager
def scope_guard(scope: Scope):
    """Make ``scope`` the global scope inside the ``with`` block."""
    saved, _GlobalScope.scope = _GlobalScope.scope, scope
    try:
        yield scope
    finally:
        _GlobalScope.scope = saved


class Executor:
    """Fluid's Executor: runs programs on one place, against a scope.

    ``run(program, feed, fetch_list, scope)`` feeds the data Variables (by name or node),
    reads the persistable ones from the scope, computes ``fetch_list`` and applies the
    program's updates to the scope. The step for each (program, fetch list) is prepared once
    and reused.

    Args:
        place: :class:`CPUPlace` (default) or :class:`CUDAPlace`.
        plan_memory: run with memory plans (see :mod:`~tinygrad_edu.symbolic.memory`).
    """

    def __init__(self, place=None, plan_memory: bool = False):
        self.place = place or CPUPlace()
        self.plan_memory = plan_memory
        self._prepared: dict = {}

    def run(self, program: Program | None = None, feed=None, fetch_list=None,
            scope: Scope | None = None) -> list:  # fmt: skip
        """Run ``program`` (default: the default main program) once; the fetched values as
        numpy arrays, in ``fetch_list``'s order."""
        program = default_main_program() if program is None else program
        if not isinstance(program, Program):
            raise TypeError(f"Executor.run: program must be a Program, got "
                            f"{type(program).__name__}")  # fmt: skip
        scope = global_scope() if scope is None else scope
        fetches = [_resolve(program, f, "fetch_list") for f in (fetch_list or [])]
        feeds = {}
        for key, value in (feed or {}).items():
            var = _resolve(program, key, "feed")
            if var.op is not PLACEHOLDER or var.persistable:
                raise ValueError(f"Executor.run: {var.name!r} cannot be fed: only data "
                                 "Variables are fed (parameters live in the scope)")  # fmt: skip
            feeds[var] = value
        updates = program.global_block().updates
        key = (id(program), tuple(id(f) for f in fetches), len(updates))
        entry = self._prepared.get(key)
        if entry is None or entry[0] is not program:
            step = TrainingExecutor(fetches, updates, scope=scope, device=self.place.device,
                                    plan_memory=self.plan_memory)  # fmt: skip
            entry = self._prepared[key] = (program, step)
        return entry[1].run(feeds, scope=scope)


def _resolve(program: Program, key, what) -> Node:
    if isinstance(key, Node):
        return key
    if isinstance(key, str):
        return program.global_block().var(key)
    raise TypeError(f"Executor.run: {what} entries are names or nodes, got {key!r}")


# -- layers ---------------------------------------------------------------------------------
def fc(input: Node, size: int, act: str | None = None, name: str | None = None,  # noqa: A002
       in_features: int | None = None) -> Node:  # fmt: skip
    r"""A fully connected layer $\mathrm{act}(xW + b)$; its parameters ``<name>.w`` and
    ``<name>.b`` are created here. The weight has ``in_features`` rows (default: the input's
    last dimension, when its shape is static)."""
    if in_features is None:
        if input.shape is None:
            raise ValueError(f"fc: the shape of {input.name!r} is not static, so the weight's "
                             "rows are unknown; pass in_features=")  # fmt: skip
        in_features = input.shape[-1]
    name = name or f"fc_{len(default_main_program().global_block().parameters) // 2}"
    w = create_parameter((in_features, size), input.dtype or "float32", f"{name}.w")
    b = create_parameter((size,), input.dtype or "float32", f"{name}.b")
    out = api.matmul(input, w) + b
    return getattr(api, act)(out) if act else out


def square_error_cost(input: Node, label: Node) -> Node:  # noqa: A002
    """$(\\mathrm{input} - \\mathrm{label})^2$ elementwise."""
    d = input - label
    return d * d


def fill_constant(shape, dtype: str, value: float) -> Node:
    """A constant array of ``shape`` (Fluid's ``layers.fill_constant``)."""
    node = apply_op("fill_constant", shape=tuple(shape), value=value, dtype=dtype)
    node.dtype = dtype
    return node


layers = SimpleNamespace(
    data=data, fc=fc, mean=api.reduce_mean, reduce_sum=api.reduce_sum,
    reduce_mean=api.reduce_mean, matmul=api.matmul, relu=api.relu, tanh=api.tanh,
    sigmoid=api.sigmoid, exp=api.exp, log=api.log, softmax=api.softmax,
    softmax_with_cross_entropy=api.softmax_cross_entropy, square_error_cost=square_error_cost,
    fill_constant=fill_constant, create_parameter=create_parameter,
    create_global_var=create_global_var, cond=cond, while_loop=while_loop,
)  # fmt: skip
initializer = SimpleNamespace(
    Constant=_init.Constant, Uniform=_init.Uniform, Normal=_init.Normal, Xavier=_init.Xavier,
    NumpyArrayInitializer=_init.NumpyArrayInitializer,
)  # fmt: skip


class _FluidSGD(_SGD):
    def __init__(self, learning_rate: float, momentum: float = 0.0):
        super().__init__(lr=learning_rate, momentum=momentum)

    def minimize(self, loss, parameter_list=None):
        """Append the gradients and updates of ``parameter_list`` (default: all parameters
        of the main program) to the main program; returns the updates."""
        return super().minimize(loss, parameter_list)


class _FluidAdam(_Adam):
    def __init__(self, learning_rate: float = 1e-3, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8):  # fmt: skip
        super().__init__(lr=learning_rate, betas=(beta1, beta2), eps=epsilon)

    def minimize(self, loss, parameter_list=None):
        """As :meth:`_FluidSGD.minimize`."""
        return super().minimize(loss, parameter_list)


optimizer = SimpleNamespace(SGD=_FluidSGD, Momentum=_FluidSGD, Adam=_FluidAdam)
