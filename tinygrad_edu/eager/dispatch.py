"""``apply_op``: run an op of the library on tensors, and record it for backward.

This is the eager engine's hot path: every ``x + y``, ``x.exp()``, ``tg.cat(...)`` ends here.
It runs the op's forward on the raw arrays and, when grad mode is on and some input requires
grad, records the backward node (``MulBackward0``, named as in PyTorch) whose
``next_functions`` point where each input's gradient flows next.

The op methods of :class:`~tinygrad_edu.eager.tensor.Tensor` and the ``tg.`` functions are
generated here from the op library's surface table (see :mod:`tinygrad_edu.ops.surface`),
with :func:`apply_op` as their ``apply``.
"""

from __future__ import annotations

import difflib
import functools
import inspect

import numpy as _np

from .. import backend
from ..ops import REGISTRY, ShapeError
from ..ops.surface import ValuesIndices, generate
from . import collector, core, grad_mode
from .node import OpBackward, SavedTensor, _sequence, place
from .out import with_out
from .split_node import SplitBackward

__all__ = ["apply_op", "apply_named", "METHODS", "FUNCTIONS", "NN_FUNCTIONS"]

# NOTE [Views and version counters]
#     An op declared ``view = True`` (``ops/base.py``: reshape, flatten, squeeze, unsqueeze,
#     permute, transpose, expand, basic indexing) returns a view when the array library does:
#     the result shares its base's memory *and* its version counter, so an in-place change
#     made through either is seen by every saved value of both. Where the array library copies
#     instead (integer-array indexing; reshaping memory that is not contiguous), the result
#     gets a counter of its own, because a change to it cannot reach the base. The test is the
#     array's memory owner (following ``base``). detach() shares the counter too, but is no
#     view for autograd.
#
#     A view also remembers its base (the first tensor that is not a view: ``_base``) and how
#     to replay itself from it (``_view_steps``: ``(op, other inputs, attrs, input shape)``
#     per view op on the way), as PyTorch's views do. Two things follow (see
#     ``Tensor._inplace``):
#
#     * when the base, or another view of it, is changed in place, the view's recorded
#       version (``_view_version``) falls behind the shared counter, and reading its
#       ``grad_fn`` (which every op that records does) replays the view from the base's
#       current history: ``b.mul_(3)`` after ``v = b[:2]`` gives ``v.grad_fn`` =
#       SliceBackward0 -> MulBackward0 (PyTorch with view replay on; by default it says
#       AsStridedBackward0). Only views pay for this: ``grad_fn`` is a property that tests
#       ``_base`` first, and the loop below reads the slot ``_grad_fn`` of non-views;
#     * an in-place op *through* a view (``b[1:3].mul_(2)``) rebases the base's history onto
#       a ``CopySlices`` node (``node.py``) that runs the op's node on the viewed part of the
#       base's gradient and passes the rest through; the view then replays from the new base.
#
#     PyTorch's refusals are kept: an in-place change recorded through a view of a leaf that
#     requires grad, through a view made under no_grad (and such a view's grad_fn once its
#     base changed), and through an output of split/chunk/unbind (several views at once).
_VIEW_OPS = frozenset(name for name, op in REGISTRY.items() if op.view)
_NODE_CLASSES: dict = {}  # op -> its backward node class (ops with one PyTorch name)
_ndarray = _np.ndarray
_NUMPY_NUMBERS = frozenset(t for t in set(_np.sctypeDict.values())
                           if issubclass(t, _np.number | _np.bool_))  # fmt: skip


def _as_array(xp, value, opname="tensor"):
    """``value`` as an array of ``xp``: numpy scalars (``np.float64``) become 0-d arrays."""
    if type(value) in _NUMPY_NUMBERS and xp is _np:  # what a numpy op on 0-d arrays returns
        return _np.asarray(value)  # (the test below would look for a missing attribute first)
    if hasattr(value, "__setitem__"):
        return value
    out = xp.asarray(value)
    if out.dtype == object:  # an op met something that is not a number (a symbolic Node)
        raise mixing_error(opname, value)
    return out


def type_name(value) -> str:
    """A value's type as an error names it: ``list``, ``torch.Tensor``."""
    mod = type(value).__module__
    return type(value).__qualname__ if mod == "builtins" else f"{mod}.{type(value).__qualname__}"


def mixing_error(opname, value) -> TypeError:
    """The error for an eager op given another engine's value, or another library's tensor."""
    kind = type_name(value)
    if kind.startswith("tinygrad_edu.symbolic"):
        return TypeError(
            f"{opname}: an eager tensor met a symbolic Node ({value!r}); eager tensors and "
            "symbolic nodes do not mix. Build the whole graph symbolically (S.Variable, S.constant("
            "array)) and run it with S.Executor, or compute eagerly with tensors only "
            "(tg.tensor(...))"
        )
    return TypeError(
        f"{opname}: got a {kind} as an input; tinygrad_edu tensors do not mix with other "
        "libraries' tensors. Convert it first: tg.from_dlpack(t) (shared memory) or "
        "tg.tensor(t.numpy()) (a copy); torch.from_dlpack(x) goes the other way"
    )


def _node_class(op, datas, attrs) -> type:
    """The backward node class for this call of ``op`` (``SumBackward0`` or ``SumBackward1``)."""
    name = op.torch_names[op.variant(datas, attrs)] if op.torch_names else op.backward_name
    cls = _NODE_CLASSES.get((op, name))
    if cls is None:
        cls = type(name, (OpBackward,), {"__slots__": ()})
        cls.__doc__ = f"Backward of ``{op.name}``: runs the op's derivative rule."
        _NODE_CLASSES[(op, name)] = cls
        if not op.torch_names:
            _NODE_CLASSES[op] = cls  # one name: apply_op finds it by the op alone
    return cls


def _foreign(a) -> bool:
    """Whether ``a`` is another library's tensor (PyTorch's, JAX's ...) or a symbolic Node."""
    return hasattr(a, "shape") and not isinstance(a, core.Tensor) and not (
        type(a).__module__.startswith(("numpy", "cupy", "array_api_strict")))


def _explain(op, args, attrs, err: Exception) -> Exception:
    """Turn an array library's error into one that names the op, the inputs and the fix."""
    Tensor = core.Tensor
    for a in args:
        if _foreign(a):
            return mixing_error(op.name, a)
        if not (isinstance(a, Tensor | int | float | bool) or hasattr(a, "shape")):
            if isinstance(a, ValuesIndices):
                return TypeError(
                    f"{op.name}: got a (values, indices) pair as an input; max/min "
                    "along a dim return two tensors, as in PyTorch: take .values (or use "
                    "amax/amin)"
                )
            return TypeError(
                f"{op.name}: got a {type(a).__name__} ({a!r}) as an input; ops take tensors, "
                "arrays and Python numbers (convert it first, e.g. tg.tensor(...))"
            )
    shapes = [tuple(a.shape) if hasattr(a, "shape") else () for a in args]
    try:
        op.shape(*shapes, **_shape_attrs(op, attrs))
    except (ShapeError, TypeError, ValueError) as e:
        return type(e)(str(e))
    if str(err).startswith(f"{op.name}: "):
        return err  # the op's own message: it already names the op, the inputs and the fix
    parts = [f"{a.shape} {a.dtype}" if hasattr(a, "dtype") else repr(a) for a in args]
    message = f"{op.name}: failed on inputs ({', '.join(parts)}): {err}"
    try:
        return type(err)(message)
    except TypeError:  # an exception class that wants other arguments
        return RuntimeError(message)


def _shape_attrs(op, attrs) -> dict:
    """The attributes ``op``'s shape rule takes: a forward may take more than its shape rule
    (``multinomial``'s ``generator``), and explaining an error must not fail on those."""
    params = inspect.signature(op.shape).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return attrs
    return {k: v for k, v in attrs.items() if k in params}


# NOTE [Instructions per op] (``python -m benchmarks.instructions --only chain_f64``)
#     ``apply_op`` is the hot path of every eager op, so it is written as plain loops. Besides
#     the plain calls (NOTE [Plain calls]), four small habits keep the interpreter's work per
#     op down, together about 5% of a small op's forward and backward: the first pass over
#     the inputs also builds the mask of inputs that need grad; the tensor and its attributes
#     are assigned in pairs (``a, b, c, d = w, x, y, z`` builds and unpacks a tuple, pairs do
#     not); a Python number's shape and dtype come from a constant instead of two failed
#     ``getattr`` calls; and only the saved positions are visited. What they cost a reader: a
#     mask where a flag would do, and assignments split over two lines. The rare modes
#     (anomaly detection, a tg.compile tracer) are read only while some thread has one on
#     (NOTE [Rare modes] in grad_mode.py): docs/performance.md, #23.
#
# NOTE [Plain calls]
#     Python 3.11 runs ``f(*datas, **attrs)`` through C, which starts a nested interpreter loop,
#     and copies ``attrs``; a call with its arguments written out stays in the running loop.
#     So the common arities (one or two inputs, no attributes) are spelled out, and so is the
#     derivative rule's call in ``OpBackward.apply``. What it saves: about 1.5% of a small op
#     (forward and backward) here, 1% there. What it costs a reader: branches that mean the
#     same as the first one.
def apply_op(op, *args, **attrs):
    """Run ``op`` on tensors (and Python numbers), recording a backward node when needed.

    As lesson 3 tells it, in four steps: (1) take the arrays out of the input tensors (and
    note which inputs require grad), (2) run the op's forward on them, (3) when grad mode is
    on and some input requires grad, record the backward node (:func:`_record`), and (4) wrap
    the result in a tensor (``core.init_tensor``, the one constructor) whose ``grad_fn`` is
    that node. A result that shares its input's memory is a view (see NOTE [Views and version
    counters]); NOTE [Instructions per op] says why this is written as plain loops.
    """
    Tensor = core.Tensor  # the class tensor.py handed over (a local: read once per op)
    trace = _modes.trace if _RARE[0] else None  # see NOTE [Rare modes] in grad_mode.py
    if trace is not None:
        if trace.replaying:  # tg.compile replays a segmented function: a stand-in, computed
            return trace.replay(op, args, attrs)  # later by a compiled program
        traced, args = args, trace.plain(args)  # a number read by .item(): its value here
    # 1. the inputs' arrays, their device, and the mask of inputs that require grad
    datas = []
    dev = None
    mask = 0  # bit i: input i is a tensor that requires grad
    bit = 1
    for a in args:
        if isinstance(a, Tensor):
            if dev is None:
                dev = a._device
            elif a._device is not dev and a._device != dev:
                raise _device_error(op, args, dev, a._device)
            datas.append(a._data)
            if a._requires_grad:
                mask |= bit
        else:
            datas.append(a)
        bit += bit
    # 2. the forward, on the arrays (NOTE [Plain calls])
    d0 = datas[0]
    xp = _np if type(d0) is _ndarray else _namespace(dev, d0)
    try:
        if attrs or len(datas) > 2:
            out = op.forward(xp, *datas, **attrs)
        elif len(datas) == 2:
            out = op.forward(xp, d0, datas[1])
        else:
            out = op.forward(xp, d0)
    except (ValueError, TypeError, IndexError, AttributeError, RuntimeError) as e:
        error = _explain(op, args, attrs, e)  # RuntimeError: t.numpy() of a grad input
        if error is e:
            raise
        raise error from e
    if type(out) is not _ndarray:
        out = _as_array(xp, out, op.name)  # numpy reduces to scalars: 0-d arrays instead
    # 3. the backward node, when this call is recorded
    recorded = mask and op.differentiable and _modes.grad
    node = _record(op, args, attrs, mask, dev, out) if recorded else None
    # 4. the result: a tensor around ``out``; a view shares its input's version counter
    if op.name in _VIEW_OPS and _shares(out, d0):
        result = _init(_new(Tensor), out, dev, node, args[0]._counter)
        _record_view(result, args[0], op, args, attrs)
    else:
        result = _init(_new(Tensor), out, dev, node)
    if node is not None:
        if op.saves_output:
            node.saved_out = SavedTensor(result, is_output=True)
        if _RARE[0] and _modes.anomaly:
            node._record_trace()
    if trace is not None:  # tg.compile is tracing: record the op into its graph
        trace.record(op, traced, attrs, result)
    return result


def _record(op, args, attrs, mask, dev, out):
    """The backward node of this call of ``op``: its ``next_functions`` (an edge per input),
    the shapes and dtypes of the inputs, which inputs need a gradient, and what it saves."""
    Tensor = core.Tensor
    cls = _NODE_CLASSES.get(op) or _node_class(op, [getattr(a, "_data", a) for a in args], attrs)
    node = _new(cls)  # Node.__init__ inlined: this runs once per recorded op
    node.sequence_nr = seq = next(_sequence)
    if not seq & _FREEZE_MASK:
        collector.graph_grew()  # see NOTE [Long graphs and the cycle collector]
    node.op, node.attrs = op, attrs
    if dev is not _CPU:
        place(node, dev)  # the engine runs it on that device's queue
    edges, meta = [], [type(out)]  # meta: the key of the shared shapes/dtypes record
    for a in args:
        if isinstance(a, Tensor):
            if a._requires_grad:
                fn = a._grad_fn if a._base is None else a.grad_fn  # a view may replay
                if fn is not None:
                    edges.append((fn, a._output_nr))
                else:
                    edges.append((a._grad_accumulator(), 0))
            else:
                edges.append(_NO_EDGE)
            d = a._data
            meta.append(d.shape)
            meta.append(d.dtype)
        elif type(a) in _PY_NUMBERS:  # (exactly: numpy's float64 is a float with a dtype)
            edges.append(_NO_EDGE)
            meta += _NUMBER_META  # see NOTE [Instructions per op]
        else:
            edges.append(_NO_EDGE)
            meta.append(getattr(a, "shape", ()))
            meta.append(getattr(a, "dtype", None))
    node.next_functions = tuple(edges)
    # Small immutable records (flags, shapes, dtypes) are shared between nodes: fewer live
    # objects for the cycle collector to scan, which is what makes long graphs slow to build.
    n = len(args)
    node.needs = _NEEDS[n][mask] if n < 4 else tuple(bool(mask >> i & 1) for i in range(n))
    try:
        node.shapes, node.dtypes = _META[tuple(meta)]
    except (KeyError, TypeError):  # a new combination, or an unhashable constant
        node.shapes, node.dtypes = _shapes_dtypes(meta)
    saves = None
    if op.saves:
        saves = _SAVES.get((op, mask))
        if saves is None:
            saves = _saves(op, mask)
    if saves:
        saved = [None] * n
        for i in saves:  # only the saved positions (an optional input may be missing)
            if i < n:
                a = args[i]
                saved[i] = SavedTensor(a, False, op) if isinstance(a, Tensor) else a
        node.saved = tuple(saved)
    else:
        node.saved = _NONES[n] if n < 8 else (None,) * n
    node.saved_out = None  # apply_op saves the output, once the tensor exists
    node._freed = False if saves or op.saves_output else None  # None: saved nothing
    return node


def apply_named(op, *args, **attrs):
    """:func:`apply_op` for a user: ``op`` may be an op of the library or its name
    (``tinygrad_edu.eager.apply_op("exp", t)``); what ``tinygrad_edu.eager`` exports."""
    if isinstance(op, str):
        found = REGISTRY.get(op)
        if found is None:
            close = difflib.get_close_matches(op, list(REGISTRY), n=3)
            hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
            raise KeyError(
                f"apply_op: no op named {op!r}{hint}; the op library's names are "
                "tinygrad_edu.ops.REGISTRY's keys, e.g. 'exp', 'add', 'matmul'"
            )
        op = found
    return apply_op(op, *args, **attrs)


def _device_error(op, args, dev, other) -> Exception:
    """The error for inputs on two devices (or a tensor around another library's array)."""
    for x in args:
        if _foreign(getattr(x, "_data", x)):
            return mixing_error(op.name, getattr(x, "_data", x))
    return RuntimeError(
        f"{op.name}: inputs are on different devices ({dev} and {other}); "
        f"move them to one device first, e.g. x.to('{dev}')"
    )


def _apply_inplace(op, input, *others, **attrs):
    """The ``apply`` of the generated in-place methods (``x.add_(y)``)."""
    return input._inplace(op, *others, **attrs)


_NO_EDGE = (None, 0)
_PY_NUMBERS = frozenset({float, int, bool})
_NUMBER_META = ((), None)  # a Python number's shape and dtype in a node's record
_new = object.__new__
_init = core.init_tensor
_modes = grad_mode._state
_RARE = grad_mode.RARE
_CPU = backend.parse_device("cpu")
_NEEDS = [[tuple(bool(m >> i & 1) for i in range(n)) for m in range(1 << n)] for n in range(4)]
_NONES = [(None,) * n for n in range(8)]
_META: dict = {}
_SAVES: dict = {}  # (op, mask of the inputs that need grad) -> positions of the inputs to save
_FREEZE_MASK = collector.FREEZE_EVERY - 1
_GETITEM = REGISTRY["getitem"]
_BASIC = frozenset({int, slice, type(None), type(Ellipsis)})  # see unrecorded_getitem


def _saves(op, mask: int) -> tuple:
    """The inputs a node of ``op`` keeps, when the inputs in ``mask`` need gradients.

    NOTE [Save only what backward reads]
        ``op.saves_for`` says whose gradient reads a saved input: ``mul`` reads ``b`` only for
        ``a``'s gradient and ``a`` only for ``b``'s. So ``y * 1.0001`` keeps the number, not
        ``y``, as PyTorch's ``MulBackward0`` does: one ``SavedTensor`` less per op, and ``y``
        is freed as soon as the program drops it. The cost to a reader: which inputs a node
        holds depends on which inputs need grad, not on the op alone.
    """
    keep = tuple(
        i for i in op.saves
        if i not in op.saves_for or any(mask >> j & 1 for j in op.saves_for[i])
    )  # fmt: skip
    _SAVES[(op, mask)] = keep
    return keep


def _record_view(result, src, op, args, attrs) -> None:
    """Make ``result`` (which shares ``src``'s memory) a view: its base and how to replay it
    from there (see NOTE [Views and version counters])."""
    extra = () if len(args) == 1 else tuple(a._data if isinstance(a, core.Tensor) else a
                                            for a in args[1:])  # fmt: skip
    base = src._base
    if base is None:
        base, steps = src, ((op, extra, attrs, src._data.shape),)
    else:
        steps = src._view_steps + ((op, extra, attrs, src._data.shape),)
    result._base = base
    state = result.__dict__
    state["_view_steps"] = steps
    state["_view_version"] = src._counter[0]
    if src._view_no_grad or not _modes.grad:
        state["_view_no_grad"] = True  # made under no_grad: no in-place with grad mode on
    if src._view_multi:
        state["_view_multi"] = src._view_multi  # a view of split()'s output is one too


def unrecorded_getitem(src, index):
    """``src[index]`` for a basic index (ints, slices, ``None``, ``...``; ``index`` already
    through ``_raw_index``) when nothing is recorded; None where ``apply_op`` must run.

    NOTE [Unrecorded indexing] (``python -m benchmarks.run --only batch_rows``)
        ``for row in x``, ``data[i:i + n]`` and ``x[i]`` in a Python loop make one small
        tensor each: in a data loader that is most of the program's time. When no node is
        recorded (``src`` does not require grad, or grad mode is off) and no rare mode is on
        (a ``tg.compile`` trace, anomaly detection, inference mode: NOTE [Rare modes] in
        grad_mode.py), ``apply_op(getitem)`` comes down to: index the numpy array, wrap the
        result, and make it a view of ``src`` when it shares ``src``'s memory. This does just
        that, and skips the rest: the device check (one input), the mask of inputs that need
        grad (none may), the node (none is made) and the trace. The tensor it returns has the
        same fields as ``apply_op``'s, view record included (``_record_view``); GetItem's
        forward is ``x[index]`` for a basic index. Anything else, an index numpy refuses
        included, returns None, and ``apply_op`` runs and explains the error.
    """
    if _RARE[0] or src._requires_grad and _modes.grad:
        return None
    d = src._data
    if type(d) is not _ndarray:
        return None
    for p in index if type(index) is tuple else (index,):
        if type(p) not in _BASIC:  # (exact types: a bool or an integer array is not basic)
            return None
    try:
        out = d[index]
    except (ValueError, TypeError, IndexError, AttributeError):
        return None
    if type(out) is not _ndarray:
        return None
    Tensor = core.Tensor
    if _shares(out, d):
        result = _init(_new(Tensor), out, src._device, None, src._counter)
        _record_view(result, src, _GETITEM, (src,), {"index": index})
        return result
    return _init(_new(Tensor), out, src._device, None)  # (x[True] copies)


def _shares(out, data) -> bool:
    """Whether ``out`` (an op's result) shares ``data``'s memory: the same owner. numpy points
    a view's ``base`` at the owner itself (a view of a view too), so the common answers,
    ``out`` a view of ``data`` or of ``data``'s own base, need no walk up the chain."""
    base = getattr(out, "base", None)
    if base is not None and (base is data or base is getattr(data, "base", None)):
        return True
    return _owner(out) is _owner(data)


def _owner(array):
    """The array that owns ``array``'s memory (itself when it is not a view)."""
    while getattr(array, "base", None) is not None:
        array = array.base
    return array


def _shapes_dtypes(meta: list) -> tuple:
    """``(shapes, dtypes)`` of a node's inputs, one shared pair per distinct value.

    ``meta`` is ``[output array type, shape 0, dtype 0, shape 1, dtype 1, ...]``: the key
    starts with the array type, so dtypes of different namespaces are never compared.
    """
    try:
        key = tuple(meta)
        hit = _META.get(key)
    except TypeError:  # an unhashable constant
        hit = None
        key = None
    if hit is None:
        hit = (tuple(meta[1::2]), tuple(meta[2::2]))
        if key is not None and len(_META) < 4096:  # bounded: varying shapes cannot grow it
            _META[key] = hit
    return hit


def _namespace(dev, data):
    if dev is None or dev.type == "cpu":
        return backend.namespace_of(data)
    return backend.get_namespace(dev)



# -- the op methods: generated from the surface table (see tinygrad_edu.ops.surface) ---------
METHODS, FUNCTIONS, NN_FUNCTIONS = generate(apply_op, apply_inplace=_apply_inplace)


def _multi_output(fn, node: str):
    """``split``/``chunk``/``unbind`` return several views of one tensor, recorded as one node
    with an output per piece (``split_node.py``); PyTorch refuses to record an in-place change
    through one of them (``Tensor._check_view_inplace``)."""

    @functools.wraps(fn)
    def views(*args, **kwargs):
        src = args[0] if args else None
        if isinstance(src, core.Tensor) and src._requires_grad and _modes.grad and not _RARE[0]:
            _modes.grad = False  # the pieces as plain views; their one node is made below
            try:
                pieces = fn(*args, **kwargs)
            finally:
                _modes.grad = True
            if not _join(pieces, src):  # (a namespace whose slices copy: one node per piece)
                pieces = fn(*args, **kwargs)
        else:
            pieces = fn(*args, **kwargs)
        for i, piece in enumerate(pieces):
            if piece._base is not None:
                piece.__dict__["_view_multi"] = f"Output {i} of {node}"
        return pieces

    return views


def _join(pieces, src) -> bool:
    """Give the views ``pieces`` of ``src`` one backward node (``SplitBackward0``,
    ``SplitWithSizesBackward0`` or ``UnbindBackward0``, as PyTorch names it), piece ``i`` its
    output ``i``. Each piece's last view step is the slice that made it (``getitem`` with
    ``index=(slice(None),) * dim + (part, ...)`` and ``piece_of``): it gives the name and dim."""
    steps = [p.__dict__.get("_view_steps") for p in pieces]
    if not pieces or not all(steps):
        return False
    attrs = steps[0][-1][2]
    name = _GETITEM.torch_names[_GETITEM.variant((src,), attrs)]
    node = SplitBackward(name, core.edge(src), len(attrs["index"]) - 2,
                         attrs["piece_of"] == "unbind", [p._data.shape for p in pieces],
                         src._data.dtype)  # fmt: skip
    if not node.sequence_nr & _FREEZE_MASK:
        collector.graph_grew()  # see NOTE [Long graphs and the cycle collector]
    if src._device is not _CPU:
        place(node, src._device)  # the engine runs it on that device's queue
    for i, p in enumerate(pieces):
        p._grad_fn, p._output_nr = node, i
        p._requires_grad = True
        if not src._view_no_grad:
            p.__dict__.pop("_view_no_grad", None)  # made with grad mode off, but recorded
    return True


for _table in (METHODS, FUNCTIONS):
    for _name, _node in (("split", "Split"), ("chunk", "Split"), ("unbind", "Unbind")):
        _table[_name] = _multi_output(_table[_name], _node)

FUNCTIONS = {_name: with_out(_fn) for _name, _fn in FUNCTIONS.items()}  # tg.exp(x, out=y)
# METHODS become Tensor's methods in tensor.py, where the class is defined
