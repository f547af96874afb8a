"""The backward engine: dependency counting and a ready queue (PyTorch's design).

1. Walk the graph from the roots and count, for each node, the edges that lead into it.
2. Put the root on a ready queue. Pop the ready node with the highest ``sequence_nr`` (the one
   created last; ``AccumulateGrad`` nodes have the largest number of all, as in PyTorch, and
   ties go in the order they became ready), run it, and add each gradient it returns into the
   *input buffer* of the next node; gradients of a value used several times are summed there,
   so each node runs once.
3. A node whose count of pending edges reaches zero is ready. ``AccumulateGrad`` nodes add into
   the leaves' ``.grad``.

The whole state of one call lives in a :class:`GraphTask`, made per call and dropped after it.
An optional observer (see :func:`observe`) is told each step; the renderer's stepper draws them.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools

from ..backend import namespace_of
from .grad_mode import _state as _modes
from .grad_mode import is_anomaly_enabled
from .node import GraphRoot
from .tensor import Tensor, _edge

__all__ = ["GraphTask", "Observer", "observe", "execute"]

_observer = None


class Observer:
    """Receives the engine's steps. Override what you need; ``task`` is the live GraphTask."""

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
    """The state of one backward call: dependency counts, input buffers, the ready queue.

    Attributes:
        dependencies: node -> number of edges into it not yet delivered.
        buffers: node -> gradients received so far, one slot per forward output.
        ready: the ready queue, a heap of ``(-sequence_nr, k, node)``: the highest sequence
            number first, and among equal numbers the ``k``-th node made ready first.
        pushes: counts the nodes made ready (the ``k`` of the heap entries).
        captures: node -> [(output_nr, slot)] for gradients returned instead of accumulated.
        exec_nodes: the nodes that must run (None: all), when only some inputs are wanted.
    """

    def __init__(self, root, retain_graph, create_graph, capture_edges=None):
        self.root, self.retain_graph, self.create_graph = root, retain_graph, create_graph
        self.buffers, self.ready, self.captures = {}, [], {}
        self.pushes = itertools.count()
        self.captured = [None] * len(capture_edges or ())
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

    def _runs(self, node) -> bool:
        return self.exec_nodes is None or node in self.exec_nodes


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
    """Run a GraphTask to the end; returns the captured gradients."""
    obs = _observer
    if obs is not None:
        obs.begin(task)
    ready, buffers, deps = task.ready, task.buffers, task.dependencies
    task.anomaly = is_anomaly_enabled()
    pushes = task.pushes
    heapq.heappush(ready, (-task.root.sequence_nr, next(pushes), task.root))
    grad_mode, _modes.grad = _modes.grad, task.create_graph  # record only for create_graph
    try:
        while ready:
            node = heapq.heappop(ready)[-1]
            grads = buffers.pop(node, None) or [None] * node.num_outputs
            outs = _run_node(task, node, grads, obs)
            # BEGIN SOLUTION A2.2
            for (nxt, nr), g in zip(node.next_functions, outs):
                if nxt is None or nxt not in deps:
                    continue
                buf = buffers.get(nxt)
                if buf is None:
                    buf = buffers[nxt] = [None] * nxt.num_outputs
                summed = g is not None and buf[nr] is not None
                if g is not None:
                    buf[nr] = buf[nr] + g if summed else g  # fan-in: sum before the node runs
                if obs is not None:
                    obs.gradient_arrived(task, nxt, nr, g, summed)
                left = deps[nxt] = deps[nxt] - 1
                if left == 0:
                    heapq.heappush(ready, (-nxt.sequence_nr, next(pushes), nxt))
                    if obs is not None:
                        obs.node_ready(task, nxt)
            # END SOLUTION
    finally:
        _modes.grad = grad_mode
    if obs is not None:
        obs.end(task)
    return task.captured


def _run_node(task, node, grads, obs):
    """Hooks, captures and the node itself; returns one gradient per next edge."""
    if node._tensor_hooks or node._pre_hooks or node._retained or task.captures:
        grads = _before_node(task, node, grads)
    if task.exec_nodes is not None and node not in task.exec_nodes:
        return ()
    if grads[0] is None and node is not task.root and all(g is None for g in grads):
        return (None,) * len(node.next_functions)  # no gradient reached this node
    if obs is not None:
        obs.node_started(task, node, grads)
    try:
        outs = node.apply(grads, task.create_graph)
    except Exception as e:
        if node._trace:
            note = f"\n\nThe forward call that created {node.name()}:\n{node._trace}"
            raise type(e)(f"{e}{note}") from e
        raise
    if not task.retain_graph:
        node.release()
    if node._post_hooks:
        wrap = _maybe(_wrapper(task.create_graph))
        for fn in tuple(node._post_hooks):
            r = fn(tuple(map(wrap, outs)), tuple(map(wrap, grads)))
            if r is not None:
                _check_hook(node, "post-hook", outs, r)
                outs = [None if x is None else _unwrap(x, task.create_graph) for x in r]
    if task.anomaly:
        _check_nan(node, outs)
    if obs is not None:
        obs.node_finished(task, node, outs)
    return outs


def _before_node(task, node, grads):
    """Tensor hooks, pre-hooks, captured and retained gradients, in that order."""
    wrap = _wrapper(task.create_graph)
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
        r = fn(tuple(map(_maybe(wrap), grads)))
        if r is not None:
            _check_hook(node, "pre-hook", grads, r)
            grads = [None if x is None else _unwrap(x, task.create_graph) for x in r]
    for nr, slot in task.captures.get(node, ()):
        task.captured[slot] = grads[nr]
    for nr, ref in (node._retained or {}).items():
        t = ref()
        if t is not None and grads[nr] is not None:
            t._accumulate(grads[nr], task.create_graph)
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


def _wrapper(create_graph):
    """How hooks see a gradient: as a tensor (raw arrays are wrapped, without a copy)."""
    return _identity if create_graph else Tensor._make


def _identity(g):
    return g


def _maybe(fn):
    return lambda g: None if g is None else fn(g)


def _unwrap(value, create_graph):
    if create_graph:
        return value if isinstance(value, Tensor) else Tensor(value)
    return value.data if isinstance(value, Tensor) else value


def _check_nan(node, outs):
    for i, g in enumerate(outs):
        data = g.data if isinstance(g, Tensor) else g
        if data is not None and bool(namespace_of(data).any(namespace_of(data).isnan(data))):
            trace = (
                node._trace and f"\n\nThe forward call that created {node.name()}:\n{node._trace}"
            )
            raise RuntimeError(
                f"{node.name()} returned nan values in its gradient {i}.{trace or ''}"
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
            seed = namespace_of(t.data).ones_like(t.data)  # same shape, dtype and device
            edges.append(_edge(t))
            seeds.append(Tensor._make(seed, device=t._device) if create_graph else seed)
            continue
        g = g if isinstance(g, Tensor) else Tensor(g, dtype=t.dtype, device=t.device)
        if g.shape != t.shape:
            raise RuntimeError(
                f"backward: gradient has shape {g.shape} but the output has shape {t.shape}; "
                "the gradient must match the output's shape"
            )
        if g.dtype != t.dtype:
            g = g.astype(t.dtype)
        edges.append(_edge(t))
        seeds.append(g if create_graph else g.data)
    return GraphRoot(edges, seeds)
