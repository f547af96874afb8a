r"""Memory traffic: the bytes a compiled graph reads and writes, op by op or kernel by kernel.

On a CPU (and more so on a GPU) an elementwise op costs what it moves, not what it computes:
``tanh`` over a 256 × 256 float64 array does 65 536 evaluations but reads and writes half a
megabyte each way, and the cache holds only the last few arrays. Fusion
(:mod:`~tinygrad_edu.symbolic.static.fusion`) saves exactly that traffic: a chain of ops
becomes one loop that reads its inputs once and writes only the values read after it.

The count is the simplest model that shows it, the one the roofline model starts from:

- a **step** (one numpy op, or one fused kernel) reads each distinct array it takes, once,
  whole, and writes each array it makes, whole;
- numbers written into the code (``x * 2.0``) and views (a reshape, a transpose: they share
  their input's memory) move nothing;
- caches are ignored: every step goes to memory. (A small graph's arrays stay in the cache,
  so a measured speed-up is smaller than the bytes saved; the bytes are what a large model
  saves.)

An input broadcast inside a kernel (a bias of ``C`` values added to every row) is counted at
its own size: the kernel reads it from the cache after the first row.

>>> from tinygrad_edu.symbolic import Variable
>>> x = Variable("x", shape=(4, 3), dtype="float64")
>>> y = ((x * 2.0).tanh() + x).sum(axis=-1, keepdims=True)
>>> [(s.what, s.read, s.written) for s in op_traffic([y])]
[('mul', 96, 96), ('tanh', 96, 96), ('add', 192, 96), ('sum', 96, 32)]
>>> total(op_traffic([y]))
(480, 320)
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..graph import topo_sort
from ..tensor_node import CONSTANT, PLACEHOLDER, Node

__all__ = ["Step", "nbytes", "op_traffic", "fused_traffic", "total"]


class Step(NamedTuple):
    """One step of a program: ``what`` it computes (an op's name, or ``kernel0: add + tanh``),
    and the bytes it ``read`` and ``written``."""

    what: str
    read: int
    written: int


def nbytes(node: Node) -> int:
    """The size in bytes of ``node``'s value (its shape and dtype must be known)."""
    shape, dtype = node.shape, node.dtype
    if shape is None or dtype is None or not all(type(d) is int for d in shape):
        raise ValueError(f"traffic: {node!r} has no known shape and dtype (shape {shape}, "
                         f"dtype {dtype}): count traffic on a graph built from shaped "
                         "Variables, or on a compiled program's graph")  # fmt: skip
    return math.prod(shape) * np.dtype(dtype).itemsize


def _moves(node: Node) -> bool:
    """Does reading ``node`` touch memory (not a number written into the code)?"""
    return not (node.op is CONSTANT and type(node.attrs.get("value")) in (int, float))


def _computes(node: Node) -> bool:
    return node.op is not PLACEHOLDER and node.op is not CONSTANT


def _plain(node: Node) -> Step:
    if getattr(node.op, "view", False):
        return Step(node.op.name, 0, 0)
    read = sum(nbytes(i) for i in dict.fromkeys(node.inputs) if _moves(i))
    return Step(node.op.name, read, nbytes(node))


def op_traffic(outputs) -> list:
    """One :class:`Step` per op of the graph of ``outputs``, in execution order, as the plain
    numpy program runs it (one array in and out of memory per op)."""
    outputs = [outputs] if isinstance(outputs, Node) else list(outputs)
    return [_plain(n) for n in topo_sort(outputs) if _computes(n)]


def fused_traffic(outputs, kernels) -> list:
    """The steps of the fused program: each kernel of ``kernels`` (see
    :func:`~tinygrad_edu.symbolic.static.fusion.kernels_of`) is one step that reads its
    inputs and writes its outputs (the members read outside it, or returned); every op
    outside the kernels is a step of its own, as in :func:`op_traffic`."""
    outputs = [outputs] if isinstance(outputs, Node) else list(outputs)
    owner = {n: k for k in kernels for n in k.members}
    steps, done = [], set()
    for n in topo_sort(outputs):
        if not _computes(n):
            continue
        k = owner.get(n)
        if k is None:
            steps.append(_plain(n))
        elif k.name not in done:
            done.add(k.name)
            read = sum(nbytes(i) for i in k.inputs if _moves(i))
            steps.append(Step(f"{k.name}: {' + '.join(k.ops)}", read,
                              sum(nbytes(o) for o in k.outputs)))  # fmt: skip
    return steps


def total(steps) -> tuple:
    """(bytes read, bytes written) of all ``steps``."""
    return sum(s.read for s in steps), sum(s.written for s in steps)
