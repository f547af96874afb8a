r"""Custom differentiable functions: subclass :class:`Function` (PyTorch's API).

>>> import tinygrad_edu as tg
>>> class Cube(tg.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x * x * x
...     @staticmethod
...     def backward(ctx, g):
...         (x,) = ctx.saved_tensors
...         return g * 3 * x * x
>>> x = tg.tensor(2.0, requires_grad=True)
>>> y = Cube.apply(x)
>>> y.grad_fn.name()
'CubeBackward'
>>> y.backward(); x.grad.item()
12.0

PyTorch's newer style is also accepted: ``forward(x, ...)`` without ``ctx``, plus a static
``setup_context(ctx, inputs, output)`` that saves what ``backward`` needs.

>>> class Square(tg.Function):
...     @staticmethod
...     def forward(x):
...         return x * x
...     @staticmethod
...     def setup_context(ctx, inputs, output):
...         ctx.save_for_backward(inputs[0])
...     @staticmethod
...     def backward(ctx, g):
...         (x,) = ctx.saved_tensors
...         return 2 * x * g
>>> x = tg.tensor(3.0, requires_grad=True)
>>> tg.autograd.grad(Square.apply(x), x)[0].item()
6.0
"""

from __future__ import annotations

import functools
import inspect

from .. import backend
from . import grad_mode
from .node import RETAIN_GRAPH_HINT, Node, SavedTensor, inference_save_error, place
from .tensor import Tensor, _edge

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """The ``ctx`` passed to ``forward`` and ``backward``."""

    def __init__(self, needs_input_grad):
        self.needs_input_grad = needs_input_grad
        self.materialize_grads = True
        self._to_save, self._saved, self._dirty, self._non_diff = (), (), (), ()
        self._name, self._graph_mode, self._devices = "Function", False, ()

    def save_for_backward(self, *tensors) -> None:
        """Keep tensors for backward; they are checked for in-place changes when unpacked."""
        self._to_save = tensors

    @property
    def saved_tensors(self) -> tuple:
        if self._saved is None:
            raise RuntimeError(f"{self._name}: {RETAIN_GRAPH_HINT}")
        out = []
        for i, s in enumerate(self._saved):
            if not isinstance(s, SavedTensor):
                out.append(s)
                continue
            v = s.unpack(_Named(self._name), self._graph_mode, f"saved tensor {i}")
            dev = self._devices[i]  # (a simulated device's array is a numpy array: say where)
            if not self._graph_mode:
                v = Tensor._make(v, device=dev)
            elif v._device != dev:  # a saved output, remade for a create_graph backward
                v._device = dev
            out.append(v)
        return tuple(out)

    def mark_dirty(self, *tensors) -> None:
        """Say that ``forward`` changed these inputs in place (and returns them)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Say that these outputs get no gradient (indices, masks)."""
        self._non_diff = tensors

    def set_materialize_grads(self, flag: bool) -> None:
        """When True (default), missing output gradients reach ``backward`` as zeros."""
        self.materialize_grads = bool(flag)


class _Named:
    """Stands in for a node in error messages."""

    def __init__(self, name):
        self._n = name

    def name(self):
        return self._n


class FunctionBackward(Node):
    """The backward node of a custom :class:`Function`: calls its ``backward``."""

    __slots__ = ("ctx", "fn", "input_shapes", "input_dtypes", "input_devices", "out_meta")

    @property
    def num_outputs(self) -> int:
        return len(self.out_meta)

    def _output_meta(self) -> tuple:
        return tuple((tuple(s), dt, str(d)) for s, dt, d in self.out_meta)

    def apply(self, grads, create_graph):
        ctx, fname = self.ctx, type(self).__name__[: -len("Backward")]
        ctx._graph_mode = create_graph
        args = []
        for g, (shape, dtype, dev) in zip(grads, self.out_meta):
            if g is None and ctx.materialize_grads:
                g = backend.get_namespace(dev).zeros(shape, dtype=dtype)
            if g is not None and not isinstance(g, Tensor):
                g = Tensor._make(g, device=backend.parse_device(dev))
            args.append(g)
        result = self.fn.backward(ctx, *args)
        result = result if isinstance(result, tuple) else (result,)
        n = len(self.input_shapes)
        if len(result) > n and all(g is None for g in result[n:]):
            result = result[:n]  # trailing Nones past the last input are allowed (PyTorch)
        if len(result) != n:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected "
                f"{n}, got {len(result)}); {fname}.backward must return one gradient per input "
                "of forward (None for an input that gets none), as a tuple"
            )
        out = []
        for i, (g, shape, dtype, (nxt, _)) in enumerate(
            zip(result, self.input_shapes, self.input_dtypes, self.next_functions)
        ):
            if g is None or nxt is None:
                out.append(None)
                continue
            g = g if isinstance(g, Tensor) else Tensor(g, device=self.input_devices[i])
            if g.shape != shape:
                if not _expandable(shape, g.shape):
                    raise RuntimeError(
                        f"Function {self.name()} returned an invalid gradient at index {i} - got "
                        f"{list(g.shape)} but expected shape compatible with {list(shape)}; "
                        f"return a gradient of input {i}'s shape (or one it broadcasts to)"
                    )
                # a gradient the input broadcasts to is summed down to the input's shape, as
                # PyTorch does (recorded, under create_graph)
                g = g.sum_to_size(shape)
            if dtype is not None and g.dtype != dtype:  # a gradient takes its input's dtype
                g = g.astype(dtype)
            out.append(g if create_graph else g._data)
        return tuple(out)

    def release(self):
        if self.ctx._saved:
            self.ctx._saved = None


def _expandable(shape, grad_shape) -> bool:
    """Whether ``shape`` broadcasts to ``grad_shape`` (PyTorch's ``is_expandable_to``)."""
    if len(shape) > len(grad_shape):
        return False
    tail = grad_shape[len(grad_shape) - len(shape):]
    return all(s == t or s == 1 for s, t in zip(shape, tail))


_node_classes: dict[type, type] = {}


class Function:
    """Base class for custom ops. Write static ``forward(ctx, ...)`` and
    ``backward(ctx, *grads)`` (or, in PyTorch's newer style, ``forward(...)`` without ``ctx``
    plus ``setup_context(ctx, inputs, output)``), then call ``MyFunction.apply(...)``. The
    recorded node is named ``<Name>Backward``.

    ``backward`` returns one gradient per input of ``forward`` (None for an input that gets
    none); more trailing Nones are allowed. A gradient of a shape the input broadcasts to is
    summed down to the input's shape.

    Keyword arguments to ``apply`` follow PyTorch: with ``setup_context`` they are bound to
    ``forward``'s parameters (defaults filled in) and every bound argument is an input; without
    it, each must name a parameter right after the positional arguments given, and becomes an
    input in that position.
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):  # pragma: no cover - abstract
        raise NotImplementedError

    @staticmethod
    def setup_context(ctx, inputs, output):  # pragma: no cover - the old style's marker
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grads):  # pragma: no cover - abstract
        raise NotImplementedError

    @classmethod
    def apply(cls, *args, **kwargs):
        new_style = cls.setup_context is not Function.setup_context
        if new_style:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        elif kwargs:
            args = _place_keywords(cls, args, kwargs)
        ctx = FunctionCtx(tuple(isinstance(a, Tensor) and a.requires_grad for a in args))
        ctx._name = cls.__name__
        with grad_mode.no_grad():
            if new_style:
                raw = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, raw)
            else:
                raw = cls.forward(ctx, *args)
        single = not isinstance(raw, tuple)
        device = next((a._device for a in args if isinstance(a, Tensor)), None)
        outs = [o if isinstance(o, Tensor) else Tensor(o, device=device)
                for o in ((raw,) if single else raw)]  # fmt: skip
        record = grad_mode.is_grad_enabled() and any(ctx.needs_input_grad)
        node = None
        if record:  # an inference tensor cannot be saved: say so before anything changes
            for t in ctx._to_save:
                if isinstance(t, Tensor) and type(t._counter) is not list:
                    raise inference_save_error(t, cls.__name__)
            node = _node_class(cls)()
            node.ctx, node.fn = ctx, cls
            node.next_functions = tuple(_edge(a) for a in args)  # before dirty inputs re-base
            node.input_shapes = tuple(a.shape if isinstance(a, Tensor) else () for a in args)
            node.input_dtypes = tuple(a.dtype if isinstance(a, Tensor) else None for a in args)
            node.input_devices = tuple(a._device if isinstance(a, Tensor) else device
                                       for a in args)  # fmt: skip
            node.out_meta = tuple((o.shape, o.dtype, o.device) for o in outs)
            # its gradients arrive where its outputs live (the first not on the CPU, as
            # PyTorch's input buffer picks its device): the engine runs it on that queue
            for o in outs:
                if o._device.type != "cpu":
                    place(node, o._device)
                    break
            if grad_mode.is_anomaly_enabled():
                node._record_trace()
        for i, o in enumerate(outs):
            dirty = any(o is d for d in ctx._dirty)
            if dirty:
                if record and o.is_leaf and o.requires_grad:
                    raise RuntimeError(
                        f"{cls.__name__}: forward changed a leaf that requires grad in place "
                        "(mark_dirty); do it under no_grad() or on a copy"
                    )
                o._counter[0] += 1
            elif any(o is a for a in args):  # returned an input as-is: give it its own tensor
                o = outs[i] = Tensor._make(o._data, counter=o._counter, device=o._device)
            if node is not None and not any(o is n for n in ctx._non_diff):
                o.grad_fn, o._output_nr, o._requires_grad = node, i, True
        if node is not None:
            ctx._saved = tuple(
                SavedTensor(t, is_output=any(t is o for o in outs)) if isinstance(t, Tensor) else t
                for t in ctx._to_save
            )
            ctx._devices = tuple(getattr(t, "_device", None) for t in ctx._to_save)
        ctx._to_save = ()
        return outs[0] if single else tuple(outs)


def _place_keywords(cls, args, kwargs) -> tuple:
    """The inputs of an old-style ``apply(*args, **kwargs)`` (without ``setup_context``), as
    PyTorch places them: each keyword names one of ``forward``'s parameters after ``ctx`` and
    the positional arguments, and together they fill the next positions without a gap."""
    params = list(inspect.signature(cls.forward).parameters.values())[1:]  # after ctx
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p.name for p in params if p.kind in kinds]
    placed = {}
    for key, value in kwargs.items():
        if key not in names:
            raise TypeError(f"{cls.__name__}.forward() got an unexpected keyword argument "
                            f"{key!r}")  # fmt: skip
        i = names.index(key)
        if i < len(args):
            raise TypeError(f"{cls.__name__}.forward() got multiple values for argument "
                            f"{key!r}")  # fmt: skip
        placed[i] = value
    out = list(args)
    for i in range(len(args), max(placed) + 1):
        if i not in placed:
            raise TypeError(
                f"{cls.__name__}.forward() missing required argument: {names[i]!r} (position "
                f"{i}); keyword arguments to apply() must follow the positional ones without "
                "a gap (pass it too, or pass them positionally)"
            )
        out.append(placed[i])
    return tuple(out)


class DelayedError(Node):
    """The node of a gradient computed by a ``@once_differentiable`` backward under
    ``create_graph=True``: differentiating it again is an error (PyTorch's ``Error`` node)."""

    __slots__ = ("n",)

    def name(self) -> str:
        return "Error"

    @property
    def num_outputs(self) -> int:
        return self.n

    def apply(self, grads, create_graph):
        raise RuntimeError(
            "trying to differentiate twice a function that was marked with @once_differentiable"
        )


def once_differentiable(fn):
    """Decorate a custom Function's ``backward`` whose body is not itself differentiable
    (PyTorch's ``torch.autograd.function.once_differentiable``). It runs under ``no_grad()``;
    under ``create_graph=True`` its gradients get a node that raises if a second backward
    reaches it."""

    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        with grad_mode.no_grad():
            outputs = fn(ctx, *args, **kwargs)
        if not grad_mode.is_grad_enabled():
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        node = DelayedError()
        node.n = len(outs)
        wrapped = tuple(
            Tensor._make(o._data, grad_fn=node, output_nr=i, device=o._device)
            if isinstance(o, Tensor) else o
            for i, o in enumerate(outs)
        )  # fmt: skip
        return wrapped[0] if single else wrapped

    return wrapper


def _node_class(fn_cls) -> type:
    cls = _node_classes.get(fn_cls)
    if cls is None:
        cls = type(f"{fn_cls.__name__}Backward", (FunctionBackward,), {"__slots__": ()})
        _node_classes[fn_cls] = cls
    return cls
