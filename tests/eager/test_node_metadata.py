"""A node's metadata, as PyTorch's: ``_input_metadata``, ``_sequence_nr()``, ``topological_nr``,
calling a node on a gradient, and the engine validating the gradients a rule returns."""

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
from tinygrad_edu.eager import InputBuffer
from tinygrad_edu.eager.engine import GraphTask
from tinygrad_edu.ops.base import REGISTRY


def _both(build):
    """Run ``build(lib, x, w)`` in both libraries on the same float64 values."""
    rng = np.random.default_rng(0)
    xv, wv = rng.normal(size=(2, 3)), rng.normal(size=(3,))
    ours = build(tg, tg.tensor(xv, requires_grad=True), tg.tensor(wv, requires_grad=True))
    tx, tw = torch.tensor(xv, requires_grad=True), torch.tensor(wv, requires_grad=True)
    theirs = build(torch, tx, tw)
    return ours, theirs


PROGRAMS = {
    "mul_sum": lambda L, x, w: (x * w).sum(),
    "exp_mean": lambda L, x, w: (x.exp() + w).mean(),
    "matmul": lambda L, x, w: (x @ w).tanh().sum(),
    "transpose": lambda L, x, w: (x.transpose(0, 1) * 2.0).sum(dim=0),
    "view": lambda L, x, w: x.reshape(3, 2)[1:].relu().sum(),
    "float32": lambda L, x, w: (x.float() * 3).sum(),
}


def _walk(fn):
    """Every node below ``fn``, depth first, in next_functions order (both libraries)."""
    out, stack, seen = [], [fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        stack.extend(n for n, _ in reversed(node.next_functions))
    return out


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_input_metadata_matches_pytorchs_for_every_node(name):
    ours, theirs = _both(PROGRAMS[name])
    a, b = _walk(ours.grad_fn), _walk(theirs.grad_fn)
    assert [n.name() for n in a] == [n.name().replace("torch::autograd::", "") for n in b]
    for n, m in zip(a, b):
        assert len(n._input_metadata) == len(m._input_metadata), n.name()
        for ours_meta, torch_meta in zip(n._input_metadata, m._input_metadata):
            assert tuple(ours_meta.shape) == tuple(torch_meta.shape), n.name()
            assert str(ours_meta.dtype) == str(torch_meta.dtype).replace("torch.", ""), n.name()
            assert str(ours_meta.device) == str(torch_meta.device)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_calling_a_node_on_a_gradient_gives_pytorchs_gradients(name):
    ours, theirs = _both(PROGRAMS[name])
    g = np.linspace(0.5, 1.5, num=max(1, ours.numel())).reshape(tuple(ours.shape))
    a = ours.grad_fn(tg.tensor(g))
    b = theirs.grad_fn(torch.tensor(g))
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (x is None) == (y is None)
        if x is not None:
            np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-6)
    ours.backward(tg.tensor(g))  # saved values are kept by a call: backward still runs


def test_calling_a_node_with_the_wrong_number_of_gradients_is_a_clear_error():
    y = (tg.tensor([1.0, 2.0], requires_grad=True) * 2).sum()
    with pytest.raises(TypeError, match="SumBackward0 takes 1 gradient"):
        y.grad_fn(tg.tensor(1.0), tg.tensor(1.0))


def test_sequence_nr_is_pytorchs_method_and_grows_with_creation():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    a = x * 2
    b = a.exp()
    assert a.grad_fn._sequence_nr() == a.grad_fn.sequence_nr
    assert b.grad_fn._sequence_nr() > a.grad_fn._sequence_nr()
    acc = a.grad_fn.next_functions[0][0]
    assert acc._sequence_nr() == 2**64 - 1 == torch.ones(1, requires_grad=True).mul(2) \
        .grad_fn.next_functions[0][0]._sequence_nr()  # fmt: skip


def test_topological_nr_is_the_longest_path_to_a_leaf():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    w = tg.tensor([3.0, 4.0], requires_grad=True)
    a = x * w  # MulBackward0 -> two AccumulateGrads
    b = a.exp() + x  # AddBackward0 -> ExpBackward0 -> MulBackward0; and -> AccumulateGrad
    add = b.grad_fn
    exp = add.next_functions[0][0]
    acc = add.next_functions[1][0]
    assert acc.topological_nr == 0
    assert a.grad_fn.topological_nr == 1
    assert exp.topological_nr == 2
    assert add.topological_nr == 3
    for node in _walk(add):  # the property PyTorch relies on: an edge always goes down
        for nxt, _ in node.next_functions:
            if nxt is not None:
                assert nxt.topological_nr < node.topological_nr


def test_topological_nr_of_a_deep_chain_needs_no_recursion():
    x = tg.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    assert y.grad_fn.topological_nr == 5000


def test_input_buffer_sums_gradients_of_one_slot():
    buf = InputBuffer((None, None))
    assert buf.add(0, np.array([1.0])) is False
    assert buf.add(0, np.array([2.0])) is True
    assert buf.add(1, None) is False
    np.testing.assert_array_equal(buf[0], [3.0])
    assert buf[1] is None


def test_graph_task_counts_dependencies_of_a_diamond():
    x = tg.tensor([1.0], requires_grad=True)
    a = x * 2
    y = (a + a.exp()).sum()
    from tinygrad_edu.eager.backward import make_root

    task = GraphTask(make_root((y,), (None,), False), False, False)
    mul = a.grad_fn
    assert task.dependencies[mul] == 2  # used by the add and by the exp


# -- the engine validates what a derivative rule returns, as PyTorch's validate_outputs --------
@pytest.fixture
def broken_rule(monkeypatch):
    """Replace ``exp``'s derivative rule by one that returns ``make(g, x)`` for the input."""

    def install(make):
        op = REGISTRY["exp"]

        def vjp(F, g, inputs, out, shapes, needs, **attrs):
            return (make(g, shapes[0]),)

        monkeypatch.setattr(op, "vjp", vjp)

    return install


def test_a_rule_returning_a_wrong_shape_is_an_error_naming_node_and_shapes(broken_rule):
    broken_rule(lambda g, shape: np.ones((7,)))
    x = tg.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        x.exp().sum().backward()
    message = str(e.value)
    assert "ExpBackward0 returned an invalid gradient at index 0" in message
    assert "[7]" in message and "[1, 3]" in message and "'exp'" in message
    assert x.grad is None  # nothing half-accumulated


def test_a_larger_broadcast_gradient_is_summed_down_as_pytorch_does(broken_rule):
    broken_rule(lambda g, shape: np.ones((4, *shape)) * g)  # 4 copies of the right gradient
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x.exp().sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 4.0, 4.0])


def test_a_gradient_of_another_dtype_takes_its_inputs_dtype(broken_rule):
    broken_rule(lambda g, shape: np.ones(shape, dtype=np.float64))
    x = tg.tensor([1.0, 2.0], dtype=tg.float32, requires_grad=True)
    x.exp().sum().backward()
    assert x.grad.dtype == tg.float32


def test_apply_op_takes_an_ops_name_as_the_package_exports_it():
    from tinygrad_edu import eager

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = eager.apply_op("exp", x)
    np.testing.assert_allclose(y.numpy(force=True), np.exp([1.0, 2.0]))
    assert y.grad_fn.name() == "ExpBackward0"
    assert eager.apply_op(REGISTRY["exp"], x).grad_fn.name() == "ExpBackward0"
    with pytest.raises(KeyError, match="no op named 'expp'.*did you mean 'exp'"):
        eager.apply_op("expp", x)
