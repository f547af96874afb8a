"""A module's state: ``state_dict()``, ``load_state_dict()`` and ``save()``, the methods
:class:`~tinygrad_edu.nn.Module` takes from :class:`StateDictMixin`.

The state is every parameter and persistent buffer of the tree, by dotted name, in PyTorch's
order; loading checks every name and shape first, so a refused state dict changes nothing.

>>> import tinygrad_edu as tg
>>> model = tg.nn.Linear(2, 1)
>>> sorted(model.state_dict())
['bias', 'weight']
>>> model.load_state_dict({"weight": tg.ones(1, 2), "bias": tg.zeros(1)})
<All keys matched successfully>
"""

from __future__ import annotations

import os
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

import numpy as _np  # state dicts are numpy arrays: the file format, not math

from .. import backend
from ..eager.grad_mode import no_grad
from ..eager.tensor import Tensor
from .parameter import Parameter
from .serialization import save

__all__ = ["IncompatibleKeys", "StateDictMixin"]


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


class StateDictMixin:
    """The state methods of :class:`~tinygrad_edu.nn.Module` (``named_modules``, the
    ``_parameters`` and ``_buffers`` tables are the Module's own)."""

    def _state_slots(self) -> list[tuple[str, StateDictMixin, str, Tensor]]:
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


def _assign(mod: StateDictMixin, attr: str, old: Tensor, value) -> None:
    """``load_state_dict(assign=True)``: ``mod.attr`` becomes ``value`` itself (no copy)."""
    if not isinstance(value, Tensor):
        value = Tensor(value)
    if isinstance(old, Parameter):
        if isinstance(value, Parameter):
            value.requires_grad_(old.requires_grad)
        else:
            value = Parameter(value, requires_grad=old.requires_grad)
    setattr(mod, attr, value)
