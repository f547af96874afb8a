"""Lesson 15's exercises: a guard (when may a compiled program be reused?) and a graph break
removed (a function that prints its loss, rewritten so that all of it compiles).

>>> [ex.number for ex in EXERCISES]
['15.1', '15.2']
"""

from __future__ import annotations

import contextlib
import io

import numpy as np

from .as_built import later
from .exercise import Exercise, Verdict, Wrong

__all__ = ["EXERCISES", "guard", "no_break", "noisy_step"]


def _tg():
    import tinygrad_edu  # noqa: PLC0415

    return tinygrad_edu


# -- 15.1 a guard -------------------------------------------------------------------------------
# What the trace was specialised on, and calls that must (or must not) reuse its program.
_TRACED = {"shape": (4, 3), "dtype": "float32", "requires_grad": True}


def _guard_cases():
    tg = _tg()
    rng = np.random.default_rng(15)
    a = rng.standard_normal((4, 3)).astype(np.float32)
    return [
        ("the same kind of tensor, other values", tg.tensor(a * 7, requires_grad=True), True),
        ("the traced tensor's values", tg.tensor(a, requires_grad=True), True),
        ("a 3×4 tensor (same number of elements)", tg.tensor(a.T.copy(), requires_grad=True),
         False),
        ("a float64 tensor", tg.tensor(a.astype(np.float64), requires_grad=True), False),
        ("a tensor that does not require grad", tg.tensor(a), False),
        ("a 5×3 tensor", tg.tensor(rng.standard_normal((5, 3)).astype(np.float32),
                                   requires_grad=True), False),
    ]  # fmt: skip


def _grade_guard(fn) -> Verdict:
    answers = []
    for what, x, want in _guard_cases():
        got = fn(dict(_TRACED), x)
        if not isinstance(got, bool | np.bool_):
            return Verdict(False, f"returned {type(got).__name__} for {what}",
                           "return True or False (a bool), not a tensor or a value")  # fmt: skip
        answers.append((what, bool(got), want))
    if all(got for _, got, _ in answers):
        return Verdict(False, "it always says reuse", "a guard must fail when what the program "
                       "was made for differs: the shape, the dtype or requires_grad")  # fmt: skip
    if not any(got for _, got, _ in answers):
        return Verdict(False, "it never says reuse", "a tensor with the traced shape, dtype "
                       "and requires_grad may reuse the program, whatever its values")  # fmt: skip
    for what, got, want in answers:
        if got != want:
            return Verdict(False, f"for {what} it said {'reuse' if got else 'trace again'}",
                           _guard_hint(what, want))  # fmt: skip
    return Verdict(True, "reuses the program exactly when shape, dtype and requires_grad match")


def _guard_hint(what: str, want: bool) -> str:
    if want:
        return ("a guard looks at what the program was specialised on (shape, dtype, "
                "requires_grad), never at the values: new values are what it is for")
    if "3×4" in what:
        return ("the program was made for 4×3 arrays: compare the shape itself, not the number "
                "of elements")  # fmt: skip
    if "float64" in what:
        return "the dtype is part of the specialisation: float32 code is not float64 code"
    if "require grad" in what:
        return ("whether the input requires grad decides whether there is a backward program: "
                "compare requires_grad too")  # fmt: skip
    return "compare the shape as a tuple: tuple(x.shape) == spec['shape']"


def _only_shape(spec, x):
    return tuple(x.shape) == spec["shape"]


def _numel(spec, x):
    return x.numel() == int(np.prod(spec["shape"])) and str(x.dtype) == spec["dtype"] and (
        x.requires_grad == spec["requires_grad"])  # fmt: skip


def _no_grad_flag(spec, x):
    return tuple(x.shape) == spec["shape"] and str(x.dtype) == spec["dtype"]


def _values(spec, x):  # "the same tensor": values within what the trace saw
    same = tuple(x.shape) == spec["shape"] and str(x.dtype) == spec["dtype"]
    return same and x.requires_grad == spec["requires_grad"] and float(x.abs().max()) < 3.0


guard = Exercise(
    "15.1", "a guard", _grade_guard,
    wrong=[
        Wrong("only the shape", _only_shape,
              "the dtype is part of the specialisation: float32 code is not float64 code"),
        Wrong("the number of elements", _numel,
              "the program was made for 4×3 arrays: compare the shape itself, not the number "
              "of elements"),
        Wrong("requires_grad ignored", _no_grad_flag,
              "whether the input requires grad decides whether there is a backward program: "
              "compare requires_grad too"),
        Wrong("looks at the values", _values,
              "a guard looks at what the program was specialised on (shape, dtype, "
              "requires_grad), never at the values: new values are what it is for"),
        Wrong("always reuses", lambda spec, x: True,
              "a guard must fail when what the program was made for differs: the shape, the "
              "dtype or requires_grad"),
    ],
    hints=[("AttributeError", "has no attribute 'shape'",
            "x is a tensor and spec a dict: x.shape, x.dtype, x.requires_grad; spec['shape'] ...")],
)  # fmt: skip


# -- 15.2 a graph break removed -------------------------------------------------------------------
def noisy_step(x, w):
    """The function the lesson starts from: it prints the loss, which breaks the graph."""
    loss = ((x @ w).tanh() ** 2).mean()
    print("loss", loss)
    return loss


def _loss_as_written(x, w):
    """The loss :func:`noisy_step` computes, without its print: the lesson gives it, so it is
    no hidden answer (the exercise is to remove the graph break, not to find the loss)."""
    return ((x @ w).tanh() ** 2).mean()


def _grade_no_break(fn) -> Verdict:
    tg = _tg()
    rng = np.random.default_rng(152)
    compiled, unwritten = tg.compile(fn, fullgraph=True), None
    for _ in range(3):
        x = tg.tensor(rng.standard_normal((5, 3)))
        w = tg.tensor(rng.standard_normal((3, 2)), requires_grad=True)
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # the learner's prints, if any
                got = compiled(x, w)
        except NotImplementedError as error:
            # a student edition before A1: the whole function was traced (a graph break stops
            # the trace before), and then building its program needs the symbolic engine;
            # the loss it returns is checked as the function computes it
            unwritten = _after_the_trace(error)
            if unwritten is None:
                raise
            with contextlib.redirect_stdout(io.StringIO()):
                got = fn(x, w)
        except tg.compiler.GraphBreak as error:
            reason = str(error).split(": ", 2)[-1]
            return Verdict(False, f"the graph still breaks: {reason}",
                           "nothing in the function may hand a tensor's value to Python "
                           "(print, .item(), .numpy()): return the loss and print it after "
                           "the call")  # fmt: skip
        out = got[0] if isinstance(got, tuple | list) else got
        if not isinstance(out, tg.Tensor):
            return Verdict(False, f"returned {type(out).__name__}",
                           "return the loss tensor itself (print it outside the function)")
        want = _loss_as_written(tg.tensor(x.numpy(force=True)), tg.tensor(w.numpy(force=True)))
        if not np.allclose(out.detach().numpy(), want.numpy(), rtol=1e-12):
            return Verdict(False, f"loss {out.detach().numpy()} instead of {want.numpy()}",
                           "keep the computation as it was: only the print goes")  # fmt: skip
        if not out.requires_grad:
            return Verdict(False, "the loss does not require grad: it was cut from its graph",
                           "do not detach the loss: return it as computed")  # fmt: skip
        if unwritten is not None:
            continue
        out.backward()
        if w.grad is None:
            return Verdict(False, "the loss has no gradient for w",
                           "do not detach the loss: return it as computed")  # fmt: skip
    if unwritten is not None:
        return Verdict(True, "traced whole with fullgraph=True (no graph break), and returns "
                       "the same loss, still requiring grad" + later(
                           unwritten, "the compiled program (its loss, its gradient for w, "
                           "one program for 3 calls)"))  # fmt: skip
    if len(compiled.programs) != 1:
        return Verdict(False, f"traced {len(compiled.programs)} times for 3 calls",
                       "the function should not depend on Python values that change")
    return Verdict(True, "compiles with fullgraph=True and returns the same loss")


def _after_the_trace(error) -> str | None:
    """The unwritten assignment whose stub ``error`` comes from, where it was raised while the
    compiler built the program of a finished trace (a student edition before A1), else None."""
    import traceback  # noqa: PLC0415

    from .recorded import stub_task  # noqa: PLC0415

    task = stub_task(error)
    frames = [f.name for f in traceback.extract_tb(error.__traceback__)]
    return task if task is not None and "build_program" in frames else None


def _still_prints(x, w):
    return noisy_step(x, w)


def _item(x, w):
    loss = ((x @ w).tanh() ** 2).mean()
    return tg_value(loss)


def tg_value(loss):
    return _tg().tensor(loss.item())


def _detached(x, w):
    return ((x @ w).tanh() ** 2).mean().detach()


def _sum_not_mean(x, w):
    return ((x @ w).tanh() ** 2).sum()


no_break = Exercise(
    "15.2", "a graph break removed", _grade_no_break,
    wrong=[
        Wrong("still prints", _still_prints,
              "printing the loss hands its value to Python, and the graph breaks there: return "
              "the loss and print it after the call"),
        Wrong("returns loss.item() as a new tensor", _item,
              ".item() hands the loss's value to Python, and the graph breaks there: return the "
              "loss tensor itself, as computed"),
        Wrong("detaches the loss", _detached, "do not detach the loss: return it as computed"),
        Wrong("changes the loss", _sum_not_mean,
              "keep the computation as it was: only the print goes"),
    ],
)  # fmt: skip

EXERCISES = (guard, no_break)
