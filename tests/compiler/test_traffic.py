"""The memory traffic of a graph, op by op and kernel by kernel (``symbolic/static/traffic.py``),
and the hand-written softmax kernels' given code (``symbolic/static/handwritten.py``: the
wrappers around the graded loops, checked against PyTorch in float64)."""

import numpy as np
import pytest

from tinygrad_edu.symbolic import Variable, constant
from tinygrad_edu.symbolic.static import fusion, handwritten, kernels, traffic

torch = pytest.importorskip("torch")


def _graph():
    x = Variable("x", shape=(8, 5), dtype="float64")
    b = Variable("b", shape=(5,), dtype="float64")
    h = (x + b).tanh() * 2.0
    return x, b, h, (h * h).sum(axis=-1, keepdims=True)


def test_each_op_reads_its_distinct_inputs_and_writes_its_output():
    _, _, _, y = _graph()
    steps = traffic.op_traffic(y)
    full, row, bias = 8 * 5 * 8, 8 * 8, 5 * 8
    assert [s.what for s in steps] == ["add", "tanh", "mul", "mul", "sum"]
    assert [(s.read, s.written) for s in steps] == [
        (full + bias, full), (full, full), (full, full),  # `* 2.0` reads no array for the 2.0
        (full, full),  # h * h reads h once
        (full, row)]  # fmt: skip
    assert traffic.total(steps) == (5 * full + bias, 4 * full + row)


def test_a_view_moves_nothing_and_a_constant_array_is_read():
    x = Variable("x", shape=(4, 6), dtype="float32")
    c = constant(np.ones((4, 6), dtype=np.float32))
    steps = traffic.op_traffic((x * c).reshape((6, 4)))
    assert [(s.what, s.read, s.written) for s in steps] == [
        ("mul", 2 * 96, 96), ("reshape", 0, 0)]  # fmt: skip


def test_a_kernel_reads_its_inputs_once_and_writes_only_what_is_read_later():
    x, b, h, y = _graph()
    (k,) = fusion.kernels_of([y, h])  # h is returned too: the kernel writes it
    steps = traffic.fused_traffic([y, h], [k])
    assert len(steps) == 1 and steps[0].what.startswith("kernel0: add + tanh")
    assert (steps[0].read, steps[0].written) == (8 * 5 * 8 + 5 * 8, 8 * 5 * 8 + 8 * 8)
    plain = traffic.total(traffic.op_traffic([y, h]))
    assert sum(plain) > 3 * sum(traffic.total(steps))


def test_the_ops_outside_the_kernels_stay_steps_of_their_own():
    x = Variable("x", shape=(6, 4), dtype="float64")
    w = Variable("w", shape=(4, 3), dtype="float64")
    y = ((x @ w).tanh() + 1.0).exp()
    found = fusion.kernels_of(y)
    steps = traffic.fused_traffic(y, found)
    assert [s.what.split(":")[0] for s in steps] == ["matmul", "kernel0"]
    assert steps[0] == traffic.op_traffic(y)[0]


def test_an_unknown_shape_is_an_error_naming_the_fix():
    x = Variable("x")
    with pytest.raises(ValueError, match=r"traffic: .*no known shape.*shaped Variables"):
        traffic.op_traffic(x.exp())


# -- the hand-written softmax kernels' given code ------------------------------------------------
def _torch_softmax(x, g):
    t = torch.tensor(x, requires_grad=True)
    y = torch.softmax(t, dim=-1)
    y.backward(torch.tensor(g))
    return y.detach().numpy(), t.grad.numpy()


@pytest.mark.parametrize("shape, scale", [((4, 7), 1.0), ((3, 1), 1.0), ((2, 50), 400.0)])
def test_the_softmax_kernels_match_pytorch(shape, scale):
    rng = np.random.default_rng(sum(shape))
    x, g = rng.standard_normal(shape) * scale, rng.standard_normal(shape)
    want_y, want_dx = _torch_softmax(x, g)
    y = handwritten.softmax(x)
    np.testing.assert_allclose(y, want_y, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(handwritten.softmax_grad(want_y, g), want_dx, rtol=1e-10,
                               atol=1e-14)  # fmt: skip


def test_the_kernels_run_as_python_without_numba(monkeypatch):
    monkeypatch.setattr(kernels, "available", lambda: False)
    assert handwritten.compiled(handwritten.softmax_forward) is handwritten.softmax_forward
    x = np.array([[1000.0, 999.0, -5.0]])
    np.testing.assert_allclose(handwritten.softmax(x), _torch_softmax(x, np.ones_like(x))[0],
                               rtol=1e-12)  # fmt: skip


def test_numba_compiles_each_kernel_once():
    if not kernels.available():
        pytest.skip("numba is not installed (the fuse extra)")
    first = handwritten.compiled(handwritten.softmax_backward)
    assert first is handwritten.compiled(handwritten.softmax_backward)
    assert first is not handwritten.softmax_backward and hasattr(first, "py_func")


@pytest.mark.parametrize("bad, match", [
    (np.ones(3), r"2-D float array.*shape \(3,\)"),
    (np.ones((2, 3), dtype=np.int64), r"dtype int64.*astype"),
    (np.ones((2, 0)), r"no columns"),
])  # fmt: skip
def test_bad_input_is_an_error_naming_shape_dtype_and_fix(bad, match):
    with pytest.raises(ValueError, match=r"softmax kernel: x .*" + match):
        handwritten.softmax(bad)


def test_the_gradient_needs_matching_arrays():
    with pytest.raises(ValueError, match=r"y \(2, 3\) float64 and g \(3, 2\) float64"):
        handwritten.softmax_grad(np.ones((2, 3)), np.ones((3, 2)))
