r"""``Module`` and ``Parameter``: networks as trees of modules that own their weights.

A :class:`Parameter` is a leaf tensor that requires grad. Assigning one (or a sub-module) to an
attribute of a :class:`Module` registers it under that name, so ``parameters()`` finds every
weight in the tree and ``state_dict()`` names them with dotted paths (``"0.weight"``), exactly
as in PyTorch.

>>> import tinygrad_edu as tg
>>> class Affine(tg.nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.w = tg.nn.Parameter([[2.0]])
...         self.b = tg.nn.Parameter([1.0])
...     def forward(self, x):
...         return x @ self.w + self.b
>>> m = Affine()
>>> [name for name, _ in m.named_parameters()]
['w', 'b']
>>> m(tg.tensor([[3.0]]))
tensor([[7.]], grad_fn=<AddBackward0>)

Saved state dicts are plain ``.npz`` archives (one array per parameter name), read back with
``allow_pickle=False``. Other nestings (an optimizer's state, a checkpoint dict, a tensor) are
saved as their arrays plus a JSON description; a whole module (``tg.save(model, f)``) is
pickled with its tensors kept as arrays, and loading it builds only allowed classes
(PyTorch's ``weights_only`` rule, :mod:`tinygrad_edu.nn.serialization`).
"""

from __future__ import annotations

import io
import json
import os
import pickle
import sys
import warnings
import weakref
import zipfile
from collections import OrderedDict, namedtuple
from collections.abc import Iterator, Mapping

import numpy as _np  # state dicts are numpy arrays: the file format, not math

from .. import backend
from ..eager.grad_mode import no_grad
from ..eager.node import _sequence
from ..eager.tensor import Tensor
from ..size import Size
from .hooks import ModuleHooks, call_with_hooks
from .serialization import (
    BUILTIN_GLOBALS,
    FullUnpickler,
    UnsupportedGlobal,
    WeightsUnpickler,
    named_global,
)

__all__ = ["Module", "Parameter", "save", "load", "IncompatibleKeys"]

class IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns (PyTorch's ``_IncompatibleKeys``): a named tuple
    ``(missing_keys, unexpected_keys)`` that unpacks as a pair, shown as ``<All keys matched
    successfully>`` when both lists are empty."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class Parameter(Tensor):
    """A tensor that is a model's weight: a leaf with ``requires_grad=True`` by default.

    Args:
        data: an array, a tensor (its data is shared, not copied) or Python data (float32).
        requires_grad: whether optimizers should train it (default True).
        device: where to put it (default: where ``data`` is).
    """

    __slots__ = ()
    persistable = True  # Paddle's flag: a parameter is saved with its model

    def __init__(self, data, requires_grad: bool = True, dtype=None, device=None):
        if isinstance(data, Tensor):
            device = device if device is not None else data.device
            data = data._data
        super().__init__(data, requires_grad=requires_grad, dtype=dtype, device=device)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class Module:
    """Base class of every layer and network.

    Subclasses call ``super().__init__()`` first, assign their :class:`Parameter` s and
    sub-modules as attributes, and define ``forward``. Calling the module calls ``forward``.

    Besides parameters, a module may hold *buffers* (:meth:`register_buffer`): tensors that
    are part of its state (saved in ``state_dict``, moved by ``to``) but not trained, such as
    batch norm's running statistics.

    Attributes:
        training: True in training mode (the default), False after ``eval()``; layers such as
            :class:`~tinygrad_edu.nn.Dropout` and :class:`~tinygrad_edu.nn.BatchNorm2d` read it.

    Hooks (PyTorch's): ``register_forward_pre_hook(fn(module, args))``,
    ``register_forward_hook(fn(module, args, output))``,
    ``register_full_backward_pre_hook(fn(module, grad_output))`` and
    ``register_full_backward_hook(fn(module, grad_input, grad_output))``; each may return a
    replacement and each returns a handle with ``remove()`` (see :mod:`tinygrad_edu.nn.hooks`).
    """

    _hooks = None  # a ModuleHooks once a hook is registered (calls without hooks stay cheap)

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "training", True)

    # -- registration by attribute assignment -------------------------------------------------
    def __setattr__(self, name: str, value) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                f"cannot assign {name!r} before Module.__init__() ran; call "
                f"super().__init__() first in {type(self).__name__}.__init__"
            )
        params, modules = self.__dict__["_parameters"], self.__dict__["_modules"]
        buffers = self.__dict__.get("_buffers", {})
        if name in buffers and not isinstance(value, Parameter | Module):
            if value is not None and not isinstance(value, Tensor):  # PyTorch's refusal
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                f"(Tensor or None expected); to change its values in place "
                                f"use `with tg.no_grad(): module.{name}.fill_(value)`")  # fmt: skip
            buffers[name] = value  # assigning to a buffer replaces its tensor (PyTorch)
            return
        if name in params and not isinstance(value, Parameter | Module):
            if value is not None:  # a plain tensor would silently stop being trained
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter "
                                f"'{name}' (nn.Parameter or None expected); wrap it: "
                                f"nn.Parameter(value)")  # fmt: skip
            params[name] = None  # PyTorch keeps the name registered, holding None
            return
        if name in modules and not isinstance(value, Module | Parameter):
            if value is not None:  # a child would silently turn into a plain attribute
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (nn.Module or None expected); to store other values, "
                                f"delete the child first")  # fmt: skip
            modules[name] = None  # PyTorch keeps the name registered, holding None
            return
        # a name that changes kind leaves its old registry; one that keeps its kind keeps its
        # place (PyTorch), so replacing ``net.fc`` or ``net[0]`` leaves the order unchanged
        is_param, is_module = isinstance(value, Parameter), isinstance(value, Module)
        buffers.pop(name, None)
        if not is_param:
            params.pop(name, None)
        if not is_module:
            modules.pop(name, None)
        self.__dict__.pop(name, None)
        if is_param:
            params[name] = value
        elif is_module:
            modules[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str):
        # only called when normal lookup fails: look in the registries
        d = self.__dict__
        for registry in ("_parameters", "_modules", "_buffers"):
            if registry in d and name in d[registry]:
                return d[registry][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        for registry in (self._parameters, self._modules, self._buffers):
            if name in registry:
                del registry[name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` under ``name`` (same as assigning the attribute)."""
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"register_parameter({name!r}): expected a Parameter, got {type(param).__name__}"
            )
        setattr(self, name, param)

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register ``tensor`` as a buffer: state that ``state_dict`` saves (unless
        ``persistent=False``) and ``to`` moves, but that is not a parameter (not trained)."""
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {type(name).__name__}")
        if "." in name or not name:
            raise KeyError(f"register_buffer: invalid name {name!r} (no dots, not empty)")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                            f"'{name}' (Tensor or None required)")  # fmt: skip
        if name not in self._buffers and hasattr(self, name):  # PyTorch's KeyError
            raise KeyError(f"attribute '{name}' already exists")
        self._buffers[name] = tensor
        if tensor is not None:
            tensor.persistable = bool(persistent)  # Paddle's flag, as its register_buffer sets
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register a sub-module under ``name`` (same as assigning the attribute)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module({name!r}): expected a Module, got {type(module)}")
        setattr(self, name, module)

    register_module = add_module  # PyTorch's other name

    # -- the tree ------------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        if args and type(args[0]) is list and type(self).__module__.startswith(_LIBRARY):
            _refuse_list_input(self, args[0])
        start = next(_sequence)
        if self._hooks is None:
            out = self.forward(*args, **kwargs)
        else:
            out = call_with_hooks(self, self.forward, args, kwargs)
        _mark_call(self, out, start)
        return out

    # -- hooks -------------------------------------------------------------------------------
    def _hook_table(self) -> ModuleHooks:
        if self._hooks is None:
            object.__setattr__(self, "_hooks", ModuleHooks())
        return self._hooks

    def register_forward_pre_hook(self, hook, *, prepend: bool = False,
                                  with_kwargs: bool = False):  # fmt: skip
        """Call ``hook(module, args)`` before ``forward``; a returned value replaces the
        positional arguments (``with_kwargs=True``: ``hook(module, args, kwargs)`` returning
        ``(args, kwargs)``)."""
        return self._hook_table().add("forward_pre", (hook, with_kwargs), prepend)

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False):
        """Call ``hook(module, args, output)`` after ``forward``; a returned value replaces
        the output (``with_kwargs=True``: ``hook(module, args, kwargs, output)``)."""
        return self._hook_table().add("forward", (hook, with_kwargs), prepend)

    def register_full_backward_pre_hook(self, hook, prepend: bool = False):
        """Call ``hook(module, grad_output)`` when the gradients of the module's outputs are
        known; a returned tuple replaces them."""
        return self._hook_table().add("backward_pre", hook, prepend)

    def register_full_backward_hook(self, hook, prepend: bool = False):
        """Call ``hook(module, grad_input, grad_output)`` when the gradients of the module's
        tensor inputs are known; a returned tuple replaces ``grad_input``."""
        if self._hook_table().legacy_backward:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")  # fmt: skip
        return self._hook_table().add("backward", hook, prepend)

    def register_backward_hook(self, hook):
        """PyTorch's older backward hook, kept for old code: ``hook(module, grad_input,
        grad_output)`` runs as a hook of the *last* node of the forward (the ``grad_fn`` of the
        output), so ``grad_input`` holds the gradients of that one node's inputs. That is
        the gradient of the module's input only when the forward is a single op on it (as
        in ``nn.ReLU``); prefer :meth:`register_full_backward_hook`. A module cannot have
        both kinds (RuntimeError, as in PyTorch)."""
        table = self._hook_table()
        if table.backward:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")  # fmt: skip
        return table.add("legacy_backward", hook)

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """``(name, module)`` for each direct sub-module, in registration order; as in
        PyTorch, a module registered twice (under two names) is listed once, under its first
        name, and a name set to None is skipped."""
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_modules(self, memo=None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:  # fmt: skip
        """This module and every module below it, depth first, with dotted names (a module
        reachable twice is listed once unless ``remove_duplicate=False``)."""
        if isinstance(memo, str):  # named_modules("prefix"): the older positional use
            memo, prefix = None, memo
        stack = [(prefix, self)]
        seen = set() if memo is None else {id(m) for m in memo}
        while stack:
            name, mod = stack.pop()
            if remove_duplicate:
                if id(mod) in seen:
                    continue
                seen.add(id(mod))
            yield name, mod
            kids = [(f"{name}.{k}" if name else k, m) for k, m in mod._modules.items()
                    if m is not None]  # fmt: skip
            stack.extend(reversed(kids))

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def _named_members(self, registry: str, prefix: str, recurse: bool,
                       remove_duplicate: bool):  # fmt: skip
        seen = set()
        mods = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse
                else [(prefix, self)])  # fmt: skip
        for mod_name, mod in mods:
            for name, t in mod.__dict__[registry].items():
                if t is None or (remove_duplicate and id(t) in seen):
                    continue
                seen.add(id(t))
                yield (f"{mod_name}.{name}" if mod_name else name), t

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(dotted name, parameter)`` for every parameter in the tree (or of this module
        alone, ``recurse=False``), each once (a tied weight under its first name), in
        registration order."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:  # fmt: skip
        """``(dotted name, buffer)`` for every buffer in the tree, each once."""
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> Module:
        """The sub-module at the dotted path ``target`` (``""``: this module)."""
        if not isinstance(target, str):
            raise TypeError(f"get_submodule: target must be a dotted name such as 'layers.0', "
                            f"got {type(target).__name__} {target!r}")  # fmt: skip
        mod = self
        for item in target.split(".") if target else []:
            if item not in mod._modules or mod._modules[item] is None:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{item}`")
            mod = mod._modules[item]
        return mod

    def _get_member(self, target: str, registry: str, kind: str):
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod.__dict__[registry]:
            if hasattr(mod, name):
                raise AttributeError(f"`{name}` is not an {kind}")
            raise AttributeError(f"{type(mod).__name__} has no attribute `{name}`")
        return mod.__dict__[registry][name]

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target`` (``"0.weight"``)."""
        return self._get_member(target, "_parameters", "nn.Parameter")

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at the dotted path ``target``."""
        return self._get_member(target, "_buffers", "buffer")

    def _state_slots(self) -> list[tuple[str, Module, str, Tensor]]:
        """What ``state_dict`` holds, in PyTorch's order: module by module (depth first), its
        parameters and then its persistent buffers, as ``(dotted name, module, attribute,
        tensor)``. As in PyTorch, a tensor reachable under two names (a tied weight,
        ``head.weight = tok_emb.weight``) is listed under both, so a PyTorch model's state
        dict loads here key for key."""
        items = []
        for mod_name, mod in self.named_modules(remove_duplicate=False):
            buffers = ((n, b) for n, b in mod._buffers.items() if n not in mod._non_persistent)
            for name, t in (*mod._parameters.items(), *buffers):
                if t is not None:
                    items.append(((f"{mod_name}.{name}" if mod_name else name), mod, name, t))
        return items

    def _state_items(self) -> list[tuple[str, Tensor]]:
        return [(name, t) for name, _, _, t in self._state_slots()]

    def apply(self, fn) -> Module:
        """Call ``fn(module)`` on every sub-module and then on this one; returns self.
        PyTorch's way to initialise a whole network: ``net.apply(init_weights)``.

        The order is PyTorch's: each child in turn, recursively (its own children before
        itself), and this module last. As in PyTorch there is no de-duplication across the
        tree: a module shared by two parents is visited once under each."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # -- modes and gradients -------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode on this module and every sub-module; returns self."""
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        return self

    def eval(self) -> Module:
        """Evaluation mode (``train(False)``): dropout passes values through."""
        return self.train(False)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's gradient: drop it (default) or fill it with zeros."""
        for p in self.parameters():
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad._data[...] = 0

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` on every parameter (False: freeze the module); returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def to(self, *args, device=None, dtype=None, non_blocking: bool = False) -> Module:
        """Move every parameter and buffer to ``device`` and/or convert the floating ones to
        ``dtype``, in place (the same Parameter objects, so an optimizer made earlier still
        holds them); returns self. ``to("cuda")``, ``to(tg.float64)``, ``to("cpu",
        tg.float64)``, ``to(tensor)`` (its device and dtype), as in PyTorch."""
        for a in args:
            if isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, str | backend.Device):
                device = a
            else:
                dtype = a
        if dtype is not None:
            xp_dtype = _np.dtype(dtype.removeprefix("torch.") if isinstance(dtype, str) else dtype)
            if xp_dtype.kind != "f":
                raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got "
                                f"desired dtype={xp_dtype}")  # fmt: skip
            self._convert(lambda t: backend.is_floating(t.dtype), xp_dtype.name)
        if device is not None:
            dev = backend.parse_device(device)
            for p in self._tensors():
                if p._device != dev:
                    p._data = backend.to_device(p._data, dev, src=p._device)
                    p._device = dev
                    if p._grad is not None:
                        p._grad = Tensor(backend.to_device(p._grad._data, dev, src=p._grad._device),
                                         device=dev)  # fmt: skip
        return self

    def _tensors(self) -> list[Tensor]:
        return [*self.parameters(), *self.buffers()]

    def _convert(self, which, dtype_name: str) -> Module:
        """Convert the parameters and buffers ``which(t)`` accepts to ``dtype_name``, in
        place (their gradients too); returns self."""
        with no_grad():
            for t in self._tensors():
                if which(t):
                    dt = getattr(backend.namespace_of(t._data), dtype_name)
                    if t._data.dtype != dt:
                        t._data = backend.astype(t._data, dt)
                        t._counter[0] += 1
                        if t._grad is not None:
                            t._grad = Tensor(backend.astype(t._grad._data, dt), device=t._device)
        return self

    def cpu(self) -> Module:
        """``to("cpu")``."""
        return self.to("cpu")

    def cuda(self, device=None) -> Module:
        """``to("cuda")`` (or ``"cuda:N"`` for an index)."""
        return self.to("cuda" if device is None else f"cuda:{device}" if isinstance(device, int)
                       else device)  # fmt: skip

    def float(self) -> Module:
        """Floating parameters and buffers to float32."""
        return self._convert(lambda t: backend.is_floating(t.dtype), "float32")

    def double(self) -> Module:
        """Floating parameters and buffers to float64."""
        return self._convert(lambda t: backend.is_floating(t.dtype), "float64")

    def half(self) -> Module:
        """Floating parameters and buffers to float16."""
        return self._convert(lambda t: backend.is_floating(t.dtype), "float16")

    def type(self, dst_type) -> Module:
        """Every parameter and buffer to ``dst_type``."""
        return self._convert(lambda t: True, _np.dtype(dst_type).name)

    # -- state ---------------------------------------------------------------------------------
    def state_dict(self, *args, destination=None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Tensor]:  # fmt: skip
        """Every parameter and persistent buffer by dotted name, in an ``OrderedDict``.

        As in PyTorch, the values are *not* copies: each is ``t.detach()``, a tensor that
        does not require grad and shares the parameter's memory (and version counter), so
        a later optimizer step shows in it. To keep a snapshot (the best weights so far),
        copy it: ``best = copy.deepcopy(model.state_dict())``. ``keep_vars=True`` gives the
        Parameters and buffers themselves; ``prefix`` goes in front of every name; the
        entries are added to ``destination`` (a dict) when one is given, which is returned.
        """
        if args:  # PyTorch's old positional form: state_dict(destination, prefix, keep_vars)
            destination = args[0]
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        out = OrderedDict() if destination is None else destination
        for name, t in self._state_items():
            out[prefix + name] = t if keep_vars else t.detach()
        return out

    def _upgrade_state_dict(self, state: dict, prefix: str) -> None:
        """Called by ``load_state_dict`` on every module, with its key prefix (``"bn."``), on
        a copy of the given state dict, before the keys are checked: a layer whose saved
        state changed over time fills in what an older checkpoint lacks here (batch norm's
        ``num_batches_tracked``). The base class changes nothing."""

    def load_state_dict(self, state_dict, strict: bool = True,
                        assign: bool = False) -> IncompatibleKeys:  # fmt: skip
        """Load ``state_dict`` (name -> tensor, or numpy array) into the parameters and buffers.

        By default the values are copied into the existing tensors, in place (an optimizer
        made earlier still holds them), converted to their dtype and device. With
        ``assign=True`` each parameter is *replaced* by the given tensor, no copy (wrapped as
        a Parameter that keeps the old one's ``requires_grad``, PyTorch's rule), and each
        buffer too. With ``strict=True`` (default) every name must be present and no other
        may be; ``strict=False`` skips them. Shapes must match in any case. All checks come
        first, so a refused state dict changes nothing; the error lists every problem in
        PyTorch's words. Returns PyTorch's ``(missing_keys, unexpected_keys)`` named tuple.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        state = OrderedDict(state_dict)  # a copy: upgrades below leave the caller's alone
        for mod_name, mod in self.named_modules(remove_duplicate=False):
            mod._upgrade_state_dict(state, f"{mod_name}." if mod_name else "")
        slots = self._state_slots()
        own = {name for name, *_ in slots}
        missing = [name for name, *_ in slots if name not in state]
        unexpected = [k for k in state if k not in own]
        errors, todo = [], []
        for name, mod, attr, t in slots:
            if name not in state:
                continue
            value = _loadable(state[name])
            if value is None:
                errors.append(f'While copying the parameter named "{name}", expected Tensor '
                              "or Tensor-like object (an array) from checkpoint but received "
                              f"{type(state[name])}")  # fmt: skip
                continue
            shape = tuple(value.shape)
            if not assign and (shape, t.shape) in (((), (1,)), ((1,), ())):
                value = value.reshape(t.shape)  # a counter saved as a scalar, or vice versa
            elif shape != t.shape:
                errors.append(f"size mismatch for {name}: copying a param with shape "
                              f"{_size(shape)} from checkpoint, the shape in current model is "
                              f"{_size(t.shape)}.")  # fmt: skip
                continue
            todo.append((mod, attr, t, value))
        if strict:
            if unexpected:
                names = ", ".join(f'"{k}"' for k in unexpected)
                errors.insert(0, f"Unexpected key(s) in state_dict: {names}. ")
            if missing:
                names = ", ".join(f'"{k}"' for k in missing)
                errors.insert(0, f"Missing key(s) in state_dict: {names}. ")
        if errors:
            hint = ("\n\t(pass strict=False to load only the keys that match)"
                    if strict and (missing or unexpected) else "")
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors) + hint)  # fmt: skip
        with no_grad():
            for mod, attr, t, value in todo:
                if assign:
                    _assign(mod, attr, t, value)
                    continue
                src = value._data if isinstance(value, Tensor) else value
                t._data[...] = backend.to_device(
                    src, t._device, src=value._device if isinstance(value, Tensor) else None)
                t._counter[0] += 1  # an in-place change, as for any optimizer step
        return IncompatibleKeys(missing, unexpected)

    def save(self, path: str | os.PathLike) -> str:
        """Write ``state_dict()`` to an ``.npz`` file, adding the suffix ``.npz`` when the name
        has none (``model.save("net")`` writes ``net.npz``); returns the path written. The
        module-level :func:`save` (``tg.save``, PyTorch's spelling) writes exactly the name
        it is given."""
        path = os.fspath(path)
        return save(self.state_dict(), path if path.endswith(".npz") else path + ".npz")

    # -- printing ------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The text inside this module's parentheses (``in_features=64, ...``)."""
        return ""

    def __repr__(self) -> str:
        lines = []
        for name, m in self._modules.items():
            body = repr(m).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        extra = self.extra_repr()
        if not lines:
            return f"{type(self).__name__}({extra})"
        head = f"{type(self).__name__}({extra}" if extra else f"{type(self).__name__}("
        return head + "\n" + "\n".join(lines) + "\n)"


_LIBRARY = __name__.partition(".")[0] + "."  # "tinygrad_edu.": the library's own layers
_ANY_INPUT = frozenset({"Identity", "Sequential"})  # (Sequential: its first layer checks)


def _refuse_list_input(module: Module, value: list) -> None:
    """A Python list given to one of the library's layers (``nn.Linear(2, 3)([1.0, 2.0])``):
    PyTorch refuses it with a TypeError, and so does this, naming the layer."""
    if type(module).__name__ in _ANY_INPUT:
        return
    raise TypeError(
        f"{type(module).__name__}: the input must be a Tensor, not a Python list (got "
        f"{value!r:.60}); wrap the data first: {type(module).__name__.lower()}"
        f"(tg.tensor(data))"
    )


def _loadable(value):
    """A state dict value as a Tensor or numpy array, or None when it cannot be one."""
    if isinstance(value, Tensor | _np.ndarray):
        return value
    if isinstance(value, bool | int | float | _np.generic | list | tuple) or hasattr(
            value, "__array__"):  # (a PyTorch state dict's tensors too)  # fmt: skip
        try:
            return _np.asarray(value)
        except (TypeError, ValueError, RuntimeError):
            return None
    return None


def _size(shape) -> str:
    return f"tg.Size({list(shape)})"


def _assign(mod: Module, attr: str, old: Tensor, value) -> None:
    """``load_state_dict(assign=True)``: ``mod.attr`` becomes ``value`` itself (no copy)."""
    if not isinstance(value, Tensor):
        value = Tensor(value)
    if isinstance(old, Parameter):
        if isinstance(value, Parameter):
            value.requires_grad_(old.requires_grad)
        else:
            value = Parameter(value, requires_grad=old.requires_grad)
    setattr(mod, attr, value)


def _mark_call(module: Module, out, start: int) -> None:
    """Remember on each output's ``grad_fn`` that ``module`` made it, with the sequence number
    taken when the call began: the nodes recorded during the call are the ones reachable from
    the output with a larger ``sequence_nr``. Drawings read this to box each module's ops
    (``viz.draw(loss, modules=model)``); it costs one attribute per call."""
    outs = out if isinstance(out, tuple | list) else (out,)
    for t in outs:
        node = getattr(t, "grad_fn", None) if isinstance(t, Tensor) else None
        if node is not None and node.sequence_nr > start:
            calls = node.__dict__.get("_module_calls", ())
            node._module_calls = calls + ((weakref.ref(module), start),)


def save(
    obj,
    f,
    pickle_module=None,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
):
    """Write ``obj`` to ``f`` as an uncompressed ``.npz`` archive; returns ``f`` (the path as
    a string, or the file object).

    ``f`` is a path, written under exactly that name (``save(sd, "ckpt.pt")`` writes
    ``ckpt.pt``), or a binary file open for writing (``io.BytesIO()``, ``open(p, "wb")``), as
    ``torch.save(obj, f)`` takes. ``obj`` is what ``torch.save`` takes:

    * a state dict, or any nesting of dicts, lists and tuples of tensors, arrays, numbers,
      strings and None (an optimizer's ``state_dict()``, ``{"model": sd, "epoch": 3}``, a
      tensor): its arrays plus a JSON description of the nesting, no pickle (see NOTE [The
      structure of a saved file]); a plain state dict (names -> distinct arrays) is one array
      per name, readable by ``np.load`` alone;
    * anything else, such as a whole Module (``torch.save(model, f)``): pickled, its tensors
      kept out of the pickle as arrays of the same archive (see NOTE [Pickled objects in a
      saved file]). ``load`` gives back a module of the same class. A hook that cannot be
      pickled (a lambda, a local function) is left out, with a warning that names it.

    One tensor (or array) under several names is stored once and loads as one object, as in
    PyTorch (tied weights stay tied). ``pickle_protocol`` is used when pickling (at least 2);
    ``pickle_module`` and PyTorch's other keywords are accepted and ignored (this always uses
    :mod:`pickle`, whose format ``load`` reads).

    >>> import tempfile, os, tinygrad_edu as tg
    >>> m = tg.nn.Linear(3, 2)
    >>> f = tg.nn.save(m.state_dict(), os.path.join(tempfile.mkdtemp(), "weights.npz"))
    >>> sorted(tg.nn.load(f))
    ['bias', 'weight']
    >>> f = tg.nn.save(m, os.path.join(tempfile.mkdtemp(), "model.pt"))
    >>> tg.nn.load(f)
    Linear(in_features=3, out_features=2, bias=True)
    """
    if _is_flat_state(obj):
        arrays = {k: _np.asarray(v) for k, v in obj.items()}
    elif _is_plain(obj, set()):
        arrays = {}
        structure = _encode(obj, arrays, "", {"objects": {}, "storages": {}})
        arrays[_STRUCTURE] = _np.asarray(json.dumps(structure))
    else:
        arrays = _pickled(obj, pickle_protocol)
    if hasattr(f, "write"):
        _np.savez(f, **arrays)  # a file object: numpy writes into it, adding no suffix
        return f
    path = os.fspath(f)
    with open(path, "wb") as out:  # (given a name, numpy would append ".npz" to it)
        _np.savez(out, **arrays)
    return path


# NOTE [The structure of a saved file]
#     A saved file is an .npz archive, read with ``allow_pickle=False``: loading never runs
#     code. A plain state dict of numpy arrays (names -> arrays on distinct memory) is one
#     array per name, readable by ``np.load`` alone, and loads as numpy arrays. Anything else
#     keeps its arrays as entries (named after their key in a top-level dict, else ``"0"``,
#     ``"1"`` ...) and the nesting as JSON in the entry ``__structure__``: ``{"tensor": "w",
#     "obj": 0, "device": "cpu", "requires_grad": false}`` for a tensor, ``{"array": "1",
#     "obj": 1}`` for a numpy array, ``{"dict": [[key, value], ...]}`` (keys may be ints, as
#     in an optimizer's state), ``{"tuple": [...]}``, and JSON's own lists, numbers, strings,
#     booleans and null.
#
#     Memory shared at saving time is shared after loading, as with ``torch.load``: each
#     *storage* (the numpy array that owns the memory) is written once. The same object
#     under two names gets the same ``"obj"`` number and loads as one object; two tensors on
#     one array (``state_dict()`` of a model with tied weights: two ``detach()`` es of one
#     Parameter) load as two tensors on one array; a view (``t[0]``, ``t.T``) is written as
#     ``"view": [offset, shape, strides]`` (in elements) into its storage's entry and loads
#     as a view of it again.
_STRUCTURE = "__structure__"


def _storage(arr):
    """The numpy array that owns ``arr``'s memory (``arr`` itself when it does), or None when
    that memory is not one plain contiguous numpy array of the same dtype."""
    if not isinstance(arr, _np.ndarray):
        return None
    root = arr
    while isinstance(root.base, _np.ndarray):
        root = root.base
    if root is arr:
        return root
    if root.dtype != arr.dtype or not root.flags.c_contiguous or root.base is not None:
        return None
    return root


def _is_flat_state(obj) -> bool:
    if not (isinstance(obj, dict) and obj):
        return False
    if not all(isinstance(k, str) and k != _STRUCTURE and type(v) is _np.ndarray
               for k, v in obj.items()):  # fmt: skip
        return False
    roots = [_storage(v) for v in obj.values()]
    return all(r is v for r, v in zip(roots, obj.values())) and len(
        {id(r) for r in roots}) == len(obj)  # fmt: skip


def _entry(arrays: dict, hint) -> str:
    if isinstance(hint, str) and hint and hint != _STRUCTURE and hint not in arrays:
        return hint
    n = len(arrays)
    while str(n) in arrays:
        n += 1
    return str(n)


def _encode_leaf(value, arrays: dict, seen: dict, hint):
    """Describe a tensor or numpy array; its storage is written once (see the NOTE)."""
    arr = value._data if isinstance(value, Tensor) else value
    out = {}
    root = _storage(arr) if isinstance(arr, _np.ndarray) and not isinstance(value, _np.generic) \
        else None  # fmt: skip
    if root is None:  # (a device array, a numpy scalar ...): written on its own
        key = _entry(arrays, hint)
        arrays[key] = _np.asarray(value.numpy(force=True) if isinstance(value, Tensor) else value)
    else:
        hit = seen["storages"].get(id(root))
        if hit is None:
            key = _entry(arrays, hint)
            arrays[key] = root
            seen["storages"][id(root)] = (root, key)
        else:
            key = hit[1]
        if arr is not root:
            itemsize = arr.itemsize
            offset = (arr.__array_interface__["data"][0]
                      - root.__array_interface__["data"][0]) // itemsize  # fmt: skip
            out["view"] = [int(offset), list(arr.shape), [st // itemsize for st in arr.strides]]
    if isinstance(value, Tensor):
        out.update({"tensor": key, "device": value.device, "requires_grad": value.requires_grad})
    else:
        out.update({"array": key, "scalar": isinstance(value, _np.generic)})
    out["obj"] = len(seen["objects"])
    seen["objects"][id(value)] = (value, out)  # (the object kept alive: ids stay unique)
    return out


def _encode(value, arrays: dict, where: str, seen: dict, hint=None):
    if isinstance(value, Tensor | _np.ndarray | _np.generic):
        if id(value) in seen["objects"]:
            return seen["objects"][id(value)][1]  # the same object again: loads as one
        return _encode_leaf(value, arrays, seen, hint)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dict):
        top = where == ""
        return {"dict": [[_encode(k, arrays, f"{where} key", seen),
                          _encode(v, arrays, f"{where}[{k!r}]", seen, k if top else None)]
                         for k, v in value.items()]}  # fmt: skip
    if isinstance(value, list | tuple):
        items = [_encode(v, arrays, f"{where}[{i}]", seen) for i, v in enumerate(value)]
        return items if isinstance(value, list) else {"tuple": items}
    raise TypeError(
        f"save: cannot write {type(value).__module__}.{type(value).__name__} at "
        f"{where or 'the top'}; a saved object is made of dicts, lists and tuples of tensors, "
        "arrays, numbers, strings and None (save a module's state_dict(), not the module's "
        "other attributes)"
    )


def _decode(value, archive, made: dict):
    if isinstance(value, list):
        return [_decode(v, archive, made) for v in value]
    if not isinstance(value, dict):
        return value
    if "tensor" in value or "array" in value:
        key = value.get("tensor", value.get("array"))
        obj = ("obj", value["obj"]) if "obj" in value else ("entry", key)  # (older files)
        if obj not in made:  # one object per saved object: shared names stay shared
            made[obj] = _decode_leaf(value, key, archive, made)
        return made[obj]
    if "tuple" in value:
        return tuple(_decode(v, archive, made) for v in value["tuple"])
    return {_hashable(_decode(k, archive, made)): _decode(v, archive, made)
            for k, v in value["dict"]}  # fmt: skip


def _decode_leaf(value, key, archive, made):
    storage = made.setdefault(("storage", key), archive[key])  # read once, shared
    arr = storage
    if "view" in value:
        offset, shape, strides = value["view"]
        size = storage.itemsize
        arr = _np.ndarray(tuple(shape), storage.dtype, buffer=storage, offset=offset * size,
                          strides=tuple(st * size for st in strides))  # fmt: skip
    if "tensor" in value:
        device = backend.parse_device(value["device"])
        data = arr if device == backend.parse_device("cpu") else backend.to_device(arr, device)
        t = Tensor._make(data, device=device)
        return t.requires_grad_() if value["requires_grad"] else t
    return arr[()] if value.get("scalar") else arr


def _hashable(key):
    return tuple(_hashable(k) for k in key) if isinstance(key, list) else key


def _is_plain(value, path: set) -> bool:
    """Whether ``value`` is a nesting that the JSON description can hold (what ``_encode``
    takes); ``path`` holds the containers being walked, so a list inside itself is not."""
    if isinstance(value, Tensor | _np.ndarray | _np.generic) or value is None or isinstance(
            value, bool | int | float | str):  # fmt: skip
        return True
    if not isinstance(value, dict | list | tuple) or id(value) in path:
        return False
    path.add(id(value))
    items = [x for kv in value.items() for x in kv] if isinstance(value, dict) else value
    plain = all(_is_plain(x, path) for x in items)
    path.discard(id(value))
    return plain


# NOTE [Pickled objects in a saved file]
#     An object that is not a plain nesting (a whole Module, a class of the program's own)
#     is pickled, as ``torch.save`` does, into the archive entry ``__pickle__`` (its bytes as
#     a uint8 array), and its tensors, Parameters and numpy arrays are not: each is written as
#     an entry of the archive, exactly as in the JSON description (``_encode``: storages once,
#     views as views), and the pickle holds that description as the object's *persistent id*
#     (pickle's hook for objects kept outside the pickle), with ``"parameter": true`` added
#     for a Parameter. Loading hands each persistent id back to ``_decode``, so the tensors
#     come back with their sharing, and a Parameter as a Parameter with its requires_grad.
#     The file stays one .npz archive that ``np.load`` opens. A module's hook table is written
#     as its hook functions only (``_rebuild_hooks`` registers them again on load).
#
#     Reading it never imports a name that is not allowed (``load``'s ``weights_only``, see
#     :mod:`tinygrad_edu.nn.serialization`): by default the pickle may name only this
#     library's Module classes, ``_rebuild_hooks``, ``Size``, ``device``, the numpy scalar
#     types that are its dtypes, the containers of ``BUILTIN_GLOBALS``, and what the program
#     allowed with ``add_safe_globals`` or ``safe_globals``.
_PICKLE = "__pickle__"
_DTYPE_NAMES = frozenset({"float16", "float32", "float64", "int8", "int16", "int32", "int64",
                          "uint8", "bool", "bool_"})  # fmt: skip


class _ArchivePickler(pickle.Pickler):
    """Pickles an object with its tensors and arrays kept out (see the NOTE above)."""

    def __init__(self, file, protocol: int, arrays: dict, probe: bool = False):
        super().__init__(file, protocol)
        self._arrays, self._seen = arrays, {"objects": {}, "storages": {}}
        self._protocol, self._probe = protocol, probe

    def persistent_id(self, obj):
        if not isinstance(obj, Tensor | _np.ndarray | _np.generic):
            return None  # pickled as usual
        desc = dict(_encode(obj, self._arrays, "", self._seen))
        if isinstance(obj, Parameter):
            desc["parameter"] = True
        return desc

    def reducer_override(self, obj):
        if type(obj) is ModuleHooks:  # (a probe only asks whether a hook pickles)
            return _rebuild_hooks, ({} if self._probe else self._picklable_hooks(obj),)
        return NotImplemented

    def _picklable_hooks(self, hooks: ModuleHooks) -> dict:
        """kind -> the hooks of that kind that pickle; the others are named in a warning."""
        tables = {}
        for kind, table in vars(hooks).items():
            kept = []
            for value in table.values():
                try:
                    _ArchivePickler(io.BytesIO(), self._protocol, {}, probe=True).dump(value)
                except (pickle.PicklingError, AttributeError, TypeError) as e:
                    fn = value[0] if isinstance(value, tuple) else value
                    warnings.warn(
                        f"save: the {kind.replace('_', ' ')} hook {fn!r} cannot be pickled "
                        f"({e}) and is not saved; register it again after load (a hook "
                        f"defined at the top level of a module pickles)", stacklevel=5)  # fmt: skip
                    continue
                kept.append(value)
            if kept:
                tables[kind] = kept
        return tables


def _rebuild_hooks(tables) -> ModuleHooks:
    """A module's hook table from the hooks saved by kind, registered again in order."""
    hooks = ModuleHooks()
    for kind, values in dict(tables).items():
        if not isinstance(getattr(hooks, str(kind), None), OrderedDict):
            raise pickle.UnpicklingError(f"load: unknown kind of hook {kind!r}")
        for value in values:
            hooks.add(kind, value)
    return hooks


def _pickled(obj, protocol: int) -> dict:
    """The archive's entries for ``obj`` pickled: its arrays, and the pickle in ``__pickle__``."""
    arrays: dict = {}
    buf = io.BytesIO()
    try:
        _ArchivePickler(buf, min(max(2, protocol), pickle.HIGHEST_PROTOCOL), arrays).dump(obj)
    except (pickle.PicklingError, AttributeError, TypeError) as e:
        raise type(e)(
            f"save: cannot pickle {type(obj).__module__}.{type(obj).__qualname__}: {e}. "
            "Everything it holds must pickle (no lambdas, local functions, open files or "
            "generators); to keep only the weights, save its state_dict() instead"
        ) from e
    arrays[_PICKLE] = _np.frombuffer(buf.getvalue(), dtype=_np.uint8)
    return arrays


def _allowed_global(module: str, name: str):
    """The object the pickle may name as ``module.name`` under ``weights_only``, or None."""
    full = f"{module}.{name}"
    for entry in _SAFE_GLOBALS:
        obj, entry_name = named_global(entry)
        if entry_name == full:
            return obj
    if (module, name) in BUILTIN_GLOBALS:
        return BUILTIN_GLOBALS[module, name]
    if module == "numpy" and name in _DTYPE_NAMES:
        return getattr(_np, name, None)
    if full in (f"{__name__}._rebuild_hooks", f"{__name__}.Parameter"):
        return globals()[name]
    if full == f"{Size.__module__}.Size":
        return Size
    if full == f"{backend.device.__module__}.device":
        return backend.device
    owner = sys.modules.get(module) if module.startswith(_LIBRARY) else None
    for part in name.split("."):  # a class of the library's own, nested or not
        if owner is None or part.startswith("__"):
            return None
        owner = getattr(owner, part, None)
    return owner if isinstance(owner, type) and issubclass(owner, Module) else None


def _unpickle(data: bytes, arrays: dict, path, map_location, weights_only):
    """The object pickled in ``data``, its tensors read from ``arrays``."""
    made: dict = {}
    moved: dict = {}

    def persistent_load(pid):
        if not (isinstance(pid, dict) and ("tensor" in pid or "array" in pid)):
            raise pickle.UnpicklingError(f"load: unknown persistent id {pid!r:.80}")
        try:
            value = _decode(pid, arrays, made)
            if not isinstance(value, Tensor):
                return value
            key = ("loaded", pid.get("obj", pid.get("tensor")))
            if key not in made:  # one object per saved object, moved and wrapped once
                if map_location is not None:
                    value = _to_device(value, map_location, moved)
                if pid.get("parameter"):
                    value = Parameter(value, requires_grad=bool(pid.get("requires_grad")))
                made[key] = value
            return made[key]
        except (KeyError, ValueError, TypeError, IndexError) as e:
            raise pickle.UnpicklingError(
                f"load: the tensor entry {pid!r:.80} is missing or damaged ({e})") from e

    file = io.BytesIO(data)
    if weights_only is False:  # the user's explicit choice: any global, any code
        unpickler = FullUnpickler(file, persistent_load=persistent_load)
    else:
        unpickler = WeightsUnpickler(file, resolve=_allowed_global,
                                     persistent_load=persistent_load)  # fmt: skip
    try:
        return unpickler.load()
    except UnsupportedGlobal:
        raise
    except (pickle.UnpicklingError, EOFError) as e:
        raise ValueError(
            f"load: {path!r} is not a readable model file ({type(e).__name__}: {e}); its "
            "pickled object is damaged"
        ) from e


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):  # fmt: skip
    """Read what :func:`save` wrote: a state dict of numpy arrays, the saved nesting with its
    tensors as tensors, or the pickled object (a whole module) with its tensors as tensors
    and its Parameters as Parameters; a tensor saved under several names loads as one tensor.

    ``weights_only`` is PyTorch's rule for pickled objects. By default (None or True) the
    pickle may name only this library's Module classes, a few containers, and what the
    program allowed with ``tg.serialization.add_safe_globals([Cls])`` or ``with
    tg.serialization.safe_globals([Cls]):``; any other name (a class of the program's own,
    ``os.system``) is a ``pickle.UnpicklingError`` naming it, raised before anything is
    called. ``weights_only=False`` unpickles fully, which can run any code: only for files
    you trust. Arrays and JSON descriptions are read with ``allow_pickle=False`` either way.

    ``f`` is a path or a binary file open for reading (``io.BytesIO`` after ``seek(0)``),
    as ``torch.load(f)`` takes. A file that is not such an archive (truncated, damaged,
    another format, or a file written by ``torch.save``) is a ``ValueError`` naming the
    file. A path that does not exist but whose ``.npz`` name does is read there (files that
    earlier versions wrote as ``model.pt.npz`` for ``save(state, "model.pt")``).
    ``map_location`` moves the tensors (``"cpu"``, ``tg.device("cpu")``, ``"sim:1"``, or
    PyTorch's dict ``{"cuda:0": "cpu"}``); ``mmap``, ``pickle_module`` and pickle's keywords
    are accepted and ignored."""
    if hasattr(f, "read"):
        path, source = getattr(f, "name", "<file object>"), f
    else:
        path = source = os.fspath(f)
        if not os.path.exists(path) and os.path.exists(path + ".npz"):
            path = source = path + ".npz"
    pickled = None
    try:
        with _np.load(source, allow_pickle=False) as archive:
            _refuse_torch_file(path, archive.files)
            if _PICKLE in archive.files:
                pickled = archive[_PICKLE].tobytes()
                arrays = {k: archive[k] for k in archive.files if k != _PICKLE}
            elif _STRUCTURE not in archive.files:
                out = {k: archive[k] for k in archive.files}
            else:
                structure = json.loads(str(archive[_STRUCTURE]))
                arrays = {k: archive[k] for k in archive.files if k != _STRUCTURE}
                out = _decode(structure, arrays, {})
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError, TypeError) as e:
        if isinstance(e, _TorchFileError):
            raise
        raise ValueError(
            f"load: {path!r} is not a readable model file ({type(e).__name__}: {e}); it should "
            "be an .npz archive written by save(), complete and undamaged"
        ) from e
    if pickled is not None:
        return _unpickle(pickled, arrays, path, map_location, weights_only)
    return out if map_location is None else _to_device(out, map_location, {})


class _TorchFileError(ValueError):
    pass


# torch.serialization's allow-list for loading pickled objects (``add_safe_globals``, the
# ``safe_globals`` context): the classes and functions a pickle may name besides the
# library's own (``_allowed_global``). Each entry is the object, or PyTorch's pair
# ``(obj, "module.name")`` for an object pickled under another name.
_SAFE_GLOBALS: list = []


def add_safe_globals(safe_globals) -> None:
    """Allow ``load`` (``weights_only``, the default) to build these classes and call these
    functions when a pickled file names them, as ``torch.serialization.add_safe_globals``:
    ``add_safe_globals([MyModel])`` before ``model = load(f)`` of a saved ``MyModel``.
    Allow only what you trust: an allowed class is constructed with the file's arguments."""
    safe_globals = list(safe_globals)
    for entry in safe_globals:
        named_global(entry)  # a TypeError now for something that has no name
    _SAFE_GLOBALS.extend(safe_globals)


def get_safe_globals() -> list:
    """What :func:`add_safe_globals` was given (``torch.serialization.get_safe_globals``)."""
    return list(_SAFE_GLOBALS)


def clear_safe_globals() -> None:
    """Forget what :func:`add_safe_globals` was given."""
    _SAFE_GLOBALS.clear()


class safe_globals:  # noqa: N801  (PyTorch's name)
    """``with torch.serialization.safe_globals([...]):`` around ``load``: the classes and
    functions are allowed inside the block only (see :func:`add_safe_globals`)."""

    def __init__(self, safe_globals):
        self._names = list(safe_globals)
        for entry in self._names:
            named_global(entry)

    def __enter__(self):
        self._before = len(_SAFE_GLOBALS)
        _SAFE_GLOBALS.extend(self._names)
        return self

    def __exit__(self, *exc):
        del _SAFE_GLOBALS[self._before:]
        return False


def _refuse_torch_file(path, files) -> None:
    """``torch.save`` writes a zip too (pickled objects under ``<name>/data.pkl``): numpy
    would hand back its internal entries as if they were arrays."""
    if any(f.endswith("data.pkl") or f.endswith(".data/version") for f in files):
        raise _TorchFileError(
            f"load: {path!r} was written by torch.save (PyTorch's pickle format), which "
            "tinygrad_edu does not read (unpickling can run code). In PyTorch, save the "
            "arrays instead: np.savez(path, **{k: v.numpy() for k, v in "
            "model.state_dict().items()}); then model.load_state_dict(tg.load(path))"
        )


def _to_device(value, location, moved: dict):
    if isinstance(value, Tensor):
        if id(value) not in moved:  # a shared tensor moves once, and stays shared
            device = location
            if isinstance(location, dict):  # torch's {"cuda:0": "cpu"}: from -> to
                device = location.get(str(value.device), str(value.device))
            elif callable(location):  # torch's (storage, location) -> storage: not here
                raise TypeError("load: map_location as a function is not supported here; "
                                "pass a device name (\"cpu\") or a dict {from: to}")  # fmt: skip
            t = Tensor(value._data, device=str(device))
            moved[id(value)] = t.requires_grad_() if value.requires_grad else t
        return moved[id(value)]
    if isinstance(value, dict):
        return {k: _to_device(v, location, moved) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_to_device(v, location, moved) for v in value)
    return value
