"""A notebook assignment added to the toy course (tests of grading/notebook.py)."""

from __future__ import annotations

import json
from pathlib import Path

LESSON = '''\
# %% [markdown]
# # T3: the derivative of softplus

# %%
import numpy as np

try:
    from tinygrad_course.grading.notebook import check, configure
except ImportError:  # where the notebook is graded, its checks do nothing
    check = configure = lambda *args, **kwargs: None

configure(module="toy.nb_t3", suite="tests/assignments/test_nb.py")


# %%
def softplus_grad(x, g):
    """dL/dx of softplus(x) = log(1 + e^x), given dL/dy = g."""
    # BEGIN SOLUTION T3.1
    return g / (1 + np.exp(-x))
    # END SOLUTION


# %%
check("T3.1")
'''

PROBES = '''\
"""Probes of the notebook assignment T3."""

import numpy as np


def softplus_grad(x, g):
    import toy.nb_t3 as nb  # at call time: in check(), the notebook's live definitions

    return np.asarray(nb.softplus_grad(np.asarray(x, dtype=float), np.asarray(g, dtype=float)),
                      dtype=float)
'''

TESTS = '''\
"""Assignment T3: a notebook."""

import numpy as np
import pytest

from . import probes_nb as probes


@pytest.mark.task("T3.1")
@pytest.mark.points(2)
def test_softplus_grad(run):
    """softplus_grad at 0 and 1"""
    x = np.array([0.0, 1.0])
    got = run(probes.softplus_grad, x=x, g=[1.0, 1.0])
    np.testing.assert_allclose(got, 1 / (1 + np.exp(-x)),
                               err_msg="the derivative of log(1 + e^x) is the sigmoid of x")


# BEGIN HIDDEN TESTS
@pytest.mark.hidden
@pytest.mark.task("T3.1")
@pytest.mark.points(3)
def test_softplus_grad_far_out(run):
    """softplus_grad at -800 and 800"""
    got = run(probes.softplus_grad, x=[-800.0, 800.0], g=[1.0, 1.0])
    np.testing.assert_allclose(got, [0.0, 1.0], atol=1e-12)
# END HIDDEN TESTS
'''

POINTS = {"T3.1": 5}


def add(repo: Path) -> Path:
    """Add the notebook assignment to the toy course at ``repo``."""
    (repo / "toy" / "nb_t3.py").write_text(LESSON)
    (repo / "tests" / "assignments" / "probes_nb.py").write_text(PROBES)
    (repo / "tests" / "assignments" / "test_nb.py").write_text(TESTS)
    return repo


def to_ipynb(lesson: str) -> str:
    """The lesson as the .ipynb a student would submit (what jupytext writes, in short)."""
    cells = []
    for chunk in lesson.split("# %%")[1:]:
        head, _, body = chunk.partition("\n")
        kind = "markdown" if "[markdown]" in head else "code"
        lines = body.strip("\n").splitlines(keepends=True)
        if kind == "markdown":
            lines = [ln[2:] if ln.startswith("# ") else ln for ln in lines]
        cells.append({"cell_type": kind, "metadata": {}, "source": lines,
                      **({"outputs": [], "execution_count": None} if kind == "code" else {})})
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
