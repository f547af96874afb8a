import shutil

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu.symbolic import Variable, gradients
from tinygrad_edu.viz.examples import seed, seed_inputs

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` not installed")


@pytest.fixture
def seed_symbolic():
    """(E, [dA, dB, dC], variables, feed) for the seed example."""
    ins = seed_inputs()
    vs = {k: Variable(k, shape=v.shape, dtype="float32") for k, v in ins.items()}
    E = seed(**vs)
    grads = gradients(E, list(vs.values()))
    return E, grads, vs, {vs[k]: ins[k] for k in ins}


@pytest.fixture
def seed_eager():
    """(E, leaves) for the seed example, leaves named A, B, C."""
    leaves = {k: tg.tensor(v, requires_grad=True) for k, v in seed_inputs().items()}
    for k, t in leaves.items():
        t.name = k
    return seed(**leaves), leaves


def reference_seed_grads(ins):
    """d sum(E)/dA, dB, dC by hand (numpy), E = ((A+B)*C) @ (A+C)."""
    A, B, C = (ins[k].astype(np.float64) for k in "ABC")
    D, R = (A + B) * C, A + C
    G = np.ones_like(D)
    dD, dR = G @ R.T, D.T @ G
    return {"A": dD * C + dR, "B": dD * C, "C": dD * (A + B) + dR}
