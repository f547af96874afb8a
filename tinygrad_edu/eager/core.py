"""The bottom of the eager engine: a tensor's state, its edge into the graph, and the slot
that holds the ``Tensor`` class.

The modules of ``eager/`` form layers, each importing only from those below it::

    core -> node, convert -> engine -> out, split_node, cell_node -> dispatch
         -> functional, dlpack, random, loss_node
         -> tensor_convert, inplace, anatomy -> tensor -> factories, function
         -> autograd (the public functions)

The lower layers make and inspect tensors without importing the class: ``tensor.py``
hands ``Tensor`` over once, when it is defined (:func:`hand_over`), as PyTorch's C++ core is
handed the Python class at start-up, and they read it from :data:`Tensor` here. Likewise
``functional.py`` hands over :data:`F`, the ``F`` of a ``create_graph=True`` backward
(derivative rules applied to tensors, recorded), which ``node.py`` calls.

:func:`init_tensor` is the one place that lists a tensor's fields: ``Tensor()``,
``Tensor._make`` and ``apply_op`` all go through it, so a new field is added here only.
"""

from __future__ import annotations

from .grad_mode import RARE as _RARE
from .grad_mode import _state as _modes

__all__ = ["Tensor", "F", "hand_over", "init_tensor", "new_tensor", "edge", "InferenceCounter"]

#: The eager ``Tensor`` class, handed over by ``tensor.py`` when it is defined.
Tensor = None
#: The ``TensorFunctional`` of a differentiable backward, handed over by ``functional.py``.
F = None


def hand_over(tensor_class=None, functional=None) -> None:
    """Give the core the ``Tensor`` class (from ``tensor.py``) or the tensors' ``F`` (from
    ``functional.py``): once each, at import."""
    global Tensor, F
    if tensor_class is not None:
        Tensor = tensor_class
    if functional is not None:
        F = functional


class InferenceCounter(list):
    """The version counter of an *inference tensor*: one made inside ``inference_mode()`` (a
    view or ``detach()`` of it shares its counter, so it is one too). An op recorded for
    backward may not save such a tensor (PyTorch's rule: see ``SavedTensor``)."""

    __slots__ = ()


def init_tensor(t, data, device, grad_fn=None, counter=None, output_nr=0):
    """Set every field of tensor ``t`` (a tensor's state) and return it: ``data``, the backend
    array as is; ``grad_fn``, the node that made it (None: a leaf); ``counter``, a version
    counter to share (a view's), else a new one. Rare fields are class attributes until set."""
    t._data, t._device = data, device  # pairs: see NOTE [Instructions per op] in dispatch.py
    t._grad_fn, t._requires_grad = grad_fn, grad_fn is not None
    t._output_nr, t._grad, t._base = output_nr, None, None
    if counter is None:  # a new tensor (a view or detach() shares its input's counter)
        counter = InferenceCounter((0,)) if _RARE[0] and _modes.inference else [0]
    t._counter = counter
    return t


_new = object.__new__


def new_tensor(data, device, grad_fn=None, counter=None, output_nr=0):
    """A ``Tensor`` around array ``data`` (no conversion, no copy)."""
    return init_tensor(_new(Tensor), data, device, grad_fn, counter, output_nr)


def edge(a) -> tuple:
    """Where the gradient of ``a`` flows: ``(its grad_fn, output_nr)``, its AccumulateGrad
    for a leaf that requires grad, ``(None, 0)`` for anything that does not require grad."""
    if not isinstance(a, Tensor) or not a._requires_grad:
        return (None, 0)
    fn = a.grad_fn
    if fn is not None:
        return (fn, a._output_nr)
    return (a._grad_accumulator(), 0)
