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
(PyTorch's ``weights_only`` rule): see :mod:`tinygrad_edu.nn.serialization`. The state
methods (``state_dict``, ``load_state_dict``, ``save``) are in
:mod:`tinygrad_edu.nn.state_dict`, ``Parameter`` in :mod:`tinygrad_edu.nn.parameter`.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator

import numpy as _np  # dtype names for type(): the file format, not math

from .. import backend
from ..eager.grad_mode import no_grad
from ..eager.node import _sequence
from ..eager.tensor import Tensor
from .hooks import ModuleHooks, call_with_hooks
from .parameter import Parameter
from .serialization import allow_subclasses_of, load, save
from .state_dict import IncompatibleKeys, StateDictMixin

# Parameter, save, load and IncompatibleKeys live in their own files (parameter.py,
# serialization.py, state_dict.py); importable from here as before
__all__ = ["Module", "Parameter", "save", "load", "IncompatibleKeys"]


@allow_subclasses_of
class Module(StateDictMixin):
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
