"""The static-graph compiler's benchmarks: memory plans and generated code against numpy.

* ``compiled_chain``: the 1000-op chain of ``small_ops`` (mul, add, tanh in turn on a
  4-element array) and its gradient: the interpreting ``Executor``, the same graph after
  ``compile()``, and the same computation written by hand in numpy (the reference).
  Target: compiled within 1.3x of numpy.
* ``compiled_chain_undeclared``: the same chain on a ``Variable("x")`` declared with no shape
  and no dtype, fed a float64 array: ``compile()`` specialises on the first feed's shape and
  dtype (NOTE [Specialising on the first feed] in ``symbolic/static/codegen.py``), against
  the chain by hand in float64. Target: compiled within 1.0x of numpy.
* ``mlp_compiled``: the ``mlp_step`` training step (784-256-10, batch 256, float32): the
  symbolic graph run by the ``Executor``, by an ``Executor`` with a memory plan, compiled,
  and compiled with the memory plan in the code (``compile(..., example=feed)``), against
  hand-written numpy. Target: the two planned ones within 1.00x of numpy. The table also
  gives each one's peak memory during a step (tracemalloc: numpy's buffers).
"""

from __future__ import annotations

import numpy as np

from tinygrad_edu import backend
from tinygrad_edu.symbolic import (
    Executor,
    Variable,
    compile,
    gradients,
    matmul,
    relu,
    softmax_cross_entropy,
)

from .cases import Case, _chain, _mlp_data, _sync, hand_chain, hand_mlp_step, peak_memory

__all__ = ["compiled_chain", "mlp_compiled", "CASES", "REPS", "peak_extras"]

REPS = {"compiled_chain": 60, "compiled_chain_undeclared": 60, "mlp_compiled": 100}


def compiled_chain(size: str = "full", device: str = "cpu") -> Case:
    n = 1000 if size == "full" else 30
    x0 = np.array([0.1, -0.2, 0.3, -0.4], np.float32)
    xp = backend.get_namespace(device)
    x0d = xp.asarray(x0)
    hand_written = hand_chain(xp, x0d, n)

    x = Variable("x", shape=(4,), dtype="float32")
    y = _chain(x, n)
    outs = [y, *gradients(y.sum(), [x])]
    ex = Executor(outs, device=device)
    fn = compile(outs, device=device)
    impls = {"numpy": hand_written, "symbolic": lambda: ex.run({x: x0}),
             "compiled": lambda: fn({x: x0})}  # fmt: skip
    return Case("compiled_chain", f"{n}-op chain and its gradient, compiled vs interpreted",
                "numpy", impls, targets={"compiled": (1.3, None)},
                sync=_sync(device))  # fmt: skip


def compiled_chain_undeclared(size: str = "full", device: str = "cpu") -> Case:
    n = 1000 if size == "full" else 30
    xp = backend.get_namespace(device)
    x0d = xp.asarray(np.array([0.1, -0.2, 0.3, -0.4], np.float64))
    x = Variable("x")  # no shape, no dtype: the code is specialised on the feed's
    y = _chain(x, n)
    outs = [y, *gradients(y.sum(), [x])]
    ex = Executor(outs, device=device)
    fn = compile(outs, device=device)
    impls = {"numpy": hand_chain(xp, x0d, n), "symbolic": lambda: ex.run({x: x0d}),
             "compiled": lambda: fn({x: x0d})}  # fmt: skip
    return Case("compiled_chain_undeclared",
                f"{n}-op chain and its gradient, float64, Variable of no declared shape",
                "numpy", impls, targets={"compiled": (1.0, None)},
                sync=_sync(device))  # fmt: skip


def mlp_compiled(size: str = "full", device: str = "cpu") -> Case:
    x, labels, onehot, w1, w2 = _mlp_data(size)
    shape = "x".join(str(s) for s in (x.shape[1], w1.shape[1], w2.shape[1]))
    xp = backend.get_namespace(device)
    xd, yd, w1d, w2d = (xp.asarray(a) for a in (x, onehot, w1, w2))
    n = x.shape[0]

    hand_written = hand_mlp_step(xp, xd, yd, w1d, w2d)
    X, Y = Variable("x", shape=x.shape), Variable("y", shape=onehot.shape)
    V1, V2 = Variable("W1", shape=w1.shape), Variable("W2", shape=w2.shape)
    loss = softmax_cross_entropy(matmul(relu(matmul(X, V1)), V2), Y)
    outs = [loss, *gradients(loss, [V1, V2])]
    feed = {X: xd, Y: yd, V1: w1d, V2: w2d}
    plain, planned = Executor(outs, device=device), Executor(outs, device, plan_memory=True)
    planned.run(feed)  # the profiling run: the plan for these shapes is made here
    fn = compile(outs, device=device)
    fn_planned = compile(outs, device=device, example=feed)
    impls = {"numpy": hand_written, "symbolic": lambda: plain.run(feed),
             "planned": lambda: planned.run(feed), "compiled": lambda: fn(feed),
             "compiled+plan": lambda: fn_planned(feed)}  # fmt: skip
    extra = {} if backend.parse_device(device).type == "cuda" else {"peak": peak_extras}
    return Case("mlp_compiled", f"MLP step, batch {n}, {shape}: memory plan and compile()",
                "numpy", impls, targets={"planned": (1.0, None), "compiled+plan": (1.0, None)},
                sync=_sync(device), extra=extra)  # fmt: skip


def peak_extras(case) -> dict:
    """impl -> `` (peak X MiB)``: the peak memory of one call of each implementation."""
    out = {}
    for name, fn in case.impls.items():
        fn()  # warm: what is made once (plans, caches) is not part of a step
        peak, _ = peak_memory(fn)
        out[name] = f" (peak {peak:.2f} MiB)"
    return out


CASES = {
    "compiled_chain": compiled_chain,
    "compiled_chain_undeclared": compiled_chain_undeclared,
    "mlp_compiled": mlp_compiled,
}
