"""Lesson 17's exercises: a fused kernel written by hand (a bias and GELU in one loop), and the
bytes one step of a program moves.

The kernel is checked against the library's own GELU (``F.gelu(..., approximate="tanh")``,
a forward that the student edition keeps), the bytes against counts worked out here from the
shapes, which the student edition holds as values recorded when it was made: both exercises
can be done on the first day.

>>> [ex.number for ex in EXERCISES]
['17.1', '17.2']
"""

from __future__ import annotations

import math

import numpy as np

from .exercise import Exercise, Verdict, Wrong, diagnose

__all__ = ["EXERCISES", "bias_gelu", "step_bytes", "STEPS"]


def _tg():
    import tinygrad_edu  # noqa: PLC0415

    return tinygrad_edu


# -- 17.1 bias and GELU in one loop ---------------------------------------------------------------
def _library_bias_gelu(h, b):
    """The check's truth: the library's GELU of ``h + b`` (a library call, not a solution)."""
    tg = _tg()
    from tinygrad_edu.nn import functional as F  # noqa: PLC0415

    return F.gelu(tg.tensor(h) + tg.tensor(b), approximate="tanh").numpy()


def _reference_gelu(v, inner_cube=True, half=True):
    """GELU's tanh form of one number, from which 17.1's recorded wrong answers are built (each
    with one change: the flags leave a part out); the check's truth is the library's GELU. The
    student edition holds no copy (its markers strip it), and its check knows these mistakes
    from what they gave when the edition was made."""
    # BEGIN SOLUTION
    inner = v + 0.044715 * v**3 if inner_cube else v
    return (0.5 if half else 1.0) * v * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * inner))
    # END SOLUTION


def _bias_by_row(h, b, out):
    for r in range(h.shape[0]):
        for c in range(h.shape[1]):
            out[r, c] = _reference_gelu(h[r, c] + b[r])


def _no_cube(h, b, out):
    for r in range(h.shape[0]):
        for c in range(h.shape[1]):
            out[r, c] = _reference_gelu(h[r, c] + b[c], inner_cube=False)


def _no_half(h, b, out):
    for r in range(h.shape[0]):
        for c in range(h.shape[1]):
            out[r, c] = _reference_gelu(h[r, c] + b[c], half=False)


def _bias_after(h, b, out):  # the bias added to the activation's result
    for r in range(h.shape[0]):
        for c in range(h.shape[1]):
            out[r, c] = _reference_gelu(h[r, c]) + b[c]


def _returns_new(h, b, out):  # the right values, in a new array: out is left as it was
    return _library_bias_gelu(h, b)


def _transposed(h, b, out):
    for r in range(h.shape[0]):
        for c in range(h.shape[1]):
            out[c, r] = _reference_gelu(h[r, c] + b[c])


def _grade_bias_gelu(fn) -> Verdict:
    rng = np.random.default_rng(17)
    for rows, cols in ((3, 5), (6, 2), (1, 7)):
        h = rng.standard_normal((rows, cols)) * 2.0
        b = rng.standard_normal(cols)
        out = np.full((rows, cols), np.nan)
        returned = fn(h.copy(), b.copy(), out)
        if np.isnan(out).all():
            # an answer that returns its result is a recorded wrong answer: the check knows it
            # by this message, and shows that mistake's diagnosis
            if returned is not None:
                return Verdict(False, f"out was never written (shape {rows}×{cols}), and the "
                               "kernel returned a value")  # fmt: skip
            return Verdict(False, f"out was never written (shape {rows}×{cols})", "your "
                           "function left out as it was: the kernel's result goes into out, "
                           "one element at a time, and the function returns nothing")  # fmt: skip
        # the anticipated mistakes are bias_gelu's recorded wrong answers: the check
        # recognises them by the values they write
        verdict = diagnose(out, _library_bias_gelu(h, b), [], "compare one element with the "
                           "library's F.gelu(h + b, approximate='tanh')", atol=1e-12,
                           rtol=1e-12, what=f"{rows}×{cols}: ")  # fmt: skip
        if not verdict.ok:
            return verdict
    return Verdict(True, "gelu(h + b) as F.gelu(..., approximate='tanh') gives it, on 3 shapes")


bias_gelu = Exercise(
    "17.1", "bias and GELU in one loop", _grade_bias_gelu,
    wrong=[
        Wrong("the bias indexed by row", _bias_by_row,
              "the bias is taken by row: b holds one value per column, so the bias of column "
              "c is added to every row of that column"),
        Wrong("the cube left out", _no_cube,
              "your values are GELU without the cubic correction inside the tanh: the tanh "
              "form's argument holds a small term in the cube of its input besides the input "
              "itself (compare with the lesson's gelu in section 1)"),
        Wrong("the factor 0.5 left out", _no_half,
              "the factor one half in front is missing: your values are twice GELU's, which "
              "weights its input by a number between 0 and 1, not between 0 and 2"),
        Wrong("the bias added after GELU", _bias_after,
              "the bias is added after the activation: it belongs to the linear layer's "
              "output, so it is added to h before GELU, inside its argument"),
        Wrong("a new array returned", _returns_new,
              "the kernel returned a new array and left out as it was: write each value into "
              "out[r, c], as the generated kernels write their o arguments, and return nothing"),
        Wrong("out written transposed", _transposed,
              "out is written transposed: it has the shape of h, rows first, so the value of "
              "row r and column c belongs at out[r, c]"),
    ],
    hints=[("IndexError", "out of bounds",
            "an index runs past its array: out has the shape of h, (rows, columns), and b one "
            "value per column")],
)  # fmt: skip


# -- 17.2 the bytes one step moves ---------------------------------------------------------------
#: steps of the lesson's programs: a numpy op, or a kernel (several outputs), as shapes
STEPS = [
    {"what": "add (x @ w + b)", "inputs": [(256, 256), (256,)], "outputs": [(256, 256)],
     "itemsize": 8},
    {"what": "tanh", "inputs": [(256, 256)], "outputs": [(256, 256)], "itemsize": 8},
    {"what": "mean over the last axis", "inputs": [(256, 256)], "outputs": [(256, 1)],
     "itemsize": 8},
    {"what": "the forward kernel", "inputs": [(256, 256), (256,)], "outputs": [(256, 256)],
     "itemsize": 8},
    {"what": "a kernel that also writes values saved for the backward",
     "inputs": [(256, 256), (256,)], "outputs": [(256, 256)] * 5 + [(256, 1)], "itemsize": 8},
    {"what": "a float32 kernel", "inputs": [(64, 32), (1, 32), (64, 1)],
     "outputs": [(64, 32), (64, 1)], "itemsize": 4},
]  # fmt: skip


def _reference_bytes(step):
    """Exercise 17.2's answer: the check's truth, and what the recorded wrong answers start
    from; the student edition holds no copy (its markers strip it) and checks against the
    values recorded when it was made."""
    # BEGIN SOLUTION
    read = sum(math.prod(s) for s in step["inputs"]) * step["itemsize"]
    return read, sum(math.prod(s) for s in step["outputs"]) * step["itemsize"]
    # END SOLUTION


def _bytes_expected() -> list:
    """``[[bytes read, bytes written], ...]`` of each of :data:`STEPS` (recorded in the student
    edition, which holds no reference count)."""
    return [list(_reference_bytes(step)) for step in STEPS]


def _elements(step):
    read, written = _reference_bytes(step)
    return read // step["itemsize"], written // step["itemsize"]


def _broadcast_inputs(step):  # every input counted at the full size of the first output
    full = math.prod(step["outputs"][0])
    return (full * len(step["inputs"]) * step["itemsize"], _reference_bytes(step)[1])


def _swapped(step):
    read, written = _reference_bytes(step)
    return written, read


def _first_output_only(step):
    return _reference_bytes(step)[0], math.prod(step["outputs"][0]) * step["itemsize"]


def _grade_step_bytes(fn) -> Verdict:
    expected = step_bytes.values()
    for step, want in zip(STEPS, expected, strict=True):
        got = fn({k: (list(v) if isinstance(v, list) else v) for k, v in step.items()})
        if not isinstance(got, tuple | list) or len(got) != 2:
            return Verdict(False, f"{step['what']}: returned {got!r}",
                           "return two numbers: (bytes read, bytes written)")  # fmt: skip
        # the anticipated mistakes are step_bytes's recorded wrong answers: the check
        # recognises them by the step where they go wrong and the numbers they give there
        verdict = diagnose(tuple(got), tuple(want), [], "count each input's and each "
                           "output's elements, then turn elements into bytes", atol=0,
                           rtol=0, what=f"{step['what']}: ")  # fmt: skip
        if not verdict.ok:
            return verdict
    return Verdict(True, f"the bytes read and written of {len(STEPS)} steps, ops and kernels")


step_bytes = Exercise(
    "17.2", "the bytes one step moves", _grade_step_bytes, expected=_bytes_expected,
    wrong=[
        Wrong("elements, not bytes", _elements,
              "those are numbers of elements, not of bytes: each element takes itemsize "
              "bytes (step['itemsize']: 8 for float64, 4 for float32)"),
        Wrong("broadcast inputs counted at full size", _broadcast_inputs,
              "an input is read at its own size: a bias of C values broadcast over the rows "
              "is C values in memory (the kernel reads them from the cache after the first "
              "row)"),
        Wrong("read and written swapped", _swapped,
              "read and written are swapped: the inputs are what a step reads, the outputs "
              "what it writes, and the pair comes in the order (read, written)"),
        Wrong("only the first output", _first_output_only,
              "only the first output is counted: a kernel writes every output it has, and "
              "the values it saves for the backward are written too"),
    ],
    hints=[("TypeError", "unsupported operand",
            "a shape is a tuple of ints, not a number: its number of elements is the product "
            "of its entries")],
)  # fmt: skip

EXERCISES = (bias_gelu, step_bytes)
