"""In-place writes to an eager tensor: ``x.add_(y)``, ``x.fill_(v)``, ``x.copy_(src)`` and
in-place view ops (``x.t_()``), with PyTorch's version counters and its refusals.

:class:`InPlace` is a base class of :class:`~tinygrad_edu.eager.tensor.Tensor`. An in-place op
runs the op out of place, writes the result into the tensor's memory and bumps the version
counter; when it is recorded, the tensor's history is re-based onto the op's node (through a
view: the base's history onto a ``CopySlices`` node). See NOTE [Views and version counters]
in ``dispatch.py``.
"""

from __future__ import annotations

from ..ops import REGISTRY, ShapeError
from ..ops.promotion import can_cast
from . import core, grad_mode
from .dispatch import apply_op
from .node import CopySlices

__all__ = ["InPlace"]

_edge = core.edge
_RARE = grad_mode.RARE


class InPlace:
    """In-place ops and writes (a base class of ``Tensor``)."""

    __slots__ = ()

    def _check_view_inplace(self, opname, recording) -> None:
        """PyTorch's refusals of an in-place change to a view (see NOTE [Views and version
        counters] in ``dispatch.py``)."""
        base = self._base
        if base is None or not grad_mode.is_grad_enabled():
            return
        if self._view_no_grad and (recording or base._requires_grad):
            raise RuntimeError(f"{opname}_: {_NO_GRAD_VIEW % 'is being modified'}")
        if recording and self._view_multi:
            raise RuntimeError(
                f"{opname}_: {self._view_multi} is a view and is being modified inplace. This "
                "view is the output of a function that returns multiple views. Such functions "
                "do not allow the output views to be modified inplace. You should replace the "
                "inplace operation by an out-of-place one."
            )
        leaf = base if base._requires_grad else self  # (a view can be made a leaf that does)
        if recording and leaf._requires_grad and leaf._grad_fn is None:
            raise RuntimeError(
                f"{opname}_: a view of a leaf Variable that requires grad is being used in an "
                "in-place operation. Change the leaf under `with tg.no_grad():` (as optimizers "
                "do), or clone() it first and change the clone."
            )

    def _inplace(self, op, *others, **attrs) -> core.Tensor:
        """Run ``op`` and write its result into this tensor's memory.

        The version counter goes up, so backward can tell a saved value was overwritten; a
        non-leaf's ``grad_fn`` is re-based onto the in-place op. Through a view, the base's
        history is re-based onto a ``CopySlices`` node instead, and the view replays itself
        from there.
        """
        if op.view:
            return self._inplace_view(op, *others, **attrs)
        recording = grad_mode.is_grad_enabled() and (
            self._requires_grad
            or any(isinstance(o, core.Tensor) and o._requires_grad for o in others)
        )
        self._check_view_inplace(op.name, recording)
        view = self._base is not None
        if recording and not view and self._requires_grad and self._grad_fn is None:
            raise RuntimeError(
                f"{op.name}_: a leaf tensor that requires grad cannot be changed in place while "
                "grad mode is on (backward would lose the original value). Change it under "
                "`with tg.no_grad():` (as optimizers do) or use an out-of-place op."
            )
        if not recording:
            if _RARE[0]:  # a trace or anomaly mode sees the op run under no_grad
                with grad_mode.no_grad():
                    result = apply_op(op, self, *others, **attrs)
            else:  # nothing that requires grad meets grad mode: apply_op records nothing
                result = apply_op(op, self, *others, **attrs)
            self._write(op, result._data)
            return self
        # the old value, as an alias that keeps the old place in the graph
        old = core.Tensor._make(
            self._data.copy() if 0 in op.saves else self._data,
            self.grad_fn,
            output_nr=self._output_nr,
            device=self._device,
        )
        old._requires_grad, old._grad_acc = self._requires_grad, self._grad_acc
        if grad_mode._state.trace is not None:  # tg.compile: `old` holds this tensor's value
            grad_mode._state.trace.alias(old, self)
        result = apply_op(op, old, *others, **attrs)
        if not view:
            self._write(op, result._data)
            self._rebase(result._grad_fn)
            return self
        base = self._base
        edge = _edge(base)  # the base's history before the change
        self._write(op, result._data)
        meta = (tuple(base._data.shape), base._data.dtype)
        base._rebase(CopySlices(edge, self._view_steps, result._grad_fn, meta))
        self._view_version = -1  # replay from the new base now, as PyTorch's rebase_history
        self.grad_fn  # noqa: B018
        return self

    def _inplace_view(self, op, *others, **attrs) -> core.Tensor:
        """An in-place view op (``squeeze_``, ``unsqueeze_``, ``t_``, ``transpose_``): this
        tensor becomes the view ``op`` makes of it, as in PyTorch: the same memory seen with
        a new shape, the view's ``grad_fn`` (``SqueezeBackward0`` ...), the version counter
        bumped. A view stays a view of its base (its replay gets the step appended)."""
        public = "unsqueeze" if op.name == "expand_dims" else op.name
        name = "transpose_ (t_)" if public == "transpose" else f"{public}_"
        recording = grad_mode.is_grad_enabled() and self._requires_grad
        self._check_view_inplace(public, recording)
        if recording and self._base is None and self._grad_fn is None:
            raise RuntimeError(
                f"{name}: a leaf Variable that requires grad is being used in an in-place "
                "operation. Change it under `with tg.no_grad():` or use the out-of-place op."
            )
        result = apply_op(op, self, *others, **attrs)  # the view, recorded when needed
        if grad_mode._state.trace is not None:  # tg.compile: this tensor is that view now
            grad_mode._state.trace.view_rebind(self, result)
        self._data = result._data
        self._counter[0] += 1
        if self._base is not None:  # still a view of the same base, one step further
            state = self.__dict__
            state["_view_steps"] = result._view_steps
            if result._grad_fn is not None:
                self._rebase(result._grad_fn)
            state["_view_version"] = self._counter[0]
        elif result._grad_fn is not None:
            self._rebase(result._grad_fn)
        return self

    def _write(self, op, values) -> None:
        data = self._data
        if tuple(values.shape) != tuple(data.shape):
            raise ShapeError(
                f"{op.name}_: the result has shape {tuple(values.shape)} but the tensor has "
                f"{self.shape}; an in-place op cannot change a tensor's shape"
            )
        dt = values.dtype
        if dt is not data.dtype and dt != data.dtype and not can_cast(dt, data.dtype):
            raise RuntimeError(
                f"{op.name}_: the result is {values.dtype}, which cannot be written into this "
                f"{self.dtype} tensor in place; use the out-of-place op, or convert first"
            )
        _check_writable(op.name, self)
        try:
            self._data[...] = values
        except ValueError as e:
            raise _write_error(op.name + "_", self, e) from None
        self._counter[0] += 1
        if grad_mode._state.trace is not None:  # tg.compile: this tensor now holds values
            grad_mode._state.trace.rebind(self, values)

    def fill_(self, value):
        """Set every element to ``value`` (a number, or a 0-d tensor that gets the gradient)."""
        if isinstance(value, core.Tensor):
            if value.ndim:
                raise RuntimeError(f"fill_: the value must be a number or a 0-d tensor, got "
                                   f"shape {value.shape}")  # fmt: skip
            return self.copy_(value)
        return self._inplace(_FILL, value=value)

    def zero_(self):
        return self._inplace(_FILL, value=0)

    def copy_(self, src):
        """Write ``src`` (broadcast to this shape) into this tensor."""
        return self._inplace(_SETITEM, src, index=(Ellipsis,))



_NO_GRAD_VIEW = (
    "A view was created in no_grad mode and %s inplace with grad mode enabled. Given that "
    "this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
    "by moving both the view and the inplace either both inside the no_grad block (if you "
    "don't want the inplace to be tracked) or both outside (if you want the inplace to be "
    "tracked)."
)


def _replay(base, steps):
    """The view ``steps`` describe (``_view_steps``), taken again from ``base``."""
    view = base
    for op, extra, attrs, _ in steps:
        view = apply_op(op, view, *extra, **attrs)
    return view


def _check_writable(opname, t) -> None:
    """An expand's view repeats elements: writing into it is PyTorch's error, not numpy's."""
    flags = getattr(t._data, "flags", None)
    if flags is not None and not flags.writeable and any(
            step[0].name == "broadcast_to" for step in t._view_steps):
        raise RuntimeError(
            f"{opname}_: unsupported operation: more than one element of the written-to tensor "
            "refers to a single memory location. Please clone() the tensor before performing "
            "the operation."
        )


def _write_error(opname, t, err, shape=None) -> RuntimeError:
    """numpy's errors for a write into a tensor's memory, in PyTorch's words."""
    if not getattr(t._data, "flags", None) or t._data.flags.writeable:
        return ShapeError(
            f"{opname}: the value has shape {tuple(shape)}, which cannot be broadcast to the "
            f"indexed shape of this {t.shape} tensor: the expanded size must match the "
            f"existing size ({err})"
        )
    return RuntimeError(
        f"{opname}: unsupported operation: more than one element of the written-to tensor "
        f"refers to a single memory location (shape {t.shape}: a read-only view, such as "
        "expand's). Please clone() the tensor before performing the operation."
    )




_SETITEM, _FILL = REGISTRY["setitem"], REGISTRY["fill"]
