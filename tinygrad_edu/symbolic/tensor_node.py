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

import numpy as _np  # type checks only (numpy scalars are Python numbers here)

from ..ops import Op, get_op
from .dtype_rules import infer_dtype

__all__ = [
    "Node", "Variable", "placeholder", "constant", "apply_op", "next_seq", "stop_gradient",
    "PLACEHOLDER", "CONSTANT", "STOP_GRADIENT", "RECORDER",
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


class _StopGradient(Op):
    """``stop_gradient(x)``: the value of ``x``, through which no gradient flows (Fluid's
    ``stop_gradient``, PyTorch's ``detach``, TensorFlow's ``tf.stop_gradient``)."""

    name, arity, differentiable = "stop_gradient", 1, False
    onnx = "Identity"

    def forward(self, xp, x):
        return x


def next_seq() -> int:
    """A fresh creation number: every node made afterwards has a larger ``seq``."""
    return next(_seq)


PLACEHOLDER = _Placeholder()
CONSTANT = _Constant()
STOP_GRADIENT = _StopGradient()


class _Recorder:
    """Where new nodes are recorded: ``block`` is the current
    :class:`~tinygrad_edu.symbolic.static.program.Block` (set by ``program_guard`` and while control
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
        partial_shape: the static shape with None for the sizes not known yet (Fluid's
            ``fluid.data("x", shape=[None, 3])``: ``(None, 3)``), or None when not even the
            rank is known; ``shape`` is this when every size is known.
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
        self.partial_shape = self.shape  # the known dims, None for the others (a batch)
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
        if "const_attr" in self.attrs:
            return self.attrs["const_attr"]
        consts = [i for i in self.inputs if i.op is CONSTANT]
        return consts[0].attrs["value"] if len(consts) == 1 else None

    @const_attr.setter
    def const_attr(self, value):
        """CSE599W's ``new_node.const_attr = c``: a constant's new value, a course op's
        constant (its ``compute`` reads ``node.const_attr``), or the one constant input of a
        library op (``(x + 5).const_attr = 7`` makes it ``x + 7``)."""
        if self.op is CONSTANT:
            self.attrs["value"] = _constant_value(value)
            return
        consts = [k for k, i in enumerate(self.inputs) if i.op is CONSTANT]
        if getattr(self.op, "takes_const_attr", False) or len(consts) != 1:
            if not getattr(self.op, "takes_const_attr", False):
                raise AttributeError(
                    f"const_attr: node {self.name!r} (op {self.op.name}) has "
                    f"{len(consts)} constant inputs, so there is no one constant to set; "
                    "write a course op (cse599w.Op) whose compute reads node.const_attr"
                )
            self.attrs["const_attr"] = value
            return
        inputs = list(self.inputs)
        inputs[consts[0]] = constant(value)
        self.inputs = tuple(inputs)

    # -- Fluid's view of an op (``for op in block.ops: op.type, op.input_names ...``): a node
    #    is one op with one output, slot "Out"; its inputs fill slots "X", "Y", "X2", ...
    @property
    def type(self) -> str:
        """The op's name (Fluid's ``op.type``): ``"mul"``, ``"matmul"``, ``"placeholder"``."""
        return self.op.name

    @property
    def input_names(self) -> list:
        """The input slots (Fluid's ``op.input_names``): ``["X", "Y"]`` for a binary op."""
        return [("X", "Y")[k] if k < 2 else f"X{k}" for k in range(len(self.inputs))]

    @property
    def output_names(self) -> list:
        """The output slots (Fluid's ``op.output_names``): ``["Out"]``."""
        return ["Out"]

    @property
    def input_arg_names(self) -> list:
        """The names of the input vars, in slot order (Fluid's ``op.input_arg_names``)."""
        return [i.name for i in self.inputs]

    @property
    def output_arg_names(self) -> list:
        """The output var's name (Fluid's ``op.output_arg_names``)."""
        return [self.name]

    def input(self, slot: str) -> list:
        """The names of the vars in input slot ``slot`` (Fluid's ``op.input("X")``)."""
        slots = self.input_names
        if slot not in slots:
            raise ValueError(f"op {self.op.name} ({self.name!r}) has no input slot {slot!r}; "
                             f"its slots: {slots}")  # fmt: skip
        return [self.inputs[slots.index(slot)].name]

    def output(self, slot: str) -> list:
        """The names of the vars in output slot ``slot`` (``op.output("Out")``)."""
        if slot != "Out":
            raise ValueError(f"op {self.op.name} ({self.name!r}) has one output slot, 'Out', "
                             f"not {slot!r}")  # fmt: skip
        return [self.name]

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
    value = _constant_value(value)
    if isinstance(value, bool | int | float):
        shape, dtype, label = (), None, repr(value)
    else:
        shape, dtype, label = tuple(value.shape), value.dtype, "const"
        if shape == ():
            label = str(value)
    return Node(CONSTANT, attrs={"value": value}, name=name or label, shape=shape, dtype=dtype)


def _constant_value(value):
    """What a constant holds: a numpy scalar as the Python number it stands for (weak, as
    in PyTorch: ``x * np.sqrt(2.0)`` keeps ``x``'s dtype), and a numpy array as a read-only
    copy, so that neither the caller's later writes nor a fetched result can change it."""
    if isinstance(value, _np.generic):
        return value.item()
    if isinstance(value, _np.ndarray):
        value = _np.array(value, copy=True)
        value.setflags(write=False)
    return value


def stop_gradient(x) -> Node:
    """``x``'s value, with no gradient flowing back through it (``gradients`` treats it as a
    constant)."""
    return apply_op(STOP_GRADIENT, x, name=f"stop_gradient({_as_node(x).name})")


def _as_node(x) -> Node:
    if isinstance(x, Node):
        return x
    if isinstance(x, list | tuple):
        raise TypeError(f"cannot use {type(x).__name__} {x!r} as a graph value; use an array")
    if hasattr(x, "grad_fn") and hasattr(x, "requires_grad"):  # an eager (or PyTorch) tensor
        raise TypeError(
            f"cannot use the eager tensor {x!r:.60} in a symbolic graph; eager tensors and "
            "symbolic nodes do not mix. Use S.constant(x.numpy()) for a fixed value, or an "
            "S.Variable fed by the Executor (S.Executor(...).run({var: x.numpy()}))"
        )
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


def _dtype(op: Op, nodes, attrs=None) -> str | None:
    """The static dtype of ``op`` applied to ``nodes``, when it is surely known (see
    :mod:`~.dtype_rules`: the library's promotion rule; Python numbers are weak)."""
    operands = []
    for n in nodes:
        if n.op is CONSTANT and n.dtype is None:
            operands.append(("weak", n.attrs["value"]))
        else:
            rank = n.partial_shape if n.partial_shape is not None else n.shape
            operands.append((n.dtype, None if rank is None else len(rank)))
    return infer_dtype(op.name, operands, attrs or {})


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
    node = Node(op, nodes, attrs, name=label, shape=shape, dtype=_dtype(op, nodes, attrs))
    if shape is None and nodes:
        node.partial_shape = _partial_shape(op, nodes, attrs)
    return node


# NOTE [Partial shapes]: a size not known yet (Fluid's batch dimension, ``shape=[None, 3]``)
# stands in the shape rule as a size no real array has; the result's sizes that come out as
# that stand-in, or grown from it (a flatten multiplies it), are unknown again. The static
# shape stays None, so nothing but the layers that read a feature size (fc, conv2d ...) and
# the checks of the shape rule rely on it; a rule that fails on the stand-in proves nothing.
_UNKNOWN = 2_147_483_629  # a prime; no array here is that long


def _partial_shape(op: Op, nodes, attrs):
    partial = [n.partial_shape for n in nodes]
    if any(p is None for p in partial) or not any(None in p for p in partial):
        return None
    try:
        out = op.shape(*[tuple(_UNKNOWN if d is None else d for d in p) for p in partial],
                       **attrs)  # fmt: skip
    except Exception:
        return None
    if out is None:
        return None
    return tuple(None if d >= _UNKNOWN else d for d in out)


def _install_methods() -> None:
    from ..ops.surface import generate  # noqa: PLC0415

    methods, _, _ = generate(apply_op, symbolic=True)
    for name, method in methods.items():
        setattr(Node, name, method)


_install_methods()
