"""The eager engine (op-as-node): PyTorch's autograd design over the shared op library.

Layer: over ``ops`` and ``backend`` (and ``dtypes``); it never imports ``symbolic`` or
anything above it (``nn``, ``optim``, ``viz`` ...). Its modules are layered too, each importing
only from those below it (``tests/test_import_circles.py``, ``EAGER_LAYERS``; the page
``docs/concepts/layers.md`` draws them), bottom up:

* ``grad_mode``, ``collector``, ``printing``: grad mode, the cycle collector's pacing, repr;
* ``core``: a tensor's state (``init_tensor``), its edge, and the slots for the ``Tensor``
  class and the ``F`` of a differentiable backward, handed over once at import;
* ``node``: backward nodes, AccumulateGrad, saved tensors; ``convert``: Python data, dtype
  and device names and indices into what a tensor holds;
* ``engine``: the core (dependency counts, input buffers, the ready queue, calling nodes);
  ``engine_threads`` (a ready queue and worker thread per device), ``engine_hooks``,
  ``engine_errors`` (anomaly mode, errors naming the node), ``engine_observer``: attached to
  the core without it importing them; ``backward``: the roots and seeds, ``backward()``;
* ``out`` (``out=``), ``dispatch``: ``apply_op``, the hot path, and the generated op methods;
* ``functional`` (the ``F`` for differentiable backward), ``dlpack`` (memory shared with
  PyTorch, numpy and CuPy), ``random`` (generators);
* ``tensor_convert``: devices, dtypes, DLPack and ``new_*`` (a base class of ``Tensor``);
* ``tensor``: the ``Tensor`` class;
* ``factories``, ``function`` (custom Functions), ``autograd`` (``backward`` and ``grad``).
"""

# functional hands core the F of a create_graph backward; the engine_* modules attach to the
# engine's core what it calls but does not define (see engine.py)
from . import engine_errors, engine_hooks, engine_threads, functional  # noqa: F401
from .autograd import backward, grad
from .dispatch import apply_named as apply_op
from .dlpack import from_dlpack
from .engine import GraphTask, InputBuffer
from .engine_observer import Observer, observe
from .factories import (
    BoolTensor,
    ByteTensor,
    DoubleTensor,
    FloatTensor,
    IntTensor,
    LongTensor,
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    manual_seed,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    tensor,
    zeros,
    zeros_like,
)
from .function import Function, FunctionCtx
from .grad_mode import (
    detect_anomaly,
    enable_grad,
    inference_mode,
    is_anomaly_enabled,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from .node import AccumulateGrad, GraphRoot, Node, OpBackward, RemovableHandle, SavedTensor
from .tensor import Tensor

__all__ = [
    "Tensor", "tensor", "apply_op", "backward", "grad", "Function", "FunctionCtx", "from_dlpack",
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "detect_anomaly",
    "inference_mode", "is_anomaly_enabled", "Node", "OpBackward", "AccumulateGrad",
    "GraphRoot", "SavedTensor", "RemovableHandle", "GraphTask", "InputBuffer", "Observer",
    "observe",
    "zeros", "ones", "full", "empty", "randn", "rand", "randint", "arange", "linspace", "eye",
    "zeros_like", "ones_like", "full_like", "empty_like", "randn_like", "rand_like",
    "manual_seed", "as_tensor", "from_numpy", "randperm", "randint_like",
    "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ByteTensor", "BoolTensor",
]  # fmt: skip
