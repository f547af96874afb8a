"""The backward engine's core: lesson 5's algorithm, and nothing else.

    def backward(root):
        dependencies = count_dependencies(root)      # how many edges lead into each node
        ready = [(root, [seed])]                      # a heap: the highest sequence_nr first
        buffers = {}                                  # node -> its InputBuffer, until ready
        while ready:
            node, grads = pop(ready)
            outputs = node(grads)                     # its derivative rule: one per edge out
            for (nxt, input_nr), g in zip(node.next_functions, outputs):
                buffers.setdefault(nxt, InputBuffer(nxt)).add(input_nr, g)   # fan-in: summed
                dependencies[nxt] -= 1
                if dependencies[nxt] == 0:            # every gradient for nxt has arrived
                    push(ready, (nxt, buffers.pop(nxt)))

The code below is that loop (``_run_on_caller`` and ``_evaluate``), with what a real
engine must also know: a node whose gradient nobody asked for is skipped (``exec_nodes``),
a node that received no gradient at all passes ``None`` on, saved values are freed unless
``retain_graph``, and equal ``sequence_nr`` (the AccumulateGrads) run in the order they became
ready (``k``: pushes so far). See docs/concepts/engine.md and docs/concepts/autodidax.md.

Around the core, each in its own module and attached through :data:`ATTACHED` (this module
imports none of them; ``eager/__init__.py`` imports them all):

* ``engine_threads.py``: devices, one ready queue and worker thread per device, reentrant
  backward calls (NOTE [One ready queue per device]);
* ``engine_hooks.py``: tensor hooks, pre- and post-hooks, retained and captured gradients;
* ``engine_errors.py``: anomaly mode's NaN check, and errors that name the node and thread;
* ``engine_observer.py``: an observer told every step (the renderer's stepper draws them);
* ``backward.py``: ``backward()`` and ``grad()``: the roots, their seeds, the inputs asked for.

NOTE [One gradient]
    Most nodes get exactly one gradient (a chain of ops). Such a node is ready the moment it
    arrives, so it skips the input buffer: it is pushed with ``[g]``. Making an InputBuffer
    and storing it in ``not_ready`` only to pop it at once cost about 3% of a small op's
    forward and backward (``benchmarks/instructions``). While an observer watches, every
    gradient goes through a buffer, as the algorithm above says (the stepper shows them).

NOTE [Everything on the CPU]
    A graph whose nodes are all on the CPU needs no second thread, so no locks and no tasks:
    the caller pops ``(-sequence_nr, k, node, inputs)`` from a plain heap. That is the whole
    engine of lesson 5, and the eager hot path.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import threading

from ..ops.base import quiet
from . import collector
from .grad_mode import _state as _modes
from .grad_mode import is_anomaly_enabled
from .node import DEVICES

__all__ = ["GraphTask", "InputBuffer", "ATTACHED", "execute"]

_nesting = threading.local()  # .depth: backward calls running on this thread


class ATTACHED:
    """What the core calls but does not define: each module named sets its part on import.

    ``None`` means "not attached" and costs the core one test; a plain CPU backward with no
    hooks, observer or anomaly mode calls none of them.
    """

    observer = None  # engine_observer.observe(): told each step of every backward
    before_node = None  # engine_hooks: (task, node, grads) -> grads, for hooked nodes
    after_node = None  # engine_hooks: (task, node, grads, outs) -> outs, for post-hooks
    check_nan = None  # engine_errors: (node, outs), in anomaly mode with check_nan
    node_error = None  # engine_errors: (error, node, grads) -> the error to raise
    devices_of = None  # engine_threads: the devices other than the CPU some nodes live on
    run_on_devices = None  # engine_threads: run a task whose nodes live on several devices
    queued_on_devices = None  # engine_threads: such a task's ready nodes, over every queue


class InputBuffer(list):
    """The gradients arriving for one node, one slot per forward output, until it is ready
    (PyTorch's ``InputBuffer``; Paddle's ``GradTensorHolder``). A value used twice gets two
    gradients: they are summed here, so the node runs once, on the total."""

    __slots__ = ()

    def add(self, input_nr: int, g) -> bool:
        """Add ``g`` into slot ``input_nr``; True when it was summed with an earlier one."""
        if g is None:
            return False
        old = self[input_nr]
        self[input_nr] = g if old is None else old + g
        return old is not None


class GraphTask:
    """The state of one backward call.

    Attributes:
        root: the GraphRoot node, which hands each output its seed gradient.
        dependencies: node -> the number of edges into it whose gradient has not arrived.
        not_ready: node -> its :class:`InputBuffer` until it is ready (``buffers``: the same).
        exec_nodes: the nodes that must run (None: all), when ``grad()`` wants some inputs only.
        captures: node -> [(output_nr, slot)]: gradients ``grad()`` returns instead of
            accumulating; ``captured``: those gradients, by slot.
        heap: the ready queue of a CPU-only task: ``(-sequence_nr, k, node, InputBuffer)``.
        devices: the devices other than the CPU that some node lives on (then
            ``engine_threads`` runs the task, and ``lock`` guards the state above).
    """

    def __init__(self, root, retain_graph, create_graph):
        self.root, self.retain_graph, self.create_graph = root, retain_graph, create_graph
        self.dependencies, _ = _count_dependencies(root, False)
        self.not_ready = self.buffers = {}
        self.exec_nodes, self.captures, self.captured = None, {}, []
        self.heap, self.pushes = [], itertools.count()  # k: pushes so far (ties in order)
        self.devices = ATTACHED.devices_of(self.dependencies) if DEVICES.used else ()
        self.lock, self.observer = None, ATTACHED.observer
        self.anomaly = is_anomaly_enabled() and _modes.check_nan  # NaN checks, at the call
        self.depth = getattr(_nesting, "depth", 0)  # backward calls this one runs inside

    def queued(self) -> list:
        """``(queue device, k, node, inputs)`` for each ready node, each queue's next first
        (``k`` counts the nodes made ready: see ``pushes``)."""
        if self.devices:
            return ATTACHED.queued_on_devices(self)
        return [("cpu", k, n, inputs) for _, k, n, inputs in sorted(self.heap)]

    @property
    def ready(self) -> list:
        """The ready nodes as ``(-sequence_nr, k, node)``, over every queue."""
        return [(-node.sequence_nr, k, node) for _, k, node, _ in self.queued()]


def _count_dependencies(root, want_parents: bool):
    """Walk every node reachable from ``root`` (iteratively) and count the edges into each.
    With ``want_parents``, also map each node to the nodes with an edge into it."""
    deps, parents = {}, {root: []} if want_parents else None
    # BEGIN SOLUTION A2.1
    stack = [root]
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            n = deps.get(nxt)
            if n is None:
                deps[nxt] = 1
                stack.append(nxt)
                if want_parents:
                    parents[nxt] = [node]
            else:
                deps[nxt] = n + 1
                if want_parents:
                    parents[nxt].append(node)
    # END SOLUTION
    return deps, parents


def execute(task: GraphTask):
    """Run a GraphTask to the end on the calling thread; returns the captured gradients."""
    if task.observer is not None:
        task.observer.begin(task)
    grad_mode, _modes.grad = _modes.grad, task.create_graph  # record only for create_graph
    _nesting.depth = task.depth + 1  # see NOTE [Reentrant backward] in engine_threads.py
    try:
        with quiet():  # derivative rules divide by saved values (log at 0): silent, as in PyTorch
            (ATTACHED.run_on_devices if task.devices else _run_on_caller)(task)
    finally:
        _nesting.depth, _modes.grad = task.depth, grad_mode
        collector.thaw()  # see NOTE [Long graphs and the cycle collector]
    if task.observer is not None:
        task.observer.end(task)
    return task.captured


def _run_on_caller(task):
    """See NOTE [Everything on the CPU]: one heap, this thread, nothing to wait for."""
    heap, root = task.heap, task.root
    heappop, push = heapq.heappop, functools.partial(heapq.heappush, heap)
    heap.append((-root.sequence_nr, next(task.pushes), root, [None]))
    while heap:
        _, _, node, grads = heappop(heap)
        try:
            _evaluate(task, node, grads, push)
        except Exception as e:
            error = e if ATTACHED.node_error is None else ATTACHED.node_error(e, node, grads)
            if error is e:
                raise
            raise error from e


def _evaluate(task, node, grads, push):
    """Run one node on the gradients of its outputs, and add each gradient it returns into its
    next node's input buffer; ``push((-sequence_nr, k, node, buffer))`` each node that became
    ready. With several threads, the delivery holds ``task.lock``."""
    obs = task.observer
    if node._hooked or task.captures:  # one test for the rare cases (see Node._hooked)
        grads = ATTACHED.before_node(task, node, grads)
    if task.exec_nodes is not None and node not in task.exec_nodes:
        outs = ()  # its gradient is not needed
    elif grads[0] is None and node is not task.root and all(g is None for g in grads):
        outs = (None,) * len(node.next_functions)  # no gradient reached this node
    else:
        if obs is not None:
            obs.node_started(task, node, grads)
        outs = node.apply(grads, task.create_graph)
        if not task.retain_graph:
            node.release()  # free its saved values
        if node._hooked and node._post_hooks:
            outs = ATTACHED.after_node(task, node, grads, outs)
        if task.anomaly:
            ATTACHED.check_nan(node, outs)
    deps, buffers, lock = task.dependencies, task.not_ready, task.lock
    if lock is not None:  # None when one thread runs the whole task (NOTE [Everything on ...])
        lock.acquire()
    try:
        # BEGIN SOLUTION A2.2
        for (nxt, nr), g in zip(node.next_functions, outs):
            left = deps.get(nxt)  # None: no node, or one this task does not run
            if left is None:
                continue
            buf = buffers.get(nxt)
            if buf is None:
                if left == 1 and nxt.num_outputs == 1 and obs is None:  # NOTE [One gradient]
                    deps[nxt] = 0  # its one and only gradient: ready now, no buffer to wait in
                    push((-nxt.sequence_nr, next(task.pushes), nxt, [g]))
                    continue
                buf = buffers[nxt] = InputBuffer((None,) * nxt.num_outputs)
            summed = buf.add(nr, g)  # fan-in: sum before the node runs
            if obs is not None:
                obs.gradient_arrived(task, nxt, nr, g, summed)
            left = deps[nxt] = left - 1
            if left == 0:
                push((-nxt.sequence_nr, next(task.pushes), nxt, buffers.pop(nxt)))
                if obs is not None:
                    obs.node_ready(task, nxt)
        # END SOLUTION
    finally:
        if lock is not None:
            lock.release()
    if obs is not None:
        obs.node_finished(task, node, outs)
