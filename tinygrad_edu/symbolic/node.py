r"""`Node`: a tensor that will exist. The symbolic engine's graph is made of these.

In this engine (CSE599W's design, Paddle Fluid's static graph) a **node is a tensor** and an
**op is the edge** that produced it from its inputs. Nothing is computed while a graph is
built: ``(A + B) * C`` makes two nodes, and an :class:`~tinygrad_edu.symbolic.Executor` runs
them later. Because the graph exists before any number does, ``gradients()`` can add the
derivative to the same graph as more nodes.

>>> from tinygrad_edu.symbolic import Variable
>>> A, B, C = Variable("A", shape=(2, 2)), Variable("B", shape=(2, 2)), Variable("C")
>>> D = (A + B) * C
>>> D.name, D.op.name, [x.name for x in D.inputs]
('((A+B)*C)', 'mul', ['(A+B)', 'C'])
>>> (A @ B.T).shape
(2, 2)
"""

from __future__ import annotations

import itertools
from typing import Any

from ..ops import Op, get_op

__all__ = [
    "Node", "Variable", "placeholder", "constant", "apply_op", "next_seq",
    "PLACEHOLDER", "CONSTANT", "RECORDER",
]  # fmt: skip

_seq = itertools.count()  # creation numbers: newer nodes have larger ones
_MAX_NAME = 40  # longer generated names fall back to "<op>#<seq>" (drawings stay readable)
_INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/", "matmul": "@"}


class _Placeholder(Op):
    """Marker op of a :func:`Variable`: its value comes from the ``feed_dict``."""

    name, arity, differentiable = "placeholder", 0, False

    def forward(self, xp):
        raise RuntimeError("a Variable's value comes from the feed_dict")


class _Constant(Op):
    """Marker op of a :func:`constant`: its value is the ``value`` attribute.

    Python numbers stay Python numbers, so ``x * 0.5`` keeps ``x``'s dtype (a "weak" scalar);
    arrays are moved into the running namespace.
    """

    name, arity, differentiable = "constant", 0, False

    def forward(self, xp, value):
        return value if isinstance(value, int | float) else xp.asarray(value)


def next_seq() -> int:
    """A fresh creation number: every node made afterwards has a larger ``seq``."""
    return next(_seq)


PLACEHOLDER = _Placeholder()
CONSTANT = _Constant()


class _Recorder:
    """Where new nodes are recorded: ``block`` is the current
    :class:`~tinygrad_edu.symbolic.program.Block` (set by ``program_guard`` and while control
    flow traces a branch or a loop body), or None to record nowhere."""

    block = None


RECORDER = _Recorder()


def _dtype_name(dtype) -> str | None:
    if dtype is None or isinstance(dtype, str):
        return dtype
    return getattr(dtype, "name", None) or getattr(dtype, "__name__", None) or str(dtype)


class Node:
    """A tensor in a symbolic graph: the result of ``op`` applied to ``inputs``.

    "Node" means a *tensor* in the symbolic engine (CSE599W's and Fluid's graphs, where the op
    is the edge); in the eager engine a :class:`tinygrad_edu.eager.node.Node` is a *backward
    op* (``MulBackward0``), as in PyTorch.

    Attributes:
        op: the :class:`~tinygrad_edu.ops.Op` that computes this node (:data:`PLACEHOLDER` for
            a Variable, :data:`CONSTANT` for a constant).
        inputs: the input nodes, as a tuple in argument order; ``a * a`` has two edges to ``a``.
        attrs: the op's keyword attributes (``axis``, ``trans_A``, ``value`` ...).
        name: a readable name for drawings: ``"A"``, ``"(A+B)"``, ``"exp(x)"``.
        shape: the static shape when every input's shape is known (from the op's shape rule,
            so a mismatch fails while the graph is built), else None.
        dtype: the static dtype name when known (Variables declared with one), else None.
        seq: the creation number; later nodes have larger ones.
        is_gradient: True for every node that :func:`gradients` built (drawn in another style).
        grad_of: set on the node that :func:`gradients` settled as the full adjoint
            $\\partial y/\\partial v$ of a forward node ``v``: that ``v`` (the first one, when
            one node is the adjoint of several), else None.
        is_adjoint_sum: True for the ``add`` nodes that sum the partial adjoints of a value
            used more than once.
        persistable: True for Variables whose value lives in a ``Scope`` between runs
            (parameters, optimizer state), as Fluid's persistable variables.
        block: the control-flow sub-block (a branch of ``cond``, a ``while_loop`` body) this
            node was built in, or None for the main graph.

    Nodes hash and compare by identity (``==`` is not elementwise), so they can be dict keys.
    """

    __array_ufunc__ = None  # `numpy_array * node` defers to Node.__rmul__

    def __init__(self, op, inputs=(), attrs=None, name=None, shape=None, dtype=None):
        self.op = op
        self.inputs = tuple(inputs)
        self.attrs = dict(attrs or {})
        self.seq = next(_seq)
        self.name = name if name is not None else f"{op.name}#{self.seq}"
        self.shape = None if shape is None else tuple(shape)
        self.dtype = _dtype_name(dtype)
        self.is_gradient = False
        self.grad_of = None
        self.is_adjoint_sum = False
        self.persistable = False
        block = RECORDER.block
        self.block = block if block is not None and block.idx else None
        if block is not None:
            block._record(self)

    def __repr__(self) -> str:
        shape = "" if self.shape is None else f", shape={self.shape}"
        return f"<Node {self.name} op={self.op.name}{shape}>"

    @property
    def const_attr(self):
        """The constant this node carries: its value for a constant, or the value of its one
        constant input (``(x + 5).const_attr == 5``, as in CSE599W), else None."""
        if self.op is CONSTANT:
            return self.attrs["value"]
        consts = [i for i in self.inputs if i.op is CONSTANT]
        return consts[0].attrs["value"] if len(consts) == 1 else None

    # -- ops as methods (x + y, x.exp(), x.sum(dim=1) ...): generated from the op library's
    #    surface table after the class (see tinygrad_edu.ops.surface), with the eager
    #    Tensor's names, so one function can build either graph
    #    (comparisons build boolean nodes, for cond and while_loop; == and != stay
    #    identity, because nodes are dict keys)
    def __getitem__(self, index):
        return apply_op("getitem", self, index=index)

    def __bool__(self):
        raise TypeError(
            f"Node {self.name!r} holds no value yet, so it is neither true nor false: a symbolic "
            "graph cannot branch on its own values while it is built. Use the eager engine for "
            "value-dependent control flow, or a fixed number of unrolled steps."
        )

    def __iter__(self):
        raise TypeError(f"Node {self.name!r} holds no values yet, so it cannot be iterated")

    def astype(self, dtype: str):
        """Convert to ``dtype`` (a name such as ``"float32"``); needs a known input dtype."""
        if self.dtype is None:
            raise TypeError(
                f"astype: the dtype of {self.name!r} is unknown, so its gradient could not be "
                "converted back; declare it, e.g. Variable(name, dtype='float32')"
            )
        return apply_op("astype", self, dtype=_dtype_name(dtype), src=self.dtype)



def Variable(name: str, shape=None, dtype=None) -> Node:
    """A graph input, fed a value at run time (``feed_dict={x: array}``).

    Args:
        name: shown in drawings and in errors.
        shape: the static shape, when known; ops on it then check shapes as the graph is built.
        dtype: the dtype to convert feeds to (e.g. ``"float64"``); None keeps a numpy feed's
            dtype (Python data becomes float32).
    """
    return Node(PLACEHOLDER, name=name, shape=shape, dtype=dtype)


placeholder = Variable


def constant(value: Any, name: str | None = None) -> Node:
    """A constant node. ``x + 5`` makes one for the ``5``.

    >>> constant(5).name, constant(5).shape
    ('5', ())
    """
    if isinstance(value, Node):
        return value
    if isinstance(value, bool | int | float):
        shape, dtype, label = (), None, repr(value)
    else:
        shape, dtype, label = tuple(value.shape), value.dtype, "const"
        if shape == ():
            label = str(value)
    return Node(CONSTANT, attrs={"value": value}, name=name or label, shape=shape, dtype=dtype)


def _as_node(x) -> Node:
    if isinstance(x, Node):
        return x
    if isinstance(x, list | tuple):
        raise TypeError(f"cannot use {type(x).__name__} {x!r} as a graph value; use an array")
    return constant(x)


def _name(op: Op, nodes, attrs) -> str | None:
    names = [n.name for n in nodes]
    if op.name in _INFIX and len(nodes) == 2:
        left = names[0] + (".T" if attrs.get("trans_A") else "")
        right = names[1] + (".T" if attrs.get("trans_B") else "")
        text = f"({left}{_INFIX[op.name]}{right})"
    elif op.name == "pow":
        text = f"({names[0]}**{attrs['exponent']})"
    elif op.name == "neg":
        text = f"-{names[0]}"
    elif op.name == "getitem":
        text = f"{names[0]}[...]"
    else:
        text = f"{op.name}({', '.join(names)})"
    return text if len(text) <= _MAX_NAME else None


def _dtype(op: Op, nodes) -> str | None:
    if op.name in ("greater", "greater_equal", "less", "less_equal", "equal", "not_equal"):
        return "bool"
    dtypes = {n.dtype for n in nodes if not (n.op is CONSTANT and n.dtype is None)}
    return dtypes.pop() if len(dtypes) == 1 and None not in dtypes else None


def apply_op(op: Op | str, *inputs, name: str | None = None, **attrs) -> Node:
    """Build the node for ``op`` applied to ``inputs`` (numbers and arrays become constants).

    When every input's shape is known, the op's shape rule gives the new node's shape, so an
    incompatible op fails here, naming the op and the shapes:

    >>> apply_op("matmul", Variable("a", shape=(3, 4)), Variable("b", shape=(5, 4)))
    Traceback (most recent call last):
    ...
    tinygrad_edu.ops.base.ShapeError: matmul: shapes (3, 4) and (5, 4) do not align (inner \
sizes 4 and 5); transpose one side or fix the shapes
    """
    op = get_op(op) if isinstance(op, str) else op
    nodes = tuple(_as_node(x) for x in inputs)
    shapes = [n.shape for n in nodes]
    shape = op.shape(*shapes, **attrs) if None not in shapes else None
    label = name if name is not None else _name(op, nodes, attrs)
    return Node(op, nodes, attrs, name=label, shape=shape, dtype=_dtype(op, nodes))


def _install_methods() -> None:
    from ..ops.surface import generate  # noqa: PLC0415

    methods, _, _ = generate(apply_op, symbolic=True)
    for name, method in methods.items():
        setattr(Node, name, method)


_install_methods()
