"""CSE599W (Deep Learning Systems, UW) assignment 1/2 names over this engine.

The course's autodiff tests run unchanged with ``from tinygrad_edu.symbolic import cse599w as
ad``. Every ``*_op`` here is a thin adapter onto the shared op library: calling it builds an
ordinary :class:`~tinygrad_edu.symbolic.Node`, and its derivative is the library's rule.

>>> import numpy as np
>>> from tinygrad_edu.symbolic import cse599w as ad
>>> x2 = ad.Variable(name="x2")
>>> y = 5 + x2
>>> y.const_attr
5
>>> grad_x2, = ad.gradients(y, [x2])
>>> y_val, g_val = ad.Executor([y, grad_x2]).run(feed_dict={x2: 2 * np.ones(3)})
>>> y_val, g_val
(array([7., 7., 7.]), array([1., 1., 1.]))

Write a new op the course's way by subclassing :class:`Op` with ``compute(node,
input_vals)`` and ``gradient(node, output_grad)``; it runs in this engine's executor and
``gradients``.
"""

from __future__ import annotations

from types import SimpleNamespace

from ..backend import namespace_of
from ..ops import Op as _LibraryOp
from ..ops import get_op
from . import api
from .executor import Executor as _Executor
from .gradients import gradients as _gradients
from .graph import topo_sort
from .tensor_node import Node, apply_op
from .tensor_node import Variable as _Variable

__all__ = [
    "Node", "Op", "Variable", "Executor", "gradients", "find_topo_sort", "sum_node_list",
    "add_op", "mul_op", "add_byconst_op", "mul_byconst_op", "matmul_op", "placeholder_op",
    "oneslike_op", "zeroslike_op", "reducesumaxiszero_op", "broadcastto_op",
    "softmaxcrossentropy_op", "softmax_op", "relu_op", "relu_gradient_op",
    "exp", "log", "reduce_sum", "exp_op", "log_op", "softmax_func",
]  # fmt: skip


class Op(_LibraryOp):
    """A course-style op: subclass it and write ``compute`` and ``gradient``.

    ``compute(node, input_vals)`` returns the value from numpy arrays; ``gradient(node,
    output_grad)`` returns one gradient node per input. ``node.const_attr`` carries a constant
    given at build time: ``MyOp()(x, const_attr=3)``.
    """

    name = "course_op"
    takes_const_attr = True  # ``node.const_attr = c`` is stored for ``compute`` to read

    def __init__(self):
        self.name = type(self).__name__

    def __call__(self, *inputs, const_attr=None):
        attrs = {} if const_attr is None else {"const_attr": const_attr}
        return apply_op(self, *inputs, name=f"{self.name}({', '.join(i.name for i in inputs)})",
                        **attrs)  # fmt: skip

    def shape(self, *shapes, **attrs):
        return None  # unknown: the course's ops infer shapes at run time

    def compute(self, node, input_vals):
        raise NotImplementedError(f"{self.name}: write compute(node, input_vals)")

    def gradient(self, node, output_grad):
        raise NotImplementedError(f"{self.name}: write gradient(node, output_grad)")

    def forward(self, xp, *inputs, const_attr=None):
        return self.compute(SimpleNamespace(op=self, const_attr=const_attr), list(inputs))

    def vjp(self, F, g, inputs, out, shapes, needs, const_attr=None):
        view = SimpleNamespace(op=self, inputs=list(inputs), const_attr=const_attr, name=out.name)
        return tuple(self.gradient(view, g))


class _Adapter:
    """A course op name (``add_op``) bound to a function that builds library nodes."""

    def __init__(self, name: str, build):
        self.name = name
        self._build = build

    def __call__(self, *args, **kwargs) -> Node:
        return self._build(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<cse599w {self.name}>"


def Variable(name: str, shape=None, dtype=None) -> Node:
    """A placeholder node, fed through ``feed_dict``."""
    return _Variable(name, shape=shape, dtype=dtype)


placeholder_op = _Adapter("placeholder_op", lambda name="placeholder": _Variable(name))
add_op = _Adapter("add_op", lambda a, b: a + b)
mul_op = _Adapter("mul_op", lambda a, b: a * b)
add_byconst_op = _Adapter("add_byconst_op", lambda a, c: a + c)
mul_byconst_op = _Adapter("mul_byconst_op", lambda a, c: a * c)
matmul_op = _Adapter("matmul_op", api.matmul)
oneslike_op = _Adapter("oneslike_op", api.ones_like)
zeroslike_op = _Adapter("zeroslike_op", api.zeros_like)
reducesumaxiszero_op = _Adapter("reducesumaxiszero_op", lambda a: api.reduce_sum(a, axis=0))
broadcastto_op = _Adapter("broadcastto_op", api.broadcast_to)
softmaxcrossentropy_op = _Adapter("softmaxcrossentropy_op", api.softmax_cross_entropy)
softmax_op = _Adapter("softmax_op", api.softmax)
relu_op = _Adapter("relu_op", api.relu)
relu_gradient_op = _Adapter("relu_gradient_op", api.relu_grad)
exp_op = _Adapter("exp_op", api.exp)
log_op = _Adapter("log_op", api.log)
exp = api.exp
log = api.log
reduce_sum = api.reduce_sum


def softmax_func(y):
    """The numerically stable softmax of each row of ``y`` (axis 1; the only axis of a
    vector), as an array: the course's numpy reference, which assignment 2's tests compare
    the GPU softmax against. It is the op library's softmax kernel.

    >>> import numpy as np
    >>> softmax_func(np.array([[0.0, 1000.0], [1.0, 1.0]]))
    array([[0. , 1. ],
           [0.5, 0.5]])
    """
    if isinstance(y, Node):
        raise TypeError(
            f"softmax_func: got the graph node {y.name!r}; softmax_func computes on arrays "
            "(the tests' numpy reference). In a graph, use softmax_op(node) or "
            "softmaxcrossentropy_op(logits, labels)"
        )
    values = y.asnumpy() if hasattr(y, "asnumpy") else y
    xp = namespace_of(values)
    values = xp.asarray(values)
    return get_op("softmax").forward(xp, values, axis=1 if values.ndim >= 2 else -1)


def gradients(output_node: Node, node_list) -> list[Node]:
    """Gradient nodes of ``output_node`` with respect to each node in ``node_list``."""
    return _gradients(output_node, node_list)


def find_topo_sort(node_list) -> list[Node]:
    """The nodes ``node_list`` depend on, each after its inputs (iterative, any depth)."""
    return topo_sort(node_list)


def sum_node_list(node_list) -> Node:
    """``node_list[0] + node_list[1] + ...`` as add nodes."""
    total = node_list[0]
    for node in node_list[1:]:
        total = total + node
    return total


class Executor:
    """The course's executor: ``Executor(eval_node_list, ctx=None).run(feed_dict)`` returns
    a list of values. ``ctx`` may name a device (``"cpu"``, ``"cuda"``); None is the CPU."""

    def __init__(self, eval_node_list, ctx=None):
        self.eval_node_list = list(eval_node_list)
        self.ctx = ctx
        device = ctx if isinstance(ctx, str) else "cpu"
        self._executor = _Executor(self.eval_node_list, device=device)
        self.topo_order = self._executor.order

    def run(self, feed_dict, convert_to_numpy_ret_vals=False):
        """Values of ``eval_node_list``, as numpy arrays (so ``convert_to_numpy_ret_vals`` has
        nothing left to do). Feeds keep their numpy dtype: float64 in, float64 out. Course
        arrays (with ``.asnumpy()``) are accepted as feeds."""
        feeds = {k: v.asnumpy() if hasattr(v, "asnumpy") else v for k, v in feed_dict.items()}
        return self._executor.run(feeds)
