"""The symbolic engine: a graph of tensors, differentiated by building more graph.

Layer 3 (``docs/concepts/layers.md``; ``tests/test_import_circles.py`` checks it), beside the
eager engine: it may import ``ops`` and ``backend``, never ``eager`` (an eager tensor and a
symbolic node do not mix) nor anything above (``nn``, ``compiler``, ``viz`` ...).

The package has two halves, and the import check keeps them apart:

- **the engine** (these modules): ``tensor_node`` (a ``Node`` here is a *tensor* of the
  graph; in ``eager/`` a node is a backward op), ``graph`` (``topo_sort``), ``gradients``,
  ``executor`` and its ``memory`` plans, ``api`` and ``layer_functions`` (the ops as
  functions on nodes), ``gradient_check``, ``dtype_rules``, and ``cse599w`` (CSE599W's
  assignment names). Build a graph from :func:`Variable` nodes with operators, methods and
  the functions of :mod:`~tinygrad_edu.symbolic.api`; take :func:`gradients`; evaluate with
  an :class:`Executor` (``Executor(..., plan_memory=True)`` frees and reuses buffers).
- **the static-graph compiler** (:mod:`~tinygrad_edu.symbolic.static`, Paddle's name for
  it; ``docs/concepts/compiler.md``): :class:`Program` / :class:`Block` / :class:`Scope` and
  ``program_guard`` in Paddle Fluid's terms (``static.fluid`` has Fluid's own names),
  :func:`cond` and :func:`while_loop` as differentiable sub-blocks, graph passes and
  :func:`optimize`, :func:`compile` to Python source, and :func:`to_onnx`. It imports the
  engine; no engine module imports it. Its public names are re-exported here.

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

import sys as _sys

from . import api, static
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
from .executor import Executor
from .gradient_check import gradcheck, gradgradcheck
from .gradients import SYMBOLIC, SymbolicFunctional, gradients
from .graph import topo_sort
from .layer_functions import (
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

# the static-graph compiler (symbolic/static/), re-exported: the engine's modules never import it
from .static import (
    Block,
    Program,
    Scope,
    Update,
    compile,
    cond,
    create_global_var,
    create_parameter,
    data,
    default_main_program,
    default_startup_program,
    fluid,
    optimize,
    passes,
    program_guard,
    to_onnx,
    training,
    while_loop,
)
from .tensor_node import CONSTANT, PLACEHOLDER, Node, Variable, apply_op, placeholder, stop_gradient

# The submodules users import by their old path (``import tinygrad_edu.symbolic.training``)
# before the compiler moved to symbolic/static/: the same module objects, not copies.
for _old in (fluid, passes, training):
    _sys.modules.setdefault(f"{__name__}.{_old.__name__.rpartition('.')[2]}", _old)

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
    "gradgradcheck", "static",
]  # fmt: skip
# the layers composed of ops (in ops/conv.py, pooling.py, normalization.py ...: conv1d,
# conv_transpose2d, group_norm, ...)
from . import layer_functions as _layers  # noqa: E402

globals().update({_n: getattr(_layers, _n) for _n in _layers._MORE})
__all__ += _layers._MORE

# The op functions with PyTorch's names (sum, cat, clamp, ...), generated from the op
# library's surface table (see tinygrad_edu.ops.surface), and the rest of the api module's
# functions; the names above take precedence.
for _name in api.__all__:
    globals().setdefault(_name, getattr(api, _name))
__all__ += sorted(set(api.__all__) - set(__all__))
