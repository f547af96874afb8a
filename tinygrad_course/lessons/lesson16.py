"""Lesson 16's exercises: a tensor is a window on its storage. Predict the strides of a
contiguous tensor, then the window a slice makes.

The answers are checked against the library's own ``x.stride()`` and ``x.storage_offset()``
(PyTorch's numbers: ``tests/eager/test_anatomy.py`` compares them), never against
``as_strided``, which assignment A5 asks for: both exercises can be done on the first day.

>>> [ex.number for ex in EXERCISES]
['16.1', '16.2']
"""

from __future__ import annotations

import math

from .exercise import Exercise, Verdict, Wrong, diagnose

__all__ = ["EXERCISES", "contiguous", "slice_window"]


def _tg():
    import tinygrad_edu  # noqa: PLC0415

    return tinygrad_edu


def _as_ints(value, what: str):
    """``value`` as a tuple of ints, or a Verdict saying what is wrong with it."""
    if not isinstance(value, tuple | list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):  # fmt: skip
        return Verdict(False, f"{what}: got {value!r}",
                       "return a tuple of ints, one per dim, as x.stride() does")  # fmt: skip
    return tuple(value)


# -- 16.1 the strides of a contiguous tensor ---------------------------------------------------
SHAPES = [(3, 4), (2, 3, 4), (5,), (), (2, 1, 3), (4, 1), (2, 5, 1, 3)]


def _column_major(shape):
    out, step = [], 1
    for n in shape:
        out.append(step)
        step *= n
    return tuple(out)


def _own_size_included(shape):
    return tuple(math.prod(shape[d:]) for d in range(len(shape)))


def _ones(shape):
    return (1,) * len(shape)


def _numpy_strides(shape):
    import numpy as np  # noqa: PLC0415

    return np.zeros(shape).strides


def _sizes(shape):
    return tuple(shape)


def _grade_contiguous(fn) -> Verdict:
    tg = _tg()
    for shape in SHAPES:
        got = _as_ints(fn(shape), f"for shape {shape}")
        if isinstance(got, Verdict):
            return got
        want = tg.zeros(shape).stride()
        # the other anticipated mistakes are contiguous's recorded wrong answers: the check
        # recognises them (computed here from their code, they would ship it to students)
        mistakes = [
            (tuple(8 * s for s in want), "those are numpy's strides of a float64 array, in "
             "bytes: x.stride() counts elements (8 bytes each here)"),
        ]  # fmt: skip
        if len(got) != len(want):
            return Verdict(False, f"for shape {shape}: {len(got)} strides for {len(shape)} dims",
                           "one stride per dim (a 0-dim tensor has none: return ())")
        verdict = diagnose(got, want, [(m, h) for m, h in mistakes if m != want],
                           "start from 1 for the last dim and walk to the first, multiplying "
                           "by each size you pass", what=f"shape {shape}: ")  # fmt: skip
        if not verdict.ok:
            return verdict
    return Verdict(True, f"the strides of tg.zeros(shape) (and torch.zeros) for {len(SHAPES)} "
                   "shapes, 0-dim and size-1 dims included")  # fmt: skip


contiguous = Exercise(
    "16.1", "the strides of a contiguous tensor", _grade_contiguous,
    wrong=[
        Wrong("column-major", _column_major,
              "those are column-major (Fortran) strides: in a row-major tensor the last dim is "
              "the one whose neighbours sit next to each other"),
        Wrong("each dim's own size included", _own_size_included,
              "a dim's stride counts the elements of the dims after it, not its own size: the "
              "last dim's stride is 1"),
        Wrong("stride 1 everywhere", _ones,
              "stride 1 everywhere is true of the last dim only: one step along an earlier dim "
              "skips a whole row (or block)"),
        Wrong("the sizes themselves", _sizes,
              "a stride is a step in memory, not a size: how many elements lie between x[..., "
              "i, ...] and x[..., i + 1, ...]"),
        Wrong("numpy's strides, in bytes", _numpy_strides,
              "those are numpy's strides of a float64 array, in bytes: x.stride() counts "
              "elements (8 bytes each here)"),
    ],
)  # fmt: skip


# -- 16.2 the window a slice makes ---------------------------------------------------------------
def _reference_slice(shape, stride, offset, dim, start, stop, step):
    """Exercise 16.2's answer, which the recorded wrong answers start from (the check's truth
    is the library's own slicing); the student edition holds no copy (its markers strip
    it)."""
    # BEGIN SOLUTION
    size = max(0, -(-(stop - start) // step))
    new_shape = shape[:dim] + (size,) + shape[dim + 1 :]
    new_stride = stride[:dim] + (stride[dim] * step,) + stride[dim + 1 :]
    return new_shape, new_stride, offset + start * stride[dim]
    # END SOLUTION


def _slice_cases():
    """(what, base tensor, dim, start, stop, step): tensors that are already windows
    (transposed, sliced, offset) and slices with steps that do not divide their length."""
    tg = _tg()
    cube = tg.zeros(3, 4, 5)
    return [
        ("a 6x8 matrix, rows 1:5:2", tg.zeros(6, 8), 0, 1, 5, 2),
        ("a 6x8 matrix, columns 2:7:3", tg.zeros(6, 8), 1, 2, 7, 3),
        ("a 3x4x5 tensor, dim 1, 1:4", cube, 1, 1, 4, 1),
        ("a transposed 4x6 matrix, columns 1:6:2", tg.zeros(6, 4).t(), 1, 1, 6, 2),
        ("a permuted and sliced 3x4x5 tensor, dim 1, 1:3:2", cube.permute(2, 0, 1)[1:, :, ::2],
         1, 1, 3, 2),
        ("an offset row of 10, 2:9:4", tg.zeros(3, 10)[1], 0, 2, 9, 4),
    ]  # fmt: skip


def _index(dim, start, stop, step):
    return (slice(None),) * dim + (slice(start, stop, step),)


def _grade_slice(fn) -> Verdict:
    for what, x, dim, start, stop, step in _slice_cases():
        shape, stride, offset = tuple(x.shape), x.stride(), x.storage_offset()
        y = x[_index(dim, start, stop, step)]
        want = (tuple(y.shape), y.stride(), y.storage_offset())
        got = fn(shape, stride, offset, dim, start, stop, step)
        if not isinstance(got, tuple | list) or len(got) != 3:
            return Verdict(False, f"{what}: returned {got!r}",
                           "return three things: (shape, stride, offset)")  # fmt: skip
        g_shape, g_stride = _as_ints(got[0], "the shape"), _as_ints(got[1], "the strides")
        for part in (g_shape, g_stride):
            if isinstance(part, Verdict):
                return part
        g_offset = got[2]
        if not isinstance(g_offset, int) or isinstance(g_offset, bool):
            return Verdict(False, f"{what}: the offset is {g_offset!r}",
                           "the storage offset is one int, in elements")  # fmt: skip
        # the anticipated mistakes are slice_window's recorded wrong answers: the check
        # recognises them by the (shape, stride, offset) they give
        verdict = diagnose((g_shape, g_stride, g_offset), want, [],
                           "work this slice by hand: which elements does it take, and where "
                           "in the storage does each lie?",
                           what=f"{what}: (shape, stride, offset) ")  # fmt: skip
        if not verdict.ok:
            return verdict
    return Verdict(True, "the shape, strides and offset of six slices, as x[...] gives them "
                   "(PyTorch's numbers)")  # fmt: skip


def _slice_no_step_in_stride(shape, stride, offset, dim, start, stop, step):
    s, _, o = _reference_slice(shape, stride, offset, dim, start, stop, step)
    return s, tuple(stride), o


def _slice_offset_unmoved(shape, stride, offset, dim, start, stop, step):
    s, t, _ = _reference_slice(shape, stride, offset, dim, start, stop, step)
    return s, t, offset


def _slice_offset_by_start(shape, stride, offset, dim, start, stop, step):
    s, t, _ = _reference_slice(shape, stride, offset, dim, start, stop, step)
    return s, t, offset + start


def _slice_size_floor(shape, stride, offset, dim, start, stop, step):
    s, t, o = _reference_slice(shape, stride, offset, dim, start, stop, step)
    s = list(s)
    s[dim] = (stop - start) // step
    return tuple(s), t, o


def _slice_size_ignores_step(shape, stride, offset, dim, start, stop, step):
    s, t, o = _reference_slice(shape, stride, offset, dim, start, stop, step)
    s = list(s)
    s[dim] = stop - start
    return tuple(s), t, o


def _slice_from_zero(shape, stride, offset, dim, start, stop, step):
    s, t, o = _reference_slice(shape, stride, offset, dim, start, stop, step)
    return s, t, o - offset


slice_window = Exercise(
    "16.2", "the window a slice makes", _grade_slice,
    wrong=[
        Wrong("the stride not multiplied by the step", _slice_no_step_in_stride,
              "with a step, the slice skips elements: the dim's stride grows by the step"),
        Wrong("the offset not moved", _slice_offset_unmoved,
              "the slice starts later in memory: the offset moves by start steps along the dim"),
        Wrong("the offset moved by start elements", _slice_offset_by_start,
              "the offset counts elements of the storage: moving start places along the dim "
              "moves start times that dim's stride"),
        Wrong("the size rounded down", _slice_size_floor,
              "count the elements the slice takes: a last step that starts inside the range "
              "still takes an element (round up, not down)"),
        Wrong("the size as stop - start", _slice_size_ignores_step,
              "with a step, the slice takes fewer elements than stop - start"),
        Wrong("the offset counted from the storage's start", _slice_from_zero,
              "the tensor is already a window: start from its own offset, not from the "
              "storage's first element"),
    ],
    hints=[("TypeError", "can only concatenate tuple",
            "shape and stride arrive as tuples: build the new ones with tuple(...) or "
            "slicing and +, not with list methods")],
)  # fmt: skip

EXERCISES = (contiguous, slice_window)
