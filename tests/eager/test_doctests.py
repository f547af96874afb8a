"""The examples in the docstrings of the top-level API, the eager engine and the op library
run as written (the layer ops' examples run in tests/nn/test_doctests.py)."""

import doctest
import importlib
import pkgutil

import pytest

import tinygrad_edu.eager
import tinygrad_edu.ops

_LAYER_OPS = {"conv", "pool", "pad", "norm", "embedding"}  # tests/nn/test_doctests.py
MODULES = ["tinygrad_edu", "tinygrad_edu.autograd", "tinygrad_edu.nn.functional"]
MODULES += [f"tinygrad_edu.eager.{m.name}"
            for m in pkgutil.iter_modules(tinygrad_edu.eager.__path__)]  # fmt: skip
MODULES += [f"tinygrad_edu.ops.{m.name}" for m in pkgutil.iter_modules(tinygrad_edu.ops.__path__)
            if m.name not in _LAYER_OPS]  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
