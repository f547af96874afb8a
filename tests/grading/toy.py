"""A toy course for the grading tests: a two-file library with three tasks, probes, and a
graded suite with a hidden test. Small enough that a whole autograder run takes a second."""

from __future__ import annotations

from pathlib import Path

OPS = '''\
"""Toy ops."""


def square(x):
    # BEGIN SOLUTION T1.1
    return x * x
    # END SOLUTION


def cube(x):
    # BEGIN SOLUTION T1.2
    return x * square(x)
    # END SOLUTION


def given(x):
    return x + 1
'''

MORE = '''\
"""More toy ops."""

from .ops import cube


class Poly:
    def __init__(self, k):
        self.k = k

    def value(self, x):
        # BEGIN SOLUTION T2.1
        return self.k * cube(x)
        # END SOLUTION
'''

PROBES = '''\
"""Probes of the toy suite."""

import numpy as np

from toy.more import Poly
from toy.ops import cube, given, square

FUNCTIONS = {"square": square, "cube": cube, "given": given}


def call(name, x):
    return np.asarray(FUNCTIONS[name](np.asarray(x, dtype=float)))


def poly(k, x):
    return float(Poly(k).value(x))


def echo(value):
    return value
'''

TESTS = '''\
import numpy as np
import pytest

from . import probes_toy as probes


@pytest.mark.task("T1.0")
@pytest.mark.points(1)
def test_given(run):
    """given(x) = x + 1"""
    np.testing.assert_allclose(run(probes.call, name="given", x=[1.0, 2.0]), [2.0, 3.0])


@pytest.mark.task("T1.1")
@pytest.mark.points(2)
def test_square(run):
    """square of [1, 2, 3]"""
    np.testing.assert_allclose(run(probes.call, name="square", x=[1.0, 2.0, 3.0]), [1, 4, 9])


@pytest.mark.task("T1.2")
@pytest.mark.points(3)
def test_cube(run):
    """cube of [1, 2]"""
    np.testing.assert_allclose(run(probes.call, name="cube", x=[1.0, 2.0]), [1.0, 8.0])


@pytest.mark.task("T2.1")
@pytest.mark.points(2)
def test_poly(run):
    """Poly(k).value: k x^3"""
    assert run(probes.poly, k=2.0, x=3.0) == 54.0


@pytest.mark.task("T2.2", uses=("T1.2", "T2.1"))
@pytest.mark.points(1)
def test_poly_and_cube(run):
    """Poly and cube together"""
    assert run(probes.poly, k=1.0, x=2.0) == float(run(probes.call, name="cube", x=2.0))


# BEGIN HIDDEN TESTS
@pytest.mark.task("T1.2")
@pytest.mark.hidden
@pytest.mark.points(5)
def test_cube_negative(run, reference):
    """cube of negative numbers"""
    x = [-2.0, -0.5]
    np.testing.assert_allclose(run(probes.call, name="cube", x=x),
                               reference(probes.call, name="cube", x=x))
# END HIDDEN TESTS
'''

POINTS = {"T1.0": 1, "T1.1": 2, "T1.2": 3 + 5, "T2.1": 2, "T2.2": 1}


def make(root: Path) -> Path:
    """Write the toy course into ``root``; return it."""
    files = {
        "toy/__init__.py": "",
        "toy/ops.py": OPS,
        "toy/more.py": MORE,
        "pyproject.toml": '[project]\nname = "toy"\nversion = "0"\ndependencies = ["numpy"]\n',
        "tests/__init__.py": "",
        "tests/assignments/__init__.py": "",
        "tests/assignments/probes_toy.py": PROBES,
        "tests/assignments/test_toy.py": TESTS,
        "tests/test_other.py": "def test_not_graded():\n    pass\n",
        "docs/guide.md": "guide",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root
