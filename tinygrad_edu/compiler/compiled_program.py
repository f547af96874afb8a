r"""From a trace to compiled programs, and running them: the AOTAutograd part of ``tg.compile``.

One trace becomes up to two programs, both made by the symbolic engine's compiler
(``symbolic.optimize`` then ``symbolic.compile``: straight-line Python over the array
namespace, one line per op):

* the **forward program** computes the function's outputs, the values to write back (a
  parameter updated by ``opt.step()``, a ``.grad``, a running mean), the guards' values, and
  the forward values the backward program will read ("saved");
* the **backward program**, built ahead of time with ``symbolic.gradients`` (the gradient is
  itself a graph), takes the saved values and the gradients of the outputs and returns the
  gradients of the inputs that require grad.

In the eager graph the whole compiled call is **one node**, ``CompiledFunctionBackward``,
whose backward runs the backward program: the compiled region is opaque to the eager engine,
as it is in PyTorch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as _np

from .. import backend
from .. import symbolic as S
from ..eager.function import Function
from ..eager.node import RETAIN_GRAPH_HINT
from ..eager.tensor import Tensor
from ..symbolic.graph import topo_sort
from ..symbolic.static.fusion import backend as fusion_backend
from ..symbolic.static.fusion import compile_fused
from ..symbolic.tensor_node import CONSTANT, PLACEHOLDER

__all__ = ["Program", "build_program", "CompiledFunction", "fetch", "write_back", "spend", "joined"]


def _compiled(nodes, device, donated=()):
    """``nodes`` optimised and compiled; ``donated``: (placeholder, index of the output that
    is stored back into its array) pairs (see ``symbolic.compile``)."""
    nodes = S.optimize(list(nodes))
    # raw: the trace made the placeholders from the arrays it feeds (no checks, no copies)
    generate = compile_fused if fusion_backend.get() == "fuse" else S.compile
    return generate(nodes, device=device, donated={p: nodes[k] for p, k in donated}, raw=True)


@dataclass
class Program:
    """A compiled specialisation of a function (see the module docstring)."""

    placeholders: list  # (node, Source)
    forward: object  # CompiledGraph
    out_slots: list  # the forward program's results, in order: what each is
    guard_slots: list  # (index into results, expected bool, line)
    write_slots: list  # (index, tensor)
    grad_slots: list  # (index or None, tensor)
    state_slots: list  # (index, setter)
    saved_slots: list  # indices of the saved values
    backward: object = None  # CompiledGraph or None
    grad_inputs: list = field(default_factory=list)  # indices into placeholders
    backward_feeds: list = field(default_factory=list)  # its placeholders: saved then grads
    differentiable: list = field(default_factory=list)  # output slots that get a grad_fn
    output_index: list = field(default_factory=list)  # per returned leaf: its slot or None
    source_code: str = ""
    raw_forward: list = field(default_factory=list)  # the captured graphs, before the passes
    raw_backward: list = field(default_factory=list)
    donated: list = field(default_factory=list)  # captured placeholders written in place
    released: list = field(default_factory=list)  # tensors whose .grad is dropped first
    arg_index: dict = field(default_factory=dict)  # id(a traced argument) -> its place
    live_saved: set = field(default_factory=set)  # saved slots that are the inputs themselves

    def __post_init__(self):
        needs = self.forward.needs if self.forward is not None else ()
        #: the placeholders the forward program reads, with their sources, in order
        self.fed = [(n, s) for n, s in self.placeholders if n in needs]
        #: the captured tensors fed, whose shapes are checked before a donated array is written
        self.captured = [n for n, s in self.fed if s.kind == "tensor"] if self.donated else []
        self.differentiable_set = frozenset(self.differentiable)

    def target(self, t, leaves):
        """The tensor a write, a ``.grad`` or a release of traced tensor ``t`` goes to in
        this call: the call's own argument at ``t``'s place, or ``t`` itself (a parameter,
        a buffer)."""
        i = self.arg_index.get(id(t))
        return t if i is None else leaves[i]

    def spent_inputs(self, leaves) -> list:
        """What a training step's used-up loss is joined to (see :func:`spend`): the tensors
        the program writes or whose ``.grad`` it sets, that require grad."""
        touched = [self.target(t, leaves) for _, t in self.write_slots + self.grad_slots]
        return [t for t in touched if t.requires_grad]

    @property
    def forward_nodes(self) -> list:
        """The forward program's graph after the passes (what its code computes)."""
        return list(self.forward.nodes) if self.forward is not None else []

    @property
    def backward_nodes(self) -> list:
        """The backward program's graph after the passes."""
        return list(self.backward.nodes) if self.backward is not None else []


def _clone_backward(grads, forward_set):
    """The gradient graph with every forward value it reads replaced by a new placeholder:
    returns (new gradient nodes, [(forward node, its placeholder)])."""
    memo, saved = {}, []

    def copy(n):
        hit = memo.get(n)
        if hit is not None:
            return hit
        if n.op is CONSTANT or n.op is PLACEHOLDER and n not in forward_set:
            memo[n] = n  # constants, and the gradients of the outputs (fed to backward)
            return n
        if n in forward_set:
            label = n.name if len(n.name) <= 24 else f"{n.op.name} #{len(saved)}"
            p = S.Variable(f"saved: {label}", shape=n.shape, dtype=n.dtype)
            saved.append((n, p))
            memo[n] = p
            return p
        new = S.Node(n.op, tuple(copy(i) for i in n.inputs), n.attrs, name=n.name,
                     shape=n.shape, dtype=n.dtype)  # fmt: skip
        new.is_gradient = True
        memo[n] = new
        return new

    for n in topo_sort(grads):
        copy(n)
    return [copy(g) for g in grads], saved


def build_program(trace, outputs, grad_wanted, device, requires=None) -> Program:
    """Compile ``trace`` whose function returned the graph nodes ``outputs`` (a list with
    None for outputs that are not tensors of the graph). ``grad_wanted``: the placeholder
    positions whose sources require grad (empty: no backward program); ``requires``: per
    output, whether the eager run's result required grad (only those get a ``grad_fn``: a
    result made under ``no_grad``, a number read by ``.item()`` do not)."""
    results, out_slots = [], []

    def slot(node, what):
        results.append(node)
        out_slots.append(what)
        return len(results) - 1

    output_index = [None if n is None else slot(n, "output") for n in outputs]
    guard_slots = [(slot(n, "guard"), want, line) for n, want, line in trace.guards]
    write_slots = [(slot(n, "write"), t) for t, n in trace.writes.values()]
    grad_slots = [(None if n is None else slot(n, "grad"), t) for t, n in trace.grads.values()]
    state_slots = [(slot(n, "state"), setter) for setter, n in trace.state_writes]

    backward, backward_feeds, differentiable, saved_slots, bw_nodes = None, [], [], [], []
    live = set()  # saved slots that are inputs (not copied before a write-back: see there)
    xs = [trace.placeholders[i][0] for i in grad_wanted]
    requires = [True] * len(outputs) if requires is None else requires
    diff_outputs = [(k, n) for k, n in enumerate(outputs) if n is not None and requires[k] and
                    n.dtype is not None and n.dtype.startswith(("float", "complex"))]  # fmt: skip
    if xs and diff_outputs:
        ys = [n for _, n in diff_outputs]
        seeds = [S.Variable(f"grad_out{k}", shape=n.shape, dtype=n.dtype) for k, n in diff_outputs]
        grads = S.gradients(ys, xs, grad_ys=seeds)
        forward_set = set(topo_sort(ys + results))
        new_grads, saved = _clone_backward(grads, forward_set)
        bw_nodes = new_grads
        backward = _compiled(new_grads, device)
        saved = [(fwd, p) for fwd, p in saved if p in backward.needs]  # after the passes
        for fwd, _ in saved:
            saved_slots.append(slot(fwd, "saved"))
            if fwd.op is PLACEHOLDER:  # an input itself: eager's backward reads its array too
                live.add(saved_slots[-1])
        backward_feeds = [p for _, p in saved] + seeds
        differentiable = [output_index[k] for k, _ in diff_outputs]
    donated = _donated(trace, write_slots)
    forward = _compiled(results, device, donated) if results else None
    source = forward.source if forward is not None else ""
    if backward is not None:
        source += "\n\n# backward\n" + backward.source
    return Program(trace.placeholders, forward, out_slots, guard_slots, write_slots,
                   grad_slots, state_slots, saved_slots, backward, list(grad_wanted),
                   backward_feeds, differentiable, output_index, source, results,
                   bw_nodes, [p for p, _ in donated], _released(trace, grad_slots),
                   trace.arg_index, live)  # fmt: skip


def _donated(trace, write_slots) -> list:
    """The placeholders whose arrays the forward program may overwrite: the tensors it
    writes back anyway (a parameter ``opt.step()`` updates), whose old value nobody reads once
    the program has (the code generator checks the liveness). Not where a guard may throw
    the call's results away (the old values must then still be there for the eager run), nor
    where one fed array overlaps another's memory (a view of a parameter read later)."""
    if trace.guards:
        return []
    written = {id(t): k for k, t in write_slots}
    fed = [(n, s.tensor) for n, s in trace.placeholders if s.kind == "tensor"]
    return [(node, written[id(t)]) for node, t in fed if id(t) in written and not any(
        u is not t and _overlap(t._data, u._data) for _, u in fed)]  # fmt: skip


def _released(trace, grad_slots) -> list:
    """The tensors whose ``.grad`` the program sets and never reads (the function cleared
    it with ``zero_grad`` before ``backward``): the old ``.grad`` is dropped before the
    program runs, as eager's ``zero_grad`` drops it, so its memory serves the new one (the
    hand-written step holds one gradient at a time, not two). Not where a guard may send
    the call back to the eager function."""
    if trace.guards:
        return []
    return [t for _, t in grad_slots if id(t) not in trace.grad_reads]


def _overlap(a, b) -> bool:
    """May arrays ``a`` and ``b`` share memory (True where the namespace cannot tell)?"""
    check = getattr(backend.namespace_of(a), "may_share_memory", None)
    return True if check is None else bool(check(a, b))


def fetch(source, leaves):
    """The array a placeholder is fed in this call: an argument's (``leaves``: the call's flat
    arguments), a captured tensor's, or a value computed now (optimizer state, the learning
    rate, Adam's bias corrections)."""
    kind = source.kind
    if kind == "arg":
        return leaves[source.index]._data
    if kind == "tensor":
        return source.tensor._data
    if kind == "grad":
        return (leaves[source.index] if source.index >= 0 else source.tensor)._grad._data
    value = source.fetch()
    if kind == "scalar":
        return _np.asarray(value, dtype=source.dtype)
    return value


def write_back(program, values, leaves) -> None:
    """After ``program`` ran: its state goes back in place (parameters an ``opt.step()``
    updated, buffers, arguments changed in place), each ``.grad`` it set, and the optimizer's
    state arrays. ``leaves``: the call's flat arguments. A value saved for the backward
    program that the passes made the very array about to be overwritten (``x * 1.0``
    simplified to ``x``, then ``x.data.add_(...)``) is copied first, as eager's backward
    reads its own array; an input saved as itself is not (eager's backward reads that
    input's memory, as changed through ``.data``)."""
    if program.write_slots and program.saved_slots:
        arrays = {id(program.target(t, leaves)._data) for _, t in program.write_slots}
        for k in program.saved_slots:
            v = values[k]
            if k in program.live_saved:
                continue
            if id(v) in arrays or id(getattr(v, "base", None)) in arrays:
                values[k] = v.copy()
    for k, t in program.write_slots:
        t = program.target(t, leaves)
        if values[k] is not t._data:  # (a donated parameter was updated in its memory)
            t._data[...] = values[k]
        t._counter[0] += 1
    for k, t in program.grad_slots:
        t = program.target(t, leaves)
        t._grad = None if k is None else Tensor._make(values[k], device=t._device)
    for k, setter in program.state_slots:
        setter(values[k])


class CompiledFunction(Function):
    """The eager graph's view of a compiled call: one node, ``CompiledFunctionBackward``,
    whose backward runs the compiled backward program on the saved values."""

    @staticmethod
    def forward(ctx, call, *inputs):
        ctx.save_for_backward(call)  # freed by a backward without retain_graph, as eager's
        return tuple(call.outputs)

    @staticmethod
    def backward(ctx, *grads):
        (call,) = ctx.saved_tensors  # (a second backward without retain_graph: eager's error)
        if ctx._graph_mode:
            raise RuntimeError(
                "CompiledFunctionBackward: create_graph=True (a gradient of a gradient) is "
                "not supported through a compiled function; compute it on the eager function"
            )
        program = call.program
        needs = program.backward.needs
        feed = {p: v for p, v in zip(program.backward_feeds, call.saved + [g._data for g in grads])
                if p in needs}  # fmt: skip
        values = program.backward(feed)
        out = [Tensor._make(v, device=t._device) for t, v in zip(call.inputs, values)]
        return (None, *out)


class _Spent(Function):
    """The outputs of a call whose own ``backward()`` already used their graph (a training
    step returns its loss): they require grad, as eager's do, and a backward through them
    raises eager's error for a graph already freed."""

    @staticmethod
    def forward(ctx, outputs, *inputs):
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(f"CompiledFunctionBackward: {RETAIN_GRAPH_HINT}")


_Spent.__name__ = _Spent.__qualname__ = "CompiledFunction"  # (its node's name)


def joined(tensors, wrapped) -> dict:
    """id of each of ``tensors`` -> its counterpart in ``wrapped`` (one tensor or a tuple)."""
    wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
    return {id(a): b for a, b in zip(tensors, wrapped)}


def spend(outputs, inputs):
    """``outputs`` joined to ``inputs`` (tensors that require grad) by a spent node."""
    return _Spent.apply(outputs, *inputs)


class _Call:
    """One call's values, handed to CompiledFunction (outputs, saved values, inputs)."""

    __slots__ = ("program", "outputs", "saved", "inputs")


def attach(program, outputs, saved, inputs):
    """Give ``outputs`` (tensors) one ``CompiledFunctionBackward`` node whose edges go to
    ``inputs`` (the tensors whose gradients the backward program computes, in order)."""
    call = _Call()
    call.program, call.outputs, call.saved, call.inputs = program, outputs, saved, inputs
    return CompiledFunction.apply(call, *inputs)
