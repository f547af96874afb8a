"""Probes of assignment A1 (the symbolic engine): they run your code and return plain data.

The graded tests (``test_a1_symbolic.py``) call these through the ``run`` fixture: at home in
the test's own process; in the autograder inside the sandbox, with your code for the task
being graded and the course's code for everything else. A probe builds everything from plain
arguments and returns numbers, strings, lists and numpy arrays; the checks happen in the test.

A graph is given as a spec, one row per node, inputs before the nodes that use them::

    [["A", "var", []], ["B", "var", []], ["D", "add", ["A", "B"]], ["E", "exp", ["D"]]]

Ops: ``var`` (a Variable), ``const`` (a constant; its value is the row's fourth entry),
``add``, ``mul``, ``matmul``, ``exp``, ``sum0`` (``reduce_sum`` over axis 0).
"""

import numpy as np

from tinygrad_edu.ops import RAW, get_op
from tinygrad_edu.symbolic import (
    Executor,
    Node,
    Variable,
    constant,
    gradients,
    matmul,
    reduce_sum,
    softmax_cross_entropy,
    topo_sort,
)
from tinygrad_edu.symbolic.gradients import SYMBOLIC

__all__ = [
    "build",
    "topo_order",
    "execute",
    "vjp",
    "vjp_graph",
    "symbolic_gradients",
    "symbolic_second_derivatives",
    "static_shapes",
    "forward_kernels",
    "EXPRESSIONS",
]


def build(spec) -> dict:
    """Name -> node for a graph spec (see the module docstring)."""
    nodes = {}
    for row in spec:
        name, op, inputs = row[0], row[1], [nodes[i] for i in row[2]]
        if op == "var":
            node = Variable(name)
        elif op == "const":
            value = row[3]
            node = constant(value if isinstance(value, float) else np.asarray(value))
        elif op == "add":
            node = inputs[0] + inputs[1]
        elif op == "mul":
            node = inputs[0] * inputs[1]
        elif op == "matmul":
            node = inputs[0] @ inputs[1]
        elif op == "exp":
            node = inputs[0].exp()
        elif op == "sum0":
            node = reduce_sum(inputs[0], axis=0)
        else:
            raise ValueError(f"unknown op {op!r} in a graph spec")
        nodes[name] = node
    return nodes


def topo_order(spec, roots):
    """The spec names of the nodes ``topo_sort`` returns, in its order (None for a node that
    is not in the spec, a string for something that is not a node)."""
    nodes = build(spec)
    names = {id(node): name for name, node in nodes.items()}
    order = topo_sort([nodes[r] for r in roots])
    return [names.get(id(n), None) for n in order]


def execute(spec, outputs, feeds):
    """``Executor(outputs).run(...)`` once per feed dict (name -> array), one Executor."""
    nodes = build(spec)
    executor = Executor([nodes[o] for o in outputs])
    results = []
    for feed in feeds:
        values = executor.run({nodes[name]: np.asarray(v) for name, v in feed.items()})
        results.append([np.asarray(v) for v in values])
    return results


def _plain(value):
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return f"<not an array: {type(value).__name__}>"


def vjp(op, inputs, g, needs=None, attrs=None):
    """``get_op(op).vjp`` on raw float64 arrays, with the seed gradient ``g``.

    Returns ``{"count": number of gradients returned, "grads": [array or None, ...]}``."""
    attrs = attrs or {}
    rule = get_op(op)
    arrays = [np.asarray(a, dtype=np.float64) for a in inputs]
    needs = tuple(needs) if needs is not None else (True,) * len(arrays)
    out = rule.forward(np, *arrays, **attrs)
    shapes = tuple(a.shape for a in arrays)
    grads = rule.vjp(RAW, np.asarray(g), list(arrays), out, shapes, needs, **attrs)
    if grads is None or not hasattr(grads, "__len__"):
        return {"count": -1, "grads": [], "type": type(grads).__name__}
    return {"count": len(grads), "grads": [None if x is None else _plain(x) for x in grads]}


_PLAIN = (bool, int, float, str, type(None))


def _plain_attr(value):
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, tuple | list):
        return tuple(_plain_attr(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    return f"<{type(value).__name__}>"


def _graph_rows(roots):
    """Rows ``[op, [input rows], attrs, payload]`` of the nodes ``roots`` depend on, inputs
    first (an iterative walk: the graph may be deep), and the row of each root."""
    rows, index, stack = [], {}, [(r, False) for r in roots if isinstance(r, Node)]
    while stack:
        node, expanded = stack.pop()
        if id(node) in index:
            continue
        if not expanded:
            stack.append((node, True))
            stack.extend((i, False) for i in reversed(node.inputs) if id(i) not in index)
            continue
        attrs = {k: _plain_attr(v) for k, v in node.attrs.items() if k != "value"}
        payload = None
        if node.op.name == "placeholder":
            payload = node.name
        elif node.op.name == "constant":
            value = node.attrs["value"]
            # an array for anything but a real number (a complex one too: the wire carries
            # complex arrays, and the grader refuses them with a message)
            payload = value if isinstance(value, int | float) else np.asarray(value)
        index[id(node)] = len(rows)
        rows.append([node.op.name, [index[id(i)] for i in node.inputs], attrs, payload])
    return rows, index


def vjp_graph(op, shapes, needs=None, attrs=None):
    """``get_op(op).vjp`` on graph nodes (Variables ``x0, x1, ...``, ``g`` and ``out``), as
    ``gradients()`` runs it: the graph the rule builds, as plain data for the grader to
    evaluate (:mod:`tinygrad_course.grading.derived`)."""
    attrs = attrs or {}
    rule = get_op(op)
    shapes = tuple(tuple(s) for s in shapes)
    needs = tuple(needs) if needs is not None else (True,) * len(shapes)
    xs = [Variable(f"x{i}", shape=s, dtype="float64") for i, s in enumerate(shapes)]
    out_shape = tuple(rule.shape(*shapes, **attrs))
    g = Variable("g", shape=out_shape, dtype="float64")
    out = Variable("out", shape=out_shape, dtype="float64")
    grads = rule.vjp(SYMBOLIC, g, list(xs), out, shapes, needs, **attrs)
    if grads is None or not hasattr(grads, "__len__"):
        return {"rows": [], "grads": f"<{type(grads).__name__}>"}
    grads = list(grads)
    rows, index = _graph_rows(grads)
    refs = []
    for x in grads:
        if x is None:
            refs.append(None)
        elif isinstance(x, Node):
            refs.append(index[id(x)])
        else:  # an array or a number: a constant, whatever the inputs
            refs.append(len(rows))
            rows.append(["constant", [], {}, x if isinstance(x, int | float) else _plain(x)])
    return {"rows": rows, "grads": refs}


def _canonical(A, B, C):
    return ((A + B) * C) @ (A + C)


def _classifier(W, b, X, Y):
    return softmax_cross_entropy(matmul(constant(X), W) + b, constant(Y))


def _cubed(x):
    return x * x * x


def _used_twice(x):
    return x * x + x.exp() * x


def _times_a(A, B, C):
    return ((A + B) * C) @ (A + C) * A


def _ignores_z(x, z):
    return reduce_sum(x * 3)


EXPRESSIONS = {
    "canonical": _canonical,
    "classifier": _classifier,
    "cubed": _cubed,
    "used_twice": _used_twice,
    "canonical_times_a": _times_a,
    "ignores_z": _ignores_z,
}


def _setup(expression, arrays, constants):
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    xs = [Variable(f"x{i}", shape=a.shape, dtype="float64") for i, a in enumerate(arrays)]
    extra = [np.asarray(c, dtype=np.float64) for c in constants or ()]
    return arrays, xs, EXPRESSIONS[expression](*xs, *extra)


def symbolic_gradients(expression, arrays, projection=None, constants=None, wrt=None):
    """Gradients from ``gradients()`` of ``EXPRESSIONS[expression](*variables, *constants)``
    at ``arrays``; an array output is first reduced with ``projection``. ``wrt`` picks the
    variables (by index) to differentiate with respect to (default: all)."""
    arrays, xs, y = _setup(expression, arrays, constants)
    if projection is not None:
        y = reduce_sum(y * constant(np.asarray(projection, dtype=np.float64)))
    chosen = [xs[i] for i in (wrt if wrt is not None else range(len(xs)))]
    grads = gradients(y, chosen)
    values = Executor(list(grads)).run(dict(zip(xs, arrays)))
    return [np.asarray(v) for v in values]


def symbolic_second_derivatives(expression, arrays, projection, second_projections):
    """Gradients of ``sum(first gradient * p)`` summed over the inputs: the gradient graph
    of the gradient graph, evaluated at ``arrays``."""
    arrays, xs, y = _setup(expression, arrays, None)
    first = gradients(reduce_sum(y * constant(np.asarray(projection))), xs)
    loss = None
    for g, p in zip(first, second_projections):
        term = reduce_sum(g * constant(np.asarray(p, dtype=np.float64)))
        loss = term if loss is None else loss + term
    values = Executor(list(gradients(loss, xs))).run(dict(zip(xs, arrays)))
    return [np.asarray(v) for v in values]


def static_shapes():
    """Static shapes from the shape rules, and the error of a mismatched matmul."""
    x, W, b = Variable("x", shape=(5, 3)), Variable("W", shape=(3, 4)), Variable("b", shape=(4,))
    h = matmul(x, W) + b
    try:
        matmul(x, Variable("V", shape=(4, 2)))
        error = None
    except Exception as e:  # noqa: BLE001 - the test checks which
        error = [type(e).__name__, str(e)]
    return {"h": h.shape, "sum0": reduce_sum(h, axis=0).shape, "error": error}


def forward_kernels(a, b, y):
    """The forward kernels of matmul, exp, sum and softmax_cross_entropy on numpy arrays."""
    a, b, y = (np.asarray(v, dtype=np.float64) for v in (a, b, y))
    return {
        "matmul": get_op("matmul").forward(np, a, b),
        "exp": get_op("exp").forward(np, a),
        "sum1": get_op("sum").forward(np, a, axis=1),
        "sce": np.asarray(get_op("softmax_cross_entropy").forward(np, a, y)),
    }
