"""SPEC-eager.md, item by item. Each test names the item it checks."""

from __future__ import annotations

import gc
import threading
import warnings
import weakref

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu.eager import AccumulateGrad, Observer, observe
from tinygrad_edu.eager.node import MAX_SEQUENCE_NR


def leaf(values, dtype="float64"):
    return tg.tensor(np.asarray(values, dtype=dtype), requires_grad=True)


# -- Tensor state ---------------------------------------------------------------------------
def test_01_leaves():
    a = tg.tensor([1.0, 2.0])
    assert a.is_leaf and a.grad_fn is None
    b = leaf([1.0, 2.0])
    assert b.is_leaf
    c = a * 2  # no input requires grad: a leaf
    assert c.is_leaf and c.grad_fn is None and not c.requires_grad
    with tg.no_grad():
        d = b * 2
    assert d.is_leaf and not d.requires_grad


def test_02_recorded_ops():
    b = leaf([1.0, 2.0])
    y = b * 3
    assert y.requires_grad and not y.is_leaf and y.grad_fn is not None
    with tg.no_grad():
        assert not (b * 3).requires_grad


def test_03_floating_and_leaf_errors():
    i = tg.tensor(np.array([1, 2], dtype=np.int64))
    with pytest.raises(RuntimeError, match="floating"):
        i.requires_grad = True
    with pytest.raises(RuntimeError, match="floating"):
        tg.tensor(np.array([1, 2]), requires_grad=True)
    y = leaf([1.0]) * 2
    with pytest.raises(RuntimeError, match="leaf") as e:
        y.requires_grad = False
    assert "detach()" in str(e.value)


def test_04_grad_only_for_leaves_and_warning():
    a = leaf([1.0, 2.0])
    h = a * 2
    g = h * 3
    g.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [6.0, 6.0])
    with pytest.warns(UserWarning, match="retain_grad"):
        assert h.grad is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert h.grad is None  # warns once only
    a2 = leaf([1.0, 2.0])
    h2 = a2 * 2
    h2.retain_grad()
    (h2 * 3).sum().backward()
    np.testing.assert_allclose(h2.grad.numpy(), [3.0, 3.0])


def test_05_dtypes():
    # PyTorch's defaults: Python ints are int64, floats the default float (float32)
    assert tg.tensor([1, 2]).dtype == np.int64
    assert tg.tensor([1, 2.0]).dtype == np.float32
    assert tg.tensor([[0.5]]).dtype == np.float32
    assert tg.tensor(np.array([1.0], dtype=np.float64)).dtype == np.float64
    assert tg.tensor(np.array([1], dtype=np.int32)).dtype == np.int32
    a = tg.tensor([1.0, 2.0], requires_grad=True)  # float32
    b = tg.tensor(np.array([3.0, 4.0]))  # float64
    y = (a * b).sum()
    assert y.dtype == np.float64
    y.backward()
    assert a.grad.dtype == np.float32
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 4.0])


# -- backward and grad -----------------------------------------------------------------------
def test_06_backward_argument_errors():
    a = leaf([1.0, 2.0])
    y = a * 2
    with pytest.raises(RuntimeError, match="scalar"):
        y.backward()
    with pytest.raises(RuntimeError, match="shape"):
        y.backward(gradient=tg.ones(3))
    y.backward(gradient=tg.tensor(np.array([1.0, 10.0])))
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 20.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        tg.tensor([1.0]).backward()


def test_07_accumulation_and_reset():
    a = leaf([1.0, 2.0])
    for _ in range(3):
        (a * a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 3 * 2 * np.array([1.0, 2.0]))
    a.zero_grad()
    assert a.grad is None
    (a * a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 4.0])
    a.grad = None
    (a * 1).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [1.0, 1.0])


def test_08_fan_in_sums_before_node_runs_once():
    a = leaf([1.0, 2.0])
    h = a.exp()
    y = (h * 2 + h * 3 + h).sum()  # h feeds three ops
    runs = []

    class Count(Observer):
        def node_started(self, task, node, grads):
            runs.append(node.name())

    with observe(Count()):
        y.backward()
    assert runs.count("ExpBackward0") == 1
    np.testing.assert_allclose(a.grad.numpy(), 6 * np.exp([1.0, 2.0]))


def test_09_retain_graph():
    a = leaf([1.0, 2.0])
    y = (a * a).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()
    b = leaf([1.0, 2.0])
    z = (b * b).sum()
    z.backward(retain_graph=True)
    z.backward()
    np.testing.assert_allclose(b.grad.numpy(), [4.0, 8.0])
    # a graph that saved nothing may be run again
    c = leaf([1.0, 2.0])
    w = (c + 1).sum()
    w.backward()
    w.backward()
    np.testing.assert_allclose(c.grad.numpy(), [2.0, 2.0])


def test_10_create_graph_higher_order():
    x = leaf(2.0)
    y = x**4
    (g,) = tg.grad(y, x, create_graph=True)
    assert g.grad_fn is not None
    np.testing.assert_allclose(g.item(), 4 * 8)
    (g2,) = tg.grad(g, x, create_graph=True)
    np.testing.assert_allclose(g2.item(), 12 * 4)
    (g3,) = tg.grad(g2, x)
    np.testing.assert_allclose(g3.item(), 24 * 2)
    # backward(create_graph=True) fills .grad with a differentiable tensor
    z = leaf(3.0)
    (z.exp() * z).backward(create_graph=True)
    assert z.grad.grad_fn is not None
    gz = z.grad
    z.grad = None
    gz.backward()
    np.testing.assert_allclose(z.grad.item(), np.exp(3.0) * (3.0 + 2))


def test_11_grad_function():
    x, y, unused = leaf([1.0, 2.0]), leaf([3.0, 4.0]), leaf([0.0])
    out = (x * y).sum()
    gx, gy = tg.grad(out, (x, y), retain_graph=True)
    np.testing.assert_allclose(gx.numpy(), [3.0, 4.0])
    np.testing.assert_allclose(gy.numpy(), [1.0, 2.0])
    assert x.grad is None and y.grad is None
    with pytest.raises(RuntimeError, match="allow_unused"):
        tg.grad(out, (x, unused), retain_graph=True)
    gx2, gu = tg.grad(out, (x, unused), allow_unused=True, retain_graph=True)
    assert gu is None
    np.testing.assert_allclose(gx2.numpy(), [3.0, 4.0])
    # only the nodes needed for the inputs run
    a, b = leaf([1.0]), leaf([2.0])
    ran = []

    class Rec(Observer):
        def node_started(self, task, node, grads):
            ran.append(node.name())

    pa, pb = a.exp(), b.log()
    with observe(Rec()):
        tg.grad((pa + pb).sum(), a)
    assert "ExpBackward0" in ran and "LogBackward0" not in ran


def test_12_broadcasting_gradient_shapes():
    a = leaf(np.zeros((3, 1)))
    b = leaf(np.zeros((1, 4)))
    (a + b).sum().backward()
    assert a.grad.shape == (3, 1) and b.grad.shape == (1, 4)
    np.testing.assert_allclose(a.grad.numpy(), np.full((3, 1), 4.0))
    np.testing.assert_allclose(b.grad.numpy(), np.full((1, 4), 3.0))


# -- modes -------------------------------------------------------------------------------------
def test_13_grad_modes_nest_decorate_and_are_per_thread():
    a = leaf([1.0])
    with tg.no_grad():
        assert not (a * 2).requires_grad
        with tg.enable_grad():
            assert (a * 2).requires_grad
        assert not (a * 2).requires_grad
    assert (a * 2).requires_grad

    @tg.no_grad()
    def f(x):
        return x * 2

    assert not f(a).requires_grad and tg.is_grad_enabled()
    with tg.set_grad_enabled(False):
        assert not (a * 2).requires_grad
    assert tg.is_grad_enabled()
    tg.set_grad_enabled(False)
    assert not tg.is_grad_enabled()
    tg.set_grad_enabled(True)
    seen = {}
    with tg.no_grad():
        t = threading.Thread(target=lambda: seen.update(flag=tg.is_grad_enabled()))
        t.start()
        t.join()
    assert seen["flag"] is True


def test_14_detach_shares_data_and_version():
    a = leaf([1.0, 2.0])
    y = a * 2
    d = y.detach()
    assert d.is_leaf and not d.requires_grad
    assert np.shares_memory(d._data, y._data)
    d.add_(1.0)
    assert y._version == d._version == 1
    np.testing.assert_allclose(y.detach().numpy(), [3.0, 5.0])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the NaN is made on purpose
def test_15_detect_anomaly():
    a = leaf([0.0, 1.0])
    with tg.detect_anomaly():
        y = (a.log() * 0).sum()  # 0 * -inf -> nan in backward of log at 0
        with pytest.raises(RuntimeError, match="nan") as e:
            y.backward()
    assert "Backward" in str(e.value)

    class Bad(tg.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")

    with tg.detect_anomaly():
        z = Bad.apply(leaf([1.0])).sum()
        with pytest.raises(ValueError, match="forward call that created") as e:
            z.backward()
    assert "test_spec.py" in str(e.value)


# -- in-place and versions ---------------------------------------------------------------------
def test_16_inplace_versions_and_lazy_error():
    a = leaf([1.0, 2.0])
    h = a * 1
    y = h * h  # saves h
    assert h._version == 0
    h.add_(1.0)
    assert h._version == 1
    with pytest.raises(RuntimeError, match="in-place") as e:
        y.sum().backward()
    msg = str(e.value)
    assert "MulBackward0" in msg and "version 0" in msg and "version 1" in msg
    # lazy: changing a value nothing saved is fine
    b = leaf([1.0, 2.0])
    k = b + 1  # add saves nothing
    out = k.sum()
    k.mul_(5.0)
    out.backward()
    np.testing.assert_allclose(b.grad.numpy(), [1.0, 1.0])
    for op in ("add_", "sub_", "mul_", "div_"):
        t = tg.tensor([1.0])
        getattr(t, op)(2.0)
        assert t._version == 1
    t = tg.tensor([1.0, 2.0])
    t.zero_()
    t.fill_(3.0)
    t += 1
    t -= 1
    t *= 2
    t /= 2
    assert t._version == 6
    np.testing.assert_allclose(t.numpy(), [3.0, 3.0])


def test_17_inplace_on_leaf_requiring_grad():
    a = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="leaf"):
        a.add_(1.0)
    with pytest.raises(RuntimeError, match="leaf"):
        a += 1
    with tg.no_grad():
        a.sub_(0.5)
    np.testing.assert_allclose(a.detach().numpy(), [0.5, 1.5])
    assert a._version == 1


def test_18_inplace_on_non_leaf_rebases_grad_fn():
    a = leaf([1.0, 2.0])
    h = a * 3
    before = h.grad_fn
    h.mul_(h.detach() * 0 + 2)
    assert h.grad_fn is not before and h.grad_fn.name() == "MulBackward0"
    assert h.grad_fn.next_functions[0][0] is before
    h.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [6.0, 6.0])
    b = leaf([1.0, 2.0])
    k = b * 2  # MulBackward0 saved b, not k: changing k is fine
    k.add_(1.0)
    assert k.grad_fn.name() == "AddBackward0"
    k.sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), [2.0, 2.0])
    e = b.exp()  # ExpBackward0 saved its output, so changing it in place is caught
    e.add_(1.0)
    with pytest.raises(RuntimeError, match="ExpBackward0: its output.*in-place"):
        e.sum().backward()


# -- hooks ----------------------------------------------------------------------------------
def test_19_tensor_hooks():
    a = leaf([1.0, 2.0])
    h = a * 2
    calls = []
    h.register_hook(lambda g: calls.append("first") or g * 10)
    handle = h.register_hook(lambda g: calls.append("second"))
    a.register_hook(lambda g: calls.append(("leaf", g.numpy().tolist())))
    h.sum().backward()
    assert calls == ["first", "second", ("leaf", [20.0, 20.0])]
    np.testing.assert_allclose(a.grad.numpy(), [20.0, 20.0])
    handle.remove()
    calls.clear()
    a.grad = None
    h2 = a * 2
    h2.register_hook(lambda g: calls.append("x"))
    h2.sum().backward()
    assert calls == ["x", ("leaf", [2.0, 2.0])]
    with pytest.raises(RuntimeError, match="does not require grad"):
        tg.tensor([1.0]).register_hook(lambda g: g)


def test_20_node_hooks_and_order():
    a = leaf([1.0, 2.0])
    h = a * 2
    y = h.exp()
    order = []
    h.register_hook(lambda g: order.append("tensor hook"))
    h.grad_fn.register_prehook(lambda go: order.append("pre-hook"))
    h.retain_grad()
    h.grad_fn.register_hook(lambda gi, go: order.append("post-hook"))

    class Watch(Observer):
        def node_started(self, task, node, grads):
            if node is h.grad_fn:
                order.append(f"node (retained={h._grad is not None})")

    with observe(Watch()):
        y.sum().backward()
    assert order == ["tensor hook", "pre-hook", "node (retained=True)", "post-hook"]
    # a pre-hook may replace the gradient, a post-hook the results
    b = leaf([1.0])
    m = b * 5
    m.grad_fn.register_prehook(lambda go: (go[0] * 2,))
    m.grad_fn.register_hook(lambda gi, go: (gi[0] + 1, gi[1]))
    m.sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), [11.0])


# -- custom functions -------------------------------------------------------------------------
class Square(tg.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        return x * x * k

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * x * ctx.k, None


def test_21_22_custom_function():
    x = leaf([1.0, 3.0])
    y = Square.apply(x, 2.0)
    assert y.grad_fn.name() == "SquareBackward"
    assert y.grad_fn.next_functions[1] == (None, 0)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 12.0])

    class WrongCount(tg.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g, g

    with pytest.raises(RuntimeError, match=r"WrongCountBackward.*incorrect number of gradients "
                       r"\(expected 1, got 2\)"):
        WrongCount.apply(leaf([1.0])).sum().backward()

    class WrongShape(tg.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match=r"WrongShape.*input 0"):
        WrongShape.apply(leaf([1.0, 2.0])).backward()


def test_23_ctx_features():
    x = leaf([1.0, 2.0])
    w = tg.tensor([5.0, 6.0])

    class Probe(tg.Function):
        @staticmethod
        def forward(ctx, a, b):
            assert ctx.needs_input_grad == (True, False)
            out, idx = a * b, a * 0
            ctx.mark_non_differentiable(idx)
            ctx.set_materialize_grads(True)
            ctx.save_for_backward(a)
            return out, idx

        @staticmethod
        def backward(ctx, g_out, g_idx):
            assert g_idx is not None and float(g_idx.sum().item()) == 0.0  # materialized zeros
            (a,) = ctx.saved_tensors
            return g_out * 5, None

    out, idx = Probe.apply(x, w)
    assert out.requires_grad and not idx.requires_grad
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0])
    # saved tensors are version-checked
    h = x * 1
    r = Square.apply(h, 1.0)
    h.add_(1)
    with pytest.raises(RuntimeError, match="in-place"):
        r.sum().backward()

    class AddOneInPlace(tg.Function):
        @staticmethod
        def forward(ctx, t):
            t._data[...] = t._data + 1
            ctx.mark_dirty(t)
            return t

        @staticmethod
        def backward(ctx, g):
            return g

    z = x * 1
    v0 = z._version
    z2 = AddOneInPlace.apply(z)
    assert z2 is z and z._version == v0 + 1 and z.grad_fn.name() == "AddOneInPlaceBackward"


# -- graph and engine --------------------------------------------------------------------------
def test_24_25_names_and_next_functions():
    a, b = leaf([[1.0, 2.0]]), leaf([[3.0], [4.0]])
    c = tg.tensor([[1.0, 1.0]])
    exprs = {
        "AddBackward0": a + c,
        "SubBackward0": a - c,
        "MulBackward0": a * c,
        "DivBackward0": a / (c + 1),
        "MmBackward0": a @ b,
        "SumBackward0": a.sum(),
        "ExpBackward0": a.exp(),
    }
    for name, t in exprs.items():
        assert t.grad_fn.name() == name
    y = a * c
    (n0, i0), (n1, i1) = y.grad_fn.next_functions
    assert isinstance(n0, AccumulateGrad) and n0.variable is a and i0 == 0
    assert n0.next_functions == ()
    assert (n1, i1) == (None, 0)
    z = (a * 2) * (a * 3)
    assert z.grad_fn.next_functions[0][0].name() == "MulBackward0"
    assert (a * 2 + 1).grad_fn.next_functions[1] == (None, 0)


def test_26_sequence_numbers_and_ready_order():
    a = leaf([1.0])
    p = a * 2
    q = a * 3
    assert q.grad_fn.sequence_nr > p.grad_fn.sequence_nr
    y = p + q
    order = []

    class Rec(Observer):
        def begin(self, task):
            # dependencies are counted before anything runs
            order.append(("deps", task.dependencies[p.grad_fn], task.dependencies[q.grad_fn]))

        def node_started(self, task, node, grads):
            order.append(node.sequence_nr)

    with observe(Rec()):
        y.backward()
    seqs = [o for o in order if isinstance(o, int)]
    assert order[0] == ("deps", 1, 1)
    # q's node was created after p's, so it runs first
    assert seqs.index(q.grad_fn.sequence_nr) < seqs.index(p.grad_fn.sequence_nr)
    # AccumulateGrad has the largest number of all (as in PyTorch), so it runs when ready
    acc = p.grad_fn.next_functions[0][0]
    assert acc.sequence_nr == MAX_SEQUENCE_NR == 2**64 - 1
    assert seqs[0] == max(s for s in seqs if s != MAX_SEQUENCE_NR)  # the root
    assert seqs[-1] == MAX_SEQUENCE_NR  # a's node waits for both of a's uses


def test_27_deep_chain():
    x = leaf([1.0, 2.0])
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0])
    ref = weakref.ref(y.grad_fn)
    del y
    gc.collect()
    assert ref() is None


def test_28_no_reference_cycles():
    gc.collect()
    gc.disable()
    try:
        a = leaf([1.0, 2.0])
        y = (a.exp() * a).tanh().sigmoid().softmax()  # ops that save their outputs
        node = weakref.ref(y.grad_fn)
        out_ref = weakref.ref(y)
        del y
        assert out_ref() is None and node() is None  # freed by reference counting alone
    finally:
        gc.enable()


# -- Paddle names ----------------------------------------------------------------------------
def test_29_paddle_names():
    a = tg.tensor([1.0, 2.0])
    assert a.stop_gradient
    a.stop_gradient = False
    assert a.requires_grad
    (a * a).sum().backward()
    g = a.grad
    a.clear_gradient()
    assert a.grad is g and float(a.grad.sum().item()) == 0.0
    a.clear_gradient(set_to_zero=False)
    assert a.grad is None
    h = a * 2
    h.retain_grads()
    h.sum().backward()
    np.testing.assert_allclose(h.grad.numpy(), [1.0, 1.0])


def test_the_anomaly_trace_shows_the_callers_frames_not_the_librarys():
    """The forward call that created a node ends at the learner's line: the op functions'
    frames (``tinygrad_edu/ops/...``, a path on the machine that ran it) are left out."""
    import numpy as np

    x = leaf([0.0, 4.0])
    with np.errstate(all="ignore"), tg.detect_anomaly():
        y = (x**0.5 * tg.tensor([0.0, 1.0])).sum()  # the line the trace must end at
        with pytest.raises(RuntimeError, match="PowBackward0") as e:
            y.backward()
    trace = str(e.value).split("The forward call that created PowBackward0:")[1]
    assert "tinygrad_edu" not in trace, trace
    assert trace.rstrip().splitlines()[-1].strip().startswith("y = (x**0.5"), trace
