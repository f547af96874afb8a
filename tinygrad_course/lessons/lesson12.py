"""Lesson 12's exercises: which parameters a loss reaches (a walk over ``grad_fn`` graphs,
ours and PyTorch's), and sharing a buffer with DLPack.

The checks grade on our own graphs and numpy arrays, and, where PyTorch is installed, on
PyTorch's too; the lesson runs without PyTorch (its PyTorch cells say how to install it).

>>> [ex.number for ex in EXERCISES]
['12.1', '12.2']
"""

from __future__ import annotations

import importlib.util

import numpy as np

from .exercise import DEEP_RECURSION, Exercise, Verdict, Wrong

__all__ = ["EXERCISES", "parameters_reached", "as_ours", "has_torch"]


def has_torch() -> bool:
    """Whether PyTorch is installed (without importing it)."""
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):  # an import hook that hides it
        return False


# -- 12.1 which parameters does the loss reach? -----------------------------------------------
def _reference_reached(loss) -> list:
    """Exercise 12.1's answer, for the check and the teaching cells; the student edition holds
    no copy (its markers strip it)."""
    # BEGIN SOLUTION
    return [node.variable for node in _reference_accumulators(loss)]
    # END SOLUTION


def _reference_accumulators(loss, skip_none: bool = True) -> list:
    """The ``AccumulateGrad`` nodes a backward from ``loss`` reaches, each once (the walk of
    Exercise 12.1's answer; the student edition holds no copy). ``skip_none=False``: the
    mistake of following the ``None`` entries too."""
    # BEGIN SOLUTION
    found, seen, stack = [], set(), [loss.grad_fn] if loss.grad_fn is not None else []
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if hasattr(node, "variable"):
            found.append(node)
        stack.extend(n for n, _ in node.next_functions
                     if (n is not None or not skip_none) and n not in seen)  # fmt: skip
    return found
    # END SOLUTION


_reference_reached.__name__ = "parameters_reached"


def _recursive(loss) -> list:
    found, seen = [], set()

    def visit(node):
        if node is None or node in seen:
            return
        seen.add(node)
        if hasattr(node, "variable"):
            found.append(node.variable)
        for n, _ in node.next_functions:
            visit(n)

    visit(loss.grad_fn)
    return found


def _no_none_check(loss) -> list:
    return [n.variable for n in _reference_accumulators(loss, skip_none=False)]


def _no_seen(loss) -> list:
    # the answer with one mistake: stripped from the student edition like the answer
    # BEGIN SOLUTION
    found, stack = [], [loss.grad_fn]
    while stack:
        node = stack.pop()
        if hasattr(node, "variable"):
            found.append(node.variable)
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return found
    # END SOLUTION


def _nodes_not_tensors(loss) -> list:
    return _reference_accumulators(loss)


def _our_graphs():
    """(title, loss, leaves it reaches, leaves it does not): ours, always available."""
    import tinygrad_edu as tg  # noqa: PLC0415

    rng = np.random.default_rng(12)
    w1 = tg.tensor(rng.normal(size=(4, 3)), requires_grad=True)
    w2 = tg.tensor(rng.normal(size=(3, 2)), requires_grad=True)
    frozen = tg.tensor(rng.normal(size=(3,)), requires_grad=False)
    detached = tg.tensor(rng.normal(size=(4, 3)), requires_grad=True)
    x = tg.tensor(rng.normal(size=(5, 4)))
    h = (x @ w1 + frozen).tanh() + x @ detached.detach()
    loss = ((h @ w2) * (h @ w2)).sum() + (w1 * w1).sum()  # w1 twice, a diamond through h
    deep = tg.tensor([0.5], requires_grad=True)
    y = deep
    for _ in range(3000):
        y = y * 1.0001
    return [("an MLP with a frozen and a detached weight", loss, [w1, w2], [frozen, detached]),
            ("a chain 3000 nodes deep", y.sum(), [deep], [])]  # fmt: skip


def _torch_graphs():
    """The same situation in PyTorch: a model whose first layer is detached from the loss."""
    import torch  # noqa: PLC0415

    torch.manual_seed(12)
    first, second = torch.nn.Linear(4, 3), torch.nn.Linear(3, 2)
    x = torch.randn(5, 4)
    h = torch.relu(first(x)).detach()  # a mistake a learner wants to find: no gradient to `first`
    loss = (second(h) ** 2).sum() + (second.weight ** 2).sum()
    return [("a PyTorch model with a detached first layer", loss,
             [second.weight, second.bias], [first.weight, first.bias])]  # fmt: skip


def _grade_reached(fn) -> Verdict:
    cases = _our_graphs() + (_torch_graphs() if has_torch() else [])
    for title, loss, reached, missed in cases:
        got = fn(loss)
        if not isinstance(got, (list, tuple)):
            return Verdict(False, f"{title}: returned a {type(got).__name__}",
                           "return a list of the leaf tensors")  # fmt: skip
        if any(hasattr(t, "next_functions") for t in got):
            return Verdict(False, f"{title}: returned graph nodes", "return the leaves "
                           "themselves: an AccumulateGrad node's .variable")  # fmt: skip
        ids = [id(t) for t in got]
        if len(set(ids)) != len(ids):
            return Verdict(False, f"{title}: {len(ids)} leaves listed, {len(set(ids))} "
                           "different", "each node once: keep a set of the nodes seen and "
                           "skip them (a weight used twice is reached along two "
                           "paths)")  # fmt: skip
        if any(id(t) in ids for t in missed):
            return Verdict(False, f"{title}: a leaf that gets no gradient is listed",
                           "list only the leaves behind AccumulateGrad nodes of this graph")
        if sorted(ids) != sorted(id(t) for t in reached):
            missed = len({id(t) for t in reached} - set(ids))
            return Verdict(False, f"{title}: found {len(ids)} of the {len(reached)} leaves",
                           f"your walk missed {missed} of the leaves: print the nodes it "
                           "visits and find the branch it never went down" if missed else
                           "your list holds tensors that are not leaves behind this graph's "
                           "AccumulateGrad nodes")  # fmt: skip
    where = "our graphs and a PyTorch model" if has_torch() else "our graphs (PyTorch is not " \
        "installed)"  # fmt: skip
    return Verdict(True, f"the right leaves, each once, in {where}; a 3000-deep chain too")


parameters_reached = Exercise(
    "12.1", "which parameters does the loss reach?", _grade_reached,
    wrong=[
        Wrong("a recursive walk", _recursive, DEEP_RECURSION),
        Wrong("None entries followed", _no_none_check,
              "an input that needs no gradient has the entry (None, 0) in next_functions: skip "
              "None"),
        Wrong("nodes visited again", _no_seen,
              "each node once: keep a set of the nodes seen and skip them (a weight used twice "
              "is reached along two paths)"),
        Wrong("the AccumulateGrad nodes instead of the leaves", _nodes_not_tensors,
              "return the leaves themselves: an AccumulateGrad node's .variable"),
    ],
    hints=[("AttributeError", "'NoneType' object has no attribute", "an input that needs no "
            "gradient has the entry (None, 0) in next_functions: skip None")],
    fallback=_reference_reached,
)  # fmt: skip


# -- 12.2 one buffer, two libraries -----------------------------------------------------------
def _reference_as_ours(x):
    """Exercise 12.2's answer, for the check and the teaching cells; the student edition holds
    no copy (its markers strip it)."""
    # BEGIN SOLUTION
    import tinygrad_edu as tg  # noqa: PLC0415

    if hasattr(x, "detach"):  # PyTorch will not export a tensor that requires grad
        x = x.detach()
    return tg.from_dlpack(x).requires_grad_()
    # END SOLUTION


_reference_as_ours.__name__ = "as_ours"


def _grade_as_ours(fn) -> Verdict:
    import tinygrad_edu as tg  # noqa: PLC0415

    sources = [("a numpy array", np.arange(6.0).reshape(2, 3))]
    if has_torch():
        import torch  # noqa: PLC0415

        sources.append(("a PyTorch tensor that requires grad",
                        torch.arange(6.0).reshape(2, 3).requires_grad_()))  # fmt: skip
    for what, x in sources:
        t = fn(x)
        if not isinstance(t, tg.Tensor):
            return Verdict(False, f"{what}: returned a {type(t).__name__}", "return one of our "
                           "tensors: tg.from_dlpack(x)")  # fmt: skip
        if tuple(t.shape) != (2, 3):
            return Verdict(False, f"{what}: shape {tuple(t.shape)}", "keep the shape: "
                           "tg.from_dlpack(x)")  # fmt: skip
        if hasattr(x, "detach"):
            import torch  # noqa: PLC0415

            with torch.no_grad():
                x[0, 0] = 100.0
        else:
            x[0, 0] = 100.0
        if float(t.detach().numpy()[0, 0]) != 100.0:
            return Verdict(False, f"{what}: a write into the source did not show in ours",
                           "share the memory, do not copy it: a write into the source must "
                           "show in ours")  # fmt: skip
        if not (t.requires_grad and t.is_leaf):
            return Verdict(False, f"{what}: ours does not require grad", "our engine should "
                           "track it: call .requires_grad_() on our tensor")  # fmt: skip
    where = ", ".join(w for w, _ in sources)
    return Verdict(True, f"shares memory and requires grad, for {where}")


def _copied(x):
    import tinygrad_edu as tg  # noqa: PLC0415

    return tg.from_dlpack(x.detach() if hasattr(x, "detach") else x, copy=True).requires_grad_()


def _untracked(x):
    import tinygrad_edu as tg  # noqa: PLC0415

    return tg.from_dlpack(x.detach() if hasattr(x, "detach") else x)


def _via_numpy(x):
    import tinygrad_edu as tg  # noqa: PLC0415

    return tg.tensor(np.array(x.detach() if hasattr(x, "detach") else x), requires_grad=True)


def _not_detached(x):
    import tinygrad_edu as tg  # noqa: PLC0415

    return tg.from_dlpack(x).requires_grad_()


_NOT_DETACHED = ("PyTorch will not export a tensor that requires grad: pass x.detach() (the same "
                 "memory, outside PyTorch's graph), then call .requires_grad_() on ours")
# copy=True and np.array(...) do the same thing (a copy): the check cannot tell them apart
_COPIED = ("ours is a copy (copy=True and np.array(...) both copy): share the memory instead, "
           "so that a write into the source shows in ours")
_WRONG_AS_OURS = [
    Wrong("copy=True", _copied, _COPIED),
    Wrong("no requires_grad_()", _untracked, "our engine should track it: call "
          ".requires_grad_() on our tensor"),
    Wrong("a copy through np.array", _via_numpy, _COPIED),
]
if has_torch():  # only PyTorch refuses to export a tensor that requires grad
    _WRONG_AS_OURS.append(Wrong("a PyTorch tensor not detached", _not_detached, _NOT_DETACHED))

as_ours = Exercise(
    "12.2", "one buffer, two libraries", _grade_as_ours,
    wrong=_WRONG_AS_OURS,
    hints=[("RuntimeError", "refuses to share", _NOT_DETACHED),
           ("AttributeError", "'numpy.ndarray' object has no attribute 'detach'", "numpy "
            "arrays have no .detach(): detach only what has one (hasattr(x, 'detach'))")],
    fallback=_reference_as_ours,
)  # fmt: skip

EXERCISES = (parameters_reached, as_ours)
