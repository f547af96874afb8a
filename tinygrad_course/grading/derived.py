"""Derived or measured: a derivative rule judged from its graph, in the grader's process.

A derivative rule computes with Python operators and ``F.<op>(...)``, so it runs on graph
nodes as well as on arrays (the symbolic engine's ``gradients()`` does exactly that). A probe
runs the submitted rule on **leaves** (the inputs ``x0, x1, ...``, the seed gradient ``g``
and the op's output ``out``) and returns the graph it built as plain data: one row per node,
inputs before the nodes that use them. Nothing is decided where the submitted code runs: this
module, in the grader, evaluates that graph with the library's own forward kernels and

- refuses a constant that is not a real number (the complex step needs ``x + i h``) and any
  complex value on the way;
- refuses an op applied to one of the rule's inputs moved a little, or moved in one element
  only (finite differences evaluate the function there);
- gives the gradients the graph computes at whatever points the grader picks, among them
  points the submitted code never saw, for the test to compare with exact gradients.

A graph is only data, so a forged one is no shortcut: it must compute the right gradient at
points chosen after it was sent, from the leaves, without evaluating anything near the
inputs, and that is what a derived rule is.

Rows: ``[op name, [input row indices], {attributes}, payload]``; the payload is the leaf's
name for ``placeholder`` rows, the value for ``constant`` rows, else None. The probe returns
``{"rows": rows, "grads": [row index, None, or a string saying what came back instead]}``.
"""

from __future__ import annotations

import numpy as np

from tinygrad_edu.ops.base import REGISTRY

__all__ = ["NotDerived", "MAX_ROWS", "MAX_ELEMENTS", "MAX_WORK", "OPS", "evaluate_rule_graph"]

MAX_ROWS = 20_000  # a derived rule of these ops has tens of nodes
MAX_ELEMENTS = 1 << 20  # elements of any one value (the shape rule says so before it exists)
MAX_WORK = 1 << 26  # elements read and written by all the nodes together
_PASS_THROUGH = {"stop_gradient", "detach", "identity"}
# what a derivative rule of these ops computes with: arithmetic, elementwise functions, shape
# changes, reductions and their adjoints; a forged graph gets nothing else to run here (no
# einsum: its cost is not bounded by its inputs' and output's sizes)
OPS = frozenset({
    "add", "sub", "mul", "div", "neg", "pow", "reciprocal", "sqrt", "rsqrt", "abs", "sign",
    "exp", "exp2", "expm1", "log", "log1p", "log2", "tanh", "sigmoid", "relu", "clamp",
    "maximum", "minimum", "where", "equal", "not_equal", "greater", "greater_equal", "less",
    "less_equal", "matmul", "transpose", "permute", "reshape", "expand_dims",
    "squeeze", "flatten", "broadcast_to", "sum_to", "sum", "mean", "max", "min", "logsumexp",
    "softmax", "log_softmax", "numel", "ones_like", "zeros_like", "clone",
    "getitem", "getitem_grad", "one_hot", "diagonal", "tril", "triu", "flip", "stack", "cat",
})  # fmt: skip


class NotDerived(AssertionError):
    """The rule's graph is not a derivation: it measured, or it cannot be evaluated."""


def _near(value, x) -> bool:
    """Whether ``value`` is ``x`` moved a little, or moved in one element only (by any step),
    and not ``x`` itself."""
    if not isinstance(value, np.ndarray) or value.shape != x.shape or value.dtype.kind != "f":
        return False
    if np.array_equal(value, x):
        return False
    close = np.isclose(value, x, rtol=1e-3, atol=1e-3)
    apart = close.size - int(np.count_nonzero(close))
    return apart == 0 or (apart == 1 and close.size > 1)


def _read_only(value):
    """A copy of ``value`` no op can change in place (the caller keeps its own)."""
    if isinstance(value, np.ndarray):
        value = value.copy()
        value.flags.writeable = False
    return value


def _constant(value, where: str):
    array = np.asarray(value) if not isinstance(value, str) else None
    if array is None or array.dtype.kind not in "biuf":
        kind = "complex" if array is not None and array.dtype.kind == "c" else "not a number"
        hint = (" (the complex step measures a derivative: derive it by hand instead)"
                if kind == "complex" else "")  # fmt: skip
        raise NotDerived(f"{where}: the rule's graph holds a constant that is {kind}{hint}")
    if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        raise NotDerived(f"{where}: the rule's graph holds a constant that is not finite")
    if array.size > MAX_ELEMENTS:
        raise NotDerived(f"{where}: the rule's graph holds a constant of {array.size} elements")
    return value if isinstance(value, bool | int | float) else _read_only(array)


def _size(shape) -> int:
    return int(np.prod(shape, dtype=np.float64)) if len(shape) else 1


def _apply(name, args, attrs, where, budget: int) -> tuple:
    """The value of one node, and the elements it read and wrote (its work, at most
    ``budget``: checked before anything is computed)."""
    if name in _PASS_THROUGH and len(args) == 1:
        return args[0], 0
    op = REGISTRY.get(name) if isinstance(name, str) and name in OPS else None
    if op is None:
        allowed = ", ".join(sorted(OPS))
        raise NotDerived(f"{where}: the rule's graph uses {str(name)[:40]!r}, which is not one "
                         f"of the ops a derivative rule computes with here ({allowed}); "
                         "compute with Python operators and F.<op>(...)")  # fmt: skip
    shapes = [np.shape(a) for a in args]
    try:  # the library's shape rule first: nothing too large is ever allocated here
        out_shape = tuple(op.shape(*shapes, **attrs))
        size = _size(out_shape)
    except Exception as e:  # noqa: BLE001 - a graph the shape rules reject is the rule's fault
        raise NotDerived(f"{where}: the rule's graph could not be evaluated: {name} with "
                         f"shapes {shapes}: {type(e).__name__}: {str(e)[:200]}") from None
    work = size + sum(_size(s) for s in shapes)
    if name == "matmul":  # each output element reads a row and a column
        work += size * max((max(s) for s in shapes if s), default=1)
    if size > MAX_ELEMENTS:
        raise NotDerived(f"{where}: {name} would make {size} elements (at most {MAX_ELEMENTS}); "
                         "a derivative rule's values have its inputs' sizes")  # fmt: skip
    if work > budget:
        raise NotDerived(f"{where}: the rule's graph reads and writes more than {MAX_WORK} "
                         "elements; a derived rule needs a few passes over its inputs")  # fmt: skip
    try:
        with np.errstate(all="ignore"):
            value = op.forward(np, *args, **attrs)
    except Exception as e:  # noqa: BLE001 - a graph the kernels reject is the rule's fault
        raise NotDerived(f"{where}: the rule's graph could not be evaluated: {name} raised "
                         f"{type(e).__name__}: {str(e)[:200]}") from None  # fmt: skip
    if isinstance(value, np.ndarray):
        value.flags.writeable = False  # no later node may change it (or a leaf) in place
    return value, work


def evaluate_rule_graph(graph, leaves: dict, watched: list, opname: str) -> list:
    """The gradients ``graph`` computes from ``leaves`` (name -> array), one per input.

    Args:
        graph: what the probe returned (see the module docstring).
        leaves: the values of ``x0, x1, ...``, ``g`` and ``out``.
        watched: the inputs (arrays) no op may be applied to when moved a little.
        opname: the op whose rule this is (for the messages).

    Raises:
        NotDerived: a complex or non-numeric constant, an op applied near an input, a graph
            that is malformed, too large or not evaluable.
    """
    where = f"{opname}.vjp on graph nodes"
    if not isinstance(graph, dict) or not isinstance(graph.get("rows"), list):
        raise NotDerived(f"{where}: the probe returned no graph ({type(graph).__name__})")
    rows, grads = graph["rows"], graph.get("grads")
    if len(rows) > MAX_ROWS or not isinstance(grads, list):
        raise NotDerived(f"{where}: the rule built {len(rows)} nodes or returned no gradients"
                         f" (at most {MAX_ROWS}); a derived rule needs a few")  # fmt: skip
    leaves = {name: _read_only(v) for name, v in leaves.items()}
    values: list = []
    work = 0
    for k, row in enumerate(rows):
        if not (isinstance(row, list) and len(row) == 4 and isinstance(row[1], list)
                and isinstance(row[2], dict)):  # fmt: skip
            raise NotDerived(f"{where}: node {k} of the graph is malformed")
        name, inputs, attrs, payload = row
        if any(not isinstance(i, int) or not 0 <= i < k for i in inputs):
            raise NotDerived(f"{where}: node {k} reads a node that does not come before it")
        if name == "placeholder":
            if payload not in leaves:
                raise NotDerived(f"{where}: the graph reads {payload!r}, which is not one of "
                                 f"the rule's arguments {sorted(leaves)}")  # fmt: skip
            values.append(leaves[payload])
            continue
        if name == "constant":
            values.append(_constant(payload, where))
            continue
        args = [values[i] for i in inputs]
        for i, arg in enumerate(args):
            for j, x in enumerate(watched):
                if x is not None and _near(arg, x):
                    raise NotDerived(
                        f"{where}: the rule applies {name} to input {j} moved a little (its "
                        f"argument {i}): that measures the forward computation, as finite "
                        "differences do; derive the rule by hand from the inputs and the output"
                    )
        value, cost = _apply(name, args, attrs, where, MAX_WORK - work)
        work += cost
        if np.asarray(value).dtype.kind == "c":
            raise NotDerived(f"{where}: {name} gives complex values: the complex step measures "
                             "a derivative; derive it by hand instead")  # fmt: skip
        values.append(value)
    out = []
    for k, index in enumerate(grads):
        if index is None:
            out.append(None)
        elif isinstance(index, int) and 0 <= index < len(values):
            out.append(np.asarray(values[index], dtype=np.float64))
        else:
            raise NotDerived(f"{where}: gradient {k} is not a graph node: {str(index)[:80]}")
    return out
