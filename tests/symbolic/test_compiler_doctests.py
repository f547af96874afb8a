"""The docstring examples of the static-graph compiler's modules run (and stay true)."""

import doctest
import importlib

import pytest

MODULES = [
    "tinygrad_edu.symbolic.static.program", "tinygrad_edu.symbolic.static.scope",
    "tinygrad_edu.symbolic.static.initializer", "tinygrad_edu.symbolic.static.serialize",
    "tinygrad_edu.symbolic.static.fluid", "tinygrad_edu.symbolic.static.control_flow",
    "tinygrad_edu.symbolic.memory", "tinygrad_edu.symbolic.static.codegen",
    "tinygrad_edu.symbolic.static.training", "tinygrad_edu.symbolic.static.passes",
    "tinygrad_edu.symbolic.static.passes.rewrite", "tinygrad_edu.symbolic.static.passes.cse",
    "tinygrad_edu.symbolic.static.passes.simplify", "tinygrad_edu.symbolic.static.passes.fold",
    "tinygrad_edu.symbolic.static.passes.dce", "tinygrad_edu.viz.blocks",
    "tinygrad_edu.viz.memory_plan", "tinygrad_edu.compiler.compiled_callable",
]  # fmt: skip


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0
