"""Recording a backward pass into frames: :class:`Frame`, one step; the engine Observer that
makes them from ``loss.backward()``; and the symbolic Executor's run, one frame per node.

Nothing here draws or words a caption (:mod:`.captions`, :mod:`.layout` do).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np  # display only

from ..style import to_numpy
from ..traverse import node_names

__all__ = ["Frame", "Recorder", "array_copy", "lane_key", "eager_tags"]


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


def array_copy(g):
    return None if g is None else np.array(to_numpy(g), copy=True)


class Recorder:
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
        from ...eager.node import _leaf_lock  # noqa: PLC0415

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
        frame.ready = [n for d in sorted(lanes, key=lane_key) for n, _ in lanes[d]]
        with task.lock or _NO_LOCK:  # other threads change these while a task runs
            frame.dependencies = dict(task.dependencies)
            buffers = dict(task.not_ready)
        buffers.update((n, inputs) for entries in lanes.values() for n, inputs in entries if inputs)
        frame.buffers = {n: [array_copy(g) for g in b] for n, b in buffers.items()}
        leaf_grads = {}
        for t in self.leaves:
            with _leaf_lock(t):
                leaf_grads[t] = array_copy(t.grad)
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
        from ...eager.engine_threads import current_queue_device  # noqa: PLC0415

        with self.lock:
            self.pending[threading.get_ident()] = Frame(
                "run",
                node=node,
                received=[array_copy(g) for g in grads],
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
        frame.sent.append((node, pos, array_copy(grad), summed))
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


def lane_key(device: str):
    """Lanes in order: the CPU first, then the devices by name."""
    return (device != "cpu", device)


def eager_tags(data) -> dict:
    """node/leaf -> its name: the renderer's (``AccumulateGrad (A)``, ``AddBackward0 #2``; see
    NOTE [One name per node] in traverse.py); leaves by their own label."""
    tags = node_names(data)
    tags.update({r.ref: r.label for r in data.nodes if r.kind == "leaf"})
    return tags
