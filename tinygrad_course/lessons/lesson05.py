"""Lesson 5's exercises: a gradient-clipping hook, the additions in the input buffers.

>>> [ex.number for ex in EXERCISES]
['5.1', '5.2']
"""

from __future__ import annotations

import numpy as np

from .as_built import later
from .exercise import Exercise, Verdict, Wrong, diagnose
from .lesson03 import _engine_count, _graphs
from .recorded import stub_task

__all__ = ["EXERCISES", "clip_hook", "buffer_additions", "engine_additions"]


# -- 5.1 clip a gradient with a hook ----------------------------------------------------------
def _grade_hook(make_hook) -> Verdict:
    import tinygrad_edu as tg  # noqa: PLC0415

    limit = 5.0
    hook = make_hook(limit)
    if not callable(hook):
        return Verdict(
            False,
            f"clip_hook returned a {type(hook).__name__}",
            "return the hook: a function of one argument, the gradient",
        )
    probe = hook(tg.tensor([-7.0, 0.5, 9.0]))
    if probe is None:
        return Verdict(False, "the hook returned None", "return the clipped gradient: a hook "
                       "that returns None leaves the gradient as it was")  # fmt: skip
    if not isinstance(probe, tg.Tensor):
        kind = "numpy array" if isinstance(probe, np.ndarray) else type(probe).__name__
        return Verdict(False, f"the hook returned a {kind}",
                       "a hook must return a tensor (or None): wrap the clipped array, "
                       "tg.tensor(np.clip(...))")  # fmt: skip
    xs = np.array([0.5, -1.0, 2.0, -3.0])
    grad = 3 * xs**2 - 6
    x = tg.tensor(xs, requires_grad=True)
    try:
        x.register_hook(hook)
        (x * x * x - 6 * x).sum().backward()
        got, unwritten = x.grad, None
    except NotImplementedError as error:  # a student edition before A2: the hook on its own
        unwritten = stub_task(error)
        if unwritten is None or not unwritten.startswith("A2."):
            raise
        got = hook(tg.tensor(grad))  # the gradient the engine hands it
    mistakes = [
        (np.clip(grad, 0, limit), "clip to [-limit, limit], both sides"),
        (grad, "the hook's result must be the clipped gradient"),
    ]
    verdict = diagnose(
        got,
        np.clip(grad, -limit, limit),
        mistakes,
        "clip the gradient elementwise to [-limit, limit] and return it",
        what="x.grad for sum(x³ - 6x) with limit 5: ",
    )
    if verdict.ok and unwritten is not None:
        return Verdict(True, verdict.message + ", your hook called on the gradient of x" + later(
            unwritten, "the hook registered on x in a backward pass",
            "assignment A2 (register_hook and the engine) is written"))
    return verdict


def _numpy_hook(limit):
    return lambda g: np.clip(g.numpy(), -limit, limit)


def _silent_hook(limit):
    def hook(g):
        np.clip(g.numpy(), -limit, limit)  # computed, then dropped

    return hook


def _one_sided_hook(limit):
    import tinygrad_edu as tg  # noqa: PLC0415

    return lambda g: tg.tensor(np.clip(g.numpy(), 0, limit))


clip_hook = Exercise(
    "5.1", "clip a gradient with a hook", _grade_hook,
    wrong=[
        Wrong("the hook returns a numpy array", _numpy_hook,
              "a hook must return a tensor (or None): wrap the clipped array, "
              "tg.tensor(np.clip(...))"),
        Wrong("the hook returns nothing", _silent_hook,
              "return the clipped gradient: a hook that returns None leaves the gradient as it "
              "was"),
        Wrong("clipped to [0, limit]", _one_sided_hook, "clip to [-limit, limit], both sides"),
    ],
)  # fmt: skip


# -- 5.2 additions in the input buffers -------------------------------------------------------
def engine_additions(loss) -> int:
    """How many times the engine adds an arriving gradient to one already in a buffer."""
    from tinygrad_edu.eager import Observer, observe  # noqa: PLC0415

    class Count(Observer):
        def begin(self, task):
            self.sums = 0

        def gradient_arrived(self, task, node, input_nr, grad, summed):
            self.sums += bool(summed)

    with observe(Count()) as seen:
        loss.backward(retain_graph=True)
    return seen.sums


def _additions_expected() -> list:
    """The engine's additions for each graph (recorded in a student edition: on day one its
    engine is the student's unwritten A2.1)."""
    return [engine_additions(loss) for _, loss in _graphs()]


def _grade_additions(fn) -> Verdict:
    for (title, loss), want in zip(_graphs(), buffer_additions.values(), strict=True):
        root = loss.grad_fn
        got = fn(root)
        if not isinstance(got, (int, np.integer)) or isinstance(got, bool):
            return Verdict(False, f"{title}: returned {got!r}", "return a whole number (an int)")
        # the anticipated mistakes are the exercise's recorded wrong answers
        verdict = diagnose(int(got), want, [], "count, for the seed example by hand, the "
                           "gradients each node receives and how many of them are added",
                           what=f"{title}: ")  # fmt: skip
        if not verdict.ok:
            return verdict
    return Verdict(True, "the engine's additions on three graphs (one 1500 nodes deep)")


buffer_additions = Exercise(
    "5.2", "the additions in the input buffers", _grade_additions, expected=_additions_expected,
    wrong=[
        Wrong("every arrival counted", lambda root: sum(_engine_count(root).values()),
              "the first gradient to arrive at a node is stored; only the later ones are added "
              "to it"),
        Wrong("one per node with several arrivals",
              lambda root: sum(c > 1 for c in _engine_count(root).values()),
              "a node that receives k gradients adds k - 1 times, not once"),
    ],
)  # fmt: skip

EXERCISES = (clip_hook, buffer_additions)
