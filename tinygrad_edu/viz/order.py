"""The order a backward pass runs its nodes in, drawn as numbered nodes.

:func:`backward_order` answers "in which order would our engine run this graph?" for our own
eager tensors and for PyTorch tensors alike. It does not re-implement the rules (dependency
counts, then the ready node with the highest ``sequence_nr`` first): it runs our real engine
(:func:`tinygrad_edu.eager.backward` under an :class:`~tinygrad_edu.eager.Observer`) on a
*stand-in* graph, one stand-in per node, with the node's edges and sequence number, whose
"gradients" are dummy zeros. Whatever rule the engine follows, the order follows it too.

:func:`draw_backward_order` draws the graph in the eager style with each node numbered by its
place in that order; the drawing's ``.order`` lists the node names in order. For a PyTorch
graph, :func:`torch_run_order` observes the order PyTorch itself runs (with node pre-hooks),
so the two can be compared.

>>> import tinygrad_edu as tg
>>> x = tg.tensor([1.0, 2.0], requires_grad=True)
>>> y = (x.exp() + x * 2).sum()
>>> [n.name() for n in backward_order(y)]  # doctest: +NORMALIZE_WHITESPACE
['SumBackward0', 'AddBackward0', 'MulBackward0', 'ExpBackward0', 'AccumulateGrad']
"""

from __future__ import annotations

import numpy as np  # the dummy gradients of the stand-in graph

from ..eager import Observer, Tensor, backward, observe
from ..eager.node import AccumulateGrad, Node
from .eager_form import add_eager
from .style import EAGER_LEGEND, finish, legend_table, new_graph
from .torch_graph import TorchNodeView, TorchTensorView, is_torch_tensor, require_torch
from .traverse import NodeRecord, _as_eager_outputs, _is_accumulate, eager_graph

__all__ = ["backward_order", "draw_backward_order", "torch_run_order", "ORDER_RULE"]

ORDER_RULE = "of the nodes ready, highest sequence_nr first"
_TOKEN = np.zeros((), dtype=np.float32)


class _StandIn(Node):
    """Stands in for one node of the graph being ordered: same edges, same sequence number;
    running it passes a dummy gradient along every edge."""

    def __init__(self, source):
        super().__init__(())
        self.source = source
        self.sequence_nr = source.sequence_nr

    def name(self) -> str:
        return self.source.name()

    def apply(self, grads, create_graph):
        return (_TOKEN,) * len(self.next_functions)


class _StandInAccumulate(AccumulateGrad):
    """Stands in for an ``AccumulateGrad``: an AccumulateGrad to the engine (whatever
    priority it gives them), that fills nothing."""

    def __init__(self, source):
        super().__init__(Tensor._make(np.zeros((), dtype=np.float32)))
        self.source = source
        self.sequence_nr = source.sequence_nr

    def name(self) -> str:
        return self.source.name()

    def apply(self, grads, create_graph):
        return ()


def _stand_ins(roots: list) -> dict:
    """source node -> stand-in, for every node reachable from ``roots`` (iteratively)."""
    made: dict = {}
    incoming: dict = {}  # stand-in -> the output numbers its in-edges name

    def get(src):
        s = made.get(src)
        if s is None:
            s = made[src] = (_StandInAccumulate if _is_accumulate(src) else _StandIn)(src)
            stack.append(src)
        return s

    stack: list = []
    for r in roots:
        get(r)
    while stack:
        src = stack.pop()
        edges = []
        for nxt, nr in src.next_functions:
            if nxt is None:
                edges.append((None, 0))
                continue
            s = get(nxt)
            incoming.setdefault(s, set()).add(nr)
            edges.append((s, nr))
        made[src].next_functions = tuple(edges)
    for s, nrs in incoming.items():
        s.num_outputs = max(nrs) + 1  # a node of several outputs gets a slot for each
    return made


class _RunOrder(Observer):
    def __init__(self):
        self.ran = []

    def node_started(self, task, node, grads):
        if isinstance(node, _StandIn | _StandInAccumulate):
            self.ran.append(node.source)


def _output_nr(t) -> int:
    return t.output_nr if isinstance(t, TorchTensorView) else t._output_nr


def _order_of(outs: list) -> list:
    """The nodes behind ``outs`` (our Tensors or TorchTensorViews), in the order our engine
    runs them. Each output is seeded with one gradient, as ``backward()`` does."""
    made = _stand_ins([t.grad_fn for t in outs])
    fronts = [
        Tensor._make(np.zeros((), dtype=np.float32), made[t.grad_fn], output_nr=_output_nr(t))
        for t in outs
    ]
    rec = _RunOrder()
    with observe(rec):
        backward(fronts, retain_graph=True)
    return rec.ran


def _original(node):
    return node.node if isinstance(node, TorchNodeView) else node


def backward_order(tensors) -> list:
    """The nodes behind ``tensors`` in the order our engine would run them in ``backward()``.

    Args:
        tensors: an output or a list of outputs: our eager Tensors, or PyTorch tensors (then
            the PyTorch ``grad_fn`` objects are returned).

    Nothing is computed and no ``.grad`` changes: the engine runs a stand-in graph.

    >>> import torch
    >>> a = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> names = [type(n).__name__ for n in backward_order((a * 3).sum())]
    >>> names
    ['SumBackward0', 'MulBackward0', 'AccumulateGrad']
    """
    outs, _ = _as_eager_outputs(tensors, None)
    _check_outputs(outs, "backward_order")
    return [_original(n) for n in _order_of(outs)]


def _check_outputs(outs, what):
    if not outs:
        raise ValueError(f"{what}: no tensors were passed; pass the output tensor(s)")
    for t in outs:
        if not isinstance(t, Tensor | TorchTensorView):
            raise TypeError(
                f"{what}: expected eager Tensors or PyTorch tensors, got {type(t).__name__}"
            )
        if t.grad_fn is None:
            raise ValueError(
                f"{what}: a tensor of shape {tuple(t.shape)} has no grad_fn (a leaf, or computed "
                "without grad), so backward has nothing to run; set requires_grad=True on its "
                "inputs"
            )


def draw_backward_order(
    tensors,
    names=None,
    params=None,
    show_saved: bool = False,
    legend: bool = True,
    title: str | None = None,
):
    """Draw the backward graph of ``tensors`` with each node numbered in the order our engine
    runs it (see :func:`backward_order`); works for our tensors and for PyTorch's.

    Args:
        tensors: the output(s): our eager Tensors or PyTorch tensors.
        names, params: mappings name -> tensor naming leaves (``model.named_parameters()``).
        show_saved: list what each node keeps for backward.
        legend: add the colour legend and the rule.
        title: an optional title.

    Returns:
        a ``graphviz.Digraph`` with two extra attributes: ``order``, the node names in run
        order (``["MmBackward0", "AddBackward0", ...]``), and ``order_nodes``, the nodes
        themselves in that order (PyTorch ``grad_fn`` objects for a PyTorch graph).

    >>> import tinygrad_edu as tg
    >>> a = tg.tensor([1.0, 2.0], requires_grad=True)
    >>> dot = draw_backward_order((a * a).sum(), names={"a": a})
    >>> dot.order
    ['SumBackward0', 'MulBackward0', 'AccumulateGrad']
    >>> "1. SumBackward0" in dot.source and "3. AccumulateGrad" in dot.source
    True
    """
    mapping = {**dict(params or {}), **dict(names or {})} or None
    outs, views = _as_eager_outputs(tensors, mapping)
    _check_outputs(outs, "draw_backward_order")
    data = eager_graph(outs, views)
    ran = _order_of(outs)
    step = {id(n): k for k, n in enumerate(ran, 1)}

    def decorate(rec):
        if isinstance(rec, NodeRecord) and id(rec.ref) in step:
            return {"title": f"{step[id(rec.ref)]}. {rec.label}"}
        return {}

    g = new_graph("order")
    add_eager(g, data, show_saved=show_saved, decorate=decorate)
    text = title or f"run order: {ORDER_RULE}"
    finish(g, legend and legend_table(EAGER_LEGEND, text), title)
    g.order = [n.name() for n in ran]
    g.order_nodes = [_original(n) for n in ran]
    return g


def torch_run_order(outputs, grad_outputs=None, retain_graph=None) -> list:
    """Run PyTorch's ``backward`` on ``outputs`` and return its nodes in the order PyTorch ran
    them (observed with a pre-hook on every node; the hooks are removed afterwards).

    This runs a real backward: leaves' ``.grad`` accumulate as usual. Compare with
    :func:`backward_order`, which asks our engine.

    >>> import torch
    >>> a = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> ran = [type(n).__name__ for n in torch_run_order((a * 3).sum())]
    >>> ran
    ['SumBackward0', 'MulBackward0', 'AccumulateGrad']
    """
    torch = require_torch("torch_run_order")
    outs = [outputs] if is_torch_tensor(outputs) else list(outputs)
    ran, handles, seen = [], [], set()
    stack = [t.grad_fn for t in outs if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        handles.append(node.register_prehook(lambda grads, node=node: ran.append(node)))
        stack.extend(n for n, _ in node.next_functions if n is not None and n not in seen)
    try:
        torch.autograd.backward(outs, grad_outputs, retain_graph=retain_graph)
    finally:
        for h in handles:
            h.remove()
    return ran
