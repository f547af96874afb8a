r"""Assignment A1: the symbolic engine (graphs of tensors, gradients built as more graph).

Tasks (the functions to write, in the library):

- A1.1 ``symbolic/graph.py``: ``topo_sort`` (iterative depth-first post-order).
- A1.2 ``symbolic/executor.py``: the evaluation loop of ``Executor.run``.
- A1.3 ``ops/arithmetic.py``: the derivative rules (``vjp``) of ``add`` and ``mul``.
- A1.4 ``ops/unary.py``: the derivative rules of ``exp`` and ``log``.
- A1.5 ``ops/linalg.py``: the derivative rule of ``matmul`` (with ``trans_A``/``trans_B``).
- A1.6 ``ops/reductions.py``: the derivative rule of ``sum`` (``reduce_sum``).
- A1.7 ``ops/losses.py``: the derivative rule of ``softmax_cross_entropy``.
- A1.8 ``symbolic/gradients.py``: ``gradients(y, xs)``; gradients of gradients.

Each test runs a probe (``probes_a1.py``) on your code through the ``run`` fixture and checks
the plain data it returns. A derivative rule is checked on its own, with raw numpy arrays,
against central differences of the op's forward computation, so each rule scores
independently of the engine.
"""

import zlib

import numpy as np
import pytest

from tinygrad_course.grading import (
    compare_gradients,
    complex_step_gradient,
    numeric_gradient,
    random_projection,
)
from tinygrad_course.grading.derived import NotDerived, evaluate_rule_graph
from tinygrad_edu.ops import get_op

from . import probes_a1 as probes


def _rng(seed=0):
    return np.random.default_rng(seed)


# numpy versions of the forward computations that take complex arrays (for the complex step)
COMPLEX_FORWARD = {"exp": lambda x: np.exp(x), "log": lambda x: np.log(x)}
# where the extra points of a rule are drawn: mixed magnitudes, where central differences lose
# digits (exp near 30, log near 1e-4, sums of numbers a million apart)
DOMAINS = {
    "real": lambda rng, shape: rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 4, shape),
    "exp": lambda rng, shape: rng.uniform(-30, 30, shape),
    "positive": lambda rng, shape: 10.0 ** rng.uniform(-4, 3, shape),
    "logits": lambda rng, shape: rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 1, shape),
}
EXTRA_POINTS = 4
EXACT = 1e-12  # relative: what a derived rule reaches in float64, finite differences do not
UNSEEN_POINTS = 2  # points where only the rule's graph is evaluated, drawn afresh each run


def check_rule(run, opname, arrays, needs=None, domain="real", fixed=(), **attrs):
    """Run ``opname``'s vjp (your code) on float64 arrays and compare it with central
    differences of its forward computation (the output reduced with a random projection);
    then require what only a derived rule gives.

    Your rule also runs once on graph nodes (as ``gradients()`` runs it); the graph it builds
    comes back as data and is evaluated here (:mod:`tinygrad_course.grading.derived`): it may
    hold no complex number and apply no op to an input moved a little (the complex step and
    finite differences measure a derivative), and at this point, at more random points
    (``domain``) and at points your code never sees it must agree to about 1e-12 with the
    complex step; on arrays, your rule must give what its graph gives. ``fixed``: indices of
    inputs kept as given at the extra points (labels)."""
    graph = _rule_graph(run, opname, [np.shape(a) for a in arrays], needs, attrs)
    _check_rule_at(run, opname, graph, arrays, needs, attrs, numeric=True)
    rng = np.random.default_rng(zlib.crc32(f"{opname} {len(arrays)}".encode()))
    for _ in range(EXTRA_POINTS):
        point = [a if i in fixed else DOMAINS[domain](rng, np.shape(a))
                 for i, a in enumerate(arrays)]  # fmt: skip
        _check_rule_at(run, opname, graph, point, needs, attrs, numeric=False)
    unseen = np.random.default_rng()  # points the submitted code never sees
    for _ in range(UNSEEN_POINTS):
        point = [a if i in fixed else DOMAINS[domain](unseen, np.shape(a))
                 for i, a in enumerate(arrays)]  # fmt: skip
        _check_graph_at(opname, graph, point, needs, attrs, seed=unseen.integers(1 << 31))


_ON_NODES = (
    "a derivative rule is derived by hand from the inputs and the output, not measured from "
    "the forward computation; it computes with Python operators and F.<op>(...), so that it "
    "also runs on graph nodes, as gradients() runs it"
)


def _rule_graph(run, opname, shapes, needs, attrs):
    """The graph ``opname``'s vjp (your code) builds on graph nodes, as plain data."""
    try:
        return run(probes.vjp_graph, op=opname, shapes=shapes, needs=needs, attrs=attrs)
    except AssertionError as e:  # the probe's SubmissionError: the rule failed on nodes
        raise AssertionError(f"{opname}.vjp on graph nodes (shapes {shapes}): {e}\n"
                             f"({_ON_NODES})") from None  # fmt: skip


def _check_graph_at(opname, graph, arrays, needs, attrs, seed=1):
    """The gradients the rule's graph computes at ``arrays``, each checked against the
    complex step to about 1e-12; returns them."""
    op = get_op(opname)
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    out = np.asarray(op.forward(np, *arrays, **attrs))
    g = np.asarray(random_projection(np.shape(out), seed=seed))
    needs = list(needs) if needs is not None else [True] * len(arrays)
    leaves = {f"x{i}": a for i, a in enumerate(arrays)} | {"g": g, "out": out}
    watched = [a if need else None for a, need in zip(arrays, needs)]
    where = f"{opname}.vjp(attrs={attrs}) on graph nodes, input shapes {[a.shape for a in arrays]}"
    try:
        grads = evaluate_rule_graph(graph, leaves, watched, opname)
    except NotDerived as e:
        raise AssertionError(f"{e}\n({_ON_NODES})") from None
    assert len(grads) == len(arrays), f"{where}: one gradient per input, got {len(grads)}"
    forward = COMPLEX_FORWARD.get(opname, lambda *v: op.forward(np, *v, **attrs))
    exact = complex_step_gradient(lambda v: forward(*v), arrays, projection=g)
    for i, (gi, need) in enumerate(zip(grads, needs)):
        if not need:
            assert gi is None, f"{where}: needs[{i}] is False, so gradient {i} must be None"
            continue
        assert gi is not None, f"{where}: gradient {i} is None but needs[{i}] is True"
        assert np.shape(gi) == arrays[i].shape, (
            f"{where}: gradient {i} has shape {np.shape(gi)}, but input {i} has shape "
            f"{arrays[i].shape}"
        )
        scale = float(np.abs(exact[i]).max(initial=0.0))
        compare_gradients([gi], [exact[i]], names=[f"input {i}"], atol=EXACT * scale,
                          rtol=EXACT, what=f"{where}: gradient (exact to 1e-12)")  # fmt: skip
    return grads


def _check_rule_at(run, opname, graph, arrays, needs, attrs, numeric):
    op = get_op(opname)
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    out = op.forward(np, *arrays, **attrs)
    g = np.asarray(random_projection(np.shape(out), seed=1))
    traced = _check_graph_at(opname, graph, arrays, needs, attrs, seed=1)
    got = run(probes.vjp, op=opname, inputs=arrays, g=g, needs=needs, attrs=attrs)
    shapes = [a.shape for a in arrays]
    needs = list(needs) if needs is not None else [True] * len(arrays)
    where = f"{opname}.vjp(attrs={attrs}) with input shapes {shapes}"
    assert got["count"] == len(arrays), (
        f"{where} must return one gradient per input ({len(arrays)}), got "
        f"{got.get('type') or got['count']}"
    )
    assert len(got["grads"]) == len(arrays), f"{where}: one gradient per input"
    forward = COMPLEX_FORWARD.get(opname, lambda *v: op.forward(np, *v, **attrs))
    exact = complex_step_gradient(lambda v: forward(*v), arrays, projection=g)
    numeric = (
        numeric_gradient(lambda v: op.forward(np, *v, **attrs), arrays, projection=g)
        if numeric
        else exact
    )
    for i, (gi, need) in enumerate(zip(got["grads"], needs)):
        if not need:
            assert gi is None, f"{where}: needs[{i}] is False, so gradient {i} must be None"
            continue
        assert gi is not None, f"{where}: gradient {i} is None but needs[{i}] is True"
        assert not isinstance(gi, str), f"{where}: gradient {i} is {gi}"
        assert np.shape(gi) == shapes[i], (
            f"{where}: gradient {i} has shape {np.shape(gi)}, but input {i} has shape "
            f"{shapes[i]}; a gradient has its input's shape (sum broadcast axes with F.sum_to)"
        )
        compare_gradients([gi], [numeric[i]], names=[f"input {i}"], what=f"{where}: gradient")
        scale = float(np.abs(exact[i]).max(initial=0.0))
        compare_gradients([gi], [exact[i]], names=[f"input {i}"], atol=EXACT * scale,
                          rtol=EXACT, what=f"{where}: gradient (exact to 1e-12)")  # fmt: skip
        # the same rule on arrays and on graph nodes: a rule that tells them apart and
        # measures on arrays gives something else here
        compare_gradients([gi], [traced[i]], names=[f"input {i}"], atol=EXACT * scale,
                          rtol=EXACT, what=f"{where}: gradient (as its own graph computes it)")


# --------------------------------------------------------------------------------------------
# Given code (no solution needed): shape rules and forward kernels.


@pytest.mark.task("A1.0")
@pytest.mark.points(1)
def test_static_shapes_come_from_the_shape_rules(run):
    """shape rules: static shapes and a clear matmul error"""
    got = run(probes.static_shapes)
    assert got["h"] == (5, 4), f"x @ W + b should have static shape (5, 4), got {got['h']}"
    assert got["sum0"] == (4,)
    assert got["error"] is not None and got["error"][0] == "ShapeError"
    assert "matmul" in got["error"][1]


@pytest.mark.task("A1.0")
@pytest.mark.points(1)
def test_forward_kernels_match_numpy(run):
    """forward kernels match numpy"""
    rng = _rng()
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    y = np.eye(4)[[0, 3, 1]]
    got = run(probes.forward_kernels, a=a, b=b, y=y)
    np.testing.assert_allclose(got["matmul"], a @ b)
    np.testing.assert_allclose(got["exp"], np.exp(a))
    np.testing.assert_allclose(got["sum1"], a.sum(axis=1))
    p = np.exp(a) / np.exp(a).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(got["sce"], -np.mean(np.sum(y * np.log(p), axis=1)))


# --------------------------------------------------------------------------------------------
# A1.1 topological sort

CANONICAL = [
    ["A", "var", []], ["B", "var", []], ["C", "var", []],
    ["A+B", "add", ["A", "B"]], ["D", "mul", ["A+B", "C"]],
    ["A+C", "add", ["A", "C"]], ["E", "matmul", ["D", "A+C"]],
]  # fmt: skip
WITH_SECOND_ROOT = CANONICAL + [
    ["two", "const", [], 2.0], ["D*2", "mul", ["D", "two"]], ["y2", "exp", ["D*2"]],
]  # fmt: skip


def _inputs(spec) -> dict:
    return {row[0]: list(row[2]) for row in spec}


def _postorder(spec, roots) -> list:
    """Depth-first post-order over a spec, inputs left to right (recursive: small graphs)."""
    inputs, order, seen = _inputs(spec), [], set()

    def visit(name):
        if name not in seen:
            seen.add(name)
            for i in inputs[name]:
                visit(i)
            order.append(name)

    for r in roots:
        visit(r)
    return order


def _reachable(spec, roots) -> set:
    inputs, seen, stack = _inputs(spec), set(roots), list(roots)
    while stack:
        for i in inputs[stack.pop()]:
            if i not in seen:
                seen.add(i)
                stack.append(i)
    return seen


def _assert_valid_order(order, spec, roots):
    expected = _reachable(spec, roots)
    assert None not in order, f"topo_sort returned something that is not a graph node: {order}"
    assert len(order) == len(set(order)), f"topo_sort returned a node twice: {order}"
    assert set(order) == expected, (
        f"topo_sort must return every node the roots depend on, each once; got {order}, "
        f"expected the nodes {sorted(expected)}"
    )
    position, inputs = {n: k for k, n in enumerate(order)}, _inputs(spec)
    for n in order:
        for i in inputs[n]:
            assert position[i] < position[n], f"node {n!r} comes before its input {i!r}: {order}"


@pytest.mark.task("A1.1")
@pytest.mark.points(1)
@pytest.mark.parametrize("case", ["one root", "two roots"])
def test_topo_sort_places_every_node_after_its_inputs(run, case):
    """topo_sort: every node after its inputs, {case}"""
    roots = {"one root": ["E"], "two roots": ["E", "y2"]}[case]
    order = run(probes.topo_order, spec=WITH_SECOND_ROOT, roots=roots)
    _assert_valid_order(order, WITH_SECOND_ROOT, roots)


@pytest.mark.task("A1.1")
@pytest.mark.points(1)
def test_topo_sort_is_depth_first_post_order_left_to_right(run):
    """topo_sort: depth-first post-order, inputs left to right"""
    got = run(probes.topo_order, spec=CANONICAL, roots=["E", "D"])
    expected = _postorder(CANONICAL, ["E", "D"])
    assert got == expected, f"expected the depth-first post-order {expected}, got {got}"


# --------------------------------------------------------------------------------------------
# A1.2 the Executor


@pytest.mark.task("A1.2")
@pytest.mark.points(2)
def test_executor_computes_the_canonical_example(run):
    """Executor.run: the canonical example"""
    rng = _rng(1)
    a, b, c = (rng.standard_normal((3, 3)) for _ in range(3))
    ((e, d),) = run(probes.execute, spec=CANONICAL, outputs=["E", "D"],
                    feeds=[{"A": a, "B": b, "C": c}])  # fmt: skip
    np.testing.assert_allclose(d, (a + b) * c, err_msg="D = (A + B) * C")
    np.testing.assert_allclose(e, ((a + b) * c) @ (a + c), err_msg="E = D @ (A + C)")


EXP_SUM = [
    ["x", "var", []], ["two", "const", [], 2.0], ["2x", "mul", ["x", "two"]],
    ["one", "const", [], 1.0], ["2x+1", "add", ["2x", "one"]], ["e", "exp", ["2x+1"]],
    ["y", "sum0", ["e"]],
]  # fmt: skip


@pytest.mark.task("A1.2")
@pytest.mark.points(1)
def test_executor_runs_again_with_new_values_and_constants(run):
    """Executor.run: one executor, new feeds of new shapes, constants"""
    feeds = [{"x": _rng(2).standard_normal(shape)} for shape in [(3,), (2, 5)]]
    results = run(probes.execute, spec=EXP_SUM, outputs=["y"], feeds=feeds)
    assert len(results) == len(feeds), f"one result per run(), got {len(results)}"
    for feed, (out,) in zip(feeds, results):
        xv = feed["x"]
        np.testing.assert_allclose(out, np.exp(xv * 2 + 1).sum(axis=0), rtol=1e-6)


# --------------------------------------------------------------------------------------------
# A1.3-A1.7 derivative rules, checked on raw arrays


SHAPES = {
    "same shapes": ((3, 4), (3, 4)),
    "broadcasting": ((3, 1), (1, 4)),
    "broadcast to 3-d": ((4,), (2, 3, 4)),
}


@pytest.mark.task("A1.3")
@pytest.mark.points(1)
@pytest.mark.parametrize("opname", ["add", "mul"])
@pytest.mark.parametrize("case", list(SHAPES))
def test_add_and_mul_rules(run, opname, case):
    """{opname}.vjp: {case}"""
    rng = _rng(3)
    check_rule(run, opname, [rng.standard_normal(s) for s in SHAPES[case]])


@pytest.mark.task("A1.3")
@pytest.mark.points(1)
def test_rules_skip_inputs_that_need_no_gradient(run):
    """add.vjp, mul.vjp: None where no gradient is needed"""
    rng = _rng(4)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    check_rule(run, "mul", [a, b], needs=(False, True))
    check_rule(run, "add", [a, b], needs=(True, False))


@pytest.mark.task("A1.4")
@pytest.mark.points(1)
@pytest.mark.parametrize("opname", ["exp", "log"])
def test_exp_and_log_rules(run, opname):
    """{opname}.vjp"""
    domain = {"exp": "exp", "log": "positive"}[opname]
    check_rule(run, opname, [_rng(5).uniform(0.2, 2.0, size=(3, 4))], domain=domain)


@pytest.mark.task("A1.5")
@pytest.mark.points(1)
@pytest.mark.parametrize("trans_A", [False, True])
@pytest.mark.parametrize("trans_B", [False, True])
def test_matmul_rule(run, trans_A, trans_B):
    """matmul.vjp: trans_A={trans_A}, trans_B={trans_B}"""
    rng = _rng(6)
    a = rng.standard_normal((4, 3) if trans_A else (3, 4))
    b = rng.standard_normal((5, 4) if trans_B else (4, 5))
    check_rule(run, "matmul", [a, b], trans_A=trans_A, trans_B=trans_B)


@pytest.mark.task("A1.6")
@pytest.mark.points(1)
@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), ((0, 2), False), (1, True)])
def test_sum_rule(run, axis, keepdims):
    """sum.vjp: axis={axis}, keepdims={keepdims}"""
    x = _rng(7).standard_normal((2, 3, 4))
    check_rule(run, "sum", [x], axis=axis, keepdims=keepdims)


@pytest.mark.task("A1.7")
@pytest.mark.points(2)
def test_softmax_cross_entropy_rule(run):
    """softmax_cross_entropy.vjp"""
    rng = _rng(8)
    logits = rng.standard_normal((5, 4))
    labels = np.eye(4)[rng.integers(0, 4, size=5)]
    check_rule(run, "softmax_cross_entropy", [logits, labels], domain="logits", fixed=(1,))


# --------------------------------------------------------------------------------------------
# A1.8 gradients()


def _check_gradients(run, expression, numpy_f, arrays, constants=(), seed=0):
    """gradients() of an expression against central differences of its numpy version."""
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    out = np.asarray(numpy_f(*arrays, *constants))
    proj = random_projection(out.shape, seed) if out.shape else None
    got = run(probes.symbolic_gradients, expression=expression, arrays=arrays,
              projection=proj, constants=list(constants))  # fmt: skip
    numeric = numeric_gradient(lambda v: numpy_f(*v, *constants), arrays, projection=proj)
    compare_gradients(got, numeric, names=[f"input {i}" for i in range(len(arrays))])


def _np_softmax_cross_entropy(logits, labels):
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -np.mean(np.sum(labels * logp, axis=1))


@pytest.mark.task("A1.8")
@pytest.mark.points(3)
def test_gradients_of_the_canonical_example(run):
    """gradients(): the canonical example"""
    rng = _rng(9)
    arrays = [rng.standard_normal((3, 3)) for _ in range(3)]
    _check_gradients(run, "canonical", lambda A, B, C: ((A + B) * C) @ (A + C), arrays)


@pytest.mark.task("A1.8")
@pytest.mark.points(1)
def test_a_value_used_twice_sums_its_partial_adjoints(run):
    """gradients(): a value used twice sums its partial adjoints"""
    xv = np.array([0.5, -1.5, 2.0])
    (got,) = run(probes.symbolic_gradients, expression="used_twice", arrays=[xv],
                 projection=np.ones(3))  # fmt: skip
    np.testing.assert_allclose(
        got, 2 * xv + np.exp(xv) * (1 + xv), rtol=1e-6,
        err_msg="d/dx (x*x + exp(x)*x): every use of x must count",
    )  # fmt: skip


@pytest.mark.task("A1.8")
@pytest.mark.points(1)
def test_an_input_y_does_not_depend_on_gets_zeros(run):
    """gradients(): zeros for an input y does not depend on"""
    gx, gz = run(probes.symbolic_gradients, expression="ignores_z",
                 arrays=[np.ones(2), np.ones((2, 3))])  # fmt: skip
    np.testing.assert_allclose(gx, [3.0, 3.0])
    assert gz.shape == (2, 3) and not gz.any(), f"dy/dz should be zeros of z's shape, got {gz}"


@pytest.mark.task("A1.8")
@pytest.mark.points(2)
def test_gradients_of_a_classifier_loss(run):
    """gradients(): a classifier's loss"""
    rng = _rng(10)
    X = rng.standard_normal((6, 4))
    Y = np.eye(3)[rng.integers(0, 3, size=6)]
    _check_gradients(
        run, "classifier", lambda W, b, X, Y: _np_softmax_cross_entropy(X @ W + b, Y),
        [rng.standard_normal((4, 3)), rng.standard_normal(3)], constants=(X, Y),
    )  # fmt: skip


@pytest.mark.task("A1.8")
@pytest.mark.points(2)
def test_gradients_of_gradients(run):
    """gradients(): gradients of gradients"""
    xv = np.array([1.0, -2.0, 0.5])
    got = run(probes.symbolic_second_derivatives, expression="cubed", arrays=[xv],
              projection=np.ones(3), second_projections=[np.ones(3)])  # fmt: skip
    np.testing.assert_allclose(got[0], 6 * xv, rtol=1e-6, err_msg="d2/dx2 x^3 = 6x")


# BEGIN HIDDEN TESTS
def _chain(length):
    spec = [["x", "var", []]]
    for k in range(1, length + 1):
        spec += [[f"c{k}", "const", [], 1.0], [f"s{k}", "add", [spec[-1][0], f"c{k}"]]]
    return spec


@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A1.1")
@pytest.mark.points(1)
def test_topo_sort_handles_a_deep_chain(run, reference):
    """topo_sort: a chain 3000 deep"""
    spec = _chain(3000)
    order = run(probes.topo_order, spec=spec, roots=["s3000"])
    assert len(order) == 6001, f"3000 adds: x, 3000 constants and 3000 sums, got {len(order)}"
    _assert_valid_order(order, spec, ["s3000"])
    assert order == reference(probes.topo_order, spec=spec, roots=["s3000"])


@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A1.7")
@pytest.mark.points(1)
def test_softmax_cross_entropy_rule_with_large_logits(run):
    """softmax_cross_entropy.vjp: logits near 800"""
    rng = _rng(11)
    logits = rng.standard_normal((3, 5)) * 50 + 800
    labels = np.eye(5)[[4, 0, 2]]
    got = run(probes.vjp, op="softmax_cross_entropy", inputs=[logits, labels], g=1.0,
              needs=[True, False])  # fmt: skip
    assert len(got["grads"]) == 2 and got["grads"][1] is None, "(d logits, None for labels)"
    gl = got["grads"][0]
    z = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    assert np.all(np.isfinite(gl)), "logits near 800 must not overflow: use a stable softmax"
    np.testing.assert_allclose(gl, (p - labels) / 3, atol=1e-12)
    # and the same from the rule's own graph (derived, not measured: see check_rule)
    graph = _rule_graph(run, "softmax_cross_entropy", [(3, 5), (3, 5)], [True, False], {})
    leaves = {"x0": logits, "x1": labels, "g": np.asarray(1.0),
              "out": np.asarray(get_op("softmax_cross_entropy").forward(np, logits, labels))}
    try:
        traced = evaluate_rule_graph(graph, leaves, [logits, None], "softmax_cross_entropy")
    except NotDerived as e:
        raise AssertionError(f"{e}\n({_ON_NODES})") from None
    assert len(traced) == 2 and traced[1] is None, "the graph: (d logits, None for labels)"
    np.testing.assert_allclose(traced[0], (p - labels) / 3, atol=1e-12)


@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A1.8")
@pytest.mark.points(2)
def test_second_derivatives_of_the_canonical_example(run, reference):
    """gradients(): second derivatives of the canonical example"""
    rng = _rng(12)
    args = dict(
        expression="canonical_times_a",
        arrays=[rng.standard_normal((2, 2)) for _ in range(3)],
        projection=random_projection((2, 2), 0),
        second_projections=[random_projection((2, 2), 1 + i) for i in range(3)],
    )
    got = run(probes.symbolic_second_derivatives, **args)
    compare_gradients(got, reference(probes.symbolic_second_derivatives, **args),
                      names=["A", "B", "C"], what="second derivative")  # fmt: skip


# END HIDDEN TESTS
