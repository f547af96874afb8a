r"""Capturing an eager program as a symbolic graph: the tracer.

The tracer runs the user's function **once, eagerly, for real**, and records every op the
eager dispatcher runs into a symbolic graph (tensor-as-node) built from the *same* op table:
``a * b`` on eager tensors becomes ``apply_op("mul", node_a, node_b)`` in the graph. So the
captured graph computes exactly what the eager run computed, and every value the program saw
is at hand while it is traced (shapes, dtypes, and the truth of ``if loss.item() > 0``).

What the trace keeps besides the graph:

* **sources**: where each graph input comes from on the next call: an argument (by its
  position in the flattened arguments), a tensor the function reached without receiving it
  (a module's parameter or buffer, a global: fed its current value every call), an optimizer's
  state or a number computed per call (the learning rate, Adam's bias corrections);
* **guards**: what the graph was specialised on and must still hold for it to be reused: the
  truth of every branch taken on a tensor's value (``bool(x.sum() > 0)``), besides the
  arguments' shapes and dtypes that the caller checks;
* **writes**: tensors the program changes in place (a BatchNorm's running mean, parameters
  updated by ``opt.step()``, ``.grad`` filled by ``loss.backward()``), written back after
  every call;
* **breaks**: what the graph cannot express (printing a tensor, ``.numpy()`` of an
  intermediate, random numbers, an unsupported optimizer): each with the line that did it;
* **the op log**: each recorded op with its attributes and where each input came from (an
  earlier op, an argument, a captured tensor, a number), and the **sync points**: the op
  counts at which Python read a value (a print, ``.item()``, ``bool``). A function whose
  breaks are all such reads is cut there into segments (:mod:`~tinygrad_edu.compiler.segments`);
  ``whole`` lists what keeps it in one piece (then it runs eagerly where it breaks).
"""

from __future__ import annotations

import gc
import random
import sys

import numpy as _np

from .. import symbolic as S
from ..eager import factories, grad_mode
from ..eager.tensor import Tensor
from .trace_records import GraphBreak, Rec, Source, Trace, user_line
from .traced_scalar import TracedScalar

# the records and TracedScalar live in records.py and traced_scalar.py; importable from here
__all__ = ["Tracer", "Source", "GraphBreak", "TracedScalar", "Rec", "Trace", "user_line"]


class Tracer:
    """Records the eager ops of one call into a symbolic graph (see the module docstring)."""

    replaying = False  # (the dispatcher asks: a Replay answers True)

    @staticmethod
    def plain(args) -> tuple:
        """An op's arguments for the eager run: a number read by ``.item()`` (a
        :class:`TracedScalar`) as the plain number; the recorded op keeps its node."""
        if not any(type(a) is TracedScalar for a in args):
            return args
        return tuple(a.value if type(a) is TracedScalar else a for a in args)

    def __init__(self, args_flat, fullgraph: bool = False, names=None, watched=()):
        self.fullgraph = fullgraph
        self.trace = Trace()
        self._node: dict[int, tuple] = {}  # id(tensor) -> (tensor, node): the tensor kept alive
        self._by_data: dict[int, tuple] = {}  # id(array) -> (array, node) of recorded results
        self._sources: set[int] = set()  # ids of argument and captured tensors
        self._aliases: set[int] = set()  # ids of tensors met sharing a traced one's array
        self._viewed: set[int] = set()  # ids of the bases of views the trace made
        self._saved: dict = {}  # id(node) -> how many recorded ops save its value
        self._last_saved: set = set()  # ids of the nodes the latest recorded op saves
        self._alias_of: dict = {}  # id(array) -> the aliases met on it (x.detach(), x.data)
        self._source_arrays: dict = {}  # id(array) -> the argument or captured tensor on it
        self._written_through: set = set()  # ids of inputs written through .data/detach()
        self.args = list(args_flat)
        self._names = names or {}  # id(tensor) -> a readable name (a module's parameter names)
        self._rng = self._rng_state()
        self.extra_guards: list = []  # (callable of the call's flat arguments, the value it
        #                               returned while traced)
        self._op_of: dict = {}  # id(node) -> index of the recorded op that made it
        self._ref_of: dict = {}  # id(placeholder) -> ("arg", i) or ("tensor", node)
        self._scalars: list = []  # (TracedScalar, log position where it was read)
        self.done = False  # the traced call returned
        # NOTE [Writes the graph did not see]: the tensors in reach, with their version
        # counters and .grad when the call started; every write the trace records notes the
        # counter it leaves (`_accounted`). A counter or .grad that moved past that when the
        # call ends was changed outside the graph (a raw array write, tg.autograd.backward):
        # the program would not repeat it, so the function runs eagerly.
        self._watch = [(t, t._counter[0], t._grad, _version(t._grad)) for t in watched]
        self._accounted: dict = {}  # id(counter) -> its value after the last recorded write
        self._grad_accounted: dict = {}  # id(tensor) -> (its .grad, that one's counter)
        self._grad_owner = {id(t._grad): t for t in watched if t._grad is not None}
        self._start_grad = {id(t): t._grad for t in watched}  # .grad when the call started
        self._groups: list = []  # (optimizer, its param_groups' settings when first seen)
        self._last_break = self._last_effect = None  # (log position, line) of the last ones
        self._scheduled: list = []  # (log position, optimizer, line) of captured schedulers
        self.trace.arg_index = {id(a): i for i, a in enumerate(args_flat) if isinstance(a, Tensor)}
        for i, a in enumerate(args_flat):
            if isinstance(a, Tensor) and id(a) not in self._node:
                self._placeholder(a, Source("arg", index=i), f"arg{i}")

    @classmethod
    def resume(cls, trace, p, values, args_flat, bound, extra_guards, names=None):
        """A tracer that goes on from log entry ``p`` of ``trace``: a replayed call left the
        log there (compiler/replay.py). ``values[j]``: the tensor op ``j`` made in this call;
        ``bound``: placeholder -> the captured tensor this call read there."""
        self = cls([], False, names)
        self.args, self.extra_guards, new = list(args_flat), list(extra_guards), self.trace
        new.placeholders, new.guards = list(trace.placeholders), list(trace.guards)
        new.breaks, new.whole, new.grad_reads = list(trace.breaks), [], set(trace.grad_reads)
        new.arg_index = dict(trace.arg_index)
        new.log, new.syncs = trace.log[:p], [s for s in trace.syncs if s[0] <= p]
        new.ops = sum(not r.event for r in new.log)
        for node, source in trace.placeholders:
            if source.kind in ("arg", "tensor"):
                t = args_flat[source.index] if source.kind == "arg" else bound.get(
                    node, source.tensor)  # fmt: skip
                self._node[id(t)] = (t, node)
                self._sources.add(id(t))
                self._ref_of[id(node)] = ("arg", source.index) if source.kind == "arg" else (
                    "tensor", node)  # fmt: skip
        for j, r in enumerate(new.log):
            if not r.event:
                t = values[j]
                self._node[id(t)] = (t, r.node)
                self._by_data[id(t._data)] = (t._data, r.node)
                self._op_of[id(r.node)] = j
        for effect in trace.effects:
            pos, kind, key, node = effect
            if pos >= p:
                continue
            new.effects.append(effect)
            if kind == "write":
                new.writes[id(key)] = (key, node)
                self.bind(key, node)
            elif kind == "grad":
                new.grads[id(key)] = (key, node)
                if node is not None and key._grad is not None:
                    self.bind(key._grad, node)
            else:
                new.state_writes.append((key, node))
        return self

    # -- graph inputs ------------------------------------------------------------------------
    def _placeholder(self, t, source, name):
        node = S.Variable(name, shape=tuple(t.shape), dtype=str(t.dtype))
        self._node[id(t)] = (t, node)
        self._by_data.setdefault(id(t._data), (t._data, node))
        self._sources.add(id(t))
        self._source_arrays.setdefault(id(t._data), t)
        self.trace.placeholders.append((node, source))
        self._ref_of[id(node)] = ("arg", source.index) if source.kind == "arg" else (
            "tensor", node)  # fmt: skip
        return node

    def scalar_input(self, name, fetch, like):
        """A 0-d input computed per call (``fetch()``), in ``like``'s dtype."""
        node = S.Variable(name, shape=(), dtype=str(like.dtype))
        self.trace.placeholders.append((node, Source("scalar", fetch=fetch, dtype=like.dtype,
                                                     at=len(self.trace.log))))  # fmt: skip
        return node

    def _arg_index(self, t) -> int:
        return next((i for i, a in enumerate(self.args) if a is t), -1)

    def grad_guard(self, t, present: bool) -> None:
        """Guard that ``t`` (an argument: the call's own argument at its place) has a
        ``.grad``, or has none. (None where the function itself cleared the ``.grad`` it had
        when the call started, ``p.grad = None``: the program sets it whatever it was.)"""
        if not present and self._start_grad.get(id(t)) is not None:
            return
        i = self._arg_index(t)
        self.extra_guards.append(((lambda leaves: leaves[i]._grad is not None) if i >= 0 else
                                  (lambda leaves: t._grad is not None), present))  # fmt: skip

    def old_grad(self, t):
        """The ``.grad`` that ``t`` holds when the call starts, as a program input (guarded
        present); recorded in ``trace.grad_reads``."""
        self.trace.grad_reads.add(id(t))
        self.grad_guard(t, True)
        name = getattr(t, "name", None) or self._names.get(id(t)) or "param"
        i = self._arg_index(t)
        node = S.Variable(f"{name}.grad", shape=tuple(t.shape), dtype=str(t.dtype))
        self.trace.placeholders.append((node, Source("grad", index=i, tensor=None if i >= 0 else t,
                                                     dtype=t.dtype, at=len(self.trace.log))))
        return node

    def state_input(self, name, fetch, shape, dtype):
        node = S.Variable(name, shape=tuple(shape), dtype=str(dtype))
        self.trace.placeholders.append((node, Source("state", fetch=fetch, dtype=dtype,
                                                     at=len(self.trace.log))))  # fmt: skip
        return node

    def node_of(self, t: Tensor):
        """The graph node of tensor ``t``; a tensor first met here is an input of the graph,
        fed its value at every call (a parameter, a buffer, a tensor made by a factory)."""
        hit = self._node.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        same = self._by_data.get(id(t._data))
        if same is not None and same[0] is t._data:
            # ``t`` holds a traced value's very array, made without an op the trace saw
            # (``x.detach()``, ``x.data``): that value, with no gradient flowing through it.
            # (Captured as an input instead, it would be fed the first call's array.)
            if t.requires_grad and t.grad_fn is None:  # a leaf met after its alias (`w.data
                self.trace.whole.append("a leaf met after a tensor sharing its memory")
                self.graph_break("a tensor that requires grad met after another on its memory "
                                 "(w.data, w.detach() used first): its gradient cannot be "
                                 "followed")  # fmt: skip
            node = S.stop_gradient(same[1])
            self._node[id(t)] = (t, node)
            self._aliases.add(id(t))
            self._alias_of.setdefault(id(t._data), []).append(t)
            return node
        owner = self._grad_owner.get(id(t))
        if owner is not None and owner._grad is t:  # a .grad made before the call: read anew
            node = self.old_grad(owner)
            self._node[id(t)] = (t, node)
            return node
        name = getattr(t, "name", None) or self._names.get(id(t)) or (
            f"captured{len(self.trace.placeholders)}")  # fmt: skip
        self._watch.append((t, t._counter[0], t._grad, _version(t._grad)))
        return self._placeholder(t, Source("tensor", tensor=t), name)

    def value_of(self, x):
        """An op's argument as the graph sees it: a node, a number or a constant array."""
        if isinstance(x, Tensor):
            return self.node_of(x)
        if isinstance(x, TracedScalar):  # a Python number in eager code: no gradient
            return S.stop_gradient(x.node) if isinstance(x.node, S.Node) else x.node
        if hasattr(x, "shape") and hasattr(x, "dtype"):
            hit = self._by_data.get(id(x))
            if hit is not None and hit[0] is x:
                return hit[1]
            return x  # an array constant (a mask, indices made by the program)
        return x

    def bind(self, t: Tensor, node) -> None:
        """From now on ``t`` holds the value of ``node`` (an in-place change, a .grad)."""
        self._node[id(t)] = (t, node)
        self._by_data[id(t._data)] = (t._data, node)  # (its detach() is that value too)

    def detached(self, t: Tensor) -> None:
        """``t.detach_()``: from here ``t`` is its value with no gradient through it."""
        self.bind(t, S.stop_gradient(self.node_of(t)))

    def view_rebind(self, t: Tensor, view: Tensor) -> None:
        """``t.t_()``, ``t.unsqueeze_(0)``: ``t`` becomes ``view`` (an op the trace recorded)."""
        self.bind(t, self.node_of(view))

    def alias(self, old: Tensor, t: Tensor) -> None:
        """``old`` stands for ``t``'s value before an in-place op (eager's alias that keeps
        the old place in the autograd graph): the same node, gradient included."""
        self._node[id(old)] = (old, self.node_of(t))

    def is_traced(self, t) -> bool:
        """Is ``t`` a value of the graph (also: an alias on a traced value's array, such as
        ``y.detach()``, whose node :meth:`node_of` makes)?"""
        hit = self._node.get(id(t))
        if hit is not None and hit[0] is t:
            return True
        same = self._by_data.get(id(t._data))
        return same is not None and same[0] is t._data

    # -- random numbers -------------------------------------------------------------------------
    @staticmethod
    def _rng_state():
        """The library's generator and its state, and the states of numpy's global
        generator (``np.random.rand``) and Python's ``random``, which a function may draw
        from as well."""
        gen = factories.generator()
        legacy = _np.random.get_state()
        return gen, (gen.bit_generator.state, legacy[1].tobytes(), legacy[2:],
                     random.getstate())  # fmt: skip

    def check_random(self) -> None:
        """Random numbers drawn since the last check (dropout in training, ``randn`` in the
        function) would be frozen into the program: a graph break, at this op's line."""
        now = self._rng_state()
        if now[0] is not self._rng[0] or now[1] != self._rng[1]:
            self._rng = now
            self.graph_break("random numbers are drawn here (dropout in training mode, randn, "
                             "...): a compiled program would repeat the same ones")  # fmt: skip

    # -- recording ------------------------------------------------------------------------------
    def record(self, op, args, attrs, result) -> None:
        """Called by the dispatcher after every op: add the op's node to the graph."""
        self.trace.ops += 1
        self.check_random()
        index = self._gather_index(op, args, attrs)
        if index is None:
            for v in attrs.values():
                self._check_attr(op, v)
        if self._written_through and result.requires_grad and any(
                id(a) in self._written_through for a in args):  # fmt: skip
            # a gradient through a parameter after `p.data += ...`: eager's leaf now holds the
            # new values; the graph's node is the update, whose gradient would reach the old
            self.trace.whole.append("a tensor used with its gradient after a write through .data")
            self.graph_break(f"{op.name}: a tensor used with its gradient after a write through "
                             "its .data (or detach())")  # fmt: skip
            return
        inputs = [self.value_of(a) for a in args]
        try:
            if index is not None:  # `C[ix]`: rows, by a tensor of the trace (see _gather_index)
                flat = S.apply_op("reshape", index, shape=(-1,))
                rows = S.apply_op("index_select", inputs[0], flat, dim=0)
                node = S.apply_op("reshape", rows, shape=tuple(result.shape))
            else:
                node = S.apply_op(op, *inputs, **attrs)
        except Exception as e:  # noqa: BLE001 (any failure to express the op is a break)
            self.graph_break(f"{op.name}: cannot be recorded in a graph ({e})")
            return
        if node.shape is None:
            # nonzero, masked_select, unique: the result's shape comes from the values, and a
            # program would keep the first call's (a later x.shape[0] or sum would be stale)
            self.trace.whole.append(f"{op.name}: a result whose shape depends on the values")
            self.graph_break(f"{op.name}: its result's shape depends on the input's values")
            return
        if node.dtype is None:  # (the symbolic rule could not tell; the eager run did)
            node.dtype = str(result.dtype)
        if not result.requires_grad and not grad_mode.is_grad_enabled():
            # made under no_grad: no gradient flows through it in eager, nor in the program
            node = S.stop_gradient(node)
        self._node[id(result)] = (result, node)
        self._by_data[id(result._data)] = (result._data, node)
        self._last_saved = set()
        if result.requires_grad:  # the values its backward reads (eager checks their versions)
            saved = [inputs[i] for i in op.saves if i < len(inputs)]
            saved += [node] if op.saves_output else []
            for n in saved:
                if isinstance(n, S.Node):
                    self._saved[id(n)] = self._saved.get(id(n), 0) + 1
                    self._last_saved.add(id(n))
        if result._base is not None:  # a view: an in-place write to it or its base
            self._viewed.add(id(result._base))  # changes the other too (see rebind)
        refs = tuple(self._ref(a, v) for a, v in zip(args, inputs))
        self._op_of[id(node)] = len(self.trace.log)
        self.trace.log.append(
            Rec(op, _frozen(attrs), refs, node, result.requires_grad, tuple(result.shape),
                result.dtype, index_ref=None if index is None else self._ref(None, index))
        )  # fmt: skip

    def _ref(self, arg, value):
        """Where an op's input came from, as a replay checks it (see :class:`Rec`)."""
        if isinstance(arg, TracedScalar):
            return ("scalar",)
        if isinstance(value, S.Node):
            j = self._op_of.get(id(value))
            if j is not None:
                return ("op", j)
            ref = self._ref_of.get(id(value))
            if ref is not None:
                return ref
            self.trace.whole.append("a tensor whose value the graph holds (a .grad, ...)")
            return ("value", None)
        return ("value", _frozen(value))

    def _gather_index(self, op, args, attrs):
        """The node of the index of ``C[ix]``: ``ix`` an integer tensor whose value the trace
        holds (an argument, a result); recorded as ``index_select`` along the first axis
        (the same rows, negative indices included, the same gradient), with the index an
        input of the graph, so that a new ``ix`` is read every call (as a constant it would
        be the first call's)."""
        index = attrs.get("index") if op.name == "getitem" and len(args) == 1 else None
        if index is None or isinstance(index, type) or getattr(index, "dtype", None) is None:
            return None
        hit = self._by_data.get(id(index))
        if hit is None or hit[0] is not index or index.dtype.kind not in "iu" or (
                args[0].ndim < 1 or not getattr(index, "ndim", 0)):  # fmt: skip
            return None
        return hit[1]

    def _check_attr(self, op, value):
        if isinstance(value, tuple | list):
            for v in value:
                self._check_attr(op, v)
            return
        if not hasattr(value, "shape"):
            return
        hit = self._by_data.get(id(value))
        baked = hit is not None and hit[0] is value
        if baked or any(t._data is value for t, _ in self._node.values()):
            self.trace.whole.append(f"{op.name}: an index computed from a tensor")
            self.graph_break(
                f"{op.name}: an index or argument computed from a tensor of the program "
                "(tensor indexing with values that change between calls)"
            )

    def rebind(self, t: Tensor, values) -> None:
        """``t`` was changed in place to ``values`` (the array an op just computed)."""
        hit = self._by_data.get(id(values))
        if hit is None or hit[0] is not values:
            self.graph_break("an in-place write the graph did not see")
            return
        node = hit[1]
        before = self._node.get(id(t))
        if before is not None and t.requires_grad:
            held = self._saved.get(id(before[1]), 0) - (id(before[1]) in self._last_saved)
            if held > 0:  # (the in-place op's own saving of its input is a copy in eager)
                self.trace.whole.append("an in-place write to a value saved for backward")
                self.graph_break("an in-place write to a value an op saved for backward "
                                 "(eager's backward raises there; a program would not)")
                return
        if t._base is not None or id(t) in self._viewed:
            self.trace.whole.append("an in-place write to a view or to a tensor with views")
            self.graph_break("an in-place write to a view (y[1:].mul_(2)) or to a tensor that "
                             "has views: the graph cannot follow both")  # fmt: skip
            return
        if id(t) in self._aliases:
            owner = self._source_arrays.get(id(t._data))
            if owner is None or owner._data is not t._data:  # an intermediate's: unseen
                self.trace.whole.append("an in-place write through detach() or .data")
                self.graph_break("an in-place write through a tensor that shares another's "
                                 "memory (x.detach(), x.data): the graph cannot follow both")
                return
            # `p.data += -lr * p.grad`: a parameter (an input) updated by hand, outside
            # autograd: a write to the parameter, written back as opt.step()'s are
            self._written_through.add(id(owner))
            t = owner
        self.bind(t, node)  # (an alias met later, `h.data` after `h.add_(1)`, reads it too)
        for a in self._alias_of.get(id(t._data), ()):  # `d = h.detach(); h.add_(1)`: d too
            if a._data is t._data:
                self._node[id(a)] = (a, S.stop_gradient(node))
        self.trace.whole.append("an in-place op (add_, x[i] = ...) in a function with a break")
        owner = self._grad_owner.get(id(t))
        if owner is not None and owner._grad is t:  # a .grad changed in place (clipping)
            self.set_grad(owner, node)
        elif id(t) in self._sources:  # an argument or captured tensor: written back every call
            self.set_write(t, node)

    # -- training calls and the state they write (compiler/training_capture.py) ------------
    def event(self, kind: str, target, tensor=None, **attrs) -> None:
        """A training call here (``backward`` of ``tensor``, ``step``, ``zero_grad`` of
        ``target``): logged like an op, so a replay checks it in order; what it writes is
        tagged with its place (:meth:`set_write`, :meth:`set_grad`, :meth:`add_state_write`)."""
        refs = () if tensor is None else (self._ref(tensor, self.node_of(tensor)),)
        self.trace.log.append(Rec(kind, {"target": target, **attrs}, refs, None, False, event=True,
                                  guards=len(self.extra_guards)))  # fmt: skip

    def _effect(self, kind, key, node) -> None:
        self.trace.effects.append((len(self.trace.log) - 1, kind, key, node))

    def set_write(self, t, node) -> None:
        """``t``'s array is written back from ``node`` after the program runs."""
        self.trace.writes[id(t)] = (t, node)
        self._effect("write", t, node)
        self._accounted[id(t._counter)] = t._counter[0]  # (shared by its views)

    def set_grad(self, t, node) -> None:
        """``t.grad`` is set from ``node`` (None: cleared) after the program runs."""
        self.trace.grads[id(t)] = (t, node)
        self._effect("grad", t, node)
        self._grad_accounted[id(t)] = (t._grad, _version(t._grad))
        if t._grad is not None:
            self._grad_owner[id(t._grad)] = t

    def watch_groups(self, opt) -> None:
        """Note ``opt``'s settings (lr, momentum ...) now: changed by the time the call ends
        (a scheduler's step, ``g["lr"] *= 0.5``), they are a Python side effect."""
        if all(o is not opt for o, _ in self._groups):
            self._groups.append((opt, _settings(opt)))

    def scheduler_step(self, sched, args, kwargs, before) -> None:
        """``sched.step(*args, **kwargs)`` just ran (``before``: its optimizer's settings
        before it). Captured, it runs again after the program every call: where it only
        sets the learning rate, from plain arguments, and no ``opt.step()`` follows it in
        the call (the program reads the rate when the call starts; checked when the trace
        ends). Otherwise a Python side effect."""
        opt = getattr(sched, "optimizer", None)
        plain = all(isinstance(v, int | float | type(None)) and type(v) is not TracedScalar
                    for v in (*args, *kwargs.values()))  # fmt: skip
        if opt is None or not plain or [{k: v for k, v in g.items() if k != "lr"} for g in
                                        before] != [{k: v for k, v in g.items() if k != "lr"}
                                                    for g in _settings(opt)]:  # fmt: skip
            self.python_effect(f"{type(sched).__name__}.step() (the learning rate)")
            return
        for i, (o, settings) in enumerate(self._groups):
            if o is opt:
                if settings != before:  # changed by the function before the scheduler ran
                    self.python_effect(f"the function changes {type(opt).__name__}"
                                       ".param_groups (the learning rate ...)", "")  # fmt: skip
                self._groups[i] = (o, _settings(o))
        self.watch_groups(opt)
        self.trace.after.append((sched, tuple(args), dict(kwargs)))
        self._scheduled.append((len(self.trace.log), opt, user_line()))
        self.trace.syncs.append((len(self.trace.log), None))  # (a replay runs it in place)

    def check_writes(self) -> None:
        """See NOTE [Writes the graph did not see]; the optimizers' settings; a captured
        scheduler step with its optimizer's step after it."""
        for pos, opt, line in self._scheduled:
            if any(r.event and r.op == "step" and r.attrs["target"] is opt
                   for r in self.trace.log[pos:]):  # fmt: skip
                self.trace.after = []
                self.python_effect("a scheduler's step() before its optimizer's step()", line)
        for opt, settings in self._groups:
            if _settings(opt) != settings:
                self.python_effect(f"the function changes {type(opt).__name__}.param_groups "
                                   "(the learning rate ...)", "")  # fmt: skip
        for t, counter, grad, grad_counter in self._watch:
            name = self._names.get(id(t)) or getattr(t, "name", None) or (
                f"a tensor of shape {tuple(t.shape)}")  # fmt: skip
            if t._counter[0] != counter and self._accounted.get(id(t._counter)) != t._counter[0]:
                what = f"{name} is changed in place outside the graph"
            elif (t._grad is not grad or _version(t._grad) != grad_counter) and not _same_grad(
                    self._grad_accounted.get(id(t)), t._grad):  # fmt: skip
                what = f"the .grad of {name} is changed outside loss.backward()/zero_grad()"
            else:
                continue
            self.trace.whole.append(what)
            self.trace.breaks.append((f"{what} (a write the program would not repeat)",
                                      "<in the function>"))  # fmt: skip

    def python_effect(self, reason: str, line=None, quiet: bool = False) -> None:
        """A Python side effect here (a print, a scheduler's step, state changed): the
        function runs its Python every call, each op checked against the log (a replay);
        ``fullgraph=True`` makes it an error. ``quiet``: a break at this line is listed
        already."""
        here = line is None  # (else: found when the call ended, at no one place)
        line = user_line() if line is None else line or "<in the function>"
        self.trace.python.append((reason, line))
        if here:  # a replay runs the segments so far before the effect, as eager ordered them
            self.trace.syncs.append((len(self.trace.log), None))
        at = (len(self.trace.log), line)
        if not quiet and self._last_break != at:  # (`print(y.numpy())`: one break)
            self.trace.breaks.append((f"{reason}: a Python side effect, run every call", line))
            self._last_break, self._last_effect = at, at
        if self.fullgraph:
            raise GraphBreak(f"tg.compile(fullgraph=True): the graph breaks at {line}: {reason}"
                             " (a Python side effect that a compiled program would skip)")

    def add_state_write(self, setter, node) -> None:
        """``setter`` gets ``node``'s value after the program runs (optimizer state)."""
        self.trace.state_writes.append((setter, node))
        self._effect("state", setter, node)

    def guard(self, node, expected: bool) -> None:
        self.trace.guards.append((node, bool(expected), user_line()))

    def sync(self, t=None) -> None:
        """Python reads a value here: where a segmented function's compiled segment ends."""
        node = None if t is None else self.node_of(t)
        self.trace.syncs.append((len(self.trace.log), node))

    def graph_break(self, reason: str, read=None) -> None:
        """The graph breaks here; ``read``: the traced tensor (or TracedScalar) whose value
        Python reads (a print, ``.numpy()``): a break a segmented function survives."""
        line = user_line()
        at = (len(self.trace.log), line)
        if read is not None and self._last_effect == at == self._last_break:
            self.trace.breaks.pop()  # `print(y)`: the read of y says more than the print
        self.trace.breaks.append((reason, line))
        self._last_break, self._last_effect = at, None
        if read is None:
            self.trace.whole.append(reason)
        elif isinstance(read, TracedScalar):
            self.trace.syncs.append((len(self.trace.log), read.node))
        else:
            self.sync(read)
        if self.fullgraph:
            raise GraphBreak(
                f"tg.compile(fullgraph=True): the graph breaks at {line}: {reason}. Remove "
                "that from the compiled function (or compile without fullgraph=True, which "
                "runs the function eagerly there)"
            )

    # -- values read from tensors -------------------------------------------------------------
    def read_item(self, t: Tensor, value):
        if not self.is_traced(t):
            return value
        if not isinstance(value, bool | int | float):
            return value
        self.sync(t)
        return self.scalar(value, self.node_of(t))

    def scalar(self, value, node) -> TracedScalar:
        """A number read from the graph (see :class:`TracedScalar`), remembered with the place
        in the log where it was read."""
        s = TracedScalar(value, node, self)
        self._scalars.append((s, len(self.trace.log), user_line()))
        return s

    def finish(self, outputs=()) -> None:
        """The function returned. A number read with ``.item()`` that it kept (in a list, an
        attribute: ``losses.append(loss.item())``) left the graph where it was read: a break
        there, so the function runs again each call and keeps this call's number."""
        self.done = True
        returned = {id(o) for o in outputs}
        kept = []
        for s, pos, line in self._scalars:
            # getrefcount's argument, the loop variable, the tuple in `_scalars`
            if id(s) not in returned and sys.getrefcount(s) > 3:
                self.trace.breaks.append(("a value read from a tensor (.item()) kept by the "
                                          "function (in a list, an attribute)", line))
                self.trace.syncs.append((pos, s.node))
                kept.append(s)
        self._scalars = []
        if kept:
            _unwrap_kept(kept)

    def read_bool(self, t: Tensor, value: bool) -> bool:
        if self.is_traced(t):
            self.sync(t)
            self.guard(self.node_of(t), value)
        return value


def _unwrap_kept(kept) -> None:
    """Where the function kept traced scalars (``losses.append(loss.item())``, ``self.last =
    loss.item()``), put the plain numbers eager would have kept: in the lists and dicts (an
    object's attributes included) that hold them, found through the garbage collector's
    referrers (one pass over the heap, once per trace)."""
    plain = {id(s): s.value for s in kept}
    frozen = gc.get_freeze_count()  # (the referrers search skips frozen objects: see NOTE
    if frozen:  # [Long graphs and the cycle collector] in eager/collector.py)
        gc.unfreeze()
    try:
        holders = gc.get_referrers(*kept)
    finally:
        if frozen:
            gc.freeze()
    for holder in holders:
        if isinstance(holder, list):
            for i, v in enumerate(holder):
                if type(v) is TracedScalar and id(v) in plain:
                    holder[i] = plain[id(v)]
        elif isinstance(holder, dict):
            for k, v in list(holder.items()):
                if type(v) is TracedScalar and id(v) in plain:
                    holder[k] = plain[id(v)]


def _settings(opt) -> list:
    return [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]


def _frozen(value):
    """``value`` as the log keeps it: arrays copied (a replay compares a later call's
    constant with the traced one's values, not with the same array changed in place)."""
    if hasattr(value, "shape") and hasattr(value, "copy") and not isinstance(value, type):
        return value.copy()
    if isinstance(value, tuple | list):
        return type(value)(_frozen(v) for v in value)
    if isinstance(value, dict):
        return {k: _frozen(v) for k, v in value.items()}
    return value


def _same_grad(accounted, grad) -> bool:
    """Is ``grad`` (a tensor or None) the one, at the version, a recorded write left?"""
    return accounted is not None and accounted[0] is grad and accounted[1] == _version(grad)


def _version(t):
    return None if t is None else t._counter[0]
