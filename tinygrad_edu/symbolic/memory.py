r"""Memory planning (CSE599W assignment 2): liveness over the execution order, and buffers
that are reused once their values are dead.

An Executor without a plan keeps every value of a run until the run ends, so its peak memory
is the sum of all of them. Yet most values are read by one or two later nodes and then never
again. **Liveness analysis** finds, for each node, the last step of the execution order that
reads it; right after that step its value is dead. A :class:`MemoryPlan` lists, per step,
the values that die there (``frees``). At run time a :class:`BufferPool` takes their buffers
back, and the next node of the same shape and dtype writes its result into one of them with
the array library's ``out=`` argument, instead of asking for fresh memory.

Two rules keep that safe. A value handed back to the caller (an output) never returns to the
pool. And a buffer returns only when *every* value using its memory is dead: a view
(``reshape``, ``transpose``, a slice) shares its base's buffer, so the pool counts the live
values of each buffer, found through numpy's (and CuPy's) ``.base``.

>>> import numpy as np
>>> from tinygrad_edu.symbolic import Executor, Variable
>>> x = Variable("x")
>>> y = ((x * 2).exp() + 1).tanh()
>>> y.name = "y"
>>> ex = Executor([y], plan_memory=True)
>>> for node, dead in zip(ex.order, ex.memory_plan.frees):
...     print(f"{node.name:<18} then free: {[n.name for n in dead]}")
x                  then free: []
2                  then free: []
(x*2)              then free: ['x', '2']
exp((x*2))         then free: ['(x*2)']
1                  then free: []
(exp((x*2))+1)     then free: ['exp((x*2))', '1']
y                  then free: ['(exp((x*2))+1)']
>>> _ = ex.run({x: np.ones(4)})
>>> ex.memory_plan.buffers[y.inputs[0]] == ex.memory_plan.buffers[y.inputs[0].inputs[0].inputs[0]]
True
"""

from __future__ import annotations

from ..ops import get_op
from ..ops.linalg import matrix_transpose

__all__ = ["MemoryPlan", "BufferPool", "out_kernel", "supports_out"]

# ops whose kernel is one ufunc that takes ``out=``: op name -> the array namespace's function
_UFUNCS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "div": "divide", "neg": "negative",
    "exp": "exp", "log": "log", "tanh": "tanh", "maximum": "maximum",
}  # fmt: skip


class MemoryPlan:
    """Liveness over an execution order, plus what the latest run did with buffers.

    Args:
        order: the nodes in execution order.
        outputs: the nodes whose values the run hands back (never freed).

    Attributes:
        last_use: node -> the last step (index into ``order``) that reads its value; outputs
            map to ``len(order)``: they outlive the run.
        frees: for each step, the nodes whose values die right after it.
        buffers: node -> number of the pooled buffer holding its value, in the latest run
            (views share their base's number). Nodes absent kept memory of their own.
        n_buffers: how many distinct pooled buffers the latest run used.
    """

    def __init__(self, order, outputs):
        self.order = list(order)
        end = len(self.order)
        position = {node: k for k, node in enumerate(self.order)}
        self.last_use = {node: position[node] for node in self.order}  # unused: dies at once
        for k, node in enumerate(self.order):
            for inp in node.inputs:
                self.last_use[inp] = max(self.last_use[inp], k)
        for node in outputs:
            self.last_use[node] = end
        frees = [[] for _ in self.order]
        for node, k in self.last_use.items():
            if k < end:
                frees[k].append(node)
        self.frees = [tuple(sorted(f, key=position.__getitem__)) for f in frees]
        self.buffers: dict = {}
        self.n_buffers = 0

    def live_after(self, step: int) -> list:
        """The nodes whose values are alive right after ``step`` (computed, not yet dead)."""
        return [n for n in self.order[: step + 1] if self.last_use[n] > step]


class BufferPool:
    """Buffers a run may write into, and how many live values use each one.

    A buffer is *owned* when the pool made it; only owned buffers are ever reused (a feed or
    a constant belongs to someone else). ``hold`` and ``release`` count the live values whose
    memory lies in each owned buffer; at zero the buffer is free again.
    """

    def __init__(self):
        self.owned: dict = {}  # id(buffer) -> buffer
        self.number: dict = {}  # id(buffer) -> buffer number (for drawings)
        self.users: dict = {}  # id(buffer) -> live values using it
        self.free: dict = {}  # (shape, dtype) -> [buffer, ...]

    def take(self, xp, shape, dtype):
        """A free buffer of this shape and dtype, or a new one."""
        spare = self.free.get((shape, str(dtype)))
        if spare:
            return spare.pop()
        buf = xp.empty(shape, dtype=dtype)
        self.owned[id(buf)] = buf
        self.number[id(buf)] = len(self.number)
        return buf

    def owners(self, value) -> list:
        """The owned buffers (their ids) that ``value`` (an array, or a tuple/list/dict of
        them) keeps memory in."""
        found, stack = [], [value]
        while stack:
            v = stack.pop()
            if isinstance(v, tuple | list):
                stack.extend(v)
            elif isinstance(v, dict):
                stack.extend(v.values())
            else:
                base = getattr(v, "base", None)
                key = id(v if base is None else base)
                if key in self.owned:
                    found.append(key)
        return found

    def hold(self, keys) -> None:
        for key in keys:
            self.users[key] = self.users.get(key, 0) + 1

    def release(self, keys) -> None:
        for key in keys:
            self.users[key] -= 1
            if self.users[key] == 0:
                buf = self.owned[key]
                self.free.setdefault((tuple(buf.shape), str(buf.dtype)), []).append(buf)

    def give_away(self, keys) -> None:
        """The caller keeps these buffers (they hold outputs): never reuse them."""
        for key in set(keys):
            self.owned.pop(key, None)
            self.users.pop(key, None)


def supports_out(xp) -> bool:
    """True for namespaces whose functions write into ``out=`` (numpy, CuPy)."""
    return getattr(xp, "__name__", "").split(".")[0] in ("numpy", "cupy")


def out_kernel(xp, node, args):
    """``(shape, dtype, write)`` when ``node`` can be computed into a planned buffer by
    ``write(buffer)``, else None. Only plain float math qualifies: every array argument of one
    floating dtype, other arguments Python numbers."""
    name = node.op.name
    if name not in _UFUNCS and name not in ("matmul", "relu"):
        return None
    arrays = [a for a in args if hasattr(a, "dtype")]
    if not arrays or any(not isinstance(a, int | float) for a in args if not hasattr(a, "dtype")):
        return None
    dtype = arrays[0].dtype
    if any(a.dtype != dtype for a in arrays) or getattr(dtype, "kind", "") != "f":
        return None
    shapes = [tuple(getattr(a, "shape", ())) for a in args]
    shape = tuple(get_op(name).shape(*shapes, **node.attrs))
    if name == "matmul":
        a, b = args
        if node.attrs.get("trans_A"):
            a = matrix_transpose(xp, a)
        if node.attrs.get("trans_B"):
            b = matrix_transpose(xp, b)
        return shape, dtype, lambda out: xp.matmul(a, b, out=out)
    if name == "relu":
        return shape, dtype, lambda out: xp.maximum(args[0], 0.0, out=out)
    fn = getattr(xp, _UFUNCS[name])
    return shape, dtype, lambda out: fn(*args, out=out)
