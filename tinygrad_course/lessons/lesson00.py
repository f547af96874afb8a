"""Lesson 0's exercise: the seed example by hand.

>>> [ex.number for ex in EXERCISES]
['0.1']
"""

from __future__ import annotations

import numpy as np

from .exercise import Exercise, Verdict, Wrong, diagnose

__all__ = ["EXERCISES", "seed_by_hand"]


def _points():
    rng = np.random.default_rng(0)
    from tinygrad_edu.viz.examples import seed_inputs  # noqa: PLC0415

    return [seed_inputs(), {k: rng.standard_normal((3, 3)) for k in "ABC"}]


def _eager_seed(a, b, c):
    """E of the seed example, computed by the eager engine."""
    import tinygrad_edu as tg  # noqa: PLC0415
    from tinygrad_edu.viz.examples import seed  # noqa: PLC0415

    return seed(*(tg.tensor(v, dtype="float64") for v in (a, b, c))).numpy()


def _grade(fn) -> Verdict:
    verdict = Verdict(True, "")
    for inputs in _points():
        a, b, c = (np.asarray(inputs[k], dtype=np.float64) for k in "ABC")
        got = fn(a.copy(), b.copy(), c.copy())
        if not isinstance(got, np.ndarray):
            kind = type(got).__name__
            return Verdict(
                False,
                f"returned a {kind}",
                "compute with numpy arrays (+, *, @) and return the array",
            )
        mistakes = [
            (((a + b) * c) * (a + c), "the second product is a matrix product: use @, not * "
             "(* multiplies elementwise)"),
            (((a + b) @ c) @ (a + c), "the first product is elementwise (⊙): use *, not @"),
            ((a + c) @ ((a + b) * c), "matrix products do not commute: E = D @ (A + C), with "
             "D first"),
        ]  # fmt: skip
        verdict = diagnose(got, _eager_seed(a, b, c), mistakes,
                           "E = ((A + B) * C) @ (A + C): check each step", atol=1e-9,
                           what=f"for {a.shape[0]}x{a.shape[1]} inputs: ")  # fmt: skip
        if not verdict.ok:
            return verdict
    return Verdict(True, "matches the eager engine's E on the seed inputs and on random 3x3 "
                   "matrices")  # fmt: skip


seed_by_hand = Exercise(
    "0.1", "the seed example by hand", _grade,
    wrong=[
        Wrong("elementwise instead of the matrix product",
              lambda a, b, c: ((a + b) * c) * (a + c),
              "the second product is a matrix product: use @, not * (* multiplies elementwise)"),
        Wrong("matrix product instead of the elementwise one",
              lambda a, b, c: ((a + b) @ c) @ (a + c),
              "the first product is elementwise (⊙): use *, not @"),
        Wrong("the factors of the matrix product swapped",
              lambda a, b, c: (a + c) @ ((a + b) * c),
              "matrix products do not commute: E = D @ (A + C), with D first"),
    ],
)  # fmt: skip

EXERCISES = (seed_by_hand,)
