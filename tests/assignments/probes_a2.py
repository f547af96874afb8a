"""Probes of assignment A2 (the eager engine): they run your code and return plain data.

Called by the graded tests (``test_a2_eager.py``) through the ``run`` fixture (see
``probes_a1.py``). Backward nodes are named by their position in :func:`walk`, a fixed
depth-first walk of the graph from its root: the same graph built twice gets the same
numbers, here and in the grader.
"""

import numpy as np

import tinygrad_edu as tg
from tinygrad_edu.eager import Observer, observe
from tinygrad_edu.eager.engine import _count_dependencies

__all__ = [
    "GRAPHS",
    "walk",
    "structure",
    "forward_graph",
    "nothing_recorded",
    "dependencies",
    "backward",
    "run_order",
    "fan_in",
    "leaf_grads",
    "accumulate",
    "create_graph",
    "hook_replaces",
    "hooks_in_order",
    "hook_on_a_value_used_twice",
    "second_backward",
    "retain_graph",
    "frees_saved",
    "grad_then_backward",
]


def _t(a, requires_grad=True):
    return tg.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def _fan():
    rng1, rng2 = np.random.default_rng(1), np.random.default_rng(2)
    a, b = _t(rng1.standard_normal((2, 3))), _t(rng2.standard_normal((3, 2)))
    h = (a * 2).exp()  # h feeds three ops
    return ((h @ b).tanh().sum() + (h * h).sum()) * (h.sum() + 1)


def _chain():
    y = _t([0.5])
    for _ in range(5000):
        y = y * 1.0
    return y


GRAPHS = {"fan": _fan, "chain": _chain}


def walk(root):
    """(nodes, edges): every node reachable from ``root`` in a fixed depth-first order, and
    each edge as (from, to) positions, one per ``next_functions`` entry."""
    index, nodes, edges, stack = {root: 0}, [root], [], [root]
    while stack:
        node = stack.pop()
        for nxt, _ in reversed(node.next_functions):
            if nxt is not None and nxt not in index:
                index[nxt] = len(nodes)
                nodes.append(nxt)
                stack.append(nxt)
    for node in nodes:
        for nxt, _ in node.next_functions:
            if nxt is not None:
                edges.append((index[node], index[nxt]))
    return nodes, edges


def structure(graph):
    """The graph's nodes (name and sequence number, by position) and edges."""
    nodes, edges = walk(GRAPHS[graph]().grad_fn)
    return {"names": [n.name() for n in nodes], "seq": [n.sequence_nr for n in nodes],
            "edges": edges}  # fmt: skip


def forward_graph():
    """Values and the recorded graph of ``y = a * b + a``."""
    av, bv = (
        np.random.default_rng(3).standard_normal((2, 3)),
        np.random.default_rng(4).standard_normal((2, 3)),
    )
    a, b = _t(av), _t(bv)
    y = a * b + a
    mul_node = y.grad_fn.next_functions[0][0]
    leaves = [n.variable for n, _ in mul_node.next_functions]
    return {
        "y": y.detach().numpy(), "requires_grad": y.requires_grad, "is_leaf": y.is_leaf,
        "grad_fn": y.grad_fn.name(), "next": mul_node.name(),
        "leaves_are_a_b": [leaves[0] is a, leaves[1] is b],
    }  # fmt: skip


def nothing_recorded():
    """What no_grad and a tensor without requires_grad record."""
    a = _t([1.0, 2.0])
    with tg.no_grad():
        y = a * 3
    z = _t([1.0], requires_grad=False).exp()
    return {"y": [y.grad_fn is None, y.requires_grad], "z": z.grad_fn is None}


def dependencies(graph, want_parents=False):
    """``_count_dependencies(root, want_parents)`` with nodes as :func:`walk` positions
    (-1 for anything not in the graph)."""
    root = GRAPHS[graph]().grad_fn
    nodes, _ = walk(root)
    index = {n: k for k, n in enumerate(nodes)}
    deps, parents = _count_dependencies(root, want_parents)
    out = {"deps": {index.get(n, -1): int(c) for n, c in dict(deps).items()}}
    if want_parents:
        out["parents"] = {
            index.get(n, -1): sorted(index.get(p, -1) for p in ps) for n, ps in parents.items()
        }
    return out


def _f(a, b):
    h = (a @ b).exp()
    return (h * h + h @ b).sum(axis=0) * a.sum()


def backward(a, b, projection):
    """Gradients of ``sum(f(a, b) * projection)`` by ``backward()``, for a and b."""
    ta, tb = _t(a), _t(b)
    (_f(ta, tb) * tg.tensor(np.asarray(projection))).sum().backward()
    return [ta.grad.numpy(), tb.grad.numpy()]


class _Recorder(Observer):
    def __init__(self):
        self.started, self.received = [], []

    def node_started(self, task, node, grads):
        self.started.append(node)
        self.received.append([None if g is None else np.array(g) for g in grads])


def run_order(graph):
    """The nodes (walk positions; -1: the engine's own root node) in the order the engine
    started them during ``backward()``."""
    loss = GRAPHS[graph]()
    nodes, _ = walk(loss.grad_fn)
    index = {n: k for k, n in enumerate(nodes)}
    rec = _Recorder()
    with observe(rec):
        loss.backward()
    return [index.get(n, -1) for n in rec.started]


def fan_in(x):
    """``loss = sum(h*h + h*3)`` with ``h = exp(x)``: what h's node received, and x.grad."""
    tx = _t(x)
    h = tx.exp()
    loss = (h * h + h * 3).sum()
    rec = _Recorder()
    with observe(rec):
        loss.backward()
    received = [r for n, r in zip(rec.started, rec.received) if n is h.grad_fn]
    return {"received": received, "grad": tx.grad.numpy()}


def leaf_grads(a, b):
    """``sum((a @ b)^2).backward()``: the leaves' gradients and what kind of thing they are."""
    ta, tb = _t(a), _t(b)
    y = ta @ tb
    (y * y).sum().backward()
    return {
        "a": ta.grad.numpy(), "b": tb.grad.numpy(), "is_tensor": isinstance(ta.grad, tg.Tensor),
        "grad_fn_none": ta.grad.grad_fn is None, "requires_grad": ta.grad.requires_grad,
    }  # fmt: skip


def accumulate():
    """Three backward calls into one leaf; a float32 leaf's gradient dtype."""
    x = _t([1.0, 2.0, 3.0])
    x.sum().backward()  # its gradient is a broadcast of a scalar: .grad must own its memory
    x.sum().backward()
    (x * x).sum().backward()
    f32 = tg.tensor([1.0, 2.0], requires_grad=True)
    (f32 * 2).sum().backward()
    return {"grad": x.grad.numpy(), "f32": [str(f32.grad.dtype), str(f32.dtype)]}


def create_graph(x):
    """With ``create_graph=True``: whether .grad has a graph, and second derivatives."""
    tx = _t(x)
    (tx * tx * tx).sum().backward(create_graph=True)
    has_graph = tx.grad.grad_fn is not None
    (gx,) = tg.grad(tx.grad.sum(), tx)
    t = _t(x)
    (g1,) = tg.grad((t.exp() * t).sum(), t, create_graph=True)
    (g2,) = tg.grad(g1.sum(), t)
    return {"has_graph": has_graph, "second": gx.numpy(), "second_texp": g2.numpy()}


def hook_replaces(x):
    """A hook on ``h = x * x`` that doubles the gradient: what it saw, and x.grad."""
    tx = _t(x)
    h = tx * tx
    seen = []

    def double(g):
        seen.append(g.numpy().copy())
        return g * 2

    h.register_hook(double)
    (h * 3).sum().backward()
    return {"seen": seen, "grad": tx.grad.numpy()}


def hooks_in_order():
    """Two hooks on a leaf, run, then the first removed and run again."""
    x = _t([1.0, 2.0])
    calls = []
    first = x.register_hook(lambda g: calls.append("first") or g + 1)
    x.register_hook(lambda g: calls.append(["second", g.numpy().tolist()]))
    (x * 2).sum().backward()
    before, grad = list(calls), x.grad.numpy()
    first.remove()
    calls.clear()
    x.grad = None
    (x * 2).sum().backward()
    return {"before": before, "grad": grad, "after": list(calls)}


def hook_on_a_value_used_twice(x, k1, k2):
    """A hook on ``h = x * 1`` used twice (``h*k1 + h*k2``): what it saw each time."""
    tx = _t(x)
    h = tx * 1.0
    seen = []
    h.register_hook(lambda g: seen.append(g.numpy().copy()))
    (h * k1 + h * k2).sum().backward()
    return seen


def second_backward():
    """A second ``backward()`` without ``retain_graph``: what it raised."""
    x = _t([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward()
    try:
        y.backward()
    except Exception as e:  # noqa: BLE001 - the test checks which
        return [type(e).__name__, str(e)]
    return None


def retain_graph(x):
    """``backward(retain_graph=True)`` twice: whether saved values were kept, and x.grad."""
    tx = _t(x)
    y = (tx.exp() * tx).sum()
    y.backward(retain_graph=True)
    kept = bool(y.grad_fn.next_functions[0][0].saved)
    y.backward()
    return {"kept": kept, "grad": tx.grad.numpy()}


def frees_saved():
    """What MulBackward0 holds before and after a ``backward()`` without retain_graph."""
    x = _t([1.0, 2.0])
    z = x.exp()
    y = z * x
    node = y.grad_fn
    before = bool(node.saved)
    y.sum().backward()
    return {"before": before, "after": [node.saved == (), node.saved_out is None]}


def grad_then_backward(x):
    """``tg.grad(..., retain_graph=True)`` then ``backward()`` on the same graph."""
    tx = _t(x)
    y = (tx * tx.exp()).sum()
    (g1,) = tg.grad(y, tx, retain_graph=True)
    y.backward()
    return {"grad": g1.numpy(), "backward": tx.grad.numpy()}
