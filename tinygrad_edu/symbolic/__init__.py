"""The symbolic engine: a graph of tensors, differentiated by building more graph.

Layer 3 (``docs/concepts/layers.md``; ``tests/test_import_circles.py`` checks it), beside the
eager engine: it may import ``ops`` and ``backend``, never ``eager`` (an eager tensor and a
symbolic node do not mix) nor anything above (``nn``, ``compiler``, ``viz`` ...). Its bottom
module is ``node`` (a ``Node`` here is a *tensor* of the graph; in ``eager/`` a node is a
backward op); ``serialize`` hands ``Program`` its ``to_json``/``from_json``, so ``program``
never imports it.

Build a graph from :func:`Variable` nodes with operators, methods and the functions of
:mod:`~tinygrad_edu.symbolic.api`; take :func:`gradients`; evaluate with an
:class:`Executor`. :mod:`~tinygrad_edu.symbolic.cse599w` offers CSE599W's assignment names.

The engine is also a small static-graph compiler (``docs/concepts/compiler.md``):
:class:`Program` / :class:`Block` / :class:`Scope` and ``program_guard`` in Paddle Fluid's
terms (:mod:`~tinygrad_edu.symbolic.fluid` has Fluid's own names), :func:`cond` and
:func:`while_loop` as differentiable sub-blocks, graph passes and :func:`optimize`, memory
plans (``Executor(..., plan_memory=True)``), :func:`compile` to Python source, and
:func:`to_onnx`.

>>> import numpy as np
>>> from tinygrad_edu.symbolic import Executor, Variable, gradients
>>> A, B, C = Variable("A"), Variable("B"), Variable("C")
>>> D = (A + B) * C
>>> E = D @ (A + C)
>>> dA, dB = gradients(E, [A, B])
>>> a, b, c = (np.eye(2) * k for k in (1.0, 2.0, 3.0))
>>> e, ga = Executor([E, dA]).run({A: a, B: b, C: c})
>>> e
array([[36.,  0.],
       [ 0., 36.]])
"""

from . import api, serialize  # noqa: F401  (serialize hands Program its to_json/from_json)
from .api import (
    broadcast_to,
    constant,
    exp,
    expand_dims,
    fill,
    getitem,
    getitem_grad,
    log,
    log_softmax,
    matmul,
    maximum,
    ones_like,
    reduce_max,
    reduce_mean,
    reduce_sum,
    relu,
    relu_grad,
    reshape,
    sigmoid,
    softmax,
    softmax_cross_entropy,
    sum_to,
    tanh,
    transpose,
    where,
    zeros_like,
)
from .codegen import compile
from .control_flow import cond, while_loop
from .executor import Executor
from .gradient_check import gradcheck, gradgradcheck
from .gradients import SYMBOLIC, SymbolicFunctional, gradients
from .graph import topo_sort
from .initializer import create_global_var, create_parameter, data
from .layers import (
    adaptive_avg_pool2d,
    avg_pool2d,
    batch_norm,
    conv2d,
    dropout,
    embedding,
    layer_norm,
    max_pool2d,
    pad,
)
from .node import CONSTANT, PLACEHOLDER, Node, Variable, apply_op, placeholder, stop_gradient
from .onnx_export import to_onnx
from .passes import optimize
from .program import (
    Block,
    Program,
    Update,
    default_main_program,
    default_startup_program,
    program_guard,
)
from .scope import Scope

__all__ = [
    "Node", "Variable", "placeholder", "constant", "apply_op", "PLACEHOLDER", "CONSTANT",
    "gradients", "SymbolicFunctional", "SYMBOLIC", "Executor", "topo_sort", "api",
    "matmul", "exp", "log", "tanh", "sigmoid", "relu", "relu_grad", "reduce_sum", "reduce_mean",
    "reduce_max", "broadcast_to", "sum_to", "expand_dims", "softmax", "log_softmax",
    "softmax_cross_entropy", "zeros_like", "ones_like", "transpose", "reshape", "maximum",
    "where", "getitem", "getitem_grad", "fill",
    "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "pad", "batch_norm",
    "layer_norm", "embedding", "dropout",
    "Program", "Block", "Update", "Scope", "program_guard", "default_main_program",
    "default_startup_program", "create_parameter", "create_global_var", "data", "cond",
    "while_loop", "compile", "optimize", "to_onnx", "stop_gradient", "gradcheck",
    "gradgradcheck",
]  # fmt: skip
# the layers composed of ops (in ops/conv.py, pooling.py, normalization.py ...: conv1d,
# conv_transpose2d, group_norm, ...)
from . import layers as _layers  # noqa: E402

globals().update({_n: getattr(_layers, _n) for _n in _layers._MORE})
__all__ += _layers._MORE

# The op functions with PyTorch's names (sum, cat, clamp, ...), generated from the op
# library's surface table (see tinygrad_edu.ops.surface), and the rest of the api module's
# functions; the names above take precedence.
for _name in api.__all__:
    globals().setdefault(_name, getattr(api, _name))
__all__ += sorted(set(api.__all__) - set(__all__))
