"""Hooks around the engine's core: what runs before and after a node, for the rare nodes
that have them (``Node._hooked``: see NOTE [One test for hooks] in ``node.py``).

Before a node: its tensor hooks (``t.register_hook``), its pre-hooks
(``grad_fn.register_prehook``), the gradients ``grad()`` captures, and retained gradients
(``t.retain_grad()``), in that order. After it: its post-hooks (``grad_fn.register_hook``).
Every hook sees tensors and may return replacements, one per gradient, each of that shape.
"""

from __future__ import annotations

from . import core
from .engine import ATTACHED
from .node import CPU, accumulate_into

__all__: list = []


def _before_node(task, node, grads):
    """Tensor hooks, pre-hooks, captured and retained gradients, in that order."""
    wrap = _wrapper(task.create_graph, node.device)
    # BEGIN SOLUTION A2.4
    for nr, hooks in (node._tensor_hooks or {}).items():
        for fn in tuple(hooks):
            if grads[nr] is not None:
                r = fn(wrap(grads[nr]))
                if r is not None:
                    _check_hook(node, "tensor hook", (grads[nr],), (r,))
                grads[nr] = grads[nr] if r is None else _unwrap(r, task.create_graph)
    # END SOLUTION
    for fn in tuple(node._pre_hooks or ()):
        r = fn(_wrap_all(grads, node.device, task))
        if r is not None:
            _check_hook(node, "pre-hook", grads, r)
            grads = [None if x is None else _unwrap(x, task.create_graph) for x in r]
    for nr, slot in task.captures.get(node, ()):
        task.captured[slot] = grads[nr]
    for nr, ref in (node._retained or {}).items():
        t = ref()
        if t is not None and grads[nr] is not None:
            accumulate_into(t, grads[nr], task.create_graph)
    return grads


def _after_node(task, node, grads, outs):
    """Post-hooks: ``fn(grad_inputs, grad_outputs)`` may replace the gradients sent on."""
    devices = [CPU if n is None else n.device for n, _ in node.next_functions]
    for fn in tuple(node._post_hooks):
        r = fn(_wrap_all(outs, devices, task), _wrap_all(grads, node.device, task))
        if r is not None:
            _check_hook(node, "post-hook", outs, r)
            outs = [None if x is None else _unwrap(x, task.create_graph) for x in r]
    return outs


def _check_hook(node, kind, before, after):
    """A hook's replacement gradients: one per gradient it was given, each of that shape."""
    after = tuple(after) if isinstance(after, list | tuple) else (after,)
    if len(after) != len(before):
        raise RuntimeError(
            f"a {kind} of {node.name()} returned {len(after)} gradients for {len(before)}; "
            "return one per gradient (None to leave one out), or None to keep them all"
        )
    for i, (old, new) in enumerate(zip(before, after)):
        if old is not None and new is not None and tuple(new.shape) != tuple(old.shape):
            raise RuntimeError(
                f"a {kind} of {node.name()} returned a gradient of shape {tuple(new.shape)} "
                f"for one of shape {tuple(old.shape)} (position {i}); a hook must keep shapes"
            )


def _wrapper(create_graph, device=CPU):
    """How hooks see a gradient: as a tensor (raw arrays are wrapped, without a copy)."""
    if create_graph:
        return _identity
    return lambda g: core.new_tensor(g, device)


def _wrap_all(grads, devices, task) -> tuple:
    """Hooks see a tuple of tensors (None stays None); ``devices``: one, or one per slot."""
    if not isinstance(devices, list):
        devices = [devices] * len(grads)
    return tuple(
        None if g is None else _wrapper(task.create_graph, d)(g) for g, d in zip(grads, devices)
    )


def _identity(g):
    return g


def _unwrap(value, create_graph):
    if create_graph:
        return value if isinstance(value, core.Tensor) else core.Tensor(value)
    return value._data if isinstance(value, core.Tensor) else value


ATTACHED.before_node = _before_node
ATTACHED.after_node = _after_node
