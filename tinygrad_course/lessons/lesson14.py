"""Lesson 14's exercises: the causal mask of self-attention, and the gradient of the attention
softmax.

The checks compare with properties of the right answer and with central differences (and with
PyTorch's autograd where it is installed), never with a callable solution.

>>> [ex.number for ex in EXERCISES]
['14.1', '14.2']
"""

from __future__ import annotations

import numpy as np

from .exercise import Exercise, Verdict, Wrong

__all__ = ["EXERCISES", "masked_scores", "softmax_backward", "attention_map"]


def _tg():
    import tinygrad_edu  # noqa: PLC0415

    return tinygrad_edu


# -- 14.1 the causal mask --------------------------------------------------------------------------
def _grade_mask(fn) -> Verdict:
    tg = _tg()
    rng = np.random.default_rng(141)
    for T in (4, 7, 1):  # T=1 last: with one position only the diagonal tells
        scores = rng.standard_normal((2, T, T))
        # an allowed score of exactly 0 (on and below the diagonal): a mask made from the
        # scores themselves (scores.tril() == 0) would hide it
        scores[0][np.tril(np.ones((T, T), bool))] *= rng.random(T * (T + 1) // 2) > 0.5
        scores[0, T - 1, 0] = 0.0
        got = fn(tg.tensor(scores), T)
        if not isinstance(got, tg.Tensor):
            return Verdict(False, f"returned {type(got).__name__}",
                           "return the scores tensor with the masked entries set to -inf")
        if tuple(got.shape) != (2, T, T):
            return Verdict(False, f"shape {tuple(got.shape)} for scores of shape {(2, T, T)}",
                           "keep the scores' shape: mask with masked_fill, do not reduce")
        a = got.detach().numpy()
        future = np.triu(np.ones((T, T), bool), 1)
        past = ~future
        if np.isneginf(a[:, past]).any():
            hidden = np.isneginf(a) & past
            if (scores[hidden] == 0).all() and not np.isneginf(a[:, past][
                    scores[:, past] != 0]).any():  # fmt: skip
                return Verdict(False, f"T={T}: allowed scores equal to 0 are -inf",
                               "the mask was made from the scores: tril() of the scores is 0 "
                               "wherever an allowed score is 0 too; make it from the positions "
                               "alone, a T x T matrix of ones")  # fmt: skip
            below = np.isneginf(a[:, np.tril(np.ones((T, T), bool), -1)]).any()
            where = "below the diagonal" if below else "on the diagonal"
            return Verdict(False, f"T={T}: -inf {where}, where the query may look",
                           _mask_hint(where))  # fmt: skip
        if not np.isneginf(a[:, future]).all():
            changed = a[:, future] != scores[:, future]
            if T > 1 and changed.all() and (a[:, future] < -1e3).all():
                return Verdict(False, f"T={T}: the future positions hold {a[:, future].max():.3g}, "
                               "not -inf", "-1e9 is a finite score, not -inf: it stays a score "
                               "that a larger one can outweigh; softmax turns -inf into exactly "
                               "0 at any scale: fill with float('-inf')")  # fmt: skip
            if T > 1 and changed.all():
                return Verdict(False, f"T={T}: the future positions hold "
                               f"{np.unique(a[:, future])[:3]}, not -inf", "softmax gives a "
                               "weight of exactly 0 only to -inf (exp(-inf) = 0): fill the "
                               "future positions with float('-inf')")  # fmt: skip
            if T > 1 and not changed.any():
                return Verdict(False, f"T={T}: nothing masked", "fill the future positions "
                               "with float('-inf'): masked_fill(mask, float('-inf'))")  # fmt: skip
            return Verdict(False, f"T={T}: a future position (key after the query) is not -inf",
                           "query i may look at keys 0..i only: mask every key j > i")
        if not np.array_equal(a[:, past], scores[:, past]):
            return Verdict(False, f"T={T}: the allowed scores changed",
                           "leave the scores a query may look at as they are")
    return Verdict(True, "every future key is -inf, every allowed score untouched")


def _mask_hint(where: str) -> str:
    if where == "on the diagonal":
        return ("a token may look at itself: keep the diagonal (tril keeps it, "
                "tril(diagonal=-1) does not)")  # fmt: skip
    return ("the mask is upside down: tril(ones) is 1 where a query MAY look; fill where it "
            "is 0 (tril == 0), not where it is 1")  # fmt: skip


def _triu_mask(scores, T):
    tg = _tg()
    return scores.masked_fill(tg.tril(tg.ones(T, T)) == 1, float("-inf"))


def _strict_past(scores, T):
    tg = _tg()
    return scores.masked_fill(tg.tril(tg.ones(T, T), diagonal=-1) == 0, float("-inf"))


def _zero_not_inf(scores, T):
    tg = _tg()
    return scores.masked_fill(tg.tril(tg.ones(T, T)) == 0, 0.0)


def _only_last_row(scores, T):
    tg = _tg()
    mask = tg.zeros(T, T, dtype=tg.bool)
    mask[0, 1:] = True
    return scores.masked_fill(mask, float("-inf"))


def _mask_from_scores(scores, T):
    return scores.masked_fill(scores.tril() == 0, float("-inf"))


def _large_negative(scores, T):
    tg = _tg()
    return scores.masked_fill(tg.tril(tg.ones(T, T)) == 0, -1e9)


def _reference_mask(scores, T):
    """Exercise 14.1's answer, for the check and the teaching cells; the student edition holds
    no copy (its markers strip it)."""
    # BEGIN SOLUTION
    tg = _tg()
    return scores.masked_fill(tg.tril(tg.ones(T, T)) == 0, float("-inf"))
    # END SOLUTION


_reference_mask.__name__ = "masked_scores"

masked_scores = Exercise(
    "14.1", "the causal mask", _grade_mask,
    fallback=_reference_mask,
    wrong=[
        Wrong("the mask upside down (the past masked)", _triu_mask,
              "the mask is upside down: tril(ones) is 1 where a query MAY look; fill where it "
              "is 0 (tril == 0), not where it is 1"),
        Wrong("the diagonal masked too", _strict_past,
              "a token may look at itself: keep the diagonal (tril keeps it, tril(diagonal=-1) "
              "does not)"),
        Wrong("zeros instead of -inf", _zero_not_inf,
              "softmax gives a weight of exactly 0 only to -inf (exp(-inf) = 0): fill the "
              "future positions with float('-inf')"),
        Wrong("only the first query masked", _only_last_row,
              "query i may look at keys 0..i only: mask every key j > i"),
        Wrong("the mask made from the scores (scores.tril() == 0)", _mask_from_scores,

              "the mask was made from the scores: tril() of the scores is 0 wherever an "
              "allowed score is 0 too; make it from the positions alone, a T x T matrix of ones"),
        Wrong("-1e9 instead of -inf", _large_negative,
              "-1e9 is a finite score, not -inf: it stays a score that a larger one can "
              "outweigh; softmax turns -inf into exactly 0 at any scale: fill with "
              "float('-inf')"),
    ],
    hints=[("AttributeError", "masked_fill",
            "masked_fill is a method of the scores tensor: scores.masked_fill(mask, value)")],
)  # fmt: skip


# -- 14.2 the attention softmax's gradient ---------------------------------------------------------
def _softmax(a):
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _numeric(scores, g, eps=1e-6):
    """d(sum(g * softmax(scores)))/d scores by central differences (float64)."""
    grad = np.zeros_like(scores)
    for i in np.ndindex(scores.shape):
        d = np.zeros_like(scores)
        d[i] = eps
        grad[i] = ((g * _softmax(scores + d)).sum() - (g * _softmax(scores - d)).sum()) / (2 * eps)
    return grad


def _grade_softmax_backward(fn) -> Verdict:
    tg = _tg()
    rng = np.random.default_rng(142)
    for shape in ((1, 3), (2, 4), (2, 3, 5)):
        scores, g = rng.standard_normal(shape), rng.standard_normal(shape)
        s = _softmax(scores)
        got = fn(tg.tensor(s), tg.tensor(g))
        if not isinstance(got, tg.Tensor):
            return Verdict(False, f"returned {type(got).__name__}",
                           "return a tensor: the gradient with respect to the scores")
        if tuple(got.shape) != shape:
            return Verdict(False, f"shape {tuple(got.shape)} for scores of shape {shape}",
                           "the gradient has the scores' shape: keep the summed axis with "
                           "keepdim=True")  # fmt: skip
        want = _numeric(scores, g)
        a = got.detach().numpy()
        if np.allclose(a, want, rtol=1e-6, atol=1e-8):
            continue
        return Verdict(False, f"shape {shape}: off by up to {np.abs(a - want).max():.3g}",
                       _softmax_hint(a, s, g))  # fmt: skip
    return Verdict(True, "the softmax's vector-Jacobian product along each row, as central "
                   "differences say")


def _softmax_hint(a, s, g) -> str:
    if np.allclose(a, s * (1 - s) * g):
        return ("that is only the diagonal of the Jacobian: each output s_j depends on every "
                "score, so subtract the row's sum(g * s) before multiplying by s")  # fmt: skip
    if np.allclose(a, g - s * (g * s).sum(-1, keepdims=True)) or np.allclose(
            a, g - (g * s).sum(-1, keepdims=True)):  # fmt: skip
        return "multiply by s: ds_j/dz_k = s_j (delta_jk - s_k)"
    if np.allclose(a, s * (g - g.sum(-1, keepdims=True))):
        return "the row's sum is of g * s (weighted by the softmax), not of g alone"
    return ("ds_j/dz_k = s_j (delta_jk - s_k); sum over j: grad_k = s_k (g_k - sum_j g_j s_j), "
            "the sum along the last axis with keepdim=True")  # fmt: skip


def _diagonal_only(s, g):
    return s * (1 - s) * g


def _no_s_factor(s, g):
    return g - (g * s).sum(dim=-1, keepdim=True)


def _sum_of_g(s, g):
    return s * (g - g.sum(dim=-1, keepdim=True))


def _no_keepdim(s, g):
    return s * (g - (g * s).sum(dim=-1))


softmax_backward = Exercise(
    "14.2", "the attention softmax's gradient", _grade_softmax_backward,
    wrong=[
        Wrong("the Jacobian's diagonal only", _diagonal_only,
              "that is only the diagonal of the Jacobian: each output s_j depends on every "
              "score, so subtract the row's sum(g * s) before multiplying by s"),
        Wrong("the factor s forgotten", _no_s_factor,
              "multiply by s: ds_j/dz_k = s_j (delta_jk - s_k)"),
        Wrong("the sum of g, not of g * s", _sum_of_g,
              "the row's sum is of g * s (weighted by the softmax), not of g alone"),
        Wrong("the sum without keepdim", _no_keepdim,
              "the row sum needs keepdim=True to broadcast back over the row"),
    ],
    hints=[("ShapeError", "broadcast", "the row sum needs keepdim=True to broadcast back "
            "over the row"),
           ("RuntimeError", "broadcast", "the row sum needs keepdim=True to broadcast back "
            "over the row")],
)  # fmt: skip


def attention_map(weights) -> np.ndarray:
    """The attention weights of one head as a numpy array for a picture (rows: queries)."""
    w = weights.detach() if hasattr(weights, "detach") else weights
    return np.asarray(w.numpy(force=True) if hasattr(w, "numpy") else w)


EXERCISES = (masked_scores, softmax_backward)
