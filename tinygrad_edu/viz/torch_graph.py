"""PyTorch's own autograd graphs, seen through the interface our drawings read.

A PyTorch tensor's ``grad_fn`` graph has the shape of our eager graph: backward nodes
(``MulBackward0``), edges ``next_functions = ((node, input_nr), ...)``, ``AccumulateGrad``
nodes whose ``.variable`` is the leaf, values saved for backward (PyTorch shows them as
``_saved_self``, ``_saved_other``, ``_saved_result``... attributes) and a sequence number
(``_sequence_nr()``). This module wraps those objects in small *views* that answer the
questions :func:`~tinygrad_edu.viz.traverse.eager_graph` asks of our own nodes and tensors
(``next_functions``, ``sequence_nr``, ``name()``, ``variable``, ``shape``, ``dtype``, ``grad``),
so one renderer draws both graphs, in one style.

* :class:`TorchGraph` makes the views, one per PyTorch object (the same grad_fn always gives
  the same view, so a node used twice is one box); it walks the graph iteratively.
* :class:`TorchNodeView` is a backward node, :class:`TorchTensorView` a tensor (an output, or
  the leaf behind an ``AccumulateGrad``).

PyTorch is imported only when a PyTorch tensor is passed in; without it installed the rest of
:mod:`tinygrad_edu.viz` works, and :func:`require_torch` says how to install it.

>>> import torch
>>> a = torch.tensor([1.0, 2.0], requires_grad=True)
>>> view = TorchGraph().tensor((a * a).sum())
>>> view.grad_fn.name(), [(n.name(), nr) for n, nr in view.grad_fn.next_functions]
('SumBackward0', [('MulBackward0', 0)])
>>> mul = view.grad_fn.next_functions[0][0]
>>> [n.name() for n, _ in mul.next_functions], mul.next_functions[0][0].variable.shape
(['AccumulateGrad', 'AccumulateGrad'], (2,))
"""

from __future__ import annotations

import sys

import numpy as np  # display only: saved values are shown as text

__all__ = [
    "TorchGraph",
    "TorchNodeView",
    "TorchTensorView",
    "is_torch_tensor",
    "require_torch",
    "TORCH_INSTALL_HINT",
]

# PyTorch's CPU build (about 200 MB): a plain `pip install torch` on Linux fetches the CUDA one,
# some GB, which the comparisons do not need
TORCH_INSTALL_HINT = "pip install torch --index-url https://download.pytorch.org/whl/cpu"


def require_torch(what: str):
    """Import and return ``torch``; without it, an ImportError saying how to install it."""
    try:
        import torch  # noqa: PLC0415  (optional: only the PyTorch entry points need it)
    except ImportError:
        raise ImportError(
            f"{what} needs PyTorch, which is not installed: {TORCH_INSTALL_HINT}"
        ) from None
    return torch


def is_torch_tensor(obj) -> bool:
    """True for a ``torch.Tensor`` (checked without importing torch: if torch was never
    imported, nothing can be a torch tensor)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, getattr(torch, "Tensor", ()))


def _dtype_name(dtype) -> str:
    """``torch.float32`` -> ``"float32"`` (the spelling our own drawings use)."""
    return str(dtype).removeprefix("torch.")


def _to_numpy(t) -> np.ndarray:
    """A torch tensor's values as a numpy array, for display (shares memory on the CPU)."""
    t = t.detach().cpu().resolve_conj().resolve_neg()
    try:
        return t.numpy()
    except (TypeError, RuntimeError):  # dtypes numpy lacks (bfloat16): show them as float32
        return t.float().numpy()


def _signed(value):
    """PyTorch shows saved int64 attributes through an unsigned type (``ignore_index=-100``
    reads 2**64 - 100): give such numbers back their sign."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 2**63:
        return value - 2**64
    return value


class TorchTensorView:
    """A PyTorch tensor as our drawings see a tensor.

    Attributes:
        tensor: the PyTorch tensor.
        shape, dtype: its shape (a tuple) and dtype name (``"float32"``).
        grad_fn: the view of its ``grad_fn`` (None for a leaf).
        name: None (PyTorch tensors carry no label; drawings take names from ``names=``).
    """

    def __init__(self, tensor, grad_fn=None):
        self.tensor = tensor
        self.shape = tuple(tensor.shape)
        self.dtype = _dtype_name(tensor.dtype)
        self.grad_fn = grad_fn
        self.name = None

    @property
    def output_nr(self) -> int:
        """Which output of its ``grad_fn`` this tensor is."""
        return self.tensor.output_nr

    @property
    def grad(self):
        """The leaf's ``.grad`` as a numpy array (None before any backward)."""
        g = self.tensor.grad
        return None if g is None else _to_numpy(g)

    def __repr__(self) -> str:
        return f"<torch tensor {self.shape} {self.dtype}>"


class TorchNodeView:
    """A PyTorch backward node (``grad_fn``) as our drawings and engine see a node.

    Attributes:
        node: the PyTorch node.
        next_functions: ``(view or None, input_nr)`` for each of the node's edges.
        sequence_nr: ``node._sequence_nr()``; PyTorch gives every ``AccumulateGrad`` the
            largest value, 2**64 - 1, so it runs as soon as it is ready.
        variable: for an ``AccumulateGrad``, the view of the leaf it fills (else None).
        is_accumulate: True for ``AccumulateGrad``.
    """

    def __init__(self, node, graph: TorchGraph):
        self.node = node
        self._name = type(node).__name__  # "MulBackward0"; name() says "torch::autograd::..."
        self.sequence_nr = node._sequence_nr()
        self.next_functions = ()  # filled in by TorchGraph.node
        self.is_accumulate = self._name == "AccumulateGrad"
        self.variable = graph.tensor(node.variable) if self.is_accumulate else None

    def name(self) -> str:
        return self._name

    def saved_info(self) -> list:
        """``(what, value, shape)`` for each value the node keeps for backward.

        ``what`` is PyTorch's own name (``_saved_self`` -> ``"self"``, ``_saved_result`` ->
        ``"result"``). A saved tensor gives its values (numpy) and shape; a saved size gives
        ``(what, None, shape)``; any other saved attribute (``alpha``, ``stride``...) gives
        ``(what, value, None)``; saved tensors already freed by a backward give one
        ``("freed", None, None)``.
        """
        torch = sys.modules["torch"]
        out, freed = [], False
        for attr in dir(self.node):
            if not attr.startswith("_saved_") or attr.endswith("_sym_strides"):
                continue  # _raw_saved_* are the same values unpacked lazily; strides: layout
            what = attr.removeprefix("_saved_")
            try:
                value = getattr(self.node, attr)
            except RuntimeError:  # "Trying to backward through the graph a second time"
                freed = True
                continue
            if isinstance(value, torch.Tensor):
                out.append((what, _to_numpy(value), tuple(value.shape)))
            elif isinstance(value, tuple | list) and value and isinstance(value[0], torch.Tensor):
                out.extend(
                    (f"{what}[{k}]", _to_numpy(v), tuple(v.shape)) for k, v in enumerate(value)
                )
            elif what.endswith(("_sym_sizes", "_sym_sizes_opt")) and value is not None:
                base = what.removesuffix("_opt").removesuffix("_sym_sizes")
                out.append((base, None, tuple(int(d) for d in value)))
            elif value is not None:
                out.append((what, _signed(value), None))
        if freed:
            out.append(("freed", None, None))
        return out

    def __repr__(self) -> str:
        return f"<view of {self._name}>"


class TorchGraph:
    """Makes the views of one PyTorch graph; the same object always gets the same view.

    Views are cached by ``id`` and keep their PyTorch object alive, so ids stay unique.
    """

    def __init__(self):
        self._nodes: dict[int, TorchNodeView] = {}
        self._tensors: dict[int, TorchTensorView] = {}

    def tensor(self, t) -> TorchTensorView:
        """The view of PyTorch tensor ``t`` (with its whole ``grad_fn`` graph)."""
        view = self._tensors.get(id(t))
        if view is None:
            view = self._tensors[id(t)] = TorchTensorView(t)
            if t.grad_fn is not None:
                view.grad_fn = self.node(t.grad_fn)
        return view

    def node(self, fn) -> TorchNodeView:
        """The view of PyTorch node ``fn``; every node it reaches gets one too (iteratively)."""
        view = self._nodes.get(id(fn))
        if view is not None:
            return view
        first = self._new(fn)
        stack = [first]
        while stack:
            v = stack.pop()
            edges = []
            for nxt, nr in v.node.next_functions:
                w = None
                if nxt is not None:
                    w = self._nodes.get(id(nxt))
                    if w is None:
                        w = self._new(nxt)
                        stack.append(w)
                edges.append((w, nr))
            v.next_functions = tuple(edges)
        return first

    def _new(self, fn) -> TorchNodeView:
        view = self._nodes[id(fn)] = TorchNodeView(fn, self)
        return view
