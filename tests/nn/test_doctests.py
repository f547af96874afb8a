"""The examples in the docstrings of nn, optim, data, symbolic training and the layer ops run
as written."""

import doctest
import importlib

import pytest

MODULES = [
    "tinygrad_edu.nn", "tinygrad_edu.nn.module", "tinygrad_edu.nn.linear", "tinygrad_edu.nn.loss",
    "tinygrad_edu.optim", "tinygrad_edu.optim.optimizer", "tinygrad_edu.optim.sgd",
    "tinygrad_edu.optim.adam", "tinygrad_edu.data", "tinygrad_edu.data.digits",
    "tinygrad_edu.data.synthetic", "tinygrad_edu.data.loader",
    "tinygrad_edu.symbolic.static.training",
    "tinygrad_course.demo", "tinygrad_edu.nn.functional_layers", "tinygrad_edu.nn.conv",
    "tinygrad_edu.nn.pooling", "tinygrad_edu.nn.normalization", "tinygrad_edu.nn.embedding",
    "tinygrad_edu.nn.init", "tinygrad_edu.ops.conv", "tinygrad_edu.ops.conv_composed",
    "tinygrad_edu.ops.pooling", "tinygrad_edu.ops.pooling_adaptive",
    "tinygrad_edu.ops.padding", "tinygrad_edu.ops.normalization", "tinygrad_edu.ops.embedding",
    "tinygrad_edu.backend.windows", "tinygrad_edu.symbolic.layer_functions", "tinygrad_edu.nn.rnn",
    "tinygrad_edu.nn.attention", "tinygrad_edu.data.text", "tinygrad_edu.ops.layer_surface",
    "tinygrad_edu.nn.containers", "tinygrad_edu.nn.activation", "tinygrad_edu.nn.dropout",
    "tinygrad_edu.nn.flatten", "tinygrad_edu.nn.padding", "tinygrad_edu.nn.upsampling",
    "tinygrad_edu.nn.pixelshuffle", "tinygrad_edu.nn.parameter", "tinygrad_edu.nn.state_dict",
    "tinygrad_edu.nn.serialization", "tinygrad_edu.nn.unpickler", "tinygrad_edu.nn.functional_conv",
    "tinygrad_edu.nn.functional_pooling", "tinygrad_edu.nn.functional_embedding",
    "tinygrad_edu.nn.functional_vision", "tinygrad_edu.nn.functional_losses",
]  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
