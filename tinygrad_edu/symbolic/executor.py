"""``Executor``: evaluates symbolic nodes for the values fed to their Variables.

The topological order is computed once, when the executor is made; each ``run`` then walks
it, computing every node with its op's forward kernel over the device's array namespace
(``xp``). The same executor serves feeds of any shape.

>>> import numpy as np
>>> from tinygrad_edu.symbolic import Executor, Variable
>>> x = Variable("x")
>>> y = x * 2 + 1
>>> ex = Executor([y])
>>> ex.run({x: np.array([1.0, 2.0])})
[array([3., 5.])]
>>> [n.name for n in ex.order]
['x', '2', '(x*2)', '1', '((x*2)+1)']

Variables are fed keyed by the Variable itself; a Variable the outputs do not need may be fed
too (TF1, Fluid and CSE599W code feeds every placeholder at every step, and ``optimize()``
may drop a Variable whose value no output reads). A string or a computed node is an error,
never silently ignored.

>>> ex.run({"x": np.ones(2)})
Traceback (most recent call last):
...
TypeError: feed_dict keys must be Variables (the Node objects), not the string 'x'; this graph \
has a Variable named 'x': write run({x: value}) with that Variable as the key
"""

from __future__ import annotations

import numpy as _np  # only to hand results back as numpy arrays

from ..backend import default_float, get_namespace, to_device
from ..ops import REGISTRY, ShapeError
from ..ops.base import fmt_shapes
from .graph import topo_sort
from .memory import VIEW_OPS, MemoryPlan, liveness, out_kernel, supports_out, write_out
from .tensor_node import PLACEHOLDER, Node

__all__ = ["Executor", "compute_node", "run_kernel", "strong", "feed_value", "feed_hints",
           "check_feed_keys", "to_numpy"]  # fmt: skip


class Executor:
    """Runs a list of nodes.

    Args:
        nodes: the nodes whose values ``run`` returns (a single node is allowed).
        device: ``"cpu"`` (numpy) or ``"cuda"``/``"cuda:N"`` (CuPy).
        plan_memory: free each value right after its last use and compute into reused
            buffers (see :mod:`~tinygrad_edu.symbolic.memory`); ``values`` then keeps only
            the outputs.

    Attributes:
        order: every node the outputs need, each after its inputs (the evaluation order).
        variables: the Variables among them, which every ``run`` must feed.
        values: node -> value (an array of the device's namespace) from the last ``run``.
        memory_plan: the :class:`~tinygrad_edu.symbolic.memory.MemoryPlan` (liveness, and the
            buffers of the latest run), or None without ``plan_memory``.
    """

    def __init__(self, nodes, device: str = "cpu", plan_memory: bool = False):
        self.nodes = [nodes] if isinstance(nodes, Node) else list(nodes)
        for n in self.nodes:
            if not isinstance(n, Node):
                raise TypeError(f"Executor: outputs must be symbolic Nodes, got {n!r}")
        self.device = device
        self.order = topo_sort(self.nodes)
        self.variables = tuple(n for n in self.order if n.op is PLACEHOLDER)
        # Variables that may be fed although no output reads their value: the x of a zero
        # gradient dy/dx that needs no feed (gradients() records x as the node's grad_of)
        self._feedable = set(self.variables) | {
            n.grad_of for n in self.order if n.grad_of is not None and n.grad_of.op is PLACEHOLDER
        }
        self._hints = feed_hints(self.order)
        self.memory_plan = MemoryPlan(self.order, self.nodes) if plan_memory else None
        self.values: dict = {}

    def run(self, feed_dict=None, observer=None, return_all: bool = False):
        """Compute the outputs for ``feed_dict`` (Variable -> array, list or number).

        Numpy feeds keep their dtype; Python data becomes float32 (or the Variable's dtype).
        ``observer(node, value)``, when given, is called after each node is computed, in
        evaluation order. Returns the outputs as numpy arrays, in the order given; with
        ``return_all=True``, a dict of every node's value instead (of the outputs only, with
        ``plan_memory``: the others were freed).
        """
        outputs = self.run_on_device(feed_dict, observer)
        if return_all:
            return {node: to_numpy(v) for node, v in self.values.items()}
        return [to_numpy(v) for v in outputs]

    def run_on_device(self, feed_dict=None, observer=None) -> list:
        """Like :meth:`run`, but the outputs stay arrays of the device's namespace."""
        feed_dict = feed_dict or {}
        check_feed_keys(feed_dict, self._feedable, self.variables)
        xp = get_namespace(self.device)
        if self.memory_plan is not None:
            return self._run_planned(xp, feed_dict, observer)
        values = self.values = {}
        # BEGIN SOLUTION A1.2
        for node in self.order:
            if node.op is PLACEHOLDER:
                value = feed_value(xp, node, feed_dict, self._hints)
            else:
                value = compute_node(xp, node, [values[i] for i in node.inputs])
            values[node] = value
            if observer is not None:
                observer(node, value)
        # END SOLUTION
        return [values[n] for n in self.nodes]

    def _run_planned(self, xp, feed_dict, observer) -> list:
        """Run with the memory plan for these feed shapes (made by a profiling run the first
        time): values freed after their last use, results written into planned buffers."""
        plan = self.memory_plan
        feeds = {v: feed_value(xp, v, feed_dict, self._hints) for v in self.variables}
        signature = tuple((tuple(a.shape), str(a.dtype)) for a in feeds.values())
        replay = plan.replays.get(signature) if supports_out(xp) else None
        if replay is None:
            return self._profile(xp, feed_dict, observer, signature)
        plan.use(replay)
        values = self.values = {}
        buffers = [None] * len(replay.specs)
        for step, node in enumerate(replay.order):
            if node.op is PLACEHOLDER:
                value = feeds[node]
            else:
                args = [values[i] for i in node.inputs]
                b = replay.buffer[step]
                if b is not None:  # written into a planned buffer
                    if buffers[b] is None:
                        shape, dtype = replay.specs[b]
                        buffers[b] = xp.empty(shape, dtype=dtype)
                    value = write_out(xp, node, args, buffers[b])
                else:
                    value = compute_node(xp, node, args)
                    if replay.adopt[step] is not None:  # its new array becomes a buffer
                        buffers[replay.adopt[step]] = value
            values[node] = value
            if observer is not None:
                observer(node, value)
            for dead in replay.frees[step]:
                del values[dead]
            for b in replay.drops[step]:
                buffers[b] = None
        return [values[n] for n in self.nodes]

    def _profile(self, xp, feed_dict, observer, signature) -> list:
        """The first run for some feed shapes: the plain run (:meth:`run_on_device`'s own loop,
        so a plan never runs a graph that the plain executor cannot), each value freed after
        its last use; records each value's size and which memory it shares, then makes the
        plan (see :meth:`MemoryPlan.learn`)."""
        plan = self.memory_plan
        order, (_, frees) = plan.plain_order, liveness(plan.plain_order, plan.outputs)
        step_of = {node: step for step, node in enumerate(order)}
        facts, owner, members = {}, {}, {}  # owner: id(memory) -> group; members: live count
        keys_of: dict = {}  # group -> the ids of its memory

        def profile(node, value):
            values = self.values
            groups, size = set(), 0
            for array in _arrays(value):
                base = getattr(array, "base", None)
                key = id(array if base is None else base)
                if key not in owner:
                    owner[key] = node
                    keys_of.setdefault(node, []).append(key)
                    size += getattr(array, "nbytes", 0)
                groups.add(owner[key])
            if node.inputs and (node.op.name in VIEW_OPS or getattr(node.op, "multi_output", 0)):
                inputs = node.inputs if getattr(node.op, "multi_output", 0) else node.inputs[:1]
                groups |= {g for i in inputs for g in facts[i][1]}
            spec, writes_out = None, False
            if groups == {node} and _adoptable(xp, node, value):  # a fresh array of our own
                args = [values[i] for i in node.inputs]
                spec = (tuple(value.shape), value.dtype)
                writes_out = out_kernel(xp, node, args) == spec
            groups = tuple(sorted(groups, key=lambda n: n.seq))
            facts[node] = (size, groups, spec, writes_out)
            for g in groups:
                members[g] = members.get(g, 0) + 1
            if observer is not None:
                observer(node, value)
            for dead in frees[step_of[node]]:
                del values[dead]
                for g in facts[dead][1]:  # a group no value uses any more: forget its memory
                    members[g] -= 1
                    if members[g] == 0:
                        for key in keys_of.pop(g, ()):
                            del owner[key]

        self.memory_plan = None  # the plain run
        try:
            outputs = self.run_on_device(feed_dict, profile)
        finally:
            self.memory_plan = plan
        if len(facts) != len(order):
            raise RuntimeError(f"Executor: the plain run computed {len(facts)} of the "
                               f"{len(order)} nodes, so no memory plan can be made")  # fmt: skip
        plan.learn(signature, facts)
        return outputs


def _adoptable(xp, node, value) -> bool:
    """May a plan write over ``value`` once it is dead? Only arrays that a library op just
    made (not a feed, a constant's array, or what a user-defined op may keep)."""
    op = node.op
    if op is PLACEHOLDER or op.name == "constant" or REGISTRY.get(op.name) is not op:
        return False
    array_type = getattr(xp, "ndarray", None)  # numpy's and CuPy's arrays
    return array_type is not None and isinstance(value, array_type)


def _arrays(value):
    """The arrays inside a value (itself, or the items of a control-flow tuple or stack)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, tuple | list):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif hasattr(v, "shape") and hasattr(v, "dtype"):
            yield v


def check_feed_keys(feed_dict, feedable, variables) -> None:
    """Every key of ``feed_dict`` must be a Variable: one of the ``feedable`` ones, or one the
    outputs do not need (accepted and not read). A string, a computed node or another object
    is a clear error naming the graph's Variables."""
    for key in feed_dict:
        if key in feedable or (isinstance(key, Node) and key.op is PLACEHOLDER):
            continue
        names = ", ".join(repr(v.name) for v in variables) or "none"
        if isinstance(key, str):
            same = [v for v in variables if v.name == key]
            hint = (
                f"this graph has a Variable named {key!r}: write run({{{key}: value}}) with "
                "that Variable as the key"
                if same
                else f"the graph's Variables: {names}"
            )
            raise TypeError(f"feed_dict keys must be Variables (the Node objects), not the "
                            f"string {key!r}; {hint}")  # fmt: skip
        if not isinstance(key, Node):
            raise TypeError(f"feed_dict keys must be Variables, got {type(key).__name__} "
                            f"{key!r}; the graph's Variables: {names}")  # fmt: skip
        raise ValueError(f"{key.name!r} is computed by the graph (op {key.op.name}), so it "
                         "cannot be fed; only Variables can. Build the graph on a Variable "
                         "where you want to supply a value")  # fmt: skip


def feed_hints(order) -> dict:
    """Variable -> why it must be fed although no output reads its values: it only gives the
    shape of a zero gradient (``zeros_like``) that ``gradients()`` built for it."""
    users: dict = {}
    for node in order:
        for inp in node.inputs:
            if inp.op is PLACEHOLDER:
                users.setdefault(inp, []).append(node)
    return {
        var: (f" {var.name!r} is needed only for the shape of a zero gradient (the output does "
              "not use it) because its shape is not static: feed it, or declare "
              f"Variable({var.name!r}, shape=...) to get the zeros without a feed.")
        for var, used in users.items()
        if all(u.op.name == "zeros_like" and u.grad_of is var for u in used)
    }  # fmt: skip


def feed_value(xp, node: Node, feed_dict, hints=None):
    """The fed value of Variable ``node`` as an array of ``xp`` (dtype and shape checked)."""
    if node not in feed_dict:
        fed = ", ".join(repr(getattr(k, "name", k)) for k in feed_dict) or "nothing"
        why = (hints or {}).get(node, "")
        if any(getattr(k, "name", None) == node.name for k in feed_dict):
            why += (f" A different Variable named {node.name!r} was fed: feed the one this "
                    "graph was built on (two Variables with one name are two inputs).")  # fmt: skip
        if node.persistable:
            why = (
                " It is persistable: its value lives in a Scope, so run the graph with a "
                "TrainingExecutor (or a Fluid Executor) and run the startup program first."
            )
        raise ValueError(
            f"Variable {node.name!r} was not fed (fed: {fed}); "
            f"add it to feed_dict: run({{{node.name}: value, ...}}).{why}"
        )
    value = _check_lossless(node, feed_dict[node], xp)
    if node.dtype is not None:
        value = xp.asarray(value, dtype=getattr(xp, node.dtype))
    elif hasattr(value, "dtype") and hasattr(value, "shape"):
        value = xp.asarray(value)  # keeps a numpy array's dtype
    else:
        value = xp.asarray(value, dtype=default_float(xp))
    if node.shape is not None and tuple(value.shape) != node.shape:
        raise ShapeError(
            f"Variable {node.name!r} was declared with shape {node.shape} "
            f"but fed shape {tuple(value.shape)}"
        )
    return value


def _check_lossless(node: Node, value, xp):
    """``value``, which must convert to the Variable's dtype without losing what it holds: a
    complex value for a real dtype, or Python objects such as None, is a TypeError (numpy
    would only warn, and drop the imaginary part or make None a nan). An object array of
    numbers is returned as an array of numbers."""
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    if kind is None and isinstance(value, list | tuple | complex):
        kind = _np.asarray(value).dtype.kind
    if kind == "O" and isinstance(value, _np.ndarray):
        numbers = _np.asarray(value.tolist())  # numbers become a numeric array; None does not
        if numbers.dtype.kind != "O":
            value, kind = numbers, numbers.dtype.kind
    if kind == "O":
        raise TypeError(
            f"Variable {node.name!r} was fed Python objects (an object array or a list holding "
            "None or non-numbers), which have no numeric value; feed an array of numbers "
            "(replace None by a number, or use a mask)"
        )
    if kind == "c":
        default = None if hasattr(value, "dtype") else _np.dtype(default_float(xp)).name
        target = node.dtype or default
        if target is not None and "complex" not in str(target):
            raise TypeError(
                f"Variable {node.name!r} has dtype {target} but was fed complex values; the "
                "imaginary part would be lost. Feed value.real (or abs(value)) explicitly, or "
                "declare the Variable complex"
            )
    return value


def compute_node(xp, node: Node, args):
    """Run the node's forward kernel; on failure, say which node, op and input shapes."""
    try:
        return run_kernel(xp, node.op, args, node.attrs)
    except Exception as e:
        shapes = [tuple(getattr(a, "shape", ())) for a in args]
        try:
            node.op.shape(*shapes, **node.attrs)  # the shape rule explains most failures
        except ShapeError as rule:
            raise ShapeError(f"{rule} (while running node {node.name!r})") from e
        except Exception:
            pass
        inputs = f" on input shapes {fmt_shapes(shapes)}" if shapes else ""
        raise RuntimeError(
            f"{node.op.name} failed at node {node.name!r}{inputs}: {type(e).__name__}: {e}"
        ) from e


def run_kernel(xp, op, args, attrs):
    """``op.forward(xp, *args, **attrs)`` with the result's dtype as PyTorch (and the eager
    engine) would have it: see NOTE [Numpy scalars are weak, 0-d arrays are not]. Python
    numbers computed on alone (constants) follow numpy's float arithmetic: ``1.0 / 0.0`` is
    ``inf`` as ``x / 0.0`` is, not a ZeroDivisionError."""
    try:
        value = op.forward(xp, *args, **attrs)
    except ZeroDivisionError:
        if not args or not all(_is_number(a) for a in args):
            raise
        with _np.errstate(all="ignore"):
            value = op.forward(_np, *[_np.asarray(a)[()] for a in args], **attrs)
        return value.item() if isinstance(value, _np.generic) else value
    return strong(xp, value, args)


def _is_number(x) -> bool:
    return isinstance(x, bool | int | float) and not isinstance(x, _np.generic)


# NOTE [Numpy scalars are weak, 0-d arrays are not]
# numpy hands back a scalar (np.float64) instead of a 0-d array from a ufunc on 0-d arrays
# and from a full reduction. The promotion rule (tinygrad_edu.ops.promotion, PyTorch's) counts
# numpy scalars as weak Python numbers, so `y * exp(x)` with a 0-d float64 x and a 0-d
# float32 y would come out float32, where PyTorch, numpy and the eager engine give float64.
# A value computed from at least one array is therefore made an array again: only values
# computed from Python numbers alone (constants) stay weak numbers.
def strong(xp, value, args):
    """``value`` as a 0-d array when numpy made a scalar of a result computed from arrays."""
    if isinstance(value, _np.generic) and any(_is_array(a) for a in args):
        return xp.asarray(value)
    return value


def _is_array(x) -> bool:
    if isinstance(x, tuple | list):
        return any(_is_array(v) for v in x)
    return hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, _np.generic)


def to_numpy(value):
    """A run's value for the caller: numpy arrays (tuples of them for control flow)."""
    if isinstance(value, tuple):
        return tuple(to_numpy(v) for v in value)
    if isinstance(value, list | dict):
        return value  # a while_loop's stack of saved values: handed over as is
    value = to_device(value, "cpu")
    if isinstance(value, _np.ndarray):
        # a constant's array (or a view of one) is read-only and belongs to the graph: the
        # caller gets a copy, so writing to a result never changes a later run
        return value if value.flags.writeable else value.copy()
    return _np.asarray(value)
