"""PyTorch's argument conventions for the ops of :mod:`tinygrad_edu.ops.shape`: the rows of
the surface table (see :mod:`tinygrad_edu.ops.surface`) that turn ``x.view(2, -1)``,
``x.permute(1, 0)``, ``x.split([1, 2], dim=1)``, ``tg.cat(ts, dim=0)`` ... into calls of the
ops, checking the arguments as PyTorch does (also ``hsplit``/``vsplit``/``dsplit``,
``split_with_sizes``, ``sum_to_size`` and ``broadcast_shapes``). The ops themselves (shapes,
forwards, derivative rules) are in ``shape.py``; this module only parses arguments and declares
the rows."""

from __future__ import annotations

from ..size import Size
from .base import REGISTRY, IndexShapeError, ShapeError, broadcast_shapes
from .shape import _axis
from .surface import declare, dims, shape_of

__all__: list = []


def _varargs(shape):
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], tuple | list) else shape


def _reshape(op, apply):
    def reshape(input, *shape):
        return apply(op, input, shape=_varargs(shape))

    return reshape


def _reshape_function(op, apply):
    def reshape(input, shape):  # PyTorch's torch.reshape takes the shape as one tuple
        return apply(op, input, shape=tuple(shape))

    return reshape


def _permute_function(op, apply):
    def permute(input, dims):  # torch.permute takes the dims as one tuple
        return apply(op, input, axes=tuple(dims))

    return permute


def _like(op, apply):
    def reshape_as(input, other):
        return apply(op, input, shape=shape_of(op.name, other))

    return reshape_as


def _view(op, apply):
    """``view(*shape)``: ``reshape`` that must not copy. As in PyTorch, a view of a
    non-contiguous tensor that would need a copy is an error (``reshape`` copies instead)."""

    def view(input, *shape):
        out = apply(op, input, shape=_varargs(shape))
        _check_shared("view", input, out)
        return out

    return view


def _view_as(op, apply):
    def view_as(input, other):
        out = apply(op, input, shape=shape_of("view_as", other))
        _check_shared("view_as", input, out)
        return out

    return view_as


def _check_shared(opname, input, out):
    src, dst = getattr(input, "_data", None), getattr(out, "_data", None)  # eager tensors only
    if not (hasattr(type(src), "base") and hasattr(type(dst), "base")):
        return  # not arrays (tg.compile's stand-ins, whose layout the traced call checked)
    if not getattr(dst, "size", 0) or _owner(src) is _owner(dst):
        return
    raise RuntimeError(
        f"{opname}: a tensor of shape {tuple(src.shape)} whose memory is not laid out "
        f"row-major (a transpose or a strided slice) cannot be viewed as {tuple(dst.shape)} "
        "without a copy; use .reshape(...) (which copies when it must) or .contiguous() first"
    )


def _owner(array):
    while getattr(array, "base", None) is not None:
        array = array.base
    return array


def _flatten(op, apply):
    def flatten(input, start_dim=0, end_dim=-1):
        return apply(op, input, start_dim=start_dim, end_dim=end_dim)

    return flatten


def _unsqueeze(op, apply):
    def unsqueeze(input, dim):
        dim = dims("unsqueeze", dim)
        shape = getattr(input, "shape", None)
        if shape is not None and type(dim) is int and not -len(shape) - 1 <= dim <= len(shape):
            raise IndexShapeError(f"unsqueeze: dim {dim} is out of range for shape "
                                  f"{tuple(shape)} (expected in [{-len(shape) - 1}, "
                                  f"{len(shape)}])")  # fmt: skip
        return apply(op, input, axis=dim)

    return unsqueeze


def _squeeze(op, apply):
    def squeeze(input, dim=None, *, axis=None):
        return apply(op, input, dim=dims(op.name, axis if dim is None else dim))

    return squeeze


def _expand(op, apply):
    """``expand(*sizes)``: -1 keeps a dim's size; new dims go in front."""

    def expand(input, *sizes):
        sizes = _varargs(sizes)
        shape = shape_of("expand", input) if -1 in sizes else ()
        lead = len(sizes) - len(shape)
        return apply(op, input, shape=tuple(shape[i - lead] if s == -1 else s
                                            for i, s in enumerate(sizes)))  # fmt: skip

    return expand


def _expand_as(op, apply):
    def expand_as(input, other):
        return apply(op, input, shape=shape_of("expand_as", other))

    return expand_as


def _broadcast_to(op, apply):
    def broadcast_to(input, size):
        return apply(op, input, shape=tuple(size))

    return broadcast_to


def _repeat(op, apply):
    def repeat(input, *sizes):
        return apply(op, input, repeats=_varargs(sizes))

    return repeat


def _permute(op, apply):
    def permute(input, *dims):
        if not dims:
            raise TypeError("permute: give the new order of the dims, e.g. x.permute(1, 0)")
        return apply(op, input, axes=_varargs(dims))

    return permute


def _numpy_t(op, apply):
    def T(input):  # all dims reversed (numpy's .T; PyTorch's for 2-D)
        return apply(op, input)

    return T


def _transpose(op, apply):
    def transpose(input, dim0, dim1):
        return apply(op, input, dim0=dim0, dim1=dim1)

    return transpose


def _t(op, apply):
    def t(input):
        n = len(shape_of("t", input))
        if n > 2:
            raise ShapeError(f"t: expects a tensor of at most 2 dims, got {n}; use transpose")
        return apply(op, input, dim0=0, dim1=-1, via="t")

    return t


def _mT(op, apply):
    def mT(input):
        return apply(op, input, dim0=-2, dim1=-1)

    return mT


def _split(op, apply):
    """``split(split_size_or_sections, dim=0)``: pieces of one size (the last may be
    smaller), or of the given sizes; each piece is a slice of the input."""

    def split(input, split_size_or_sections, dim=0):
        shape = shape_of("split", input)
        d = _axis("split", dim, len(shape), shape)
        n = shape[d]
        sizes = split_size_or_sections
        if isinstance(sizes, int):
            if sizes <= 0 and n:
                raise ValueError(f"split: split_size must be positive, got {sizes}")
            sizes = [min(sizes, n - i) for i in range(0, n, sizes)] if n else [0]
        elif sum(sizes) != n:
            raise ValueError(f"split: sizes {list(sizes)} add up to {sum(sizes)}, but dim {dim} "
                             f"has {n}")  # fmt: skip
        pieces, start = [], 0
        piece_of = "split" if isinstance(split_size_or_sections, int) else "split_with_sizes"
        for size in sizes:
            index = (slice(None),) * d + (slice(start, start + size), Ellipsis)
            pieces.append(apply(op, input, index=index, piece_of=piece_of))
            start += size
        return tuple(pieces)

    return split


def _chunk(op, apply):
    split = _split(op, apply)

    def chunk(input, chunks, dim=0):
        if type(chunks) is not int or chunks <= 0:
            raise ValueError(f"chunk: chunks must be a positive int, got {chunks!r}")
        shape = shape_of("chunk", input)
        n = shape[_axis("chunk", dim, len(shape), shape)]
        if n == 0:  # as many empty pieces as asked for (PyTorch, SplitWithSizesBackward0)
            return split(input, [0] * chunks, dim)
        return split(input, -(-n // chunks), dim)

    return chunk


def _unbind(op, apply):
    def unbind(input, dim=0):
        shape = shape_of("unbind", input)
        d = _axis("unbind", dim, len(shape), shape)
        return tuple(apply(op, input, index=(slice(None),) * d + (i, Ellipsis), piece_of="unbind")
                     for i in range(shape[d]))  # fmt: skip

    return unbind


def _gather(op, apply):
    def gather(input, dim, index):
        return apply(op, input, index, dim=dim)

    return gather


def _join(op, apply):
    def join(tensors, dim=0, *, axis=None):
        if not isinstance(tensors, list | tuple):
            raise TypeError(f"{op.name}: expects a list or tuple of tensors, got "
                            f"{type(tensors).__name__}")  # fmt: skip
        if not tensors:  # as PyTorch: nothing to join (and no input to take a device from)
            raise ShapeError(f"{op.name}: got an empty {type(tensors).__name__}; give at least "
                             "one tensor")  # fmt: skip
        for i, t in enumerate(tensors):  # PyTorch takes no lists or numbers here
            if not hasattr(type(t), "shape") and not hasattr(t, "shape"):  # (the class first:
                # a tensor's ``shape`` is a property that builds a tuple)
                raise TypeError(f"{op.name}: expected Tensor as element {i} in argument 0, but "
                                f"got {type(t).__name__}; convert it first: tg.tensor(...)")
        return apply(op, *tensors, dim=dim if axis is None else axis)

    return join


declare("reshape", _reshape, methods=("reshape",))
declare("reshape", _reshape_function, functions=("reshape",))
declare("reshape", _view, methods=("view",))
declare("reshape", _like, methods=("reshape_as",))
declare("reshape", _view_as, methods=("view_as",))
declare("flatten", _flatten, methods=("flatten",), functions=("flatten",))
declare("expand_dims", _unsqueeze, methods=("unsqueeze",), functions=("unsqueeze",),
        inplace=("unsqueeze_",))  # fmt: skip
declare("squeeze", _squeeze, methods=("squeeze",), functions=("squeeze",), inplace=("squeeze_",))
declare("broadcast_to", _expand, methods=("expand",))
declare("broadcast_to", _expand_as, methods=("expand_as",))
declare("broadcast_to", _broadcast_to, methods=("broadcast_to",), functions=("broadcast_to",))
declare("repeat", _repeat, methods=("repeat",))
declare("permute", _permute, methods=("permute",))
declare("permute", _permute_function, functions=("permute",))
declare("permute", _numpy_t, properties=("T",))
declare("transpose", _transpose, methods=("transpose", "swapaxes", "swapdims"),
        functions=("transpose", "swapaxes", "swapdims"))  # fmt: skip
declare("transpose", _t, methods=("t",), functions=("t",), inplace=("t_",))
declare("transpose", _transpose, inplace=("transpose_",))
declare("transpose", _mT, properties=("mT",))
declare("getitem", _split, methods=("split",), functions=("split",))
declare("getitem", _chunk, methods=("chunk",), functions=("chunk",))
declare("getitem", _unbind, methods=("unbind",), functions=("unbind",))
declare("gather", _gather, methods=("gather",), functions=("gather",))
declare("cat", _join, functions=("cat", "concat", "concatenate"))
declare("stack", _join, functions=("stack",))


# -- the splits by position, sum_to_size (expand's adjoint) and broadcast_shapes -------------
def _split_along(name, least, pick):
    """numpy's ``hsplit``/``vsplit``/``dsplit``: ``tensor_split`` along one fixed dim, an int
    number of sections only when it divides the dim's size."""

    def template(op, apply):
        getitem = REGISTRY["getitem"]

        def split(input, indices_or_sections):
            shape = shape_of(name, input)
            if len(shape) < least:
                raise ShapeError(f"{name} requires a tensor with at least {least} dims, but got "
                                 f"one of shape {shape}")  # fmt: skip
            d = pick(len(shape))
            n = shape[d]
            if isinstance(indices_or_sections, int):
                k = indices_or_sections
                if k <= 0 or n % k:
                    raise ShapeError(
                        f"{name} attempted to split along dim {d}, but the size of the dim "
                        f"({n}, shape {shape}) is not divisible by the split_size {k}"
                    )
                cuts = [n // k * i for i in range(1, k)]
            else:
                cuts = [int(i) for i in indices_or_sections]
            bounds = [0, *cuts, n]
            return tuple(apply(getitem, input, index=(slice(None),) * d + (slice(a, max(a, b)),))
                         for a, b in zip(bounds, bounds[1:]))  # fmt: skip

        split.__name__ = name
        return split

    return template


def _split_with_sizes(op, apply):
    """``split_with_sizes(input, split_sizes, dim=0)``: ``split`` with a list of sizes that
    must add up to the dim's size."""
    getitem = REGISTRY["getitem"]

    def split_with_sizes(input, split_sizes, dim=0):
        shape = shape_of("split_with_sizes", input)
        d = _axis("split_with_sizes", dim, len(shape), shape)
        sizes = [int(s) for s in split_sizes]
        n = shape[d] if shape else 1
        if any(s < 0 for s in sizes) or sum(sizes) != n:
            raise ShapeError(
                f"split_with_sizes expects split_sizes to be non-negative and sum exactly to {n} "
                f"(the size of dim {dim} of shape {shape}), but got split_sizes={sizes}"
            )
        pieces, start = [], 0
        for size in sizes:
            index = (slice(None),) * d + (slice(start, start + size), Ellipsis)
            pieces.append(apply(getitem, input, index=index, piece_of="split_with_sizes"))
            start += size
        return tuple(pieces)

    return split_with_sizes


def _sum_to_size(op, apply):
    """``x.sum_to_size(*size)``: ``x`` summed down to ``size``, which must broadcast to
    ``x``'s shape (the ``sum_to`` op)."""

    def sum_to_size(input, *size):
        if not size:
            raise TypeError("sum_to_size: missing the size (e.g. x.sum_to_size(1, 3))")
        size = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size
        shape = shape_of("sum_to_size", input)
        lead = len(shape) - len(size)
        if lead < 0 or any(s != 1 and s != shape[lead + i] for i, s in enumerate(size)):
            raise ShapeError(f"sum_to_size: size {list(size)} is not expandable to the input's "
                             f"size {list(shape)}")  # fmt: skip
        return apply(op, input, shape=tuple(int(s) for s in size))

    return sum_to_size


def _broadcast_shapes(op, apply):
    def broadcast_shapes_(*shapes):
        """The shape that ``shapes`` broadcast to (a :class:`~tinygrad_edu.Size`)."""
        parts = []
        for s in shapes:
            s = (s,) if isinstance(s, int) else tuple(s)
            if any(int(v) < 0 for v in s):
                raise ShapeError(f"broadcast_shapes: a shape has a negative size: {s}")
            parts.append(tuple(int(v) for v in s))
        return Size(broadcast_shapes("broadcast_shapes", *parts))

    broadcast_shapes_.__name__ = "broadcast_shapes"
    return broadcast_shapes_


declare(None, _split_along("hsplit", 1, lambda n: 0 if n == 1 else 1), methods=("hsplit",),
        functions=("hsplit",), symbolic=False)  # fmt: skip
declare(None, _split_along("vsplit", 2, lambda n: 0), methods=("vsplit",),
        functions=("vsplit",), symbolic=False)  # fmt: skip
declare(None, _split_along("dsplit", 3, lambda n: 2), methods=("dsplit",),
        functions=("dsplit",), symbolic=False)  # fmt: skip
declare(None, _split_with_sizes, methods=("split_with_sizes",),
        functions=("split_with_sizes",), symbolic=False)  # fmt: skip
declare("sum_to", _sum_to_size, methods=("sum_to_size",), symbolic=False)
declare(None, _broadcast_shapes, functions=("broadcast_shapes",), symbolic=False)
