"""Shape rules: an incompatible call names the op and every input shape; and the classifier
ops stay finite at extreme logits."""

import numpy as np
import pytest

from tinygrad_edu.ops import RAW, ShapeError, get_op

# (op, input shapes, attrs) that the op's shape rule must reject
BAD = [
    ("add", [(3, 4), (5,)], {}),
    ("sub", [(2, 3), (3, 2)], {}),
    ("mul", [(4,), (3,)], {}),
    ("div", [(2, 1, 3), (4, 4)], {}),
    ("maximum", [(3,), (2,)], {}),
    ("relu_grad", [(3,), (4,)], {}),
    ("where", [(2,), (3,), (4,)], {}),
    ("matmul", [(3, 4), (5, 4)], {}),
    ("matmul", [(3, 4), (3, 4)], {"trans_A": True, "trans_B": True}),
    ("matmul", [(), (4, 2)], {}),
    ("matmul", [(3,), (4, 2)], {}),
    ("matmul", [(2, 3, 4), (5, 4, 2)], {}),
    ("sum", [(3, 4)], {"axis": 2}),
    ("mean", [(3, 4)], {"axis": (0, -3)}),
    ("max", [(3,)], {"axis": (0, 0)}),
    ("numel", [(3, 4)], {"axis": 5}),
    ("softmax", [(3, 4)], {"axis": 2}),
    ("log_softmax", [(3,)], {"axis": -2}),
    ("softmax_cross_entropy", [(3, 4), (3, 5)], {}),
    ("reshape", [(3, 4)], {"shape": (5, -1)}),
    ("permute", [(3, 4, 5)], {"axes": (0, 0, 1)}),
    ("transpose", [(3, 4)], {"dim0": 0, "dim1": 2}),
    ("minimum", [(3,), (2,)], {}),
    ("pow_tensor", [(3,), (2,)], {}),
    ("clamp_tensor", [(3,), (2,), (3,)], {}),
    ("masked_fill", [(3,), (2, 3), ()], {}),
    ("min", [(3, 4)], {"axis": 3}),
    ("max_dim", [(3, 4)], {"dim": 2}),
    ("argmax", [(3, 4)], {"axis": -3}),
    ("var", [(3, 4)], {"axis": 2}),
    ("cumsum", [(3, 4)], {"dim": 2}),
    ("squeeze", [(1, 4)], {"dim": 5}),
    ("flatten", [(3, 4, 5)], {"start_dim": 2, "end_dim": 1}),
    ("repeat", [(3, 4)], {"repeats": (2,)}),
    ("cat", [(3, 4), (3, 5)], {"dim": 0}),
    ("stack", [(3, 4), (4, 3)], {"dim": 0}),
    ("gather", [(3, 4), (3, 4, 1)], {"dim": 1}),
    ("setitem", [(3, 4), (2, 4)], {"index": 0}),
    ("nll_loss", [(3, 4), (4,)], {}),
    ("broadcast_to", [(3, 4)], {"shape": (4, 4)}),
    ("sum_to", [(3, 4)], {"shape": (3, 4, 1)}),
    ("expand_dims", [(3, 4)], {"axis": 4}),
    ("getitem", [(3, 4)], {"index": (0, 0, 0)}),
    ("getitem_grad", [(2,), (3, 4)], {"index": 0}),
]


@pytest.mark.parametrize(("name", "shapes", "attrs"), BAD, ids=[b[0] for b in BAD])
def test_shape_error_names_op_and_every_input_shape(name, shapes, attrs):
    with pytest.raises(ShapeError) as info:
        get_op(name).shape(*shapes, **attrs)
    message = str(info.value)
    assert message.startswith(f"{name}:")
    for shape in shapes:
        assert str(tuple(shape)) in message, f"{message!r} does not name {shape}"


def _reference_cross_entropy(logits, labels):
    """float64 loss and gradient by the log-sum-exp trick."""
    m = logits.max(axis=-1, keepdims=True)
    lse = m + np.log(np.exp(logits - m).sum(axis=-1, keepdims=True))
    n = logits.size // logits.shape[-1]
    loss = -(labels * (logits - lse)).sum() / n
    return loss, (np.exp(logits - lse) - labels) / n


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_cross_entropy_is_stable_at_large_logits(dtype):
    logits = np.array([[1000.0, -1000.0, 0.0], [-1000.0, -1000.0, 1000.0]], dtype=dtype)
    labels = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], dtype=dtype)
    op = get_op("softmax_cross_entropy")
    loss = op.forward(np, logits, labels)
    (grad, _) = op.vjp(RAW, np.asarray(1.0, dtype), (logits, labels), loss,
                       (logits.shape, labels.shape), (True, False))  # fmt: skip
    want_loss, want_grad = _reference_cross_entropy(logits.astype(np.float64), labels)
    assert np.isfinite(loss) and np.isfinite(grad).all()
    np.testing.assert_allclose(loss, want_loss, rtol=1e-6)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_is_stable_at_large_logits(name):
    x = np.array([[1000.0, -1000.0, 999.0]])
    out = get_op(name).forward(np, x, axis=-1)
    m = x.max(-1, keepdims=True)
    log_s = x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))
    np.testing.assert_allclose(out, log_s if name == "log_softmax" else np.exp(log_s))
