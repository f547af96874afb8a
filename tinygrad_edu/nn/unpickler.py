"""Unpickling with an allow-list: how ``load`` reads a file that holds a pickled object.

``save`` writes a whole module (or any object that is not a plain nesting of dicts, lists,
tensors and numbers) with :mod:`pickle`, its tensors kept out of the pickle as entries of the
archive (see NOTE [Pickled objects in a saved file] in :mod:`tinygrad_edu.nn.serialization`).
Unpickling is dangerous: a pickle names functions by their import path (``os.system``,
``builtins.eval``) and calls them with arguments of its choice, so reading a file from
elsewhere could run any code. PyTorch's answer, followed here, is its ``weights_only`` rule:
:class:`WeightsUnpickler` resolves a name only when it is on an allow-list (this library's
layers, a few harmless builtins, and what the program allowed with ``add_safe_globals`` or
``with safe_globals([...])``); any other name stops the load with a
``pickle.UnpicklingError`` before anything is called. ``load(f, weights_only=False)`` uses
:class:`FullUnpickler` instead: every name is imported, as plain :func:`pickle.load` does;
only for files the user trusts.

>>> import io, pickle
>>> data = pickle.dumps({"sizes": {1, 2}}, protocol=2)  # a set is pickled as builtins.set
>>> try:
...     WeightsUnpickler(io.BytesIO(data), resolve=lambda module, name: None).load()
... except pickle.UnpicklingError as e:
...     print(str(e)[:90])
load: Weights only load failed: Unsupported global: GLOBAL builtins.set was not an allowed
>>> resolve = lambda module, name: BUILTIN_GLOBALS.get((module, name))
>>> WeightsUnpickler(io.BytesIO(data), resolve=resolve).load()
{'sizes': {1, 2}}
"""

from __future__ import annotations

import _compat_pickle
import codecs
import collections
import pickle

__all__ = ["BUILTIN_GLOBALS", "MOVED", "FullUnpickler", "UnsupportedGlobal", "WeightsUnpickler",
           "current_name", "named_global"]  # fmt: skip


def _latin1_bytes(text, encoding="latin1"):
    """``_codecs.encode`` as pickle protocol 2 uses it for ``bytes`` (``encode(str,
    "latin1")``), and nothing else: another codec could be asked to do more."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError(
            f"load: _codecs.encode is allowed only as encode(str, 'latin1') (how pickle "
            f"writes bytes), not with ({type(text).__name__}, {encoding!r})"
        )
    return codecs.encode(text, "latin1")


#: The globals every load allows: containers and numbers that pickle protocol 2 writes by
#: name. Calling any of them builds a value and runs no other code.
BUILTIN_GLOBALS = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("_codecs", "encode"): _latin1_bytes,
    **{("builtins", t.__name__): t for t in (set, frozenset, bytes, bytearray, complex, slice,
                                             range)},  # fmt: skip
}


#: Where the library's classes (and the functions its pickles name) were before the layers
#: were filed by concept: ``{old module: {new module: names}}``, module names under
#: ``tinygrad_edu.nn``. A file saved earlier names ``tinygrad_edu.nn.more_layers.Conv1d``;
#: both unpicklers read such a name as its new path (``tinygrad_edu.nn.conv.Conv1d``) before
#: anything else, so old files keep loading, under the same allow-list.
_MOVED_TABLE = {
    "more_layers": {
        "pooling": ("AdaptiveAvgPool1d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AvgPool1d",
            "MaxPool1d"),
        "normalization": ("BatchNorm3d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
            "RMSNorm"),
        "padding": ("CircularPad1d", "CircularPad2d", "ConstantPad1d", "ConstantPad2d",
            "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d",
            "ZeroPad1d", "ZeroPad2d"),
        "conv": ("Conv1d", "ConvTranspose1d", "ConvTranspose2d", "Fold", "Unfold"),
        "dropout": ("Dropout1d", "Dropout2d", "Dropout3d"),
        "pixelshuffle": ("PixelShuffle", "PixelUnshuffle"),
        "activation": ("Softmax2d", "Softmin"),
        "upsampling": ("Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"),
    },
    "extra_layers": {
        "dropout": ("AlphaDropout",),
        "linear": ("Bilinear",),
        "embedding": ("EmbeddingBag",),
    },
    "layers": {
        "dropout": ("Dropout",),
        "flatten": ("Flatten",),
        "linear": ("Identity", "Linear"),
        "containers": ("ModuleList", "Sequential"),
        "activation": ("ReLU", "Sigmoid", "Tanh"),
    },
    "conv3d": {
        "conv": ("Conv3d",),
    },
    "reshape": {
        "flatten": ("Unflatten",),
    },
    "module": {
        "serialization": ("_rebuild_hooks",),
        "parameter": ("Parameter",),
    },
}
_NN = __name__.rpartition(".")[0]  # "tinygrad_edu.nn"
MOVED = {(f"{_NN}.{old}", name): f"{_NN}.{new}"
         for old, by_new in _MOVED_TABLE.items() for new, names in by_new.items()
         for name in names}  # fmt: skip


def current_name(module: str, name: str) -> tuple[str, str]:
    """``(module, name)`` of a pickled global as it is named now: Python 2's names mapped to
    Python 3's (protocol 2 writes ``__builtin__.set``), as pickle does, and the library's
    moved classes to their new module (:data:`MOVED`)."""
    module, name = _compat_pickle.NAME_MAPPING.get((module, name), (module, name))
    module = _compat_pickle.IMPORT_MAPPING.get(module, module)
    return MOVED.get((module, name), module), name


class UnsupportedGlobal(pickle.UnpicklingError):
    """A pickle named a global that is not allowed (PyTorch raises the same type)."""


def named_global(entry):
    """``(object, "module.qualname")`` for an entry of the allow-list: an object (a class,
    a function), or PyTorch's pair ``(object, "its.full.name")`` for an object pickled
    under another name."""
    if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], str):
        return entry
    module = getattr(entry, "__module__", None)
    name = getattr(entry, "__qualname__", getattr(entry, "__name__", None))
    if module is None or name is None:
        raise TypeError(
            f"safe_globals: {entry!r} is not a class or a function (it has no __module__ and "
            f"__qualname__); pass the class or function itself, or a pair (obj, 'module.name')"
        )
    return entry, f"{module}.{name}"


def refusal(module: str, name: str) -> str:
    """The message for a global that is not allowed: which one, and the two ways out."""
    short = name.rpartition(".")[2]
    return (
        f"load: Weights only load failed: Unsupported global: GLOBAL {module}.{name} was not "
        f"an allowed global by default. If you trust this class or function, allow it: add "
        f"it with tg.serialization.add_safe_globals([{short}]) or load inside `with "
        f"tg.serialization.safe_globals([{short}]):`; or load with weights_only=False if you "
        f"trust the file (unpickling a file from elsewhere can run any code)."
    )


class WeightsUnpickler(pickle.Unpickler):
    """The restricted unpickler (``weights_only=True``, the default).

    Args:
        file: the pickle, a binary file object.
        resolve: ``resolve(module, name)`` -> the allowed object, or None to refuse.
        persistent_load: ``persistent_load(pid)`` -> the object kept out of the pickle under
            ``pid`` (a tensor), or None when the file has none.
    """

    def __init__(self, file, *, resolve, persistent_load=None):
        super().__init__(file)
        self._resolve = resolve
        self._persistent = persistent_load

    def find_class(self, module: str, name: str):
        # every global of the pickle (GLOBAL, STACK_GLOBAL, INST, OBJ and the extension
        # registry's EXT opcodes) is looked up here; nothing is imported
        module, name = current_name(module, name)
        obj = self._resolve(module, name)
        if obj is None:
            raise UnsupportedGlobal(refusal(module, name))
        return obj

    def persistent_load(self, pid):
        if self._persistent is None:
            raise pickle.UnpicklingError("load: the pickle refers to data the file does not have")
        return self._persistent(pid)


class FullUnpickler(pickle.Unpickler):
    """Plain unpickling (``weights_only=False``): every global is imported and may be called.
    Only for files the user trusts, as with ``torch.load(f, weights_only=False)``."""

    def __init__(self, file, *, persistent_load=None):
        super().__init__(file)
        self._persistent = persistent_load

    def find_class(self, module: str, name: str):
        return super().find_class(*current_name(module, name))

    def persistent_load(self, pid):
        if self._persistent is None:
            raise pickle.UnpicklingError("load: the pickle refers to data the file does not have")
        return self._persistent(pid)
