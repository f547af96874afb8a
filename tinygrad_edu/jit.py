"""``torch.jit``, as pass-throughs: ``script``, ``trace``, ``ignore`` and ``unused`` return
the function or module they are given, so code written for TorchScript runs unchanged (and
eagerly). Saving a TorchScript program has no equivalent here: ``save`` and ``load`` say what
to use instead (``tg.save(model.state_dict(), path)``).

To compile eager code into a graph, use :func:`tinygrad_edu.compile` (``tg.compile``).

>>> import tinygrad_edu as tg
>>> @tg.jit.script
... def double(x):
...     return 2 * x
>>> double(tg.tensor([1.0, 2.0]))
tensor([2., 4.])
"""

from __future__ import annotations

__all__ = ["script", "trace", "ignore", "unused", "save", "load", "is_scripting",
           "is_tracing"]  # fmt: skip


def script(obj=None, *args, **kwargs):
    """``torch.jit.script(fn_or_module)``: returns ``obj`` itself (it runs eagerly)."""
    return obj


def trace(func, example_inputs=None, *args, **kwargs):
    """``torch.jit.trace(fn_or_module, example_inputs)``: runs ``func`` once on the examples
    (a tensor or a tuple of them, as PyTorch takes them), so that an error shows here as it
    would in PyTorch's trace, then returns ``func`` itself."""
    if not callable(func):
        raise TypeError(f"trace: expected a function or a module, got {type(func).__name__}")
    if example_inputs is None:
        example_inputs = kwargs.pop("example_kwarg_inputs", None) or ()
        if isinstance(example_inputs, dict):
            func(**example_inputs)
            return func
    inputs = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    func(*inputs)
    return func


def ignore(drop=False, **kwargs):
    """``@torch.jit.ignore`` (with or without arguments): the function itself."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """``@torch.jit.unused``: the function itself."""
    return fn


def is_scripting() -> bool:
    """Always False: nothing here is scripted."""
    return False


def is_tracing() -> bool:
    """Always False: nothing here is traced by ``torch.jit``."""
    return False


def save(m, f, *args, **kwargs):
    """Not here: there are no TorchScript programs to save."""
    raise NotImplementedError("jit.save: there is no TorchScript here (jit.script and "
                              "jit.trace return the model itself); save the weights with "
                              "tg.save(model.state_dict(), path) and load them with "
                              "model.load_state_dict(tg.load(path))")  # fmt: skip


def load(f, *args, **kwargs):
    """Not here: there are no TorchScript programs to load."""
    raise NotImplementedError("jit.load: there is no TorchScript here; build the model in "
                              "Python and load its weights with "
                              "model.load_state_dict(tg.load(path)) (saved by "
                              "tg.save(model.state_dict(), path))")  # fmt: skip
