r"""``Optimizer``: the base class of every optimizer (SGD, Adam, AdamW, RMSprop, ...).

An optimizer holds *parameter groups* (lists of parameters that share settings such as the
learning rate) and per-parameter *state* (momentum buffers, Adam's moments). ``step()`` reads
each parameter's ``.grad`` and changes the parameter **in place**, outside the graph.

NOTE [Optimizer state is tensors]
    As in PyTorch, ``opt.state[p]`` maps names to tensors: SGD's ``momentum_buffer``, Adam's
    ``exp_avg`` and ``exp_avg_sq`` (the parameter's shape and dtype) and its ``step`` (a 0-d
    tensor of the default float dtype). Subclasses compute on raw arrays: ``step()`` hands
    ``_update`` the arrays under those tensors (and plain numbers for the 0-d counters) and
    writes what it returns back into the same tensors, in place, so a tensor taken from
    ``opt.state`` (or from ``opt.state_dict()``, which holds the very same tensors) follows
    the training. An entry exists only for a parameter that has state (plain SGD has none).

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

import numpy as _np  # older state dicts hold numpy arrays

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
                    tensors = self.state.get(p)
                    state = self._raw_state(tensors) if tensors else {}
                    grad = -p.grad._data if group.get("maximize") else p.grad._data
                    new = self._update(p._data, grad, state, group)
                    if new is not p._data:
                        p._data[...] = new
                    p._counter[0] += 1  # see NOTE [Optimizer updates are in place]
                    if state:
                        self.state[p] = self._tensor_state(state, tensors or {}, p)
        return loss

    #: 0-d state handed to ``_update`` as a number (PyTorch keeps these as 0-d tensors)
    _scalar_keys = frozenset({"step", "mu_product", "eta", "mu"})

    def _raw_state(self, tensors: dict) -> dict:
        """``opt.state[p]`` as ``_update`` sees it: arrays, and numbers for the counters."""
        raw = {}
        for k, v in tensors.items():
            if isinstance(v, Tensor):
                v = float(v._data) if k in self._scalar_keys and v.ndim == 0 else v._data
            raw[k] = v
        return raw

    def _tensor_state(self, raw: dict, tensors: dict, p: Tensor) -> dict:
        """Write ``_update``'s state back into ``p``'s state tensors (see NOTE [Optimizer
        state is tensors]); a new entry becomes a new tensor."""
        out = dict(tensors)
        for k, v in raw.items():
            old = tensors.get(k)
            if isinstance(v, bool) or not isinstance(v, int | float) and not hasattr(v, "shape"):
                out[k] = v  # (a setting or a flag kept in the state: as it is)
                continue
            if isinstance(v, int | float):
                if k not in self._scalar_keys:  # a counter of this optimizer's own
                    self._scalar_keys = self._scalar_keys | {k}
                xp = backend.namespace_of(p._data)
                v = xp.asarray(v, dtype=backend.default_float(xp))
            if isinstance(old, Tensor):
                if old._data is v:
                    old._counter[0] += 1  # changed in place by _update
                    continue
                if old.shape == tuple(v.shape) and old.dtype == v.dtype:
                    old._data[...] = v  # a new array: written into the same tensor
                    old._counter[0] += 1
                    continue
            out[k] = Tensor._make(v, device=p._device)
        return out

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
        """``{"state": {index: {name: tensor}}, "param_groups": [...]}``, PyTorch's layout:
        each parameter is replaced by its index (counting through the groups in order), and
        the state holds the optimizer's own tensors, not copies (as in PyTorch): to keep a
        snapshot, ``copy.deepcopy(opt.state_dict())``, or save it (``tg.save``)."""
        index = {}
        groups = []
        for g in self.param_groups:
            for p in g["params"]:
                index.setdefault(id(p), len(index))
            groups.append({**{k: v for k, v in g.items() if k != "params"},
                           "params": [index[id(p)] for p in g["params"]]})  # fmt: skip
        state = {(index[id(p)] if isinstance(p, Tensor) else p): s
                 for p, s in self.state.items() if not isinstance(p, Tensor) or id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what :meth:`state_dict` returned (same parameters, same order).

        The state values may be tensors or numpy arrays (files written by earlier versions).
        As in PyTorch, a tensor is converted to its parameter's dtype and device (``step``
        keeps its own dtype) and taken as it is when it already matches, not copied: load a
        saved file, or a ``copy.deepcopy``, to get state of its own."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(a["params"]) != len(b["params"]) for a, b in zip(groups, self.param_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")  # fmt: skip
        by_id = {i: p for saved, mine in zip(groups, self.param_groups)
                 for i, p in zip(saved["params"], mine["params"])}  # fmt: skip
        for mine, saved in zip(self.param_groups, groups):
            mine.update({k: copy.deepcopy(v) for k, v in saved.items() if k != "params"})
        self.state = defaultdict(dict)
        for i, s in state_dict["state"].items():
            p = by_id.get(i, by_id.get(int(i)) if isinstance(i, str) and i.isdigit() else None)
            if p is None:
                self.state[i] = s  # state of no parameter: kept as it is (PyTorch)
                continue
            if type(self)._update is Optimizer._update:  # (a step of its own: its own form)
                self.state[p] = dict(s)
                continue
            self.state[p] = {k: _cast(v, p, k) for k, v in s.items()}

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(g.items()) if k != "params"]
        return "\n".join(lines) + "\n)"


def _cast(value, p: Tensor, key):
    """A loaded state value for parameter ``p``: tensors (and numpy arrays, from files of
    earlier versions) on ``p``'s device, floating ones in ``p``'s dtype except ``step``."""
    if isinstance(value, _np.ndarray | _np.generic):
        xp = backend.namespace_of(p._data)
        arr = _np.asarray(value)
        if key in Optimizer._scalar_keys and arr.ndim == 0 and arr.dtype.kind in "iuf":
            arr = arr.astype(backend.default_float(_np))  # an old counter: PyTorch's 0-d float
        value = Tensor._make(xp.asarray(backend.to_device(arr, p._device)), device=p._device)
    elif isinstance(value, int | float) and not isinstance(value, bool) and key == "step":
        xp = backend.namespace_of(p._data)
        value = Tensor._make(xp.asarray(value, dtype=backend.default_float(xp)), device=p._device)
    if not isinstance(value, Tensor):
        return value
    if key == "step":
        return value if value._device == p._device else value.to(p.device)
    if backend.is_floating(p.dtype) and backend.is_floating(value.dtype):
        return value.to(device=p.device, dtype=p.dtype)
    return value if value._device == p._device else value.to(p.device)
