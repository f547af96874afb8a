"""The backward stepper: a backward pass, one frame per node the engine runs.

**Eager** (:meth:`BackwardStepper.record`): ``loss.backward()`` runs under an engine
:class:`~tinygrad_edu.eager.Observer`. Frame 0 shows the state before anything runs (the
dependency counts the engine computed, the root on the ready queue); then one frame per node
the engine ran, in order (``GraphRoot`` first: it hands out the seed gradient); the last frame
shows the finished pass. So ``len(frames) == nodes run + 2``. Each frame stores, *after* its
node ran and its gradients were delivered: the dependency counts, the ready queue (next first),
the input buffers (gradients waiting, already summed) and a copy of every leaf's ``.grad``.

**Lanes.** The engine has one ready queue per device (``docs/concepts/engine.md``): the CPU
queue, worked by the thread that called ``backward()``, and one per other device, each worked
by its own thread. Each frame records which queue (``frame.queue``) and which thread
(``frame.thread``) ran its node, and ``frame.lanes`` holds every queue's ready nodes. When a
graph spans several devices the drawing shows one lane per queue: a table with a column per
queue and a row per step, so CPU and device work are seen to interleave (frames are in the
order the nodes *finished*; how two lanes interleave can differ from run to run).

**Symbolic** (:meth:`BackwardStepper.record_symbolic`): an ``Executor`` runs the forward and
gradient nodes; frame 0 is the empty graph, then one frame per node the Executor computes (in
its topological order), then a final frame: ``len(frames) == len(executor.order) + 2``.

``stepper.draw(i)`` draws frame ``i`` (the running node orange, done nodes grey-green, ready
nodes blue with their queue position, dependency counts and buffers in the boxes, a side panel
with the queue), ``stepper.caption(i)`` explains it in words, ``save_gif``/``save_frames`` write
files and ``widget()`` gives a Jupyter slider.

>>> import tinygrad_edu as tg
>>> x = tg.tensor([1.0, 2.0], requires_grad=True)
>>> st = BackwardStepper.record((x * x).sum(), names={"x": x})
>>> [f.title for f in st.frames]
['start', 'GraphRoot', 'SumBackward0', 'MulBackward0', 'AccumulateGrad (x)', 'done']
>>> st.frames[3].summed  # x*x: MulBackward0's 2nd gradient for x is added to the 1st
1
>>> st.frames[4].received_count
2
"""

from __future__ import annotations

import io
import os
import textwrap
import threading
from dataclasses import dataclass, field

import numpy as np  # display only

from .draw import (
    COLORS,
    _esc,
    _new_graph,
    _to_numpy,
    add_eager,
    add_symbolic,
    check_dot,
    format_array,
)
from .traverse import EdgeRecord, collapse, eager_graph, node_names, symbolic_graph

__all__ = ["BackwardStepper", "Frame"]

RUNNING = ("#fdba74", "#c2410c")
DONE = ("#f1f5f9", "#16a34a")
READY = ("#cffafe", "#0e7490")
WAITING = ("#ffffff", "#64748b")


@dataclass
class Frame:
    """One step of a recorded backward pass.

    Attributes:
        kind: ``"start"``, ``"run"`` or ``"done"``.
        node: the engine node that ran in this step (None for start/done).
        title: a short name for the step (the node's name, tagged when names repeat).
        caption: what happens, in words.
        received: the gradients the node started with (its input buffer, numpy arrays).
        received_count: how many gradients arrived in that buffer (more than one: summed).
        summed: how many of the gradients this node *sent* were added to a buffer that
            already held one (fan-in).
        sent: ``(next node, input position, gradient, summed)`` for each gradient sent.
        newly_ready: nodes that became ready in this step.
        dependencies: node -> gradients it still waits for (after the step).
        ready: the ready queue after the step, next to run first.
        buffers: node -> gradients waiting in its input buffer after the step.
        leaf_grads: leaf tensor -> copy of its ``.grad`` after the step (eager).
        done: the nodes that have run so far, this one included.
        values: symbolic node -> value, for the nodes computed so far (symbolic).
        queue: the device whose ready queue ran the node (``"cpu"``, ``"sim:0"`` ...).
        thread: the name of the thread that ran it.
        lanes: queue device -> its ready nodes after the step, next first.
        running: nodes other threads were running when the step ended.
    """

    kind: str
    node: object = None
    title: str = ""
    caption: str = ""
    received: list = field(default_factory=list)
    received_count: int = 0
    summed: int = 0
    sent: list = field(default_factory=list)
    newly_ready: list = field(default_factory=list)
    dependencies: dict = field(default_factory=dict)
    ready: list = field(default_factory=list)
    buffers: dict = field(default_factory=dict)
    leaf_grads: dict = field(default_factory=dict)
    done: tuple = ()
    values: dict = field(default_factory=dict)
    queue: str = "cpu"
    thread: str = ""
    lanes: dict = field(default_factory=dict)
    running: tuple = ()


def _copy(g):
    return None if g is None else np.array(_to_numpy(g), copy=True)


class _Recorder:
    """The engine Observer that turns one backward call into frames.

    The engine calls it from every thread that runs a node, so each thread has its own frame
    in progress (``pending``); a frame is complete, and appended, when its node finished.
    """

    def __init__(self, leaves):
        self.frames, self.pending, self.done, self.leaves = [], {}, [], leaves
        self.arrivals, self.lock = {}, threading.Lock()

    def _snapshot(self, frame, task, popped=None):
        """Copy the task's state into ``frame``. NOTE: never called holding ``self.lock``:
        the engine calls ``gradient_arrived`` holding the task's lock, which takes ours."""
        from ..eager.node import _leaf_lock  # noqa: PLC0415

        lanes = {}
        for device, _, node, inputs in task.queued():
            lanes.setdefault(device, []).append((node, inputs))
        if popped is not None:
            lanes.setdefault("cpu", []).insert(0, (popped, None))
        # NOTE: with several devices, the nodes this step made ready reach their queue only
        # after the step (the engine's _work pushes them once _evaluate returns): show them
        # queued on their device's lane, in the queue's order, not as running elsewhere.
        queued = {id(n) for entries in lanes.values() for n, _ in entries}
        late = [n for n in frame.newly_ready if id(n) not in queued]
        for node in late:
            lanes.setdefault(str(node.device), []).append((node, None))
        for device in {str(n.device) for n in late}:
            lanes[device].sort(key=lambda entry: -entry[0].sequence_nr)  # stable: ties keep order
        frame.lanes = {d: [n for n, _ in entries] for d, entries in lanes.items()}
        frame.ready = [n for d in sorted(lanes, key=_lane_key) for n, _ in lanes[d]]
        with task.lock or _NO_LOCK:  # other threads change these while a task runs
            frame.dependencies = dict(task.dependencies)
            buffers = dict(task.not_ready)
        buffers.update((n, inputs) for entries in lanes.values() for n, inputs in entries if inputs)
        frame.buffers = {n: [_copy(g) for g in b] for n, b in buffers.items()}
        leaf_grads = {}
        for t in self.leaves:
            with _leaf_lock(t):
                leaf_grads[t] = _copy(t.grad)
        frame.leaf_grads = leaf_grads

    # Observer protocol (duck-typed: the engine calls these methods)
    def begin(self, task):
        self.task = task
        start = Frame("start", title="start")
        self._snapshot(start, task, popped=task.root)
        self.frames.append(start)

    def node_ready(self, task, node):
        frame = self.pending.get(threading.get_ident())
        if frame is not None:
            frame.newly_ready.append(node)

    def node_started(self, task, node, grads):
        from ..eager.engine import current_queue_device  # noqa: PLC0415

        with self.lock:
            self.pending[threading.get_ident()] = Frame(
                "run",
                node=node,
                received=[_copy(g) for g in grads],
                received_count=self.arrivals.get(node, 1 if node is task.root else 0),
                queue=current_queue_device(),
                thread=threading.current_thread().name,
            )

    def gradient_arrived(self, task, node, input_nr, grad, summed):
        frame = self.pending.get(threading.get_ident())
        if frame is None:
            return
        pos = next(
            (
                i
                for i, (n, nr) in enumerate(frame.node.next_functions)
                if n is node and nr == input_nr and all(s[1] != i for s in frame.sent)
            ),
            None,
        )
        frame.sent.append((node, pos, _copy(grad), summed))
        if grad is not None:
            with self.lock:
                self.arrivals[node] = self.arrivals.get(node, 0) + 1
        frame.summed += bool(summed)

    def node_finished(self, task, node, grads):
        with self.lock:
            frame = self.pending.get(threading.get_ident())
            if frame is None or frame.node is not node:
                return  # a node that did not run (no gradient reached it)
            del self.pending[threading.get_ident()]
            self.done.append(node)
            frame.done = tuple(self.done)
            frame.running = tuple(f.node for f in self.pending.values())
            self.frames.append(frame)  # in the order the nodes finished
        self._snapshot(frame, task)  # before the task can end: this node is still outstanding

    def end(self, task):
        final = Frame("done", title="done", done=tuple(self.done))
        self._snapshot(final, task)
        self.frames.append(final)


_NO_LOCK = threading.Lock()  # stands in for the lock of a task that has none (one thread)


def _lane_key(device: str):
    """Lanes in order: the CPU first, then the devices by name."""
    return (device != "cpu", device)


class BackwardStepper:
    """Frames of one backward pass, and ways to show them. Make one with :meth:`record` or
    :meth:`record_symbolic`."""

    def __init__(self, form, frames, data, names=None):
        self.form, self.frames, self.data = form, frames, data
        self._tags = names or {}

    # -- recording ----------------------------------------------------------------------
    @classmethod
    def record(
        cls,
        loss,
        gradient=None,
        retain_graph: bool = True,
        names=None,
        params=None,
        max_nodes: int | None = None,
    ):
        """Run ``loss.backward(gradient, retain_graph=retain_graph)`` and record each step.

        Args:
            loss: the eager output tensor (a scalar unless ``gradient`` is given).
            gradient: the seed gradient for a non-scalar ``loss``.
            retain_graph: keep saved values (default True, so the graph can be drawn and run
                again).
            names, params: mappings name -> tensor naming leaves (else ``tensor.name``).
            max_nodes: as in :func:`~tinygrad_edu.viz.draw_eager` (None: draw everything).
        """
        from ..eager import Tensor, observe  # noqa: PLC0415

        if not isinstance(loss, Tensor):
            raise TypeError(
                f"BackwardStepper.record expects an eager Tensor, got "
                f"{type(loss).__name__}; use record_symbolic for symbolic nodes"
            )
        mapping = {**(params or {}), **(names or {})}
        data = eager_graph(loss, mapping or None)
        leaves = [r.ref for r in data.nodes if r.kind == "leaf"]
        rec = _Recorder(leaves)
        with observe(rec):
            loss.backward(gradient, retain_graph=retain_graph)
        stepper = cls("eager", rec.frames, collapse(data, max_nodes))
        stepper._tags = _eager_tags(data)
        stepper._root = rec.task.root
        stepper._finish_eager()
        return stepper

    @classmethod
    def record_symbolic(cls, grad_nodes, feed, device: str = "cpu"):
        """Run an Executor over ``grad_nodes`` (and what they need) and record each node.

        Args:
            grad_nodes: the nodes to compute, typically ``[y] + gradients(y, xs)``.
            feed: the feed_dict (Variable -> array).
        """
        from ..symbolic import Executor, Node  # noqa: PLC0415

        nodes = [grad_nodes] if isinstance(grad_nodes, Node) else list(grad_nodes)
        data = symbolic_graph(nodes)
        ex = Executor(nodes, device=device)
        values, frames = {}, [Frame("start", title="start")]

        def observer(node, value):
            values[node] = _copy(value)
            frames.append(Frame("run", node=node, done=tuple(values), values=dict(values)))

        ex.run(feed, observer=observer)
        frames.append(Frame("done", title="done", done=tuple(values), values=dict(values)))
        stepper = cls("symbolic", frames, data)
        stepper._order = ex.order
        stepper._finish_symbolic()
        return stepper

    # -- captions -----------------------------------------------------------------------
    def _tag(self, node) -> str:
        return self._tags.get(
            node, node.name() if callable(getattr(node, "name", None)) else str(node)
        )

    def _finish_eager(self):
        n_run = len(self.frames) - 2
        out_name = self.data.node(self.data.outputs[0]).label
        seen = {f.queue for f in self.frames if f.kind == "run"}
        seen.update(d for f in self.frames for d in f.lanes)
        self.lanes = sorted(seen or {"cpu"}, key=_lane_key)
        self.threads = {f.queue: f.thread for f in self.frames if f.kind == "run"}
        several = len(self.lanes) > 1
        for i, f in enumerate(self.frames):
            if f.kind == "start":
                waits = sum(1 for v in f.dependencies.values() if v)
                f.caption = (
                    f"backward() on {out_name} begins. The engine walked the graph and counted, "
                    f"for each node, how many gradients it must wait for ({waits} nodes wait). "
                    f"Only the root is ready. {n_run} nodes will run, each once."
                )
                if several:
                    f.caption += (
                        f" The graph spans {len(self.lanes)} devices: one ready queue each "
                        f"({', '.join(self.lanes)}); the calling thread works the cpu queue, "
                        "a worker thread each other one."
                    )
                continue
            if f.kind == "done":
                f.caption = (
                    "Done: every node ran once, in the order of its ready queue "
                    "(highest sequence number first); the leaves' .grad hold the "
                    "gradients."
                )
                continue
            f.title = self._tag(f.node)
            f.caption = self._eager_caption(f)
            before = self.frames[i - 1].lanes.get(f.queue, [])
            if len(before) > 1 and f.node is before[0]:
                f.caption = self._why_first(f, before, several) + f.caption
            if several:
                f.caption = f"[{f.queue} queue, thread {f.thread!r}] " + f.caption

    def _why_first(self, f, ready, several=False) -> str:
        """Why ``f.node`` ran before the other ready nodes of its queue (see NOTE
        [AccumulateGrad runs first] in ``eager/node.py``)."""
        node = f.node
        head = f"{len(ready)} nodes were ready{' on this queue' if several else ''}; "
        ties = [n for n in ready if n is not node and n.sequence_nr == node.sequence_nr]
        if ties:
            others = ", ".join(self._tag(n) for n in ties)
            return (
                f"{head}{f.title} and {others} tie on sequence_nr (every AccumulateGrad has the "
                f"largest, 2**64 - 1); {f.title} became ready first, so it goes first. "
            )
        if hasattr(node, "variable"):
            return (
                f"{head}{f.title} goes first: every AccumulateGrad has the largest sequence_nr, "
                "2**64 - 1, so a leaf's gradient is added as soon as it is complete. "
            )
        return f"{head}{f.title} was created last (highest sequence_nr), so it goes first. "

    def _eager_caption(self, f) -> str:
        node = f.node
        parts = []
        if node is self._root:
            targets = ", ".join(self._tag(n) for n, _, _, _ in f.sent if n is not None)
            parts.append(
                f"GraphRoot runs: it hands the seed gradient (ones, shape "
                f"{_shape(f.received[0]) if f.received else '?'}) to {targets}."
            )
        else:
            k = f.received_count
            held = (
                "its input buffer held 1 gradient"
                if k <= 1
                else f"its input buffer held {k} gradients, summed into one before it ran"
            )
            if hasattr(node, "variable"):
                parts.append(
                    f"{self._tag(node)} runs: {held}; it adds that into "
                    f"{self._tags.get(node.variable, 'the leaf')}.grad."
                )
            else:
                parts.append(f"{self._tag(node)} runs: {held}.")
                sends = [
                    f"{self._tag(n)}"
                    + (
                        f" (input {pos})"
                        if pos is not None and len(node.next_functions) > 1
                        else ""
                    )
                    for n, pos, g, _ in f.sent
                    if g is not None
                ]
                if sends:
                    parts.append("It sends gradients to " + ", ".join(sends) + ".")
        for n, _, _g, summed in f.sent:
            if summed:
                parts.append(
                    f"{self._tag(n)} already had a gradient waiting: the new one is "
                    "added to it (fan-in)."
                )
        if f.newly_ready:
            parts.append("Now ready: " + ", ".join(self._tag(n) for n in f.newly_ready) + ".")
        return " ".join(parts)

    def _finish_symbolic(self):
        from ..symbolic import CONSTANT, PLACEHOLDER  # noqa: PLC0415

        labels = {r.ref: r.label for r in self.data.nodes if r.kind == "tensor"}
        titles = {
            r.ref: r.info.get("grad_of") or r.label for r in self.data.nodes if r.kind == "tensor"
        }
        self._tags = titles
        n = len(self.frames) - 2
        for f in self.frames:
            if f.kind == "start":
                f.caption = (
                    f"The Executor sorted the {n} nodes topologically (each after its "
                    "inputs) once; run() now computes them in that order, forward "
                    "nodes and gradient nodes alike."
                )
                continue
            if f.kind == "done":
                f.caption = (
                    "Done: each node was computed once, after its inputs. The gradient "
                    "nodes are ordinary nodes: the gradient is just more graph."
                )
                continue
            node = f.node
            f.title = titles.get(node, node.name)
            args = ", ".join(titles.get(i, labels.get(i, i.name)) for i in node.inputs)
            if node.op is PLACEHOLDER:
                f.caption = f"Variable {f.title} gets its value from the feed_dict."
            elif node.op is CONSTANT:
                f.caption = f"The constant {f.title} is ready."
            elif node.is_adjoint_sum:
                f.caption = (
                    f"{f.title}: an add node sums the partial adjoints ({args}) of a "
                    "value used more than once."
                )
            elif node.is_gradient:
                f.caption = f"Gradient node {f.title} = {node.op.name}({args}) is computed."
            else:
                f.caption = f"Forward node {f.title} = {node.op.name}({args}) is computed."

    def caption(self, i: int) -> str:
        """The text that explains frame ``i``."""
        return self.frames[i].caption

    def __len__(self) -> int:
        return len(self.frames)

    # -- drawing ------------------------------------------------------------------------
    def draw(self, i: int):
        """A ``graphviz.Digraph`` of frame ``i``: the whole graph, with this step's state."""
        if not -len(self.frames) <= i < len(self.frames):
            raise IndexError(
                f"frame {i} does not exist; this stepper has {len(self.frames)} "
                f"frames (0 to {len(self.frames) - 1})"
            )
        f = self.frames[i]
        g = _new_graph(f"step{i % len(self.frames)}")
        g.attr(ranksep="0.3", nodesep="0.25")
        caption = textwrap.wrap(f.caption, 80)
        head = f"step {i % len(self.frames)} of {len(self.frames) - 1}" + (
            f": {f.title}" if f.kind == "run" else f" ({f.title})"
        )
        rows = "".join(
            f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="13">{_esc(line)}</FONT></TD></TR>'
            for line in caption
        )
        g.attr(
            label=f'<<TABLE BORDER="0" CELLSPACING="2"><TR><TD ALIGN="LEFT"><FONT '
            f'POINT-SIZE="17"><B>{_esc(head)}</B></FONT></TD></TR>{rows}</TABLE>>',
            labelloc="t",
            labeljust="l",
        )
        if self.form == "eager":
            add_eager(g, self.data, decorate=lambda r: self._decorate_eager(r, f), show_grad=False)
            g.node("panel", self._panel(f), shape="plaintext")
        else:
            add_symbolic(g, self.data, decorate=lambda r: self._decorate_symbolic(r, f))
        return g

    def _status_attrs(self, colors, bold=False):
        fill, border = colors
        return {"fillcolor": fill, "color": border, "penwidth": "3" if bold else "1.5"}

    def _decorate_eager(self, rec, f):
        if isinstance(rec, EdgeRecord) or rec.kind == "elision":
            if isinstance(rec, EdgeRecord):  # gradients sent in this step are bold
                src = self._ref(rec.src)
                if src is f.node and f.node is not None and rec.kind != "accumulate":
                    return {"attrs": {"penwidth": "3", "color": RUNNING[1]}}
                if rec.kind == "output" and f.node is self._root and f.kind == "run":
                    return {"attrs": {"penwidth": "3", "color": RUNNING[1]}}
            return {}
        if rec.kind == "leaf":
            g = f.leaf_grads.get(rec.ref)
            rows = (
                [(".grad", format_array(g), "#0f172a")]
                if g is not None
                else [(".grad: None", [], "#64748b")]
            )
            acc = self._ref(rec.info["accumulate"])
            bold = f.node is acc and f.node is not None
            return {"rows": rows, "attrs": {"penwidth": "3"} if bold else {}}
        if rec.kind == "output":
            running = f.node is self._root and f.node is not None
            return {"attrs": self._status_attrs(RUNNING, True)} if running else {}
        node = rec.ref
        title = self._tags.get(node, rec.label)
        rows = []
        if f.node is node:
            status, k = RUNNING, f.received_count
            rows.append(
                (
                    f"running · got {k} gradient{'s' if k != 1 else ''}"
                    + (" (summed)" if k > 1 else ""),
                    [line for g in f.received if g is not None for line in format_array(g, 4)],
                    "#7c2d12",
                )
            )
        elif node in f.done:
            status = DONE
            rows.append(("done", [], "#15803d"))
        elif node in f.ready:
            status = READY
            lane = f.lanes.get(str(node.device), f.ready)
            position = lane.index(node) + 1 if node in lane else f.ready.index(node) + 1
            rows.append((f"ready · queue #{position}", [], "#0e7490"))
        elif node in f.running or (len(self.lanes) > 1 and f.dependencies.get(node) == 0):
            status = RUNNING  # taken off its queue by another thread, not finished yet
            rows.append(("running (another thread)", [], "#7c2d12"))
        else:
            status = WAITING
            rows.append((f"waits for {f.dependencies.get(node, 0)} gradient(s)", [], "#475569"))
        if len(self.lanes) > 1:  # which lane (queue) the node runs on
            text, values, color = rows[0]
            rows[0] = (f"{text} · {node.device}", values, color)
        buf = f.buffers.get(node)
        if buf and f.node is not node and node not in f.done:
            got = self._arrived(node, f)
            for g in buf:
                if g is not None:
                    rows.append(
                        (
                            f"buffer ({got} summed)" if got > 1 else "buffer",
                            format_array(g, 4),
                            "#1e3a8a",
                        )
                    )
        return {"rows": rows, "title": title, "attrs": self._status_attrs(status, f.node is node)}

    def _arrived(self, node, f) -> int:
        """Gradients delivered to ``node`` up to frame ``f``."""
        count = 0
        for fr in self.frames:
            count += sum(1 for n, _, g, _ in fr.sent if n is node and g is not None)
            if fr is f:
                break
        return count

    def _ref(self, rid):
        return next((r.ref for r in self.data.nodes if r.id == rid), None)

    def _panel(self, f) -> str:
        def row(text, color="#0f172a", bold=False):
            t = f"<B>{_esc(text)}</B>" if bold else _esc(text)
            font = f'<FONT POINT-SIZE="11" COLOR="{color}">{t}</FONT>'
            return f'<TR><TD ALIGN="LEFT">{font}</TD></TR>'

        if len(self.lanes) > 1:
            rows = [f"<TR><TD>{self._lanes_table(f)}</TD></TR>"]
        else:
            rows = [row("ready queue (next first)", bold=True)]
            rows += [row(f"{k + 1}. {self._tag_any(n)}", "#0e7490") for k, n in enumerate(f.ready)]
            if not f.ready:
                rows.append(row("(empty)", "#64748b"))
        rows.append(row("dependencies (gradients still awaited)", bold=True))
        deps = [(self._tag_any(n), c) for n, c in f.dependencies.items()]
        rows += [row(f"{name}: {c}", "#475569" if c else "#15803d") for name, c in deps]
        swatches = "".join(
            f'<TD BGCOLOR="{fill}" COLOR="{border}" BORDER="2" FIXEDSIZE="TRUE" WIDTH="14" '
            f'HEIGHT="12"></TD><TD ALIGN="LEFT"><FONT POINT-SIZE="10">{_esc(text)} </FONT></TD>'
            for text, (fill, border) in (
                ("running", RUNNING),
                ("ready", READY),
                ("done", DONE),
                ("waiting", WAITING),
            )
        )
        rows.append(
            f'<TR><TD ALIGN="LEFT"><TABLE BORDER="0" CELLSPACING="2"><TR>{swatches}</TR>'
            "</TABLE></TD></TR>"
        )
        return (
            '<<TABLE BORDER="1" COLOR="#94a3b8" CELLBORDER="0" CELLSPACING="2" '
            'CELLPADDING="2" BGCOLOR="#f8fafc">' + "".join(rows) + "</TABLE>>"
        )

    def _lanes_table(self, f) -> str:
        """One column per ready queue (lane): the steps each ran so far, then its queue."""

        def cell(text="", color="#0f172a", bold=False, fill=None):
            if not text:
                return "<TD></TD>"
            t = f"<B>{_esc(text)}</B>" if bold else _esc(text)
            bg = f' BGCOLOR="{fill}"' if fill else ""
            return f'<TD ALIGN="LEFT"{bg}><FONT POINT-SIZE="10" COLOR="{color}">{t}</FONT></TD>'

        upto = self.frames.index(f)
        head = "".join(cell(lane, bold=True) for lane in self.lanes)
        who = "".join(
            cell(f"thread {self.threads.get(lane, '-')}", "#64748b") for lane in self.lanes
        )
        steps = []
        for k, fr in enumerate(self.frames[1 : upto + 1], start=1):
            if fr.kind != "run":
                continue
            now = fr is f
            steps.append(
                "<TR>"
                + "".join(
                    cell(
                        f"{k}. {self._tag_any(fr.node)}" if lane == fr.queue else "",
                        RUNNING[1] if now else "#15803d",
                        bold=now,
                        fill=RUNNING[0] if now and lane == fr.queue else None,
                    )
                    for lane in self.lanes
                )
                + "</TR>"
            )
        shown = steps[-12:]
        if len(steps) > len(shown):
            shown.insert(0, "<TR>" + cell(f"({len(steps) - len(shown)} earlier steps)") + "</TR>")
        ready = "".join(
            cell(
                "ready: "
                + (", ".join(self._tag_any(n) for n in f.lanes.get(lane, [])) or "(empty)"),
                READY[1],
            )
            for lane in self.lanes
        )
        return (
            '<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3" COLOR="#cbd5e1">'
            f"<TR>{head}</TR><TR>{who}</TR>{''.join(shown)}<TR>{ready}</TR></TABLE>"
        )

    def _tag_any(self, node) -> str:
        return "GraphRoot" if node is getattr(self, "_root", None) else self._tag(node)

    def _decorate_symbolic(self, rec, f):
        if isinstance(rec, EdgeRecord) or rec.kind == "elision":
            if isinstance(rec, EdgeRecord) and f.node is not None:
                dst = self._ref(rec.dst)
                if dst is f.node:
                    return {"attrs": {"penwidth": "2.5", "color": RUNNING[1]}}
            return {}
        if rec.kind == "op":
            if rec.ref is f.node:
                return {"attrs": {"penwidth": "2.5", "color": RUNNING[1]}}
            return {}
        node = rec.ref
        if node is f.node:
            return {
                "rows": [("computing", format_array(f.values[node], 4), "#7c2d12")],
                "attrs": self._status_attrs(RUNNING, True),
            }
        if node in f.values:
            base = COLORS["gradient" if node.is_gradient else "tensor"]
            return {
                "rows": [("value", format_array(f.values[node], 4), "#0f172a")],
                "attrs": {"fillcolor": base[0]},
            }
        return {"attrs": {"fillcolor": WAITING[0], "color": WAITING[1]}}

    # -- output -------------------------------------------------------------------------
    def render_png(self, i: int) -> bytes:
        """PNG bytes of frame ``i`` (needs Graphviz's ``dot``)."""
        check_dot()
        return self.draw(i).pipe(format="png")

    def save_frames(self, directory, format: str = "png") -> list[str]:  # noqa: A002
        """Write every frame as ``step_000.<format>`` ... into ``directory``; returns paths."""
        check_dot()
        os.makedirs(directory, exist_ok=True)
        paths = []
        for i in range(len(self.frames)):
            path = os.path.join(os.fspath(directory), f"step_{i:03d}.{format}")
            with open(path, "wb") as fh:
                fh.write(self.draw(i).pipe(format=format))
            paths.append(path)
        return paths

    def save_gif(self, path, duration: int = 1600, last_duration: int | None = 4000) -> str:
        """Write an animated GIF (``duration`` ms per frame, ``last_duration`` for the last).

        Every frame is rendered with ``dot`` and padded to the largest frame's size, so the
        picture does not jump. Needs Pillow.
        """
        try:
            from PIL import Image  # noqa: PLC0415
        except ImportError:
            raise ImportError('save_gif needs Pillow: pip install "tinygrad_edu[viz]"') from None
        images = [
            Image.open(io.BytesIO(self.render_png(i))).convert("RGB")
            for i in range(len(self.frames))
        ]
        width = max(im.width for im in images)
        height = max(im.height for im in images)
        padded = []
        for im in images:
            canvas = Image.new("RGB", (width, height), "white")
            canvas.paste(im, ((width - im.width) // 2, 0))
            padded.append(canvas.convert("P", palette=Image.Palette.ADAPTIVE, colors=64))
        durations = [duration] * len(padded)
        if last_duration is not None:
            durations[-1] = last_duration
        path = os.fspath(path)
        padded[0].save(
            path, save_all=True, append_images=padded[1:], duration=durations, loop=0, optimize=True
        )
        return path

    def widget(self):
        """A Jupyter widget: a slider over the frames, the picture and its caption."""
        try:
            import ipywidgets as w  # noqa: PLC0415
        except ImportError:
            raise ImportError(
                "stepper.widget() needs ipywidgets: pip install ipywidgets "
                '(or pip install "tinygrad_edu[notebooks]")'
            ) from None
        slider = w.IntSlider(
            value=0, min=0, max=len(self.frames) - 1, description="step", continuous_update=False
        )
        image = w.Image(value=self.render_png(0), format="png")
        text = w.HTML(f"<p>{_esc(self.caption(0))}</p>")

        def show(change):
            image.value = self.render_png(change["new"])
            text.value = f"<p>{_esc(self.caption(change['new']))}</p>"

        slider.observe(show, names="value")
        return w.VBox([slider, text, image])


def _shape(a) -> str:
    return "×".join(str(d) for d in np.shape(a)) or "scalar"


def _eager_tags(data) -> dict:
    """node/leaf -> its name: the renderer's (``AccumulateGrad (A)``, ``AddBackward0 #2``; see
    NOTE [One name per node] in traverse.py); leaves by their own label."""
    tags = node_names(data)
    tags.update({r.ref: r.label for r in data.nodes if r.kind == "leaf"})
    return tags
