r"""Memory planning (CSE599W assignment 2): liveness, a memory-aware order, and buffers that
are reused once the values in them are dead.

An Executor without a plan keeps every value of a run until the run ends, so its peak memory
is the sum of all of them. Yet most values are read by one or two later nodes and then never
again. A plan does three things:

1. **Liveness.** For each node, the last step of the execution order that reads its value;
   right after that step the value is dead and ``frees`` lists it. A value that is a *view*
   of another (``reshape``, ``transpose``, a slice; found through numpy's ``.base``) keeps
   the other's memory alive as long as the view lives.
2. **Order.** Any topological order computes the same values, but not with the same peak.
   Among the nodes ready to run, the plan picks the one that adds the fewest bytes (its
   result, minus the inputs it is the last reader of): consumers of a large value run early,
   so it dies early.
3. **Buffers.** Each fresh array a node makes is a buffer. A result that an ``out=`` kernel
   can write (elementwise float math) goes into an existing buffer when one is free: the
   buffer of an input that dies at this very step (written in place), or a dead value's
   buffer of the same shape and dtype. A buffer is dropped as soon as its last value is
   dead; outputs go to the caller.

Sizes come from the values themselves: the first run with a given set of feed shapes is a
*profiling* run (plain order, values freed after their last use); the plan for those shapes
is then made and every later run with them replays it.

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
>>> _ = ex.run({x: np.ones(4)})  # profiles the shapes
>>> _ = ex.run({x: np.ones(4)})  # replays the plan: one buffer, written in place 3 times
>>> ex.memory_plan.n_buffers, sorted(set(ex.memory_plan.buffers.values()))
(1, [0])
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MemoryPlan", "Replay", "out_kernel", "write_out", "supports_out", "liveness",
           "VIEW_OPS", "UFUNCS"]  # fmt: skip

# ops whose kernel is one ufunc that takes ``out=``: op name -> the array namespace's function
UFUNCS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "div": "divide", "neg": "negative",
    "exp": "exp", "log": "log", "tanh": "tanh", "maximum": "maximum",
}  # fmt: skip
_IN_PLACE = set(UFUNCS) | {"relu", "relu_grad"}  # may write over an input of the same shape
# ops whose result may share memory with their first input (a view, or the input itself)
VIEW_OPS = {
    "reshape", "transpose", "expand_dims", "broadcast_to", "getitem", "sum_to", "tuple_get",
    "astype", "constant",
}  # fmt: skip
_MAX_SCHEDULED = 20_000  # beyond this many nodes, keep the plain order (scheduling is O(n^2))


def liveness(order, outputs):
    """``(last_use, frees)`` for an execution ``order``: the last step reading each node's
    value (``len(order)`` for outputs, which outlive the run), and per step the nodes whose
    values die right after it."""
    end = len(order)
    position = {node: k for k, node in enumerate(order)}
    last_use = {node: position[node] for node in order}  # never read: dies at once
    for k, node in enumerate(order):
        for inp in node.inputs:
            last_use[inp] = max(last_use[inp], k)
    for node in outputs:
        last_use[node] = end
    frees = [[] for _ in order]
    for node, k in last_use.items():
        if k < end:
            frees[k].append(node)
    return last_use, [tuple(sorted(f, key=position.__getitem__)) for f in frees]


@dataclass
class Replay:
    """The plan for one set of feed shapes: run ``order``; at step ``k`` write the result
    into buffer ``buffer[k]`` (with ``out=``), or keep the array the kernel made as buffer
    ``adopt[k]``; after the step drop the values ``frees[k]`` and the buffers ``drops[k]``."""

    order: list
    buffer: list  # per step: the buffer an out= kernel writes into, or None
    adopt: list  # per step: the buffer number the kernel's own new array becomes, or None
    frees: list
    drops: list
    specs: list  # per buffer: (shape, dtype)


class MemoryPlan:
    """Liveness over an execution order, and the buffer plan of the latest feed shapes.

    Args:
        order: the nodes in a valid execution order (the Executor's).
        outputs: the nodes whose values the run hands back (never freed).

    Attributes:
        order: the order the latest run used (the plain one until a plan is made).
        last_use: node -> the last step (index into ``order``) that reads its value; outputs
            map to ``len(order)``.
        frees: for each step, the nodes whose values die right after it.
        buffers: node -> the number of the buffer its value was written into (latest plan).
        buffer_bytes: the size of each buffer; ``n_buffers``: how many.
        sizes: node -> bytes of its value (from the profiling run).
    """

    def __init__(self, order, outputs):
        self.outputs = tuple(outputs)
        self.plain_order = list(order)
        self.order = self.plain_order
        self.last_use, self.frees = liveness(self.order, self.outputs)
        self.buffers: dict = {}
        self.buffer_bytes: list = []
        self.sizes: dict = {}
        self.replays: dict = {}  # feed signature -> Replay

    @property
    def n_buffers(self) -> int:
        return len(self.buffer_bytes)

    def learn(self, signature, facts: dict) -> Replay:
        """Make (and keep) the plan for feed shapes ``signature`` from a profiling run's
        ``facts``: node -> (bytes, groups it keeps memory of, (shape, dtype) of a fresh array
        it makes or None, whether an ``out=`` kernel can write it into a given buffer)."""
        self.sizes = {n: f[0] for n, f in facts.items()}
        order = self._schedule(facts)
        last_use, frees = liveness(order, self.outputs)
        end_of = {}  # group (a node owning memory) -> last step a value in it is alive
        for node in order:
            for g in facts[node][1]:
                end_of[g] = max(end_of.get(g, -1), last_use[node])
        buffer, adopt, specs = [None] * len(order), [None] * len(order), []
        free: dict = {}  # (shape, dtype) -> numbers of buffers whose values are all dead
        holder: dict = {}  # node -> number of the buffer holding its (live) value
        last_end: dict = {}  # buffer -> the step after which its last value is dead
        for step, node in enumerate(order):
            _, _, spec, writes_out = facts[node]
            if spec is not None:
                b = None
                if writes_out and node.op.name in _IN_PLACE:  # a dying input lends its buffer
                    for inp in node.inputs:
                        if inp in holder and end_of[inp] == step and specs[holder[inp]] == spec:
                            b = holder.pop(inp)
                            break
                if writes_out and b is None and free.get(spec):
                    b = free[spec].pop()
                if b is None:  # a new buffer (made by the kernel itself unless writes_out)
                    b = len(specs)
                    specs.append(spec)
                    if not writes_out:
                        adopt[step] = b
                if writes_out:
                    buffer[step] = b
                holder[node] = b
                last_end[b] = end_of[node]
            for dead in [n for n in holder if end_of[n] == step]:
                free.setdefault(specs[holder[dead]], []).append(holder.pop(dead))
        drops = [[] for _ in order]
        for b, step in last_end.items():
            if step < len(order):
                drops[step].append(b)
        replay = Replay(order, buffer, adopt, frees, drops, specs)
        self.replays[signature] = replay
        self.use(replay)
        return replay

    def use(self, replay: Replay) -> None:
        """Make ``replay`` the plan that the attributes describe."""
        self.order = replay.order
        self.last_use, self.frees = liveness(self.order, self.outputs)
        self.buffers = {
            n: b if b is not None else a
            for n, b, a in zip(replay.order, replay.buffer, replay.adopt)
            if b is not None or a is not None
        }
        self.buffer_bytes = [_nbytes(shape, dtype) for shape, dtype in replay.specs]

    def _schedule(self, facts) -> list:
        """A topological order that keeps few bytes alive: at each step, the ready node that
        adds the fewest (its new memory minus the memory it is the last reader of)."""
        order = self.plain_order
        if len(order) > _MAX_SCHEDULED:
            return list(order)
        rank = {n: k for k, n in enumerate(order)}
        consumers: dict = {n: [] for n in order}
        for n in order:
            for inp in dict.fromkeys(n.inputs):
                consumers[inp].append(n)
        readers = {}  # group -> how many unscheduled nodes still read a value in it
        for n in order:
            for g in {g for inp in n.inputs for g in facts[inp][1]}:
                readers[g] = readers.get(g, 0) + 1
        kept = {g for o in self.outputs for g in facts[o][1]}
        waiting = {n: len(set(n.inputs)) for n in order}
        ready = [n for n in order if waiting[n] == 0]
        result = []
        while ready:
            best = min(ready, key=lambda n: (self._growth(n, facts, readers, kept), rank[n]))
            ready.remove(best)
            result.append(best)
            for g in {g for inp in best.inputs for g in facts[inp][1]}:
                readers[g] -= 1
            for c in consumers[best]:
                waiting[c] -= 1
                if waiting[c] == 0:
                    ready.append(c)
        return result

    @staticmethod
    def _growth(node, facts, readers, kept) -> int:
        size, groups = facts[node][:2]
        new = size if groups == (node,) else 0
        freed = {g for inp in node.inputs for g in facts[inp][1]}
        return new - sum(facts[g][0] for g in freed if readers.get(g) == 1 and g not in kept)


def _nbytes(shape, dtype) -> int:
    n = 1
    for d in shape:
        n *= d
    return n * getattr(dtype, "itemsize", 0)


def supports_out(xp) -> bool:
    """True for namespaces whose functions write into ``out=`` (numpy, CuPy)."""
    return getattr(xp, "__name__", "").split(".")[0] in ("numpy", "cupy")


def out_kernel(xp, node, args):
    """``(shape, dtype)`` when an ``out=`` kernel can compute ``node`` into a buffer, else
    None. Only elementwise float math qualifies (``matmul`` writing into ``out=`` is slower
    in numpy than into new memory, so products make their own arrays): every array argument
    of one floating dtype, the other arguments Python numbers."""
    if node.op.name not in _IN_PLACE:
        return None
    arrays = [a for a in args if hasattr(a, "dtype")]
    if not arrays or any(not isinstance(a, int | float) for a in args if not hasattr(a, "dtype")):
        return None
    dtype = arrays[0].dtype
    if any(a.dtype != dtype for a in arrays) or getattr(dtype, "kind", "") != "f":
        return None
    shapes = [tuple(getattr(a, "shape", ())) for a in args]
    return tuple(node.op.shape(*shapes, **node.attrs)), dtype


def write_out(xp, node, args, out):
    """Compute ``node`` from ``args`` into ``out`` (a node :func:`out_kernel` accepted)."""
    name = node.op.name
    if name == "relu":
        return xp.maximum(args[0], 0.0, out=out)
    if name == "relu_grad":
        return xp.multiply(args[1], args[0] > 0, out=out)
    return getattr(xp, UFUNCS[name])(*args, out=out)
