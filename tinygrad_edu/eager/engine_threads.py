"""Devices and worker threads around the engine's core: one ready queue per device.

NOTE [One ready queue per device] (``docs/concepts/engine.md``, section 8)
    The thread that calls ``backward()`` works the CPU queue. Every other device (a CUDA GPU,
    a simulated ``sim:N``) has one worker thread and one queue, started the first time a
    backward needs it and kept for every later one, so that a GPU's nodes run while the caller
    runs CPU nodes. A :class:`~tinygrad_edu.eager.engine.GraphTask` holds one call's shared
    state behind its ``lock``; it is done when ``outstanding_tasks`` (tasks queued or running)
    drops to zero. An exception in any thread is kept (the first one) and raised in the caller
    once the task has drained. Each queue runs its ready node with the highest ``sequence_nr``
    first (the one created last; ``AccumulateGrad`` before all, see NOTE [AccumulateGrad runs
    first] in ``node.py``; equal numbers in the order made ready).

NOTE [Reentrant backward]
    ``backward()`` called inside a node (a custom Function's backward, a hook) starts a nested
    GraphTask on the same thread, which works its own queue until the nested task is done
    (running other tasks' nodes too, nested ones first), so nothing waits for itself.
"""

from __future__ import annotations

import contextlib
import heapq
import os
import threading

from ..backend import get_namespace
from ..ops.base import quiet
from .engine import ATTACHED, _evaluate
from .grad_mode import _state as _modes
from .node import CPU

__all__ = ["FunctionTask", "ReadyQueue", "worker_threads", "current_queue_device", "wait"]

_local = threading.local()  # .queue: the ReadyQueue this thread works
_workers: dict = {}  # device -> ReadyQueue, worked by that device's thread
_workers_lock = threading.Lock()


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


def _devices(nodes) -> tuple:
    """The devices other than the CPU that some of ``nodes`` live on."""
    found = {}
    for node in nodes:
        if node.device is not CPU:
            found[node.device] = True
    return tuple(found)


def _run_on_devices(task):
    """See NOTE [One ready queue per device]: this thread works its CPU queue until done."""
    task.lock = threading.Lock()  # guards the task's shared state
    task.not_done = threading.Condition(task.lock)  # notified when outstanding_tasks hits 0
    task.cpu_queue = queue = _local_queue()
    task.outstanding_tasks, task.exception = 1, None
    queue.push(FunctionTask(task, task.root, [None], next(task.pushes)))  # GraphRoot: on the CPU
    try:
        _work(queue, task)
    except BaseException as e:  # e.g. KeyboardInterrupt while waiting: skip what is left
        _fail(task, e, None)
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
                _fail(owner, e, ft.node, ft.inputs)
            finally:
                _modes.grad = grad_mode
        for _, k, nxt, inputs in ready:
            # PyTorch picks the queue by the device of the gradients in the buffer; ours may
            # be numpy arrays on a simulated device, so we read it off the node (the same)
            device = nxt.device
            target = owner.cpu_queue if device.type == "cpu" else _device_queue(device)
            target.push(FunctionTask(owner, nxt, inputs, k))
        _finish_one(owner, queue, len(ready))


def _finish_one(task, queue, made_ready=0) -> None:
    """A FunctionTask of ``task`` is done (having queued ``made_ready`` new ones); wake the
    caller when it was the last."""
    with task.lock:
        task.outstanding_tasks += made_ready - 1
        done = task.outstanding_tasks == 0
        if done:
            task.not_done.notify_all()
    if done and queue is not task.cpu_queue:  # the caller may sleep in pop(): wake it
        task.cpu_queue.push(FunctionTask(None, None, None, 0))


def _fail(task, error, node, grads=None) -> None:
    with task.lock:
        if task.exception is None:  # the first one wins; the rest of the task is skipped
            explain = ATTACHED.node_error
            if node is not None and explain is not None:
                error = explain(error, node, grads)
            task.exception = error


def wait(task, timeout=None) -> bool:
    """Block until none of ``task``'s FunctionTasks is outstanding (True), or ``timeout``
    seconds passed (False)."""
    with task.not_done:
        return task.not_done.wait_for(lambda: task.outstanding_tasks == 0, timeout)


def _queued_on_devices(task) -> list:
    """``(queue device, k, node, inputs)`` for each of ``task``'s ready nodes, over every
    queue, each queue's next first."""
    cpu = getattr(task, "cpu_queue", None)  # None until the task starts running
    queues = [cpu, *(_workers.get(d) for d in sorted(task.devices, key=str))]
    return [
        (str(q.device), ft.k, ft.node, ft.inputs)
        for q in queues
        if q is not None
        for ft in q.snapshot()
        if ft.task is task
    ]


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


ATTACHED.devices_of = _devices
ATTACHED.run_on_devices = _run_on_devices
ATTACHED.queued_on_devices = _queued_on_devices
