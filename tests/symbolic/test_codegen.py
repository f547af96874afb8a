"""compile(): straight-line Python source over xp, the same values as the Executor."""

import numpy as np
import pytest

from tinygrad_edu.backend import cuda_available
from tinygrad_edu.ops import ShapeError, get_op
from tinygrad_edu.symbolic import (
    Executor,
    Variable,
    compile,
    cond,
    constant,
    gradients,
    matmul,
    relu,
    softmax_cross_entropy,
    while_loop,
)
from tinygrad_edu.symbolic.static import codegen
from tinygrad_edu.symbolic.static.codegen import TEMPLATES

needs_gpu = [pytest.mark.gpu, pytest.mark.skipif(not cuda_available(), reason="needs a GPU")]


def _agree(outs, feed, **kw):
    fn = compile(outs, **kw)
    for g, w in zip(fn(feed), Executor(outs, kw.get("device", "cpu")).run(feed)):
        np.testing.assert_array_equal(g, w)
        assert np.asarray(g).dtype == np.asarray(w).dtype
    return fn


@pytest.mark.parametrize("name", sorted(set(TEMPLATES) - {"tuple_get"}))
def test_each_template_computes_what_the_op_computes(name):
    op = get_op(name)
    rng = np.random.default_rng(0)
    args = [rng.uniform(-2.0, 2.0, size=(3, 4)).astype(np.float32) for _ in range(op.arity)]
    if name in ("log", "pow", "sqrt"):
        args = [np.abs(a) + 0.5 for a in args]
    attrs = {
        "pow": {"exponent": 3},
        "sum": {"axis": (1,), "keepdims": True},
        "mean": {"axis": 0, "keepdims": False},
    }.get(name, {})
    names = [f"a{k}" for k in range(op.arity)]
    source = codegen.render(name, names, attrs, "float32")
    assert source == TEMPLATES[name].format(*names, **attrs) or name == "pow"
    got = eval(source, {"xp": np, **dict(zip(names, args))})
    want = op.forward(np, *args, **attrs)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype


def test_source_is_straight_line_code_with_dead_values_deleted():
    x = Variable("x", shape=(4,), dtype="float32")
    y = ((x * 1.01 + 0.01).tanh() * -2.0) ** 2
    fn = _agree([y, *gradients(y.sum(), [x])], {x: np.linspace(-1, 1, 4, dtype=np.float32)})
    body = fn.source.splitlines()
    assert body[0] == "def compiled(feed_dict):"
    assert not any(w in fn.source for w in ("for ", "while ", "if "))
    assert any(line.strip().startswith("del ") for line in body)
    assert "xp.tanh(" in fn.source and "* (-2.0)" in fn.source
    assert "_feed(xp, _node_x, feed_dict)" in fn.source
    no_del = compile([y], free_dead=False)
    assert "del " not in no_del.source


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=needs_gpu)])
def test_mlp_loss_and_gradients_match_the_executor(device):
    rng = np.random.default_rng(1)
    X, Y = Variable("x", (6, 5), "float32"), Variable("y", (6, 3), "float32")
    W1, W2 = Variable("W1", (5, 4), "float32"), Variable("W2", (3, 4), "float32")
    loss = softmax_cross_entropy(matmul(relu(matmul(X, W1)), W2, trans_B=True), Y)
    outs = [loss, *gradients(loss, [W1, W2])]
    feed = {X: rng.normal(size=(6, 5)).astype(np.float32),
            Y: np.eye(3, dtype=np.float32)[rng.integers(0, 3, 6)],
            W1: rng.normal(size=(5, 4)).astype(np.float32),
            W2: rng.normal(size=(3, 4)).astype(np.float32)}  # fmt: skip
    fn = _agree(outs, feed, device=device)
    assert "_mT(xp, " in fn.source  # the transposed operand


def test_constants_of_every_kind():
    x = Variable("x", dtype="float64")
    arr = constant(np.array([1.0, 2.0, 3.0]))
    y = (x - 3) ** -1 + arr * float("inf") * 0 + (x * constant(np.float32(2)))
    z = x**2
    with np.errstate(invalid="ignore"):
        _agree([y, z], {x: np.array([0.5, 1.5, 2.0])})


def test_control_flow_runs_through_its_ops():
    x = Variable("x", dtype="float64")
    n, v = while_loop(lambda n, v: v.sum() < 50.0, lambda n, v: (n + 1, v * 1.5 + 1.0), (0, x))
    z = cond(n > 2, lambda: v.tanh(), lambda: v * v)
    outs = [n, z, *gradients(z.sum(), [x])]
    for xv in ([1.0, 2.0], [30.0, 30.0]):
        _agree(outs, {x: np.array(xv)})


def test_names_that_are_not_identifiers_and_errors():
    a = Variable("my input")
    b = Variable("xp")  # would shadow the namespace
    fn = _agree([a @ b], {a: np.ones((2, 3)), b: np.ones((3, 2))})
    assert "my input" not in fn.source.split("#")[0]
    with pytest.raises(ShapeError, match=r"matmul: shapes \(2, 3\) and \(2, 3\).*node"):
        fn({a: np.ones((2, 3)), b: np.ones((2, 3))})
    with pytest.raises(ValueError, match="was not fed"):
        fn({a: np.ones((2, 3))})


def test_a_1000_op_chain_and_its_gradient():
    x = Variable("x", shape=(4,), dtype="float32")
    y = x
    for i in range(1000):
        y = y * 1.01 if i % 3 == 0 else (y + 0.01 if i % 3 == 1 else y.tanh())
    outs = [y, *gradients(y.sum(), [x])]
    _agree(outs, {x: np.array([0.1, -0.2, 0.3, -0.4], np.float32)})


def test_strict_array_namespace():
    import array_api_strict as xp

    from tinygrad_edu.backend import use_cpu_namespace

    x = Variable("x", dtype="float64")
    y = (x * 2.0).tanh().sum()
    outs = [y, *gradients(y, [x])]
    feed = {x: np.array([0.1, 0.2])}
    want = Executor(outs).run(feed)
    with use_cpu_namespace(xp):
        got = compile(outs)(feed)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w)


def test_the_memory_plan_compiled_in():
    rng = np.random.default_rng(2)
    X, Y = Variable("x", shape=(6, 5)), Variable("y", shape=(6, 3))
    W1, W2 = Variable("W1", shape=(5, 4)), Variable("W2", shape=(4, 3))
    loss = softmax_cross_entropy(matmul(relu(matmul(X, W1)), W2), Y)
    outs = [loss, *gradients(loss, [W1, W2])]
    feed = {X: rng.normal(size=(6, 5)).astype(np.float32),
            Y: np.eye(3, dtype=np.float32)[rng.integers(0, 3, 6)],
            W1: rng.normal(size=(5, 4)).astype(np.float32),
            W2: rng.normal(size=(4, 3)).astype(np.float32)}  # fmt: skip
    fn = _agree(outs, feed, example=feed)
    planned, generic = fn.source.split("\n\n\n")
    assert "def generic(feed_dict):" in generic
    assert "b0 = v5" in planned  # the product's new array becomes buffer 0 ...
    assert "xp.maximum(v5, 0.0, out=b0)" in planned  # ... and relu writes over it in place
    first = fn(feed)
    second = fn(feed)  # a new call does not overwrite what the last one returned
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    other = {**feed, X: feed[X].astype(np.float64)}  # other dtypes: the plain version runs
    for g, w in zip(fn(other), Executor(outs).run(other)):
        np.testing.assert_array_equal(g, w)


def test_a_donated_input_takes_the_result_of_its_last_reader():
    w = Variable("w", shape=(3,), dtype="float32")
    g = Variable("g", shape=(3,), dtype="float32")
    new = w - g * 0.5
    fn = compile([new], donated=[w])
    assert "out=w" in fn.source
    wd, gd = np.array([1.0, 2.0, 3.0], np.float32), np.array([2.0, 2.0, 2.0], np.float32)
    (out,) = fn({w: wd, g: gd})
    assert out is wd and out.dtype == np.float32  # written into the donated array
    np.testing.assert_array_equal(wd, [0.0, 1.0, 2.0])
    # not donated, or no dead values freed: a new array, the fed one untouched
    for kw in ({}, {"donated": [w], "free_dead": False}):
        wd = np.array([1.0, 2.0, 3.0], np.float32)
        (out,) = compile([new], **kw)({w: wd, g: gd})
        assert out is not wd and wd[0] == 1.0


def test_a_donated_input_read_later_or_of_another_dtype_keeps_its_value():
    w = Variable("w", shape=(3,), dtype="float32")
    g = Variable("g", shape=(3,), dtype="float32")
    d = Variable("d", shape=(3,), dtype="float64")
    later = (w - g) * (w + 1.0)  # w - g is not w's last reader: w + 1 must see the old w
    wd, gd = np.array([1.0, 2.0, 3.0], np.float32), np.ones(3, np.float32)
    want = Executor([later], "cpu").run({w: wd.copy(), g: gd})[0]
    fn = compile([later], donated=[w])
    np.testing.assert_array_equal(fn({w: wd, g: gd})[0], want)
    assert fn.source.count("out=") == 1 and "xp.add(w, 1.0, out=w)" in fn.source
    # float32 - float64 is float64: it does not fit the donated float32 array
    assert "out=" not in compile([w - d], donated=[w]).source
    # an output the caller stores in the donated array anyway may write it whatever its dtype
    mixed = w - d
    assert "out=w" in compile([mixed], donated={w: mixed}).source
