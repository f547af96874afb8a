"""``python -m benchmarks.engine_ab --old REV``: the eager backward engine of this checkout
against ``tinygrad_edu/eager/engine.py`` as it was at git revision ``REV``, in one process.

Both engines run the same graphs (built by the same library, so only the engine differs); each
repetition runs both, in a rotating order, and the table gives medians and the ratio new/old.
Backward is timed alone (the graph is built, untimed, before each run) and together with the
forward, for the three CPU benchmarks of ``benchmarks.cases``. The clock is the process's CPU
time by default (``--clock cpu``: on a shared, loaded machine it counts our work, not the time
spent waiting for a core), or the wall clock (``--clock wall``).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import tinygrad_edu as tg
from tinygrad_edu import nn
from tinygrad_edu.eager import backward as autograd
from tinygrad_edu.eager import engine as _current

from . import cases

__all__ = ["load_engine", "main"]

ROOT = Path(__file__).resolve().parents[1]


def load_engine(rev: str):
    """The engine module at git revision ``rev``, imported beside the current one."""
    source = subprocess.run(
        ["git", "show", f"{rev}:tinygrad_edu/eager/engine.py"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    name = "tinygrad_edu.eager._engine_ab_old"
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "tinygrad_edu.eager"
    exec(compile(source, f"{rev}:engine.py", "exec"), module.__dict__)
    sys.modules[name] = module
    if hasattr(module, "ATTACHED"):  # what the modules around the core attach to it
        for key, value in vars(_current.ATTACHED).items():
            if not key.startswith("__"):
                setattr(module.ATTACHED, key, value)
    return module


def _use(engine) -> None:
    autograd.GraphTask, autograd.execute = engine.GraphTask, engine.execute


def _graphs(size: str):
    """name -> (build, run): ``build()`` makes the forward graph, ``run(g)`` its backward."""
    n_small, n_deep = (1000, 100_000) if size == "full" else (30, 2_000)
    x0 = np.array([0.1, -0.2, 0.3, -0.4], np.float32)
    x, _, onehot, w1, w2 = cases._mlp_data(size)
    xt, yt = tg.tensor(x), tg.tensor(onehot)
    W1, W2 = tg.tensor(w1, requires_grad=True), tg.tensor(w2, requires_grad=True)

    def small():
        return cases._chain(tg.tensor(x0, requires_grad=True), n_small).sum()

    def deep():
        return cases._deep(tg.tensor(np.array([0.5], np.float32), requires_grad=True), n_deep)

    def mlp():
        W1.grad = W2.grad = None
        return nn.functional.cross_entropy((xt @ W1).relu() @ W2, yt)

    def seed(y):
        y.backward(tg.ones(y.shape))

    return {"small_ops": (small, seed), "deep_chain": (deep, seed), "mlp_step": (mlp, seed)}


_CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def _time(fn, clock=time.process_time) -> float:
    t0 = clock()
    fn()
    return clock() - t0


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default="HEAD~1", help="git revision of the old engine")
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="tiny graphs, 3 repetitions")
    parser.add_argument("--clock", choices=sorted(_CLOCKS), default="cpu")
    args = parser.parse_args(argv)
    clock = _CLOCKS[args.clock]
    new, old = sys.modules["tinygrad_edu.eager.engine"], load_engine(args.old)
    engines = {"new": new, "old": old}
    size, reps = ("quick", 3) if args.quick else ("full", args.reps)
    print(f"engine A/B: this checkout (new) vs {args.old} (old); {reps} repetitions, "
          f"{args.clock} time")  # fmt: skip
    print(f"{'graph':<12} {'timed':<18} {'old ms':>9} {'new ms':>9} {'new/old':>8}")
    for name, (build, run) in _graphs(size).items():
        if name == "deep_chain" and not args.quick:
            reps_here = max(3, reps // 6)
        else:
            reps_here = reps
        times = {(e, what): [] for e in engines for what in ("backward", "forward+backward")}
        for rep in range(reps_here + 1):  # the first repetition warms up
            order = list(engines) if rep % 2 else list(engines)[::-1]
            for e in order:
                _use(engines[e])
                y = build()
                tb = _time(lambda y=y, run=run: run(y), clock)
                tf = _time(lambda run=run, build=build: run(build()), clock)
                if rep:
                    times[(e, "backward")].append(tb)
                    times[(e, "forward+backward")].append(tf)
        _use(new)
        for what in ("backward", "forward+backward"):
            o = statistics.median(times[("old", what)]) * 1e3
            n = statistics.median(times[("new", what)]) * 1e3
            print(f"{name:<12} {what:<18} {o:9.3f} {n:9.3f} {n / o:8.3f}")


if __name__ == "__main__":
    main()
