"""The fusion pass (symbolic.static.passes.fuse): ``nll_loss(log_softmax(z))``'s gradient as one op,
with the very numbers the unfused rules compute."""

import numpy as np
import pytest

import tinygrad_edu.symbolic as S
from tinygrad_edu.symbolic.static.passes import fuse, optimize


def _loss_and_grad(shape, dtype, target, axis=-1, **nll):
    z = S.Variable("z", shape=shape, dtype=dtype)
    t = S.Variable("t", shape=target.shape, dtype="int64")
    loss = S.apply_op("nll_loss", S.apply_op("log_softmax", z, axis=axis), t, **nll)
    (dz,) = S.gradients(loss, [z])
    return z, t, loss, dz


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("case", ["plain", "ignored", "weights", "one sample"])
def test_fused_gradient_is_the_unfused_one_bit_for_bit(dtype, reduction, case):
    rng = np.random.default_rng(3)
    shape, target = ((5,), np.array(2)) if case == "one sample" else ((6, 5), rng.integers(0, 5, 6))
    nll = {"reduction": reduction}
    if case == "ignored":
        target[[1, 4]] = -100
    if case == "weights":
        nll["weight"] = rng.uniform(0.5, 2.0, 5)
    axis = 1 if dtype == "float64" and len(shape) == 2 else -1  # (both spellings)
    z, t, loss, dz = _loss_and_grad(shape, dtype, target, axis=axis, **nll)
    (fused,) = fuse([dz])
    assert fused.op.name == "nll_log_softmax_grad" and fused.dtype == dtype
    feed = {z: (rng.standard_normal(shape) * 4).astype(dtype), t: target}
    want = S.Executor([dz]).run(feed)[0]
    for got in (S.Executor([fused]).run(feed)[0], S.compile(optimize([loss, dz]))(feed)[1]):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        assert (np.signbit(got) == np.signbit(want)).all()  # zeros too


def test_fused_gradient_of_a_zero_seed_keeps_the_signs_of_zeros():
    z, t, loss, dz = _loss_and_grad((4, 3), "float32", np.array([0, 1, 2, 0]))
    seed = S.Variable("g", shape=(), dtype="float32")
    (dz,) = S.gradients(loss, [z], grad_ys=[seed])
    (fused,) = fuse([dz])
    assert fused.op.name == "nll_log_softmax_grad"
    for g in (0.0, -0.0, 1.5, np.inf, np.nan):
        feed = {z: np.linspace(-3, 3, 12, dtype=np.float32).reshape(4, 3),
                t: np.array([0, 1, 2, 0]), seed: np.array(g, np.float32)}  # fmt: skip
        with np.errstate(invalid="ignore"):  # (inf - inf, in both)
            want, got = S.Executor([dz]).run(feed)[0], S.Executor([fused]).run(feed)[0]
        np.testing.assert_array_equal(got, want)
        assert (np.signbit(got) == np.signbit(want)).all(), g


def test_no_fusion_where_the_dtypes_differ_or_the_sum_is_read_elsewhere():
    z, t, loss, dz = _loss_and_grad((4, 3), "float32", np.array([0, 1, 2, 0]))
    seed = S.Variable("g", shape=(), dtype="float64")  # G is float64, logp float32
    (mixed,) = S.gradients(loss, [z], grad_ys=[seed])
    assert fuse([mixed])[0].op.name == "sub"
    x = S.Variable("x", shape=(4, 3), dtype="float32")
    plain = x - S.exp(x) * S.sum(x, axis=1, keepdims=True)  # not an nll_loss_grad
    assert fuse([plain])[0] is plain


def test_the_compiled_training_step_runs_the_fused_gradient():
    import tinygrad_edu as tg
    import tinygrad_edu.nn.functional as F

    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 6)).astype(np.float32)
    y = rng.integers(0, 4, 8)
    w0 = rng.standard_normal((6, 4)).astype(np.float32)
    results = []
    for compiled in (False, True):
        w = tg.tensor(w0.copy(), requires_grad=True)
        opt = tg.optim.SGD([w], lr=0.1)

        def step(xb, yb, w=w, opt=opt):
            opt.zero_grad()
            loss = F.cross_entropy(xb @ w, yb)
            loss.backward()
            opt.step()
            return loss

        fn = tg.compile(step) if compiled else step
        losses = [fn(tg.tensor(x), tg.tensor(y)).item() for _ in range(3)]
        results.append((losses, w.detach().numpy().copy(), w.grad.detach().numpy().copy()))
        if compiled:
            assert "nll_log_softmax_grad" in fn.programs[0].source_code
            assert "_sum_" not in fn.programs[0].source_code
    (l0, w0_, g0), (l1, w1_, g1) = results
    np.testing.assert_allclose(l1, l0, rtol=1e-6)
    np.testing.assert_allclose(w1_, w0_, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(g1, g0, rtol=1e-6, atol=1e-7)
    assert w1_.dtype == w0_.dtype == np.float32


def _compiled_and_interpreted(outs, feed):
    fn = S.compile(optimize(outs))
    return fn, fn(feed), S.Executor(outs).run(feed)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (5, 13)])
def test_generated_log_softmax_and_nll_lines_are_the_kernels(dtype, reduction, shape):
    rng = np.random.default_rng(5)
    target = rng.integers(0, shape[1], shape[0])
    z, t, loss, dz = _loss_and_grad(shape, dtype, target, reduction=reduction)
    logp = loss.inputs[0]
    outs = [logp, loss] if reduction == "none" else [logp, loss, dz]
    feed = {z: (rng.standard_normal(shape) * 3).astype(dtype), t: target}
    fn, got, want = _compiled_and_interpreted(outs, feed)
    assert "_log_softmax_rows(" in fn.source and "_plain_index(" in fn.source
    assert fn.source.count("_plain_index(") == 1  # the labels are tested once
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype == dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
        assert (np.signbit(g) == np.signbit(w)).all()


def test_generated_nll_lines_with_infinities_and_signed_zero_seeds():
    z, t, loss, dz = _loss_and_grad((4, 3), "float32", np.array([0, 1, 2, 0]))
    seed = S.Variable("g", shape=(), dtype="float32")
    (dz,) = S.gradients(loss, [z], grad_ys=[seed])
    logits = np.linspace(-3, 3, 12, dtype=np.float32).reshape(4, 3)
    logits[1, 2], logits[3, 0] = np.inf, -np.inf
    for g in (0.0, -0.0, 1.5, np.inf, np.nan):
        feed = {z: logits, t: np.array([0, 1, 2, 0]), seed: np.array(g, np.float32)}
        with np.errstate(invalid="ignore"):  # (inf - inf, in both)
            fn, got, want = _compiled_and_interpreted([loss.inputs[0], loss, dz], feed)
        assert "_nll_log_softmax_plain(" in fn.source
        for a, b in zip(got, want, strict=True):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)
            assert (np.signbit(a) == np.signbit(b)).all(), g


@pytest.mark.parametrize("labels", [[0, 3, 1], [0, -1, 1], [0, -100, 2]])
def test_generated_nll_lines_leave_other_labels_to_the_kernel(labels):
    z, t, loss, dz = _loss_and_grad((3, 3), "float64", np.array(labels))
    feed = {z: np.arange(9.0).reshape(3, 3), t: np.array(labels)}
    if -100 in labels:  # ignored: the kernel's general case, the same numbers
        fn, got, want = _compiled_and_interpreted([loss, dz], feed)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)
        return
    wrong = 3 if 3 in labels else -1
    message = f"target holds class {wrong}, but there are 3 classes"
    with pytest.raises(RuntimeError, match=message) as interpreted:
        S.Executor([loss, dz]).run(feed)
    with pytest.raises(RuntimeError, match=message) as compiled:  # the interpreter's error
        S.compile(optimize([loss, dz]))(feed)
    assert str(compiled.value) == str(interpreted.value)
    assert isinstance(compiled.value.__cause__, IndexError)
