"""A second differential fuzzer for tg.compile, on what is hardest to keep exact: memory shared
between tensors and written in place. Each generated function chains a few statements drawn
from in-place ops on results, arguments and parameters (``add_``, ``h[0] = v``, ``.data``
writes, ``detach()`` aliases read after a write, views, a buffer written with ``copy_``), runs
eagerly and compiled for 5 calls with new inputs, and everything is compared (outputs,
gradients of the argument and the parameter, the parameter and the buffer after each call,
an error eager's backward raises). ``python -m tests.compiler.test_fuzz_aliasing SEED``
prints one program and its first difference."""

from __future__ import annotations

import random
import sys

import numpy as np
import pytest

import tinygrad_edu as tg

from .differential import World, compare, difference, history

STATEMENTS = [
    "h = h * 2", "h = h + w", "h = h * x", "d = h.detach()", "d = h.data", "h.add_(1)",
    "h.mul_(x)", "h = h + d", "w.data += 0.1", "w.data.mul_(0.9)", "x.data.add_(0.5)",
    "h = h[1:].sum() + h", "h = h.clone()", "h[0] = 3.0", "buf.copy_(h.detach())",
    "h = h + buf", "with tg.no_grad():\n    buf.add_(1)", "v = h.view(3)", "h = h.exp()",
    "h = (h * w).tanh()", "d.add_(1)", "x.mul_(1.0)",
]  # fmt: skip
PROGRAMS = 600  # in CI; each takes a few milliseconds
GROUP = 50


def program(seed: int):
    """The source of generated function ``seed`` and its ``make()`` (see the docstring)."""
    r = random.Random(seed)
    body = ["h = x * 1.0", "d = h.detach()"]
    body += [r.choice(STATEMENTS) for _ in range(r.randint(2, 7))]
    body += ["out = (h * w).sum() + d.sum()", "return out"]
    source = "def fn(x):\n" + "".join(
        "    " + line.replace("\n", "\n    ") + "\n" for line in body
    )
    x_grad = r.random() < 0.5

    def make():
        tg.manual_seed(seed)
        w, buf = tg.randn(3, requires_grad=True), tg.zeros(3)
        scope = {"tg": tg, "w": w, "buf": buf}
        exec(source, scope)  # noqa: S102 (the generated program)

        def args(k):
            x = np.random.default_rng(k).standard_normal(3)
            return (tg.tensor(x, dtype=tg.float32, requires_grad=x_grad),)

        return World(scope["fn"], args, lambda: [w.detach(), buf], leaves=[w])

    return source, make


@pytest.mark.parametrize("first", range(0, PROGRAMS, GROUP))
def test_generated_aliasing_programs_agree(first):
    for seed in range(first, first + GROUP):
        source, make = program(seed)
        difference = compare(make, 5)
        assert difference is None, f"seed {seed}: {difference}\n{source}"


def test_the_aliasing_fuzzer_sees_a_stale_write():
    """The harness notices a program that skips a write to the parameter (as a compiled call
    that forgot ``w.data += 0.1`` would)."""

    def make_with(write):
        def make():
            w = tg.ones(3, requires_grad=True)

            def fn(x):
                if write:
                    w.data += 0.1
                return (w * x).sum()

            return World(fn, lambda k: (tg.ones(3),), lambda: w.detach(), leaves=[w])

        return make

    assert compare(make_with(True), 3) is None
    assert difference(history(make_with(True), 3), history(make_with(False), 3)) is not None


if __name__ == "__main__":
    source, make = program(int(sys.argv[1]))
    print(source)
    print(compare(make, 5) or "agrees")
