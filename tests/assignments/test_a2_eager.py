r"""Assignment A2: the eager engine (backward ops are the nodes, PyTorch's design).

Tasks (the functions to write, in the library):

- A2.1 ``eager/engine.py``: ``_count_dependencies`` (the edges into each node, iteratively).
- A2.2 ``eager/engine.py``: the gradient delivery in ``_evaluate`` (which every ready queue
  runs): put each gradient a node returns into the next node's input buffer (summing
  gradients that fan in), count down its dependencies, push it on the ready queue when the
  count reaches zero.
- A2.3 ``eager/node.py`` ``AccumulateGrad.apply`` and ``eager/tensor.py``
  ``Tensor._accumulate``: add a leaf's gradient into ``.grad``.
- A2.4 ``eager/tensor.py`` ``Tensor.register_hook`` and the tensor-hook loop of
  ``eager/engine.py`` ``_before_node``.
- A2.5 ``eager/node.py`` ``OpBackward.release``: free saved values unless ``retain_graph``.

The behaviour to match is PyTorch's autograd: dependency counts from the root, the ready node
with the highest ``sequence_nr`` first, fan-in sums in input buffers, hooks in registration
order, saved values freed unless ``retain_graph=True``.
"""

import heapq

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu.eager import Observer, observe
from tinygrad_edu.eager.engine import _count_dependencies
from tinygrad_edu.grading import gradcheck, gradgradcheck


def _t(a, requires_grad=True):
    return tg.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def _rng(seed=0):
    return np.random.default_rng(seed)


def _reachable(root):
    """Every node reachable from ``root`` and, per node, the nodes with an edge into it."""
    parents, seen, stack = {}, {root}, [root]
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            parents.setdefault(nxt, []).append(node)
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen, parents


class _Recorder(Observer):
    """Remembers the order in which nodes start and the gradients they receive."""

    def __init__(self):
        self.started, self.received = [], {}

    def node_started(self, task, node, grads):
        self.started.append(node)
        self.received[node] = [None if g is None else np.array(g) for g in grads]


def _fan_graph():
    a, b = _t(_rng(1).standard_normal((2, 3))), _t(_rng(2).standard_normal((3, 2)))
    h = (a * 2).exp()  # h feeds three ops
    loss = ((h @ b).tanh().sum() + (h * h).sum()) * (h.sum() + 1)
    return a, b, h, loss


# --------------------------------------------------------------------------------------------
# Given code (no solution needed): the forward pass records the graph.


@pytest.mark.task("A2.0")
@pytest.mark.points(1)
def test_forward_values_and_recorded_graph():
    av, bv = _rng(3).standard_normal((2, 3)), _rng(4).standard_normal((2, 3))
    a, b = _t(av), _t(bv)
    y = a * b + a
    np.testing.assert_allclose(y.numpy(), av * bv + av)
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "AddBackward"
    mul_node, _ = y.grad_fn.next_functions[0]
    assert mul_node.name() == "MulBackward"
    leaves = [n.variable for n, _ in mul_node.next_functions]
    assert leaves[0] is a and leaves[1] is b, "MulBackward's edges lead to a's and b's leaves"


@pytest.mark.task("A2.0")
@pytest.mark.points(1)
def test_nothing_is_recorded_without_grad():
    a = _t([1.0, 2.0])
    with tg.no_grad():
        y = a * 3
    assert y.grad_fn is None and not y.requires_grad
    z = _t([1.0], requires_grad=False).exp()
    assert z.grad_fn is None


# --------------------------------------------------------------------------------------------
# A2.1 dependency counting


@pytest.mark.task("A2.1")
@pytest.mark.points(2)
def test_dependencies_count_the_edges_into_each_node():
    *_, loss = _fan_graph()
    root = loss.grad_fn
    nodes, parents = _reachable(root)
    deps, _ = _count_dependencies(root, False)
    expected = {n: len(p) for n, p in parents.items()}
    wrong = {n.name(): (deps.get(n), k) for n, k in expected.items() if deps.get(n) != k}
    assert not wrong, f"dependency counts (got, expected) differ for {wrong}"
    assert set(deps) == set(expected), "count every node reachable from the root, and only those"


@pytest.mark.task("A2.1")
@pytest.mark.points(1)
def test_dependency_counting_is_iterative():
    x = _t([0.5])
    y = x
    for _ in range(5000):
        y = y * 1.0
    deps, _ = _count_dependencies(y.grad_fn, False)
    assert len(deps) == 5000, "5000 nodes below the root: 4999 MulBackward and AccumulateGrad"


# --------------------------------------------------------------------------------------------
# A2.2 the ready queue and input buffers


@pytest.mark.task("A2.2")
@pytest.mark.points(2)
def test_backward_matches_finite_differences():
    rng = _rng(5)
    a, b = _t(rng.standard_normal((2, 3))), _t(rng.standard_normal((3, 3)))

    def f(a, b):
        h = (a @ b).exp()
        return (h * h + h @ b).sum(axis=0) * a.sum()

    gradcheck(f, [a, b])


@pytest.mark.task("A2.2")
@pytest.mark.points(2)
def test_each_node_runs_once_after_all_its_gradients_arrived():
    a, b, h, loss = _fan_graph()
    _, parents = _reachable(loss.grad_fn)
    rec = _Recorder()
    with observe(rec):
        loss.backward()
    names = [n.name() for n in rec.started]
    assert len(rec.started) == len(set(rec.started)), f"a node ran twice: {names}"
    position = {n: k for k, n in enumerate(rec.started)}
    for node, ps in parents.items():
        assert node in position, f"{node.name()} never ran"
        for p in ps:
            assert position[p] < position[node], (
                f"{node.name()} ran before {p.name()}, which sends it a gradient: a node is "
                "ready only when its dependency count reaches 0"
            )


@pytest.mark.task("A2.2")
@pytest.mark.points(2)
def test_fan_in_gradients_are_summed_before_the_node_runs():
    xv = np.array([0.3, -0.8])
    x = _t(xv)
    h = x.exp()
    loss = (h * h + h * 3).sum()  # h feeds two MulBackward nodes
    rec = _Recorder()
    with observe(rec):
        loss.backward()
    (grad_h,) = rec.received[h.grad_fn]
    np.testing.assert_allclose(
        grad_h,
        2 * np.exp(xv) + 3,
        rtol=1e-12,
        err_msg="ExpBackward must receive dL/dh = 2h + 3, the sum of both uses",
    )
    np.testing.assert_allclose(x.grad.numpy(), (2 * np.exp(xv) + 3) * np.exp(xv), rtol=1e-12)


@pytest.mark.task("A2.2")
@pytest.mark.points(1)
def test_ready_nodes_run_in_reverse_creation_order():
    *_, loss = _fan_graph()
    root = loss.grad_fn
    _, parents = _reachable(root)
    # the reference schedule: counts from the root, then the highest sequence_nr first
    pending = {n: len(p) for n, p in parents.items()}
    ready, expected = [(-root.sequence_nr, root)], []
    while ready:
        node = heapq.heappop(ready)[1]
        expected.append(node)
        for nxt, _ in node.next_functions:
            if nxt is not None:
                pending[nxt] -= 1
                if pending[nxt] == 0:
                    heapq.heappush(ready, (-nxt.sequence_nr, nxt))
    rec = _Recorder()
    with observe(rec):
        loss.backward()
    got = [(n.name(), n.sequence_nr) for n in rec.started if n.name() != "GraphRoot"]
    want = [(n.name(), n.sequence_nr) for n in expected]
    assert got == want, f"nodes ran in the order {got}; expected {want}"


# --------------------------------------------------------------------------------------------
# A2.3 AccumulateGrad


@pytest.mark.task("A2.3")
@pytest.mark.points(2)
def test_leaf_gradients_land_in_grad():
    av, bv = _rng(6).standard_normal((3, 2)), _rng(7).standard_normal((2, 4))
    a, b = _t(av), _t(bv)
    y = a @ b
    (y * y).sum().backward()
    g = 2 * (av @ bv)
    assert isinstance(a.grad, tg.Tensor), f".grad must be a Tensor, got {type(a.grad)}"
    np.testing.assert_allclose(a.grad.numpy(), g @ bv.T, rtol=1e-12, err_msg="dL/da")
    np.testing.assert_allclose(b.grad.numpy(), av.T @ g, rtol=1e-12, err_msg="dL/db")
    assert a.grad.grad_fn is None and not a.grad.requires_grad


@pytest.mark.task("A2.3")
@pytest.mark.points(2)
def test_gradients_accumulate_across_backward_calls():
    x = _t([1.0, 2.0, 3.0])
    x.sum().backward()  # its gradient is a broadcast of a scalar: .grad must own its memory
    x.sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(
        x.grad.numpy(), [4.0, 6.0, 8.0], err_msg="1 + 1 + 2x: gradients add up in .grad"
    )
    f32 = tg.tensor([1.0, 2.0], requires_grad=True)
    (f32 * 2).sum().backward()
    assert f32.grad.dtype == f32.dtype, "a float32 leaf gets a float32 gradient"


@pytest.mark.task("A2.3")
@pytest.mark.points(2)
def test_create_graph_makes_grad_differentiable():
    x = _t([0.5, -1.0])
    (x * x * x).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None, "with create_graph=True, .grad records its own graph"
    (gx,) = tg.grad(x.grad.sum(), x)
    np.testing.assert_allclose(gx.numpy(), 6 * x.numpy(), err_msg="d/dx sum(3x^2) = 6x")
    gradgradcheck(lambda t: (t.exp() * t).sum(), [_t([0.2, 0.7])])


# --------------------------------------------------------------------------------------------
# A2.4 hooks


@pytest.mark.task("A2.4")
@pytest.mark.points(2)
def test_hook_sees_and_replaces_a_gradient():
    xv = np.array([1.0, -2.0])
    x = _t(xv)
    h = x * x
    seen = []

    def double(g):
        seen.append(g.numpy().copy())
        return g * 2

    h.register_hook(double)
    (h * 3).sum().backward()
    assert len(seen) == 1, f"the hook must run once, ran {len(seen)} times"
    np.testing.assert_allclose(seen[0], [3.0, 3.0], err_msg="the hook receives dL/dh")
    np.testing.assert_allclose(
        x.grad.numpy(), 2 * 3 * 2 * xv, err_msg="the hook's return value replaces dL/dh"
    )


@pytest.mark.task("A2.4")
@pytest.mark.points(1)
def test_hooks_run_in_order_and_can_be_removed():
    x = _t([1.0, 2.0])
    calls = []
    first = x.register_hook(lambda g: calls.append("first") or g + 1)
    x.register_hook(lambda g: calls.append(("second", g.numpy().tolist())))
    (x * 2).sum().backward()
    assert calls == ["first", ("second", [3.0, 3.0])], calls
    np.testing.assert_allclose(
        x.grad.numpy(), [3.0, 3.0], err_msg="a leaf's hook runs before its gradient is accumulated"
    )
    first.remove()
    calls.clear()
    x.grad = None
    (x * 2).sum().backward()
    assert calls == [("second", [2.0, 2.0])], f"after remove(), only the second hook: {calls}"


# --------------------------------------------------------------------------------------------
# A2.5 retain_graph


@pytest.mark.task("A2.5")
@pytest.mark.points(1)
def test_second_backward_without_retain_graph_fails():
    x = _t([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()


@pytest.mark.task("A2.5")
@pytest.mark.points(1)
def test_retain_graph_keeps_saved_values():
    xv = np.array([1.0, 2.0])
    x = _t(xv)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    assert y.grad_fn.next_functions[0][0].saved, "with retain_graph=True nothing is freed"
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(xv) * (1 + xv))


@pytest.mark.task("A2.5")
@pytest.mark.points(1)
def test_backward_frees_saved_values():
    x = _t([1.0, 2.0])
    z = x.exp()
    y = z * x
    node = y.grad_fn
    assert node.saved, "MulBackward saves its inputs"
    y.sum().backward()
    assert node.saved == () and node.saved_out is None, (
        "after backward() without retain_graph, a node must drop what it saved"
    )


# BEGIN HIDDEN TESTS
@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A2.1")
@pytest.mark.points(1)
def test_dependency_parents():
    *_, loss = _fan_graph()
    root = loss.grad_fn
    _, parents = _reachable(root)
    _, got = _count_dependencies(root, True)
    for node, ps in parents.items():
        assert sorted(p.sequence_nr for p in got[node]) == sorted(p.sequence_nr for p in ps), (
            f"parents of {node.name()}"
        )


@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A2.4")
@pytest.mark.points(1)
def test_hook_on_a_value_used_twice_runs_once_with_the_sum():
    x = _t([1.0, 2.0])
    h = x * 1.0
    seen = []
    h.register_hook(lambda g: seen.append(g.numpy().copy()))
    (h * 2 + h * 5).sum().backward()
    assert len(seen) == 1, f"the hook ran {len(seen)} times; it must run once, on the sum"
    np.testing.assert_allclose(seen[0], [7.0, 7.0])


@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A2.5")
@pytest.mark.points(1)
def test_tg_grad_with_retain_graph_then_backward():
    x = _t([0.5, 1.5])
    y = (x * x.exp()).sum()
    (g1,) = tg.grad(y, x, retain_graph=True)
    y.backward()
    np.testing.assert_allclose(g1.numpy(), x.grad.numpy())


# END HIDDEN TESTS
