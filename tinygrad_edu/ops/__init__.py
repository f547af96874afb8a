"""The op library: every op defined once, for both engines.

An op is a subclass of :class:`Op` with a forward computation over an array namespace ``xp``,
a shape rule, and one derivative rule (``vjp``) written against ``F``, an engine's functional
namespace (see :mod:`tinygrad_edu.ops.functional`). Raw arrays, eager tensors and symbolic
nodes all run the same rule.

Adding an op touches these places, and only these:

1. the op class here, in the file of its concept (``elementwise``, ``reduce``, ``shape``,
   ``linalg``, ``nn``), decorated with ``@register``: ``name``, ``arity``, ``saves``/
   ``saves_output``, ``forward``, ``shape`` (when not plain broadcasting) and ``vjp``;
2. a method on the eager ``Tensor`` (``tinygrad_edu/eager/tensor.py``) and, when it is part of
   the public function set, a function in ``tinygrad_edu/eager/functional.py``;
3. a method on the symbolic ``Node`` and a function in ``tinygrad_edu/symbolic/api.py``;
4. a line in ``tests/ops/test_gradcheck.py``'s table of cases, which checks the rule against
   central differences in both engines (and on ``array_api_strict``).
"""

from . import (  # noqa: F401  (importing a module registers its ops)
    activation,
    conv,
    creation,
    elementwise,
    embedding,
    indexing,
    joins,
    linalg,
    matrix,
    nn,
    norm,
    pad,
    pointwise,
    pool,
    random,
    reduce,
    reductions,
    rnn,
    shape,
    sorting,
)
from .base import (
    REGISTRY,
    IndexShapeError,
    Op,
    ShapeError,
    broadcast_shapes,
    get_op,
    normalize_axes,
    register,
)
from .functional import RAW, Functional, RawFunctional

__all__ = [
    "Op",
    "ShapeError",
    "IndexShapeError",
    "REGISTRY",
    "register",
    "get_op",
    "broadcast_shapes",
    "normalize_axes",
    "Functional",
    "RawFunctional",
    "RAW",
]
