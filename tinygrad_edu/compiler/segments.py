r"""Graph breaks without giving up the graph: a function cut into compiled segments.

Where Python reads a value in the middle of a compiled function (``print(y)``, ``y.numpy()``,
``if y.sum().item() > 0``), PyTorch's Dynamo compiles the code before the read as one graph,
runs the read eagerly, and resumes in a second graph after it (it rewrites the bytecode into
"resume functions"). A Python-level tracer cannot rewrite bytecode; this module gets the same
behaviour the way LazyTensor (PyTorch/XLA) does:

* the trace (:mod:`~tinygrad_edu.compiler.trace`) logs every op and the points where Python
  read a value; the graph is cut at those points into **segments**, each compiled into a
  program (with its own backward program) whose inputs are the arguments, captured tensors
  and values of earlier segments, and whose outputs are what later segments, the reads and
  the caller use (:func:`plan`);
* a later call **replays** the Python function with the dispatcher redirected (``Replay``):
  an op computes nothing, it checks itself against the log (the same op, attributes and
  inputs, by position) and returns a **stand-in** tensor (shape and dtype, no values);
* when Python first needs a value (everything that reads one goes through
  ``Tensor.numpy()``), the program of the segment so far runs, its outputs become real tensors
  in place of their stand-ins (joined to the eager graph by one ``CompiledFunctionBackward``
  each), and the read happens eagerly on them; at the end the last segment's program runs.

Anything the log does not predict (another op, another branch, a read elsewhere) **diverges**:
every stand-in is computed eagerly from the ops this call made, and the rest of the call
runs eagerly; the specialisation is then dropped, so the next call traces again. A replay
never returns a value it did not compute from this call's inputs.
"""

from __future__ import annotations

import sys
import weakref

import numpy as _np

from .. import symbolic as S
from ..eager import core, grad_mode
from ..eager.tensor import Tensor
from ..symbolic.graph import topo_sort
from ..symbolic.node import CONSTANT, PLACEHOLDER
from . import trace as _trace
from .program import attach, build_program
from .trace import Source, Trace

__all__ = ["Segment", "plan", "Replay"]


class Segment:
    """One compiled piece: ops ``[start, end)`` of the log, its program, and the ops whose
    values it hands on (``roots``, in the program's output order)."""

    def __init__(self, start, end, roots, program):
        self.start, self.end, self.roots, self.program = start, end, roots, program


def plan(trace, outputs, grad_on: bool, args, device) -> list:
    """The segments of a trace whose breaks are all value reads; ``outputs``: the graph
    nodes the function returned (None where not a tensor of the graph)."""
    log = trace.log
    n = len(log)
    ranges, start = [], 0
    for b in sorted({p for p, _ in trace.syncs if 0 < p <= n}) + [n]:
        if b > start:
            ranges.append((start, b))
            start = b
    owner = [0] * n
    for k, (a, b) in enumerate(ranges):
        owner[a:b] = [k] * (b - a)
    op_of = {id(r.node): j for j, r in enumerate(log)}
    needed: set = set()  # op indices whose values outlive their segment
    for node in [nd for _, nd in trace.syncs] + list(outputs):
        j = op_of.get(id(node)) if node is not None else None
        if j is not None:
            needed.add(j)
        elif node is not None and node.op is not PLACEHOLDER:  # e.g. arithmetic on .item()
            for m in topo_sort([node]):
                if id(m) in op_of:
                    needed.add(op_of[id(m)])
    sources = {id(nd): s for nd, s in trace.placeholders}
    segments = []
    for k in range(len(ranges) - 1, -1, -1):  # last first: a segment's inputs are needed
        a, b = ranges[k]
        roots = sorted(j for j in needed if a <= j < b)
        program = None
        if roots:
            nodes, carried, used = _cut([log[j].node for j in roots], op_of, a)
            needed.update(carried.values())
            placeholders = [(p, sources[id(p)]) for p in used]
            placeholders += [(p, Source("carry", index=j)) for p, j in carried.items()]
            wanted = [i for i, (_, s) in enumerate(placeholders) if grad_on and _requires_grad(
                s, args, log)] if grad_on else []  # fmt: skip
            program = build_program(Trace(placeholders=placeholders), nodes, wanted, device)
        segments.append(Segment(a, b, roots, program))
    return segments[::-1]


def _requires_grad(source, args, log) -> bool:
    if source.kind == "arg":
        return args[source.index].requires_grad
    if source.kind == "tensor":
        return source.tensor.requires_grad
    return log[source.index].requires_grad


def _cut(roots, op_of, start):
    """The graph of ``roots`` with each value made by an op before ``start`` replaced by a
    new placeholder: (new roots, {placeholder: op index}, the original placeholders used)."""
    memo, carried, used = {}, {}, []
    order, seen, stack = [], set(), list(roots)
    while stack:  # iterative post-order that stops at earlier segments' values
        n = stack[-1]
        if n in seen:
            stack.pop()
            continue
        j = op_of.get(id(n))
        early = j is not None and j < start
        todo = [] if early or n.op in (PLACEHOLDER, CONSTANT) else [
            i for i in n.inputs if i not in seen]  # fmt: skip
        if todo:
            stack.extend(reversed(todo))
            continue
        seen.add(n)
        stack.pop()
        order.append(n)
    for n in order:
        j = op_of.get(id(n))
        if j is not None and j < start:
            p = S.Variable(f"segment value {j}", shape=n.shape, dtype=n.dtype)
            carried[p] = j
            memo[n] = p
        elif n.op is PLACEHOLDER:
            memo[n] = n
            used.append(n)
        elif n.op is CONSTANT:
            memo[n] = n
        else:
            inputs = tuple(memo[i] for i in n.inputs)
            if all(a is b for a, b in zip(inputs, n.inputs)):
                memo[n] = n
            else:
                memo[n] = S.Node(n.op, inputs, n.attrs, name=n.name, shape=n.shape,
                                 dtype=n.dtype)  # fmt: skip
    return [memo[r] for r in roots], carried, used


# -- stand-ins ------------------------------------------------------------------------------------
class _Pending:
    """The ``._data`` of a stand-in: its shape and dtype, no values. Anything else asked of it
    computes the value first (eagerly) and answers for the real array."""

    __slots__ = ("replay", "index", "shape", "dtype", "real", "tensor", "__weakref__")

    def __init__(self, replay, index, shape, dtype, tensor):
        self.replay, self.index, self.shape, self.dtype = replay, index, shape, dtype
        self.real, self.tensor = None, weakref.ref(tensor)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(_np.prod(self.shape))

    def _value(self):
        if self.real is None:
            t = self.tensor()
            self.replay.force(t)
        return self.real

    def __getattr__(self, name):
        return getattr(self._value(), name)

    def __array__(self, dtype=None, copy=None):
        return _np.asarray(self._value(), dtype=dtype)

    def __getitem__(self, index):
        return self._value()[index]

    def __setitem__(self, index, value):
        self._value()[index] = value

    def __len__(self):
        return len(self._value())


def _pending(t) -> bool:
    return type(t._data) is _Pending


def _become(t, real) -> None:
    """Make stand-in ``t`` the tensor ``real`` (its values and its place in the graph)."""
    fake = t._data
    t._data, t._device, t._grad_fn = real._data, real._device, real._grad_fn
    t._requires_grad, t._output_nr, t._base = real._requires_grad, real._output_nr, real._base
    t._counter = real._counter
    t.__dict__.update(getattr(real, "__dict__", {}))
    if type(fake) is _Pending:
        fake.real = real._data


class Diverged(Exception):
    """A replay met what its log did not predict (internal: caught by the replay)."""


class Replay:
    """One call of a segmented specialisation (see the module docstring)."""

    replaying = True

    def __init__(self, entry, leaves):
        self.segments, self.log, self.leaves = entry.segments, entry.log, leaves
        self.ends = {s.end: k for k, s in enumerate(self.segments)}
        self.calls: list = []  # (op, args, attrs, stand-in), one per op of this call
        self.bound: dict = {}  # captured placeholder -> the tensor at its place in this call
        self.next = 0  # the first segment not run yet
        self.diverged = False

    # -- the dispatcher's view ---------------------------------------------------------------
    def replay(self, op, args, attrs):
        j = len(self.calls)
        if j >= len(self.log) or not self._matches(self.log[j], op, args, attrs):
            self.diverge()
            return _eager(op, args, attrs)
        rec = self.log[j]
        t = object.__new__(Tensor)
        dev = next((a._device for a in args if isinstance(a, Tensor)), None)
        core.init_tensor(t, None, dev)
        t._data = _Pending(self, j, rec.shape, rec.dtype, t)
        t._requires_grad = rec.requires_grad
        self.calls.append((op, args, attrs, t))
        return t

    def record(self, op, args, attrs, result):  # an op the dispatcher ran (after diverging)
        pass

    def rebind(self, t, values):  # an in-place write: the trace had none (it would not
        self.diverge()  # be segmented), so this call left the log

    def _matches(self, rec, op, args, attrs) -> bool:
        if rec.op is not op or len(rec.refs) != len(args) or not _same(rec.attrs, attrs):
            return False
        for ref, a in zip(rec.refs, args):
            kind = ref[0]
            if kind == "op":
                if a is not self.calls[ref[1]][3]:  # (a stand-in, or made real by a read)
                    return False
            elif kind == "arg":
                if a is not self.leaves[ref[1]]:
                    return False
            elif kind == "tensor":
                node = ref[1]
                if not isinstance(a, Tensor) or _pending(a) or a.shape != node.shape or str(
                        a.dtype) != node.dtype:  # fmt: skip
                    return False
                if self.bound.setdefault(node, a) is not a:
                    return False
            elif kind == "scalar":
                if not isinstance(a, bool | int | float):
                    return False
            elif isinstance(a, Tensor) or not _same(ref[1], a):
                return False
        return True

    # -- values ------------------------------------------------------------------------------
    def sync(self, t) -> None:
        """Python reads stand-in ``t``: run the segments up to here, then ``t`` is real."""
        if not self.diverged:
            here = len(self.calls)
            k = self.ends.get(here)
            if k is not None:
                self.run_until(k)
            elif self.next < len(self.segments) and self.segments[self.next].start < here:
                self.diverge()  # a read the trace did not make: eager from here
        if _pending(t):
            self.force(t)

    def run_until(self, k) -> None:
        while self.next <= k:
            self._run(self.segments[self.next])
            self.next += 1

    def _run(self, seg) -> None:
        program = seg.program
        if program is None:
            return
        needs = program.forward.needs
        feed = {node: self._input(node, source)._data for node, source in program.placeholders
                if node in needs}  # fmt: skip
        values = program.forward(feed)
        outs, diff = [], set(program.differentiable)
        for slot in program.output_index:
            outs.append(Tensor._make(values[slot], device=self.calls[seg.roots[0]][3]._device))
        grads = [o for o, slot in zip(outs, program.output_index) if slot in diff]
        if grads and grad_mode.is_grad_enabled():
            inputs = [self._input(*program.placeholders[i]) for i in program.grad_inputs]
            saved = [values[k] for k in program.saved_slots]
            wrapped = attach(program, grads, saved, inputs)
            wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
            swap = {id(a): b for a, b in zip(grads, wrapped)}
            outs = [swap.get(id(o), o) for o in outs]
        for j, real in zip(seg.roots, outs):
            _become(self.calls[j][3], real)

    def _input(self, node, source):
        """The tensor a segment's placeholder reads in this call."""
        if source.kind == "arg":
            return self.leaves[source.index]
        if source.kind == "carry":
            t = self.calls[source.index][3]
            if _pending(t):
                self.force(t)
            return t
        return self.bound.get(node, source.tensor)

    def force(self, t) -> None:
        """Compute stand-in ``t`` eagerly from the ops this call made (its inputs first)."""
        todo = [t]
        while todo:
            s = todo[-1]
            if not _pending(s):
                todo.pop()
                continue
            op, args, attrs, _ = self.calls[s._data.index]
            waiting = [a for a in args if isinstance(a, Tensor) and _pending(a)]
            if waiting:
                todo.extend(waiting)
                continue
            todo.pop()
            _become(s, _eager(op, args, attrs))

    def diverge(self) -> None:
        """Leave the log: every stand-in made so far gets its value eagerly, and the rest of
        the call runs eagerly (the dispatcher is handed back)."""
        if self.diverged:
            return
        self.diverged = True
        grad_mode._state.trace = None
        _trace.ACTIVE.tracer = None
        for *_, t in self.calls:
            if _pending(t):
                self.force(t)

    def finish(self) -> None:
        """The function returned: run the segments left; stand-ins still held by anyone but
        this replay (a value kept in a list or an attribute) get their values."""
        if not self.diverged:
            if len(self.calls) != len(self.log):
                self.diverge()
            else:
                self.run_until(len(self.segments) - 1)
        self.escaped()

    def escaped(self) -> None:
        # NOTE [Stand-ins that outlive the call]: a stand-in that no program output covers is
        # computed only when read. At the end, one that something outside this replay still
        # holds is computed now, while its inputs hold this call's values. The replay's own
        # references are counted (its entry in `calls`, each use as an op's input); the
        # interpreter's count says whether there are more.
        uses = _uses(self.calls)
        pending = [c[3] for c in self.calls if _pending(c[3])]
        for t in pending:
            # getrefcount's argument, the loop variable, `pending`, the call's tuple
            if sys.getrefcount(t) - 4 - uses.get(id(t), 0) > 0:
                self.force(t)


def _uses(calls) -> dict:
    """id -> how often the calls take that tensor as an input (a function of its own: no
    loop variable is left holding one)."""
    uses: dict = {}
    for _, args, _, _ in calls:
        for a in args:
            if isinstance(a, Tensor):
                uses[id(a)] = uses.get(id(a), 0) + 1
    return uses


def _eager(op, args, attrs):
    """Run ``op`` through the eager dispatcher itself (no replay answering)."""
    from ..eager.dispatch import apply_op

    saved = grad_mode._state.trace
    grad_mode._state.trace = None
    try:
        return apply_op(op, *args, **attrs)
    finally:
        grad_mode._state.trace = saved


def _same(a, b) -> bool:
    """Equal as a recorded attribute or constant (arrays by value, types exactly)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if hasattr(a, "shape") and hasattr(a, "dtype"):
        return a.shape == b.shape and a.dtype == b.dtype and bool(_np.array_equal(a, b))
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 (not comparable: not the same)
        return False


def patch_replay_reads(replay):
    """While ``replay`` runs, ``Tensor.numpy()`` (through which item, bool, print, tolist,
    float and int read values) of a stand-in first makes it real. Returns the undo."""
    saved = Tensor.__dict__["numpy"]

    def numpy(self):
        if type(self._data) is _Pending:
            replay.sync(self)
        return saved(self)

    Tensor.numpy = numpy

    def undo():
        Tensor.numpy = saved

    return undo
