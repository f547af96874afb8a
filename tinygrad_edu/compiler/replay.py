r"""A later call of a segmented function: the Python function runs again, its ops answered by
stand-ins and the segments' programs (see :mod:`~tinygrad_edu.compiler.segments`).

* With the dispatcher redirected, an op computes nothing: it checks itself against the logs
  of the variants still possible (the same op, attributes and inputs, by position) and
  returns a **stand-in** tensor (shape and dtype, no values). ``loss.backward()``,
  ``opt.step()`` and ``zero_grad()`` check themselves the same way and are **deferred**: the
  segment's program does what they do (gradients, the update, the optimizer's state).
* When Python first needs a value (everything that reads one goes through
  ``Tensor.numpy()``), the segments up to here run: their outputs become real tensors in
  place of their stand-ins (joined to the eager graph by one ``CompiledFunctionBackward``
  each), their state is written back, and the read happens eagerly; at the end of the call
  the last segment runs.
* Anything no variant predicts (another op, another branch, a read elsewhere) **diverges**:
  every stand-in is computed eagerly from the ops this call made, the deferred training
  calls run eagerly in their places, and the rest of the call runs eagerly *while traced*
  (``Tracer.resume``): its path becomes a new variant of the specialisation, so a branch
  that flips on a value read costs one trace per path. A replay never returns a value it did
  not compute from this call's inputs.
"""

from __future__ import annotations

import sys
import weakref

import numpy as _np

from .. import backend
from ..eager import core, grad_mode
from ..eager.dispatch import apply_op
from ..eager.tensor import _CHECKED as _REFCOUNTS_CHECKED
from ..eager.tensor import Tensor
from . import tensor_reads as _reads
from .compiled_program import attach, fetch, joined, spend, write_back
from .trace import Tracer
from .training_capture import install_effect_hooks, install_training_hooks, patch_training

__all__ = ["Replay"]


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
            self.replay.demand(self.tensor())
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


class Replay:
    """One call of a segmented specialisation (see the module docstring). ``root``: the tree
    of segments; ``candidates``: the variants whose guards hold; ``may_trace``: a call that
    leaves the log is traced from there (else it only finishes eagerly)."""

    replaying = True

    def __init__(self, root, candidates, leaves, may_trace=True, names=None):
        self.node, self.cands, self.leaves = root, list(candidates), leaves
        self.may_trace, self.names = may_trace, names
        self.calls: list = []  # (op or event name, args, attrs, stand-in or None), in order
        self.index: dict = {}  # id(stand-in) -> its place in `calls`
        self.thunks: dict = {}  # place of a deferred training call -> runs it eagerly
        self.bound: dict = {}  # captured placeholder -> the tensor at its place in this call
        self.read_at: dict = {}  # id(placeholder) -> a number (the lr ...) read at its event
        self.aliases: list = []  # tensors made on a stand-in's array (x.detach(), x.data)
        self.deferred = False  # a training call waits for its segment's program
        self.diverged = False
        self.tracer = None  # after a divergence: records the rest of the call
        self._undo: list = []

    # -- the hooks ---------------------------------------------------------------------------
    def install(self) -> None:
        _reads.ACTIVE.tracer = self
        grad_mode.set_trace(self)
        self._undo = [_patch_reads(self), _patch_training(self),
                      install_effect_hooks(lambda reason: self.sync(None))]  # fmt: skip

    def close(self) -> None:
        """Hand the dispatcher and the patched methods back (after the call)."""
        for undo in self._undo:
            undo()
        self._undo = []
        _reads.ACTIVE.tracer = None
        grad_mode.set_trace(None)

    # -- the dispatcher's view ---------------------------------------------------------------
    def replay(self, op, args, attrs):
        j = len(self.calls)
        keep = [v for v in self.cands if j < len(v.log) and self._matches(v, v.log[j], op, args,
                                                                          attrs)]  # fmt: skip
        if not keep:
            self.diverge()
            return apply_op(op, *args, **attrs)  # eagerly, recorded by the tracer if any
        self.cands = keep
        rec = keep[0].log[j]
        t = object.__new__(Tensor)
        dev = next((a._device for a in args if isinstance(a, Tensor)), None)
        core.init_tensor(t, None, dev)
        t._data = _Pending(self, j, rec.shape, rec.dtype, t)
        t._requires_grad = rec.requires_grad
        self.calls.append((op, args, attrs, t))
        self.index[id(t)] = j
        return t

    def record(self, op, args, attrs, result):  # an op the dispatcher ran (never while
        pass  # replaying: after a divergence the tracer is the dispatcher's)

    def alias(self, old, t):  # the old value of an in-place op: see rebind
        pass

    def detached(self, t):  # `y.detach_()`: as an in-place view method, below
        self.diverge()
        if self.tracer is not None:
            self.tracer.detached(t)

    def view_rebind(self, t, view):  # `x.t_()`: the tensor itself changes, which a replay's
        self.diverge()  # stand-ins cannot follow: this call runs eagerly (traced) from here
        if self.tracer is not None:
            self.tracer.view_rebind(t, view)

    def rebind(self, t, values):  # an in-place write: the trace had none (it would not
        self.diverge()  # be segmented), so this call left the log
        if self.tracer is not None:
            self.tracer.rebind(t, values.real if type(values) is _Pending else values)

    def event(self, kind, target, tensor, attrs, ok, thunk) -> bool:
        """A training call: True when the log predicts it here (it is deferred to the
        segment's program; ``thunk`` runs it eagerly should the call diverge first)."""
        j, args = len(self.calls), () if tensor is None else (tensor,)
        keep = [v for v in self.cands if j < len(v.log) and _is_event(v.log[j], kind, target,
                attrs) and self._refs_match(v, v.log[j].refs, args)] if ok else []  # fmt: skip
        if not keep:
            self.diverge()
            return False
        self.cands = keep
        self.calls.append((kind, args, attrs, None))
        self.thunks[j] = thunk
        # the numbers the deferred call reads (learning rate, bias corrections) are read now,
        # where eager reads them, not when its segment runs (Python may change them between:
        # a scheduler's step, g["lr"] *= 0.5)
        for node, source in keep[0].trace.placeholders:
            if source.kind == "scalar" and source.at == j + 1:
                self.read_at[id(node)] = fetch(source, self.leaves)
        self.deferred = True
        return True

    def _matches(self, v, rec, op, args, attrs) -> bool:
        if rec.index_ref is not None:  # `C[ix]`: ix is an input, the tensor it came from
            index = attrs.get("index")
            owner = index.tensor() if type(index) is _Pending else self._owner_of(index)
            if owner is None or not self._refs_match(v, (rec.index_ref,), (owner,)):
                return False
            attrs = {k: x for k, x in attrs.items() if k != "index"}
            return rec.op is op and _same({k: x for k, x in rec.attrs.items() if k != "index"},
                                          attrs) and self._refs_match(v, rec.refs, args)
        if rec.op is not op or len(rec.refs) != len(args) or not _same(rec.attrs, attrs):
            return False
        return self._refs_match(v, rec.refs, args)

    def _owner_of(self, array):
        """The tensor of this call (an argument, an op's result) whose array is ``array``."""
        for t in self.leaves:
            if isinstance(t, Tensor) and t._data is array:
                return t
        for c in self.calls:
            if c[3] is not None and c[3]._data is array:
                return c[3]
        return None

    def _refs_match(self, v, refs, args) -> bool:
        if len(refs) != len(args):
            return False
        for ref, a in zip(refs, args):
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
                if id(node) in v.pinned and a is not v.sources[id(node)].tensor:
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
        """Python reads ``t`` (a stand-in, or any tensor while a training call is deferred;
        None: a side effect the trace logged here, a print or a scheduler's step): run the
        segments up to here, then ``t`` is real."""
        if not self.diverged:
            here = len(self.calls)
            if here > self.node.end:
                keep = [v for v in self.cands if here in v.read_set]
                if keep:
                    self._run_to(keep[0], here)
                else:  # a read the trace did not make: traced (eagerly) from here
                    self.diverge()
                    if t is not None and self.tracer is not None and self.tracer.is_traced(t):
                        self.tracer.graph_break("a value read here that the first trace did "
                                                "not make", read=t)  # fmt: skip
        if t is not None and _pending(t):
            self.force(t)

    def _run_to(self, v, here) -> None:
        """Run the segments of variant ``v``'s path up to log entry ``here``."""
        node = self.node
        while node.end < here:
            node = node.child_towards(v)
            self._run(node)
        self.node = node
        self.cands = [w for w in self.cands if any(w is x for x in node.variants)]
        self.deferred = False

    def _run(self, seg) -> None:
        program = seg.program
        if program is None:
            return
        for t in program.released:
            program.target(t, self.leaves)._grad = None
        values = []
        if program.forward is not None:
            needs = program.forward.needs
            values = program.forward({node: self._array(node, source) for node, source in
                                      program.placeholders if node in needs})  # fmt: skip
        write_back(program, values, self.leaves)
        outs, diff = [], set(program.differentiable)
        for slot in program.output_index:
            outs.append(Tensor._make(values[slot], device=backend.device_of(values[slot])))
        grads = [o for o, slot in zip(outs, program.output_index) if slot in diff]
        log = seg.variants[0].log
        spent = [o for o, slot, j in zip(outs, program.output_index, seg.roots)
                 if slot not in diff and log[j].requires_grad]  # (a training step's loss)
        swap = {}
        if grads and grad_mode.is_grad_enabled():
            inputs = [self._input(*program.placeholders[i]) for i in program.grad_inputs]
            saved = [values[k] for k in program.saved_slots]
            swap.update(joined(grads, attach(program, grads, saved, inputs)))
        if spent and grad_mode.is_grad_enabled():
            inputs = program.spent_inputs(self.leaves)
            if inputs:
                swap.update(joined(spent, spend(spent, inputs)))
        if swap:
            outs = [swap.get(id(o), o) for o in outs]
        for j, real in zip(seg.roots, outs):
            _become(self.calls[j][3], real)

    def _array(self, node, source):
        if source.kind in ("arg", "carry", "tensor"):
            return self._input(node, source)._data
        if id(node) in self.read_at:
            return self.read_at[id(node)]
        return fetch(source, self.leaves)  # optimizer state, the learning rate ...

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

    def demand(self, t) -> None:
        """Something asked a stand-in's array for its values outside a read: compute it
        eagerly (after the deferred training calls, in order, should there be any)."""
        if self.deferred:
            self.diverge()
        self.force(t)

    def force(self, t) -> None:
        """Compute stand-in ``t`` eagerly from the ops this call made (its inputs first)."""
        todo = [t]
        while todo:
            s = todo[-1]
            if not _pending(s):
                todo.pop()
                continue
            fake = s._data
            if fake.real is not None:  # an alias (x.detach()) of a stand-in made real
                s._data = fake.real
                todo.pop()
                continue
            owner = self.calls[fake.index][3]
            if owner is not s:  # an alias: its stand-in first
                todo.append(owner)
                continue
            op, args, attrs, _ = self.calls[s._data.index]
            index = attrs.get("index")
            if type(index) is _Pending:  # `C[ix]` with ix a stand-in: ix first
                if index.real is None:
                    todo.append(index.tensor())
                    continue
                attrs = {**attrs, "index": index.real}
                self.calls[s._data.index] = (op, args, attrs, s)
            waiting = [a for a in args if isinstance(a, Tensor) and _pending(a)]
            if waiting:
                todo.extend(waiting)
                continue
            todo.pop()
            _become(s, _eager(op, args, attrs))

    def diverge(self) -> None:
        """Leave the log: the calls not run by a segment run eagerly, in order (stand-ins get
        their values, deferred training calls happen), and the rest of the call runs eagerly,
        traced from here when ``may_trace`` (the new path becomes a variant)."""
        if self.diverged:
            return
        self.diverged = True
        self.close()
        start = self.node.end
        for j, (_, _, _, t) in enumerate(self.calls):
            if t is None:
                if j >= start:
                    self.thunks[j]()
            elif _pending(t):
                self.force(t)
        self.deferred = False
        if not self.may_trace:
            return
        v = self.cands[0]
        p = len(self.calls)
        tracer = Tracer.resume(v.trace, p, [c[3] for c in self.calls], self.leaves, self.bound,
                               v.extra_guards[: v.guards_before(p)], self.names)  # fmt: skip
        self.tracer = tracer
        _reads.ACTIVE.tracer = tracer
        grad_mode.set_trace(tracer)
        self._undo = [_reads.patch_tensor_reads(tracer), patch_training(tracer)]

    def abandon(self) -> None:
        """The function raised: finish what was deferred eagerly, trace nothing."""
        self.may_trace = False
        if self.tracer is not None:
            self.tracer = None
            self.close()
        self.diverge()
        self.close()

    def finish(self) -> None:
        """The function returned: run the segments left (the path of a variant that ends
        here); stand-ins still held by anyone but this replay get their values."""
        if self.diverged:
            return
        here = len(self.calls)
        keep = [v for v in self.cands if len(v.log) == here]
        if not keep:
            self.diverge()
            return
        self._run_to(keep[0], here)
        self.escaped()

    def escaped(self) -> None:
        # NOTE [Stand-ins that outlive the call]: a stand-in that no program output covers is
        # computed only when read. At the end, one that something outside this replay still
        # holds is computed now, while its inputs hold this call's values. The replay's own
        # references are counted (its entry in `calls`, each use as an op's input); the
        # interpreter's count says whether there are more. Where those counts were not
        # checked (see NOTE [Keeping a gradient without a copy] in eager/tensor.py), every
        # stand-in is computed: slower, never stale.
        uses = _uses(self.calls)
        for a in self.aliases:  # (each one the function made, by detach() or .data)
            self.force(a)
        pending = [c[3] for c in self.calls if c[3] is not None and _pending(c[3])]
        for t in pending:
            # getrefcount's argument, the loop variable, `pending`, the call's tuple
            if not _REFCOUNTS_CHECKED or sys.getrefcount(t) - 4 - uses.get(id(t), 0) > 0:
                self.force(t)


def _with_settings(opt, settings, step) -> None:
    """Run a deferred ``opt.step()`` eagerly with the settings (lr ...) its groups had where
    the function called it; then the groups have what Python has set since."""
    now = [dict(g) for g in opt.param_groups]
    for g, then in zip(opt.param_groups, settings):
        g.update(then)
    try:
        step(opt)
    finally:
        for g, later in zip(opt.param_groups, now):
            g.update(later)


def _is_event(rec, kind, target, attrs) -> bool:
    return rec.event and rec.op == kind and rec.attrs["target"] is target and all(
        _same(rec.attrs.get(k), v) for k, v in attrs.items())  # fmt: skip


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
    saved = grad_mode._state.trace
    grad_mode.set_trace(None)
    try:
        return apply_op(op, *args, **attrs)
    finally:
        grad_mode.set_trace(saved)


def _same(a, b) -> bool:
    """Equal as a recorded attribute or constant (arrays by value, types exactly)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if hasattr(a, "shape") and hasattr(a, "dtype") and not isinstance(a, type):
        return a.shape == b.shape and a.dtype == b.dtype and bool(_np.array_equal(a, b))
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 (not comparable: not the same)
        return False


# -- the methods a replay patches while it runs ---------------------------------------------------
def _patch_reads(replay):
    """``Tensor.numpy()`` (through which item, bool, print, tolist, float and int read values,
    with ``force=True``) of a stand-in, or of any tensor while a training call is deferred (a
    parameter printed after ``opt.step()``), first runs the segments up to here. Returns the
    undo."""
    saved, detach, data = Tensor.__dict__["numpy"], Tensor.detach, Tensor.__dict__["data"]

    def numpy(self, *, force=False):
        if not force and self._requires_grad and grad_mode.is_grad_enabled():
            return saved(self)  # refused (see Tensor.numpy) before any segment runs
        if type(self._data) is _Pending or replay.deferred:
            replay.sync(self)
        return saved(self, force=force)

    def alias(self, counter):  # a tensor on a stand-in's (future) array, no values asked
        t = object.__new__(Tensor)
        core.init_tensor(t, None, self._device, counter=counter)
        t._data = self._data
        replay.aliases.append(t)
        return t

    def detached(self):
        return alias(self, self._counter) if type(self._data) is _Pending else detach(self)

    def get_data(self):
        return alias(self, None) if type(self._data) is _Pending else data.fget(self)

    Tensor.numpy, Tensor.detach = numpy, detached
    Tensor.data = property(get_data, data.fset, data.fdel, data.__doc__)

    def undo():
        Tensor.numpy, Tensor.detach, Tensor.data = saved, detach, data

    return undo


def _patch_training(replay):
    """``backward``, ``zero_grad`` and ``step`` check themselves against the log and are
    deferred (see :meth:`Replay.event`); one the log does not predict diverges and then runs
    as the trace from there runs it. Returns the undo."""

    def backward_of(back):
        def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
            if id(self) in replay.index:
                ok = gradient is None and not create_graph and inputs is None
                if replay.event("backward", None, self, {}, ok, lambda: back(
                        self, gradient, retain_graph, create_graph, inputs)):  # fmt: skip
                    return None
            elif replay.deferred:
                replay.diverge()
            run = Tensor.backward if replay.diverged else back
            return run(self, gradient, retain_graph, create_graph, inputs)

        return backward

    def zero_grad_of(owner, original):
        def zero_grad(self, set_to_none: bool = True):
            if replay.event("zero_grad", self, None, {"set_to_none": set_to_none}, True,
                            lambda: original(self, set_to_none)):  # fmt: skip
                return None
            return owner.zero_grad(self, set_to_none)

        return zero_grad

    def step_of(cls, original):
        def step(self, closure=None):
            settings = [dict(g) for g in self.param_groups]  # (lr ... as eager reads them)
            if replay.event("step", self, None, {}, closure is None,
                            lambda: _with_settings(self, settings, original)):  # fmt: skip
                return None
            return cls.step(self) if closure is None else cls.step(self, closure)

        return step

    return install_training_hooks(backward_of, zero_grad_of, step_of)
