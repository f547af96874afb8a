"""Graph passes, each alone and in the default pipeline: same values, fewer nodes, input
graphs untouched, drawable before and after."""

import numpy as np
import pytest

from tinygrad_edu.symbolic import (  # noqa: A004 (compile: the graph compiler)
    Executor,
    Variable,
    apply_op,
    compile,
    cond,
    constant,
    gradients,
    matmul,
    ones_like,
    optimize,
    relu,
    softmax_cross_entropy,
    sum_to,
    topo_sort,
    while_loop,
    zeros_like,
)
from tinygrad_edu.symbolic.static.passes import cse, dce, fold, node_count, simplify
from tinygrad_edu.symbolic.static.passes.dce import SHAPE_ONLY
from tinygrad_edu.viz.traverse import symbolic_graph


def _same_values(before, after, feed, rtol=1e-12):
    for b, a in zip(Executor(before).run(feed), Executor(after).run(feed)):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-14)


def _twins(outputs):
    """Pairs of nodes that compute the same thing (one op, the same inputs and attributes):
    none after CSE. Random ops and inputs are never twins."""
    seen, twins = {}, []
    for n in topo_sort(outputs):
        if n.op.name in ("placeholder", "uniform_random", "gaussian_random") or not n.inputs:
            continue
        key = (n.op.name, tuple(id(i) for i in n.inputs), repr(sorted(n.attrs.items())))
        if key in seen:
            twins.append((seen[key], n))
        seen.setdefault(key, n)
    return twins


def _foldable(outputs):
    """Ops all of whose inputs are constants (constant folding leaves none: it computes
    them)."""
    return [n for n in topo_sort(outputs) if n.inputs and n.op.name != "constant"
            and all(i.op.name == "constant" for i in n.inputs)]  # fmt: skip


def _read_for_shape_only(outputs):
    """Computed nodes whose every reader reads only their shape (DCE reroutes those reads to
    an input of the same shape, so the computation drops out)."""
    readers: dict = {}
    for n in topo_sort(outputs):
        for k, i in enumerate(n.inputs):
            readers.setdefault(i, []).append(k in SHAPE_ONLY.get(n.op.name, ()))
    return [n for n, shape_only in readers.items() if all(shape_only) and n.inputs
            and n not in outputs]  # fmt: skip


def _lean(outputs):
    """The properties the default pipeline gives: no twins, nothing left to fold, nothing
    computed only for its shape."""
    assert not _twins(outputs), "CSE left twins"
    assert not _foldable(outputs), "an op of constants was not folded"
    assert not _read_for_shape_only(outputs), "a computation read only for its shape stayed"


def _snapshot(outputs):
    return [(n, n.inputs, dict(n.attrs), n.name) for n in topo_sort(outputs)]


def _tanh_second_derivative():
    t = Variable("t")
    f = t.tanh()
    f.name = "f"
    (d1,) = gradients(f, [t])
    (d2,) = gradients(d1, [t])
    return t, f, d1, d2


def test_second_derivative_of_tanh_draws_with_well_under_half_the_nodes():
    t, f, d1, d2 = _tanh_second_derivative()
    n = node_count([d2])
    (opt,) = optimize([d2])
    assert node_count([opt]) < n
    _lean([opt])
    boxes = [r for r in symbolic_graph([opt]).nodes if r.kind == "tensor"]
    assert len(boxes) == node_count([opt])
    ts = np.linspace(-3, 3, 13)
    _same_values([d2], [opt], {t: ts})
    (want,) = Executor([d2]).run({t: ts})
    np.testing.assert_allclose(want, -2 * np.tanh(ts) * (1 - np.tanh(ts) ** 2), atol=1e-7)


def test_passes_are_pure_functions():
    t, f, d1, d2 = _tanh_second_derivative()
    before = _snapshot([f, d1, d2])
    for p in (cse, simplify, fold, dce, optimize):
        p([f, d1, d2])
        assert _snapshot([f, d1, d2]) == before, p.__name__


def test_cse_merges_twins_but_not_variables_or_random_ops():
    x, y = Variable("x"), Variable("x")  # two inputs with one name stay two inputs
    a = (x * 2).exp() + (x * 2).exp()
    b = (y * 2).exp()
    r1 = constant(1) + constant(1.0)  # an int one and a float one are different constants
    out = cse([a, b, r1])
    assert not _twins(out)
    assert len([n for n in topo_sort(out) if n.op.name == "placeholder"]) == 2
    assert out[0].inputs[0] is out[0].inputs[1]
    assert out[1].inputs[0].inputs[0] is y
    assert out[2].inputs[0] is not out[2].inputs[1]
    u1 = apply_op("uniform_random", shape=(2,), seed=None)
    u2 = apply_op("uniform_random", shape=(2,), seed=None)
    (s,) = cse([u1 + u2])
    assert s.inputs[0] is not s.inputs[1]
    arr1, arr2 = constant(np.arange(3.0)), constant(np.arange(3.0))
    (c,) = cse([arr1 * arr2])
    assert c.inputs[0] is c.inputs[1]
    _same_values([a, b], out[:2], {x: np.array([0.1, 0.2]), y: np.array([0.3])})


@pytest.mark.parametrize(
    "build, expect",
    [
        (lambda x: x * 1, "x"),
        (lambda x: 1.0 * x, "x"),
        (lambda x: x / 1, "x"),
        (lambda x: x + 0, "x"),
        (lambda x: 0.0 + x, "x"),
        (lambda x: x - 0, "x"),
        (lambda x: 0 - x, "-x"),
        (lambda x: apply_op("neg", -x), "x"),
        (lambda x: ones_like(x.exp()) * x, "x"),
        (lambda x: x * ones_like(x), "x"),
        (lambda x: zeros_like(x) + x, "x"),
        (lambda x: sum_to(x * 2, x), "(x*2)"),
        (lambda x: (-x) * (-x.exp()), "(x*exp(x))"),
        (lambda x: x - (-x.exp()), "(x+exp(x))"),
    ],
)
def test_simplify_rules(build, expect):
    x = Variable("x", dtype="float64")
    y = build(x)
    (s,) = simplify([y])
    assert s.name == expect
    _same_values([y], [s], {x: np.array([[0.5, -1.0, 2.0]])})


def test_simplify_keeps_ones_and_sums_that_change_the_shape():
    x = Variable("x", shape=(3, 1))
    u = Variable("u", shape=(3, 4))
    y = ones_like(u) * x  # broadcasts x to (3, 4): not x
    s = sum_to(u, x)  # a real reduction
    z = x * constant(np.ones((1, 4)))  # a one-valued array that broadcasts
    out = simplify([y, s, z])
    assert [o.op.name for o in out] == ["mul", "sum_to", "mul"]
    _same_values([y, s, z], out, {x: np.arange(3.0).reshape(3, 1), u: np.ones((3, 4))})


def test_fold_computes_constants_and_static_shapes():
    x = Variable("x", shape=(2, 3), dtype="float32")
    y = x * (constant(2.0) * 3 + 1)  # Python numbers stay weak: float32 in, float32 out
    g = sum_to(ones_like(x) * 2.0, x)
    (fy, fg) = fold([y, g])
    assert fy.inputs[1].op.name == "constant" and fy.inputs[1].attrs["value"] == 7.0
    assert isinstance(fy.inputs[1].attrs["value"], float)
    fill = fg.inputs[0].inputs[0]
    assert fill.op.name == "fill_constant" and fill.inputs == ()
    assert fg.op.name == "sum_to" and fg.inputs == (fg.inputs[0],) and fg.attrs["shape"] == (2, 3)
    xv = np.ones((2, 3), np.float32)
    got = Executor([fy, fg]).run({x: xv})
    assert got[0].dtype == np.float32
    _same_values([y, g], [fy, fg], {x: xv})
    u = Variable("u")
    (kept,) = fold([ones_like(u) * 2.0])  # no static shape: nothing to fold
    assert kept.inputs[0].op.name == "ones_like"


def test_dce_drops_what_is_computed_only_for_its_shape():
    x = Variable("x", dtype="float64")
    heavy = (x.exp() * 3).tanh()
    g = ones_like(heavy) * x + zeros_like(heavy.exp())
    (d,) = dce([g])
    assert not any(n.op.name in ("exp", "tanh") for n in topo_sort([d]))
    _same_values([g], [d], {x: np.array([0.5, 1.5])})
    xs = Variable("xs", shape=(2,), dtype="float64")
    (ds,) = dce([sum_to(xs * 2, xs.exp())])  # a static target: no node needed at all
    assert ds.inputs == (ds.inputs[0],) and ds.attrs["shape"] == (2,)


def test_optimize_an_mlp_gradient_graph_same_values_fewer_nodes():
    rng = np.random.default_rng(0)
    X, Y = (
        Variable("X", shape=(8, 5), dtype="float64"),
        Variable("Y", shape=(8, 3), dtype="float64"),
    )
    W1 = Variable("W1", shape=(5, 4), dtype="float64")
    W2 = Variable("W2", shape=(4, 3), dtype="float64")
    loss = softmax_cross_entropy(matmul(relu(matmul(X, W1)), W2), Y)
    outs = [loss, *gradients(loss, [W1, W2])]
    opt = optimize(outs)
    assert node_count(opt) <= node_count(outs)  # static shapes: already lean
    feed = {X: rng.normal(size=(8, 5)), Y: np.eye(3)[rng.integers(0, 3, 8)],
            W1: rng.normal(size=(5, 4)), W2: rng.normal(size=(4, 3))}  # fmt: skip
    _same_values(outs, opt, feed)


@pytest.mark.parametrize(
    "fn",
    [lambda t: t.tanh(), lambda t: t.sigmoid(), lambda t: t * t * t, lambda t: t.log()],
    ids=["tanh", "sigmoid", "cube", "log"],
)
def test_higher_derivatives_shrink(fn):
    t = Variable("t", dtype="float64")
    ds = [fn(t)]
    for _ in range(3):
        ds.append(gradients(ds[-1], [t])[0])
    opt = optimize(ds)
    assert node_count([opt[2]]) < node_count([ds[2]])
    assert node_count([opt[3]]) < node_count([ds[3]])
    _lean(opt)
    _same_values(ds, opt, {t: np.linspace(0.2, 2.0, 5)}, rtol=1e-9)


def test_optimize_leaves_control_flow_working():
    x = Variable("x", shape=(2,), dtype="float64")
    w = Variable("w", shape=(2,), dtype="float64")
    n, v = while_loop(
        lambda n, v: (v * v).sum() < 20.0, lambda n, v: (n + 1, v * w * 1 + 0), (0, x)
    )
    z = cond(n > 1, lambda: (v * 1).sum(), lambda: (v * v).sum())
    outs = [z, *gradients(z, [x, w])]
    opt = optimize(outs)
    for xv in ([0.5, 1.0], [3.0, 4.0]):
        _same_values(outs, opt, {x: np.array(xv), w: np.array([1.5, 2.0])})


@pytest.mark.parametrize("seed", range(12))
def test_optimize_random_expression_graphs_keep_their_values(seed):
    rng = np.random.default_rng(seed)
    a, b = Variable("a"), Variable("b")
    pool = [a, b, constant(1.0), constant(0.0), constant(2.0)]
    unary = [lambda u: -u, lambda u: u.tanh(), lambda u: u.exp() * 0.1, ones_like, zeros_like]
    binary = [lambda u, v: u + v, lambda u, v: u - v, lambda u, v: u * v]
    for _ in range(25):
        if rng.random() < 0.4:
            pool.append(unary[rng.integers(len(unary))](pool[rng.integers(len(pool))]))
        else:
            u, v = (pool[k] for k in rng.integers(len(pool), size=2))
            pool.append(binary[rng.integers(len(binary))](u, v))
    y = pool[-1] + a * b
    outs = [y, *gradients(y.sum(), [a, b])]
    opt = optimize(outs)
    feed = {a: rng.normal(size=(2, 3)), b: rng.normal(size=(2, 3))}
    _same_values(outs, opt, feed, rtol=1e-10)


def test_before_and_after_can_be_drawn():
    import graphviz  # noqa: F401  (installed by make test)

    from tinygrad_edu.viz import draw_symbolic

    t, f, d1, d2 = _tanh_second_derivative()
    before = draw_symbolic([f, d1, d2], legend=False).source
    after = draw_symbolic(optimize([f, d1, d2]), legend=False).source
    assert before.count(" -> ") > after.count(" -> ") > 0  # fewer arrows after


# -- the passes never change a value or a dtype (issue #22) -----------------------------------


def _same_values_and_dtypes(before, after, feed):
    for b, a in zip(Executor(before).run(feed), Executor(after).run(feed)):
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
        np.testing.assert_array_equal(a, b)


def test_optimize_keeps_the_gradient_beside_a_bool_flag():
    flag = Variable("is_test", shape=())
    x = Variable("x", shape=(3,))
    s = cond(flag, lambda a: a * 1.0, lambda a: a * 0.5, x).sum()
    (g,) = gradients(s + s, [x])
    for f in (True, False):
        feed = {flag: np.array(f), x: np.ones(3, np.float32)}
        _same_values_and_dtypes([g], optimize([g]), feed)
        np.testing.assert_array_equal(Executor(optimize([g])).run(feed)[0], 2.0 if f else 1.0)


def test_optimize_keeps_float32_gradients_beside_a_float64_constant():
    x = Variable("x", shape=(3,))
    c = constant(np.array([1.0, 2.0, 3.0]))  # float64, the same shape as x
    w = Variable("w", shape=(3,), dtype="float64")
    (g,) = gradients(x * 2, [x])  # its seed is ones_like(x * 2): float32 ones
    feed = {x: np.ones(3, np.float32), w: np.ones(3)}
    _same_values_and_dtypes([c * w, g], optimize([c * w, g]), feed)
    assert Executor(optimize([c * w, g])).run(feed)[1].dtype == np.float32


@pytest.mark.parametrize(
    "dtype, build",
    [
        ("int64", lambda x: x * 1.0),  # float32, not x
        ("int64", lambda x: x / 1),  # true division: float32
        ("int64", lambda x: x + 0.0),
        ("bool", lambda x: x * 1),  # int64, not x
        ("bool", lambda x: x + 0),
        ("float32", lambda x: ones_like(Variable("u", dtype="float64")) * x),
        ("float32", lambda x: zeros_like(Variable("u", dtype="float64")) + x),
    ],
)
def test_simplify_keeps_what_changes_the_dtype(dtype, build):
    x = Variable("x", dtype=dtype)
    y = build(x)
    (s,) = simplify([y])
    feed = {v: np.array([1, 0, 1]).astype(v.dtype)
            for v in topo_sort([y]) if v.op.name == "placeholder"}  # fmt: skip
    _same_values_and_dtypes([y], [s], feed)
    _same_values_and_dtypes([y], optimize([y]), feed)


def test_dce_and_fold_give_ones_like_the_dtype_of_its_input():
    x = Variable("x", shape=(3,), dtype="int64")
    y = ones_like(x.exp())  # exp of integers is float32: so is the ones
    _same_values_and_dtypes([y], optimize([y]), {x: np.arange(3)})
    assert x.exp().dtype == "float32"  # (not int64: exp computes in the default float)


def test_cse_keeps_zero_and_negative_zero_apart():
    a = Variable("a")
    k1, k2 = 1 / (a * 0.0), 1 / (a * -0.0)
    got = Executor(optimize([k1, k2])).run({a: np.ones(2)})
    np.testing.assert_array_equal(got[0], [np.inf, np.inf])
    np.testing.assert_array_equal(got[1], [-np.inf, -np.inf])


def test_folding_divides_by_zero_as_the_executor_does():
    x = Variable("x", shape=(2,), dtype="float64")
    y = x / 0.0 + constant(1.0) / constant(0.0)  # was: ZeroDivisionError while folding
    with np.errstate(divide="ignore"):
        want = Executor([y]).run({x: np.ones(2)})[0]
        got = Executor(optimize([y])).run({x: np.ones(2)})[0]
    np.testing.assert_array_equal(want, [np.inf, np.inf])
    np.testing.assert_array_equal(got, want)
    assert Executor([constant(-1.0) / constant(0.0)]).run()[0] == -np.inf


def test_a_fetched_constant_is_the_callers_copy():
    arr = np.ones(2)
    c = constant(arr)
    arr[0] = 7.0  # the graph keeps the value it was built with
    for outputs in ([c], [c.reshape(2, 1)], [c[0:1]]):
        ex = Executor(outputs)
        first = ex.run()[0]
        first[...] = 5.0
        np.testing.assert_array_equal(ex.run()[0].ravel()[:1], [1.0])
        fn = compile(outputs)
        fn()[0][...] = 5.0
        np.testing.assert_array_equal(fn()[0].ravel()[:1], [1.0])
