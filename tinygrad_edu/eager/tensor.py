r"""The eager ``Tensor``: an array plus autograd state.

Every op goes through :func:`~tinygrad_edu.eager.dispatch.apply_op`, which runs the shared
op's forward and, when grad mode is on and some input requires grad, records a backward node
(``MulBackward0``, ...) whose ``next_functions`` point where each input's gradient flows next.

The op methods (``x.exp()``, ``x.sum(dim=1)``, ``x + y``, ``x.add_(y)`` ...) are not written
here: each op declares its public names once, beside its definition in ``ops/``, and
:mod:`~tinygrad_edu.eager.dispatch` generates them. What stays here is what only a tensor
has: its state, indexing, in-place writes, dtypes and devices.

>>> import tinygrad_edu as tg
>>> a = tg.tensor([2.0, 3.0], requires_grad=True)
>>> y = (a * a).sum()
>>> y.grad_fn
<SumBackward0 #...>
>>> y.backward()
>>> a.grad
tensor([4., 6.])
"""

from __future__ import annotations

import math
import sys
import warnings
import weakref

import numpy as _np

from .. import backend
from ..ops import REGISTRY
from . import core, grad_mode
from .anatomy import Anatomy
from .backward import backward as _backward
from .convert import (
    _device_of,
    _legacy_data,
    _raw_index,
    _to_array,
)
from .dispatch import METHODS, _as_array, _foreign, apply_op, type_name
from .dispatch import unrecorded_getitem as _unrecorded_getitem
from .grad_mode import RARE as _RARE
from .inplace import _NO_GRAD_VIEW, InPlace, _check_writable, _replay, _write_error
from .node import AccumulateGrad, RemovableHandle
from .printing import tensor_repr
from .tensor_convert import Conversions

__all__ = ["Tensor", "apply_op"]

_FLAG_RETAINS, _FLAG_WARNED = 1, 2
_ndarray = _np.ndarray

# NOTE [Keeping a gradient without a copy]
#     The first gradient that reaches a leaf becomes its ``.grad``, and later ones are added
#     into it in place. If that array were also held elsewhere (a gradient that ``add`` sent
#     to two leaves, a view of a saved value, an array a hook kept), the next ``+=`` would
#     write through it, so it is copied. Most gradients are fresh arrays nobody else holds
#     (the product that computed a weight's gradient): PyTorch's AccumulateGrad keeps those
#     as they are, judging by the reference count, and so do we. For the MLP step that saves
#     copying both weight gradients (about 4% of the step). The cost to a reader: the test
#     counts references, so it depends on how the engine calls ``_accumulate`` (the engine's
#     input buffer, ``_accumulate``'s and ``_unshared``'s arguments, ``getrefcount``'s own:
#     4); any other caller holds one more and gets a copy, and an interpreter whose counts we
#     have not checked always copies.
_CHECKED = sys.implementation.name == "cpython" and sys.version_info < (3, 14)
_REFS_WHEN_UNSHARED = 4 if _CHECKED else 0


def _unshared(g) -> bool:
    """True when ``g`` is a numpy array that owns its memory and nobody else holds."""
    return (
        type(g) is _ndarray
        and g.base is None
        and g.flags.writeable
        and sys.getrefcount(g) <= _REFS_WHEN_UNSHARED
    )


_edge = core.edge


class Tensor(InPlace, Anatomy, Conversions):
    """An n-dimensional array that can record the ops applied to it.

    ``Tensor(data)`` wraps ``data`` as PyTorch's legacy ``torch.Tensor(data)`` does: Python
    data becomes float32, and an array is used as is (shared, not copied). ``Tensor(2, 3)``
    (sizes) is a 2x3 tensor, zero-filled (PyTorch leaves it uninitialised), and ``Tensor()``
    an empty one. Make tensors with
    ``tg.tensor`` (always a copy), ``tg.as_tensor``/``tg.from_numpy`` (shared memory) or the
    factories.

    Attributes:
        data: PyTorch's ``x.data``: a tensor sharing this one's memory, outside autograd.
        _data: the backend array itself (numpy on the CPU, CuPy on CUDA), what ops compute on.
        grad_fn: the backward node that produced this tensor (None for leaves).
        name: an optional label used by drawings.
    """

    # Fields every tensor sets are slots; rarely set ones (hooks, labels, flags) take their
    # class default until assigned, which keeps making a tensor cheap.
    __slots__ = ("_data", "_device", "_requires_grad", "_grad_fn", "_output_nr", "_counter",
                 "_grad", "_base", "__weakref__", "__dict__")  # fmt: skip
    _grad_acc = _hooks = _post_acc_hooks = name = None
    _flags = 0
    # a view's record (see NOTE [Views and version counters] in dispatch.py): set on views only
    _view_steps, _view_version, _view_no_grad, _view_multi = (), 0, False, None
    __array_ufunc__ = None  # numpy defers to our reflected operators: ndarray * Tensor works

    def __init__(self, *data, requires_grad: bool = False, dtype=None, device=None):
        data = _legacy_data(data, dtype)
        dev = backend.parse_device(device if device is not None else _device_of(data))
        core.init_tensor(self, _to_array(data, dtype, dev), dev)
        if requires_grad:
            self.requires_grad = True

    @classmethod
    def _make(cls, data, grad_fn=None, counter=None, output_nr=0, device=None) -> Tensor:
        """Wrap an array computed by an op (no conversion, no copy; scalars become 0-d)."""
        if type(data) is not _ndarray:
            data = _as_array(backend.namespace_of(data), data)
        device = device if device is not None else backend.device_of(data)
        return core.init_tensor(object.__new__(cls), data, device, grad_fn, counter, output_nr)

    # -- basic properties ---------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return tuple(self._data.shape)

    @property
    def dtype(self):
        return self._data.dtype

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def device(self) -> str:
        return backend.device_name(self._device)  # a str: "cpu", "cuda:0"; .type, .index

    @property
    def data(self) -> Tensor:
        """PyTorch's ``x.data``: a new tensor on this one's memory that autograd does not see.

        It is a leaf that does not require grad, with a version counter of its own, so a
        change through it (``p.grad.data.zero_()``, ``m.weight.data.normal_(0, 0.02)``) is
        not checked against values saved for backward: prefer ``x.detach()`` (which shares
        the counter) or ``with tg.no_grad(): x.copy_(...)``. The backend array itself is
        ``x._data``.
        """
        return core.new_tensor(self._data, self._device)

    @data.setter
    def data(self, value) -> None:
        """``x.data = t``: ``x`` takes ``t``'s memory, shape, dtype and device (no copy, and no
        graph: PyTorch's way to swap a weight's values). An array of ``x``'s own backend is
        taken as it is."""
        if isinstance(value, Tensor):
            array, device = value._data, value._device
        elif (hasattr(value, "shape") and not _foreign(value)
              and backend.namespace_of(value) is backend.namespace_of(self._data)):  # fmt: skip
            array, device = value, self._device
        else:
            raise TypeError(
                f"data: x.data must be set to a tensor, got {type_name(value)}; to fill "
                "x with values use `with tg.no_grad(): x.copy_(tg.as_tensor(values))`"
            )
        if self._requires_grad and not backend.is_floating(array.dtype):
            raise RuntimeError(
                f"data: this tensor requires grad, so its data must be floating point, got "
                f"{array.dtype}; convert first (t.float()) or set requires_grad=False"
            )
        self._data, self._device = array, device

    @property
    def is_leaf(self) -> bool:
        """True when no op recorded this tensor (it has no ``grad_fn``)."""
        return self.grad_fn is None

    @property
    def _version(self) -> int:
        """PyTorch's ``x._version``: how many in-place changes this tensor's memory has seen.
        The counter itself, a one-element list shared by views and ``detach()``, is
        ``x._counter`` (see NOTE [Views and version counters] in dispatch.py)."""
        return self._counter[0]

    def numel(self) -> int:
        return math.prod(self.shape)

    nelement = numel

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    def is_floating_point(self) -> bool:
        return backend.is_floating(self.dtype)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        if type(self).__getitem__ is not Tensor.__getitem__:  # a subclass indexes its own way
            return (self[i] for i in range(self.shape[0]))
        return self._rows(self.shape[0])

    def _rows(self, n):
        """``self[0]``, ``self[1]``, ... ``self[n - 1]``, made one at a time as they are asked
        for. ``(i, ...)`` is what ``_raw_index`` makes of an int ``i``, so this is ``self[i]``
        without re-reading the index (NOTE [Unrecorded indexing] in dispatch.py)."""
        for i in range(n):
            index = (i, Ellipsis)
            row = _unrecorded_getitem(self, index)
            yield apply_op(_GETITEM, self, index=index) if row is None else row

    def __contains__(self, element) -> bool:
        """``v in x``: whether some element of ``x`` equals ``v`` (as in PyTorch)."""
        return bool((self == element).any())

    def numpy(self, *, force: bool = False):
        """The values as a numpy array on the CPU (shares memory with CPU tensors; a tensor on
        another device, simulated ones included, is copied to the host).

        As in PyTorch, a tensor that requires grad is refused while grad mode is on: numpy
        arrays are outside autograd, so nothing computed from the array reaches ``.grad``.
        Write ``t.detach().numpy()`` to say the graph ends there, or ``t.numpy(force=True)``
        (which detaches first)."""
        if force is not False and force is not True:
            raise TypeError(f"numpy(): argument 'force' must be bool, not {type(force).__name__}")
        if not force and self._requires_grad and grad_mode.is_grad_enabled():
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        if self._device.type == "sim":
            return backend.to_device(self._data, "cpu", src=self._device)
        return backend.to_numpy(self._data)

    def __array__(self, dtype=None, copy=None):
        # numpy's protocol: copy=True asks for memory of its own (np.array(t, copy=True),
        # np.copy(t)); without it numpy may share the tensor's memory, as torch's does
        out = self.numpy()  # refuses a tensor that requires grad, as torch's __array__ does
        if dtype is not None and out.dtype != dtype:
            return out.astype(dtype)
        return out.copy() if copy else out

    # tolist, item and repr read through numpy(force=True): they work on a tensor that
    # requires grad (as in PyTorch), and every read still goes through ``Tensor.numpy``
    def tolist(self):
        return self.numpy(force=True).tolist()

    def item(self):
        """The one value as a Python number (float, int or bool)."""
        if self.numel() != 1:
            raise RuntimeError(
                f"item(): the tensor has {self.numel()} elements, not 1 (shape {self.shape}); "
                "index or reduce it first"
            )
        return self.numpy(force=True).reshape(()).item()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __format__(self, spec: str) -> str:
        """``f"{loss:.4f}"``: a 0-d tensor formats as its number (PyTorch's rule); others only
        without a format spec (as their ``str``)."""
        if self.ndim == 0:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(
                f"the truth value of a tensor with {self.numel()} elements is ambiguous; use "
                ".any() or .all(), or compare one element"
            )
        return bool(self.item())

    def __index__(self) -> int:
        d = self._data
        if not _RARE[0] and type(d) is _ndarray and d.ndim == 0 and d.dtype.kind in "iub":
            # ``data[i:i + n]`` with a 0-d integer tensor ``i``: numpy asks for the int. This
            # is what the checks and ``int(self.item())`` below give for a 0-d integer (or
            # bool) numpy array; with a rare mode on (a tg.compile trace must see the read
            # through ``item``), or for anything else, the plain way runs.
            return int(d)
        if backend.is_floating(self.dtype) or self.numel() != 1:
            raise TypeError(f"only one-element integer tensors can be used as an index, not "
                            f"{self.dtype} of shape {self.shape}")  # fmt: skip
        return int(self.item())

    def __repr__(self) -> str:
        """PyTorch's layout (see :mod:`~tinygrad_edu.eager.printing`)."""
        device = None if self._device.type == "cpu" else self.device
        return tensor_repr(self.numpy(force=True), device,
                           None if self.grad_fn is None else self.grad_fn.name(),
                           self._requires_grad)  # fmt: skip

    # -- autograd state -----------------------------------------------------------------------
    @property
    def grad_fn(self):
        """The backward node that made this tensor (None for leaves). A view whose base was
        changed in place since replays itself from the base first (see NOTE [Views and
        version counters] in ``dispatch.py``)."""
        if self._base is not None and self._view_version != self._counter[0]:
            self._replay_history()
        return self._grad_fn

    @grad_fn.setter
    def grad_fn(self, node) -> None:
        self._grad_fn = node
        if self._base is not None:
            self._view_version = self._counter[0]  # a history set now is current

    def _replay_history(self) -> None:
        """Rebuild a stale view's ``grad_fn`` by replaying its view ops on its base (PyTorch's
        ``VariableHooks::grad_fn``, with view replay: SliceBackward0 where it says
        AsStridedBackward0)."""
        base = self._base
        if self._grad_fn is None and not base._requires_grad:
            self._view_version = self._counter[0]
            return  # outside the graph, as when it was made
        if self._view_no_grad:
            if not grad_mode.is_grad_enabled():
                return
            changed = "its base or another view of its base has been modified"
            raise RuntimeError(f"grad_fn: {_NO_GRAD_VIEW % changed}")
        self._view_version = self._counter[0]
        with grad_mode.enable_grad():
            view = _replay(base, self._view_steps)
        self._rebase(view._grad_fn)

    def _rebase(self, node) -> None:
        """Give this tensor the history ``node`` (an in-place op's, or a view's replay). A
        retained gradient moves to the new node, as in PyTorch (hooks stay with the old)."""
        old, nr = self._grad_fn, self._output_nr
        self._grad_fn, self._output_nr, self._requires_grad = node, 0, True
        if self._flags & _FLAG_RETAINS:
            if old is not None and old._retained:
                old._retained.pop(nr, None)
            node._retain(0, self)

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

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    @property
    def stop_gradient(self) -> bool:
        """Paddle's name: the inverse of ``requires_grad``."""
        return not self._requires_grad

    @stop_gradient.setter
    def stop_gradient(self, flag: bool) -> None:
        self.requires_grad = not flag

    #: Paddle's ``persistable``: whether the tensor is part of a model's saved state. True
    #: for parameters and for buffers that ``state_dict`` saves, False for other tensors.
    persistable = False

    @property
    def grad(self):
        """The accumulated gradient (leaves that require grad, or after ``retain_grad()``)."""
        # (as in PyTorch, only while it has none: backward(inputs=[h]) fills a non-leaf's)
        if (self.grad_fn is not None and self._grad is None
                and not self._flags & (_FLAG_RETAINS | _FLAG_WARNED)):
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
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}; wrap it, e.g. x.grad = tg.full_like(x, {value!r:.20})"
                )
            if value.shape != self.shape:
                raise RuntimeError(
                    f"grad: attempting to assign a gradient of shape {value.shape} to a tensor "
                    f"of shape {self.shape}; they must be the same size"
                )
            if value.dtype != self.dtype or value._device != self._device:
                raise RuntimeError(
                    f"grad: attempting to assign a gradient of {value.dtype} on {value.device} "
                    f"to a {self.dtype} tensor on {self.device}; convert it first, e.g. "
                    "g.to(x)"
                )
        self._grad = value

    def zero_grad(self) -> None:
        self._grad = None

    def clear_gradient(self, set_to_zero: bool = True) -> None:
        """Paddle's name: zero the gradient in place (or drop it with ``set_to_zero=False``)."""
        if self._grad is not None and set_to_zero:
            self._grad._data[...] = 0
            self._grad._counter[0] += 1
        else:
            self._grad = None

    def _grad_accumulator(self) -> AccumulateGrad:
        # see NOTE [Saved outputs and reference cycles]: the leaf holds its node weakly
        node = self._grad_acc() if self._grad_acc is not None else None
        if node is None:
            node = AccumulateGrad(self)
            if self._hooks:  # the leaf's hooks outlive any one AccumulateGrad node
                node._tensor_hooks, node._hooked = {0: self._hooks}, True
            if self._post_acc_hooks:  # so do its post-accumulate-grad hooks
                node._post_hooks, node._hooked = self._post_acc_hooks, True
            self._grad_acc = weakref.ref(node)
        return node

    def _accumulate(self, g, create_graph: bool) -> None:
        """Add ``g`` into ``.grad`` (raw array, or a tensor under ``create_graph``)."""
        # BEGIN SOLUTION A2.3
        if create_graph:
            self._grad = g if self._grad is None else self._grad + g
        elif self._grad is None:
            if not _unshared(g):  # see NOTE [Keeping a gradient without a copy]
                g = backend.namespace_of(g).asarray(g, copy=True)
            self._grad = core.new_tensor(g, self._device)
        else:
            self._grad._data += g
            self._grad._counter[0] += 1
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
        replacement of the same shape. Hooks run in registration order. Returns a handle
        with ``remove()``."""
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

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs after a backward has added into this leaf's ``.grad`` (an
        optimizer step fused into backward, as in PyTorch); it must return None. Hooks run in
        registration order, after the hooks of :meth:`register_hook`. Returns a handle with
        ``remove()``. ``tg.grad`` fills no ``.grad``, so it runs none."""
        if not self._requires_grad:
            raise RuntimeError(
                "register_post_accumulate_grad_hook: cannot register a hook on a tensor that "
                "doesn't require gradient; set requires_grad=True on it first"
            )
        if self.grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors (this one "
                f"was made by {self.grad_fn.name()}); register it on the leaf, or use "
                "register_hook(fn) to see this tensor's gradient"
            )
        node = self._grad_acc() if self._grad_acc is not None else None
        if self._post_acc_hooks is None:  # one list, shared with every AccumulateGrad node
            live = node._post_hooks if node is not None else None  # (its own post-hooks)
            self._post_acc_hooks = live if live is not None else []
        tensor = weakref.ref(self)  # the node holds the leaf already; the hook need not

        def after_accumulate(grad_inputs, grad_outputs):
            if hook(tensor()) is not None:
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")

        self._post_acc_hooks.append(after_accumulate)
        if node is not None:  # a live AccumulateGrad node: it runs the hooks from now on
            node._post_hooks, node._hooked = self._post_acc_hooks, True
        return RemovableHandle(self._post_acc_hooks, after_accumulate)

    def detach(self) -> Tensor:
        """A leaf that shares this tensor's data and version counter, outside the graph."""
        return Tensor._make(self._data, counter=self._counter, device=self._device)

    def detach_(self) -> Tensor:
        """Detach this tensor from the graph in place: it becomes a leaf that does not require
        grad, and returns itself (PyTorch's ``x.detach_()``). The graph recorded before is left
        as it was: tensors made from this one earlier still backpropagate through it (and a
        ``retain_grad()`` still fills its ``.grad``), as in PyTorch. A view cannot be detached
        in place (its history is its base's)."""
        if self._base is not None:
            raise RuntimeError(
                "detach_: this tensor is a view of another tensor and cannot be detached in "
                "place; use y = x.detach() (a new leaf on the same memory) instead"
            )
        if grad_mode._state.trace is not None:  # tg.compile: no gradient through it from here
            grad_mode._state.trace.detached(self)
        self._grad_fn, self._output_nr, self._requires_grad = None, 0, False
        return self

    def resize_(self, *sizes) -> Tensor:
        """PyTorch's ``x.resize_(*sizes)``: this tensor takes the new shape in place, keeping
        its first elements in row-major order, on the same memory when it shrinks (new
        elements are zeros here; PyTorch leaves them uninitialised). A tensor that requires
        grad cannot be resized (PyTorch's error); here a non-contiguous one cannot either, nor
        can a view grow (its memory is another tensor's)."""
        if len(sizes) == 1 and isinstance(sizes[0], tuple | list):
            sizes = tuple(sizes[0])
        if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in sizes):
            raise TypeError(f"resize_(): sizes must be non-negative ints, got {sizes!r}")
        if self._requires_grad:
            raise RuntimeError("resize_: cannot resize variables that require grad; resize a "
                               "detached copy (x.detach().clone().resize_(...))")  # fmt: skip
        if not self.is_contiguous():
            raise RuntimeError(f"resize_: this {self.shape} tensor is not contiguous, and "
                               "PyTorch would read its memory in storage order; call "
                               "x = x.contiguous() first")  # fmt: skip
        xp = backend.namespace_of(self._data)
        flat = xp.reshape(self._data, (-1,))  # the same memory (contiguous)
        n = math.prod(sizes)
        if n > flat.shape[0]:
            if self._base is not None:
                raise RuntimeError(f"resize_: this {self.shape} tensor is a view of another "
                                   f"tensor and cannot grow to {n} elements here; resize a "
                                   "copy instead (x.clone().resize_(...))")  # fmt: skip
            flat = xp.concat([flat, xp.zeros(n - flat.shape[0], dtype=flat.dtype)])
        self._data = xp.reshape(flat[:n], sizes)
        self._counter[0] += 1
        return self

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute the gradient of this tensor w.r.t. the graph leaves, into their ``.grad``."""
        _backward((self,), (gradient,), retain_graph, create_graph, inputs)

    # -- indexing -----------------------------------------------------------------------------
    def __getitem__(self, index):
        kind = type(index)
        if kind is slice:  # what _raw_index makes of the two commonest indexes, read directly
            pass
        elif kind is int:
            index = (index, Ellipsis)
        else:
            index = _raw_index(index, self)
        out = _unrecorded_getitem(self, index)  # see NOTE [Unrecorded indexing] in dispatch.py
        return apply_op(_GETITEM, self, index=index) if out is None else out

    def __setitem__(self, index, value) -> None:
        """``y[index] = value``: an in-place write, recorded as PyTorch's ``CopySlices`` when
        ``y`` or ``value`` requires grad."""
        index = _raw_index(index, self)
        if grad_mode._state.trace is None and not (grad_mode.is_grad_enabled() and (
                self._requires_grad or isinstance(value, Tensor) and value._requires_grad)):
            self._check_view_inplace("setitem", False)
            v = value._data if isinstance(value, Tensor) else value
            _check_writable("setitem", self)
            try:
                self._data[index] = v  # a plain write: no graph to keep
            except ValueError as e:
                raise _write_error("setitem", self, e, getattr(v, "shape", ())) from None
            self._counter[0] += 1
            return
        self._inplace(_SETITEM, value, index=index)

    __hash__ = object.__hash__

# the lower layers make tensors of this class (see eager/core.py)
core.hand_over(tensor_class=Tensor)
# the op methods (x.exp(), x + y ...), generated from the surface table in dispatch.py
for _name, _method in METHODS.items():
    setattr(Tensor, _name, _method)

_GETITEM, _SETITEM = REGISTRY["getitem"], REGISTRY["setitem"]
