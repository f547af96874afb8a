"""Forward-kernel examples of the per-op table: for every registered op, inputs and attributes
on which ``tests/ops/test_strict_namespace.py`` runs the forward kernel and the raw derivative
rule on the Array API strict namespace (and on numpy, to compare)."""

from __future__ import annotations

import numpy as np

from tests.opinfo.grad_layers import LAYER_EXAMPLES
from tests.opinfo.grad_names2 import NAMES2_EXAMPLES
from tests.opinfo.grad_torchops import TORCHOPS_EXAMPLES

__all__ = ["EXAMPLES"]

_rng = np.random.default_rng(0)
_a, _b = _rng.standard_normal((3, 4)), _rng.standard_normal((1, 4))
_pos = _rng.uniform(0.5, 2.0, (3, 4))
_m1, _m2 = _rng.standard_normal((2, 3, 4)), _rng.standard_normal((4, 5))
_probs = np.exp(_a) / np.exp(_a).sum(-1, keepdims=True)
_rows = np.array([0, 2, 0])
_idx = np.array([[0, 3], [1, 1], [2, 0]])

# op name -> (inputs, attrs)
EXAMPLES = {
    "add": ((_a, _b), {}),
    "sub": ((_a, _b), {}),
    "mul": ((_a, _b), {}),
    "div": ((_a, _pos), {}),
    "neg": ((_a,), {}),
    "pow": ((_pos,), {"exponent": 1.5}),
    "exp": ((_a,), {}),
    "log": ((_pos,), {}),
    "tanh": ((_a,), {}),
    "sigmoid": ((_a,), {}),
    "relu": ((_a,), {}),
    "relu_grad": ((_a, _b), {}),
    "maximum": ((_a, _b), {}),
    "where": ((_a > 0, _a, _b), {}),
    "zeros_like": ((_a,), {}),
    "ones_like": ((_a,), {}),
    "greater": ((_a, _b), {}),
    "greater_equal": ((_a, _b), {}),
    "less": ((_a, _b), {}),
    "less_equal": ((_a, _b), {}),
    "equal": ((_a, _a), {}),
    "not_equal": ((_a, _b), {}),
    "astype": ((_a,), {"dtype": "float32", "src": "float64"}),
    "clone": ((_a,), {}),
    "fill": ((_a,), {"value": 2.5}),
    "matmul": ((_m1, _m2), {}),
    "sum": ((_m1,), {"axis": (0, 2), "keepdims": False}),
    "mean": ((_m1,), {"axis": 1, "keepdims": True}),
    "max": ((_m1,), {"axis": -1}),
    "sum_to": ((_m1,), {"shape": (3, 1)}),
    "numel": ((_m1,), {"axis": (0, 1)}),
    "reshape": ((_m1,), {"shape": (4, -1)}),
    "permute": ((_m1,), {"axes": (2, 0, 1)}),
    "transpose": ((_m1,), {"dim0": 0, "dim1": -1}),
    "broadcast_to": ((_b,), {"shape": (2, 3, 4)}),
    "expand_dims": ((_a,), {"axis": 1}),
    "getitem": ((_a,), {"index": (_rows, ...)}),
    "getitem_grad": ((_a,), {"shape": (4, 4), "index": (_rows, ...)}),
    "softmax": ((_a,), {"axis": 0}),
    "log_softmax": ((_a,), {"axis": -1}),
    "softmax_cross_entropy": ((_a, _probs), {}),
    "pow_tensor": ((_pos, _a), {}),
    "log1p": ((_pos,), {}),
    "sqrt": ((_pos,), {}),
    "rsqrt": ((_pos,), {}),
    "sin": ((_a,), {}),
    "cos": ((_a,), {}),
    "abs": ((_a,), {}),
    "sign": ((_a,), {}),
    "erf": ((_a * 3,), {}),
    "minimum": ((_a, _b), {}),
    "clamp": ((_a,), {"min": -0.5, "max": 0.5}),
    "clamp_tensor": ((_a, _b, _b + 1), {}),
    "masked_fill": ((_a, _a > 0, np.asarray(0.5)), {}),
    "logical_and": ((_a > 0, _b > 0), {}),
    "logical_or": ((_a > 0, _b > 0), {}),
    "logical_xor": ((_a > 0, _b > 0), {}),
    "logical_not": ((_a > 0,), {}),
    "bitwise_and": ((_a > 0, _b > 0), {}),
    "bitwise_or": ((_a > 0, _b > 0), {}),
    "bitwise_xor": ((_a > 0, _b > 0), {}),
    "bitwise_not": ((_a > 0,), {}),
    "min": ((_m1,), {"axis": (0, 2)}),
    "max_dim": ((_m1,), {"dim": 1}),
    "min_dim": ((_m1,), {"dim": -1, "keepdim": True}),
    "argmax": ((_m1,), {"axis": 1}),
    "argmin": ((_m1,), {}),
    "all": ((_m1 > 0,), {"axis": 1}),
    "any": ((_m1 > 0,), {"axis": (0, 2), "keepdims": True}),
    "var": ((_m1,), {"axis": (0, 1), "correction": 1}),
    "std": ((_m1,), {"axis": 2, "correction": 0, "keepdims": True}),
    "cumsum": ((_m1,), {"dim": 1}),
    "squeeze": ((_b,), {"dim": 0}),
    "flatten": ((_m1,), {"start_dim": 1}),
    "repeat": ((_b,), {"repeats": (2, 1, 3)}),
    "cat": ((_a, _b), {"dim": 0}),
    "stack": ((_a, _a), {"dim": 1}),
    "setitem": ((_a, _b[0]), {"index": (slice(1, None), Ellipsis)}),
    "gather": ((_a, _idx), {"dim": 1}),
    "gather_grad": ((_idx * 1.5, _idx), {"shape": (3, 4), "dim": 1}),
    "leaky_relu": ((_a,), {"negative_slope": 0.1}),
    "gelu": ((_a,), {"approximate": "none"}),
    "softplus": ((_a,), {"beta": 2.0}),
    "nll_loss": ((_a, _rows), {"weight": _pos[0], "reduction": "mean"}),
    "nll_loss_grad": ((_pos[0, :3], _rows), {"shape": (3, 4), "reduction": "none"}),
    "nll_log_softmax_grad": (
        (np.asarray(_pos[0, 0]), np.log(_pos / _pos.sum(1, keepdims=True)), _rows),
        {"axis": 1, "reduction": "mean"},
    ),
    "one_hot": ((_rows,), {"num_classes": 4}),
    "binary_cross_entropy": ((_probs, _probs[::-1]), {"weight": _pos, "reduction": "mean"}),
    "binary_cross_entropy_with_logits": ((_a, _probs), {"pos_weight": _pos[0],
                                                          "reduction": "none"}),
    "fill_constant": ((), {"shape": (2, 3), "value": 1.5, "dtype": "float64"}),
    "uniform_random": ((), {"shape": (3, 2), "low": -1.0, "high": 2.0, "seed": 3}),
    "gaussian_random": ((), {"shape": (4,), "mean": 1.0, "std": 0.5, "seed": 4}),
}
EXAMPLES.update(LAYER_EXAMPLES)  # convolution, pooling, padding, normalisation, embedding
_lstm = np.random.default_rng(5)
EXAMPLES["lstm_layer"] = ((_lstm.standard_normal((3, 2, 8)), _lstm.standard_normal((2, 2)),
                           _lstm.standard_normal((2, 2)), _lstm.standard_normal((8, 2))),
                          {"reverse": True})  # fmt: skip
EXAMPLES.update(TORCHOPS_EXAMPLES)  # the ops of issue 24
EXAMPLES.update(NAMES2_EXAMPLES)  # special functions, masked_scatter, histograms
