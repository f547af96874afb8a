"""The docstring examples of the static-graph compiler's modules run (and stay true)."""

import doctest
import importlib

import pytest

MODULES = [
    "tinygrad_edu.symbolic.program", "tinygrad_edu.symbolic.scope",
    "tinygrad_edu.symbolic.initializer", "tinygrad_edu.symbolic.serialize",
    "tinygrad_edu.symbolic.fluid", "tinygrad_edu.symbolic.control_flow",
    "tinygrad_edu.symbolic.memory", "tinygrad_edu.symbolic.codegen",
    "tinygrad_edu.symbolic.training", "tinygrad_edu.symbolic.passes",
    "tinygrad_edu.symbolic.passes.rewrite", "tinygrad_edu.symbolic.passes.cse",
    "tinygrad_edu.symbolic.passes.simplify", "tinygrad_edu.symbolic.passes.fold",
    "tinygrad_edu.symbolic.passes.dce", "tinygrad_edu.viz.blocks",
    "tinygrad_edu.viz.memory_plan", "tinygrad_edu.compiler.api",
]  # fmt: skip


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0
