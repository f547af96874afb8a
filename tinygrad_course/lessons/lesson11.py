"""Lesson 11's exercises: a convolution's output size, conv2d as im2col and one product,
batch norm's running statistics.

>>> [ex.number for ex in EXERCISES]
['11.1', '11.2', '11.3']
"""

from __future__ import annotations

import math

import numpy as np

from .exercise import Exercise, Verdict, Wrong, diagnose

__all__ = ["EXERCISES", "conv_output_size", "conv2d_im2col", "update_running"]


# -- 11.1 the output size ---------------------------------------------------------------------
# (n, kernel, stride, padding, dilation): chosen so that every mistake below gives another size
_CONFIGS = [
    (8, 3, 1, 1, 1), (28, 3, 1, 0, 1), (7, 3, 2, 0, 1), (10, 3, 1, 2, 2), (9, 2, 2, 1, 1),
    (32, 5, 3, 2, 2), (5, 5, 1, 0, 1),
]  # fmt: skip


def _reference_size(n, kernel, stride=1, padding=0, dilation=1) -> int:
    """Exercise 11.1's answer, for the teaching cells until the learner's passes (the student
    edition holds no copy: its markers strip it)."""
    # BEGIN SOLUTION
    return (n + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1
    # END SOLUTION


_reference_size.__name__ = "conv_output_size"


def _no_dilation(n, kernel, stride=1, padding=0, dilation=1):
    return (n + 2 * padding - kernel) // stride + 1


def _one_side(n, kernel, stride=1, padding=0, dilation=1):
    return (n + padding - dilation * (kernel - 1) - 1) // stride + 1


def _ceil(n, kernel, stride=1, padding=0, dilation=1):
    return math.ceil((n + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1


def _no_plus_one(n, kernel, stride=1, padding=0, dilation=1):
    return (n + 2 * padding - dilation * (kernel - 1) - 1) // stride


def _conv_sizes() -> list:
    """The output width of the library's own conv2d for each configuration: the truth the
    check compares with (no formula of its own)."""
    import tinygrad_edu as tg  # noqa: PLC0415
    import tinygrad_edu.nn.functional as F  # noqa: PLC0415

    return [F.conv2d(tg.zeros(1, 1, n, n), tg.zeros(1, 1, k, k), stride=s, padding=p,
                     dilation=d).shape[-1] for n, k, s, p, d in _CONFIGS]  # fmt: skip


def _grade_size(fn) -> Verdict:
    got = [fn(n, k, s, p, d) for n, k, s, p, d in _CONFIGS]
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in got):
        kinds = sorted({type(v).__name__ for v in got})
        return Verdict(False, f"returned {', '.join(kinds)}", "return a whole number: use // "
                       "(floor division), not /")  # fmt: skip
    # the anticipated mistakes are conv_output_size's recorded wrong answers: the check
    # recognises them (computed here from their code, they would ship it to students)
    what = "sizes for (n, k, stride, padding, dilation) = " + ", ".join(map(str, _CONFIGS[:3])) \
        + ", ...: "  # fmt: skip
    return diagnose(np.array(got), np.array(conv_output_size.values()), [], "change "
                    "one of stride, padding and dilation at a time: which one does your size "
                    "get wrong?", what=what)  # fmt: skip


conv_output_size = Exercise(
    "11.1", "a convolution's output size", _grade_size, expected=_conv_sizes,
    wrong=[
        Wrong("dilation ignored", _no_dilation,
              "a dilated kernel spans d·(k - 1) + 1 pixels, not k"),
        Wrong("padding on one side", _one_side,
              "padding is added on both sides of the input, not on one"),
        Wrong("rounded up", _ceil, "round down (floor, //): a window that does not fit is "
                                   "dropped"),
        Wrong("the + 1 left out", _no_plus_one, "count the first window too: + 1 at the end"),
    ],
    fallback=_reference_size,
)  # fmt: skip


# -- 11.2 conv2d as im2col and one product ----------------------------------------------------
def _conv(x, w):
    """conv2d (stride 1, no padding) by the library's own op: what the wrong answers below
    start from (the lesson ships no im2col of its own)."""
    import tinygrad_edu as tg  # noqa: PLC0415
    from tinygrad_edu.nn import functional as F  # noqa: PLC0415

    return F.conv2d(tg.tensor(x, dtype="float64"), tg.tensor(w, dtype="float64")).numpy()


def _flipped(x, w):
    return _conv(x, np.ascontiguousarray(w[:, :, ::-1, ::-1]))


def _not_transposed(x, w):
    N, O = x.shape[0], w.shape[0]
    y = _conv(x, w).transpose(1, 0, 2, 3)  # (O, N, OH, OW), as the product gives it
    return np.ascontiguousarray(y).reshape(N, O, *y.shape[2:])


def _offsets_outer(x, w):
    """Columns with the kernel offsets outer and the channels inner: rows in another order
    than ``w.reshape(O, C*kh*kw)``'s."""
    N, C, H, W = x.shape
    O, _, kh, kw = w.shape
    OH, OW = H - kh + 1, W - kw + 1
    cols = np.empty((kh, kw, C, N, OH, OW), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[i, j] = x[:, :, i : i + OH, j : j + OW].transpose(1, 0, 2, 3)
    y = w.reshape(O, C * kh * kw) @ cols.reshape(C * kh * kw, N * OH * OW)
    return y.reshape(O, N, OH, OW).transpose(1, 0, 2, 3)


def _grade_conv(fn) -> Verdict:
    import tinygrad_edu as tg  # noqa: PLC0415
    import tinygrad_edu.nn.functional as F  # noqa: PLC0415

    rng = np.random.default_rng(11)
    x, w = rng.normal(size=(2, 3, 6, 5)), rng.normal(size=(4, 3, 3, 2))  # nothing square
    got = fn(x.copy(), w.copy())
    if not isinstance(got, np.ndarray):
        return Verdict(False, f"returned a {type(got).__name__}", "return a numpy array of "
                       "shape (N, O, OH, OW)")  # fmt: skip
    want = F.conv2d(tg.tensor(x, dtype="float64"), tg.tensor(w, dtype="float64")).numpy()
    if got.shape != want.shape:
        return Verdict(False, f"expected shape {want.shape}, got {got.shape}", "the output is "
                       "(N, O, OH, OW): one value per image, output channel and position of "
                       "the window")  # fmt: skip
    # the anticipated mistakes are conv2d_im2col's recorded wrong answers (short messages: 1-D)
    return diagnose(np.ravel(got), np.ravel(want), [], "compute one output "
                    "element by hand, the sum over its window, and find where yours took "
                    "its values from",
                    what="x (2, 3, 6, 5), w (4, 3, 3, 2): ")  # fmt: skip


conv2d_im2col = Exercise(
    "11.2", "conv2d as im2col and one product", _grade_conv,
    wrong=[
        Wrong("the kernel flipped", _flipped,
              "a deep-learning conv2d is a cross-correlation: the window is not flipped, w[o, "
              "c, i, j] meets x[n, c, p + i, q + j]"),
        Wrong("the product reshaped without the transpose", _not_transposed,
              "the product's rows are the output channels, but the result puts the batch "
              "first: after the reshape, swap the first two axes"),
        Wrong("cols with the offsets outer", _offsets_outer,
              "the rows of cols must come in the order of a row of the reshaped weights: "
              "channel first, then the kernel row, then the kernel column"),
    ],
)  # fmt: skip


# -- 11.3 batch norm's running statistics -----------------------------------------------------
def _reference_running(running_mean, running_var, x, momentum=0.1):
    """Exercise 11.3's answer (its check compares with the library's BatchNorm2d; the student
    edition holds no copy)."""
    # BEGIN SOLUTION
    axes = (0, 2, 3)
    n = x.size // x.shape[1]
    mean, var = x.mean(axis=axes), x.var(axis=axes) * n / (n - 1)
    return ((1 - momentum) * running_mean + momentum * mean,
            (1 - momentum) * running_var + momentum * var)  # fmt: skip
    # END SOLUTION


_reference_running.__name__ = "update_running"


def _biased(running_mean, running_var, x, momentum=0.1):
    axes = (0, 2, 3)
    return ((1 - momentum) * running_mean + momentum * x.mean(axis=axes),
            (1 - momentum) * running_var + momentum * x.var(axis=axes))  # fmt: skip


def _swapped(running_mean, running_var, x, momentum=0.1):
    axes = (0, 2, 3)
    return (momentum * running_mean + (1 - momentum) * x.mean(axis=axes),
            momentum * running_var + (1 - momentum) * x.var(axis=axes, ddof=1))  # fmt: skip


def _bessel_batch_only(running_mean, running_var, x, momentum=0.1):
    axes, n = (0, 2, 3), x.shape[0]
    return ((1 - momentum) * running_mean + momentum * x.mean(axis=axes),
            (1 - momentum) * running_var + momentum * x.var(axis=axes) * n / (n - 1))  # fmt: skip


def _per_pixel(running_mean, running_var, x, momentum=0.1):
    return ((1 - momentum) * running_mean + momentum * x.mean(axis=0),
            (1 - momentum) * running_var + momentum * x.var(axis=0, ddof=1))  # fmt: skip


def _grade_running(fn) -> Verdict:
    import tinygrad_edu as tg  # noqa: PLC0415
    from tinygrad_edu import nn  # noqa: PLC0415

    rng = np.random.default_rng(5)
    x = rng.normal(loc=3.0, scale=2.0, size=(4, 3, 5, 5))
    mean0, var0 = rng.normal(size=3), rng.uniform(0.5, 2.0, size=3)
    got = fn(mean0.copy(), var0.copy(), x.copy(), 0.1)
    if not (isinstance(got, (tuple, list)) and len(got) == 2):
        return Verdict(False, f"returned {type(got).__name__}", "return two arrays: the new "
                       "running mean and the new running variance")  # fmt: skip
    bn = nn.BatchNorm2d(3, momentum=0.1, dtype="float64")
    bn.running_mean._data[...], bn.running_var._data[...] = mean0, var0
    bn.train()
    bn(tg.tensor(x, dtype="float64"))
    want = np.concatenate([bn.running_mean.numpy(), bn.running_var.numpy()])
    flat = [np.ravel(np.asarray(v, dtype=np.float64)) for v in got]
    if any(v.shape != (3,) for v in flat):
        return Verdict(False, f"got shapes {[np.shape(v) for v in got]}, expected (3,) each",
                       "one mean and one variance per channel: average over N, H and W "
                       "(axis=(0, 2, 3))")  # fmt: skip
    # the anticipated mistakes are update_running's recorded wrong answers
    return diagnose(np.concatenate(flat), want, [], "follow one channel "
                    "through one update by hand and compare each number with yours", atol=1e-9,
                    what="running mean and variance of 3 channels: ")  # fmt: skip


update_running = Exercise(
    "11.3", "batch norm's running statistics", _grade_running,
    wrong=[
        Wrong("the biased variance", _biased,
              "the running variance uses the unbiased variance (Bessel's correction), not "
              "the biased one the batch is normalised with"),
        Wrong("Bessel's correction with the batch size", _bessel_batch_only,
              "Bessel's correction counts every value averaged per channel (N·H·W of them), "
              "not only the N images of the batch"),
        Wrong("momentum the wrong way round", _swapped,
              "momentum is the weight of the *new* batch: (1 - m)·running + m·batch, with m = "
              "0.1"),
        Wrong("statistics per pixel", _per_pixel,
              "one mean and one variance per channel: average over N, H and W (axis=(0, 2, "
              "3)), so each has the running statistics' shape (C,)"),
    ],
    hints=[("TypeError", "unexpected keyword", "keep the signature update_running("
            "running_mean, running_var, x, momentum=0.1)"),
           ("ValueError", "could not be broadcast", "one mean and one variance per channel: "
            "average over N, H and W (axis=(0, 2, 3)), so each has the running statistics' "
            "shape (C,)")],
)  # fmt: skip

EXERCISES = (conv_output_size, conv2d_im2col, update_running)
