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
>>> from tinygrad_edu.symbolic.training import SGD, Scope, TrainingExecutor
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
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from .. import backend
from .executor import Executor
from .gradients import gradients
from .node import Node, Variable, apply_op

__all__ = ["Scope", "Update", "Optimizer", "SGD", "Adam", "TrainingExecutor"]

_SCOPE_OF: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Variable -> its Scope


class Scope:
    """Named values that live across runs: parameters and optimizer state.

    Args:
        device: where the values live (``"cpu"``, ``"cuda"``); they never leave it while
            training.

    ``scope["W"]`` reads a value back as a numpy array; ``scope.variables`` maps names to
    the Variables that stand for them in graphs.
    """

    def __init__(self, device: str = "cpu"):
        self.device = device
        self.variables: dict[str, Node] = {}
        self.values: dict[Node, object] = {}  # Variable -> backend array

    def parameter(self, name: str, init) -> Node:
        """A trainable Variable named ``name``, starting at ``init`` (an array; copied)."""
        return self.variable(name, init)

    def variable(self, name: str, init) -> Node:
        """A persistent Variable (a parameter or optimizer state) with a starting value."""
        if name in self.variables:
            raise ValueError(f"Scope: a variable named {name!r} exists already; pick another name")
        xp = backend.get_namespace(self.device)
        value = xp.array(backend.to_device(init, self.device), copy=True)
        dtype = str(value.dtype)
        var = Variable(name, shape=tuple(value.shape), dtype=dtype)
        self.variables[name] = var
        self.values[var] = value
        _SCOPE_OF[var] = self
        return var

    def __contains__(self, name: str) -> bool:
        return name in self.variables

    def __getitem__(self, name: str):
        """The current value of ``name`` as a numpy array (a copy for GPU values)."""
        if name not in self.variables:
            raise KeyError(f"Scope has no variable {name!r}; it has {sorted(self.variables)}")
        return backend.to_device(self.values[self.variables[name]], "cpu")

    def __setitem__(self, name: str, value) -> None:
        var = self.variables[name]
        old = self.values[var]
        if tuple(value.shape) != tuple(old.shape):
            raise ValueError(f"Scope: {name!r} has shape {tuple(old.shape)}, got {value.shape}")
        xp = backend.get_namespace(self.device)
        self.values[var] = xp.asarray(backend.to_device(value, self.device), dtype=old.dtype)

    def state_dict(self) -> dict:
        """Every value by name, as numpy arrays."""
        return {name: self[name] for name in self.variables}


def scope_of(var: Node) -> Scope:
    """The Scope that made ``var``, or an error saying how to make one."""
    scope = _SCOPE_OF.get(var)
    if scope is None:
        raise ValueError(
            f"{getattr(var, 'name', var)!r} is not a scope variable; create trainable values "
            "with scope.parameter(name, initial_array)"
        )
    return scope


@dataclass(frozen=True)
class Update:
    """``target`` (a scope Variable) takes the value of ``value`` (a node) after each run."""

    target: Node
    value: Node


class Optimizer:
    """Base class: ``minimize`` appends gradient nodes, then asks ``_rule`` for update nodes."""

    def minimize(self, loss: Node, params) -> list[Update]:
        r"""Append $\partial\,\mathrm{loss}/\partial p$ for each ``p`` in ``params`` and the
        nodes computing each new value; returns the updates (also kept in ``self.updates``).

        The gradient nodes are available afterwards as ``self.grads`` (same order as params).
        """
        params = list(params)
        if not params:
            raise ValueError(f"{type(self).__name__}.minimize: no parameters given")
        scopes = {id(scope_of(p)) for p in params}
        if len(scopes) != 1:
            raise ValueError(f"{type(self).__name__}.minimize: parameters from several scopes")
        scope = scope_of(params[0])
        self.grads = gradients(loss, params)
        self.updates: list[Update] = []
        for p, g in zip(params, self.grads):
            self.updates += self._rule(scope, p, g)
        return self.updates

    def _rule(self, scope: Scope, p: Node, g: Node) -> list[Update]:
        raise NotImplementedError

    @staticmethod
    def _state(scope: Scope, p: Node, suffix: str, fill: float = 0.0) -> Node:
        xp = backend.get_namespace(scope.device)
        like = scope.values[p]
        return scope.variable(f"{p.name}.{suffix}", xp.full(like.shape, fill, dtype=like.dtype))


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

    def _rule(self, scope, p, g):
        d = g + self.weight_decay * p if self.weight_decay else g
        updates = []
        if self.momentum:
            buf = self._state(scope, p, "velocity")
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

    def _rule(self, scope, p, g):
        b1, b2 = self.betas
        g = g + self.weight_decay * p if self.weight_decay else g
        m, v = self._state(scope, p, "m"), self._state(scope, p, "v")
        b1_pow = self._state(scope, p, "beta1_pow", 1.0)  # beta1**(t-1) before the step
        b2_pow = self._state(scope, p, "beta2_pow", 1.0)
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
        scope: where persistent values live (default: the scope of the updates' targets, or of
            the first scope Variable the fetches use).
        device: where to compute (default: the scope's device).

    Attributes:
        executor: the underlying :class:`~tinygrad_edu.symbolic.Executor`; its ``order`` is
            every node of the step (forward, gradient, update).
    """

    def __init__(self, fetches, updates=(), scope: Scope | None = None, device=None):
        self.fetches = [fetches] if isinstance(fetches, Node) else list(fetches)
        self.updates = list(updates)
        if scope is None:
            if self.updates:
                scope = scope_of(self.updates[0].target)
            else:
                found = [v for v in Executor(self.fetches).variables if v in _SCOPE_OF]
                scope = _SCOPE_OF[found[0]] if found else Scope()
        self.scope = scope
        self.device = device or scope.device
        # one topological order for fetches and updates; run() hands back only the fetches,
        # while the updates' values are read on the device (see run)
        self.executor = Executor(self.fetches + [u.value for u in self.updates], self.device)
        self.executor.nodes = list(self.fetches)
        self.persistent = [v for v in self.executor.variables if v in scope.values]

    def run(self, feed_dict=None):
        """One step: compute the fetches (returned as numpy arrays), then store every
        update's value in the scope."""
        feed = dict(feed_dict or {})
        for var in self.persistent:
            if var in feed:
                raise ValueError(f"{var.name!r} lives in the scope; do not feed it")
            feed[var] = self.scope.values[var]
        out = self.executor.run(feed)
        values = self.executor.values
        for u in self.updates:
            self.scope.values[u.target] = values[u.value]
        return out
