"""The fusing backend (``tg.compile(fn, backend="fuse")``, ``symbolic/static/fusion.py``; the
default where numba is installed): which ops fuse, that fused results are the plain compiled
program's and eager's (to the documented tolerance: a kernel sums in another order), that what
it cannot take and a machine without numba get the numpy code, the ``explain()`` report and
the drawing."""

from __future__ import annotations

import functools
import sys

import numpy as np
import pytest

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F
from tinygrad_edu.symbolic import Variable, apply_op
from tinygrad_edu.symbolic.static import codegen, fusion, kernels

needs_numba = pytest.mark.skipif(not kernels.available(), reason="numba (the fuse extra)")
FUZZ_TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}
TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-13)}


def _ops(found):
    return [k.ops for k in found]


def _same_as_plain(outputs, feed, dtype):
    fused, plain = fusion.compile_fused(outputs), codegen.compile(outputs)
    for a, b in zip(fused(feed), plain(feed)):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, **TOL[dtype])
    return fused


# -- grouping ----------------------------------------------------------------------------------
def test_bias_and_activation_fuse_and_the_matrix_product_stays_blas():
    x = Variable("x", shape=(8, 5), dtype="float32")
    w = Variable("w", shape=(5, 4), dtype="float32")
    b = Variable("b", shape=(4,), dtype="float32")
    y = (apply_op("matmul", x, w) + b).tanh() * 2.0
    (k,) = fusion.kernels_of([y])
    assert k.ops == ["add", "tanh", "mul"]
    assert [i.op.name for i in k.inputs] == ["matmul", "placeholder"]  # the product is an input
    assert "a1[0, c]" in k.source  # the bias is read along the columns, not broadcast in memory


def test_softmax_written_out_is_one_kernel_with_two_row_reductions():
    x = Variable("x", shape=(6, 7), dtype="float64")
    e = (x - x.sum(axis=-1, keepdims=True) / 7).exp()
    y = e / e.sum(axis=-1, keepdims=True)
    (k,) = fusion.kernels_of([y])
    assert k.ops == ["sum", "div", "sub", "exp", "sum", "div"]
    assert k.source.count("for c in range(C):") == 3  # three phases: each sum ends one
    assert [o.op.name for o in k.outputs] == ["div"]  # nothing else is written to memory


def test_layer_norm_and_gelu_fuse():
    x = Variable("x", shape=(3, 4, 8), dtype="float32")
    m = x.mean(axis=-1, keepdims=True)
    d = x - m
    v = (d * d).mean(axis=-1, keepdims=True)
    ln = d / (v + 1e-5).sqrt()
    gelu = ln * 0.5 * (1.0 + ((ln + ln**3 * 0.044715) * 0.7978845608).tanh())
    (k,) = fusion.kernels_of([gelu])
    assert k.ops[:3] == ["mean", "sub", "mul"] and k.ops.count("tanh") == 1 and len(k.ops) == 15


def test_adams_update_of_one_parameter_is_one_kernel():
    # two chains (the moments) start apart and meet in the parameter's update: their groups
    # are merged when the update reads both
    p, g, m, v = (Variable(n, shape=(5, 3), dtype="float32") for n in "pgmv")
    m2 = m * 0.9 + g * 0.1
    v2 = v * 0.999 + (g * g) * 0.001
    p2 = p - (m2 / 0.5) * 0.01 / ((v2 / 0.25).sqrt() + 1e-8)
    (k,) = fusion.kernels_of([p2, m2, v2])
    assert len(k.members) == 14 and k.outputs == [m2, v2, p2]


def test_what_does_not_fuse():
    x = Variable("x", shape=(6, 7), dtype="float64")
    i = Variable("i", shape=(6, 7), dtype="int64")
    assert fusion.kernels_of([(x * 2.0).sum(axis=0, keepdims=True)]) == []  # other axis
    assert fusion.kernels_of([(x * 2.0).sum()]) == []  # a full reduction
    assert fusion.kernels_of([(i + 1) * 3]) == []  # integers
    assert fusion.kernels_of([x.exp()]) == []  # one op alone stays a numpy call
    assert fusion.kernels_of([apply_op("matmul", x * 2.0, fusion_t(x)).exp()]) == []


def fusion_t(x):
    return apply_op("transpose", x, dim0=0, dim1=1)


def test_a_group_never_waits_for_a_value_computed_from_itself():
    # a = x * 2 feeds a matmul whose result meets a's chain again: (a + 1) and (m + a) would
    # be one group only if the group could run before and after the matmul
    x = Variable("x", shape=(4, 4), dtype="float64")
    a = x * 2.0
    m = apply_op("matmul", a, a)
    y = (a + 1.0) * (m + a)
    found = fusion.kernels_of([y])
    for k in found:
        inside = set(k.members)
        assert not any(i.op.name == "matmul" and i.inputs[0] in inside for i in k.inputs)
    _same_as_plain([y], {x: np.random.default_rng(0).normal(size=(4, 4))}, "float64")


# -- exactness ---------------------------------------------------------------------------------
@needs_numba
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_values_are_the_plain_programs(dtype):
    rng = np.random.default_rng(1)
    x = Variable("x", shape=(5, 9), dtype=dtype)
    b = Variable("b", shape=(9,), dtype=dtype)
    h = (x + b).relu()
    e = (h - h.mean(axis=-1, keepdims=True)).exp()
    p = e / e.sum(axis=-1, keepdims=True)
    q = apply_op("maximum", p, x).sqrt() ** 3 - (-x).tanh() / 3.0
    feed = {x: rng.normal(size=(5, 9)).astype(dtype), b: rng.normal(size=9).astype(dtype)}
    fn = _same_as_plain([p, q, h], feed, dtype)
    assert fn.kernels and not any(k.fell_back for k in fn.kernels)


@needs_numba
def test_nan_and_inf_follow_numpy():
    x = Variable("x", shape=(2, 3), dtype="float64")
    y = apply_op("maximum", x.relu(), x * 0.5).log() / x
    feed = {x: np.array([[np.nan, -1.0, 0.0], [np.inf, -np.inf, 2.0]])}
    with np.errstate(all="ignore"):
        _same_as_plain([y], feed, "float64")


def _mlp_step(backend):
    rng = np.random.default_rng(0)
    W1 = tg.tensor(rng.normal(size=(12, 16)).astype(np.float32) * 0.3, requires_grad=True)
    b1 = tg.tensor(np.zeros(16, np.float32), requires_grad=True)
    W2 = tg.tensor(rng.normal(size=(16, 5)).astype(np.float32) * 0.3, requires_grad=True)
    opt = tg.optim.Adam([W1, b1, W2], lr=0.01)

    def step(x, y):
        opt.zero_grad()
        h = F.layer_norm(F.gelu(x @ W1 + b1), (16,))
        loss = F.cross_entropy(h @ W2, y)
        loss.backward()
        opt.step()
        return loss

    fn = step if backend is None else tg.compile(step, backend=backend)
    x = tg.tensor(rng.normal(size=(32, 12)).astype(np.float32))
    y = tg.tensor(rng.integers(0, 5, 32))
    losses = [fn(x, y).item() for _ in range(4)]
    return fn, losses, [W1.detach().numpy(), b1.detach().numpy(), W2.detach().numpy()]


@needs_numba
def test_a_compiled_adam_training_step_fuses_and_equals_eager_and_the_plain_program():
    fused, losses, params = _mlp_step("fuse")
    _, plain_losses, plain_params = _mlp_step("numpy")
    _, eager_losses, eager_params = _mlp_step(None)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    np.testing.assert_allclose(losses, plain_losses, rtol=1e-5)
    for a, b, c in zip(params, eager_params, plain_params):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(a, c, rtol=1e-4, atol=1e-6)
    found = fused.explain().kernels
    ops = [op for k in found for op in k.ops]
    assert "sqrt" in ops and "div" in ops  # Adam's update is fused
    assert any(k.inplace for k in found)  # and writes the new weights into the old array
    assert not any(k.fell_back for k in found)


@needs_numba
@pytest.mark.parametrize("where", ["print", "item"])
def test_a_step_whose_kernels_numba_compiles_now_runs_once(monkeypatch, tmp_path, capsys, where):
    """A cold kernel cache: numba compiles each kernel on its first call and, saving it,
    prints its type annotations into a buffer. That print is not the program's side effect:
    the replay must not take it for one and run the step again from inside itself (it did:
    the weights were updated twice; see NOTE [numba prints while it compiles])."""
    monkeypatch.setenv("TINYGRAD_EDU_KERNEL_CACHE", str(tmp_path))

    def run(backend):
        rng = np.random.default_rng(3)
        w = tg.tensor(rng.normal(size=(6, 7)), requires_grad=True)
        opt = tg.optim.SGD([w], lr=0.1, momentum=0.9)

        def step(x):
            opt.zero_grad()
            loss = (tg.tanh(x @ w * 0.5 + 1.0) * 2.0 - 0.25).exp().mean()
            loss.backward()
            opt.step()
            if where == "print":
                print("step done")  # the program's own side effect: the replay syncs here
            return loss

        fn = step if backend is None else tg.compile(step, backend=backend)
        x = tg.tensor(rng.normal(size=(5, 6)))
        losses = [fn(x).item() for _ in range(3)]
        if backend is not None:  # numba compiled them (it did not fall back to numpy code)
            found = fn.explain().kernels
            assert found and not any(k.fell_back for k in found), found
        return losses, w.detach().numpy()

    losses, w = run("fuse")
    eager_losses, eager_w = run(None)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-12)
    np.testing.assert_allclose(w, eager_w, rtol=1e-12, atol=1e-14)
    if where == "print":
        assert capsys.readouterr().out.count("step done") == 6  # 3 compiled calls, 3 eager


# -- the fuzzer's programs, with the fusing backend --------------------------------------------
@needs_numba
@pytest.mark.parametrize("seed", range(0, 400, 10), ids=lambda s: f"seed={s}")
def test_generated_programs_agree_with_fusion(monkeypatch, seed):
    from tests.compiler import differential
    from tests.compiler import test_fuzz_compile as fuzz

    # float32 programs: a kernel's running sums and its float32 constants round differently
    # from numpy's pairwise sums; the differences, carried through a few optimizer steps,
    # stay within a few times 1e-5 (float64 programs agree to 1e-12)
    monkeypatch.setattr(differential, "TOLERANCE", FUZZ_TOLERANCE)
    monkeypatch.setattr(tg, "compile", functools.partial(tg.compile, backend="fuse"))
    if (failure := fuzz.check(seed)) is not None:
        pytest.fail(failure, pytrace=False)


@needs_numba
def test_the_fuzzers_programs_do_fuse(monkeypatch):
    from tests.compiler import test_fuzz_compile as fuzz

    made = []
    real = fusion.Kernel.__init__

    def counting(self, *a, **k):
        real(self, *a, **k)
        made.append(self)

    monkeypatch.setattr(fusion.Kernel, "__init__", counting)
    monkeypatch.setattr(tg, "compile", functools.partial(tg.compile, backend="fuse"))
    for seed in range(0, 400, 10):
        fuzz.check(seed)
    assert len(made) >= 5  # the differential test above is not vacuous


# -- the default, and fallback ------------------------------------------------------------------
@needs_numba
def test_the_default_backend_fuses_where_numba_is_installed(monkeypatch):
    monkeypatch.delenv(fusion.BACKEND_ENV, raising=False)
    fn, losses, _ = _mlp_step("inductor")
    _, eager_losses, _ = _mlp_step(None)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    assert fn.generator == "fuse" and fn.explain().kernels
    assert tg.compile(lambda x: x).generator == "fuse"  # (the argument's default)


def test_the_numpy_generator_has_three_spellings_and_a_switch(monkeypatch):
    monkeypatch.delenv(fusion.BACKEND_ENV, raising=False)
    for name in ("numpy", "eager", "aot_eager"):
        assert tg.compile(lambda x: x, backend=name).generator == "numpy"
    monkeypatch.setenv(fusion.BACKEND_ENV, "numpy")
    fn, losses, _ = _mlp_step("inductor")  # the switch pins what the default means
    assert fn.generator == "numpy" and fn.explain().kernels == []
    if kernels.available():  # an explicit backend="fuse" is not pinned
        assert tg.compile(lambda x: x, backend="fuse").generator == "fuse"
    monkeypatch.setenv(fusion.BACKEND_ENV, "fast")
    with pytest.raises(ValueError, match="TINYGRAD_EDU_COMPILE_BACKEND is 'fast'"):
        tg.compile(lambda x: x)
    with pytest.raises(ValueError, match="unknown backend 'cudagraphs'.*\"numpy\""):
        tg.compile(lambda x: x, backend="cudagraphs")


def test_without_numba_the_default_is_the_numpy_code_and_fuse_says_what_to_install(
        monkeypatch):  # fmt: skip
    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` fails
    monkeypatch.delenv(fusion.BACKEND_ENV, raising=False)
    assert not kernels.available()
    fn, losses, params = _mlp_step("inductor")
    _, eager_losses, _ = _mlp_step(None)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    assert fn.generator == "numpy"
    assert fn.explain().kernels == [] and "Fused kernels" not in str(fn.explain())
    with pytest.raises(ImportError, match=r'backend="fuse" needs numba.*tinygrad_edu\[fuse\]'):
        tg.compile(lambda x: x, backend="fuse")


@needs_numba
@pytest.mark.parametrize("case", ["float16", "int64", "0-d", "empty", "other axis"])
def test_what_the_fuser_cannot_take_runs_as_numpy_code_with_eagers_answers(case):
    rng = np.random.default_rng(3)
    dtype = {"float16": np.float16, "int64": np.int64}.get(case, np.float32)
    shape = {"0-d": (), "empty": (0, 5)}.get(case, (4, 5))
    data = rng.integers(-3, 4, shape) if dtype is np.int64 else rng.normal(size=shape)
    x = tg.tensor(np.asarray(data, dtype=dtype))
    axis = 0 if case == "other axis" else -1

    def f(x):
        y = (x * 3 + 1) * x - 2
        return y if x.ndim == 0 else y + y.sum(axis, keepdim=True)

    fn = tg.compile(f, backend="fuse")
    for _ in range(2):
        got, want = fn(x), f(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-3 if case == "float16"
                                   else 1e-6)  # fmt: skip
    found = fn.explain().kernels
    if case == "other axis":  # the elementwise chain fuses, the column sum is a numpy call
        assert found and not any("sum" in k.ops for k in found)
    else:
        assert found == []


def test_another_device_gets_the_plain_code():
    # (the CuPy program is made without running it: no GPU is needed to see it has no kernels)
    x = Variable("x", shape=(3, 4), dtype="float32")
    fn = fusion.compile_fused([(x * 2.0 + 1.0).tanh()], device="cuda")
    assert fn.kernels == [] and "kernel" not in fn.source


@needs_numba
def test_a_kernel_numba_cannot_compile_runs_as_numpy(monkeypatch):
    def broken(source):
        raise RuntimeError("typing failed")

    monkeypatch.setattr(kernels, "load", broken)
    x = Variable("x", shape=(3, 4), dtype="float64")
    y = (x * 2.0 + 1.0).tanh()
    fn = _same_as_plain([y], {x: np.ones((3, 4))}, "float64")
    (k,) = fn.kernels
    assert k.fell_back and "numpy code" in k.describe()


# -- reports -----------------------------------------------------------------------------------
@needs_numba
def test_explain_lists_the_kernels_their_ops_and_compile_time():
    fn, _, _ = _mlp_step("fuse")
    report = fn.explain()
    text = str(report)
    assert f"Fused kernels: {len(report.kernels)}" in text
    for k in report.kernels:
        assert k.describe() in text and " + ".join(k.ops) in text
        assert k.compile_seconds is not None and "def kernel(R, C," in k.source


@needs_numba
def test_the_kernel_cache_is_on_disk(monkeypatch, tmp_path):
    monkeypatch.setenv("TINYGRAD_EDU_KERNEL_CACHE", str(tmp_path))
    x = Variable("x", shape=(3, 4), dtype="float64")
    fn = fusion.compile_fused([(x * 3.0 - 1.0).exp()])
    fn({x: np.ones((3, 4))})
    (k,) = fn.kernels
    files = list(tmp_path.glob("k_*.py"))
    assert len(files) == 1 and k.source in files[0].read_text()
    assert not k.cached
    # a later run (nothing compiled in memory): numba loads the machine code from the disk
    monkeypatch.setattr(kernels, "_loaded", {})
    y = Variable("y", shape=(5, 2), dtype="float64")  # another shape: the same source
    again = fusion.compile_fused([(y * 3.0 - 1.0).exp()])
    np.testing.assert_allclose(again({y: np.ones((5, 2))})[0], np.full((5, 2), np.exp(2.0)))
    (k2,) = again.kernels
    assert k2.source == k.source and k2.cached and "loaded from disk cache" in k2.describe()


@needs_numba
def test_the_kernels_drawing_boxes_the_groups_and_fits_900_px(tmp_path):
    pytest.importorskip("graphviz")
    from tinygrad_edu import viz

    fn, _, _ = _mlp_step("fuse")
    dot = viz.draw_compiled(fn, "kernels")
    assert dot.source.count("subgraph cluster_kernel") == len(fn.programs[0].forward.kernels)
    try:
        png = dot.pipe(format="png")
    except Exception as e:  # noqa: BLE001 (no dot binary)
        pytest.skip(f"graphviz cannot render: {e}")
    width = int.from_bytes(png[16:20], "big")
    assert 0 < width <= 900


def test_drawing_kernels_of_a_plain_program_says_how_to_get_them():
    pytest.importorskip("graphviz")
    from tinygrad_edu import viz

    fn, _, _ = _mlp_step("numpy")
    with pytest.raises(ValueError, match='backend="fuse"'):
        viz.draw_compiled(fn, "kernels")
