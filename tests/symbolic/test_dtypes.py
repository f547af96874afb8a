"""One promotion rule (PyTorch's, tinygrad_edu.ops.dtypes) for the Executor, compile(), the
passes and the eager engine; numpy's 0-d results are arrays (strong), not weak numbers."""


import numpy as np
import pytest

import tinygrad_edu as tg
import tinygrad_edu.symbolic as S
from tinygrad_edu.symbolic.passes import optimize


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
    outs = pool[len(_LEAVES):]
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


