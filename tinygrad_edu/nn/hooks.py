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
    ``grad_input`` all None (PyTorch's behaviour, with its warning; the hooks may then only
    return None). Both nodes are drawn as ``BackwardHookFunctionBackward``, PyTorch's name.

    ``grad_input`` has one entry per positional argument: None for one that is not a
    tensor; for a tensor that does not require grad, zeros when another input does (the
    identity passes on a zero gradient for it, as PyTorch's does). Inside ``forward`` such a
    tensor still does not require grad: the identity marks it non-differentiable.

NOTE [The legacy backward hook]
    ``register_backward_hook`` (PyTorch's older, deprecated hook) hangs the hook on the node
    that made the module's output (its ``grad_fn``): ``grad_input`` is what that *one* node
    hands to its inputs. For a module whose forward is one op on its input (``nn.ReLU``) that
    is the input's gradient; otherwise it is not, and a ``FutureWarning`` says so, as in
    PyTorch.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict

from ..eager import grad_mode
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
        self.legacy_backward: OrderedDict = OrderedDict()  # register_backward_hook's

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
        outs = tuple(Tensor._make(t._data, counter=t._counter, device=t._device)
                     for t in tensors)  # fmt: skip
        # an input that does not require grad stays so inside forward (PyTorch's rule)
        ctx.mark_non_differentiable(*[o for o, t in zip(outs, tensors) if not t.requires_grad])
        return outs

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


def _pack(positions, values, size) -> tuple:
    out = [None] * size
    for i, v in zip(positions, values):
        out[i] = v
    return tuple(out)


def call_with_hooks(module, forward, args: tuple, kwargs: dict):
    """Run ``forward(*args, **kwargs)`` with ``module``'s hooks (see the NOTEs)."""
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
        state = {"grad_output": None, "n_inputs": len(args)}
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if grad_mode.is_grad_enabled() and any(args[i].requires_grad for i in positions):

            def on_inputs(grads):
                if state["grad_output"] is None:  # reached without passing the outputs
                    return grads
                grad_input = _pack(positions, grads, state["n_inputs"])
                new = _call_backward_hooks(module, grad_input, state["grad_output"])
                state["grad_output"] = None
                return tuple(new[i] for i in positions)

            wrapped = BackwardHookFunction.apply(on_inputs, *[args[i] for i in positions])
            args = list(args)
            for i, w in zip(positions, _as_tuple(wrapped)):
                args[i] = w
            args = tuple(args)
            state["inputs_hooked"] = True
    out = forward(*args, **kwargs)
    for fn, with_kwargs in list(hooks.forward.values()):
        res = fn(module, args, kwargs, out) if with_kwargs else fn(module, args, out)
        if res is not None:
            if isinstance(res, HookHandle):
                raise TypeError(
                    f"forward hook {getattr(fn, '__name__', fn)!r} of {type(module).__name__} "
                    "returned a hook handle; what a forward hook returns replaces the "
                    "module's output (as in PyTorch), so return None to keep the output "
                    "(register hooks outside the hook, not as its return value)"
                )
            out = res
    if state is not None:
        out = _hook_outputs(module, out, state)
    if hooks.legacy_backward:
        _hook_last_node(module, args, out)
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
        warnings.warn("For backward hooks to be called, module output should be a Tensor or a "
                      f"tuple of Tensors but received {type(out)}", stacklevel=3)  # fmt: skip
        return out
    positions = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
    if not positions or not grad_mode.is_grad_enabled():
        return out

    def on_outputs(grads):
        for fn in list(module._hooks.backward_pre.values()):
            res = fn(module, grads)
            if res is not None:
                grads = _checked(res, grads, module, "grad_output")
        state["grad_output"] = grads
        if not state.get("inputs_hooked"):
            warnings.warn("Full backward hook is firing when gradients are computed with "
                          "respect to module outputs since no inputs require gradients.",
                          UserWarning, stacklevel=2)  # fmt: skip
            none = (None,) * state["n_inputs"]
            for fn in list(module._hooks.backward.values()):
                res = fn(module, none, grads)
                if res is not None and not (isinstance(res, tuple)
                                            and all(r is None for r in res)):  # fmt: skip
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")  # fmt: skip
            state["grad_output"] = None
        return grads

    wrapped = _as_tuple(BackwardHookFunction.apply(on_outputs, *[outs[i] for i in positions]))
    new = list(outs)
    for i, w in zip(positions, wrapped):
        new[i] = w
    return new[0] if single else type(outs)(new)


def _hook_last_node(module, args, out) -> None:
    """``register_backward_hook``: hang the hooks on the output's ``grad_fn`` (see NOTE [The
    legacy backward hook])."""
    var = out
    while not isinstance(var, Tensor):
        if isinstance(var, dict):
            var = next(v for v in var.values() if isinstance(v, Tensor))
        elif isinstance(var, tuple | list) and var:
            var = var[0]
        else:
            return
    node = var.grad_fn
    if node is None:
        return
    for fn in list(module._hooks.legacy_backward.values()):
        node.register_hook(_legacy_hook(module, fn))
    _warn_legacy(args, out, node)


def _legacy_hook(module, fn):
    def hook(grad_inputs, grad_outputs):
        res = fn(module, tuple(grad_inputs), tuple(grad_outputs))
        return None if res is None else _as_tuple(res)

    return hook


def _warn_legacy(inputs, result, node) -> None:
    """PyTorch's ``FutureWarning`` when the legacy hook will not see what its name says."""
    results = (result,) if isinstance(result, Tensor) else result
    if not (isinstance(results, tuple) and all(isinstance(r, Tensor) for r in results)):
        what = "return"
    elif not all(isinstance(i, Tensor) for i in inputs):
        what = "take as input"
    else:
        nodes = {r.grad_fn for r in results if r.grad_fn is not None}
        inputs_fn = {i.grad_fn for i in inputs if i.grad_fn is not None}
        if len(nodes) == 1 and inputs_fn == {n for n, _ in node.next_functions}:
            return
        warnings.warn("Using a non-full backward hook when the forward contains multiple "
                      "autograd Nodes is deprecated and will be removed in future versions. "
                      "This hook will be missing some grad_input. Please use "
                      "register_full_backward_hook to get the documented behavior.",
                      FutureWarning, stacklevel=4)  # fmt: skip
        return
    warnings.warn(f"Using non-full backward hooks on a Module that does not {what} a single "
                  "Tensor or a tuple of Tensors is deprecated and will be removed in future "
                  "versions. Please use register_full_backward_hook to get the documented "
                  "behavior.", FutureWarning, stacklevel=4)  # fmt: skip
