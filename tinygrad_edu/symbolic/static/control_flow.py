r"""Control flow as sub-blocks: ``cond`` and ``while_loop``, both differentiable.

A symbolic graph is built before any value exists, so Python's ``if`` and ``while`` cannot
look at its values. Instead each branch of a ``cond`` and the condition and body of a
``while_loop`` are traced *once*, into **sub-blocks** of the program (Fluid's
``conditional_block`` and ``while`` ops; TensorFlow's ``cond`` and ``while_loop``). A body may
use outer nodes: they become the block's **captures**, inputs of the control-flow node. At run
time the node evaluates the branch that the predicate picks, or the body as many times as the
condition holds: a trip count that depends on the data.

``gradients()`` goes through both:

- ``cond``'s derivative is another ``cond`` on the same predicate: each branch
  differentiates the matching forward branch, so only the branch taken is differentiated.
- ``while_loop``'s derivative is TensorFlow 1's. While the forward loop runs, it pushes, at
  each iteration, the values that the backward body will read onto a **stack** (which values:
  the gradient decides, when it is built, by marking them in the forward node's ``saves``).
  The gradient node then pops the stack, newest first, running the body's vector-Jacobian
  product once per iteration: reverse mode with a data-dependent trip count.

>>> import numpy as np
>>> from tinygrad_edu.symbolic import Executor, Variable, gradients
>>> x = Variable("x", shape=(), dtype="float64")
>>> i, y = while_loop(lambda i, y: y < 100.0, lambda i, y: (i + 1, y * y), (0, x))
>>> (dy,) = gradients(y, [x])
>>> Executor([i, y, dy]).run({x: 1.5})  # 1.5 -> 2.25 -> 5.06 -> 25.6 -> 656.8: 4 squarings
[array(4), array(656.84083557), array(7006.30224609)]
"""

from __future__ import annotations

import inspect

from ...ops import Op, ShapeError
from ..executor import compute_node
from ..gradients import gradients
from ..tensor_node import PLACEHOLDER, Node, apply_op, constant
from .program import Block, sub_block

__all__ = [
    "cond", "while_loop", "run_block", "block_order", "BLOCK_ARG", "TUPLE_GET", "COND",
    "WHILE", "WHILE_GRAD", "CONTROL_FLOW_OPS",
]  # fmt: skip


class _BlockArg(Op):
    """Marker op of a block argument: a loop variable inside a body (or an incoming adjoint
    inside a gradient body). Its value is given each time the block runs."""

    name, arity, differentiable = "block_arg", 0, False

    def forward(self, xp):
        raise RuntimeError("a block argument gets its value when its block runs")


class _TupleGet(Op):
    """``tuple_get(t, index)``: output ``index`` of a node with several outputs."""

    name = "tuple_get"

    def forward(self, xp, t, index):
        return t[index]

    def shape(self, shape, index):
        return None

    def vjp(self, F, g, inputs, out, shapes, needs, index):
        return ({index: g},)  # a partial adjoint of one output; gradients() sums per output


class _Cond(Op):
    """``cond(pred, *captures)``: the outputs of ``true_block`` or of ``false_block``."""

    name, multi_output = "cond", True

    def shape(self, *shapes, **attrs):
        return None  # several outputs: each tuple_get node carries its own shape

    def forward(self, xp, pred, *captures, true_block, false_block):
        block = true_block if _truth(xp, pred) else false_block
        values = run_block(xp, block, (), captures)
        return tuple(values[o] for o in block.outputs)

    def vjp(self, F, g, inputs, out, shapes, needs, true_block, false_block):
        caps = inputs[1:]
        want = [c for c, need in zip(caps, needs[1:]) if need]
        if not want:
            return (None,) * len(inputs)
        index = sorted(g)

        def branch(block):
            ys, seeds = [block.outputs[i] for i in index], [g[i] for i in index]
            return lambda: gradients(ys, want, grad_ys=seeds, stop_gradients=block.captures)

        grads, _ = _cond_nodes(inputs[0], branch(true_block), branch(false_block), "cond grad")
        grads = iter(grads)
        return (None, *[next(grads) if need else None for need in needs[1:]])


class _While(Op):
    """``while(*loop_vars, *captures)``: the loop variables after the body has run while the
    condition held, plus (last output) the stack of values saved for the gradient."""

    name, multi_output = "while", True

    def shape(self, *shapes, **attrs):
        return None

    def forward(self, xp, *args, cond_block, body_block, saves=(), maximum_iterations=None):
        m = len(body_block.params)
        state, caps = args[:m], args[m:]
        stack, steps = [], 0
        roots = tuple(body_block.outputs) + tuple(saves)
        while _truth(xp, run_block(xp, cond_block, state, caps)[cond_block.outputs[0]]):
            if maximum_iterations is not None and steps >= maximum_iterations:
                break
            values = run_block(xp, body_block, state, caps, roots)
            if saves:
                stack.append({n: values[n] for n in saves})  # the values the gradient reads
            state = tuple(values[o] for o in body_block.outputs)
            steps += 1
        return (*state, stack)

    def vjp(self, F, g, inputs, out, shapes, needs, cond_block, body_block, saves=(),
            maximum_iterations=None):  # fmt: skip
        body = body_block
        m = len(body.params)
        want = [c for c, need in zip(inputs[m:], needs[m:]) if need]
        outputs, params = list(body.outputs), list(body.params)

        def body_vjp(*adjoints):
            return gradients(outputs, params + want, grad_ys=list(adjoints),
                             stop_gradients=body.captures)  # fmt: skip

        grad_body, _ = _trace(body_vjp, params, "while grad", visible=(body,), prefix="∂")
        saved = [c for c in grad_body.captures if c.block is body]
        outer = [c for c in grad_body.captures if c.block is not body]
        grad_body.captures = tuple(saved + outer)
        # NOTE [Saved values]: the gradient decides what the forward loop must keep, after the
        # forward node exists (TensorFlow 1 inserts its stack pushes into the forward body the
        # same way). So this mutates the forward node's ``saves``: from now on every run of
        # the loop pushes these values. Executors and compiled code read a node's attributes
        # at each run (codegen binds the attrs dict itself), so they see the change.
        out.attrs["saves"] = tuple(dict.fromkeys(tuple(saves) + tuple(saved)))
        stack = _tuple_get(out, m, "stack")
        start = [g[i] if i in g else apply_op("zeros_like", _tuple_get(out, i)) for i in range(m)]
        node = Node(WHILE_GRAD, (stack, *start, *outer, *want),
                    {"body": grad_body, "n_saved": len(saved), "n_caps": len(want)},
                    name=f"{out.name} grad")  # fmt: skip
        results = iter(_unpack(node, [p.shape for p in params] + [c.shape for c in want]))
        grads = [next(results) for _ in range(m)]
        grads = [gi if need else None for gi, need in zip(grads, needs[:m])]
        return (*grads, *[next(results) if need else None for need in needs[m:]])


class _WhileGrad(Op):
    """The reverse loop of a ``while_loop``: pops the saved values, newest first, and runs the
    body's vector-Jacobian product once per forward iteration."""

    name, multi_output = "while_grad", True

    def shape(self, *shapes, **attrs):
        return None

    def forward(self, xp, stack, *args, body, n_saved, n_caps):
        m = len(body.params)
        adjoints, outer = args[:m], args[m : len(args) - n_caps]
        likes = args[len(args) - n_caps :]
        saved = body.captures[:n_saved]
        total = [None] * n_caps
        for entry in reversed(stack):
            values = run_block(xp, body, adjoints, [entry[n] for n in saved] + list(outer))
            outs = [values[o] for o in body.outputs]
            adjoints = outs[:m]
            total = [v if t is None else t + v for t, v in zip(total, outs[m:])]
        total = [xp.zeros_like(c) if t is None else t for t, c in zip(total, likes)]
        return (*adjoints, *total)

    def vjp(self, F, g, inputs, out, shapes, needs, **attrs):
        raise NotImplementedError(
            "while_loop: second derivatives through a loop are not supported (the gradient "
            "loop is not itself differentiable); differentiate the loop once"
        )


BLOCK_ARG, TUPLE_GET = _BlockArg(), _TupleGet()
COND, WHILE, WHILE_GRAD = _Cond(), _While(), _WhileGrad()
CONTROL_FLOW_OPS = {op.name: op for op in (BLOCK_ARG, TUPLE_GET, COND, WHILE, WHILE_GRAD)}


# -- building -------------------------------------------------------------------------------
def cond(pred, true_fn, false_fn, *operands):
    """``true_fn(*operands)`` where ``pred`` holds at run time, else ``false_fn(*operands)``.

    Args:
        pred: a boolean node with one element (a Python bool picks a branch right away).
        true_fn, false_fn: functions building each branch from the operands (and any outer
            nodes); both return a node or the same number of nodes.
        operands: nodes (or numbers, arrays) passed to the branch functions.

    Returns:
        a node, or a tuple of nodes when the branches return several.

    >>> import numpy as np
    >>> from tinygrad_edu.symbolic import Executor, Variable
    >>> x = Variable("x")
    >>> y = cond(x.sum() > 0, lambda v: v * 2, lambda v: -v, x)
    >>> ex = Executor([y])
    >>> ex.run({x: np.array([1.0, -0.5])}), ex.run({x: np.array([1.0, -3.0])})
    ([array([ 2., -1.])], [array([-1.,  3.])])
    """
    operands = tuple(_as_node(o) for o in operands)
    if not isinstance(pred, Node):  # decided while building: no sub-blocks needed
        return (true_fn if bool(pred) else false_fn)(*operands)
    outs, one = _cond_nodes(pred, lambda: true_fn(*operands), lambda: false_fn(*operands), "cond")
    return outs[0] if one else tuple(outs)


def _cond_nodes(pred, true_fn, false_fn, what):
    """The output nodes of a new ``cond`` node, and whether the branches returned one node."""
    _check_pred(pred, what)
    true_block, one = _trace(true_fn, (), f"{what} true")
    false_block, _ = _trace(false_fn, (), f"{what} false")
    if len(true_block.outputs) != len(false_block.outputs):
        raise ValueError(f"{what}: the true branch returns {len(true_block.outputs)} values "
                         f"and the false branch {len(false_block.outputs)}; return the same "
                         "number from both")  # fmt: skip
    shapes = []
    for k, (a, b) in enumerate(zip(true_block.outputs, false_block.outputs)):
        if a.shape is not None and b.shape is not None and a.shape != b.shape:
            raise ShapeError(f"{what}: output {k} has shape {a.shape} in the true branch and "
                             f"{b.shape} in the false branch; both must match")  # fmt: skip
        shapes.append(a.shape if a.shape == b.shape else None)
    captures = _union(true_block.captures, false_block.captures)
    true_block.captures = false_block.captures = captures
    node = Node(COND, (pred, *captures), {"true_block": true_block, "false_block": false_block},
                name=_short(f"{what}({pred.name})", what))  # fmt: skip
    return _unpack(node, shapes, [o.dtype for o in true_block.outputs]), one


def while_loop(cond_fn, body_fn, loop_vars, maximum_iterations: int | None = None):
    """Run ``loop_vars = body_fn(*loop_vars)`` while ``cond_fn(*loop_vars)`` holds.

    Args:
        cond_fn: builds a boolean one-element node from the loop variables.
        body_fn: builds the next loop variables (as many, same shapes) from the current ones.
        loop_vars: the initial values: nodes, numbers or arrays (a single node is allowed).
        maximum_iterations: stop after this many iterations even if ``cond_fn`` still holds.

    Returns:
        the final loop variables (a tuple, or one node when ``loop_vars`` was one node).

    The bodies may use outer nodes; the number of iterations may depend on the data, and
    ``gradients()`` works through it (see the module's docstring).
    """
    single = not isinstance(loop_vars, list | tuple)
    init = tuple(_as_node(v) for v in ([loop_vars] if single else loop_vars))
    if not init:
        raise ValueError("while_loop: give at least one loop variable")
    cond_block, _ = _trace(cond_fn, init, "while cond")
    if len(cond_block.outputs) != 1:
        raise ValueError(f"while_loop: cond_fn must return one boolean node, got "
                         f"{len(cond_block.outputs)} values")  # fmt: skip
    _check_pred(cond_block.outputs[0], "while_loop")
    if maximum_iterations is None and not _reaches(cond_block.outputs[0], cond_block.params):
        raise ValueError("while_loop: the condition does not depend on the loop variables, so "
                         "the loop would run forever (or never); compute it from cond_fn's "
                         "arguments, or pass maximum_iterations=")  # fmt: skip
    body_block, _ = _trace(body_fn, init, "while body")
    if len(body_block.outputs) != len(init):
        raise ValueError(f"while_loop: body_fn must return {len(init)} values (one per loop "
                         f"variable), got {len(body_block.outputs)}")  # fmt: skip
    for k, (v, new) in enumerate(zip(init, body_block.outputs)):
        if v.shape is not None and new.shape is not None and v.shape != new.shape:
            raise ShapeError(f"while_loop: the body changes loop variable {k} ({v.name!r}) "
                             f"from shape {v.shape} to {new.shape}; a loop variable must "
                             "keep its shape")  # fmt: skip
    captures = _union(cond_block.captures, body_block.captures)
    cond_block.captures = body_block.captures = captures
    attrs = {"cond_block": cond_block, "body_block": body_block, "saves": (),
             "maximum_iterations": maximum_iterations}  # fmt: skip
    node = Node(WHILE, (*init, *captures), attrs, name="while")
    outs = _unpack(node, [v.shape for v in init], [v.dtype for v in init])
    return outs[0] if single else tuple(outs)


def _trace(fn, templates, what, visible=(), prefix=""):
    """Call ``fn`` on fresh block arguments (shaped like ``templates``) inside a new
    sub-block; returns the block (params, outputs, captures set) and whether ``fn`` returned
    a single node."""
    names = _arg_names(fn, templates)
    with sub_block() as block:
        block.visible = tuple(visible)
        params = tuple(
            Node(BLOCK_ARG, name=prefix + name, shape=t.shape, dtype=t.dtype)
            for name, t in zip(names, templates)
        )
        result = fn(*params)
        one = not isinstance(result, list | tuple)
        outputs = tuple(_as_node(r) for r in ([result] if one else result))
    if not outputs:
        raise ValueError(f"{what}: the function returned nothing; return a node")
    block.params, block.outputs = params, outputs
    block.captures = _free_nodes(block)
    return block, one


def _reaches(node: Node, targets) -> bool:
    """Does ``node`` depend on any of ``targets`` (walking back through its inputs)?"""
    targets, seen, stack = set(targets), set(), [node]
    while stack:
        n = stack.pop()
        if n in targets:
            return True
        if n not in seen:
            seen.add(n)
            stack.extend(n.inputs)
    return False


def _arg_names(fn, templates) -> list:
    """Names for a body's arguments: the function's own parameter names when it has one per
    loop variable (``lambda i, x: ...`` gives ``i`` and ``x``), else the loop variables'."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    if len(params) == len(templates) and all(p.kind == p.POSITIONAL_OR_KEYWORD for p in params):
        return [p.name for p in params]
    return [_short(t.name, f"arg{k}") for k, t in enumerate(templates)]


def _free_nodes(block: Block) -> tuple:
    """The nodes ``block`` reads from outside: walk back from its outputs and stop at nodes an
    enclosing block can supply. A node of a block not visible from here (the other branch of
    a forward ``cond``) is recomputed inside; a Variable is always fed from outside."""
    free, seen, stack = [], set(block.params), list(block.outputs)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if node.op is PLACEHOLDER or _visible(node, block):
            free.append(node)
        elif node.op is BLOCK_ARG:
            raise ValueError(f"a body uses {node.name!r}, a loop variable of another loop body "
                             "that is not running here; pass the value in as an operand "
                             "instead")  # fmt: skip
        else:
            stack.extend(node.inputs)
    return tuple(sorted(free, key=lambda n: n.seq))


def _visible(node: Node, block: Block) -> bool:
    """Can an enclosing block of ``block`` supply ``node``'s value?"""
    if node.block is None:
        return True  # the main graph
    if node.block.is_inside(block):
        return False  # built in this block (or deeper): computed here
    for outer in block.ancestors():
        if node.block is outer or node.block in outer.visible:
            return True
    return False


def _unpack(node: Node, shapes, dtypes=None) -> list:
    dtypes = dtypes or [None] * len(shapes)
    outs = []
    for k, (shape, dtype) in enumerate(zip(shapes, dtypes)):
        t = _tuple_get(node, k)
        t.shape, t.dtype = shape, dtype
        outs.append(t)
    return outs


def _tuple_get(node: Node, index: int, name: str | None = None) -> Node:
    return Node(TUPLE_GET, (node,), {"index": index}, name=f"{node.name}[{name or index}]")


def _union(*groups) -> tuple:
    return tuple(sorted(dict.fromkeys(n for g in groups for n in g), key=lambda n: n.seq))


def _as_node(x) -> Node:
    return x if isinstance(x, Node) else constant(x)


def _short(name: str, fallback: str) -> str:
    return name if len(name) <= 24 else fallback


def _check_pred(pred: Node, what: str) -> None:
    if pred.shape is not None and len(pred.shape) and any(d != 1 for d in pred.shape):
        raise ShapeError(f"{what}: the condition {pred.name!r} has shape {pred.shape}; it must "
                         "hold one value (reduce it, e.g. with .sum() > 0)")  # fmt: skip


def _truth(xp, value) -> bool:
    if getattr(value, "ndim", 0):
        if value.size != 1:
            raise ValueError(f"a control-flow condition must hold one value, got shape "
                             f"{tuple(value.shape)}")  # fmt: skip
        value = xp.reshape(value, ())
    return bool(value)


# -- running --------------------------------------------------------------------------------
class _Cut:
    """A node as the block sees it: a block argument or capture has no inputs (the walk stops
    there). ``inputs`` is all that :func:`~tinygrad_edu.symbolic.graph.topo_sort` reads."""

    __slots__ = ("node", "_view", "_stop")

    def __init__(self, node, view, stop):
        self.node, self._view, self._stop = node, view, stop

    @property
    def inputs(self) -> tuple:
        return () if self.node in self._stop else tuple(self._view(i) for i in self.node.inputs)


def block_order(block: Block, roots=None) -> list:
    """The nodes to compute, in order, when ``block`` runs for ``roots`` (default: its
    outputs): everything they need except the block's arguments and captures.

    The order is :func:`~tinygrad_edu.symbolic.graph.topo_sort`'s (one walk for the whole
    library), over a view of the block in which its arguments and captures have no inputs."""
    from ..graph import topo_sort  # noqa: PLC0415

    roots = tuple(block.outputs if roots is None else roots)
    order = block.orders.get(roots)
    if order is not None:
        return order
    stop = set(block.params) | set(block.captures)
    views: dict = {}

    def view(node):
        if node not in views:
            views[node] = _Cut(node, view, stop)
        return views[node]

    order = [c.node for c in topo_sort([view(r) for r in roots]) if c.node not in stop]
    block.orders[roots] = order
    return order


def run_block(xp, block: Block, args=(), captures=(), roots=None) -> dict:
    """Evaluate ``block`` with its arguments and captures bound to ``args`` and ``captures``
    (in the order of ``block.params`` and ``block.captures``); returns every value by node."""
    values = dict(zip(block.captures, captures))
    values.update(zip(block.params, args))
    for node in block_order(block, roots):
        values[node] = compute_node(xp, node, [values[i] for i in node.inputs])
    return values
