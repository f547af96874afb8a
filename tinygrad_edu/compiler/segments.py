r"""Graph breaks without giving up the graph: a function cut into compiled segments.

Where Python reads a value in the middle of a compiled function (``print(y)``, ``y.numpy()``,
``if y.sum().item() > 0``), PyTorch's Dynamo compiles the code before the read as one graph,
runs the read eagerly, and resumes in a second graph after it (it rewrites the bytecode into
"resume functions", one per continuation, each kept and selected by its guards). A
Python-level tracer cannot rewrite bytecode; this module and :mod:`~.replay` get the same
behaviour the way LazyTensor (PyTorch/XLA) does:

* the trace (:mod:`~tinygrad_edu.compiler.trace`) logs every op, every training call
  (``backward``, ``opt.step()``, ``zero_grad``) and the points where Python read a value; the
  graph is cut at those points into **segments**, each compiled into a program whose inputs
  are the arguments, captured tensors, optimizer state and values of earlier segments, and
  whose outputs are what later segments, the reads and the caller use, plus the state the
  training calls of the segment write back (parameters, ``.grad``, optimizer state);
* one traced path is a :class:`Variant`. A call whose ops leave the log after a read (a
  branch on the value read went the other way) is traced from there on, and its path becomes
  another variant sharing the first one's log up to that point. The segments of all variants
  form a **tree** (:func:`plan`): a segment is shared by the variants whose logs agree up to
  its end, and outputs what any of them needs later; its children are the continuations;
* a later call **replays** the function (:class:`~.replay.Replay`): each op checks itself
  against the log of the variants still possible, and the segment the read or the end of the
  call selects runs.
"""

from __future__ import annotations

from .. import symbolic as S
from ..symbolic.graph import topo_sort
from ..symbolic.tensor_node import CONSTANT, PLACEHOLDER
from .compiled_program import build_program
from .trace import Source, Trace

__all__ = ["Variant", "Segment", "plan"]


class Variant:
    """One traced path through a segmented function: its trace (the log, the reads, the
    placeholders, the state it writes), the graph nodes it returned, and its extra guards
    (optimizer state, ``.grad`` present), which a call checks before the replay."""

    def __init__(self, trace, outputs, extra_guards, args_requires_grad):
        self.trace, self.log, self.outputs = trace, trace.log, list(outputs)
        self.args_requires_grad = list(args_requires_grad)
        self.extra_guards = list(extra_guards)
        n = len(self.log)
        self.reads = sorted({p for p, _ in trace.syncs if 0 < p <= n})
        self.read_set = set(self.reads)
        self.op_of = {id(r.node): j for j, r in enumerate(self.log) if not r.event}
        self.sources = {id(nd): s for nd, s in trace.placeholders}
        # the captured tensors the function writes (parameters opt.step() updates, a buffer)
        # are pinned: a replay feeds and writes back the very tensors the trace saw; one it
        # only reads (tg.arange(T), made anew each call) is fed whatever stands at its place
        written = {id(key) for _, kind, key, _ in trace.effects if kind == "write"}
        self.pinned = {id(nd) for nd, s in trace.placeholders
                       if s.kind == "tensor" and id(s.tensor) in written}  # fmt: skip
        self.needed = _needed(self)

    def boundary_after(self, a):
        """Where the segment starting at ``a`` ends: the next read, else the end (None: the
        log ends at ``a``)."""
        for p in self.reads:
            if p > a:
                return p
        return len(self.log) if len(self.log) > a else None

    def ranges(self) -> list:
        out, a = [], 0
        while (b := self.boundary_after(a)) is not None:
            out.append((a, b))
            a = b
        return out

    def effects(self, a, b):
        """The writes of log entries ``[a, b)``: ({id: (tensor, node)}, {id: (tensor, node or
        None)}, [(setter, node)]), the last of each tensor's."""
        writes, grads, state = {}, {}, []
        for pos, kind, key, node in self.trace.effects:
            if a <= pos < b:
                if kind == "write":
                    writes[id(key)] = (key, node)
                elif kind == "grad":
                    grads[id(key)] = (key, node)
                else:
                    state.append((key, node))
        return writes, grads, state

    def guards_before(self, p) -> int:
        """How many of the extra guards the trace had made before log entry ``p``."""
        for r in self.log[p:]:
            if r.event:
                return r.guards
        return len(self.extra_guards)


def _needed(v) -> set:
    """The op indices of ``v`` whose values outlive their segment: read by Python, returned,
    or used by a later segment (found last segment first)."""
    log = v.log
    needed: set = set()
    for node in [nd for _, nd in v.trace.syncs] + v.outputs:
        j = v.op_of.get(id(node)) if node is not None else None
        if j is not None:
            needed.add(j)
        elif node is not None and node.op is not PLACEHOLDER:  # e.g. arithmetic on .item()
            needed.update(v.op_of[id(m)] for m in topo_sort([node]) if id(m) in v.op_of)
    # NOTE [Values kept across a write]: a stand-in no segment output covers is computed
    # eagerly when something reads it, from the tensors its op read. Once a segment has
    # updated a parameter in place (opt.step()), a value computed before the update could no
    # longer be recomputed that way, so every value made before the last write is an output
    # of its segment: one kept by the caller (`out = model(x)`) holds what eager gave it.
    last = max((pos for pos, kind, _, _ in v.trace.effects if kind in ("write", "state")),
               default=-1)  # fmt: skip
    needed.update(j for j in range(last) if not log[j].event)
    for a, b in reversed(v.ranges()):
        nodes = [log[j].node for j in needed if a <= j < b] + _effect_nodes(v.effects(a, b))
        if nodes:
            needed.update(_cut(nodes, v.op_of, a)[1].values())
    return needed


def _effect_nodes(effects) -> list:
    writes, grads, state = effects
    return ([n for _, n in writes.values()] + [n for _, n in grads.values() if n is not None]
            + [n for _, n in state])  # fmt: skip


class Segment:
    """A node of the tree of segments: log entries ``[start, end)`` shared by ``variants``,
    its program (None: nothing to compute), the ops whose values it hands on (``roots``, in
    the program's output order), and the continuations (``children``); ``final``: the
    variants whose call ends here."""

    def __init__(self, start, end, variants):
        self.start, self.end, self.variants = start, end, variants
        self.roots, self.program, self.children = [], None, []
        self.final = [v for v in variants if len(v.log) == end]

    def child_towards(self, v):
        return next(c for c in self.children if any(w is v for w in c.variants))

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()


def plan(variants, grad_on: bool, device) -> Segment:
    """The tree of segments of ``variants`` (see the module docstring): its root is an empty
    segment at the start of the call."""
    root = Segment(0, 0, list(variants))
    root.children = _level(root.variants, 0, grad_on, device)
    return root


def _level(variants, a, grad_on, device) -> list:
    groups: dict = {}
    for v in variants:
        b = v.boundary_after(a)
        if b is not None:  # variants agree up to `b` when they hold the very same log entries
            groups.setdefault((b, tuple(id(r) for r in v.log[a:b])), []).append(v)
    out = []
    for (b, _), members in groups.items():
        seg = Segment(a, b, members)
        backward = any(r.event and r.op == "backward" for r in members[0].log[a:b])
        _compile(seg, grad_on and not backward, device)  # (as a whole training step's)
        seg.children = _level([v for v in members if len(v.log) > b], b, grad_on, device)
        out.append(seg)
    return out


def _compile(seg, grad_on, device) -> None:
    a, b, v = seg.start, seg.end, seg.variants[0]
    seg.roots = sorted({j for w in seg.variants for j in w.needed if a <= j < b})
    writes, grads, state = v.effects(a, b)
    nodes = [v.log[j].node for j in seg.roots] + _effect_nodes((writes, grads, state))
    if not nodes and not grads:
        return
    cut, carried, used = _cut(nodes, v.op_of, a)
    new = dict(zip(map(id, nodes), cut))
    placeholders = [(p, v.sources[id(p)]) for p in used]
    placeholders += [(p, Source("carry", index=j)) for p, j in carried.items()]
    sub = Trace(placeholders=placeholders, grad_reads=v.trace.grad_reads,
                arg_index=v.trace.arg_index,
                writes={k: (t, new[id(n)]) for k, (t, n) in writes.items()},
                grads={k: (t, None if n is None else new[id(n)]) for k, (t, n) in grads.items()},
                state_writes=[(s, new[id(n)]) for s, n in state])  # fmt: skip
    wanted = [i for i, (_, s) in enumerate(placeholders) if _requires_grad(s, v)] if grad_on else []
    seg.program = build_program(sub, cut[: len(seg.roots)], wanted, device,
                                [v.log[j].requires_grad for j in seg.roots])


def _requires_grad(source, v) -> bool:
    if source.kind == "arg":
        return v.args_requires_grad[source.index]
    if source.kind == "tensor":
        return source.tensor.requires_grad
    if source.kind == "carry":
        return v.log[source.index].requires_grad
    return False


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
