r"""``tg.compile``: PyTorch's ``torch.compile``, built from this library's two engines.

``compiled = tg.compile(fn)`` (or a module, or ``@tg.compile``) returns a callable. Its first
call **traces** ``fn``: runs it eagerly while every op is also recorded into a symbolic graph
(:mod:`~tinygrad_edu.compiler.trace`). The graph and its gradient graph are optimised and
turned into code (:mod:`~tinygrad_edu.compiler.compiled_program`), and later calls run that code
instead of the Python function, as long as the **guards** hold:

* the arguments look the same: the same structure, and each tensor the same shape, dtype,
  device and ``requires_grad`` (each other value equal to the traced one);
* the modes are the same: grad mode, and ``training`` of every module in reach;
* every branch the function took on a tensor's value goes the same way (checked on the
  compiled program's own values, before any of its results is used);
* the optimizer's state and ``.grad`` are present or absent as they were.

A call whose guards fail traces again: each specialisation is kept, up to
``cache_size_limit`` (8, as PyTorch's); past that the function runs eagerly, with a warning.
Where Python reads a value in the middle of the function (``print(y)``, ``y.numpy()``,
``float(loss)``), the **graph breaks**: as in PyTorch, the ops before the read run as one
compiled program, the read runs eagerly, and the ops after it run as another program
(:mod:`~tinygrad_edu.compiler.segments`), also around ``backward()`` and ``opt.step()``; a
branch on the value read keeps one compiled path per way it goes. Breaks the graph cannot be
cut at (random numbers, an in-place op in a function that also breaks, an unsupported
optimizer) make that specialisation run eagerly as a whole. ``fullgraph=True`` makes any
break an error naming the line, and ``compiled.explain()`` says what was captured, which
guards hold, where it broke and why a function runs eagerly.

>>> import tinygrad_edu as tg
>>> @tg.compile
... def f(x):
...     return (x * x).sum() * 2
>>> x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> f(x).grad_fn.name()         # the first call traces (an eager run), compiles, runs it
'CompiledFunctionBackward'
>>> y = f(x)                    # later calls run the compiled program only
>>> y.grad_fn.name()
'CompiledFunctionBackward'
>>> y.backward(); x.grad        # the backward program, built ahead of time
tensor([ 4.,  8., 12.])
>>> f.explain().graph_count, f.explain().graph_break_count  # a forward and a backward program
(2, 0)
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass, field

from .. import backend
from ..eager import grad_mode
from ..eager.tensor import Tensor
from ..nn.module import Module
from ..symbolic.static import fusion as _fusion
from . import tensor_reads as _reads
from .compiled_program import attach, build_program, fetch, joined, spend, write_back
from .optimized_module import OptimizedModule
from .reach import Unguarded, modules_of, optimizers_of, python_reads, watched_tensors
from .replay import Replay
from .segments import Variant, plan
from .trace import GraphBreak, TracedScalar, Tracer
from .training_capture import patch_effects, patch_training

__all__ = ["compile", "CompiledCallable", "ExplainOutput", "GraphBreak", "cache_size_limit"]

cache_size_limit = 8


# -- arguments: flattened to leaves, with a structure that guards compare ----------------------
def _flatten(obj, leaves: list):
    """``obj`` as a hashable structure, its tensors and values appended to ``leaves``."""
    if isinstance(obj, Tensor):
        leaves.append(obj)
        return ("T",)
    if isinstance(obj, tuple | list):
        return (type(obj).__name__, tuple(_flatten(o, leaves) for o in obj))
    if isinstance(obj, dict):
        return ("dict", tuple((k, _flatten(v, leaves)) for k, v in obj.items()))
    if inspect.isgenerator(obj) or inspect.isasyncgen(obj) or inspect.iscoroutine(obj):
        raise TypeError(
            f"tg.compile: an argument is a {type(obj).__name__}; a compiled function's "
            "arguments must be tensors, numbers, strings, None or lists/tuples/dicts of them "
            "(a generator would be used up by the trace): pass list(...) instead"
        )
    try:
        hash(obj)
    except TypeError:
        raise TypeError(
            f"tg.compile: an argument of type {type(obj).__name__} cannot be guarded (it is "
            "not hashable, so a later call with a changed value could not be told apart); "
            "pass tensors, numbers, strings or tuples, or keep this object outside the "
            "compiled function"
        ) from None
    return ("V", type(obj), obj)


def _unflatten(spec, leaves):
    it = iter(leaves)

    def build(s):
        kind = s[0]
        if kind == "T":
            return next(it)
        if kind in ("tuple", "list"):
            items = [build(x) for x in s[1]]
            return tuple(items) if kind == "tuple" else items
        if kind == "dict":
            return {k: build(v) for k, v in s[1]}
        return next(it)

    return build(spec)


def _output_spec(obj, leaves: list):
    if isinstance(obj, Tensor | TracedScalar):
        leaves.append(obj)
        return ("T",)
    if isinstance(obj, tuple | list):
        return (type(obj).__name__, tuple(_output_spec(o, leaves) for o in obj))
    if isinstance(obj, dict):
        return ("dict", tuple((k, _output_spec(v, leaves)) for k, v in obj.items()))
    leaves.append(obj)
    return ("V",)


def _plain(result):
    """A traced call's result with each number read by ``.item()`` (a :class:`TracedScalar`,
    which the trace needed) as the plain Python number that eager returns."""
    leaves: list = []
    spec = _output_spec(result, leaves)
    if not any(type(x) is TracedScalar for x in leaves):
        return result
    return _unflatten(spec, [x.value if type(x) is TracedScalar else x for x in leaves])


def _tensor_key(t: Tensor):
    # the dtype itself, not its name: str() of a numpy dtype costs more than the rest
    return (tuple(t.shape), t._data.dtype, str(t.device), t.requires_grad)


# -- explain -----------------------------------------------------------------------------------
@dataclass
class ExplainOutput:
    """What ``compiled.explain()`` reports (PyTorch's ``torch._dynamo.explain`` names)."""

    graph_count: int = 0  # compiled programs: forward and backward, of every segment
    graph_break_count: int = 0
    segment_count: int = 0  # compiled forward segments (a break between two: 2)
    break_reasons: list = field(default_factory=list)  # (reason, line)
    op_count: int = 0
    guards: list = field(default_factory=list)  # text, one per guard
    compile_times: int = 0
    sources: list = field(default_factory=list)  # generated code, one per graph
    eager_reasons: list = field(default_factory=list)  # why a specialisation runs eagerly
    divergence_count: int = 0  # calls that left a segmented function's log (then traced)
    kernels: list = field(default_factory=list)  # backend="fuse": the fused kernels

    def __str__(self) -> str:
        lines = [f"Graph count: {self.graph_count}",
                 f"Graph break count: {self.graph_break_count}",
                 f"Compiled segments: {self.segment_count}",
                 f"Op count: {self.op_count}", f"Traces: {self.compile_times}",
                 f"Divergences: {self.divergence_count}"]  # fmt: skip
        if self.break_reasons:
            lines.append("Break reasons:")
            lines += [f"  {i + 1}. {r}\n     at {where}"
                      for i, (r, where) in enumerate(self.break_reasons)]  # fmt: skip
        if self.eager_reasons:
            lines.append("Runs eagerly as a whole (a break the graph cannot be cut at):")
            lines += [f"  - {r}" for r in self.eager_reasons]
        lines.append("Guards:")
        lines += [f"  - {g}" for g in self.guards]
        if self.kernels:
            seconds = sum(k.compile_seconds or 0.0 for k in self.kernels)
            lines.append(f"Fused kernels: {len(self.kernels)} (first calls, compiling or "
                         f"loading from the disk cache: {seconds:.2f} s)")  # fmt: skip
            lines += [f"  - {k.describe()}" for k in self.kernels]
        return "\n".join(lines)


# -- one specialisation ------------------------------------------------------------------------
class _Entry:
    """A traced specialisation: its key, its program (None: runs eagerly) and its guards."""

    def __init__(self, key, program, extra_guards, breaks, out_spec, out_leaves, ops, guards):
        self.key, self.program, self.extra_guards = key, program, extra_guards
        self.breaks, self.out_spec, self.out_leaves, self.ops = breaks, out_spec, out_leaves, ops
        self.guard_text = guards
        self.variants = self.root = None  # a segmented specialisation: see segments.py
        self.eager_reasons: list = []
        self.divergences = 0  # replays that left the log (each traced a new variant)
        self.grad_on, self.device = key[2], "cpu"
        self.reads = self.trace = None

    def replan(self) -> None:
        """The tree of segments of all variants (rebuilt when a path is added)."""
        self.root = plan(self.variants, self.grad_on, self.device)


class CompiledCallable:
    """What ``tg.compile(fn)`` returns: call it as ``fn``; see the module docstring."""

    def __init__(self, fn, fullgraph: bool = False, dynamic=None, backend="inductor",
                 mode=None, options=None, disable: bool = False):  # fmt: skip
        if not callable(fn):
            raise TypeError(
                f"tg.compile: expected a function or a module, got {type(fn).__name__} "
                f"({fn!r}); pass the function itself, e.g. tg.compile(model) or @tg.compile"
            )
        if dynamic:
            warnings.warn("tg.compile: dynamic=True is not supported; every new shape is "
                          "traced again (as with dynamic=False)", stacklevel=3)  # fmt: skip
        self.fn, self.fullgraph, self.disable = fn, bool(fullgraph), bool(disable)
        self.backend = backend
        #: the code generator: "fuse" (loop kernels, symbolic/static/fusion.py) or "numpy"
        self.generator = _fusion.choose(backend)
        self._entries: list[_Entry] = []
        self._warned = False
        self._modules = None
        self._reads: list = []
        self.__wrapped__ = fn
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)
        self.__doc__ = getattr(fn, "__doc__", None)

    # -- the call ----------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        token = _fusion.backend.set(self.generator)  # (read where programs are compiled)
        try:
            return self._call(*args, **kwargs)
        finally:
            _fusion.backend.reset(token)

    def _call(self, *args, **kwargs):
        if self.disable or _reads.ACTIVE.tracer is not None:
            return self.fn(*args, **kwargs)  # nested inside another trace: part of that graph
        leaves: list = []
        spec = _flatten((args, kwargs), leaves)
        key = self._key(spec, leaves)
        reads = None  # the fingerprint of what the function reaches: taken once, if asked
        for entry in self._entries:
            if entry.key != key:
                continue
            if entry.reads is not None:
                reads = self._read_values() if reads is None else reads
                if reads != entry.reads:
                    continue
            if entry.variants is not None:  # graph breaks: compiled segments, eager reads
                ready = [v for v in entry.variants
                         if all(f(leaves) == want for f, want in v.extra_guards)]  # fmt: skip
                if ready:
                    return self._replay(entry, ready, args, kwargs, leaves)
                continue
            if not all(f(leaves) == want for f, want in entry.extra_guards):
                continue
            if entry.program is None:
                return self.fn(*args, **kwargs)  # a break it cannot be cut at: runs eagerly
            hit, result = self._run(entry, leaves)
            if hit:
                return result
        if self._traces() >= cache_size_limit:
            if not self._warned:
                self._warned = True
                warnings.warn(
                    f"tg.compile: {self.__name__} was traced {self._traces()} times "
                    f"(cache_size_limit = {cache_size_limit}): its guards keep failing (new "
                    "shapes, dtypes, or a branch on tensor values that changes every call). "
                    "It runs eagerly from now on; see .explain() for the guards",
                    stacklevel=2,
                )
            return self.fn(*args, **kwargs)
        return self._trace(key, args, kwargs, leaves)

    def _traces(self) -> int:
        """Traces kept: one per specialisation, one per path of a segmented one."""
        return sum(len(e.variants) if e.variants is not None else 1 for e in self._entries)

    def _key(self, spec, leaves) -> tuple:
        """What a specialisation is keyed on: the arguments' structure, each tensor's shape,
        dtype, device and ``requires_grad``, grad mode, and every reachable module's
        ``training`` (the rest of Python state in reach is compared by :meth:`_read_values`)."""
        if self._modules is None:  # found at a trace; the values are read every call
            self._refresh()
        return (spec, tuple(_tensor_key(t) if isinstance(t, Tensor) else None for t in leaves),
                grad_mode.is_grad_enabled(), tuple(m.training for m in self._modules))  # fmt: skip

    def _refresh(self) -> None:
        self._modules = modules_of(self.fn)
        self._reads = python_reads(self.fn, self._modules)

    def _read_values(self) -> tuple:
        """The fingerprint of the Python state in reach (see :mod:`.reach`)."""
        return tuple(read() for read, _ in self._reads)

    # -- tracing -----------------------------------------------------------------------------
    def _names(self) -> dict:
        return {id(t): n for m in self._modules[:1] for n, t in
                [*m.named_parameters(), *m.named_buffers()]}  # fmt: skip

    def _trace(self, key, args, kwargs, leaves):
        self._refresh()  # (a submodule replaced since: its own modes and attributes)
        key = self._key(key[0], leaves)
        before = self._read_values()
        watched = watched_tensors(leaves, self._modules, self.fn)
        tracer = Tracer(leaves, self.fullgraph, self._names(), watched)
        for opt in optimizers_of(self.fn):
            tracer.watch_groups(opt)
        _reads.ACTIVE.tracer = tracer
        grad_mode.set_trace(tracer)
        undo = [_reads.patch_tensor_reads(tracer), patch_training(tracer), patch_effects(tracer)]
        try:
            result = self.fn(*args, **kwargs)
            tracer.check_random()
        finally:
            _reads.ACTIVE.tracer = None
            grad_mode.set_trace(None)
            for u in undo:
                u()
        tracer.check_writes()
        self._changed_state(tracer, before)
        entry = self._conclude(tracer, result, key, args, kwargs, leaves, reads=before)
        if entry is not None and _pure(entry):
            # as torch.compile's: the first call's result is the compiled program's already
            # (the eager run above only traced); its values are the same
            hit, compiled = self._run(entry, leaves)
            if hit:
                return compiled
        return _plain(result)

    def _changed_state(self, tracer, before) -> None:
        """Python state in reach that the traced call changed (``calls[0] += 1``): a side
        effect a program would skip, so the function runs its Python every call."""
        after = self._read_values()
        for (_, what), b, a in zip(self._reads, before, after):
            if isinstance(b, Unguarded):
                tracer.python_effect(f"{what} {b.reason}", "")
            elif a != b:
                tracer.python_effect(f"the function changes {what}", "")

    def _conclude(self, tracer, result, key, args, kwargs, leaves, entry=None, reads=None):
        """Make a specialisation of a finished trace, or (``entry``: a segmented one whose
        replay left the log and traced the rest of the call) add its path as a variant."""
        after: list = []
        if _flatten((args, kwargs), after) != key[0] or any(
                a is not b for a, b in zip(after, leaves)):  # fmt: skip
            tracer.graph_break("the function changes a list, dict or tuple it was given; a "
                               "compiled program would not repeat that: pass values, or "
                               "return the new ones")  # fmt: skip
        out_leaves: list = []
        out_spec = _output_spec(result, out_leaves)
        tracer.finish(out_leaves)
        trace = tracer.trace
        outputs = []
        for leaf in out_leaves:
            if isinstance(leaf, TracedScalar):
                outputs.append(leaf.node)
            elif isinstance(leaf, Tensor):
                outputs.append(tracer.node_of(leaf))
            else:
                outputs.append(None)
        for leaf in out_leaves:
            if isinstance(leaf, Tensor) and leaf.grad_fn is not None and not tracer.is_traced(
                    leaf):  # fmt: skip
                tracer.graph_break("the function returns a tensor the trace did not see made")
        requires = [isinstance(a, Tensor) and a.requires_grad for a in tracer.args]
        if entry is not None:
            entry.divergences += 1
            entry.breaks = list(dict.fromkeys(entry.breaks + trace.breaks))
            entry.ops += trace.ops
            entry.eager_reasons = list(dict.fromkeys(trace.whole))
            if entry.eager_reasons:  # a path the graph cannot be cut on: eager from now on
                entry.variants = entry.root = None
            else:
                entry.variants.append(Variant(trace, outputs, tracer.extra_guards, requires))
                entry.replan()
            return
        program, variants, eager_reasons = None, None, []
        if trace.breaks:
            eager_reasons = list(dict.fromkeys(trace.whole))
            if not eager_reasons:
                variants = [Variant(trace, outputs, tracer.extra_guards, requires)]
        else:
            grad_wanted = []
            if grad_mode.is_grad_enabled() and not trace.grads:
                grad_wanted = [i for i, (_, s) in enumerate(trace.placeholders)
                               if s.kind in ("arg", "tensor") and _source_tensor(tracer, s)
                               .requires_grad]  # fmt: skip
            device = _device_of(leaves, trace)
            program = build_program(trace, outputs, grad_wanted, device, [
                isinstance(x, Tensor) and x.requires_grad for x in out_leaves])
        guards = _describe_guards(key, trace, tracer.extra_guards, self._reads, reads)
        entry = _Entry(key, program, tracer.extra_guards, list(trace.breaks), out_spec,
                       [None if isinstance(x, Tensor | TracedScalar) else x for x in out_leaves],
                       trace.ops, guards)  # fmt: skip
        # a function that changes Python state runs its Python every call (a replay checks
        # each value it bakes in), so what it reaches is not compared beforehand
        entry.reads = None if trace.python else reads
        entry.trace = trace
        entry.out_requires = [isinstance(x, Tensor) and x.requires_grad for x in out_leaves]
        entry.out_kinds = ["tensor" if isinstance(x, Tensor) else "scalar" if isinstance(
            x, TracedScalar) else "const" for x in out_leaves]  # fmt: skip
        entry.eager_reasons = eager_reasons
        if variants is not None:
            entry.variants, entry.device = variants, _device_of(leaves, trace)
            entry.replan()
        self._entries.insert(0, entry)
        return entry

    # -- running a segmented specialisation --------------------------------------------------
    def _replay(self, entry, ready, args, kwargs, leaves):
        """Run the function with ops answered by stand-ins and the segments' programs (see
        :mod:`~tinygrad_edu.compiler.replay`); a call that leaves the log runs eagerly from
        there, traced, and its path becomes another variant of ``entry``."""
        replay = Replay(entry.root, ready, leaves, self._traces() < cache_size_limit,
                        self._names())  # fmt: skip
        replay.install()
        try:
            result = self.fn(*args, **kwargs)
            replay.finish()
            if replay.tracer is not None:
                replay.tracer.check_random()
        except BaseException:
            replay.abandon()  # no stand-in leaves without its value
            raise
        finally:
            replay.close()
        if replay.tracer is not None:
            self._conclude(replay.tracer, result, entry.key, args, kwargs, leaves, entry)
            result = _plain(result)
        elif replay.diverged:
            entry.divergences += 1
        return result

    # -- running a compiled specialisation ---------------------------------------------------
    def _run(self, entry, leaves):
        program = entry.program
        feed = {node: fetch(source, leaves) for node, source in program.fed}
        if program.captured and any(feed[n].shape != n.shape for n in program.captured):
            # a captured tensor changed shape: the program would fail part-way, after some
            # parameters were written in place; trace again before anything is touched
            self._entries.remove(entry)
            return False, None
        for t in program.released:
            program.target(t, leaves)._grad = None
        try:
            values = program.forward(feed) if program.forward is not None else []
        except (ValueError, TypeError) as e:  # a captured tensor changed shape: trace again
            if "shape" in str(e):
                self._entries.remove(entry)
                return False, None
            raise
        for k, want, _ in program.guard_slots:
            if bool(values[k]) != want:
                return False, None
        write_back(program, values, leaves)
        for sched, a, k in entry.trace.after:  # captured scheduler steps, in order
            sched.step(*a, **k)
        outs, tensors, spent, diff = [], [], [], program.differentiable_set
        for kind, const, slot, requires in zip(entry.out_kinds, entry.out_leaves,
                                               program.output_index, entry.out_requires):
            if kind == "const":
                outs.append(const)
            elif kind == "scalar":
                outs.append(values[slot].item())
            else:
                t = Tensor._make(values[slot], device=backend.device_of(values[slot]))
                outs.append(t)
                if slot in diff:
                    tensors.append(t)
                elif requires:  # the loss of a training step: its graph is used up
                    spent.append(t)
        swap = {}
        if tensors and grad_mode.is_grad_enabled():
            inputs = [_source_tensor_from(program, i, leaves) for i in program.grad_inputs]
            saved = [values[k] for k in program.saved_slots]
            swap.update(joined(tensors, attach(program, tensors, saved, inputs)))
        if spent and grad_mode.is_grad_enabled():
            inputs = program.spent_inputs(leaves)
            if inputs:
                swap.update(joined(spent, spend(spent, inputs)))
        if swap:
            outs = [swap.get(id(o), o) if isinstance(o, Tensor) else o for o in outs]
        return True, _unflatten(entry.out_spec, outs)

    # -- reports -----------------------------------------------------------------------------
    def explain(self) -> ExplainOutput:
        """What was captured, the guards, and where the graph broke (all specialisations)."""
        out = ExplainOutput(compile_times=self._traces())
        for e in self._entries:
            out.divergence_count += e.divergences
            for p in _programs(e):
                out.graph_count += 1 + (p.backward is not None)
                out.segment_count += 1
                out.sources.append(p.source_code)
                for part in (p.forward, p.backward):
                    out.kernels += getattr(part, "kernels", None) or []
            out.eager_reasons += e.eager_reasons
            out.graph_break_count += len(e.breaks)
            out.break_reasons += e.breaks
            out.op_count += e.ops
            out.guards += e.guard_text
        return out

    @property
    def programs(self) -> list:
        """The compiled programs, newest first (``.source_code``, ``.graph_nodes`` ...)."""
        return [p for e in self._entries for p in _programs(e)]

    def __get__(self, obj, objtype=None):  # as a decorator on a method
        if obj is None:
            return self
        bound = CompiledCallable.__new__(CompiledCallable)
        bound.__dict__.update(self.__dict__)
        bound.fn = self.fn.__get__(obj, objtype)
        return bound

    def __repr__(self) -> str:
        return f"<tg.compile of {self.__name__}: {len(self._entries)} specialisation(s)>"


def _programs(entry) -> list:
    if entry.root is not None:
        return [s.program for s in entry.root.walk() if s.program is not None]
    return [] if entry.program is None else [entry.program]


def _source_tensor(tracer, source):
    return source.tensor if source.kind == "tensor" else tracer.args[source.index]


def _source_tensor_from(program, i, leaves):
    _, source = program.placeholders[i]
    return source.tensor if source.kind == "tensor" else leaves[source.index]


def _device_of(leaves, trace) -> str:
    for t in leaves:
        if isinstance(t, Tensor):
            return str(t.device)
    for _, s in trace.placeholders:
        if s.kind == "tensor":
            return str(s.tensor.device)
    return "cpu"


def _describe_guards(key, trace, extra, reads, values) -> list:
    spec, tensors, grad, modes = key
    out = [f"grad mode is {'on' if grad else 'off'}"]
    out += [f"argument tensor {i}: shape {k[0]}, dtype {k[1]}, device {k[2]}, "
            f"requires_grad={k[3]}" for i, k in enumerate(tensors) if k is not None]  # fmt: skip
    out += [f"module {i}: training={t}" for i, t in enumerate(modes)]
    if values is not None and not trace.python:
        out += [f"{what} == {v!r}" if isinstance(v, int | float | str | bool) else
                f"{what} is as traced (its parameters, buffers, submodules and attributes)"
                if what.startswith("module ") else f"{what} is as traced"
                for (_, what), v in zip(reads, values)]  # fmt: skip
    out += [f"bool({node.name}) is {want} (read at {line})" for node, want, line in trace.guards]
    out += [f"{len(extra)} optimizer/.grad state check(s)"] if extra else []
    return out


def _pure(entry) -> bool:
    """A specialisation whose program changes nothing (no parameter, buffer, ``.grad`` or
    optimizer state written, no Python effect): it can run right after its trace."""
    trace = entry.trace
    return entry.program is not None and not (trace.writes or trace.grads or trace.after or
                                              trace.state_writes or trace.python)  # fmt: skip


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend="inductor",  # noqa: A001
            mode=None, options=None, disable: bool = False):  # fmt: skip
    """``torch.compile``'s spelling: compile a function or a module (see the module
    docstring); usable as ``@tg.compile`` and ``@tg.compile(fullgraph=True)``.

    Args:
        model: the function or module.
        fullgraph: make every graph break an error naming the line.
        backend: PyTorch's default ``"inductor"``: the best this library has, fused loop
            kernels where numba is installed (the ``fuse`` extra), else the numpy code (the
            same answers, to rounding); ``$TINYGRAD_EDU_COMPILE_BACKEND`` (``numpy`` or
            ``fuse``) pins what the default means. ``"fuse"``: elementwise chains and their
            row reductions become loop kernels compiled with numba
            (:mod:`tinygrad_edu.symbolic.static.fusion`), an error without numba.
            ``"numpy"`` (PyTorch's ``"eager"`` and ``"aot_eager"`` are read as it): the
            numpy code, one numpy call per op. What the fuser cannot take (integers,
            float16, another device, empty or 0-d arrays, a kernel numba fails on) is the
            numpy code in every case.
        dynamic, mode, options: accepted for PyTorch code.
        disable: run ``model`` as it is (no tracing).
    """
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable)  # fmt: skip
    if isinstance(model, Module):
        inner = CompiledCallable(model.forward, fullgraph, dynamic, backend, mode, options, disable)
        return OptimizedModule(model, inner)
    return CompiledCallable(model, fullgraph, dynamic, backend, mode, options, disable)
