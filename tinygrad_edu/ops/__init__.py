"""The op library: every op defined once, for both engines.

An op is a subclass of :class:`Op` with a forward computation over an array namespace ``xp``,
a shape rule, and one derivative rule (``vjp``) written against ``F``, an engine's functional
namespace (see :mod:`tinygrad_edu.ops.vjp_namespace`). Raw arrays, eager tensors and symbolic
nodes all run the same rule.

The op library sits on ``backend`` alone (layer 1 of ``docs/concepts/layers.md``): it never
imports an engine, ``nn`` or ``viz``. An engine hands it what it needs (``apply``, ``F``, an
:class:`~tinygrad_edu.ops.layer_surface.Engine`).

Adding an op (say ``flip``) takes the library file of its concept (and its rows file, where
there is one), rows in three test tables and a regenerated docs page; the engines, ``Tensor``
and ``Node`` are not edited:

1. the op class in the file of its concept (``flip`` in ``indexing.py``), decorated with
   ``@register``: ``name``, ``arity``, ``saves``/``saves_output``, ``forward``, ``shape``
   (when not plain broadcasting) and ``vjp``; and beside it one ``declare(...)`` row of the
   surface table (:mod:`tinygrad_edu.ops.surface`), which gives ``Tensor.flip``,
   ``tg.flip`` and the symbolic ``Node.flip`` (a layer function of ``nn.functional`` is
   declared with ``declare_layer`` instead, :mod:`tinygrad_edu.ops.layer_surface`). Where
   the argument parsing is long, the rows live in a file of their own beside the ops:
   ``shape_args.py``, ``arithmetic_args.py`` and ``indexing_args.py`` (``flip``'s row)
   beside ``shape.py``, ``arithmetic.py`` and ``indexing.py``;
   its ONNX form is part of the class too (``onnx = "Exp"``, a method ``onnx(self, ex, node,
   args)`` writing a decomposition, or ``NoOnnx("why not")``), then ``python
   docs/onnx_ops.py`` regenerates the list in ``docs/concepts/compiler.md``;
2-4. its entries in the per-op test table, ``tests/opinfo``: a derivative ``Case``
   (``grad_*.py``: the rule against central differences in both engines;
   ``tests/ops/test_gradcheck.py`` fails for a differentiable op without one), a forward
   example (``kernel_core.py``: the kernel on ``array_api_strict``;
   ``tests/ops/test_strict_namespace.py`` fails for an op without one) and a row against
   PyTorch (``torch_*.py``: ``tests/compare/test_coverage.py`` fails for a public name
   without one);
5. ``python docs/pytorch_names.py`` to regenerate the name tables of
   ``docs/coming-from-pytorch.md`` (``tests/test_coming_from_pytorch.py`` checks them).

Shape errors worth a test go in ``tests/ops/test_shape_rules.py``.
"""

from . import (  # noqa: F401  (importing a module registers its ops)
    activation,
    arithmetic,
    arithmetic_args,
    conv,
    conv_composed,
    creation,
    dropout,
    embedding,
    indexing,
    indexing_args,
    joins,
    linalg,
    logic,
    losses,
    matrix,
    normalization,
    padding,
    pooling,
    pooling_adaptive,
    random,
    reductions,
    rnn,
    scans,
    shape,
    shape_args,
    sorting,
    special,
    statistics,
    unary,
    upsampling,
)
from .base import (
    REGISTRY,
    IndexShapeError,
    NoOnnx,
    Op,
    ShapeError,
    broadcast_shapes,
    get_op,
    normalize_axes,
    register,
)
from .vjp_namespace import RAW, Functional, RawFunctional

__all__ = [
    "Op",
    "ShapeError",
    "IndexShapeError",
    "NoOnnx",
    "REGISTRY",
    "register",
    "get_op",
    "broadcast_shapes",
    "normalize_axes",
    "Functional",
    "RawFunctional",
    "RAW",
]
