r"""The eager ``Tensor``: an array plus autograd state.

Every op goes through :func:`apply_op`, which runs the shared op's forward and, when grad mode
is on and some input requires grad, records a backward node (``MulBackward``, ...) whose
``next_functions`` point where each input's gradient flows next.

>>> import tinygrad_edu as tg
>>> a = tg.tensor([2.0, 3.0], requires_grad=True)
>>> y = (a * a).sum()
>>> y.grad_fn
<SumBackward #...>
>>> y.backward()
>>> a.grad
tensor([4., 6.])
"""

from __future__ import annotations

import math
import warnings
import weakref

import numpy as _np

from .. import backend
from ..ops import REGISTRY, ShapeError
from . import grad_mode
from .node import AccumulateGrad, OpBackward, SavedTensor, ToCopyBackward, _sequence, place

__all__ = ["Tensor", "apply_op", "tensor"]

# NOTE [Views and version counters]
#     reshape, transpose, expand_dims, broadcast_to, basic slicing (ints, slices, None, ...)
#     and detach() return views: the result shares its base's memory *and* its version
#     counter, so an in-place change made through either is seen by every saved value of
#     both. Where the array library copies instead, the result gets a counter of its own,
#     because a change to it cannot reach the base: integer-array indexing always copies, and
#     reshape copies an array whose memory is not contiguous (e.g. reshaping a transpose).
#     The test is the array's memory owner (following ``base``): a view shares its input's.
#     An in-place op on a view of a tensor that requires grad is refused (see ``_inplace``).
_VIEW_OPS = frozenset({"reshape", "transpose", "expand_dims", "broadcast_to", "getitem"})
_BACKWARD_CLASSES: dict[str, type] = {}
_FLAG_RETAINS, _FLAG_WARNED = 1, 2


def _backward_class(op) -> type:
    cls = _BACKWARD_CLASSES.get(op.name)
    if cls is None:
        cls = type(op.backward_name, (OpBackward,), {"__slots__": ()})
        cls.__doc__ = f"Backward of ``{op.name}``: runs the op's derivative rule."
        _BACKWARD_CLASSES[op.name] = cls
    return cls


def _describe(args) -> str:
    parts = []
    for a in args:
        if isinstance(a, Tensor):
            parts.append(f"{a.shape} {a.dtype} on {a.device}")
        elif hasattr(a, "shape"):
            parts.append(f"array {tuple(a.shape)} {a.dtype}")
        else:
            parts.append(repr(a))
    return ", ".join(parts)


def _explain(op, args, attrs, err: Exception) -> Exception:
    """Turn an array library's error into one that names the op, the shapes and the fix."""
    shapes = [tuple(a.shape) if hasattr(a, "shape") else () for a in args]
    try:
        op.shape(*shapes, **attrs)
    except ShapeError as e:
        return ShapeError(str(e))
    return type(err)(f"{op.name}: failed on inputs ({_describe(args)}): {err}")


def apply_op(op, *args, **attrs) -> Tensor:
    """Run ``op`` on tensors (and Python numbers), recording a backward node when needed.

    This is the hot path of every eager op, so it is written as plain loops.
    """
    datas = []
    dev = None
    needs_grad = False
    for a in args:
        if isinstance(a, Tensor):
            if dev is None:
                dev = a._device
            elif a._device is not dev and a._device != dev:
                raise RuntimeError(
                    f"{op.name}: inputs are on different devices ({dev} and {a._device}); "
                    f"move them to one device first, e.g. x.to('{dev}')"
                )
            datas.append(a.data)
            needs_grad = needs_grad or a._requires_grad
        else:
            datas.append(a)
    d0 = datas[0]
    xp = _np if type(d0) is _np.ndarray else _namespace(dev, d0)
    try:
        out = op.forward(xp, *datas, **attrs)
    except (ValueError, TypeError, IndexError) as e:
        raise _explain(op, args, attrs, e) from e
    counter = None
    if op.name in _VIEW_OPS and _owner(out) is _owner(datas[0]):
        counter = args[0]._version  # a view: in-place changes through it are seen by both
    if not (needs_grad and op.differentiable and _modes.grad):
        return Tensor._make(out, None, counter, 0, dev)
    cls = _BACKWARD_CLASSES.get(op.name) or _backward_class(op)
    node = _new(cls)  # Node.__init__ inlined: this runs once per recorded op
    node.sequence_nr = next(_sequence)
    node.op, node.attrs = op, attrs
    if dev is not _CPU:
        place(node, dev)  # the engine runs it on that device's queue
    saves = op.saves
    edges, meta, saved = [], [], []
    mask = 0
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            if a._requires_grad:
                fn = a.grad_fn
                edges.append((fn, a._output_nr) if fn is not None else (a._grad_accumulator(), 0))
                mask |= 1 << i
            else:
                edges.append(_NO_EDGE)
            d = a.data
            meta.append(d.shape)
            meta.append(d.dtype)
            saved.append(SavedTensor(a) if i in saves else None)
        else:
            edges.append(_NO_EDGE)
            meta.append(getattr(a, "shape", ()))
            meta.append(getattr(a, "dtype", None))
            saved.append(a if i in saves else None)
    node.next_functions = tuple(edges)
    # Small immutable records (flags, shapes, dtypes) are shared between nodes: fewer live
    # objects for the cycle collector to scan, which is what makes long graphs slow to build.
    n = len(args)
    node.needs = _NEEDS[n][mask] if n < 4 else tuple(bool(mask >> i & 1) for i in range(n))
    node.shapes, node.dtypes = _shapes_dtypes(type(out), meta)
    node.saved = _NONES[n] if not saves else tuple(saved)
    result = _new(Tensor)  # Tensor._make inlined
    result.data, result._device, result.grad_fn, result._requires_grad = out, dev, node, True
    result._output_nr, result._grad = 0, None
    result._version = counter if counter is not None else [0]
    if op.saves_output:
        node.saved_out = SavedTensor(result, is_output=True)
        node._freed = False
    else:
        node.saved_out = None
        node._freed = False if saves else None  # None: nothing saved, may run again
    if _modes.anomaly:
        node._record_trace()
    return result


_NO_EDGE = (None, 0)
_new = object.__new__


def _owner(array):
    """The array that owns ``array``'s memory (itself when it is not a view)."""
    while getattr(array, "base", None) is not None:
        array = array.base
    return array
_modes = grad_mode._state
_CPU = backend.parse_device("cpu")
_NEEDS = [[tuple(bool(m >> i & 1) for i in range(n)) for m in range(1 << n)] for n in range(4)]
_NONES = [(None,) * n for n in range(8)]
_META: dict = {}


def _shapes_dtypes(kind: type, meta: list) -> tuple:
    """``(shapes, dtypes)`` of a node's inputs, one shared pair per distinct value.

    The key starts with the array type, so dtypes of different namespaces are never compared.
    """
    key = (kind, *meta)
    try:
        hit = _META.get(key)
    except TypeError:  # an unhashable constant
        hit = None
        key = None
    if hit is None:
        hit = (tuple(meta[0::2]), tuple(meta[1::2]))
        if key is not None and len(_META) < 4096:  # bounded: varying shapes cannot grow it
            _META[key] = hit
    return hit


def _namespace(dev, data):
    if dev is None or dev.type == "cpu":
        return backend.namespace_of(data)
    return backend.get_namespace(dev)


def _edge(a):
    if not isinstance(a, Tensor) or not a._requires_grad:
        return (None, 0)
    if a.grad_fn is not None:
        return (a.grad_fn, a._output_nr)
    return (a._grad_accumulator(), 0)


_OPS = REGISTRY  # ops by name: the Tensor methods below look theirs up here


class Tensor:
    """An n-dimensional array that can record the ops applied to it.

    Attributes:
        data: the backend array (numpy on the CPU, CuPy on CUDA).
        grad_fn: the backward node that produced this tensor (None for leaves).
        name: an optional label used by drawings.
    """

    # Fields every tensor sets are slots; rarely set ones (hooks, labels, flags) take their
    # class default until assigned, which keeps making a tensor cheap.
    __slots__ = ("data", "_device", "_requires_grad", "grad_fn", "_output_nr", "_version",
                 "_grad", "__weakref__", "__dict__")  # fmt: skip
    _grad_acc = _hooks = name = None
    _flags = 0
    __array_ufunc__ = None  # numpy defers to our reflected operators: ndarray * Tensor works

    def __init__(self, data, requires_grad: bool = False, dtype=None, device=None):
        dev = backend.parse_device(device if device is not None else _device_of(data))
        self.data = _to_array(data, dtype, dev)
        self._device = dev
        self._init_state(None, 0, None)
        if requires_grad:
            self.requires_grad = True

    @classmethod
    def _make(cls, data, grad_fn=None, counter=None, output_nr=0, device=None) -> Tensor:
        """Wrap an array computed by an op (no conversion, no copy)."""
        t = object.__new__(cls)
        t.data = data
        t._device = device if device is not None else backend.device_of(data)
        t.grad_fn = grad_fn
        t._requires_grad = grad_fn is not None
        t._output_nr = output_nr
        t._grad = None
        t._version = counter if counter is not None else [0]
        return t

    def _init_state(self, grad_fn, output_nr, counter):
        self.grad_fn = grad_fn
        self._requires_grad = grad_fn is not None
        self._output_nr = output_nr
        self._grad = None
        self._version = counter if counter is not None else [0]

    # -- basic properties ---------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return tuple(self.data.shape)

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def device(self) -> str:
        return str(self._device)

    @property
    def is_leaf(self) -> bool:
        """True when no op recorded this tensor (it has no ``grad_fn``)."""
        return self.grad_fn is None

    @property
    def _version_value(self) -> int:
        return self._version[0]

    def numel(self) -> int:
        return math.prod(self.shape)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def numpy(self):
        """The values as a numpy array on the CPU (shares memory with CPU tensors; a tensor on
        another device, simulated ones included, is copied to the host)."""
        if self._device.type == "sim":
            return backend.to_device(self.data, "cpu", src=self._device)
        return backend.to_numpy(self.data)

    def tolist(self):
        return self.numpy().tolist()

    def item(self) -> float:
        if self.numel() != 1:
            raise ValueError(
                f"item(): the tensor has {self.numel()} elements, not 1 ({self.shape})"
            )
        return self.numpy().reshape(()).item()

    def __float__(self) -> float:
        return float(self.item())

    def __bool__(self) -> bool:
        return bool(self.item())

    def __repr__(self) -> str:
        values = self.numpy()
        body = _np.array2string(values, separator=", ", precision=4)
        extra = "" if values.dtype == _np.float32 else f", dtype={values.dtype}"
        if self._device.type != "cpu":
            extra += f", device='{self.device}'"
        if self.grad_fn is not None:
            extra += f", grad_fn=<{self.grad_fn.name()}>"
        elif self._requires_grad:
            extra += ", requires_grad=True"
        return f"tensor({body}{extra})"

    # -- autograd state -----------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        flag = bool(flag)
        if self.grad_fn is not None and flag != self._requires_grad:
            raise RuntimeError(
                f"requires_grad: this tensor is not a leaf (it was made by "
                f"{self.grad_fn.name()}); only leaf tensors' flags can change. Use "
                "x.detach() to get a leaf that shares the data, then set requires_grad on it."
            )
        if flag and not backend.is_floating(self.dtype):
            raise RuntimeError(
                f"requires_grad: only floating dtypes can require grad, this tensor is "
                f"{self.dtype}; convert first, e.g. x.float()"
            )
        self._requires_grad = flag

    def requires_grad_(self, flag: bool = True) -> Tensor:
        self.requires_grad = flag
        return self

    @property
    def stop_gradient(self) -> bool:
        """Paddle's name: the inverse of ``requires_grad``."""
        return not self._requires_grad

    @stop_gradient.setter
    def stop_gradient(self, flag: bool) -> None:
        self.requires_grad = not flag

    @property
    def grad(self):
        """The accumulated gradient (leaves that require grad, or after ``retain_grad()``)."""
        if self.grad_fn is not None and not self._flags & (_FLAG_RETAINS | _FLAG_WARNED):
            self._flags |= _FLAG_WARNED
            warnings.warn(
                "reading .grad of a non-leaf tensor: it is not filled by backward(). Call "
                ".retain_grad() on it before backward() if you want it.",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            value = value if isinstance(value, Tensor) else Tensor(value, dtype=self.dtype)
            if value.shape != self.shape:
                raise ValueError(
                    f"grad: shape {value.shape} does not match the tensor's {self.shape}"
                )
        self._grad = value

    def zero_grad(self) -> None:
        self._grad = None

    def clear_gradient(self, set_to_zero: bool = True) -> None:
        """Paddle's name: zero the gradient in place (or drop it with ``set_to_zero=False``)."""
        if self._grad is not None and set_to_zero:
            self._grad.data[...] = 0
            self._grad._version[0] += 1
        else:
            self._grad = None

    def _grad_accumulator(self) -> AccumulateGrad:
        # see NOTE [Saved outputs and reference cycles]: the leaf holds its node weakly
        node = self._grad_acc() if self._grad_acc is not None else None
        if node is None:
            node = AccumulateGrad(self)
            if self._hooks:  # the leaf's hooks outlive any one AccumulateGrad node
                node._tensor_hooks = {0: self._hooks}
            self._grad_acc = weakref.ref(node)
        return node

    def _accumulate(self, g, create_graph: bool) -> None:
        """Add ``g`` into ``.grad`` (raw array, or a tensor under ``create_graph``)."""
        # BEGIN SOLUTION A2.3
        if create_graph:
            self._grad = g if self._grad is None else self._grad + g
        elif self._grad is None:
            self._grad = Tensor._make(g.copy() if hasattr(g, "copy") else g, device=self._device)
        else:
            self._grad.data += g
            self._grad._version[0] += 1
        # END SOLUTION

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` during backward."""
        if not self._requires_grad:
            raise RuntimeError("retain_grad: this tensor does not require grad")
        if self.grad_fn is not None and not self._flags & _FLAG_RETAINS:
            self._flags |= _FLAG_RETAINS
            self.grad_fn._retain(self._output_nr, self)

    retain_grads = retain_grad  # Paddle's name

    def register_hook(self, fn):
        """``fn(grad)`` runs when this tensor's gradient is computed; it may return a
        replacement. Hooks run in registration order. Returns a handle with ``remove()``."""
        if not self._requires_grad:
            raise RuntimeError(
                "register_hook: this tensor does not require grad, so no gradient will reach "
                "the hook; set requires_grad=True on it (or on what it is computed from)"
            )
        # BEGIN SOLUTION A2.4
        if self.grad_fn is None:
            return self._grad_accumulator()._add_tensor_hook(0, fn)
        return self.grad_fn._add_tensor_hook(self._output_nr, fn)
        # END SOLUTION

    def detach(self) -> Tensor:
        """A leaf that shares this tensor's data and version counter, outside the graph."""
        return Tensor._make(self.data, counter=self._version)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute the gradient of this tensor w.r.t. the graph leaves, into their ``.grad``."""
        from .autograd import backward  # noqa: PLC0415

        backward((self,), (gradient,), retain_graph, create_graph, inputs)

    # -- devices and dtypes -------------------------------------------------------------------
    def to(self, device=None, dtype=None) -> Tensor:
        """This tensor on another device and/or dtype (``to("cuda")``, ``to("sim:1")``,
        ``to(dtype="float64")``).

        A move is a copy recorded in the graph (``ToCopyBackward``), as in PyTorch: the result
        of moving a tensor that requires grad is not a leaf, and its gradient flows back to the
        original's device. To get a leaf on a device, make it there (``device=``), or move a
        module with ``model.to(device)``.
        """
        out = self
        if dtype is not None:
            out = out.astype(dtype)
        if device is None:
            return out
        dev = backend.parse_device(device)
        if dev == out._device:
            return out
        data = backend.to_device(out.data, dev, src=out._device)
        if not (out._requires_grad and _modes.grad):
            return Tensor._make(data, device=dev)
        node = ToCopyBackward(_edge(out), out._device, dev)
        if _modes.anomaly:
            node._record_trace()
        return Tensor._make(data, node, device=dev)

    def cpu(self) -> Tensor:
        return self.to("cpu")

    # -- DLPack: PyTorch, numpy and CuPy share our memory (see eager/dlpack.py) ----------------
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """This tensor's memory for ``torch.from_dlpack(t)``, ``np.from_dlpack(t)``... (shared,
        not copied; see NOTE [Shared buffers and version counters] in ``eager/dlpack.py``)."""
        from .dlpack import to_dlpack  # noqa: PLC0415

        return to_dlpack(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self) -> tuple:
        from .dlpack import dlpack_device  # noqa: PLC0415

        return dlpack_device(self)

    def cuda(self, index: int = 0) -> Tensor:
        return self.to(f"cuda:{index}")

    def astype(self, dtype) -> Tensor:
        dt = _resolve_dtype(self.data, dtype)
        if dt == self.dtype:
            return self
        return apply_op(_OPS["astype"], self, dtype=dt, src=self.dtype)

    def float(self) -> Tensor:
        return self.astype("float32")

    def double(self) -> Tensor:
        return self.astype("float64")

    # -- ops ---------------------------------------------------------------------------------
    def __add__(self, other):
        return apply_op(_OPS["add"], self, other)

    def __radd__(self, other):
        return apply_op(_OPS["add"], other, self)

    def __sub__(self, other):
        return apply_op(_OPS["sub"], self, other)

    def __rsub__(self, other):
        return apply_op(_OPS["sub"], other, self)

    def __mul__(self, other):
        return apply_op(_OPS["mul"], self, other)

    def __rmul__(self, other):
        return apply_op(_OPS["mul"], other, self)

    def __truediv__(self, other):
        return apply_op(_OPS["div"], self, other)

    def __rtruediv__(self, other):
        return apply_op(_OPS["div"], other, self)

    def __neg__(self):
        return apply_op(_OPS["neg"], self)

    def __pow__(self, exponent):
        if isinstance(exponent, Tensor):
            raise TypeError(
                "pow: the exponent must be a Python number; for x**y use (y * x.log()).exp()"
            )
        return apply_op(_OPS["pow"], self, exponent=exponent)

    def __rpow__(self, base):
        return (self * math.log(base)).exp()

    def __matmul__(self, other):
        return _matmul(self, other)

    def __rmatmul__(self, other):
        return _matmul(other, self)

    def matmul(self, other, trans_A=False, trans_B=False):
        return _matmul(self, other, trans_A, trans_B)

    def __gt__(self, other):
        return apply_op(_OPS["greater"], self, other)

    def __ge__(self, other):
        return apply_op(_OPS["greater_equal"], self, other)

    def __lt__(self, other):
        return apply_op(_OPS["less"], self, other)

    def __le__(self, other):
        return apply_op(_OPS["less_equal"], self, other)

    def __eq__(self, other):
        return apply_op(_OPS["equal"], self, other)

    def __ne__(self, other):
        return apply_op(_OPS["not_equal"], self, other)

    __hash__ = object.__hash__

    def exp(self):
        return apply_op(_OPS["exp"], self)

    def log(self):
        return apply_op(_OPS["log"], self)

    def tanh(self):
        return apply_op(_OPS["tanh"], self)

    def sigmoid(self):
        return apply_op(_OPS["sigmoid"], self)

    def relu(self):
        return apply_op(_OPS["relu"], self)

    def sqrt(self):
        return self**0.5

    def maximum(self, other):
        return apply_op(_OPS["maximum"], self, other)

    def sum(self, axis=None, keepdims=False):
        return apply_op(_OPS["sum"], self, axis=_axis(axis), keepdims=keepdims)

    def mean(self, axis=None, keepdims=False):
        return apply_op(_OPS["mean"], self, axis=_axis(axis), keepdims=keepdims)

    def max(self, axis=None, keepdims=False):
        return apply_op(_OPS["max"], self, axis=_axis(axis), keepdims=keepdims)

    def softmax(self, axis=-1):
        return apply_op(_OPS["softmax"], self, axis=axis)

    def log_softmax(self, axis=-1):
        return apply_op(_OPS["log_softmax"], self, axis=axis)

    def reshape(self, *shape):
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], tuple | list) else shape
        op = _OPS["reshape"]
        op.shape(self.shape, shape=shape)  # -1 and size errors name the op before numpy does
        return apply_op(op, self, shape=tuple(shape))

    view = reshape

    def transpose(self, *axes):
        axes = tuple(axes[0]) if len(axes) == 1 and isinstance(axes[0], tuple | list) else axes
        if len(axes) == 2 and self.ndim != 2:  # PyTorch style: swap two dims
            perm = list(range(self.ndim))
            perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
            axes = tuple(perm)
        return apply_op(_OPS["transpose"], self, axes=axes or None)

    @property
    def T(self):
        return apply_op(_OPS["transpose"], self, axes=None)

    def broadcast_to(self, shape):
        return apply_op(_OPS["broadcast_to"], self, shape=tuple(shape))

    def clone(self):
        return apply_op(_OPS["clone"], self)

    def __getitem__(self, index):
        return apply_op(_OPS["getitem"], self, index=_raw_index(index, self))

    # -- in-place ops --------------------------------------------------------------------------
    def _inplace(self, opname, *others, **attrs) -> Tensor:
        """Run an op and write its result into this tensor's memory.

        The version counter goes up, so backward can tell a saved value was overwritten; a
        non-leaf's ``grad_fn`` is re-based onto the in-place op.
        """
        op = _OPS[opname]
        recording = grad_mode.is_grad_enabled() and (
            self._requires_grad or any(isinstance(o, Tensor) and o._requires_grad for o in others)
        )
        if recording and self._requires_grad and self.grad_fn is None:
            raise RuntimeError(
                f"{opname}_: a leaf tensor that requires grad cannot be changed in place while "
                "grad mode is on (backward would lose the original value). Change it under "
                "`with tg.no_grad():` (as optimizers do) or use an out-of-place op."
            )
        if not recording:
            with grad_mode.no_grad():
                result = apply_op(op, self, *others, **attrs)
            self._write(result.data)
            return self
        view_of = getattr(self.grad_fn, "op", None)
        if view_of is not None and view_of.name in _VIEW_OPS:
            raise RuntimeError(
                f"{opname}_: this tensor is a view ({self.grad_fn.name()}) of a tensor that "
                "requires grad; changing it in place would hide the change from the base's "
                "graph. Use an out-of-place op, or clone() the view first."
            )
        # the old value, as an alias that keeps the old place in the graph
        old = Tensor._make(
            self.data.copy() if 0 in op.saves else self.data,
            self.grad_fn,
            output_nr=self._output_nr,
        )
        old._requires_grad, old._grad_acc = self._requires_grad, self._grad_acc
        result = apply_op(op, old, *others, **attrs)
        self._write(result.data)
        self.grad_fn, self._output_nr, self._requires_grad = result.grad_fn, 0, True
        return self

    def _write(self, values) -> None:
        if tuple(values.shape) != self.shape:
            raise ShapeError(
                f"in-place op: the result has shape {tuple(values.shape)} but the tensor has "
                f"{self.shape}; an in-place op cannot change a tensor's shape"
            )
        self.data[...] = values
        self._version[0] += 1

    def add_(self, other):
        return self._inplace("add", other)

    def sub_(self, other):
        return self._inplace("sub", other)

    def mul_(self, other):
        return self._inplace("mul", other)

    def div_(self, other):
        return self._inplace("div", other)

    def fill_(self, value):
        return self._inplace("fill", value=value)

    def zero_(self):
        return self._inplace("fill", value=0)

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_


def _axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def _raw_index(index, t):
    parts = index if isinstance(index, tuple) else (index,)
    out = []
    xp = None
    for p in parts:
        if isinstance(p, Tensor):
            p = p.data
        elif isinstance(p, list):
            xp = xp or backend.namespace_of(t.data)
            p = xp.asarray(p)
        out.append(p)
    return tuple(out) if isinstance(index, tuple) else out[0]


def _matmul(a, b, trans_A=False, trans_B=False):
    a = a if isinstance(a, Tensor) else Tensor(a)
    b = b if isinstance(b, Tensor) else Tensor(b)
    squeeze = []
    if a.ndim == 1:
        a, squeeze = a.reshape(1, -1), squeeze + [-2]
    if b.ndim == 1:
        b, squeeze = b.reshape(-1, 1), squeeze + [-1]
    out = apply_op(_OPS["matmul"], a, b, trans_A=trans_A, trans_B=trans_B)
    if squeeze:
        shape = list(out.shape)
        for ax in sorted(squeeze):
            shape[ax] = None
        out = out.reshape(*[d for d in shape if d is not None])
    return out


def _device_of(data):
    if isinstance(data, Tensor):
        return data._device
    return backend.device_of(data) if hasattr(data, "shape") else "cpu"


def _resolve_dtype(like, dtype):
    if dtype is None:
        return None
    if isinstance(dtype, str):
        return getattr(backend.namespace_of(like), dtype)
    return dtype


def _to_array(data, dtype, dev):
    """Python data -> float32 (bools stay bool); arrays keep their dtype unless told."""
    if isinstance(data, Tensor):
        data = data.data
    xp = backend.get_namespace(dev)
    if dtype is not None and isinstance(dtype, str):
        dtype = getattr(xp, dtype)
    if not hasattr(data, "shape"):  # Python data
        if dtype is None:
            probe = _np.asarray(data)
            dtype = xp.bool if probe.dtype == _np.bool_ else xp.float32
        return (
            xp.asarray(_np.asarray(data), dtype=dtype)
            if dev.type == "cpu"
            else xp.asarray(data, dtype=dtype)
        )
    arr = backend.to_device(data, dev)
    return arr if dtype is None or arr.dtype == dtype else xp.astype(arr, dtype)


def tensor(data, requires_grad: bool = False, dtype=None, device=None) -> Tensor:
    """Make a leaf tensor. Python data becomes float32; numpy arrays keep their dtype.

    >>> import tinygrad_edu as tg
    >>> tg.tensor([[1, 2], [3, 4]]).dtype
    dtype('float32')
    """
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, device=device)
