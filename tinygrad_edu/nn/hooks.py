r"""Module hooks: the pieces behind ``register_forward_pre_hook``, ``register_forward_hook``,
``register_full_backward_pre_hook`` and ``register_full_backward_hook``.

NOTE [Full backward hooks are two identity Functions]
    As in PyTorch, a module's full backward hook sees the gradients of the module's
    *outputs* (``grad_output``) and of its tensor *inputs* (``grad_input``), and may replace
    the latter. The call runs its inputs through one identity :class:`~tinygrad_edu.Function`
    (``BackwardHookFunction``) and its outputs through another. In backward the outputs'
    node runs first: it records ``grad_output`` (after the pre-hooks, which may replace it).
    The inputs' node runs when every gradient inside the module has arrived; it calls the
    hooks with ``(module, grad_input, grad_output)`` and passes on what they return. When
    no input requires grad, the hooks are called from the outputs' node with
    ``grad_input`` all None (PyTorch's behaviour). Both nodes are drawn as
    ``BackwardHookFunctionBackward``, PyTorch's name.
"""

from __future__ import annotations

from collections import OrderedDict

from ..eager.function import Function
from ..eager.tensor import Tensor

__all__ = ["ModuleHooks", "HookHandle", "BackwardHookFunction", "call_with_hooks"]


class HookHandle:
    """Returned by every ``register_*_hook``: ``remove()`` takes the hook out again."""

    _next_id = 0

    def __init__(self, table: OrderedDict) -> None:
        self._table = table
        self.id = HookHandle._next_id
        HookHandle._next_id += 1

    def remove(self) -> None:
        self._table.pop(self.id, None)

    def __enter__(self) -> HookHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class ModuleHooks:
    """A module's hooks, by kind, in registration order (made on first registration)."""

    def __init__(self) -> None:
        self.forward_pre: OrderedDict = OrderedDict()  # id -> (fn, with_kwargs)
        self.forward: OrderedDict = OrderedDict()
        self.backward_pre: OrderedDict = OrderedDict()  # id -> fn
        self.backward: OrderedDict = OrderedDict()

    def add(self, kind: str, value, prepend: bool = False) -> HookHandle:
        table = getattr(self, kind)
        handle = HookHandle(table)
        table[handle.id] = value
        if prepend:
            table.move_to_end(handle.id, last=False)
        return handle


class BackwardHookFunction(Function):
    """An identity whose backward calls ``ctx.on_grad(grads)`` and passes on its answer."""

    @staticmethod
    def forward(ctx, on_grad, *tensors):
        ctx.on_grad = on_grad
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None, *ctx.on_grad(grads))


def _as_tuple(x) -> tuple:
    return x if isinstance(x, tuple) else (x,)


def _checked(new, old, module, what: str) -> tuple:
    new = _as_tuple(new)
    if len(new) != len(old):
        raise RuntimeError(f"backward hook of {type(module).__name__} returned {len(new)} "
                           f"values for {what}, expected {len(old)}")  # fmt: skip
    return new


def call_with_hooks(module, forward, args: tuple, kwargs: dict):
    """Run ``forward(*args, **kwargs)`` with ``module``'s hooks (see the NOTE)."""
    hooks = module._hooks
    for fn, with_kwargs in list(hooks.forward_pre.values()):
        if with_kwargs:
            res = fn(module, args, kwargs)
            if res is not None:
                if not (isinstance(res, tuple) and len(res) == 2):
                    raise RuntimeError("forward pre-hook must return None or a tuple of "
                                       f"(new_args, new_kwargs), but got {res}.")  # fmt: skip
                args, kwargs = res
        else:
            res = fn(module, args)
            if res is not None:
                args = _as_tuple(res)
    state = None
    if hooks.backward or hooks.backward_pre:
        state = {"grad_output": None}
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        needs = [args[i] for i in positions if args[i].requires_grad]
        state["n_inputs"] = len(positions)
        if needs:

            def on_inputs(grads):
                new = _call_backward_hooks(module, grads, state["grad_output"])
                return new

            wrapped = BackwardHookFunction.apply(on_inputs, *[args[i] for i in positions])
            wrapped = _as_tuple(wrapped)
            args = list(args)
            for i, w in zip(positions, wrapped):
                args[i] = w
            args = tuple(args)
            state["inputs_hooked"] = True
    out = forward(*args, **kwargs)
    for fn, with_kwargs in list(hooks.forward.values()):
        res = fn(module, args, kwargs, out) if with_kwargs else fn(module, args, out)
        if res is not None:
            out = res
    if state is not None:
        out = _hook_outputs(module, out, state)
    return out


def _call_backward_hooks(module, grad_input: tuple, grad_output: tuple) -> tuple:
    for fn in list(module._hooks.backward.values()):
        res = fn(module, grad_input, grad_output)
        if res is not None:
            grad_input = _checked(res, grad_input, module, "grad_input")
    return grad_input


def _hook_outputs(module, out, state):
    single = isinstance(out, Tensor)
    outs = (out,) if single else out
    if not isinstance(outs, tuple | list):
        return out
    positions = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
    if not positions:
        return out

    def on_outputs(grads):
        for fn in list(module._hooks.backward_pre.values()):
            res = fn(module, grads)
            if res is not None:
                grads = _checked(res, grads, module, "grad_output")
        state["grad_output"] = grads
        if not state.get("inputs_hooked"):
            _call_backward_hooks(module, (None,) * state["n_inputs"], grads)
        return grads

    wrapped = _as_tuple(BackwardHookFunction.apply(on_outputs, *[outs[i] for i in positions]))
    new = list(outs)
    for i, w in zip(positions, wrapped):
        new[i] = w
    return new[0] if single else type(outs)(new)
