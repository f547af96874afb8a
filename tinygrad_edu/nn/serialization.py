r"""``save`` and ``load`` (``tg.save``/``tg.load``, PyTorch's ``torch.serialization``): the
file format, the pickling of whole modules, and the allow-list of what loading may build.

A saved file is an uncompressed ``.npz`` archive: a plain state dict is one array per name;
any other nesting of dicts, lists and tensors is its arrays plus a JSON description (NOTE
[The structure of a saved file]); anything else (a whole module) is pickled with its tensors
kept out of the pickle (NOTE [Pickled objects in a saved file]) and read back by the
restricted unpickler of :mod:`tinygrad_edu.nn.unpickler`.

This file sits below :mod:`tinygrad_edu.nn.module`: ``Module`` registers itself here
(:func:`allow_subclasses_of`), so that loading may build the library's layers without this
file importing them.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import sys
import warnings
import zipfile
from collections import OrderedDict

import numpy as _np  # the arrays of the archive: the file format, not math

from .. import backend
from ..eager.tensor import Tensor
from ..size import Size
from .hooks import ModuleHooks
from .parameter import Parameter
from .unpickler import (
    BUILTIN_GLOBALS,
    FullUnpickler,
    UnsupportedGlobal,
    WeightsUnpickler,
    named_global,
)

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "allow_subclasses_of"]  # fmt: skip

_LIBRARY = __name__.partition(".")[0] + "."  # "tinygrad_edu.": the library's own layers

#: The base classes whose subclasses in the library a pickle may name (``Module``: see
#: :func:`allow_subclasses_of`).
_LOADABLE_BASES: list = []


def allow_subclasses_of(cls: type) -> type:
    """Let ``load`` (``weights_only``) build the library's subclasses of ``cls``; returns
    ``cls``, so that it decorates the class (``Module`` is registered so)."""
    _LOADABLE_BASES.append(cls)
    return cls


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
    if full == f"{__name__}._rebuild_hooks":
        return _rebuild_hooks
    if full == f"{Parameter.__module__}.Parameter":
        return Parameter
    if full == f"{Size.__module__}.Size":
        return Size
    if full == f"{backend.device.__module__}.device":
        return backend.device
    owner = sys.modules.get(module) if module.startswith(_LIBRARY) else None
    for part in name.split("."):  # a class of the library's own, nested or not
        if owner is None or part.startswith("__"):
            return None
        owner = getattr(owner, part, None)
    bases = tuple(_LOADABLE_BASES)
    return owner if isinstance(owner, type) and issubclass(owner, bases) else None


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
