"""to_onnx: every exported op, gradient graphs and control flow, checked by the onnx checker and
run by onnxruntime with the Executor's results."""

import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from tinygrad_edu.symbolic import (
    Executor,
    Variable,
    api,
    cond,
    constant,
    gradients,
    softmax_cross_entropy,
    while_loop,
)
from tinygrad_edu.symbolic import layer_functions as layers
from tinygrad_edu.symbolic.static.onnx_export import ONNX_OPS, to_onnx
from tinygrad_edu.symbolic.tensor_node import apply_op, stop_gradient


def _roundtrip(outs, feed, tmp_path, rtol=1e-5, atol=1e-6):
    path = to_onnx(outs, tmp_path / "model.onnx", feed)
    onnx.checker.check_model(onnx.load(path), full_check=True)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    by_name = {v.name: np.asarray(a) for v, a in feed.items()}
    got = sess.run(None, {i.name: by_name[i.name] for i in sess.get_inputs()})
    want = Executor(outs).run(feed)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
        assert g.dtype == np.asarray(w).dtype and g.shape == np.shape(w)
    return onnx.load(path)


R = np.random.default_rng(0)
A = R.normal(size=(3, 4)).astype(np.float32)
B = R.normal(size=(3, 4)).astype(np.float32)
POS = R.uniform(0.5, 2.0, size=(3, 4)).astype(np.float32)
CASES = {  # op -> (build(a, b) -> node, a, b)
    "add": (lambda a, b: a + b, A, B), "sub": (lambda a, b: a - 2.0, A, B),
    "mul": (lambda a, b: 3 * a * b, A, B), "div": (lambda a, b: a / b, A, POS),
    "neg": (lambda a, b: -a, A, B), "exp": (lambda a, b: a.exp(), A, B),
    "log": (lambda a, b: b.log(), A, POS), "tanh": (lambda a, b: a.tanh(), A, B),
    "sigmoid": (lambda a, b: a.sigmoid(), A, B), "relu": (lambda a, b: a.relu(), A, B),
    "maximum": (lambda a, b: api.maximum(a, b), A, B),
    "greater": (lambda a, b: a > b, A, B), "greater_equal": (lambda a, b: a >= 0.0, A, B),
    "less": (lambda a, b: a < b, A, B), "less_equal": (lambda a, b: a <= b, A, B),
    "equal": (lambda a, b: apply_op("equal", a, a), A, B),
    "not_equal": (lambda a, b: apply_op("not_equal", a, b), A, B),
    "clone": (lambda a, b: a.clone(), A, B),
    "where": (lambda a, b: api.where(a > 0, a, b), A, B),
    "pow": (lambda a, b: b**3, A, POS),
    "relu_grad": (lambda a, b: api.relu_grad(a, b), A, B),
    "matmul": (lambda a, b: api.matmul(a, b, trans_B=True), A, B),
    "sum": (lambda a, b: a.sum(axis=1, keepdims=True) + a.sum(), A, B),
    "mean": (lambda a, b: a.mean(axis=0), A, B), "max": (lambda a, b: a.amax(dim=-1), A, B),
    "softmax": (lambda a, b: a.softmax(axis=0), A, B),
    "log_softmax": (lambda a, b: a.log_softmax(), A, B),
    "softmax_cross_entropy": (lambda a, b: softmax_cross_entropy(a, b.softmax()), A, B),
    "transpose": (lambda a, b: a.transpose(0, 1), A, B),
    "permute": (lambda a, b: a.T, A, B),
    "reshape": (lambda a, b: a.reshape(4, 3) + api.reshape(b, a.T), A, B),
    "broadcast_to": (lambda a, b: api.broadcast_to(a.sum(axis=0), b), A, B),
    "sum_to": (lambda a, b: api.sum_to(a, (1, 4)) + api.sum_to(a, a[0]), A, B),
    "expand_dims": (lambda a, b: api.expand_dims(a, 1), A, B),
    "ones_like": (lambda a, b: api.ones_like(a), A, B),
    "zeros_like": (lambda a, b: api.zeros_like(a), A, B),
    "fill": (lambda a, b: api.fill(a, 2.5), A, B),
    "fill_constant": (lambda a, b: a + apply_op("fill_constant", shape=(4,), value=2,
                                                dtype="float32"), A, B),
    "astype": (lambda a, b: a.astype("float64"), A, B),
    "numel": (lambda a, b: a / apply_op("numel", a, axis=1), A, B),
    "getitem": (lambda a, b: a[1:, ::2] + a[0, None] .sum() + a[..., -1].sum()
                + a[np.array([2, 0])].sum(), A, B),
}  # fmt: skip


@pytest.mark.parametrize("opname", sorted(CASES))
def test_each_op_exports(opname, tmp_path):
    build, a_val, b_val = CASES[opname]
    a = Variable("a", dtype="float32")
    b = Variable("b", dtype="float32")
    out = build(a, b)
    used = Executor([out]).variables
    model = _roundtrip([out], {v: val for v, val in ((a, a_val), (b, b_val)) if v in used},
                       tmp_path)  # fmt: skip
    assert model.graph.node, "an empty graph"


def test_a_small_cnn_exports(tmp_path):
    rng = np.random.default_rng(3)
    x = Variable("x", shape=(2, 3, 9, 9), dtype="float32")
    w1 = Variable("w1", shape=(4, 3, 3, 3), dtype="float32")
    b1 = Variable("b1", shape=(4,), dtype="float32")
    w2 = Variable("w2", shape=(6, 2, 3, 3), dtype="float32")
    table = Variable("table", shape=(7, 5), dtype="float32")
    ids = Variable("ids", shape=(2, 3), dtype="int64")
    h = api.relu(layers.conv2d(x, w1, b1, stride=2, padding=1))
    h = layers.pad(h, (1, 0, 0, 2), value=0.5)
    h = layers.conv2d(h, w2, groups=2, dilation=1)
    out = [layers.max_pool2d(h, 2, ceil_mode=True),
           layers.avg_pool2d(h, 3, stride=1, padding=1, count_include_pad=False),
           layers.max_pool2d(x, 3, stride=2, padding=1, dilation=2),
           layers.embedding(ids, table)]  # fmt: skip
    feed = {x: rng.normal(size=(2, 3, 9, 9)), w1: rng.normal(size=(4, 3, 3, 3)),
            b1: rng.normal(size=(4,)), w2: rng.normal(size=(6, 2, 3, 3)),
            table: rng.normal(size=(7, 5)), ids: rng.integers(0, 7, (2, 3))}  # fmt: skip
    feed = {v: a.astype(np.float32) if v is not ids else a for v, a in feed.items()}
    model = _roundtrip(out, feed, tmp_path, rtol=1e-4, atol=1e-5)
    assert {"Conv", "MaxPool", "AveragePool", "Pad", "Gather"} <= {
        n.op_type for n in model.graph.node
    }


def test_the_table_covers_every_exported_op():
    done = set(CASES) | set(CASES_MORE) | set(CASES_ON_THE_OP) | {"cond", "while", "tuple_get"}
    done |= {"conv2d", "max_pool2d", "avg_pool2d", "pad", "embedding"}  # the CNN test
    assert set(ONNX_OPS) == done


def test_mlp_loss_and_gradients_export(tmp_path):
    rng = np.random.default_rng(1)
    X, Y, W1, b1, W2 = (Variable(n) for n in ("x", "y", "W1", "b1", "W2"))
    loss = softmax_cross_entropy(api.matmul(api.relu(api.matmul(X, W1) + b1), W2), Y)
    outs = [loss, *gradients(loss, [W1, b1, W2])]
    feed = {X: rng.normal(size=(6, 5)).astype(np.float32),
            Y: np.eye(3, dtype=np.float32)[rng.integers(0, 3, 6)],
            W1: rng.normal(size=(5, 4)).astype(np.float32),
            b1: rng.normal(size=(4,)).astype(np.float32),
            W2: rng.normal(size=(4, 3)).astype(np.float32)}  # fmt: skip
    model = _roundtrip(outs, feed, tmp_path)
    assert [i.name for i in model.graph.input] == ["x", "W1", "b1", "W2", "y"]
    assert {n.op_type for n in model.graph.node} >= {"MatMul", "Relu", "LogSoftmax", "Softmax"}


def test_second_derivative_exports_and_mixed_dtypes(tmp_path):
    t = Variable("t")
    f = t.tanh()
    (d1,) = gradients(f, [t])
    (d2,) = gradients(d1, [t])
    _roundtrip([f, d1, d2], {t: np.linspace(-2, 2, 7)}, tmp_path)
    x = Variable("x")
    y = x * constant(np.array(2.0))  # float32 times a float64 array: numpy gives float64
    _roundtrip([y], {x: np.ones(3, np.float32)}, tmp_path)


def test_cond_and_while_become_if_and_loop(tmp_path):
    x, w = Variable("x", dtype="float64"), Variable("w", dtype="float64")
    n, v = while_loop(lambda n, v: (v * v).sum() < 30.0,
                      lambda n, v: (n + 1, (v * w).tanh() * 2.0 + v * 1.1), (0, x),
                      maximum_iterations=50)  # fmt: skip
    z = cond(v.sum() > 0, lambda: (v.exp().sum(), v * 2.0), lambda: ((v * v).mean(), -v))
    outs = [n, v, *z]
    for xv in ([0.5, -1.0, 2.0], [-0.5, -1.0, -2.0], [9.0, 9.0, 9.0]):
        model = _roundtrip(outs, {x: np.array(xv), w: np.array([0.7, -0.4, 0.9])}, tmp_path)
    assert {n.op_type for n in model.graph.node} >= {"If", "Loop"}


@pytest.mark.parametrize("seed", range(10))
def test_random_graphs_with_broadcasting_and_python_numbers(seed, tmp_path):
    """Numpy's dtype rules (a Python number takes its partner's dtype; float32 with float64
    gives float64) and broadcasting, reproduced in ONNX, where nothing is implicit."""
    rng = np.random.default_rng(seed)
    a, b, c = Variable("a"), Variable("b"), Variable("c")
    pool = [a, b, c, constant(1.0), constant(0.0), constant(2.0)]
    unary = [
        lambda u: -u,
        lambda u: u.tanh(),
        lambda u: u.exp() * 0.1,
        api.ones_like,
        api.zeros_like,
        lambda u: u.sum(axis=0, keepdims=True),
        lambda u: u.sigmoid(),
    ]
    binary = [lambda u, v: u + v, lambda u, v: u - v, lambda u, v: u * v, api.sum_to,
              api.broadcast_to, api.maximum]  # fmt: skip
    feed = {a: rng.normal(size=(3, 4)).astype(np.float32),
            b: rng.normal(size=(3, 1)).astype(np.float32), c: rng.normal(size=(4,))}  # fmt: skip
    while len(pool) < 22:
        try:
            if rng.random() < 0.4:
                node = unary[rng.integers(len(unary))](pool[rng.integers(len(pool))])
            else:
                u, v = (pool[k] for k in rng.integers(len(pool), size=2))
                node = binary[rng.integers(len(binary))](u, v)
            Executor([node]).run({k: v for k, v in feed.items() if k in
                                  Executor([node]).variables})  # fmt: skip
        except Exception:
            continue  # shapes that do not fit: draw again
        pool.append(node)
    y = pool[-1] * a + pool[-2]
    outs = [y, *gradients(y.sum(), [a, b, c])]
    used = set(Executor(outs).variables)
    _roundtrip(outs, {k: v for k, v in feed.items() if k in used}, tmp_path, rtol=1e-4)


def test_clear_errors(tmp_path, monkeypatch):
    x = Variable("x", shape=(3,), dtype="float64")
    _, v = while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2.0), (0, x))
    (dx,) = gradients(v.sum(), [x])
    with pytest.raises(NotImplementedError, match="gradients through while_loop"):
        to_onnx([dx], tmp_path / "m.onnx", {x: np.ones(3)})
    g = apply_op("getitem_grad", x, shape=(5,), index=np.array([0, 2, 2]))
    with pytest.raises(NotImplementedError, match="op 'getitem_grad'.*no ONNX form"):
        to_onnx([g], tmp_path / "m.onnx", {x: np.ones(3)})
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match=r"tinygrad_edu\[onnx\]"):
        to_onnx([x * 2], tmp_path / "m.onnx", {x: np.ones(3)})


I = np.array([[0, 2, 1, 3], [3, 3, 0, 1], [1, 0, 2, 2]])  # indices into the last axis of A
CASES_MORE = {  # the ops added for #22: op -> (build(a, b) -> node(s), a, b)
    "abs": (lambda a, b: apply_op("abs", a), A, B),
    "stop_gradient": (lambda a, b: stop_gradient(a) * b, A, B),
    "sqrt": (lambda a, b: apply_op("sqrt", b), A, POS),
    "rsqrt": (lambda a, b: apply_op("rsqrt", b), A, POS),
    "sin": (lambda a, b: apply_op("sin", a), A, B),
    "cos": (lambda a, b: apply_op("cos", a), A, B),
    "erf": (lambda a, b: apply_op("erf", a), A, B),
    "sign": (lambda a, b: apply_op("sign", a - a[0]), A, B),
    "log1p": (lambda a, b: apply_op("log1p", b), A, POS),
    "gelu": (lambda a, b: apply_op("gelu", a) + apply_op("gelu", b, approximate="tanh"), A, B),
    "leaky_relu": (lambda a, b: apply_op("leaky_relu", a, negative_slope=0.2), A, B),
    "softplus": (lambda a, b: apply_op("softplus", a * 30, beta=0.5, threshold=5.0), A, B),
    "minimum": (lambda a, b: apply_op("minimum", a, b), A, B),
    "pow_tensor": (lambda a, b: apply_op("pow_tensor", b, a), A, POS),
    "clamp": (lambda a, b: apply_op("clamp", a, min=-0.5, max=0.5)
              + apply_op("clamp", a, min=0.1), A, B),
    "clamp_tensor": (lambda a, b: apply_op("clamp_tensor", a, b - 1, b), A, B),
    "cat": (lambda a, b: apply_op("cat", a, b, a, dim=1), A, B),
    "stack": (lambda a, b: apply_op("stack", a, b, dim=-1), A, B),
    "flatten": (lambda a, b: apply_op("flatten", a.reshape(3, 2, 2), start_dim=1), A, B),
    "squeeze": (lambda a, b: apply_op("squeeze", a.reshape(3, 1, 4), dim=1), A, B),
    "repeat": (lambda a, b: apply_op("repeat", a, repeats=(2, 2, 1)), A, B),
    "argmax": (lambda a, b: [apply_op("argmax", a, axis=1), apply_op("argmax", a),
                             apply_op("argmax", a, axis=0, keepdims=True)], A, B),
    "argmin": (lambda a, b: apply_op("argmin", a, axis=-1), A, B),
    "min": (lambda a, b: apply_op("min", a, axis=0) + apply_op("min", a), A, B),
    "max_dim": (lambda a, b: list(a.max(dim=1)), A, B),
    "min_dim": (lambda a, b: list(a.min(dim=0, keepdim=True)), A, B),
    "all": (lambda a, b: [apply_op("all", a > -1.0), apply_op("all", a > 0, axis=1)], A, B),
    "any": (lambda a, b: [apply_op("any", a > 2.0), apply_op("any", a > 0, axis=0)], A, B),
    "logical_and": (lambda a, b: apply_op("logical_and", a > 0, b > 0), A, B),
    "logical_or": (lambda a, b: apply_op("logical_or", a > 0, b > 0), A, B),
    "logical_xor": (lambda a, b: apply_op("logical_xor", a > 0, b > 0), A, B),
    "logical_not": (lambda a, b: apply_op("logical_not", a > 0), A, B),
    "bitwise_and": (lambda a, b: apply_op("bitwise_and", a > 0, b > 0), A, B),
    "bitwise_or": (lambda a, b: apply_op("bitwise_or", a > 0, b > 0), A, B),
    "bitwise_xor": (lambda a, b: apply_op("bitwise_xor", a > 0, b > 0), A, B),
    "bitwise_not": (lambda a, b: apply_op("bitwise_not", a > 0), A, B),
    "masked_fill": (lambda a, b: apply_op("masked_fill", a, b > 0, -1.5), A, B),
    "gather": (lambda a, b: apply_op("gather", a, constant(I), dim=1), A, B),
    "one_hot": (lambda a, b: apply_op("one_hot", constant(I), num_classes=5), A, B),
    "cumsum": (lambda a, b: apply_op("cumsum", a, dim=1)
               + apply_op("cumsum", a, dim=0, reverse=True), A, B),
    "var": (lambda a, b: apply_op("var", a, axis=1) + apply_op("var", a, correction=0), A, B),
    "std": (lambda a, b: apply_op("std", a, axis=0, keepdims=True), A, B),
    "nll_loss": (lambda a, b: [apply_op("nll_loss", a.log_softmax(), constant(I[:, 0])),
                               apply_op("nll_loss", a.log_softmax(), constant(I[:, 1]),
                                        reduction="none", ignore_index=3),
                               apply_op("nll_loss", a.log_softmax(), constant(I[:, 2]),
                                        weight=np.array([1.0, 2.0, 0.5, 1.0], np.float32),
                                        reduction="sum")], A, B),
    "layer_norm": (lambda a, b: [apply_op("layer_norm", a),
                                 apply_op("layer_norm", a, b[0], b[1], normalized_ndim=1)],
                   A, B),
    "batch_norm": (lambda a, b: [
        apply_op("batch_norm", a, b[0, :], b[1, :]),
        apply_op("batch_norm", a, b[2, :], b[0, :].exp(), training=False, affine=False),
        apply_op("batch_norm", a.reshape(3, 4, 1, 1) * 1.0, b[0, :], b[1, :])], A, B),
}  # fmt: skip


@pytest.mark.parametrize("opname", sorted(CASES_MORE))
def test_each_added_op_exports(opname, tmp_path):
    build, a_val, b_val = CASES_MORE[opname]
    a = Variable("a", shape=(3, 4), dtype="float32")
    b = Variable("b", shape=(3, 4), dtype="float32")
    out = build(a, b)
    outs = out if isinstance(out, list) else [out]
    assert any(n.op.name == opname for n in Executor(outs).order), "the case misses its op"
    used = Executor(outs).variables
    _roundtrip(outs, {v: val for v, val in ((a, a_val), (b, b_val)) if v in used}, tmp_path)


def test_matmul_of_float32_and_float64_exports(tmp_path):
    a = Variable("a", shape=(3, 4), dtype="float32")
    w = Variable("w", shape=(4, 2), dtype="float64")
    _roundtrip([api.matmul(a, w)], {a: A, w: np.ones((4, 2))}, tmp_path)  # was: onnx.checker


def test_the_docs_list_of_exporting_ops_is_the_exporters():
    """docs/concepts/compiler.md holds ops_markdown()'s text between its onnx-ops markers;
    ``python docs/onnx_ops.py`` rewrites it."""
    import importlib.util  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    path = Path(__file__).parents[2] / "docs" / "onnx_ops.py"
    spec = importlib.util.spec_from_file_location("onnx_ops_page", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    page = script.PAGE.read_text()
    assert script.render(page) == page, "the docs' ONNX op list is stale: python docs/onnx_ops.py"


S = R.normal(size=(3, 4)).astype(np.float32) * 3  # wide enough for rounding and remainders
BOOLS = np.array([[1, 0, 2, 0], [0, 0, 3, 1], [5, 0, 0, 1]], np.float32)
CASES_ON_THE_OP = {  # the ops whose ONNX form arrived on their declaration (Op.onnx)
    **{name: (lambda a, b, name=name: apply_op(name, a), S, B)
       for name in ("floor", "ceil", "trunc", "frac", "atan", "sinh", "cosh", "expm1", "exp2",
                    "isnan", "isinf", "isfinite", "erfc", "sinc", "hardswish", "hardsigmoid",
                    "silu", "mish", "log_sigmoid", "hardtanh", "elu", "tan")},
    **{name: (lambda a, b, name=name: apply_op(name, b * 0.4), A, POS)
       for name in ("asin", "acos")},
    **{name: (lambda a, b, name=name: apply_op(name, b), A, POS)
       for name in ("log2", "log10", "reciprocal", "entr")},
    "round": (lambda a, b: apply_op("round", a) + apply_op("round", a, decimals=1), S, B),
    "fmod": (lambda a, b: apply_op("fmod", a, b), S, POS - 1.25),
    "remainder": (lambda a, b: apply_op("remainder", a, b), S, POS - 1.25),
    "floor_divide": (lambda a, b: apply_op("floor_divide", a, b), S, POS - 1.25),
    "atan2": (lambda a, b: apply_op("atan2", a, b - b[0]), A, B),
    "nan_to_num": (lambda a, b: [apply_op("nan_to_num", a.log()),
                                 apply_op("nan_to_num", a / (b - b), nan=1.0, posinf=9.0,
                                          neginf=-9.0)], A, B),
    "isclose": (lambda a, b: [apply_op("isclose", a, a + b * 1e-6),
                              apply_op("isclose", (a - a[0]).log(), (a - a[0]).log(),
                                       equal_nan=True, rtol=0.1)], A, B),
    "prod": (lambda a, b: apply_op("prod", b, axis=1) + apply_op("prod", b), A, POS),
    "logsumexp": (lambda a, b: apply_op("logsumexp", a, axis=0, keepdims=True), A, B),
    "vector_norm": (lambda a, b: [apply_op("vector_norm", a, ord=o, axis=ax)
                                  for o, ax in ((2, None), (1, 1), (np.inf, 0), (-np.inf, 1),
                                                (0, 1), (3, 0))], BOOLS - 1, B),
    "argsort": (lambda a, b: [apply_op("argsort", a, dim=1),
                              apply_op("argsort", a, dim=0, descending=True)], BOOLS, B),
    "unique": (lambda a, b: [apply_op("unique", a), apply_op("unique", a, part="counts")],
               BOOLS, B),
    "binary_cross_entropy": (lambda a, b: [
        apply_op("binary_cross_entropy", a.sigmoid(), b.sigmoid()),
        apply_op("binary_cross_entropy", a.sigmoid(), b.sigmoid(), reduction="none",
                 weight=np.array([1.0, 2.0, 0.5, 1.0], np.float32))], A, B),
    "binary_cross_entropy_with_logits": (lambda a, b: [
        apply_op("binary_cross_entropy_with_logits", a * 30, b.sigmoid(), reduction="sum"),
        apply_op("binary_cross_entropy_with_logits", a, b.sigmoid(),
                 pos_weight=np.array([1.0, 3.0, 0.5, 2.0], np.float32))], A, B),
    "det": (lambda a, b: apply_op("det", a[:, :3]), A, B),
    "einsum": (lambda a, b: apply_op("einsum", a, b, equation="ij,kj->ik"), A, B),
    "tril": (lambda a, b: apply_op("tril", a) + apply_op("tril", a, diagonal=1), A, B),
    "triu": (lambda a, b: apply_op("triu", a, diagonal=-1), A, B),
    "flip": (lambda a, b: [apply_op("flip", a, dims=(0, -1)), apply_op("flip", a, dims=(1,))],
             A, B),
    "roll": (lambda a, b: [apply_op("roll", a, shifts=(1, -3), dims=(0, 1)),
                           apply_op("roll", a, shifts=(5,))], A, B),
    "index_select": (lambda a, b: apply_op("index_select", a, constant(np.array([3, 0, 3])),
                                           dim=1), A, B),
    "scatter": (lambda a, b: apply_op("scatter", a, constant(I[:, :2]), b[:, :2], dim=1),
                A, B),
    "nonzero": (lambda a, b: apply_op("nonzero", a), BOOLS, B),
    "masked_select": (lambda a, b: apply_op("masked_select", a, b[0] > 0), A, B),
}  # fmt: skip


@pytest.mark.parametrize("opname", sorted(CASES_ON_THE_OP))
def test_each_op_with_a_form_on_its_declaration_exports(opname, tmp_path):
    build, a_val, b_val = CASES_ON_THE_OP[opname]
    a = Variable("a", shape=(3, 4), dtype="float32")
    b = Variable("b", shape=(3, 4), dtype="float32")
    out = build(a, b)
    outs = out if isinstance(out, list) else [out]
    assert any(n.op.name == opname for n in Executor(outs).order), "the case misses its op"
    used = Executor(outs).variables
    _roundtrip(outs, {v: val for v, val in ((a, a_val), (b, b_val)) if v in used}, tmp_path,
               rtol=1e-5, atol=1e-5)  # fmt: skip


def test_every_op_exports_or_says_why_not():
    """Every op of the library declares its ONNX form (``Op.onnx``); one without gives a
    reason, which the exporter's error repeats; every one with a form has a case above."""
    from tinygrad_edu.ops import REGISTRY, NoOnnx  # noqa: PLC0415

    covered = set(CASES) | set(CASES_MORE) | set(CASES_ON_THE_OP)
    covered |= {"conv2d", "max_pool2d", "avg_pool2d", "pad", "embedding"}  # the CNN test
    for name, op in sorted(REGISTRY.items()):
        form = op.onnx
        assert form is not None, f"op {name!r} declares no ONNX form and no reason"
        if isinstance(form, NoOnnx):
            assert len(form) > 10 and name not in ONNX_OPS, name
        else:
            assert name in ONNX_OPS and name in covered, f"op {name!r} exports, untested"


def test_the_reason_is_the_error(tmp_path):
    x = Variable("x", shape=(3,), dtype="float64")
    with pytest.raises(NotImplementedError, match="op 'lgamma'.*special function"):
        to_onnx([apply_op("lgamma", x)], tmp_path / "m.onnx", {x: np.ones(3)})
