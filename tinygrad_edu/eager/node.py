"""Backward nodes: the eager engine's graph, where each node is a backward op.

A node's ``next_functions`` are its outgoing edges ``(node, input_nr)``: where each input's
gradient flows next (``(None, 0)`` for inputs that need no gradient). Leaves that require grad
end in an :class:`AccumulateGrad` node, which adds into ``.grad``.

NOTE [Saved outputs and reference cycles]
    A tensor points at its ``grad_fn``. If that node also held the tensor (an op such as ``exp``
    reuses its own output), tensor and node would keep each other alive and an unreachable
    graph would wait for the cycle collector. So a node saves its *output* as the bare array
    plus the version counter, and rebuilds a tensor (with itself as ``grad_fn``) only when a
    ``create_graph=True`` backward needs one. Saved *inputs* are held as tensors: they point
    at earlier nodes only, so no cycle forms. Likewise a leaf holds its ``AccumulateGrad`` node
    only weakly, while the node holds the leaf (``.variable``).
"""

from __future__ import annotations

import itertools
import os
import threading
import traceback
import weakref
from typing import NamedTuple

import numpy as _np  # type checks only: numpy turns 0-d results into scalars

from ..backend import device_name, device_of, parse_device, to_device
from ..ops import RAW
from ..ops.base import quiet
from . import core

__all__ = [
    "Node", "OpBackward", "AccumulateGrad", "GraphRoot", "ToCopyBackward", "CopySlices",
    "SavedTensor", "InputMetadata",
    "RemovableHandle", "MAX_SEQUENCE_NR", "accumulate_into", "place",
]  # fmt: skip

_sequence = itertools.count()
CPU = parse_device("cpu")


class DEVICES:
    """Whether any node on a device other than the CPU was ever made in this process: until
    then every graph is CPU-only and the engine need not look (NOTE [Everything on the CPU])."""

    used = False


def place(node: Node, device) -> None:
    """Put ``node`` on ``device`` (a node is on the CPU unless placed)."""
    if device.type != "cpu":
        node.device = device
        DEVICES.used = True


RETAIN_GRAPH_HINT = (
    "the saved values were freed after the first backward; pass retain_graph=True to the "
    "first backward() (or tg.grad) if you need to run backward through this graph again"
)


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` takes the hook out again."""

    __slots__ = ("_hooks", "_fn")

    def __init__(self, hooks: list, fn):
        self._hooks, self._fn = hooks, fn

    def remove(self) -> None:
        if self._fn in self._hooks:
            self._hooks.remove(self._fn)


class Node:
    """A backward op. Subclasses implement :meth:`apply`.

    "Node" means a *backward op* in the eager engine (PyTorch's ``torch.autograd.graph.Node``:
    ``MulBackward0``, ``AccumulateGrad``); in the symbolic engine a
    :class:`tinygrad_edu.symbolic.tensor_node.Node` is a *tensor* (a value that will exist).

    Attributes:
        next_functions: one ``(node or None, input_nr)`` per forward input.
        sequence_nr: creation order; the engine runs the ready node with the highest first
            (``AccumulateGrad``: the largest number, see NOTE [AccumulateGrad runs first]).
        device: where the gradients this node receives live (its forward output's device);
            the engine runs the node on that device's ready queue.
    """

    # Hooks, retained tensors, anomaly traces and devices other than the CPU are rare: they
    # take these class defaults until set (in the instance __dict__), so making a node costs
    # two assignments.
    __slots__ = ("next_functions", "sequence_nr", "__weakref__", "__dict__")
    _pre_hooks = _post_hooks = _tensor_hooks = _retained = _trace = None
    # NOTE [One test for hooks]: True once any hook or retained gradient is set on this node,
    # so the engine tests one attribute per node instead of four. What it costs a reader:
    # every method that sets one of the four must also set this (they all live below).
    _hooked = False
    device = CPU

    def __init__(self, next_functions=()):
        self.next_functions = next_functions
        self.sequence_nr = next(_sequence)

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()} #{self.sequence_nr}>"

    num_outputs = 1  # how many forward outputs this node takes gradients for

    def apply(self, grads: list, create_graph: bool) -> tuple:
        """Gradients for each of ``next_functions`` from the gradients of the outputs."""
        raise NotImplementedError

    def __call__(self, *grads):
        """PyTorch's ``grad_fn(g)``: run this node on gradients of its outputs (tensors) and
        return its inputs' gradients, one tensor (or None) per ``next_functions`` entry; a
        single one alone. Saved values stay (as with ``retain_graph=True``)."""
        if len(grads) != self.num_outputs:
            raise TypeError(
                f"{self.name()} takes {self.num_outputs} gradient(s), one per output of the "
                f"forward op, but was called with {len(grads)}"
            )
        raw = [g._data if isinstance(g, core.Tensor) else g for g in grads]
        outs = self.apply(raw, False)
        wrapped = tuple(None if g is None else core.new_tensor(g, device_of(g)) for g in outs)
        return wrapped[0] if len(wrapped) == 1 else wrapped

    def _sequence_nr(self) -> int:
        """PyTorch's ``grad_fn._sequence_nr()``: this node's ``sequence_nr``."""
        return self.sequence_nr

    @property
    def _input_metadata(self) -> tuple:
        """One :class:`InputMetadata` (shape, dtype, device) per gradient this node takes,
        that is per output of its forward op (PyTorch's ``Node::input_metadata_``; Paddle's
        ``GradSlotMeta``)."""
        return tuple(InputMetadata(*m) for m in self._output_meta())

    def _output_meta(self) -> tuple:
        """``(shape, dtype, device)`` of each forward output (a node that records none: ())."""
        return ()

    @property
    def topological_nr(self) -> int:
        """0 for a node with no next node (AccumulateGrad), else 1 + the largest of its next
        nodes': the length of the longest path down to a leaf (PyTorch's ``topological_nr_``).

        No node with a smaller number can lead to this one, which is what PyTorch uses it for:
        ``grad(outputs, inputs)`` stops walking below the smallest number among the inputs'
        nodes. Computed on first use (PyTorch computes it as each node is made)."""
        known = self.__dict__.get("_topo")
        if known is not None:
            return known
        stack = [self]  # iterative: a graph may be 100,000 nodes deep
        while stack:
            node = stack[-1]
            todo = [n for n, _ in node.next_functions
                    if n is not None and "_topo" not in n.__dict__]  # fmt: skip
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            nexts = [n.__dict__["_topo"] for n, _ in node.next_functions if n is not None]
            node.__dict__["_topo"] = 1 + max(nexts) if nexts else 0
        return self.__dict__["_topo"]

    def release(self) -> None:
        """Free saved values (called after running when ``retain_graph`` is false)."""

    # -- hooks ------------------------------------------------------------------------------
    def register_prehook(self, fn) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before the node; it may return replacement gradients."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._hooked = True
        self._pre_hooks.append(fn)
        return RemovableHandle(self._pre_hooks, fn)

    def register_hook(self, fn) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after the node; it may return replacements
        for ``grad_inputs``."""
        if self._post_hooks is None:
            self._post_hooks = []
        self._hooked = True
        self._post_hooks.append(fn)
        return RemovableHandle(self._post_hooks, fn)

    def _add_tensor_hook(self, output_nr: int, fn) -> RemovableHandle:
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
        self._hooked = True
        hooks = self._tensor_hooks.setdefault(output_nr, [])
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def _retain(self, output_nr: int, tensor) -> None:
        if self._retained is None:
            self._retained = {}
        self._hooked = True
        self._retained[output_nr] = weakref.ref(tensor)

    def _record_trace(self) -> None:
        # the caller's frames only: the library's own (the engine, the op functions) say
        # nothing about where in the learner's program the node was made
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        frames = [f for f in traceback.extract_stack() if not f.filename.startswith(here)]
        self._trace = "".join(traceback.format_list(frames))


class InputMetadata(NamedTuple):
    """The shape, dtype and device of one gradient a node takes (PyTorch's ``_InputMetadata``):
    what the node's forward output was, so what a gradient for it must be."""

    shape: tuple
    dtype: object
    device: str


class SavedTensor:
    """A value saved for backward, with the version it had when saved.

    On unpack, a changed version means an in-place op overwrote it: backward would compute
    with the wrong numbers, so it is an error instead.
    """

    __slots__ = ("data", "tensor", "version", "counter", "is_output")

    def __init__(self, tensor, is_output: bool = False, op=None):
        self.data = tensor._data
        self.counter = tensor._counter
        if type(self.counter) is not list:  # an inference tensor's counter (core.py)
            raise inference_save_error(tensor, getattr(op, "name", op))
        self.version = self.counter[0]
        self.is_output = is_output
        # see NOTE [Saved outputs and reference cycles]
        self.tensor = None if is_output else tensor

    def unpack(self, node: Node, create_graph: bool, what="a tensor"):
        """The saved value (an array, or a tensor for a ``create_graph`` backward); ``what``
        names it in the error (a string, or the input's position)."""
        if self.counter[0] != self.version:
            raise _modified_error(node, what, self.version, self.counter[0])
        if not create_graph:
            return self.data
        if self.is_output:
            return core.new_tensor(self.data, device_of(self.data), node, self.counter)
        return self.tensor


def _modified_error(node, what, saved, now) -> RuntimeError:
    """A value saved for backward was changed in place since (its version moved on)."""
    what = f"its input {what}" if isinstance(what, int) else what
    return RuntimeError(
        f"{node.name()}: {what}, saved for backward, was modified by an in-place "
        f"operation (saved at version {saved}, now at version {now}). "
        "Fix: use an out-of-place op (x = x * 2 instead of x *= 2), or clone() the "
        "value before changing it."
    )


def inference_save_error(tensor, opname=None) -> RuntimeError:
    """PyTorch's error for an inference tensor that an op would save for backward."""
    where = f"{opname}: " if opname else ""
    return RuntimeError(
        f"{where}Inference tensors cannot be saved for backward. A tensor of shape "
        f"{tuple(tensor.shape)} was made inside inference_mode(), and {opname or 'this op'} "
        "needs it to compute a gradient. To work around this, make a clone outside "
        "inference_mode() (x = x.clone()) to get a normal tensor, or use no_grad() instead of "
        "inference_mode()"
    )


class OpBackward(Node):
    """The backward node of an op from the shared op library: runs the op's ``vjp``."""

    __slots__ = (
        "op", "attrs", "saved", "saved_out", "shapes", "dtypes", "needs", "_freed",
    )  # fmt: skip

    def apply(self, grads, create_graph):
        if self._freed:
            raise RuntimeError(f"{self.name()}: {RETAIN_GRAPH_HINT}")
        inputs = self.saved  # all None when the rule needs shapes only
        if self._freed is not None:
            inputs = list(inputs)
            for i, s in enumerate(inputs):
                if type(s) is SavedTensor:
                    inputs[i] = s.unpack(self, create_graph, i)
        out = self.saved_out
        if out is not None:
            out = out.unpack(self, create_graph, "its output")
        F = _tensor_functional() if create_graph else RAW
        attrs = self.attrs
        if attrs:
            result = self.op.vjp(F, grads[0], inputs, out, self.shapes, self.needs, **attrs)
        else:  # see NOTE [Plain calls] in dispatch.py: no nested interpreter loop per node
            result = self.op.vjp(F, grads[0], inputs, out, self.shapes, self.needs)
        # PyTorch's validate_outputs: a gradient has its input's shape and dtype (float32 stays
        # float32 after meeting float64), and is an array even where numpy made a scalar
        for g, dt, shape in zip(result, self.dtypes, self.shapes):
            if g is not None and (g.shape != shape or g.dtype is not dt and g.dtype != dt
                                  or type(g) in _SCALARS):  # fmt: skip
                return _validate(self, F, result)
        return result

    def _output_meta(self) -> tuple:
        """The forward output's shape and dtype, worked out again from the recorded inputs'
        (a node keeps no record of its output: one more field per op costs every op, and this
        is asked for rarely): the op's forward run on zeros of the inputs' shapes and dtypes
        gives both, as a shape rule would (a Python number input counts as ``0.0``)."""
        pairs = zip(self.shapes, self.dtypes)
        zeros = [_np.zeros(s, d) if d is not None else 0.0 for s, d in pairs]
        try:
            with quiet():
                out = _np.asarray(self.op.forward(_np, *zeros, **(self.attrs or {})))
            shape, dtype = out.shape, out.dtype
        except Exception:  # an op that cannot run on zeros: its shape rule, its input's dtype
            shape = self.op.shape(*self.shapes, **(self.attrs or {}))
            dtype = next((d for d in self.dtypes if d is not None), None)
        return ((tuple(shape), dtype, device_name(self.device)),)

    def release(self):
        # BEGIN SOLUTION A2.5
        if self._freed is False:
            self.saved, self.saved_out, self._freed = (), None, True
        # END SOLUTION


_SCALARS = frozenset(_np.sctypeDict.values()) - {_np.ndarray}


def _validate(node, F, result) -> list:
    """Each gradient conformed to its input as PyTorch's ``validate_outputs`` does: a larger
    gradient that the input broadcast to is summed down to the input's shape, a dtype cast to
    the input's; any other shape is an error naming the node, the input and both shapes."""
    out = []
    for i, (g, dtype, shape) in enumerate(zip(result, node.dtypes, node.shapes)):
        if g is not None:
            if tuple(g.shape) != tuple(shape):
                if not _sums_to(tuple(g.shape), tuple(shape)):
                    raise RuntimeError(
                        f"Function {node.name()} returned an invalid gradient at index {i} - "
                        f"got {list(g.shape)} but expected shape compatible with {list(shape)}"
                        f": the derivative rule of '{node.op.name}' must return a gradient of "
                        "each input's shape (sum over the dimensions it broadcast)"
                    )
                g = F.sum_to(g, shape=tuple(shape))
            if g.dtype != dtype and dtype is not None:
                g = F.astype(g, dtype=dtype, src=g.dtype)
            if type(g) in _SCALARS:
                g = _np.asarray(g)
        out.append(g)
    return out


def _sums_to(big: tuple, small: tuple) -> bool:
    """Whether an array of shape ``small`` broadcasts to ``big`` (so ``big`` sums down to it)."""
    if len(small) > len(big):
        return False
    return all(s in (1, b) for s, b in zip(small[::-1], big[::-1]))


def _tensor_functional():
    """The ``F`` of a ``create_graph=True`` backward: ops on tensors, recorded."""
    return core.F  # handed over by functional.py (it applies ops through dispatch, above us)


# NOTE [AccumulateGrad runs first]
#     As in PyTorch, every AccumulateGrad node has the largest sequence number, 2**64 - 1
#     (C's UINT64_MAX), not its creation number: the ready queue runs it as soon as it is ready,
#     so a leaf's .grad is final as early as possible and its buffer is freed. Several
#     AccumulateGrads can be ready at once; the engine runs such ties in the order they became
#     ready (PyTorch's std::priority_queue leaves ties unordered: with three or more ready at
#     once, its order among them can differ from ours).
MAX_SEQUENCE_NR = 2**64 - 1


class AccumulateGrad(Node):
    """The node at the end of a leaf's gradient path: adds the gradient into ``.grad``.

    Its ``sequence_nr`` is :data:`MAX_SEQUENCE_NR` (see NOTE [AccumulateGrad runs first]).
    """

    __slots__ = ("variable",)

    def __init__(self, variable):
        self.next_functions = ()  # no Node.__init__: it takes no number from the sequence
        self.sequence_nr = MAX_SEQUENCE_NR
        self.variable = variable
        if variable._device is not CPU:
            place(self, variable._device)

    def _output_meta(self) -> tuple:
        v = self.variable
        return ((tuple(v._data.shape), v._data.dtype, device_name(v._device)),)

    def _add_tensor_hook(self, output_nr: int, fn) -> RemovableHandle:
        # a leaf's hooks live on the leaf (this node may be freed and made again)
        v = self.variable
        if v._hooks is None:
            v._hooks = []
        self._tensor_hooks = {0: v._hooks}
        return super()._add_tensor_hook(output_nr, fn)

    def apply(self, grads, create_graph):
        with _leaf_lock(self.variable):  # see NOTE [One leaf, several threads]
            # BEGIN SOLUTION A2.3
            self.variable._accumulate(grads[0], create_graph)
            return ()
            # END SOLUTION


# NOTE [One leaf, several threads]
#     Two backward calls can reach one leaf at once: two user threads whose graphs share a
#     parameter, or two device workers. ``.grad += g`` is a read-modify-write (and numpy lets
#     go of the GIL inside large additions), and ``if .grad is None: .grad = g`` is a
#     check-then-act: either loses an update when two threads interleave. So every addition
#     into a tensor's ``.grad`` holds that tensor's own lock (PyTorch's AccumulateGrad does the
#     same with a mutex). ``dict.setdefault`` is atomic, so two threads asking for a leaf's lock
#     for the first time still get the same one.
def _leaf_lock(tensor) -> threading.Lock:
    lock = tensor.__dict__.get("_grad_lock")
    if lock is None:
        lock = tensor.__dict__.setdefault("_grad_lock", threading.Lock())
    return lock


def accumulate_into(tensor, g, create_graph: bool) -> None:
    """``tensor.grad += g`` under the tensor's lock (see NOTE [One leaf, several threads])."""
    with _leaf_lock(tensor):
        tensor._accumulate(g, create_graph)


class ToCopyBackward(Node):
    """The backward of ``x.to(device)``: sends the gradient back to ``x``'s device.

    The copy is the identity on values, so $\\partial L/\\partial x = \\partial L/\\partial y$,
    moved from ``y``'s device (``device``) to ``x``'s (``source``).
    """

    __slots__ = ("source", "out_meta")

    def __init__(self, edge, source, device, out_meta=((), None)):
        super().__init__((edge,))
        self.source, self.out_meta = source, out_meta  # out_meta: the copy's (shape, dtype)
        place(self, device)

    def _output_meta(self) -> tuple:
        return ((*self.out_meta, device_name(self.device)),)

    def name(self) -> str:
        return "ToCopyBackward0"  # PyTorch's name for the node of x.to(device)

    def apply(self, grads, create_graph):
        g = grads[0]
        if create_graph:  # a tensor: the copy back is recorded too
            return (g.to(self.source),)
        return (to_device(g, self.source, src=self.device),)


class CopySlices(Node):
    r"""The base's node after an in-place op through a view of it (``b[1:3].mul_(2)``), as
    PyTorch's ``CopySlices``: ``fn`` is the op's node, recorded on the view.

    With $V$ the view (its ops replayed on an array of the base's shape) and $V^T$ its adjoint
    (the view ops' own derivative rules, in reverse), the base's gradient is ``g`` outside the
    view and ``fn``'s gradient for the view's old value inside it:
    $g + V^T(\mathrm{fn}(V g)_0 - V g)$; ``fn``'s other gradients go to its other inputs.
    Written with ``F`` only, so a ``create_graph=True`` backward records it too.
    ``next_functions``: the base's edge before the change, then ``fn``'s other inputs'.
    """

    __slots__ = ("steps", "fn", "out_meta")

    def __init__(self, base_edge, steps, fn, out_meta=((), None)):
        super().__init__((base_edge, *fn.next_functions[1:]))
        self.steps, self.fn = steps, fn  # steps: the view's, (op, other inputs, attrs, shape)
        self.out_meta = out_meta  # the base's (shape, dtype)
        place(self, fn.device)

    def _output_meta(self) -> tuple:
        return ((*self.out_meta, device_name(self.device)),)

    def apply(self, grads, create_graph):
        F = _tensor_functional() if create_graph else RAW
        g = grads[0]
        gv = g
        for op, extra, attrs, _ in self.steps:
            gv = F.apply(op, gv, *extra, **attrs)
        result = list(self.fn.apply([gv], create_graph))
        if self.next_functions[0][0] is None:
            result[0] = None
            return tuple(result)
        d = -gv if result[0] is None else result[0] - gv
        for op, extra, attrs, shape in reversed(self.steps):
            shapes = (shape,) + tuple(getattr(e, "shape", ()) for e in extra)
            needs = (True,) + (False,) * len(extra)
            d = op.vjp(F, d, (None,) * len(shapes), None, shapes, needs, **attrs)[0]
        result[0] = g + d
        return tuple(result)

    def release(self) -> None:
        self.fn.release()


class GraphRoot(Node):
    """The node the engine starts from: hands each root its seed gradient."""

    __slots__ = ("grads",)

    def __init__(self, edges, grads):
        super().__init__(tuple(edges))
        self.grads = grads

    def apply(self, grads, create_graph):
        return tuple(self.grads)
