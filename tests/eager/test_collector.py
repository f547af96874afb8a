"""What the eager engine does to stay fast on long graphs and with Python numbers (#15):
freezing the cycle collector's view of a long graph, and saving only what backward reads."""

import gc
import weakref

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu.eager import collector
from tinygrad_edu.eager.node import SavedTensor


@pytest.fixture
def clean_collector():
    collector.thaw()
    assert gc.get_freeze_count() == 0, "some other code left objects frozen"
    yield
    collector.thaw()


def test_a_long_graph_is_frozen_while_recorded_and_thawed_by_backward(clean_collector):
    x = tg.tensor(np.array([0.5]), requires_grad=True)
    y = x
    for _ in range(collector.FREEZE_EVERY + 10):
        y = y * 1.0001
    assert collector.freezes() >= 1 and gc.get_freeze_count() > 0
    y.backward()
    assert collector.freezes() == 0 and gc.get_freeze_count() == 0
    np.testing.assert_allclose(x.grad.numpy(), [1.0001 ** (collector.FREEZE_EVERY + 10)])


def test_garbage_cycles_made_during_a_long_recording_are_collected_after_backward(
    clean_collector,
):
    class Cycle:
        pass

    y = tg.tensor(np.array([0.5]), requires_grad=True) * 2.0
    c = Cycle()
    c.me = c
    ref = weakref.ref(c)
    del c  # a garbage cycle, still there when the recording reaches a freeze point
    collector.graph_grew()  # what the dispatcher calls every FREEZE_EVERY recorded nodes
    gc.collect()
    assert ref() is not None  # frozen: the collector does not look at it yet
    y.backward()
    gc.collect()
    assert ref() is None  # thawed by backward, then found


def test_a_graph_never_differentiated_is_thawed_after_max_freezes(clean_collector, monkeypatch):
    monkeypatch.setattr(collector, "MAX_FREEZES", 2)
    collector.graph_grew()
    collector.graph_grew()
    assert collector.freezes() == 2 and gc.get_freeze_count() > 0
    collector.graph_grew()  # the third: everything goes back to the collector
    assert collector.freezes() == 0 and gc.get_freeze_count() == 0


def test_a_program_that_freezes_objects_itself_is_left_alone(clean_collector):
    gc.freeze()
    try:
        collector.graph_grew()
        assert collector.freezes() == 0
        collector.thaw()
        assert gc.get_freeze_count() > 0  # the program's own freeze stays
    finally:
        gc.unfreeze()


def test_a_disabled_collector_is_left_alone(clean_collector):
    gc.disable()
    try:
        collector.graph_grew()
        assert collector.freezes() == 0 and gc.get_freeze_count() == 0
    finally:
        gc.enable()


def test_mul_by_a_number_saves_the_number_not_the_tensor():
    x = tg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    h = x * 3.0
    y = h * 2.0
    assert y.grad_fn.saved == (None, 2.0)
    h.add_(1.0)  # h was not saved: changing it in place does not matter (as in PyTorch)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])
    with pytest.raises(RuntimeError, match="retain_graph"):  # the number was saved and freed
        y.sum().backward()


@pytest.mark.parametrize("needs", [(True, False), (False, True), (True, True)])
def test_mul_div_matmul_save_an_input_only_for_the_other_inputs_gradient(needs):
    rng = np.random.default_rng(0)
    a0, b0 = rng.standard_normal((3, 3)) + 3, rng.standard_normal((3, 3)) + 3
    for fn, kept in (
        (lambda a, b: a * b, {0: (1,), 1: (0,)}),
        (lambda a, b: a / b, {0: (1,), 1: (0, 1)}),
        (lambda a, b: a @ b, {0: (1,), 1: (0,)}),
    ):
        a = tg.tensor(a0, requires_grad=needs[0])
        b = tg.tensor(b0, requires_grad=needs[1])
        y = fn(a, b)
        saved = y.grad_fn.saved
        for i in (0, 1):
            want = any(needs[j] for j in kept[i])
            assert isinstance(saved[i], SavedTensor) == want, (y.grad_fn.name(), i, needs)
        y.sum().backward()
        ta, tb = (__import__("torch").tensor(v, requires_grad=n) for v, n in zip((a0, b0), needs))
        fn(ta, tb).sum().backward()
        for t, ref in ((a, ta), (b, tb)):
            if ref.requires_grad:
                np.testing.assert_allclose(t.grad.numpy(), ref.grad.numpy(), rtol=1e-12)
            else:
                assert t.grad is None


class _Twice(tg.autograd.Function):
    """y = a + b, whose backward hands the *same* fresh array to both inputs."""

    made = []

    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, g):
        out = np.array(g.numpy(), copy=True)
        _Twice.made.append(weakref.ref(out))
        return out, out


def test_a_fresh_gradient_becomes_grad_without_a_copy_a_shared_one_is_copied():
    _Twice.made.clear()
    a = tg.tensor(np.ones(3), requires_grad=True)
    b = tg.tensor(np.ones(3), requires_grad=True)
    _Twice.apply(a, b).backward(tg.tensor(np.full(3, 2.0)))
    made = _Twice.made[0]()
    # the array went to two leaves: the first to run gets a copy (the other's buffer still
    # holds the array), the second keeps the array itself, which nobody else holds by then
    assert a.grad._data is not b.grad._data
    assert made is not None and (made is a.grad._data or made is b.grad._data)
    a.grad._data += 1  # writing into one gradient does not change the other
    np.testing.assert_allclose(b.grad.numpy(), [2.0, 2.0, 2.0])
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 3.0, 3.0])


def test_a_weight_gradient_nobody_else_holds_is_kept_as_computed():
    w = tg.tensor(np.ones((3, 2)), requires_grad=True)
    x = tg.tensor(np.arange(12.0).reshape(4, 3))
    (x @ w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), x.numpy().T @ np.ones((4, 2)))
    first = w.grad._data
    (x @ w).sum().backward()  # the second gradient is added into the first, in place
    assert w.grad._data is first
    np.testing.assert_allclose(w.grad.numpy(), 2 * x.numpy().T @ np.ones((4, 2)))
