r"""The static dtype of a node: what its op's kernel will return, known before anything runs.

Every node gets the dtype its op gives its inputs' dtypes (``Node.dtype``), or None where it
is not surely known. The arithmetic ops follow the library's one promotion rule
(:func:`tinygrad_edu.ops.promotion.result_type`, PyTorch's): it is run here on stand-ins that
carry only a dtype and a rank, so the graph's dtypes are the kernels' by construction. A
Python number (a constant without a dtype) is weak, a 0-d value weaker than one with
dimensions; where a rank is unknown and would change the answer, the dtype stays unknown.

Who reads it: the code generator (:mod:`~.codegen`) writes an op as numpy's plain expression
(``v3 = v1 * v2``) only where that surely gives the kernel's dtype, and otherwise calls the
kernel; the passes keep dtypes when they rewrite. A wrong dtype here would make the generated
code differ from the interpreter, so an op not listed gets None (its kernel runs).

>>> from tinygrad_edu.symbolic import Variable
>>> x = Variable("x", shape=(3,), dtype="float32")
>>> i = Variable("i", shape=(3,), dtype="int64")
>>> [n.dtype for n in (x * 2.0, i * 0.5, i / 2, x + Variable("s", shape=(), dtype="float64"),
...                    i.exp(), x > 0, (x > 0) + 1)]
['float32', 'float32', 'float32', 'float32', 'float32', 'bool', 'int64']
"""

from __future__ import annotations

import itertools

import numpy as np

from ..ops.promotion import category, result_type

__all__ = ["infer_dtype", "Operand"]

# Elementwise ops whose kernel gives ``torch_result``: the promotion of their (listed) inputs.
_PROMOTE = {"add", "sub", "mul", "maximum", "minimum", "pow_tensor"}
_PROMOTE_INPUTS = {"where": (1, 2)}  # where(cond, a, b): the condition does not promote
# Ops computing in floats: a floating input's dtype, float32 (the default) for ints and bools.
_FLOATING = {"exp", "log", "log1p", "sqrt", "rsqrt", "sin", "cos", "erf", "tanh", "sigmoid"}
# Ops whose result has their first input's dtype, whatever it is.
_KEEPS = {
    "neg", "abs", "relu", "clone", "reshape", "transpose", "permute", "getitem",
    "broadcast_to", "expand_dims", "squeeze", "flatten", "ones_like", "zeros_like", "fill",
    "repeat", "max", "min", "tril", "triu", "flip", "roll", "stop_gradient", "masked_fill",
}  # fmt: skip
# Ops that keep a floating first input's dtype (they refuse, or widen, anything else).
_KEEPS_FLOAT = {
    "softmax", "log_softmax", "mean", "sum", "sum_to", "logsumexp", "nll_loss",
    "nll_loss_grad", "relu_grad", "gelu", "silu", "leaky_relu", "softplus", "elu",
    "log_sigmoid", "var", "std", "cumsum", "embedding", "embedding_grad",
}  # fmt: skip
_SECOND = {"relu_grad": 1, "embedding": 1, "embedding_grad": 1}  # (y, g), (idx, weight) ...
_BOOL_RESULT = {
    "greater", "greater_equal", "less", "less_equal", "equal", "not_equal", "logical_and",
    "logical_or", "logical_xor", "logical_not", "all", "any", "isnan", "isinf", "isfinite",
}  # fmt: skip
_SAME_INPUTS = {"cat", "stack"}  # one dtype for all inputs: that dtype (else unknown)
_SAME_FLOAT = {"softmax_cross_entropy", "layer_norm"}  # the same, for one floating dtype


class Operand:
    """A stand-in for a kernel's input in :func:`result_type`: a dtype and a rank (``shape``
    is ``()`` or ``(1,)``: only whether it has dimensions matters to the rule)."""

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, has_dims: bool):
        self.dtype, self.shape = np.dtype(dtype), (1,) if has_dims else ()


def infer_dtype(op: str, inputs, attrs) -> str | None:
    """The dtype name of op ``op`` on ``inputs``, or None when not surely known.

    ``inputs``: one entry per input, ``("weak", value)`` for a Python number, ``(dtype,
    rank)`` otherwise (``dtype`` a name or None, ``rank`` an int or None when unknown).
    """
    if op in _BOOL_RESULT:
        return "bool"
    if op in ("astype", "fill_constant"):
        dtype = attrs.get("dtype")
        return dtype if isinstance(dtype, str) else None
    if not inputs:
        return None
    if op == "pow":  # x ** c: c (an attribute) is a weak operand
        return _promoted([inputs[0], ("weak", attrs.get("exponent"))])
    if op == "clamp":  # one bound, then the other, each a weak operand
        dtype = inputs[0][0]
        for bound in (attrs.get("min"), attrs.get("max")):
            if bound is not None and dtype is not None:
                dtype = _promoted([(dtype, inputs[0][1]), ("weak", bound)])
        return dtype
    if op in _PROMOTE or op in _PROMOTE_INPUTS or op == "div":
        picked = _PROMOTE_INPUTS.get(op)
        ins = [inputs[k] for k in picked] if picked else inputs
        return _promoted(ins, floating=op == "div")
    first = inputs[_SECOND.get(op, 0)]
    if first[0] == "weak" or first[0] is None:
        return None
    dtype = first[0]
    if op in _FLOATING:
        return dtype if category(dtype) == 2 else "float32"
    if op in _KEEPS:
        return dtype
    if op in _KEEPS_FLOAT:
        return dtype if category(dtype) == 2 else None
    if op in _SAME_INPUTS or op in _SAME_FLOAT and category(dtype) == 2:
        return dtype if all(i[0] == dtype for i in inputs) else None
    if op == "nll_log_softmax_grad":  # (g, logp, target): the fusion's g and logp agree
        return dtype if category(dtype) == 2 and inputs[1][0] == dtype else None
    if op == "matmul":  # promoted (both have dimensions)
        return _promoted([(d, 1) for d, _ in inputs]) if len(inputs) == 2 else None
    return None


def _promoted(inputs, floating: bool = False) -> str | None:
    """:func:`result_type` of the inputs; None where an input's dtype is unknown, where all
    are Python numbers (the kernel then computes on numbers), or where an unknown rank would
    change the answer."""
    if any(i[0] is None for i in inputs) or all(i[0] == "weak" for i in inputs):
        return None
    if any(i[0] == "weak" and type(i[1]) not in (bool, int, float) for i in inputs):
        return None  # (a complex number, ...)
    unknown = [k for k, i in enumerate(inputs) if i[0] != "weak" and i[1] is None]
    answers = set()
    for dims in itertools.product((False, True), repeat=len(unknown)):
        has = dict(zip(unknown, dims))
        operands = [i[1] if i[0] == "weak" else Operand(i[0], has.get(k, bool(i[1])))
                    for k, i in enumerate(inputs)]  # fmt: skip
        answers.add(np.dtype(result_type(np, *operands, floating=floating)).name)
    return answers.pop() if len(answers) == 1 else None
