r"""``Optimizer``: the base class of every optimizer (SGD, Adam, AdamW, RMSprop, ...).

An optimizer holds *parameter groups* (lists of parameters that share settings such as the
learning rate) and per-parameter *state* (momentum buffers, Adam's moments). ``step()`` reads
each parameter's ``.grad`` and changes the parameter **in place**, outside the graph.

NOTE [Optimizer updates are in place]
    The update writes into ``p._data`` (the backend array) and bumps ``p``'s version counter,
    exactly as ``p.sub_(...)`` under ``tg.no_grad()`` would, without building a temporary
    tensor per operation. A graph that saved ``p`` before the step then refuses to run backward
    with the stale value (the version check), as in PyTorch.

>>> import tinygrad_edu as tg
>>> w = tg.nn.Parameter([1.0, 2.0])
>>> opt = tg.optim.SGD([w], lr=0.5)
>>> (w * w).sum().backward()
>>> opt.step()
>>> w
Parameter containing:
tensor([0., 0.], requires_grad=True)
"""

from __future__ import annotations

import copy
from collections import defaultdict

import numpy as _np  # state_dict() hands back numpy arrays

from .. import backend
from ..eager.grad_mode import enable_grad, no_grad
from ..eager.tensor import Tensor

__all__ = ["Optimizer"]


class Optimizer:
    """Base class: parameter groups, per-parameter state, ``zero_grad`` and ``step``.

    Args:
        params: an iterable of tensors that require grad, or of dicts
            ``{"params": [...], "lr": ...}`` (parameter groups with their own settings).
        defaults: the settings a group gets when it does not name them.

    Frozen parameters (``requires_grad=False``, e.g. after ``model[0].requires_grad_(False)``)
    are accepted, as in PyTorch: they never get a ``.grad``, and ``step()`` skips every
    parameter whose ``.grad`` is None. Tensors computed from others (non-leaves) are refused.

    Subclasses implement ``_update(p, grad, state, group)`` on raw backend arrays. What every
    optimizer shares is done here once: ``maximize=True`` (ascend: the gradient's sign is
    flipped before the subclass sees it) and ``step(closure)``.
    """

    def __init__(self, params, defaults: dict):
        self.defaults = dict(defaults)
        self.param_groups: list[dict] = []
        self.state: defaultdict[Tensor, dict] = defaultdict(dict)  # param -> its state
        if isinstance(params, Tensor) or not hasattr(params, "__iter__"):
            hint = "model.parameters()" if hasattr(params, "parameters") else "[tensor]"
            raise TypeError(f"{type(self).__name__}: params argument given to the optimizer "
                            f"should be an iterable of Tensors or dicts, but got "
                            f"{type(params).__name__}; pass {hint}")  # fmt: skip
        params = list(params)
        if not params:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, group: dict) -> None:
        """Add a group of parameters, with settings that override the defaults."""
        group = dict(group)
        ps = group["params"]
        ps = [ps] if isinstance(ps, Tensor) else list(ps)
        for i, p in enumerate(ps):
            if not isinstance(p, Tensor):
                raise TypeError(f"{type(self).__name__}: parameter {i} is a {type(p).__name__}, "
                                "not a tensor")  # fmt: skip
            if not p.is_leaf:  # a frozen leaf (requires_grad=False) is fine: see step()
                raise ValueError(
                    f"{type(self).__name__}: parameter {i} is not a leaf (it was computed "
                    f"from other tensors, requires_grad={p.requires_grad}); an optimizer "
                    "updates a leaf that requires grad (or a frozen one, which it skips): "
                    "optimize the weights themselves, e.g. model.parameters()"
                )
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in ps):
            raise ValueError(f"{type(self).__name__}: a parameter appears in two groups")
        group["params"] = ps
        for k, v in self.defaults.items():
            group.setdefault(k, v)
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter (drop them, or fill them with zeros)."""
        for g in self.param_groups:
            for p in g["params"]:
                if set_to_none or p.grad is None:
                    p.grad = None
                else:
                    p.grad._data[...] = 0

    def step(self, closure=None):
        """Update every parameter that has a gradient (see the subclass for the formula);
        those whose ``.grad`` is None (frozen, or unused by the loss) are left as they are.

        ``closure``, when given, is called first (with grad mode on) to recompute the loss and
        its gradients, as L-BFGS-style code does; its result is returned (else None).
        """
        loss = None
        self._opt_called = True  # lr schedulers check that step() came first
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    grad = -p.grad._data if group.get("maximize") else p.grad._data
                    new = self._update(p._data, grad, state, group)
                    if new is not p._data:
                        p._data[...] = new
                    p._counter[0] += 1  # see NOTE [Optimizer updates are in place]
        return loss

    def _check(self, **values) -> None:
        """Refuse negative settings, naming the optimizer and the setting (PyTorch: "Invalid
        learning rate")."""
        for name, v in values.items():
            if v < 0:
                raise ValueError(f"{type(self).__name__}: invalid {name} {v}; it must be >= 0")

    def _update(self, p, grad, state: dict, group: dict):
        """Return the new value of ``p`` (raw arrays), or update ``p`` in place and return it."""
        raise NotImplementedError

    # -- state ---------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """Settings and state, with parameters replaced by their index (numpy arrays)."""
        index = {}
        groups = []
        for g in self.param_groups:
            ids = []
            for p in g["params"]:
                index[id(p)] = len(index)
                ids.append(index[id(p)])
            groups.append({**{k: v for k, v in g.items() if k != "params"}, "params": ids})
        state = {
            index[id(p)]: {k: (backend.to_device(v, "cpu") if hasattr(v, "shape") else v)
                           for k, v in s.items()}
            for p, s in self.state.items() if id(p) in index and s
        }  # fmt: skip
        return {"state": copy.deepcopy(state), "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what :meth:`state_dict` returned (same parameters, same order)."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups) or any(
            len(a["params"]) != len(b["params"]) for a, b in zip(groups, self.param_groups)
        ):
            raise ValueError(f"{type(self).__name__}.load_state_dict: the groups do not match "
                             "this optimizer's parameters")  # fmt: skip
        params = [p for g in self.param_groups for p in g["params"]]
        for mine, saved in zip(self.param_groups, groups):
            mine.update({k: v for k, v in saved.items() if k != "params"})
        self.state = defaultdict(dict)
        for i, s in state_dict["state"].items():
            p = params[int(i)]
            xp = backend.namespace_of(p._data)
            self.state[p] = {
                k: (xp.asarray(backend.to_device(_np.asarray(v), p.device))
                    if hasattr(v, "shape") else v)
                for k, v in s.items()
            }  # fmt: skip

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(g.items()) if k != "params"]
        return "\n".join(lines) + "\n)"
