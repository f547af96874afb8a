"""Lesson 17's exercises: a fused kernel written by hand (a bias and GELU in one loop), and the
bytes one step of a program moves.

The kernel is checked against the library's own GELU (``F.gelu(..., approximate="tanh")``,
a forward that the student edition keeps), the bytes against a count worked out here from
the shapes: both exercises can be done on the first day.

>>> [ex.number for ex in EXERCISES]
['17.1', '17.2']
>>> _bytes_reference({"inputs": [(4, 3), (3,)], "outputs": [(4, 3), (4, 1)], "itemsize": 8})
(120, 128)
"""

from __future__ import annotations

import math

import numpy as np

from .exercise import Exercise, Verdict, Wrong, diagnose

__all__ = ["EXERCISES", "bias_gelu", "step_bytes", "STEPS"]

#: GELU's tanh form: 0.5 h (1 + tanh(sqrt(2 / pi) (h + 0.044715 h^3)))
ROOT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _tg():
    import tinygrad_edu  # noqa: PLC0415

    return tinygrad_edu


# -- 17.1 bias and GELU in one loop ---------------------------------------------------------------
def _library_bias_gelu(h, b):
    tg = _tg()
    from tinygrad_edu.nn import functional as F  # noqa: PLC0415

    return F.gelu(tg.tensor(h) + tg.tensor(b), approximate="tanh").numpy()


def _gelu_scalar(v, inner_cube=True, half=True):
    inner = v + 0.044715 * v**3 if inner_cube else v
    return (0.5 if half else 1.0) * v * (1.0 + math.tanh(ROOT_2_OVER_PI * inner))


def _bias_by_row(h, b, out):
    for r in range(h.shape[0]):
        for c in range(h.shape[1]):
            out[r, c] = _gelu_scalar(h[r, c] + b[r])


def _no_cube(h, b, out):
    for r in range(h.shape[0]):
        for c in range(h.shape[1]):
            out[r, c] = _gelu_scalar(h[r, c] + b[c], inner_cube=False)


def _no_half(h, b, out):
    for r in range(h.shape[0]):
        for c in range(h.shape[1]):
            out[r, c] = _gelu_scalar(h[r, c] + b[c], half=False)


def _bias_after(h, b, out):  # gelu(h) + b: the bias added to the activation's result
    for r in range(h.shape[0]):
        for c in range(h.shape[1]):
            out[r, c] = _gelu_scalar(h[r, c]) + b[c]


def _returns_new(h, b, out):
    y = np.empty_like(h)
    for r in range(h.shape[0]):
        for c in range(h.shape[1]):
            y[r, c] = _gelu_scalar(h[r, c] + b[c])
    return y


def _transposed(h, b, out):
    for r in range(h.shape[0]):
        for c in range(h.shape[1]):
            out[c, r] = _gelu_scalar(h[r, c] + b[c])


def _grade_bias_gelu(fn) -> Verdict:
    rng = np.random.default_rng(17)
    for rows, cols in ((3, 5), (6, 2), (1, 7)):
        h = rng.standard_normal((rows, cols)) * 2.0
        b = rng.standard_normal(cols)
        out = np.full((rows, cols), np.nan)
        returned = fn(h.copy(), b.copy(), out)
        want = _library_bias_gelu(h, b)
        if np.isnan(out).all():
            hint = ("the kernel returned a new array and left out as it was: write each value "
                    "into out[r, c], as the generated kernels write their o arguments") \
                if returned is not None else "write gelu(h[r, c] + b[c]) into out[r, c]"
            return Verdict(False, f"out was never written (shape {rows}×{cols})", hint)
        mistakes = []
        for wrong, hint in ((_bias_by_row, "b has one value per column: b[c], the bias of "
                             "column c, added to every row"),
                            (_no_cube, "GELU's tanh form has a cube inside: "
                             "sqrt(2/pi) * (h + 0.044715 h³)"),
                            (_no_half, "GELU is half of h (1 + tanh(...)): the factor 0.5"),
                            (_bias_after, "the bias goes in before the activation: "
                             "gelu(h + b), not gelu(h) + b")):  # fmt: skip
            value = np.full((rows, cols), np.nan)
            try:
                wrong(h, b, value)
            except IndexError:
                continue
            mistakes.append((value, hint))
        verdict = diagnose(out, want, mistakes, "compare one element with the library's "
                           "F.gelu(h + b, approximate='tanh')", atol=1e-12, rtol=1e-12,
                           what=f"{rows}×{cols}: ")  # fmt: skip
        if not verdict.ok:
            return verdict
    return Verdict(True, "gelu(h + b) as F.gelu(..., approximate='tanh') gives it, on 3 shapes")


bias_gelu = Exercise(
    "17.1", "bias and GELU in one loop", _grade_bias_gelu,
    wrong=[
        Wrong("the bias indexed by row", _bias_by_row, "one value per column"),
        Wrong("the cube left out", _no_cube, "a cube inside"),
        Wrong("the factor 0.5 left out", _no_half, "the factor 0.5"),
        Wrong("the bias added after GELU", _bias_after, "not gelu(h) + b"),
        Wrong("a new array returned", _returns_new, "returned a new array"),
        Wrong("out written transposed", _transposed, "out[r, c]"),
    ],
    hints=[("IndexError", "out of bounds",
            "out has the shape of h, (rows, columns), and b one value per column: out[r, c], "
            "b[c]")],
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


def _bytes_reference(step):
    read = sum(math.prod(s) for s in step["inputs"]) * step["itemsize"]
    return read, sum(math.prod(s) for s in step["outputs"]) * step["itemsize"]


def _elements(step):
    read, written = _bytes_reference(step)
    return read // step["itemsize"], written // step["itemsize"]


def _broadcast_inputs(step):  # every input counted at the full size of the first output
    full = math.prod(step["outputs"][0])
    return (full * len(step["inputs"]) * step["itemsize"], _bytes_reference(step)[1])


def _swapped(step):
    read, written = _bytes_reference(step)
    return written, read


def _first_output_only(step):
    return _bytes_reference(step)[0], math.prod(step["outputs"][0]) * step["itemsize"]


def _grade_step_bytes(fn) -> Verdict:
    for step in STEPS:
        got = fn({k: (list(v) if isinstance(v, list) else v) for k, v in step.items()})
        if not isinstance(got, tuple | list) or len(got) != 2:
            return Verdict(False, f"{step['what']}: returned {got!r}",
                           "return two numbers: (bytes read, bytes written)")  # fmt: skip
        mistakes = [
            (_elements(step), "those are elements: a float64 is 8 bytes, a float32 4 "
             "(step['itemsize'])"),
            (_broadcast_inputs(step), "an input is read at its own size: a bias of C values "
             "broadcast over the rows is C values in memory (the kernel reads them from the "
             "cache after the first row)"),
            (_swapped(step), "the inputs are read, the outputs written: (read, written)"),
            (_first_output_only(step), "a kernel writes every output: the values read after "
             "it (saved for the backward) are written too"),
        ]  # fmt: skip
        mistakes = [(m, h) for m, h in mistakes if m != _bytes_reference(step)]
        verdict = diagnose(tuple(got), _bytes_reference(step), mistakes,
                           "each input's and each output's elements times the itemsize",
                           atol=0, rtol=0, what=f"{step['what']}: ")  # fmt: skip
        if not verdict.ok:
            return verdict
    return Verdict(True, f"the bytes read and written of {len(STEPS)} steps, ops and kernels")


step_bytes = Exercise(
    "17.2", "the bytes one step moves", _grade_step_bytes,
    wrong=[
        Wrong("elements, not bytes", _elements, "those are elements"),
        Wrong("broadcast inputs counted at full size", _broadcast_inputs, "its own size"),
        Wrong("read and written swapped", _swapped, "(read, written)"),
        Wrong("only the first output", _first_output_only, "every output"),
    ],
    hints=[("TypeError", "unsupported operand",
            "a shape is a tuple of ints: math.prod(shape) is its number of elements")],
)  # fmt: skip

EXERCISES = (bias_gelu, step_bytes)
