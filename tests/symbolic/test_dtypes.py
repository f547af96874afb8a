"""One promotion rule (PyTorch's, tinygrad_edu.ops.promotion) for the Executor, compile(), the
passes and the eager engine; numpy's 0-d results are arrays (strong), not weak numbers."""

import numpy as np
import pytest

import tinygrad_edu as tg
import tinygrad_edu.symbolic as S
from tinygrad_edu.symbolic.static.passes import optimize


def _dtypes(values):
    return [np.asarray(v).dtype for v in values]


def test_a_0d_result_keeps_its_dtype_in_later_promotion():
    x, y = S.Variable("x"), S.Variable("y")
    f = y * S.exp(x)
    feed = {x: np.array(1.0), y: np.array(2.0, np.float32)}
    want = (tg.tensor(np.array(2.0, np.float32)) * tg.tensor(np.array(1.0)).exp()).dtype
    assert str(want) == "float64"
    assert _dtypes(S.Executor([f]).run(feed)) == [np.float64]
    assert _dtypes(S.compile([f])(feed)) == [np.float64]
    assert _dtypes(S.Executor(optimize([f])).run(feed)) == [np.float64]
    # a Python number fed for y: float64 too (as 2.0 * exp(x) in PyTorch)
    assert _dtypes(S.Executor([f]).run({x: np.array(1.0), y: 2.0})) == [np.float64]
    # a reduction's result is a 0-d array, as strong as any other
    s = S.Variable("v").sum() * y
    out = S.Executor([s]).run({s.inputs[0].inputs[0]: np.ones(3), y: np.array(1.0, np.float32)})
    assert _dtypes(out) == [np.float64]


def test_compile_and_executor_agree_on_a_0d_float64_constant():
    a = S.Variable("a", shape=(3,), dtype="float32")
    h = a + np.array(2.0)  # PyTorch: float32 (a 0-d tensor does not widen one with dims)
    feed = {a: np.ones(3, np.float32)}
    assert _dtypes(S.Executor([h]).run(feed)) == [np.float32]
    assert _dtypes(S.compile([h])(feed)) == [np.float32]
    i = S.Variable("i", shape=(3,))
    k = i * 0.5  # an integer array and a Python float: float32, as PyTorch (numpy: float64)
    feed = {i: np.arange(3)}
    assert _dtypes(S.Executor([k]).run(feed)) == _dtypes(S.compile([k])(feed)) == [np.float32]


def test_compile_writes_numpy_scalars_as_numbers():
    a = S.Variable("a", shape=(2,), dtype="float32")
    fn = S.compile([a * np.sqrt(2.0), a * np.float32(3)])  # was: NameError: 'np'
    r1, r2 = fn({a: np.ones(2, np.float32)})
    np.testing.assert_allclose(r1, np.sqrt(2.0) * np.ones(2), rtol=1e-6)
    assert r1.dtype == r2.dtype == np.float32  # numpy scalars are weak, as in PyTorch


# -- the property: random small graphs, four ways, same dtypes and values ---------------------

_LEAVES = {  # name -> (shape, dtype)
    "a32": ((3,), np.float32), "a64": ((3,), np.float64),
    "s32": ((), np.float32), "s64": ((), np.float64),
}  # fmt: skip
_CONSTANTS = [0.5, 2, np.array(1.5), np.array(0.75, np.float32), np.full(3, 0.25, np.float32)]


def _random_graph(rng):
    feeds = {k: rng.uniform(0.2, 0.9, size=s).astype(d) for k, (s, d) in _LEAVES.items()}
    variables = {k: S.Variable(k) for k in _LEAVES}
    pool = [(variables[k], tg.tensor(feeds[k])) for k in _LEAVES]

    def leaf():
        if rng.random() < 0.3:
            c = _CONSTANTS[rng.integers(len(_CONSTANTS))]
            return (c, c if isinstance(c, int | float) else tg.tensor(c)), True
        return pool[rng.integers(len(pool))], False

    for _ in range(6):
        kind = rng.integers(8)
        (a, ta), _ = leaf() if kind < 5 else (pool[rng.integers(len(pool))], False)
        if kind < 5:
            (b, tb), weak = leaf()
            while weak and not isinstance(a, S.Node):
                (b, tb), weak = leaf()
            op = ["add", "sub", "mul", "div", "maximum"][kind]
            if op == "maximum":
                (b, tb) = pool[rng.integers(len(pool))]
                pool.append((S.maximum(a, b), tg.maximum(ta, tb)))
            else:
                f = {"add": lambda u, v: u + v, "sub": lambda u, v: u - v,
                     "mul": lambda u, v: u * v, "div": lambda u, v: u / v}[op]  # fmt: skip
                pool.append((f(a, b), f(ta, tb)) if rng.random() < 0.5 else (f(b, a), f(tb, ta)))
        elif kind == 5:
            pool.append((S.tanh(a).exp(), tg.exp(tg.tanh(ta))))
        elif kind == 6:
            pool.append((-a, -ta))
        else:
            pool.append((a.sum(), ta.sum()))
    outs = pool[len(_LEAVES) :]
    feed = {variables[k]: v for k, v in feeds.items()}
    used = set(S.topo_sort([n for n, _ in outs]))
    return [n for n, _ in outs], [t for _, t in outs], {k: v for k, v in feed.items() if k in used}


@pytest.mark.parametrize("seed", range(40))
def test_executor_compile_optimize_and_eager_agree_on_dtypes_and_values(seed):
    rng = np.random.default_rng(seed)
    nodes, tensors, feed = _random_graph(rng)
    want = [t.numpy() for t in tensors]
    planned = S.Executor(nodes, plan_memory=True)
    got = {
        "executor": S.Executor(nodes).run(feed),
        "compile": S.compile(nodes)(feed),
        "planned (profiling run)": planned.run(feed),
        "planned (replayed plan)": planned.run(feed),
        "compile(example)": S.compile(nodes, example=feed)(feed),
        "optimize": S.Executor(optimize(nodes)).run(feed),
        "compile(optimize)": S.compile(optimize(nodes))(feed),
    }
    for how, values in got.items():
        for k, (w, g) in enumerate(zip(want, values)):
            assert g.dtype == w.dtype, (how, k, nodes[k].name, g.dtype, w.dtype)
            np.testing.assert_allclose(g, w, rtol=1e-6, err_msg=f"{how}: {nodes[k].name}")


# -- the static dtypes (symbolic.dtype_rules): every node's inferred dtype is its value's ------

_TYPED = {  # name -> (shape, dtype): declared Variables, so every node gets a static dtype
    "f32": ((3,), "float32"), "f64": ((3,), "float64"), "z32": ((), "float32"),
    "z64": ((), "float64"), "i64": ((3,), "int64"), "i32": ((3,), "int32"),
    "b": ((3,), "bool"), "zi": ((), "int64"),
}  # fmt: skip
_TYPED_CONSTANTS = [0.5, 2, True, np.array(1.5), np.array(0.75, np.float32),
                    np.full(3, 0.25, np.float32), np.arange(3), np.float64(3.0)]  # fmt: skip


def _typed_graph(rng):
    """Random graphs over declared float, int and bool Variables, 0-d and with dimensions,
    with Python numbers, numpy scalars and array constants."""
    feeds = {}
    for k, (shape, dtype) in _TYPED.items():
        v = rng.uniform(0.2, 0.9, size=shape)
        feeds[k] = (v > 0.5) if dtype == "bool" else (v * 10 if "int" in dtype else v)
        feeds[k] = np.asarray(feeds[k]).astype(dtype)
    variables = {k: S.Variable(k, shape=s, dtype=d) for k, (s, d) in _TYPED.items()}
    pool = [(variables[k], tg.tensor(feeds[k])) for k in _TYPED]

    def pick():
        if rng.random() < 0.3:
            c = _TYPED_CONSTANTS[rng.integers(len(_TYPED_CONSTANTS))]
            return c, (c if isinstance(c, bool | int | float) else tg.tensor(np.asarray(c)))
        return pool[rng.integers(len(pool))]

    def is_bool(v):
        return isinstance(v, bool) or str(getattr(v, "dtype", "")) == "bool"

    for _ in range(8):
        kind = rng.integers(10)
        a, ta = pool[rng.integers(len(pool))]
        b, tb = pick()
        if kind < 4:
            if kind == 1 and (is_bool(a) or is_bool(b)):
                continue  # bool - bool is an error (as in PyTorch)
            f = [lambda u, v: u + v, lambda u, v: u - v, lambda u, v: u * v,
                 lambda u, v: u / v][kind]  # fmt: skip
            pool.append((f(a, b), f(ta, tb)) if rng.random() < 0.5 else (f(b, a), f(tb, ta)))
        elif kind == 4:
            b, tb = pool[rng.integers(len(pool))]
            pool.append((S.maximum(a, b), tg.maximum(ta, tb)))
        elif kind == 5:
            pool.append((a.exp(), ta.exp()))
        elif kind == 6 and not is_bool(a):
            pool.append((-a, -ta))
        elif kind == 7:
            pool.append(((a > 0.5) * a, (ta > 0.5) * ta))  # a bool flag times a value
        elif kind == 8 and "float" in str(a.dtype):
            pool.append((a.sum(), ta.sum()))
        elif kind == 9 and "float" in str(a.dtype) and len(a.shape):
            pool.append((a.relu(), ta.relu()))
    outs = pool[len(_TYPED) :]
    used = set(S.topo_sort([n for n, _ in outs]))
    feed = {variables[k]: v for k, v in feeds.items() if variables[k] in used}
    return [n for n, _ in outs], [t for _, t in outs], feed


@pytest.mark.parametrize("seed", range(40))
def test_inferred_dtypes_are_the_values_dtypes(seed):
    """Every node's static dtype (where known) is the dtype its kernel gives, and compile()
    (which writes numpy's plain expressions where the static dtypes allow) agrees with the
    interpreter and the eager engine on dtypes and values."""
    nodes, tensors, feed = _typed_graph(np.random.default_rng(seed))
    if not nodes:
        return
    inner = [n for n in S.topo_sort(nodes) if n.op.name not in ("placeholder", "constant")]
    values = S.Executor(inner).run(feed)
    for n, v in zip(inner, values):
        assert n.dtype is not None, n.name  # every op of these graphs has a rule
        assert n.dtype == np.asarray(v).dtype.name, (n.name, n.dtype, np.asarray(v).dtype)
    want = [t.numpy() for t in tensors]
    for how, got in {"executor": S.Executor(nodes).run(feed), "compile": S.compile(nodes)(feed),
                     "compile(optimize)": S.compile(optimize(nodes))(feed)}.items():  # fmt: skip
        for k, (w, g) in enumerate(zip(want, got)):
            assert g.dtype == w.dtype, (how, k, nodes[k].name, g.dtype, w.dtype)
            np.testing.assert_allclose(g, w, rtol=1e-6, err_msg=f"{how}: {nodes[k].name}")


def test_inferred_dtypes_follow_the_promotion_rule():
    f32, i64 = S.Variable("f", (3,), "float32"), S.Variable("i", (3,), "int64")
    flag = S.Variable("b", (3,), "bool")
    s64, unknown = S.Variable("s", (), "float64"), S.Variable("u", dtype="float64")
    cases = {
        "float32 * Python float": (f32 * 2.5, "float32"),
        "float32 + 0-d float64 constant": (f32 + np.array(2.0), "float32"),
        "float32 + float64 constant with dims": (f32 + np.ones(3), "float64"),
        "float32 * 0-d float64 Variable": (f32 * s64, "float32"),
        "float32 * numpy float64 scalar (weak)": (f32 * np.float64(2.0), "float32"),
        "int64 * Python float": (i64 * 0.5, "float32"),
        "int64 / int64": (i64 / i64, "float32"),
        "int64 + Python int": (i64 + 1, "int64"),
        "bool flag + Python int": (flag + 1, "int64"),
        "bool flag * float32": (flag * f32, "float32"),
        "exp of int64": (i64.exp(), "float32"),
        "comparison": (f32 > 0, "bool"),
        "int64 @ float32": (S.matmul(S.Variable("m", (2, 3), "int64"),
                                     S.Variable("n", (3, 2), "float32")), "float32"),
    }  # fmt: skip
    for what, (node, want) in cases.items():
        assert node.dtype == want, (what, node.dtype)
    # a rank not known: float32 * float64 is float32 for a 0-d float64, float64 otherwise
    assert (f32 * unknown).dtype is None
    assert (S.Variable("v", (3,), "float64") * unknown).dtype == "float64"  # same either way
    assert (S.constant(2.0) * 3).dtype is None  # Python numbers alone stay numbers


def test_compile_writes_no_plain_expression_that_would_change_the_dtype():
    """numpy's ``float32 * float64 0-d`` is float64, PyTorch's (and the kernel's) float32: that
    op must run its kernel; an expression of one dtype is written plainly."""
    x, s = S.Variable("x", (3,), "float32"), S.Variable("s", (), "float64")
    mixed, same = x * s, x * x
    fn = S.compile([mixed, same])
    assert "= x * s" not in fn.source and "= x * x" in fn.source
    got = fn({x: np.ones(3, np.float32), s: np.array(2.0)})
    assert _dtypes(got) == [np.float32, np.float32]
    # int64 @ float32: the library gives float32 (numpy's matmul would give float64)
    a, b = S.Variable("a", (2, 2), "int64"), S.Variable("b", (2, 2), "float32")
    feed = {a: np.ones((2, 2), np.int64), b: np.ones((2, 2), np.float32)}
    assert _dtypes(S.compile([a @ b])(feed)) == _dtypes(S.Executor([a @ b]).run(feed))
    assert _dtypes(S.compile([a @ b])(feed)) == [np.float32]


def test_a_wrong_static_dtype_would_show_in_the_generated_code():
    """The code generator trusts Node.dtype: were ``x * s`` (float32, float64 0-d) claimed
    as one float dtype, numpy's plain expression would give float64. The rule's answer
    (float32, with the kernel) is what keeps it float32."""
    x, s = S.Variable("x", (3,), "float32"), S.Variable("s", (), "float64")
    y = x * s
    feed = {x: np.ones(3, np.float32), s: np.array(2.0)}
    assert _dtypes(S.compile([y])(feed)) == [np.float32]
    assert _dtypes(S.compile([y], raw=True)(feed)) == [np.float32]  # (fed as it is)
    s.dtype = "float32"  # a wrong claim: now the plain expression runs, and shows it
    assert "= x * s" in S.compile([y]).source
    assert _dtypes(S.compile([y], raw=True)(feed)) == [np.float64]


def test_a_dtype_category_never_compares_two_namespaces_dtypes():
    """array_api_strict's float32 hashes like numpy's; one lookup table for both made the
    lookup compare them, and array_api_strict warns on that (lesson 7 showed the warning)."""
    import warnings

    import array_api_strict as xs

    from tinygrad_edu.ops.promotion import category

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert category(np.dtype("float32")) == category(xs.float32) == 2
        assert category(np.dtype("int64")) == category(xs.int64) == 1
        assert category(np.dtype("bool")) == category(xs.bool) == 0
