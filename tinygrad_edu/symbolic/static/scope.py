r"""``Scope``: named values that live across runs (Paddle Fluid's Scope), nested.

A scope maps names to arrays on one device: parameters, optimizer state, anything
*persistable*. Running a startup program fills it; every run of a main program reads the
parameters from it and writes their new values back. Scopes nest as in Fluid:
``scope.new_scope()`` makes a child whose lookups fall back to its parent, so a value in the
child shadows the parent's without changing it.

>>> import numpy as np
>>> outer = Scope()
>>> outer.set_var("lr", np.array(0.1))
>>> inner = outer.new_scope()
>>> float(inner.find_var("lr")), inner.find_var("missing") is None
(0.1, True)
>>> inner.set_var("lr", np.array(0.01))  # local: shadows the parent's value
>>> float(inner["lr"]), float(outer["lr"])
(0.01, 0.1)
"""

from __future__ import annotations

import weakref

from ... import backend
from ..tensor_node import Node, Variable

__all__ = ["Scope", "scope_of"]

_SCOPE_OF: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Variable -> its Scope


class Scope:
    """Named values that live across runs: parameters and optimizer state.

    Args:
        device: where the values live (``"cpu"``, ``"cuda"``); they stay there while training.
        parent: the enclosing scope, whose values this one can read (``new_scope`` sets it).

    ``scope["W"]`` reads a value (here or in a parent) as a numpy array; ``scope.variables``
    maps names to the Variables that :meth:`parameter` and :meth:`variable` made.
    """

    def __init__(self, device: str = "cpu", parent: Scope | None = None):
        self.device = device
        self.parent = parent
        self.kids: list[Scope] = []
        self.variables: dict[str, Node] = {}
        self._values: dict = {}  # name -> backend array

    def __repr__(self) -> str:
        return f"<Scope {sorted(self._values)} on {self.device}>"

    # -- Fluid's scope operations ----------------------------------------------------------
    def new_scope(self) -> Scope:
        """A child scope (Fluid's ``NewScope``): it reads this scope's values; what it sets
        stays in the child."""
        kid = Scope(self.device, parent=self)
        self.kids.append(kid)
        return kid

    def drop_kids(self) -> None:
        """Forget every child scope (Fluid's ``DropKids``)."""
        self.kids.clear()

    def find_scope(self, name: str) -> Scope | None:
        """The scope that holds ``name``: this one or the nearest ancestor, else None."""
        scope = self
        while scope is not None:
            if name in scope._values:
                return scope
            scope = scope.parent
        return None

    def find_var(self, name: str):
        """The value of ``name`` (a device array), looked up here then in the parents (Fluid's
        ``FindVar``); None when no scope up the chain has it."""
        scope = self.find_scope(name)
        return None if scope is None else scope._values[name]

    def set_var(self, name: str, value) -> None:
        """Store ``value`` under ``name`` in *this* scope (moved to the scope's device)."""
        xp = backend.get_namespace(self.device)
        self._values[name] = xp.asarray(backend.to_device(value, self.device))

    def assign(self, name: str, value) -> None:
        """Store ``value`` where ``name`` lives (this scope or an ancestor), else here, after
        checking that the shape did not change. This is how a run writes updates back."""
        scope = self.find_scope(name) or self
        old = scope._values.get(name)
        if old is not None and tuple(value.shape) != tuple(old.shape):
            raise ValueError(
                f"Scope: {name!r} has shape {tuple(old.shape)}; cannot store shape "
                f"{tuple(value.shape)} (an update must keep the shape)"
            )
        scope._values[name] = value

    def local_var_names(self) -> list:
        """The names held by this scope itself (not its parents)."""
        return list(self._values)

    def __contains__(self, name: str) -> bool:
        return self.find_scope(name) is not None

    def __getitem__(self, name: str):
        """The value of ``name`` as a numpy array (a copy for GPU values)."""
        value = self.find_var(name)
        if value is None:
            raise KeyError(f"Scope has no variable {name!r}; it has {sorted(self._all_names())}")
        return backend.to_device(value, "cpu")

    def __setitem__(self, name: str, value) -> None:
        xp = backend.get_namespace(self.device)
        old = self.find_var(name)
        dtype = None if old is None else old.dtype
        self.assign(name, xp.asarray(backend.to_device(value, self.device), dtype=dtype))

    def _all_names(self) -> set:
        scope, names = self, set()
        while scope is not None:
            names |= set(scope._values)
            scope = scope.parent
        return names

    def state_dict(self) -> dict:
        """Every value this scope can see, by name, as numpy arrays."""
        return {name: self[name] for name in sorted(self._all_names())}

    # -- Variables standing for scope values --------------------------------------------------
    def parameter(self, name: str, init) -> Node:
        """A trainable Variable named ``name``, starting at ``init`` (an array; copied)."""
        return self.variable(name, init)

    def variable(self, name: str, init) -> Node:
        """A persistable Variable (a parameter or optimizer state) with a starting value."""
        if name in self.variables or name in self._values:
            raise ValueError(f"Scope: a variable named {name!r} exists already; pick another name")
        xp = backend.get_namespace(self.device)
        value = xp.array(backend.to_device(init, self.device), copy=True)
        var = Variable(name, shape=tuple(value.shape), dtype=str(value.dtype))
        var.persistable = True
        self.variables[name] = var
        self._values[name] = value
        _SCOPE_OF[var] = self
        return var

    @property
    def values(self):
        """The values by Variable (``scope.values[w]``), for the Variables made here."""
        return _ByVariable(self)


class _ByVariable:
    """A read-only view of a scope's values keyed by their Variables."""

    def __init__(self, scope: Scope):
        self._scope = scope

    def __getitem__(self, var: Node):
        value = self._scope.find_var(var.name)
        if value is None:
            raise KeyError(f"Scope has no value for Variable {var.name!r}")
        return value

    def __contains__(self, var) -> bool:
        return isinstance(var, Node) and var.persistable and var.name in self._scope


def scope_of(var: Node) -> Scope | None:
    """The Scope whose ``parameter``/``variable`` made ``var``, else None."""
    return _SCOPE_OF.get(var)
