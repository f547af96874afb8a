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
  ``eager/engine_hooks.py`` ``_before_node``.
- A2.5 ``eager/node.py`` ``OpBackward.release``: free saved values unless ``retain_graph``.

The behaviour to match is PyTorch's autograd: dependency counts from the root, the ready node
with the highest ``sequence_nr`` first, fan-in sums in input buffers, hooks in registration
order, saved values freed unless ``retain_graph=True``. Each test runs a probe
(``probes_a2.py``) on your code through the ``run`` fixture and checks what it returns; the
structure of a graph (its nodes and edges) comes from building the same graph here.
"""

import numpy as np
import pytest

from tinygrad_course.grading import compare_gradients, numeric_gradient, random_projection

from . import probes_a2 as probes


def _rng(seed=0):
    return np.random.default_rng(seed)


def _parents(structure) -> dict:
    parents = {k: [] for k in range(len(structure["names"]))}
    for p, c in structure["edges"]:
        parents[c].append(p)
    return parents


# --------------------------------------------------------------------------------------------
# Given code (no solution needed): the forward pass records the graph.


@pytest.mark.task("A2.0")
@pytest.mark.points(1)
def test_forward_values_and_recorded_graph(run):
    """the forward pass records MulBackward0 and AddBackward0"""
    got = run(probes.forward_graph)
    av, bv = _rng(3).standard_normal((2, 3)), _rng(4).standard_normal((2, 3))
    np.testing.assert_allclose(got["y"], av * bv + av)
    assert got["requires_grad"] and not got["is_leaf"] and got["grad_fn"] == "AddBackward0"
    assert got["next"] == "MulBackward0"
    assert got["leaves_are_a_b"] == [True, True], "MulBackward0's edges lead to a's and b's leaves"


@pytest.mark.task("A2.0")
@pytest.mark.points(1)
def test_nothing_is_recorded_without_grad(run):
    """nothing is recorded under no_grad"""
    got = run(probes.nothing_recorded)
    assert got == {"y": [True, False], "z": True}, got


# --------------------------------------------------------------------------------------------
# A2.1 dependency counting


@pytest.mark.task("A2.1")
@pytest.mark.points(2)
def test_dependencies_count_the_edges_into_each_node(run):
    """_count_dependencies: the edges into each node"""
    structure = probes.structure("fan")
    expected = {c: len(ps) for c, ps in _parents(structure).items() if ps}
    deps = run(probes.dependencies, graph="fan")["deps"]
    name = structure["names"]
    wrong = {name[n] if n >= 0 else "not a node": (deps.get(n), expected.get(n))
             for n in set(deps) | set(expected) if deps.get(n) != expected.get(n)}  # fmt: skip
    assert not wrong, f"dependency counts (got, expected) differ for {wrong}"


@pytest.mark.task("A2.1")
@pytest.mark.points(1)
def test_dependency_counting_is_iterative(run):
    """_count_dependencies: a chain 5000 deep"""
    deps = run(probes.dependencies, graph="chain")["deps"]
    assert len(deps) == 5000, "5000 nodes below the root: 4999 MulBackward0 and AccumulateGrad"
    assert set(deps.values()) == {1}, "in a chain every node has one edge into it"


# --------------------------------------------------------------------------------------------
# A2.2 the ready queue and input buffers


def _f(a, b):
    h = np.exp(a @ b)
    return (h * h + h @ b).sum(axis=0) * a.sum()


@pytest.mark.task("A2.2")
@pytest.mark.points(2)
def test_backward_matches_finite_differences(run):
    """backward(): gradients match finite differences"""
    rng = _rng(5)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 3))
    proj = random_projection((3,), seed=1)
    got = run(probes.backward, a=a, b=b, projection=proj)
    numeric = numeric_gradient(lambda v: _f(*v), [a, b], projection=proj)
    compare_gradients(got, numeric, names=["a", "b"], what="backward()")


def _check_schedule(order, structure):
    """Each node runs once, after every node that sends it a gradient, and always the ready
    node created last (highest sequence_nr) first."""
    names, seq, parents = structure["names"], structure["seq"], _parents(structure)
    order = [n for n in order if n != -1]  # the engine's own root node
    assert len(order) == len(set(order)), f"a node ran twice: {[names[n] for n in order]}"
    missing = set(range(len(names))) - set(order)
    assert not missing, f"these nodes never ran: {sorted(names[n] for n in missing)}"
    done = set()
    for n in order:
        late = [names[p] for p in parents[n] if p not in done]
        assert not late, (
            f"{names[n]} ran before {late}, which send it gradients: a node is ready only "
            "when its dependency count reaches 0"
        )
        ready = [m for m in range(len(names))
                 if m not in done and all(p in done for p in parents[m])]  # fmt: skip
        best = max(ready, key=lambda m: seq[m])
        assert seq[n] == seq[best], (
            f"{names[n]} ran while {names[best]} was ready and was created later: the ready "
            "queue pops the highest sequence_nr first"
        )
        done.add(n)


@pytest.mark.task("A2.2")
@pytest.mark.points(2)
def test_each_node_runs_once_after_all_its_gradients_arrived(run):
    """backward(): each node runs once, after all its gradients arrived"""
    structure = probes.structure("fan")
    order = [n for n in run(probes.run_order, graph="fan") if n != -1]
    parents, names = _parents(structure), structure["names"]
    assert len(order) == len(set(order)), f"a node ran twice: {[names[n] for n in order]}"
    position = {n: k for k, n in enumerate(order)}
    for node, ps in parents.items():
        assert node in position, f"{names[node]} never ran"
        for p in ps:
            assert position[p] < position[node], (
                f"{names[node]} ran before {names[p]}, which sends it a gradient: a node is "
                "ready only when its dependency count reaches 0"
            )


@pytest.mark.task("A2.2")
@pytest.mark.points(2)
def test_fan_in_gradients_are_summed_before_the_node_runs(run):
    """backward(): fan-in gradients are summed before the node runs"""
    xv = np.array([0.3, -0.8])
    got = run(probes.fan_in, x=xv)
    assert len(got["received"]) == 1, "ExpBackward0 must run once"
    np.testing.assert_allclose(
        got["received"][0][0], 2 * np.exp(xv) + 3, rtol=1e-12,
        err_msg="ExpBackward0 must receive dL/dh = 2h + 3, the sum of both uses",
    )  # fmt: skip
    np.testing.assert_allclose(got["grad"], (2 * np.exp(xv) + 3) * np.exp(xv), rtol=1e-12)


@pytest.mark.task("A2.2")
@pytest.mark.points(1)
def test_ready_nodes_run_in_reverse_creation_order(run):
    """backward(): the ready node created last runs first"""
    _check_schedule(run(probes.run_order, graph="fan"), probes.structure("fan"))


# --------------------------------------------------------------------------------------------
# A2.3 AccumulateGrad


@pytest.mark.task("A2.3")
@pytest.mark.points(2)
def test_leaf_gradients_land_in_grad(run):
    """AccumulateGrad: leaf gradients land in .grad"""
    av, bv = _rng(6).standard_normal((3, 2)), _rng(7).standard_normal((2, 4))
    got = run(probes.leaf_grads, a=av, b=bv)
    g = 2 * (av @ bv)
    assert got["is_tensor"], ".grad must be a Tensor"
    np.testing.assert_allclose(got["a"], g @ bv.T, rtol=1e-12, err_msg="dL/da")
    np.testing.assert_allclose(got["b"], av.T @ g, rtol=1e-12, err_msg="dL/db")
    assert got["grad_fn_none"] and not got["requires_grad"], ".grad is a plain leaf"


@pytest.mark.task("A2.3")
@pytest.mark.points(2)
def test_gradients_accumulate_across_backward_calls(run):
    """AccumulateGrad: gradients add up across backward() calls"""
    got = run(probes.accumulate)
    np.testing.assert_allclose(
        got["grad"], [4.0, 6.0, 8.0], err_msg="1 + 1 + 2x: gradients add up in .grad"
    )
    assert got["f32"][0] == got["f32"][1], f"a float32 leaf gets a float32 gradient: {got['f32']}"


@pytest.mark.task("A2.3")
@pytest.mark.points(2)
def test_create_graph_makes_grad_differentiable(run):
    """AccumulateGrad: create_graph=True makes .grad differentiable"""
    xv = np.array([0.5, -1.0])
    got = run(probes.create_graph, x=xv)
    assert got["has_graph"], "with create_graph=True, .grad records its own graph"
    np.testing.assert_allclose(got["second"], 6 * xv, err_msg="d/dx sum(3x^2) = 6x")
    np.testing.assert_allclose(
        got["second_texp"], (2 + xv) * np.exp(xv), rtol=1e-10, err_msg="d2/dt2 t e^t"
    )


# --------------------------------------------------------------------------------------------
# A2.4 hooks


@pytest.mark.task("A2.4")
@pytest.mark.points(2)
def test_hook_sees_and_replaces_a_gradient(run):
    """register_hook: the hook sees dL/dh and its result replaces it"""
    xv = np.array([1.0, -2.0])
    got = run(probes.hook_replaces, x=xv)
    assert len(got["seen"]) == 1, f"the hook must run once, ran {len(got['seen'])} times"
    np.testing.assert_allclose(got["seen"][0], [3.0, 3.0], err_msg="the hook receives dL/dh")
    np.testing.assert_allclose(
        got["grad"], 2 * 3 * 2 * xv, err_msg="the hook's return value replaces dL/dh"
    )


@pytest.mark.task("A2.4")
@pytest.mark.points(1)
def test_hooks_run_in_order_and_can_be_removed(run):
    """register_hook: hooks run in order and can be removed"""
    got = run(probes.hooks_in_order)
    assert got["before"] == ["first", ["second", [3.0, 3.0]]], got["before"]
    np.testing.assert_allclose(
        got["grad"], [3.0, 3.0], err_msg="a leaf's hook runs before its gradient is accumulated"
    )
    assert got["after"] == [["second", [2.0, 2.0]]], f"after remove(), only the second: {got}"


# --------------------------------------------------------------------------------------------
# A2.5 retain_graph


@pytest.mark.task("A2.5")
@pytest.mark.points(1)
def test_second_backward_without_retain_graph_fails(run):
    """release: a second backward() without retain_graph fails clearly"""
    got = run(probes.second_backward)
    assert got is not None, "the second backward() must raise"
    assert got[0] == "RuntimeError" and "retain_graph" in got[1], got


@pytest.mark.task("A2.5")
@pytest.mark.points(1)
def test_retain_graph_keeps_saved_values(run):
    """release: retain_graph=True keeps saved values"""
    xv = np.array([1.0, 2.0])
    got = run(probes.retain_graph, x=xv)
    assert got["kept"], "with retain_graph=True nothing is freed"
    np.testing.assert_allclose(got["grad"], 2 * np.exp(xv) * (1 + xv))


@pytest.mark.task("A2.5")
@pytest.mark.points(1)
def test_backward_frees_saved_values(run):
    """release: backward() frees saved values"""
    got = run(probes.frees_saved)
    assert got["before"], "MulBackward0 saves its inputs"
    assert got["after"] == [True, True], (
        "after backward() without retain_graph, a node must drop what it saved"
    )


# BEGIN HIDDEN TESTS
@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A2.1")
@pytest.mark.points(1)
def test_dependency_parents(run, reference):
    """_count_dependencies: each node's parents"""
    got = run(probes.dependencies, graph="fan", want_parents=True)
    expected = {c: sorted(ps) for c, ps in _parents(probes.structure("fan")).items() if ps}
    parents = {c: ps for c, ps in got["parents"].items() if c != 0}
    assert parents == expected
    assert got == reference(probes.dependencies, graph="fan", want_parents=True)


@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A2.2")
@pytest.mark.points(1)
def test_schedule_matches_the_reference(run, reference):
    """backward(): the reference's schedule, node for node"""
    assert run(probes.run_order, graph="fan") == reference(probes.run_order, graph="fan")


@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A2.4")
@pytest.mark.points(1)
def test_hook_on_a_value_used_twice_runs_once_with_the_sum(run):
    """register_hook: on a value used twice, once with the sum"""
    seen = run(probes.hook_on_a_value_used_twice, x=[1.0, 2.0], k1=2.0, k2=5.0)
    assert len(seen) == 1, f"the hook ran {len(seen)} times; it must run once, on the sum"
    np.testing.assert_allclose(seen[0], [7.0, 7.0])


@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A2.5")
@pytest.mark.points(1)
def test_tg_grad_with_retain_graph_then_backward(run):
    """release: tg.grad(retain_graph=True), then backward()"""
    xv = np.array([0.5, 1.5])
    got = run(probes.grad_then_backward, x=xv)
    np.testing.assert_allclose(got["grad"], got["backward"])
    np.testing.assert_allclose(got["grad"], np.exp(xv) * (1 + xv))


# END HIDDEN TESTS
