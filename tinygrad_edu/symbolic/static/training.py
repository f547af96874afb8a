r"""Training in the symbolic engine, the way a static-graph framework does it (Paddle Fluid).

In the eager engine an optimizer is Python code that runs after ``backward()``. In a static
graph the *whole training step is a graph*: the forward, the gradient nodes that
:func:`~tinygrad_edu.symbolic.gradients` appends, and **update nodes** that compute each
parameter's new value. One ``run`` is one step. Three pieces make that work:

- a :class:`Scope` keeps the values that persist between runs (parameters, momentum buffers,
  Adam's moments and step counters); it is filled once, like Fluid's *startup program*;
- an optimizer's ``minimize(loss, params)`` appends the gradient and update nodes and returns
  the :class:`Update` pairs ``(target variable, node computing its new value)``;
- a :class:`TrainingExecutor` feeds the scope's values to their Variables, runs the graph, and
  writes every update's value back into the scope (Fluid's ``assign``).

>>> import numpy as np
>>> from tinygrad_edu.symbolic import Variable, reduce_mean
>>> from tinygrad_edu.symbolic.static.training import SGD, Scope, TrainingExecutor
>>> scope = Scope()
>>> w = scope.parameter("w", np.array([3.0], dtype=np.float32))
>>> x = Variable("x")
>>> loss = reduce_mean((w * x - 2.0) ** 2)
>>> updates = SGD(lr=0.1).minimize(loss, [w])
>>> [u.value.name for u in updates]
["w'"]
>>> step = TrainingExecutor([loss], updates)
>>> for _ in range(50):
...     (l,) = step.run({x: np.array([1.0], dtype=np.float32)})
>>> round(float(scope["w"][0]), 3)
2.0

Everything above is ordinary graph: ``step.executor.order`` lists every node of the step, and a
drawing of ``updates[0].value`` shows forward, gradient and update together.

The same optimizers work on parameters made the Fluid way, with ``create_parameter`` inside a
``program_guard``: then ``minimize(loss)`` (parameters default to the program's) puts the
optimizer state's initialisers into the startup program and records the updates in the main
program, and a :class:`~tinygrad_edu.symbolic.static.fluid.Executor` runs both against a scope
(see :mod:`~tinygrad_edu.symbolic.static.fluid`).
"""

from __future__ import annotations

from ... import backend
from ..executor import Executor, to_numpy
from ..gradients import gradients
from ..tensor_node import Node, apply_op
from .initializer import create_global_var
from .program import Update, default_main_program
from .scope import _SCOPE_OF, Scope, scope_of

__all__ = ["Scope", "Update", "Optimizer", "SGD", "Adam", "TrainingExecutor"]


class Optimizer:
    """Base class: ``minimize`` appends gradient nodes, then asks ``_rule`` for update nodes."""

    def minimize(self, loss: Node, params=None) -> list[Update]:
        r"""Append $\partial\,\mathrm{loss}/\partial p$ for each ``p`` in ``params`` and the
        nodes computing each new value; returns the updates (also kept in ``self.updates``).

        ``params`` are Variables made by ``scope.parameter`` (their optimizer state goes into
        the same scope now) or by ``create_parameter`` (the default: every parameter of the
        current main program; the state's initialisers go to the startup program, and the
        updates are recorded in the main program, as Fluid's ``minimize`` does).
        The gradient nodes are available afterwards as ``self.grads`` (same order as params).
        """
        params = list(default_main_program().all_parameters() if params is None else params)
        name = type(self).__name__
        if not params:
            raise ValueError(f"{name}.minimize: no parameters given (pass them, or make them "
                             "with create_parameter inside the program)")  # fmt: skip
        for p in params:
            if not isinstance(p, Node) or not p.persistable:
                raise ValueError(
                    f"{name}.minimize: {getattr(p, 'name', p)!r} is not a parameter; create "
                    "trainable values with scope.parameter(name, initial_array) or "
                    "create_parameter(shape, name=...)"
                )
        scopes = {id(scope_of(p)) for p in params}
        if len(scopes) != 1:
            raise ValueError(f"{name}.minimize: parameters from several scopes")
        self._scope = scope_of(params[0])  # None: program parameters (state in startup)
        self.grads = gradients(loss, params)
        self.updates: list[Update] = []
        for p, g in zip(params, self.grads):
            self.updates += self._rule(p, g)
        if self._scope is None:
            default_main_program().global_block().updates.extend(self.updates)
        return self.updates

    def _rule(self, p: Node, g: Node) -> list[Update]:
        raise NotImplementedError

    def _state(self, p: Node, suffix: str, fill: float = 0.0) -> Node:
        """A persistable Variable ``<p>.<suffix>`` shaped like ``p``, starting at ``fill``."""
        if self._scope is None:
            return create_global_var(p.shape, fill, p.dtype or "float32", f"{p.name}.{suffix}")
        xp = backend.get_namespace(self._scope.device)
        like = self._scope.find_var(p.name)
        init = xp.full(like.shape, fill, dtype=like.dtype)
        return self._scope.variable(f"{p.name}.{suffix}", init)


class SGD(Optimizer):
    r"""Update nodes for $p \leftarrow p - \eta\,d$ with $d = g + \lambda p$ and, with momentum
    $\mu$, a velocity $b \leftarrow \mu b + d$ kept in the scope ($d$ becomes $b$, or
    $d + \mu b$ for Nesterov). The same formulas as :class:`tinygrad_edu.optim.SGD`; the first
    step sets $b = d$ because $b$ starts at zero.
    """

    def __init__(self, lr: float, momentum: float = 0.0, weight_decay: float = 0.0,
                 nesterov: bool = False):  # fmt: skip
        self.lr, self.momentum, self.nesterov = lr, momentum, nesterov
        self.weight_decay = weight_decay

    def _rule(self, p, g):
        d = g + self.weight_decay * p if self.weight_decay else g
        updates = []
        if self.momentum:
            buf = self._state(p, "velocity")
            new_buf = apply_op("add", self.momentum * buf, d, name=f"{buf.name}'")
            updates.append(Update(buf, new_buf))
            d = d + self.momentum * new_buf if self.nesterov else new_buf
        new_p = apply_op("sub", p, self.lr * d, name=f"{p.name}'")
        return [Update(p, new_p)] + updates


class Adam(Optimizer):
    r"""Update nodes for Adam (the formulas of :class:`tinygrad_edu.optim.Adam`).

    The scope keeps, per parameter, the moments $m$, $v$ and the powers $\beta_1^t$,
    $\beta_2^t$ (as Fluid's ``beta1_pow_acc``), so the bias corrections are graph too:
    $p \leftarrow p - \frac{\eta}{1-\beta_1^t}\, m / (\sqrt{v}/\sqrt{1-\beta_2^t} + \epsilon)$.
    """

    def __init__(self, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0):  # fmt: skip
        self.lr, self.betas, self.eps, self.weight_decay = lr, tuple(betas), eps, weight_decay

    def _rule(self, p, g):
        b1, b2 = self.betas
        g = g + self.weight_decay * p if self.weight_decay else g
        m, v = self._state(p, "m"), self._state(p, "v")
        b1_pow = self._state(p, "beta1_pow", 1.0)  # beta1**(t-1) before the step
        b2_pow = self._state(p, "beta2_pow", 1.0)
        new_m = apply_op("add", m, (1 - b1) * (g - m), name=f"{m.name}'")
        new_v = apply_op("add", b2 * v, (1 - b2) * (g * g), name=f"{v.name}'")
        new_b1 = apply_op("mul", b1_pow, b1, name=f"{b1_pow.name}'")
        new_b2 = apply_op("mul", b2_pow, b2, name=f"{b2_pow.name}'")
        step_size = self.lr / (1 - new_b1)
        denom = new_v**0.5 / (1 - new_b2) ** 0.5 + self.eps
        new_p = apply_op("sub", p, step_size * (new_m / denom), name=f"{p.name}'")
        return [Update(p, new_p), Update(m, new_m), Update(v, new_v),
                Update(b1_pow, new_b1), Update(b2_pow, new_b2)]  # fmt: skip


class TrainingExecutor:
    """Runs a training step: fetches plus updates, with the scope's values fed automatically.

    Args:
        fetches: the nodes whose values ``run`` returns (the loss, accuracy ...).
        updates: the :class:`Update` s from ``minimize`` (may be empty: an evaluation program
            that only reads the scope).
        scope: where persistable values live (default: the scope that made the updates'
            targets, or the first scope Variable the fetches use, else a new Scope).
        device: where to compute (default: the scope's device).
        plan_memory: run with a memory plan (see :class:`~tinygrad_edu.symbolic.Executor`).

    Attributes:
        executor: the underlying :class:`~tinygrad_edu.symbolic.Executor`; its ``order`` is
            every node of the step (forward, gradient, update).
        persistent: the persistable Variables the step reads from the scope (by name).
    """

    def __init__(self, fetches, updates=(), scope: Scope | None = None, device=None,
                 plan_memory: bool = False):  # fmt: skip
        self.fetches = [fetches] if isinstance(fetches, Node) else list(fetches)
        self.updates = list(updates)
        self.executor = Executor(
            self.fetches + [u.value for u in self.updates],
            device or (scope.device if scope else "cpu"),
            plan_memory,
        )
        if scope is None:
            made = [u.target for u in self.updates] + list(self.executor.variables)
            found = [_SCOPE_OF[v] for v in made if v in _SCOPE_OF]
            scope = found[0] if found else Scope()
            self.executor.device = device or scope.device
        self.scope = scope
        self.device = self.executor.device
        self.persistent = [v for v in self.executor.variables if v.persistable]

    def run(self, feed_dict=None, scope: Scope | None = None):
        """One step: compute the fetches (returned as numpy arrays), then store every
        update's value in the scope (``scope`` overrides the one given at construction)."""
        scope = self.scope if scope is None else scope
        feed = dict(feed_dict or {})
        for var in self.persistent:
            if var in feed:
                raise ValueError(f"{var.name!r} lives in the scope; do not feed it")
            value = scope.find_var(var.name)
            if value is None:
                raise ValueError(
                    f"{var.name!r} is persistable, but the scope has no value for it: run the "
                    "startup program first (Executor(place).run(startup_program, scope=scope)) "
                    "or make it with scope.parameter(name, initial_array)"
                )
            feed[var] = value
        values = self.executor.run_on_device(feed)
        n = len(self.fetches)
        for u, value in zip(self.updates, values[n:]):
            if getattr(getattr(value, "flags", None), "writeable", True) is False:
                value = value.copy()  # a constant's array (read-only): the scope gets its own
            scope.assign(u.target.name, value)
        return [to_numpy(v) for v in values[:n]]
