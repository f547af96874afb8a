"""Lesson 13's exercises: PyTorch code that runs unchanged on both libraries — a softmax in
PyTorch's spelling (``max(dim)`` returns values *and* indices) and a training step.

Each answer is a function that takes the library as an argument (``torch``), so the same code
is graded on our tensors and, where PyTorch is installed, on PyTorch's too; without PyTorch
the checks grade on our own results.

>>> [ex.number for ex in EXERCISES]
['13.1', '13.2']
"""

from __future__ import annotations

import numpy as np

from .exercise import NUMPY_ON_GRAPH, Exercise, Verdict, Wrong, describe_difference
from .lesson12 import has_torch

__all__ = ["EXERCISES", "softmax", "train_step", "libraries", "blobs", "make_mlp"]


def libraries() -> list:
    """``[tinygrad_edu]``, then ``torch`` where PyTorch is installed: the libraries graded."""
    import tinygrad_edu  # noqa: PLC0415

    libs = [tinygrad_edu]
    if has_torch():
        import torch  # noqa: PLC0415

        libs.append(torch)
    return libs


def _numpy(t) -> np.ndarray:
    """A tensor of either library (or an array) as a float64 numpy array."""
    if hasattr(t, "detach"):
        t = t.detach()
    return np.asarray(t.numpy(force=True) if hasattr(t, "numpy") else t, dtype=np.float64)


# -- 13.1 a softmax in PyTorch's spelling ------------------------------------------------------
def _reference_softmax(x, dim):
    """Exercise 13.1's answer, for the check and the teaching cells; the student edition holds
    no copy (its markers strip it)."""
    # BEGIN SOLUTION
    e = (x - x.max(dim=dim, keepdim=True).values).exp()
    return e / e.sum(dim=dim, keepdim=True)
    # END SOLUTION


_reference_softmax.__name__ = "softmax"


def _softmax_expected() -> dict:
    """``{case: (softmax values, the gradient of sum(w * softmax))}`` for the check's inputs
    (the ``w`` of :func:`_weights`): computed here, recorded in the student edition, which
    holds no copy of the computation (its markers strip it)."""
    # BEGIN SOLUTION
    out = {}
    for title, a, dim in _softmax_cases():
        e = np.exp(a - a.max(axis=dim, keepdims=True))
        s, w = e / e.sum(axis=dim, keepdims=True), _weights(a)
        out[title] = (s.tolist(), (s * (w - (s * w).sum(axis=dim, keepdims=True))).tolist())
    return out
    # END SOLUTION


def _weights(a: np.ndarray) -> np.ndarray:
    return np.linspace(-1.0, 1.0, a.size).reshape(a.shape)


def _softmax_mistake(got: np.ndarray, a: np.ndarray, dim: int) -> str:
    """What a softmax that gives ``got`` on ``a`` along ``dim`` got wrong."""
    shift = a.max(axis=dim, keepdims=True)
    unshifted = np.exp(a) / np.exp(a - shift).sum(axis=dim, keepdims=True)
    if np.allclose(got, unshifted, atol=1e-9):
        return _UNSHIFTED
    e = np.exp(a - shift)
    try:
        loose = e / np.expand_dims(e.sum(axis=dim), 0)
    except ValueError:
        loose = None
    if loose is not None and loose.shape == got.shape and np.allclose(got, loose, atol=1e-9):
        return ("the sums line up with the wrong axis: without keepdim=True the sum along dim "
                "loses that dimension, and broadcasting pairs it with another")
    sums = got.sum(axis=dim)
    if not np.allclose(sums, 1.0, atol=1e-9):
        return (f"each slice along dim must sum to 1, yours sum to {np.round(sums.ravel()[:3], 4)}"
                " ...: are you dividing by the sum along the same dim?")
    return "each slice sums to 1, but the values differ: is each value exp of its own score?"


def _softmax_cases():
    rng = np.random.default_rng(13)
    return [("a 3×3 matrix along dim=1", rng.normal(size=(3, 3)), 1),
            ("a 2×5 matrix along dim=0", rng.normal(size=(2, 5)), 0),
            ("a 2×3×4 tensor along dim=-1", rng.normal(size=(2, 3, 4)), -1),
            ("scores near 1000 (a trained network's logits can be large)",
             np.array([[1000.0, 1001.0, 999.0], [-5.0, 0.0, 5.0]]), 1)]  # fmt: skip


def _grade_softmax(fn) -> Verdict:
    from .recorded import stub_task  # noqa: PLC0415

    expected, unchecked = softmax.values(), set()
    for lib in libraries():
        who = "PyTorch" if lib.__name__ == "torch" else "our tensors"
        for title, a, dim in _softmax_cases():
            x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
            out = fn(x, dim)
            if not hasattr(out, "grad_fn"):
                return Verdict(False, f"{who}, {title}: returned a {type(out).__name__}",
                               "return a tensor of the library you were given")  # fmt: skip
            got, want = _numpy(out), np.array(expected[title][0])
            if got.shape == (2, *want.shape):  # NOTE: x - (values, indices) stacks the pair
                return Verdict(False, f"{who}, {title}: shape {got.shape}, expected "
                               f"{want.shape}", _MAX_PAIR)  # fmt: skip
            if got.shape != want.shape:
                return Verdict(False, f"{who}, {title}: shape {got.shape}, expected "
                               f"{want.shape}", "keep every dimension: keepdim=True on the "
                               "max and on the sum")  # fmt: skip
            if not np.all(np.isfinite(got)):
                return Verdict(False, f"{who}, {title}: got {got.ravel()[:3]} ...", "exp(1000) "
                               "overflows to inf, and inf/inf is nan: what you subtract must "
                               "be the largest value along dim (the values: max(dim) returns "
                               "(values, indices), and [1] or .indices are the positions of "
                               "the maxima)")  # fmt: skip
            if not np.allclose(got, want, atol=1e-9):
                return Verdict(False, f"{who}, {title}: expected {np.round(want.ravel()[:3], 4)}"
                               f" ..., got {np.round(got.ravel()[:3], 4)} ...",
                               _softmax_mistake(got, a, dim))  # fmt: skip
            if out.grad_fn is None:
                return Verdict(False, f"{who}, {title}: the result has no grad_fn",
                               "stay with the library's tensors (no .numpy(), no "
                               ".detach()), so backward() can flow through")  # fmt: skip
            try:
                (out * lib.tensor(_weights(a), dtype=lib.float64)).sum().backward()
            except NotImplementedError as error:
                if stub_task(error) is None:
                    raise
                unchecked.add(who)  # our engine is the student's unwritten A2: values only
                continue
            if not np.allclose(_numpy(x.grad), np.array(expected[title][1]), atol=1e-9):
                return Verdict(False, f"{who}, {title}: a wrong gradient", "compute with the "
                               "tensor's own ops, so the engine records each step")  # fmt: skip
    where = "our tensors and PyTorch's" if has_torch() else "our tensors (PyTorch is not " \
        "installed)"  # fmt: skip
    later = (f"; the gradients of {', '.join(sorted(unchecked))} are checked once the engine "
             "(assignment A2) is written") if unchecked else ""  # fmt: skip
    return Verdict(True, f"right values and gradients on 2-d and 3-d inputs, any dim, logits "
                         f"near 1000, for {where}{later}")  # fmt: skip


# the wrong answers below are the softmax with one mistake each: the student edition strips
# them like the answer itself, and its checks know their mistakes from what they gave when it
# was made (recorded.record_expected)
def _no_values(x, dim):
    # BEGIN SOLUTION
    e = (x - x.max(dim=dim, keepdim=True)).exp()  # a (values, indices) pair, not a tensor
    return e / e.sum(dim=dim, keepdim=True)
    # END SOLUTION


def _no_shift(x, dim):
    # BEGIN SOLUTION
    e = x.exp()
    return e / e.sum(dim=dim, keepdim=True)
    # END SOLUTION


def _max_indices(x, dim):
    # BEGIN SOLUTION
    e = (x - x.max(dim=dim, keepdim=True)[1]).exp()
    return e / e.sum(dim=dim, keepdim=True)
    # END SOLUTION


def _unshifted_numerator(x, dim):
    shifted = (x - x.max(dim=dim, keepdim=True).values).exp()
    return x.exp() / shifted.sum(dim=dim, keepdim=True)


def _no_keepdim(x, dim):
    # BEGIN SOLUTION
    e = (x - x.max(dim=dim, keepdim=True).values).exp()
    return e / e.sum(dim=dim)
    # END SOLUTION


def _numpy_exp(x, dim):
    # BEGIN SOLUTION
    e = np.exp(x - x.max(dim=dim, keepdim=True).values)
    return e / e.sum(dim=dim, keepdim=True)
    # END SOLUTION


_UNSHIFTED = ("the numerator and the denominator must be shifted alike, by the same maximum: "
              "your numerator is exp(x) unshifted")
_MAX_PAIR = (
    "max(dim) returns two tensors, as in PyTorch: (values, indices). The shift needs the "
    "values (.values, or amax, which returns them alone)"
)

softmax = Exercise(
    "13.1", "a softmax in PyTorch's spelling", _grade_softmax, expected=_softmax_expected,
    wrong=[
        Wrong("max(dim) used as a tensor", _no_values, _MAX_PAIR),
        Wrong("no shift by the max", _no_shift,
              "exp(1000) overflows to inf, and inf/inf is nan: what you subtract must be the "
              "largest value along dim (the values: max(dim) returns (values, indices), and "
              "[1] or .indices are the positions of the maxima)"),
        Wrong("the indices of the max subtracted", _max_indices,
              "exp(1000) overflows to inf, and inf/inf is nan: what you subtract must be the "
              "largest value along dim (the values: max(dim) returns (values, indices), and "
              "[1] or .indices are the positions of the maxima)"),
        Wrong("an unshifted numerator", _unshifted_numerator,
              _UNSHIFTED),
        Wrong("the sum without keepdim", _no_keepdim,
              "the sums line up with the wrong axis: without keepdim=True the sum along dim "
              "loses that dimension, and broadcasting pairs it with another"),
        Wrong("numpy's exp on a tensor", _numpy_exp, NUMPY_ON_GRAPH),
    ],
    hints=[("AttributeError", "'ValuesIndices' object", _MAX_PAIR),
           ("TypeError", "return_types.max", _MAX_PAIR),
           ("TypeError", "(values, indices) pair", _MAX_PAIR),
           ("ShapeError", "", "keep every dimension: keepdim=True on the max and on the sum"),
           ("RuntimeError", "must match the size", "keep every dimension: keepdim=True on the "
            "max and on the sum"),
           ("RuntimeError", "numpy()", "numpy functions work on arrays, not on tensors: use "
            "the tensor's own methods (x.exp(), x.sum(dim=...))")],
    fallback=_reference_softmax,
)  # fmt: skip


# -- 13.2 a training step ----------------------------------------------------------------------
def blobs(n: int = 60, seed: int = 13) -> tuple[np.ndarray, np.ndarray]:
    """Three clusters of 2-d points and their class labels 0, 1, 2 (numpy)."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 2.0], [-2.0, -1.0], [2.0, -1.0]])
    labels = np.arange(n) % 3
    points = centres[labels] + 0.8 * rng.normal(size=(n, 2))
    return points.astype(np.float32), labels.astype(np.int64)


def make_mlp(torch, hidden: int = 16, seed: int = 13):
    """An ``nn.Module`` MLP (2 → hidden → 3) of ``torch`` (either library) with weights drawn
    by numpy from ``seed``, so both libraries start from the same numbers."""
    nn, F = torch.nn, torch.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(2, hidden)
            self.fc2 = nn.Linear(hidden, 3)

        def forward(self, x):
            return self.fc2(F.relu(self.fc1(x)))

    model = MLP()
    rng = np.random.default_rng(seed)
    state = {k: torch.tensor(rng.uniform(-0.5, 0.5, size=tuple(v.shape)).astype(np.float32))
             for k, v in model.state_dict().items()}  # fmt: skip
    model.load_state_dict(state)
    return model


def _reference_step(torch, model, opt, x, y):
    """Exercise 13.2's answer, for the check and the teaching cells; the student edition holds
    no copy (its markers strip it)."""
    # BEGIN SOLUTION
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()
    # END SOLUTION


_reference_step.__name__ = "train_step"


def _train(torch, step, steps: int = 3, adam: bool = False):
    """Losses and final parameters after ``steps`` calls of ``step`` from the same start."""
    points, labels = blobs()
    model = make_mlp(torch)
    opt = (torch.optim.Adam(model.parameters(), lr=0.05) if adam else
           torch.optim.SGD(model.parameters(), lr=0.5))  # fmt: skip
    x, y = torch.tensor(points), torch.tensor(labels)
    losses = [step(torch, model, opt, x, y) for _ in range(steps)]
    return losses, [_numpy(p) for p in model.parameters()]


def _step_expected() -> dict:
    """``{"torch, Adam": (losses, parameters)}``: three reference steps in each library and
    with each optimizer (recorded in the student edition, which holds no reference step)."""
    out = {}
    for lib in libraries():
        for adam in (False, True):
            losses, params = _train(lib, _reference_step, adam=adam)
            out[f"{lib.__name__}, {'Adam' if adam else 'SGD'}"] = (
                losses, [p.tolist() for p in params])
    return out


def _grade_step(fn) -> Verdict:
    expected = train_step.values()
    for lib in libraries():
        who = "PyTorch" if lib.__name__ == "torch" else "our library"
        for adam in (False, True):
            what = f"{who}, {'Adam' if adam else 'SGD'}"
            losses, params = _train(lib, fn, adam=adam)
            want_losses, want_params = expected[f"{lib.__name__}, {'Adam' if adam else 'SGD'}"]
            want_params = [np.array(p) for p in want_params]
            if not all(isinstance(v, float) for v in losses):
                kinds = sorted({type(v).__name__ for v in losses})
                return Verdict(False, f"{what}: returned {', '.join(kinds)}", "return "
                               "loss.item(), a Python float (a list of loss tensors keeps "
                               "every step's graph alive)")  # fmt: skip
            if not np.isclose(losses[0], want_losses[0], rtol=1e-4):
                return Verdict(False, f"{what}: first loss {losses[0]:.4f}, expected "
                               f"{want_losses[0]:.4f}", "the loss differs before any step: "
                               + describe_difference(losses[0], want_losses[0], 0, 1e-4) + "; "
                               "look at what the loss is given and how it is called",
                               f"{what}: first loss", losses[0])  # fmt: skip
            start = [_numpy(p) for p in make_mlp(lib).parameters()]
            if all(np.array_equal(p, s) for p, s in zip(params, start)):
                return Verdict(False, f"{what}: the parameters never changed", "the "
                               "step must come after the backward it uses, and clearing the "
                               "gradients must not come between the two")  # fmt: skip
            if not np.allclose(losses, want_losses, rtol=1e-4):
                return Verdict(False, f"{what}: losses {np.round(losses, 4).tolist()}, expected "
                               f"{np.round(want_losses, 4).tolist()}", "gradients add up in "
                               ".grad from one backward to the next: clear them (the "
                               "optimizer's zero_grad) at the start of every step")  # fmt: skip
            if not all(np.allclose(p, q, rtol=1e-4, atol=1e-6)
                       for p, q in zip(params, want_params)):  # fmt: skip
                return Verdict(False, f"{what}: the right losses, other parameters",
                               "one opt.step() per call, after backward")  # fmt: skip
    where = "our library and PyTorch" if has_torch() else "our library (PyTorch is not " \
        "installed)"  # fmt: skip
    return Verdict(True, f"3 steps with SGD and with Adam match the reference, in {where}")


# the wrong answers below are the training step with one mistake each: the student edition strips
# them like the answer itself, and its checks know their mistakes from what they gave when it
# was made (recorded.record_expected)
def _no_zero_grad(torch, model, opt, x, y):
    # BEGIN SOLUTION
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()
    # END SOLUTION


def _softmax_first(torch, model, opt, x, y):
    F = torch.nn.functional
    opt.zero_grad()
    loss = F.cross_entropy(F.softmax(model(x), dim=1), y)
    loss.backward()
    opt.step()
    return loss.item()


def _summed_loss(torch, model, opt, x, y):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y, reduction="sum")
    loss.backward()
    opt.step()
    return loss.item()


def _zero_after_backward(torch, model, opt, x, y):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.zero_grad()
    opt.step()
    return loss.item()


def _tensor_returned(torch, model, opt, x, y):
    # BEGIN SOLUTION
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss
    # END SOLUTION


def _forward_in_no_grad(torch, model, opt, x, y):
    # BEGIN SOLUTION
    opt.zero_grad()
    with torch.no_grad():
        loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()
    # END SOLUTION


train_step = Exercise(
    "13.2", "a training step", _grade_step, expected=_step_expected,
    wrong=[
        Wrong("no opt.zero_grad()", _no_zero_grad,
              "gradients add up in .grad from one backward to the next: clear them (the "
              "optimizer's zero_grad) at the start of every step"),
        Wrong("softmax before cross_entropy", _softmax_first,
              "F.cross_entropy takes the raw scores (logits) and the class labels: it applies "
              "log-softmax itself, so do not softmax first"),
        Wrong("reduction='sum'", _summed_loss,
              "your loss is the sum over the batch: the lesson's loss (cross_entropy's default) "
              "is the mean, and a sum also makes every step batch-size times larger"),
        Wrong("zero_grad between backward and step", _zero_after_backward,
              "the step must come after the backward it uses, and clearing the gradients must "
              "not come between the two"),
        Wrong("the loss tensor returned", _tensor_returned,
              "return loss.item(), a Python float (a list of loss tensors keeps every step's "
              "graph alive)"),
        Wrong("the forward pass inside no_grad()", _forward_in_no_grad,
              "the forward pass must run with gradients on (outside no_grad()): no_grad() is "
              "for evaluation, where no backward follows"),
    ],
    hints=[("RuntimeError", "does not require grad", "the forward pass must run with "
            "gradients on (outside no_grad()): no_grad() is for evaluation, where no backward "
            "follows")],
    fallback=_reference_step,
)  # fmt: skip

EXERCISES = (softmax, train_step)
