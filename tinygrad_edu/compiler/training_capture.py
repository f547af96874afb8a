r"""A whole training step in one program: ``loss.backward()``, ``opt.step()`` and
``opt.zero_grad()`` seen by the tracer.

While a function is traced these three calls still run for real (so the trace's values stay
right), and each also adds to the graph what it did, as Fluid's ``minimize`` adds the
backward and the optimizer's ops to a program:

* ``loss.backward()`` adds the gradient graph (``symbolic.gradients``) of the loss with
  respect to every tensor that requires grad and that the loss depends on; each one's
  ``.grad`` becomes a node (plus the old ``.grad`` when gradients accumulate);
* ``opt.step()`` adds the optimizer's update, written with the same formulas as the eager
  optimizers (SGD with momentum, dampening, Nesterov and weight decay; Adam; AdamW): the
  parameters and the optimizer's state arrays are the program's state, written back in
  place after every call. The learning rate and Adam's bias corrections are fed per call, so
  a learning-rate schedule or the step count never makes the program stale;
* ``opt.zero_grad()`` and ``model.zero_grad()`` set the ``.grad`` they clear.

Anything else (an optimizer this module does not know, ``amsgrad``, ``maximize``,
``backward(create_graph=True)``) is a graph break: the step then runs eagerly.
"""

from __future__ import annotations

import builtins
import math

from .. import symbolic as S
from ..eager.tensor import Tensor
from ..nn.module import Module
from ..optim.lr_scheduler import LRScheduler
from ..optim.optimizer import Optimizer
from ..symbolic.static import kernels
from .tensor_reads import ACTIVE

__all__ = ["patch_training", "patch_effects", "install_training_hooks", "install_effect_hooks"]


def _state_key(opt, p):
    """The key of ``p``'s state in ``opt.state`` (the parameter, or its id), or None."""
    for key in (p, id(p)):
        if opt.state.get(key) is not None:
            return key
    return None


def _state(opt, p) -> dict:
    st = opt.state.get(id(p))
    return st if st is not None else opt.state.get(p, {})


def _backward(tracer, original):
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        if not tracer.is_traced(self):
            return original(self, gradient, retain_graph, create_graph, inputs)
        if create_graph or inputs is not None:
            tracer.graph_break("backward(create_graph=True or inputs=...) inside the function")
            return original(self, gradient, retain_graph, create_graph, inputs)
        leaves = [(n, s) for n, s in tracer.trace.placeholders
                  if s.kind in ("arg", "tensor") and _tensor(tracer, s).requires_grad]  # fmt: skip
        before = {id(_tensor(tracer, s)): _tensor(tracer, s)._grad for _, s in leaves}
        if gradient is not None:
            tracer.trace.whole.append("backward(gradient) in a function with a break")
        tracer.event("backward", None, self)
        original(self, gradient, retain_graph, create_graph, inputs)
        reached = [(n, _tensor(tracer, s)) for n, s in leaves
                   if _tensor(tracer, s)._grad is not None]  # fmt: skip
        if not reached:
            return None
        seed = None if gradient is None else tracer.value_of(gradient)
        seed = seed if seed is None or isinstance(seed, S.Node) else S.constant(seed)
        grads = S.gradients([tracer.node_of(self)], [n for n, _ in reached], grad_ys=[seed])
        for (_, t), g in zip(reached, grads):
            if g.dtype is not None and g.dtype != str(t.dtype):
                g = g.astype(str(t.dtype))  # (eager's AccumulateGrad keeps the leaf's dtype)
            old = before[id(t)]
            if old is not None:
                prev = tracer.trace.grads.get(id(t))
                if prev is not None and prev[1] is not None:
                    old_node = prev[1]
                else:
                    old_node = tracer.old_grad(t)
                g = old_node + g
            elif id(t) not in tracer.trace.grads:
                tracer.grad_guard(t, False)
            tracer.set_grad(t, g)
            tracer.bind(t._grad, g)
        return None

    return backward


def _tensor(tracer, source):
    return source.tensor if source.kind == "tensor" else tracer.args[source.index]


def _name(t) -> str:
    return getattr(t, "name", None) or "param"


def _zero_grad(tracer, original):
    def zero_grad(self, set_to_none: bool = True):
        params = list(self.parameters()) if hasattr(self, "parameters") and not isinstance(
            self, Optimizer) else [p for g in self.param_groups for p in g["params"]]  # fmt: skip
        original(self, set_to_none)
        tracer.event("zero_grad", self, set_to_none=set_to_none)
        for p in params:  # recorded even when it was None: from here on it is known
            if p._grad is None:
                tracer.set_grad(p, None)
            else:  # zeroed in place
                zeros = S.constant(p._grad._data.copy())
                tracer.set_grad(p, zeros)
                tracer.bind(p._grad, zeros)

    return zero_grad


_SUPPORTED = {"SGD", "Adam", "AdamW"}


def _step(tracer, original):
    def step(self, closure=None):
        kind = type(self).__name__
        unsupported = None
        if kind not in _SUPPORTED or closure is not None:
            unsupported = f"{kind}.step{'(closure)' if closure is not None else '()'}"
        for g in self.param_groups:
            for flag in ("amsgrad", "maximize", "foreach", "capturable", "differentiable"):
                if g.get(flag):
                    unsupported = f"{kind}({flag}=True).step()"
        if unsupported:
            tracer.graph_break(f"{unsupported} is not captured by tg.compile")
            return original(self) if closure is None else original(self, closure)
        tracer.watch_groups(self)
        plan = [(group, p) for group in self.param_groups for p in group["params"]
                if p._grad is not None]  # fmt: skip
        tracer.event("step", self)
        result = original(self)
        for group, p in plan:
            # The traced call itself ran eagerly: the program serves the calls after it, which
            # find the state this step leaves (Adam's moments, a momentum buffer), so it is
            # built for that state, and guarded on it. A first step therefore does not cost a
            # second trace once the state exists (the program the state-less step would give
            # could only ever run again with a fresh optimizer, and one then traces anew).
            has_state = bool(_state(self, p))
            tracer.extra_guards.append((_has_state(self, p), has_state))
            _record_update(tracer, self, kind, group, p, has_state)
        return result

    return step


def _has_state(opt, p):
    return lambda leaves: bool(_state(opt, p))


def _hyper_keys(group) -> tuple:
    """The settings of a group that the program bakes in (all but the learning rate, which
    is fed per call): guarded."""
    keep = (int, float, tuple, bool)
    return tuple(k for k, v in group.items()
                 if k not in ("params", "lr") and isinstance(v, keep))  # fmt: skip


def _record_update(tracer, opt, kind, group, p, had_state):
    keys = _hyper_keys(group)
    tracer.extra_guards.append((lambda leaves, g=group: tuple(g[k] for k in keys),
                                tuple(group[k] for k in keys)))  # fmt: skip
    grad = tracer.trace.grads.get(id(p))
    if grad is not None and grad[1] is not None:
        g = grad[1]
    else:
        g = tracer.old_grad(p)
    w = tracer.node_of(p)
    lr = tracer.scalar_input("lr", lambda gr=group: gr["lr"], p)
    key = _state_key(opt, p)  # the real step ran: the state exists now

    def state_in(name):
        def fetch(o=opt, q=p, n=name):
            v = _state(o, q)[n]
            return v._data if isinstance(v, Tensor) else v  # (opt.state holds tensors)

        return tracer.state_input(f"{_name(p)}.{name}", fetch, p.shape, p.dtype)

    def state_out(name, node):
        def setter(value, o=opt, n=name):
            st = o.state.setdefault(key, {})
            if n in st and hasattr(st[n], "shape") and tuple(st[n].shape) == tuple(value.shape):
                (st[n]._data if isinstance(st[n], Tensor) else st[n])[...] = value  # (no op)
            else:
                st[n] = value.copy()

        tracer.add_state_write(setter, node)

    if kind == "SGD":
        d = g + group["weight_decay"] * w if group["weight_decay"] else g
        mu = group["momentum"]
        if mu:
            buf = d if not had_state else state_in("momentum_buffer") * mu + (
                1 - group["dampening"]) * d  # fmt: skip
            state_out("momentum_buffer", buf)
            d = d + mu * buf if group["nesterov"] else buf
        new = w - lr * d
    else:  # Adam, AdamW
        b1, b2 = group["betas"]
        decoupled = kind == "AdamW" or group.get("decoupled_weight_decay", False)
        if decoupled and group["weight_decay"]:
            decay = tracer.scalar_input("1 - lr*wd", lambda gr=group: 1 - gr["lr"] * gr[
                "weight_decay"], p)  # fmt: skip
            w = w * decay
        elif group["weight_decay"]:
            g = g + group["weight_decay"] * w
        if had_state:
            m, v = state_in("exp_avg"), state_in("exp_avg_sq")
        else:
            m = v = S.constant(p._data * 0)
        m = m + (1 - b1) * (g - m)
        v = v * b2 + (1 - b2) * (g * g)
        state_out("exp_avg", m)
        state_out("exp_avg_sq", v)
        steps = (lambda o=opt, q=p: _int(_state(o, q)["step"]) + 1) if had_state else (
            lambda: 1)  # fmt: skip
        step_size = tracer.scalar_input(
            "lr / (1 - b1**t)", lambda gr=group, t=steps: gr["lr"] / (1 - b1 ** _int(t())), p)
        bc2 = tracer.scalar_input(
            "sqrt(1 - b2**t)", lambda t=steps: math.sqrt(1 - b2 ** _int(t())), p)
        new = w - step_size * (m / (v.sqrt() / bc2 + group["eps"]))

        def count(_value, o=opt, key=key):
            st = o.state.setdefault(key, {})
            old = st.get("step", 0)
            if isinstance(old, Tensor):
                old._data[...] += 1
            else:
                st["step"] = old + 1

        tracer.add_state_write(count, new)
    tracer.set_write(p, new)
    tracer.bind(p, new)


def _int(t):  # (a 0-d state tensor's array: no op the tracer would record)
    return int(t._data if isinstance(t, Tensor) else t)


def patch_training(tracer):
    """Install the three hooks while ``tracer`` runs; returns the function that undoes it."""
    return install_training_hooks(
        lambda original: _backward(tracer, original),
        lambda owner, original: _zero_grad(tracer, original),
        lambda cls, original: _step(tracer, original),
    )


def patch_effects(tracer):
    """While ``tracer`` runs, ``print()`` is a Python side effect (:meth:`Tracer.python_effect`):
    a program would skip it, so the function runs its Python every call, cut into segments
    there. A learning-rate scheduler's ``step()`` is captured instead where it can be
    (:meth:`Tracer.scheduler_step`): run again after the program, every call. Returns the
    function that undoes it."""
    depth = [0]  # (a scheduler's step may call its base class's, hooked too)

    def effect(reason):
        if ACTIVE.tracer is tracer:
            tracer.python_effect(reason)

    def scheduler(sched, fn, args, kwargs):
        if ACTIVE.tracer is not tracer or depth[0]:
            return fn(sched, *args, **kwargs)
        opt = getattr(sched, "optimizer", None)
        before = None if opt is None else settings_of(opt)
        depth[0] += 1
        try:
            result = fn(sched, *args, **kwargs)
        finally:
            depth[0] -= 1
        tracer.scheduler_step(sched, args, kwargs, before)
        return result

    return install_effect_hooks(effect, scheduler)


def settings_of(opt) -> list:
    """An optimizer's settings: each group's items but its parameters."""
    return [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]


def install_effect_hooks(before, scheduler=None):
    """Call ``before(reason)`` ahead of every ``print()`` and learning-rate scheduler
    ``step()`` (or, given, ``scheduler(sched, step, args, kwargs)`` in place of the latter);
    returns the function that undoes it. The tracer and a replay each install their own."""
    saved = [(builtins, "print", builtins.print)]
    busy = [False]  # a side effect is being handled: what it prints is the library's
    for cls in _subclasses(LRScheduler):
        if "step" in cls.__dict__:
            saved.append((cls, "step", cls.__dict__["step"]))

    def hooked(reason, fn):
        if scheduler is not None and fn is not builtins.print:
            return lambda sched, *a, **k: scheduler(sched, fn, a, k)

        def run(*a, **k):
            # (not from inside a side effect's own handling, nor from numba compiling a
            # kernel: see NOTE [numba prints while it compiles] in symbolic/static/kernels.py)
            if not busy[0] and not kernels.compiling_now():
                busy[0] = True
                try:
                    before(reason)
                finally:
                    busy[0] = False
            return fn(*a, **k)

        return run

    for owner, name, fn in saved:
        what = "print()" if name == "print" else f"{owner.__name__}.step() (the learning rate)"
        setattr(owner, name, hooked(what, fn))

    def undo():
        for owner, name, fn in saved:
            setattr(owner, name, fn)

    return undo


def install_training_hooks(backward_of, zero_grad_of, step_of):
    """Replace ``Tensor.backward``, the ``zero_grad`` of optimizers and modules and every
    optimizer's ``step`` by what the factories make of the originals (``backward_of(fn)``,
    ``zero_grad_of(owner, fn)``, ``step_of(cls, fn)``); returns the function that undoes it.
    The tracer and the replay of a segmented function each install their own."""
    saved = [(Tensor, "backward", Tensor.backward), (Optimizer, "zero_grad", Optimizer.zero_grad),
             (Module, "zero_grad", Module.zero_grad)]  # fmt: skip
    Tensor.backward = backward_of(saved[0][2])
    Optimizer.zero_grad = zero_grad_of(Optimizer, saved[1][2])
    Module.zero_grad = zero_grad_of(Module, saved[2][2])
    steps = []
    for cls in _optimizer_classes():
        if "step" in cls.__dict__:
            steps.append((cls, cls.__dict__["step"]))
            cls.step = step_of(cls, cls.__dict__["step"])

    def undo():
        for owner, name, fn in saved:
            setattr(owner, name, fn)
        for cls, fn in steps:
            cls.step = fn

    return undo


def _optimizer_classes():
    return _subclasses(Optimizer)


def _subclasses(base):
    seen, todo = [], [base]
    while todo:
        c = todo.pop()
        seen.append(c)
        todo.extend(c.__subclasses__())
    return seen
