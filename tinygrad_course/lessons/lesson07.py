"""Lesson 7's exercise: a softmax that runs on any array namespace.

>>> [ex.number for ex in EXERCISES]
['7.1']
"""

from __future__ import annotations

import numpy as np

from .exercise import Exercise, Verdict, Wrong, diagnose

__all__ = ["EXERCISES", "portable_softmax"]

_NAMESPACE_HINT = ("np.* turns a CuPy or strict array into a numpy array (or fails): do the "
                   "maths with the array's own namespace, which the backend finds for any "
                   "array (lesson 7, section on namespaces)")  # fmt: skip


def _library_softmax(values):
    """The library's own softmax: the truth the check compares with."""
    import tinygrad_edu as tg  # noqa: PLC0415

    return tg.tensor(values).softmax().numpy()


def _grade_softmax(fn) -> Verdict:
    import array_api_strict as xps  # noqa: PLC0415

    from tinygrad_edu import backend  # noqa: PLC0415

    values = np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, 999.0]], dtype=np.float32)
    expected = _library_softmax(values)
    got = fn(values.copy())
    if np.isnan(np.asarray(backend.to_numpy(got), dtype=np.float64)).any():
        return Verdict(False, "NaN in the result for the row [1000, 1000, 999]",
                       "subtract the row's maximum before exp: e^1000 overflows to inf, and "
                       "inf / inf is NaN")  # fmt: skip
    # the anticipated mistakes are portable_softmax's recorded wrong answers
    verdict = diagnose(backend.to_numpy(got), expected, [], "each row of the result is the "
                       "softmax of the same row of the input", rtol=1e-5,
                       what="on numpy: ")  # fmt: skip
    if not verdict.ok:
        return verdict
    strict_out = fn(xps.asarray(values))
    if not type(strict_out).__module__.startswith("array_api_strict"):
        kind = type(strict_out).__module__.split(".")[0] + "." + type(strict_out).__name__
        return Verdict(
            False, f"given an array_api_strict array it returned a {kind}", _NAMESPACE_HINT
        )
    verdict = diagnose(
        np.asarray(strict_out), expected, [], "", rtol=1e-5, what="on array_api_strict: "
    )
    if not verdict.ok:
        return verdict
    where = "numpy and array_api_strict"
    if backend.cuda_available():
        gpu_out = fn(backend.to_device(values, "cuda"))
        verdict = diagnose(
            backend.to_device(gpu_out, "cpu"),
            expected,
            [],
            _NAMESPACE_HINT,
            rtol=1e-5,
            what="on the GPU: ",
        )
        if not verdict.ok:
            return verdict
        where += " and the GPU"
    return Verdict(True, f"matches tg's softmax on {where}, and stays in each namespace")


def _with_numpy(a):
    e = np.exp(a - np.max(a, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def _no_max(a):
    from tinygrad_edu import backend  # noqa: PLC0415

    xp = backend.namespace_of(a)
    e = xp.exp(a)
    return e / xp.sum(e, axis=-1, keepdims=True)


def _whole_array(a):
    from tinygrad_edu import backend  # noqa: PLC0415

    xp = backend.namespace_of(a)
    e = xp.exp(a - xp.max(a, axis=-1, keepdims=True))
    return e / xp.sum(e)


def _wrong_axis(a):
    from tinygrad_edu import backend  # noqa: PLC0415

    xp = backend.namespace_of(a)
    e = xp.exp(a - xp.max(a, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=0, keepdims=True)


portable_softmax = Exercise(
    "7.1", "a portable softmax", _grade_softmax,
    wrong=[
        Wrong("np instead of xp", _with_numpy,
              "np.* turns a CuPy or strict array into a numpy array (or fails): do the maths "
              "with the array's own namespace, which the backend finds for any array (lesson "
              "7, section on namespaces)"),
        Wrong("no maximum subtracted", _no_max,
              "subtract the row's maximum before exp: e^1000 overflows to inf, and inf / inf "
              "is NaN"),
        Wrong("summed over the wrong axis", _wrong_axis,
              "sum along the last axis (axis=-1): each row sums to 1"),
        Wrong("summed over the whole array", _whole_array,
              "sum each row on its own (along the last axis, keeping it), not the whole "
              "array: each row sums to 1"),
    ],
    hints=[("TypeError", "", _NAMESPACE_HINT)],
)  # fmt: skip

EXERCISES = (portable_softmax,)
