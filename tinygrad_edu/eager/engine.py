"""The backward engine: PyTorch's design, one ready queue and one worker thread per device.

1. Walk the graph from the roots and count, for each node, the edges that lead into it.
2. Run the root. Each gradient a node returns is added into the *input buffer* of the next
   node (gradients of a value used several times are summed there, so each node runs once).
3. A node whose count of pending edges reaches zero is ready: it goes, with its buffer, onto
   the ready queue of the device its gradients live on. Each queue runs its ready node with
   the highest ``sequence_nr`` first (the one created last; ``AccumulateGrad`` before all, see
   NOTE [AccumulateGrad runs first] in ``node.py``; equal numbers in the order made ready).

NOTE [One ready queue per device] (``docs/concepts/engine.md``, section 8)
    The thread that calls ``backward()`` works the CPU queue. Every other device (a CUDA GPU,
    a simulated ``sim:N``) has one worker thread and one queue, started the first time a
    backward needs it and kept for every later one, so that a GPU's nodes run while the caller
    runs CPU nodes. A :class:`GraphTask` holds one call's shared state behind its lock; it is
    done when ``outstanding_tasks`` (tasks queued or running) drops to zero. An exception in
    any thread is kept (the first one) and raised in the caller once the task has drained.

NOTE [Everything on the CPU]
    A graph whose nodes are all on the CPU needs no second thread, so no locks and no tasks:
    the caller pops ``(-sequence_nr, k, node, inputs)`` from a plain heap. That is the whole
    engine of lesson 3, and the eager hot path.

NOTE [Reentrant backward]
    ``backward()`` called inside a node (a custom Function's backward, a hook) starts a nested
    GraphTask on the same thread, which works its own queue until the nested task is done
    (running other tasks' nodes too, nested ones first), so nothing waits for itself.

An optional observer (see :func:`observe`) is told each step; the renderer's stepper draws them.
"""

from __future__ import annotations

import contextlib
import functools
import heapq
import itertools
import os
import threading
from collections.abc import Sequence

from ..backend import get_namespace, namespace_of
from ..ops.base import quiet
from . import collector, core
from .core import edge as _edge
from .grad_mode import _state as _modes
from .grad_mode import is_anomaly_enabled
from .node import CPU, DEVICES, GraphRoot, accumulate_into

__all__ = [
    "GraphTask", "FunctionTask", "ReadyQueue", "Observer", "observe", "execute",
    "worker_threads", "current_queue_device", "backward", "make_root",
]  # fmt: skip

_observer = None
_local = threading.local()  # .queue: the ReadyQueue this thread works; .depth: nesting
_workers: dict = {}  # device -> ReadyQueue, worked by that device's thread
_workers_lock = threading.Lock()


class Observer:
    """Receives the engine's steps. Override what you need; ``task`` is the live GraphTask.

    Methods are called on the thread that runs the node (``threading.current_thread()``;
    :func:`current_queue_device` names its queue), so an observer must be thread-safe.
    """

    def begin(self, task): ...
    def node_ready(self, task, node): ...
    def node_started(self, task, node, grads): ...
    def gradient_arrived(self, task, node, input_nr, grad, summed): ...
    def node_finished(self, task, node, grads): ...
    def end(self, task): ...


@contextlib.contextmanager
def observe(observer: Observer):
    """Report every backward run inside the block to ``observer``."""
    global _observer
    previous, _observer = _observer, observer
    try:
        yield observer
    finally:
        _observer = previous


class GraphTask:
    """The state of one backward call, shared by every thread that works on it.

    Attributes:
        dependencies: node -> number of edges into it not yet delivered.
        not_ready: node -> its input buffer (one slot per forward output) until it is ready;
            ``buffers`` is the same dict.
        outstanding_tasks: FunctionTasks queued or running (device mode); done at zero.
        not_done: a condition on ``lock``, notified when ``outstanding_tasks`` reaches zero.
        exception: the first exception a node raised, re-raised in the caller.
        devices: the devices other than the CPU that some node lives on.
        captures: node -> [(output_nr, slot)] for gradients returned instead of accumulated.
        exec_nodes: the nodes that must run (None: all), when only some inputs are wanted.
    """

    def __init__(self, root, retain_graph, create_graph, capture_edges=None):
        self.root, self.retain_graph, self.create_graph = root, retain_graph, create_graph
        self.not_ready = self.buffers = {}
        self.captures, self.captured = {}, [None] * len(capture_edges or ())
        self.exec_nodes = None
        self.dependencies, parents = _count_dependencies(root, capture_edges is not None)
        if capture_edges is not None:
            for slot, (node, nr) in enumerate(capture_edges):
                self.captures.setdefault(node, []).append((nr, slot))
            self.exec_nodes = _ancestors(self.captures, parents)
            self.dependencies = {}
            for node in self.exec_nodes:
                for nxt, _ in node.next_functions:
                    if nxt is not None:
                        self.dependencies[nxt] = self.dependencies.get(nxt, 0) + 1
        self.devices = _devices(self.dependencies) if DEVICES.used else ()
        self.lock = threading.Lock() if self.devices else None  # guards the above
        self.not_done = threading.Condition(self.lock) if self.devices else None
        self.outstanding_tasks, self.exception = 0, None
        self.heap, self.cpu_queue, self.depth, self.observer = [], None, 0, None
        self.pushes = itertools.count()  # k: equal sequence_nr (AccumulateGrads) run in order

    def _runs(self, node) -> bool:
        return self.exec_nodes is None or node in self.exec_nodes

    def queued(self) -> list:
        """``(queue device, k, node, inputs)`` for each of this task's ready nodes, each
        queue's next first (``k`` counts the nodes made ready: see ``pushes``)."""
        if not self.devices:
            return [("cpu", k, n, inputs) for _, k, n, inputs in sorted(self.heap)]
        queues = [self.cpu_queue, *(_workers.get(d) for d in sorted(self.devices, key=str))]
        return [
            (str(q.device), ft.k, ft.node, ft.inputs)
            for q in queues
            if q is not None
            for ft in q.snapshot()
            if ft.task is self
        ]

    @property
    def ready(self) -> list:
        """This task's ready nodes as ``(-sequence_nr, k, node)``, over every queue."""
        return [(-node.sequence_nr, k, node) for _, k, node, _ in self.queued()]

    def wait(self, timeout=None) -> bool:
        """Block until no task is outstanding (True), or ``timeout`` seconds passed (False)."""
        with self.not_done:
            return self.not_done.wait_for(lambda: self.outstanding_tasks == 0, timeout)

    def _finish_one(self, queue, made_ready=0) -> None:
        """A FunctionTask of this task is done (having queued ``made_ready`` new ones); wake
        the caller when it was the last."""
        with self.lock:
            self.outstanding_tasks += made_ready - 1
            done = self.outstanding_tasks == 0
            if done:
                self.not_done.notify_all()
        if done and queue is not self.cpu_queue:  # the caller may sleep in pop(): wake it
            self.cpu_queue.push(FunctionTask(None, None, None, 0))

    def _fail(self, error, node, grads=None) -> None:
        with self.lock:
            if self.exception is None:  # the first one wins; the rest of the task is skipped
                self.exception = _node_error(error, node, grads) if node is not None else error


class FunctionTask:
    """A ready node with its input buffer, waiting in a :class:`ReadyQueue` (PyTorch's
    ``NodeTask``). One without a node only wakes the thread that pops it."""

    __slots__ = ("task", "node", "inputs", "k")

    def __init__(self, task, node, inputs, k):
        self.task, self.node, self.inputs, self.k = task, node, inputs, k

    def __lt__(self, other) -> bool:
        """PyTorch's ``CompareNodeTaskTime``: ``a < b`` when ``a`` runs first. Wake-ups
        first, then the more deeply nested backward call, then the higher ``sequence_nr``,
        then (a tie) the one made ready first."""
        if self.node is None or other.node is None:
            return self.node is None and other.node is not None
        if self.task.depth != other.task.depth:
            return self.task.depth > other.task.depth
        a, b = self.node.sequence_nr, other.node.sequence_nr
        return a > b if a != b else self.k < other.k


class ReadyQueue:
    """A heap of FunctionTasks: any thread pushes, one thread pops (waiting while empty)."""

    def __init__(self, device):
        self.device, self.heap, self.thread = device, [], None
        self.not_empty = threading.Condition(threading.Lock())

    def push(self, ftask: FunctionTask) -> None:
        with self.not_empty:
            heapq.heappush(self.heap, ftask)
            self.not_empty.notify()

    def pop(self) -> FunctionTask:
        with self.not_empty:
            while not self.heap:
                self.not_empty.wait()
            return heapq.heappop(self.heap)

    def snapshot(self) -> list:
        """The queued tasks, next first (for observers)."""
        with self.not_empty:
            return sorted(self.heap)


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


def _devices(nodes) -> tuple:
    """The devices other than the CPU that some of ``nodes`` live on."""
    found = {}
    for node in nodes:
        if node.device is not CPU:
            found[node.device] = True
    return tuple(found)


def _ancestors(targets, parents):
    """Nodes on a path from the root to any target (their gradients are needed)."""
    seen, stack = set(), list(targets)
    while stack:
        for p in parents.get(stack.pop(), ()):
            if p not in seen:
                seen.add(p)
                stack.append(p)
    return seen


def execute(task: GraphTask):
    """Run a GraphTask to the end on the calling thread; returns the captured gradients."""
    task.observer = obs = _observer
    task.anomaly = is_anomaly_enabled() and _modes.check_nan  # NaN checks, at the call
    task.depth = depth = getattr(_local, "depth", 0)
    if obs is not None:
        obs.begin(task)
    grad_mode, _modes.grad = _modes.grad, task.create_graph  # record only for create_graph
    _local.depth = depth + 1
    try:
        with quiet():  # derivative rules divide by saved values (log at 0): silent, as in PyTorch
            if task.devices:
                _run_on_devices(task)
            else:
                _run_on_caller(task)
    finally:
        _local.depth = depth
        _modes.grad = grad_mode
        collector.thaw()  # see NOTE [Long graphs and the cycle collector]
    if obs is not None:
        obs.end(task)
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
            error = _node_error(e, node, grads)
            if error is e:
                raise
            raise error from e


def _run_on_devices(task):
    """See NOTE [One ready queue per device]: this thread works its CPU queue until done."""
    task.cpu_queue = queue = _local_queue()
    task.outstanding_tasks = 1
    queue.push(FunctionTask(task, task.root, [None], next(task.pushes)))  # GraphRoot: on the CPU
    try:
        _work(queue, task)
    except BaseException as e:  # e.g. KeyboardInterrupt while waiting: skip what is left
        task._fail(e, None)
        raise
    if task.exception is not None:
        raise task.exception


def _work(queue, task=None):
    """PyTorch's ``thread_main``: run tasks from ``queue`` until ``task`` is done (the caller,
    a reentrant call), or forever (a device worker, ``task=None``)."""
    while task is None or task.outstanding_tasks:
        ft = queue.pop()
        if ft.node is None:
            continue  # a wake-up
        owner, ready = ft.task, []
        if owner.exception is None:
            grad_mode, _modes.grad = _modes.grad, owner.create_graph
            try:
                _evaluate(owner, ft.node, ft.inputs, ready.append)
            except BaseException as e:
                owner._fail(e, ft.node, ft.inputs)
            finally:
                _modes.grad = grad_mode
        for _, k, nxt, inputs in ready:
            # PyTorch picks the queue by the device of the gradients in the buffer; ours may
            # be numpy arrays on a simulated device, so we read it off the node (the same)
            device = nxt.device
            target = owner.cpu_queue if device.type == "cpu" else _device_queue(device)
            target.push(FunctionTask(owner, nxt, inputs, k))
        owner._finish_one(queue, len(ready))


def _evaluate(task, node, grads, push):
    """Run one node (hooks, the node, post-hooks); deliver its gradients, under the task's
    lock, and ``push((-sequence_nr, k, node, inputs))`` each node that became ready (``k``
    counts them: nodes of equal number, AccumulateGrads, run first in, first out)."""
    obs = task.observer
    if node._hooked or task.captures:  # one test for the rare cases (see Node._hooked)
        grads = _before_node(task, node, grads)
    if task.exec_nodes is not None and node not in task.exec_nodes:
        outs = ()  # its gradient is not needed
    elif grads[0] is None and node is not task.root and all(g is None for g in grads):
        outs = (None,) * len(node.next_functions)  # no gradient reached this node
    else:
        if obs is not None:
            obs.node_started(task, node, grads)
        outs = node.apply(grads, task.create_graph)
        if not task.retain_graph:
            node.release()
        if node._hooked and node._post_hooks:
            outs = _after_node(task, node, grads, outs)
        if task.anomaly:
            _check_nan(node, outs)
    deps, buffers = task.dependencies, task.not_ready  # (pairs: a 4-way assignment
    lock, pushes = task.lock, task.pushes  # builds a tuple)
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
                buf = buffers[nxt] = [None] * nxt.num_outputs
            summed = g is not None and buf[nr] is not None
            if g is not None:
                buf[nr] = buf[nr] + g if summed else g  # fan-in: sum before the node runs
            if obs is not None:
                obs.gradient_arrived(task, nxt, nr, g, summed)
            left = deps[nxt] = left - 1
            if left == 0:
                push((-nxt.sequence_nr, next(pushes), nxt, buffers.pop(nxt)))
                if obs is not None:
                    obs.node_ready(task, nxt)
        # END SOLUTION
    finally:
        if lock is not None:
            lock.release()
    if obs is not None:
        obs.node_finished(task, node, outs)


def _local_queue():
    """The queue this thread works: a device worker's own, or a caller's CPU queue."""
    queue = getattr(_local, "queue", None)
    if queue is None:
        queue = _local.queue = ReadyQueue(CPU)
    return queue


def _device_queue(device):
    """The device's queue; its worker thread starts on first use and serves every later call."""
    queue = _workers.get(device)
    if queue is None:
        with _workers_lock:
            queue = _workers.get(device)
            if queue is None:
                queue = ReadyQueue(device)
                queue.thread = threading.Thread(
                    target=_worker_main, args=(queue,), name=f"autograd {device}", daemon=True
                )
                queue.thread.start()
                _workers[device] = queue
    return queue


def _forget_workers_after_fork() -> None:
    """A forked child has none of its parent's threads: start its own workers when needed
    (PyTorch instead refuses backward in such a child)."""
    global _workers_lock
    _workers.clear()
    _workers_lock = threading.Lock()
    _local.__dict__.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers_after_fork)


def _worker_main(queue):
    _local.queue = queue  # reentrant backward calls in this thread work this queue
    with contextlib.suppress(Exception):
        get_namespace(queue.device)  # makes a CUDA device current in this thread
    with quiet():
        _work(queue)


def worker_threads() -> dict:
    """The device worker threads started so far: device name -> ``threading.Thread``."""
    return {str(d): q.thread for d, q in list(_workers.items())}


def current_queue_device() -> str:
    """The device whose queue the current thread works (``"cpu"`` for a caller)."""
    queue = getattr(_local, "queue", None)
    return "cpu" if queue is None else str(queue.device)


def _node_error(e, node, grads=None):
    """``e`` with a message that names the node, the thread (and, in anomaly mode, the
    forward call that created the node); the original is its ``__cause__``. A gradient whose
    shape is not the node's output's is named instead of the array library's error."""
    mismatch = _gradient_mismatch(node, grads)
    if mismatch is not None:
        e = RuntimeError(mismatch)
    notes = []
    if node.name() not in str(e):
        thread = threading.current_thread().name
        notes.append(f"(raised in {node.name()} during backward, thread {thread!r})")
    if node._trace:
        notes.append(f"The forward call that created {node.name()}:\n{node._trace}")
    if not notes:
        return e
    message = "\n\n".join([str(e), *notes])
    try:
        error = type(e)(message)
    except Exception:
        error = RuntimeError(f"{type(e).__name__}: {message}")
    error.__cause__ = e
    return error


def _gradient_mismatch(node, grads):
    """The error message when ``node``'s incoming gradient has another shape than the output
    its op made (a tensor whose ``.data`` was set to another shape after the op ran), else
    None. Only called on the error path: the shape rule runs again from the recorded shapes."""
    g = grads[0] if grads else None
    op, shapes = getattr(node, "op", None), getattr(node, "shapes", None)
    if g is None or op is None or not shapes or not hasattr(g, "shape"):
        return None
    try:
        expected = tuple(op.shape(*shapes, **(node.attrs or {})))
    except Exception:
        return None
    if tuple(g.shape) == expected:
        return None
    return (
        f"{node.name()} got a gradient of shape {tuple(g.shape)} for its output of shape "
        f"{expected}: the tensor it made was given another shape after the op ran (x.data = t "
        "with another shape?), so the graph recorded before no longer fits. Set .data before "
        "the ops that use it, or rebuild the graph"
    )


def _after_node(task, node, grads, outs):
    """Post-hooks: ``fn(grad_inputs, grad_outputs)`` may replace the gradients sent on."""
    devices = [CPU if n is None else n.device for n, _ in node.next_functions]
    for fn in tuple(node._post_hooks):
        r = fn(_wrap_all(outs, devices, task), _wrap_all(grads, node.device, task))
        if r is not None:
            _check_hook(node, "post-hook", outs, r)
            outs = [None if x is None else _unwrap(x, task.create_graph) for x in r]
    return outs


def _before_node(task, node, grads):
    """Tensor hooks, pre-hooks, captured and retained gradients, in that order."""
    wrap = _wrapper(task.create_graph, node.device)
    # BEGIN SOLUTION A2.4
    for nr, hooks in (node._tensor_hooks or {}).items():
        for fn in tuple(hooks):
            if grads[nr] is not None:
                r = fn(wrap(grads[nr]))
                if r is not None:
                    _check_hook(node, "tensor hook", (grads[nr],), (r,))
                grads[nr] = grads[nr] if r is None else _unwrap(r, task.create_graph)
    # END SOLUTION
    for fn in tuple(node._pre_hooks or ()):
        r = fn(_wrap_all(grads, node.device, task))
        if r is not None:
            _check_hook(node, "pre-hook", grads, r)
            grads = [None if x is None else _unwrap(x, task.create_graph) for x in r]
    for nr, slot in task.captures.get(node, ()):
        task.captured[slot] = grads[nr]
    for nr, ref in (node._retained or {}).items():
        t = ref()
        if t is not None and grads[nr] is not None:
            accumulate_into(t, grads[nr], task.create_graph)
    return grads


def _check_hook(node, kind, before, after):
    """A hook's replacement gradients: one per gradient it was given, each of that shape."""
    after = tuple(after) if isinstance(after, list | tuple) else (after,)
    if len(after) != len(before):
        raise RuntimeError(
            f"a {kind} of {node.name()} returned {len(after)} gradients for {len(before)}; "
            "return one per gradient (None to leave one out), or None to keep them all"
        )
    for i, (old, new) in enumerate(zip(before, after)):
        if old is not None and new is not None and tuple(new.shape) != tuple(old.shape):
            raise RuntimeError(
                f"a {kind} of {node.name()} returned a gradient of shape {tuple(new.shape)} "
                f"for one of shape {tuple(old.shape)} (position {i}); a hook must keep shapes"
            )


def _wrapper(create_graph, device=CPU):
    """How hooks see a gradient: as a tensor (raw arrays are wrapped, without a copy)."""
    if create_graph:
        return _identity
    return lambda g: core.new_tensor(g, device)


def _wrap_all(grads, devices, task) -> tuple:
    """Hooks see a tuple of tensors (None stays None); ``devices``: one, or one per slot."""
    if not isinstance(devices, list):
        devices = [devices] * len(grads)
    return tuple(
        None if g is None else _wrapper(task.create_graph, d)(g) for g, d in zip(grads, devices)
    )


def _identity(g):
    return g


def _unwrap(value, create_graph):
    if create_graph:
        return value if isinstance(value, core.Tensor) else core.Tensor(value)
    return value._data if isinstance(value, core.Tensor) else value


def _check_nan(node, outs):
    for i, g in enumerate(outs):
        data = g._data if isinstance(g, core.Tensor) else g
        if data is not None and bool(namespace_of(data).any(namespace_of(data).isnan(data))):
            raise RuntimeError(
                f"Function '{node.name()}' returned nan values in its {i}th output."
            )


def make_root(tensors, grad_tensors, create_graph) -> GraphRoot:
    """Check the roots and their seed gradients; the GraphRoot node the engine starts from."""
    edges, seeds = [], []
    for t, g in zip(tensors, grad_tensors):
        if not t.requires_grad:
            raise RuntimeError(
                "backward: this tensor does not require grad and has no grad_fn, so nothing "
                "can be differentiated; set requires_grad=True on the inputs you want "
                "gradients for (and compute it outside no_grad())"
            )
        if g is None:
            if t.numel() != 1:
                raise RuntimeError(
                    f"backward: a gradient can be created implicitly only for scalar (one-element) "
                    f"outputs, and this output has shape {t.shape}; pass gradient= of that shape, "
                    "or reduce the output first (e.g. y.sum())"
                )
            seed = namespace_of(t._data).ones_like(t._data)  # same shape, dtype and device
            edges.append(_edge(t))
            seeds.append(core.new_tensor(seed, t._device) if create_graph else seed)
            continue
        g = g if isinstance(g, core.Tensor) else core.Tensor(g, dtype=t.dtype, device=t.device)
        if g.shape != t.shape:
            raise RuntimeError(
                f"backward: gradient has shape {g.shape} but the output has shape {t.shape}; "
                "the gradient must match the output's shape"
            )
        if g.device != t.device:
            raise RuntimeError(
                f"backward: gradient is on {g.device} but the output is on {t.device}; "
                f"move it first, e.g. gradient.to('{t.device}')"
            )
        if g.dtype != t.dtype:
            g = g.astype(t.dtype)
        edges.append(_edge(t))
        seeds.append(g if create_graph else g._data)
    return GraphRoot(edges, seeds)


# -- backward(): what Tensor.backward and tg.autograd.backward run -----------------------------
def _as_tuple(x):
    if x is None:
        return None
    return tuple(x) if isinstance(x, Sequence) and not isinstance(x, core.Tensor) else (x,)


def _run(outputs, grad_outputs, retain_graph, create_graph, inputs=None):
    outputs = _as_tuple(outputs)
    grad_outputs = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise ValueError(
            f"grad_outputs has {len(grad_outputs)} entries but there are {len(outputs)} outputs"
        )
    retain_graph = create_graph if retain_graph is None else retain_graph
    root = make_root(outputs, grad_outputs, create_graph)
    edges = None
    if inputs is not None:
        for i, t in enumerate(inputs):
            if not t.requires_grad:
                raise RuntimeError(
                    f"input {i} does not require grad, so no gradient can be computed for it; "
                    "set requires_grad=True on it before computing the outputs"
                )
        edges = [_edge(t) for t in inputs]
    task = GraphTask(root, retain_graph, create_graph, edges)
    captured = execute(task)
    # an input the outputs reach, whose gradient no rule produced (a flat function), gets zeros
    reached = [e[0] in task.dependencies for e in edges or ()]
    return captured, reached


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the leaves (or only of
    ``inputs``, when given). ``retain_graph`` defaults to ``create_graph``."""
    inputs = _as_tuple(inputs)
    captured, _ = _run(tensors, grad_tensors, retain_graph, create_graph, inputs)
    for t, g in zip(inputs or (), captured):
        if g is not None:
            t._accumulate(g, create_graph)
            for fn in tuple(t._post_acc_hooks or ()):  # a leaf's post-accumulate-grad hooks
                fn((), ())
