"""The differential harness of the tg.compile tests: one program run eagerly and compiled, call
after call with changing inputs and state, and everything observable compared (outputs, their
``requires_grad`` and graph, gradients, parameters, buffers, optimizer and scheduler state,
the results of Python side effects, the errors raised).

A program is made by a function ``make()`` returning a :class:`World` made afresh (the eager
run and the compiled run each get their own, built from the same seed)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import tinygrad_edu as tg

#: how close eager's and the compiled values must be (the fused kernels' tests widen it:
#: a kernel sums in another order, see tinygrad_edu/symbolic/static/fusion.py)
TOLERANCE = {"rtol": 1e-6, "atol": 1e-9}


@dataclass
class World:
    """``fn``: the program; ``args(k)``: the arguments of call ``k`` (it may also change state
    between calls); ``state()``: what else to compare after each call (parameters, buffers,
    an optimizer's state, a counter ...); ``backward``: after each call, run backward on the
    sum of the outputs that require grad (twice, the first with ``retain_graph=True``) and
    compare the arguments' ``.grad``."""

    fn: object
    args: object
    state: object = None
    backward: bool = True
    leaves: list = field(default_factory=list)  # tensors whose .grad is compared as well


def observe(x):
    """``x`` as plain values that :func:`difference` compares (tensors with their dtype,
    ``requires_grad`` and whether they have a ``grad_fn``)."""
    if isinstance(x, tg.Tensor):
        return ("tensor", tuple(x.shape), str(x.dtype), x.requires_grad, x.grad_fn is None,
                np.array(x._data, copy=True))  # fmt: skip
    if isinstance(x, list | tuple):
        return (type(x).__name__, [observe(v) for v in x])
    if isinstance(x, dict):
        return ("dict", {k: observe(v) for k, v in x.items()})
    if isinstance(x, np.ndarray):
        return ("array", np.array(x, copy=True))
    return ("value", type(x).__name__, x)


def difference(a, b, path="") -> str | None:
    """The first place where two observations differ (None: none)."""
    if type(a) is not type(b):
        return f"{path}: {a!r} != {b!r}"
    if isinstance(a, np.ndarray):
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"{path}: array {a.shape} {a.dtype} != {b.shape} {b.dtype}"
        if not np.allclose(a, b, **TOLERANCE, equal_nan=True):
            return f"{path}: {a.tolist()} != {b.tolist()}"
        return None
    if isinstance(a, list | tuple):
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)}: {a!r} != {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            if (d := difference(x, y, f"{path}[{i}]")) is not None:
                return d
        return None
    if isinstance(a, dict):
        if a.keys() != b.keys():
            return f"{path}: keys {sorted(a, key=str)} != {sorted(b, key=str)}"
        for k in a:
            if (d := difference(a[k], b[k], f"{path}[{k!r}]")) is not None:
                return d
        return None
    if isinstance(a, float) and isinstance(b, float):
        if np.isnan(a) and np.isnan(b) or abs(a - b) <= 1e-6 * max(1.0, abs(a)):
            return None
    return None if a == b else f"{path}: {a!r} != {b!r}"


def _outputs(out) -> list:
    items = out if isinstance(out, list | tuple) else [out]
    return [t for t in items if isinstance(t, tg.Tensor) and t.requires_grad]


def history(make, calls: int = 5, compiled: bool = False) -> list:
    """Run a fresh ``make()`` world ``calls`` times (compiled with ``tg.compile`` or not) and
    observe each call: what it returned or raised, the gradients, the state."""
    world = make()
    fn = tg.compile(world.fn) if compiled else world.fn
    log = []
    for k in range(calls):
        args = world.args(k)
        args = args if isinstance(args, tuple) else (args,)
        try:
            out = fn(*args)
        except Exception as e:  # noqa: BLE001 (an error is an observation too)
            log.append(("raised", type(e).__name__))
            continue
        grads = None
        if world.backward:
            wanted = _outputs(out)
            if wanted:  # twice, the first keeping the graph: the gradients accumulate
                total = sum(t.sum() for t in wanted)
                try:
                    total.backward(retain_graph=True)
                    total.backward()
                except Exception as e:  # noqa: BLE001 (eager's error is an observation too)
                    log.append(("backward raised", type(e).__name__, str(e).split(":")[0]))
                    continue
            leaves = [a for a in args if isinstance(a, tg.Tensor)] + list(world.leaves)
            grads = [observe(t.grad) for t in leaves]
        state = observe(world.state()) if world.state is not None else None
        log.append(("returned", observe(out), grads, state))
    return log


def compare(make, calls: int = 5) -> str | None:
    """The first difference between the eager and the compiled run of ``make`` (None:
    they agree on every call)."""
    eager = history(make, calls, compiled=False)
    fast = history(make, calls, compiled=True)
    for k, (a, b) in enumerate(zip(eager, fast)):
        if (d := difference(a, b, f"call {k}")) is not None:
            return f"eager and compiled differ at {d}"
    return None
