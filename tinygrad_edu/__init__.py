"""tinygrad_edu: an educational autograd library.

Two engines over one op library: the eager engine (backward ops are the nodes, PyTorch's
design) is the top-level API, spelled as in PyTorch (``tg.tensor``, ``tg.cat``, ``x.sum(dim=1)``,
``tg.no_grad()``, ``tg.float32`` ...); the symbolic engine (tensors are the nodes, ops the
edges, CSE599W's design) lives in :mod:`tinygrad_edu.symbolic`.

Where things live, in layers, bottom first: a unit imports only from the layers below it,
never from its own or above, and no module imports in a circle, not even inside a function
(``docs/concepts/layers.md`` draws it; ``tests/test_import_circles.py`` checks it). A lower
unit that needs something from above is handed it (a registration, an argument).

0. ``backend`` (devices, array namespaces), ``cli``, ``size`` (``tg.Size``);
1. ``dtypes``, ``testing`` (``tg.testing.assert_close``);
2. ``ops``: every op once (forward, shape rule, derivative rule) and the declarations that
   generate both engines' public functions;
3. ``eager`` (``tg.Tensor``, PyTorch's design) and ``symbolic`` (graphs of tensors), side by
   side: neither imports the other;
4. ``linalg``, ``amp``, ``utils`` (``tg.utils.data``), ``special``, ``fft``, ``jit``,
   ``distributions``; 5. ``cuda``; 6. ``backends``,
   ``accelerator``;
7. ``autograd`` (``tg.autograd``), ``nn``, ``optim``, ``data`` (the lessons' datasets);
8. ``compiler`` (``tg.compile``: eager code traced into the symbolic engine);
9. this ``__init__``: the public names, ``import tinygrad_edu as tg``;
10. ``viz`` (drawings, the stepper), ``__main__``.

The course (the lessons' checks, the autograder kit, the demo) is a sibling package built
from the same repository: it imports the library, never the reverse.

>>> import tinygrad_edu as tg
>>> x = tg.tensor([1.0, 2.0], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad
tensor([2., 4.])
"""

from . import autograd, eager
from .backend import device, get_default_device, set_default_device
from .backends import get_float32_matmul_precision, set_float32_matmul_precision
from .dtypes import (
    bool,
    double,
    dtype,
    finfo,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    iinfo,
    int,
    int8,
    int16,
    int32,
    int64,
    is_floating_point,
    long,
    set_default_dtype,
    short,
    uint8,
)
from .eager import (
    BoolTensor,
    ByteTensor,
    DoubleTensor,
    FloatTensor,
    Function,
    IntTensor,
    LongTensor,
    Tensor,
    arange,
    as_tensor,
    detect_anomaly,
    empty,
    empty_like,
    enable_grad,
    eye,
    from_dlpack,
    from_numpy,
    full,
    full_like,
    grad,
    inference_mode,
    is_grad_enabled,
    linspace,
    manual_seed,
    no_grad,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    set_grad_enabled,
    tensor,
    zeros,
    zeros_like,
)
from .eager.factories import empty_strided
from .eager.functional import FUNCTIONS as _FUNCTIONS
from .eager.functional import softmax_cross_entropy, sum_to
from .eager.grad_mode import (
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_inference_mode_enabled,
    set_anomaly_enabled,
)
from .eager.printing import set_printoptions
from .eager.random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    seed,
    set_rng_state,
)
from .ops import ShapeError
from .size import Size

__version__ = "0.1.0"

import sys as _sys  # noqa: E402  (for the import paths registered below)
from types import ModuleType as _ModuleType  # noqa: E402

# The op functions (tg.exp, tg.sum, tg.cat, tg.where ...) are generated from the op library's
# surface table together with the Tensor methods; see tinygrad_edu.ops.surface. They take
# PyTorch's out= keyword too, added once for all of them (tinygrad_edu.eager.out).
globals().update(_FUNCTIONS)


def is_tensor(obj) -> bool:
    """True for a :class:`Tensor`."""
    return isinstance(obj, Tensor)


def numel(input) -> int:
    """The number of elements of ``input``."""
    return input.numel()


class _PathModule(_ModuleType):
    """A PyTorch import path whose code lives in a lower layer: ``tinygrad_edu.onnx`` (in
    :mod:`tinygrad_edu.compiler.onnx`) and ``tinygrad_edu.serialization`` (in
    :mod:`tinygrad_edu.nn.serialization`). Registered in ``sys.modules`` here, so that ``import
    tinygrad_edu.onnx`` and ``from tinygrad_edu.serialization import save`` work without a
    top-level file (each would be a unit of its own in the layers); its names load on first
    use, so importing the package stays light (no onnx, no compiler until asked)."""

    def __init__(self, name: str, doc: str, names: list, load):
        super().__init__(f"{__name__}.{name}", doc)
        self.__all__ = list(names)
        self._load = load

    def __getattr__(self, attr):
        if attr in self.__all__:
            value = getattr(self._load(), attr)
            setattr(self, attr, value)
            return value
        raise AttributeError(f"module {self.__name__!r} has no attribute {attr!r}")

    def __dir__(self):
        return sorted({*super().__dir__(), *self.__all__})


def _onnx_home():
    from .compiler import onnx

    return onnx


def _serialization_home():
    from .nn import serialization

    return serialization


onnx = _PathModule("onnx", """``tg.onnx``: PyTorch's ``torch.onnx.export(model, args, f)``.

``import tinygrad_edu.onnx`` then ``tinygrad_edu.onnx.export(model, (x,), "model.onnx",
input_names=["x"], output_names=["y"])``: the model traced once and written by the symbolic
engine's ONNX exporter (see :mod:`tinygrad_edu.compiler.onnx`; needs the ``onnx`` package).
""", ["export", "is_in_onnx_export"], _onnx_home)  # fmt: skip
serialization = _PathModule("serialization", """``tg.serialization``: PyTorch's
``torch.serialization.save``/``load``, the same functions as ``tg.save``/``tg.load`` (files
are ``.npz`` archives; a whole module is pickled into one and loads only allowed classes: see
:mod:`tinygrad_edu.nn.serialization` and :mod:`tinygrad_edu.nn.unpickler`).
""", ["save", "load", "add_safe_globals", "safe_globals", "get_safe_globals",
     "clear_safe_globals"], _serialization_home)  # fmt: skip
_sys.modules[onnx.__name__] = onnx
_sys.modules[serialization.__name__] = serialization


__all__ = [
    "Tensor", "tensor", "as_tensor", "from_numpy", "grad", "Function", "no_grad",
    "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled", "detect_anomaly",
    "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "set_anomaly_enabled",
    "is_inference_mode_enabled",
    "zeros", "ones", "full", "empty", "randn", "rand", "randint", "arange", "linspace", "eye",
    "zeros_like", "ones_like", "full_like", "empty_like", "randn_like", "rand_like",
    "manual_seed", "randperm", "randint_like", "is_tensor", "numel", "sum_to",
    "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ByteTensor", "BoolTensor",
    "softmax_cross_entropy", "ShapeError",
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
    "half", "float", "double", "short", "int", "long",
    "autograd", "eager", "nn", "symbolic", "optim", "linalg", "from_dlpack", "save", "load",
    "device", "set_default_device", "get_default_device", "dtype", "set_default_dtype",
    "get_default_dtype", "finfo", "iinfo", "is_floating_point", "Size", "Generator",
    "default_generator", "seed", "initial_seed", "get_rng_state", "set_rng_state",
    "cuda", "backends", "accelerator", "testing", "utils", "amp", "autocast", "onnx",
    "serialization", "set_float32_matmul_precision",
    "get_float32_matmul_precision",
    "special", "fft", "jit", "distributions", "set_printoptions", "empty_strided",
    *sorted(_FUNCTIONS),
]  # fmt: skip


def __getattr__(name):
    # subpackages load on first use: `import tinygrad_edu as tg; tg.nn.Linear(...)`
    if name in ("nn", "symbolic", "optim", "viz", "data", "compiler", "linalg",
                "cuda", "backends", "accelerator", "testing", "utils", "amp", "special",
                "fft", "jit", "distributions"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    if name == "compile":  # torch.compile: the eager engine traced into the symbolic one
        from .compiler import compile

        return compile
    if name == "random":  # torch.random.manual_seed, torch.random.get_rng_state ...
        from .eager import random

        return random
    if name == "autocast":  # torch.autocast(device_type=..., dtype=...)
        from .amp import autocast

        return autocast
    if name == "bfloat16":
        raise AttributeError("tinygrad_edu has no bfloat16: numpy, which holds every tensor's "
                             "values, has no such dtype; use tg.float16 (x.half()) or "
                             "tg.float32 (x.float())")
    if name in ("save", "load"):  # torch.save(model.state_dict(), path), torch.load(path)
        from .nn import module

        return getattr(module, name)
    raise AttributeError(f"module 'tinygrad_edu' has no attribute {name!r}")
