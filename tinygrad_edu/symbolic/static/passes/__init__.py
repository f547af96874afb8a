r"""Graph passes: small pure functions, each taking a graph (its outputs) and returning a new
one that computes the same values. One concept a file, each tested alone:

Part of the static-graph compiler (``symbolic/static/``; ``tests/test_import_circles.py``
checks its layers): passes import the engine's ``tensor_node`` and ``graph`` (and, to fold
constants, the executor's ``run_kernel``) and the op library, never a front end or anything
above.

- :func:`~.cse.cse`: common-subexpression elimination (one node per distinct computation);
- :func:`~.simplify.simplify`: algebraic identities (``x * 1``, ``x + 0``, ``ones_like * g``,
  ``sum_to`` to the same shape, double negation);
- :func:`~.fuse.fuse`: the gradient of ``nll_loss(log_softmax(z))`` as one op;
- :func:`~.fold.fold`: constant folding, and static shapes folded into attributes;
- :func:`~.dce.dce`: dead-code elimination (computations read only for their shape);

and :func:`optimize`, which runs them in turn until the graph stops shrinking. The passes
never modify the nodes they are given: draw the graph before and after.

>>> from tinygrad_edu.symbolic import Variable, gradients, topo_sort
>>> t = Variable("t")
>>> f = t.tanh()
>>> (d1,) = gradients(f, [t])
>>> (d2,) = gradients(d1, [t])
>>> len(topo_sort([d2])), len(topo_sort(optimize([d2])))
(23, 8)
"""

from __future__ import annotations

from ...tensor_node import Node
from .cse import cse
from .dce import dce
from .fold import fold
from .fuse import fuse
from .rewrite import node_count, rewrite
from .simplify import simplify

__all__ = ["optimize", "DEFAULT_PIPELINE", "cse", "simplify", "fuse", "fold", "dce", "rewrite",
           "node_count"]  # fmt: skip

DEFAULT_PIPELINE = (cse, simplify, fuse, fold, dce)


def optimize(outputs, passes=DEFAULT_PIPELINE, max_rounds: int = 10) -> list:
    """Run ``passes`` over ``outputs`` in turn, again and again while the graph shrinks (at
    most ``max_rounds`` rounds); returns the new outputs (a list, in the same order)."""
    outputs = [outputs] if isinstance(outputs, Node) else list(outputs)
    size = node_count(outputs)
    for _ in range(max_rounds):
        for p in passes:
            outputs = p(outputs)
        new_size = node_count(outputs)
        if new_size >= size:
            break
        size = new_size
    return outputs
