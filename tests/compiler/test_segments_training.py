"""tg.compile of training steps with a graph break (a print of the loss, ``.item()`` kept in a
list, a branch on it), and of branches that flip on a value read: compiled segments with
only the read eager, results identical to eager's, one trace per path taken."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F

RNG = np.random.default_rng(7)


def _model():
    tg.manual_seed(0)
    return tg.nn.Sequential(tg.nn.Linear(4, 8), tg.nn.Tanh(), tg.nn.Linear(8, 3))


OPTIMIZERS = {
    "sgd_momentum": lambda ps: tg.optim.SGD(ps, lr=0.1, momentum=0.9),
    "adam": lambda ps: tg.optim.Adam(ps, lr=0.01),
    "adamw": lambda ps: tg.optim.AdamW(ps, lr=0.01, weight_decay=0.1),
}


def _step_fn(where, model, opt, log):
    """The training step, with the read of the loss at ``where``."""

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        if where == "before_backward":
            print(f"loss {loss.item():.6f}")
        loss.backward()
        if where == "between":
            log.append(loss.item())
        opt.step()
        if where == "after_step":
            print(f"loss {loss.item():.6f}")
        if where == "branch" and float(loss) > 10:  # never true: float() is a break
            print("diverging")
        return loss

    return step


def _state(opt) -> list:
    out = []
    for p in opt.param_groups[0]["params"]:
        st = opt.state.get(p) or opt.state.get(id(p)) or {}
        for k in sorted(st):
            v = st[k]
            out.append((k, np.asarray(v.numpy() if hasattr(v, "numpy") else v, dtype=float)))
    return out


@pytest.mark.parametrize("where", ["before_backward", "between", "after_step", "branch"])
@pytest.mark.parametrize("optim", sorted(OPTIMIZERS))
def test_a_training_step_with_a_read_runs_as_compiled_segments(optim, where, eager_ops,
                                                              capsys):  # fmt: skip
    data = [(tg.tensor(RNG.standard_normal((6, 4)).astype("float32")),
             tg.tensor(RNG.integers(0, 3, 6))) for _ in range(20)]  # fmt: skip
    runs = []
    for compiled in (False, True):
        model = _model()
        opt = OPTIMIZERS[optim](model.parameters())
        log: list = []
        step = _step_fn(where, model, opt, log)
        fn = tg.compile(step) if compiled else step
        capsys.readouterr()
        losses, ran = [], []
        for x, y in data:
            eager_ops[0] = 0
            losses.append(fn(x, y).item())
            ran.append(eager_ops[0])
        printed = capsys.readouterr().out
        runs.append((losses, log, printed, [p.detach().numpy().copy() for p in model.parameters()],
                     _state(opt)))  # fmt: skip
        if compiled:
            report = fn.explain()
            assert not report.eager_reasons, report.eager_reasons
            assert report.compile_times == 1 and report.graph_break_count >= 1
            # a read after opt.step() ends the only segment; one before it starts a second
            assert report.segment_count == (1 if where in ("after_step", "branch") else 2)
            assert ran[1:] == [0] * 19, f"ops ran eagerly on compiled calls: {ran}"
    (l0, g0, p0, w0, s0), (l1, g1, p1, w1, s1) = runs
    np.testing.assert_allclose(l1, l0, rtol=1e-6)
    np.testing.assert_allclose([float(v) for v in g1], [float(v) for v in g0], rtol=1e-6)
    assert p1 == p0  # the printed losses, to six digits
    for a, b in zip(w1, w0):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert [k for k, _ in s1] == [k for k, _ in s0] and s0
    for (_, a), (_, b) in zip(s1, s0):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_a_value_kept_across_the_step_holds_the_value_eager_gave_it():
    kept = []
    runs = []
    for compiled in (False, True):
        model = _model()
        opt = tg.optim.SGD(model.parameters(), lr=0.5)
        kept = []

        def step(x, y, model=model, opt=opt, kept=kept):
            out = model(x)  # computed before the update, read after it
            loss = F.cross_entropy(out, y)
            print(loss.item())
            loss.backward()
            opt.step()
            opt.zero_grad()
            kept.append(out)
            return loss

        fn = tg.compile(step) if compiled else step
        x, y = tg.randn(5, 4), tg.tensor([0, 1, 2, 0, 1])
        for _ in range(4):
            fn(x, y)
        runs.append([k.detach().numpy().copy() for k in kept])
    for a, b in zip(*runs):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_a_step_taken_only_on_one_branch_keeps_both_paths(eager_ops, capsys):
    runs = []
    rng = np.random.default_rng(3)  # losses on both sides of 1.0, the second from call 2
    xs = [tg.tensor((rng.standard_normal((6, 4)) * (3 if i % 2 else 0.1)).astype("float32"))
          for i in range(12)]  # fmt: skip
    for compiled in (False, True):
        model = _model()
        opt = tg.optim.Adam(model.parameters(), lr=0.05)

        def step(x, y, model=model, opt=opt):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            if float(loss) > 1.0:  # a break; the value read decides whether to step
                loss.backward()
                opt.step()
                return loss * 1
            return loss * 2

        fn = tg.compile(step) if compiled else step
        outs, ran = [], []
        for x in xs:
            y = tg.tensor([0, 1, 2, 0, 1, 2])
            both = compiled and fn.explain().compile_times == 2  # both paths traced before
            eager_ops[0] = 0
            outs.append(fn(x, y).item())
            ran.append((both, eager_ops[0]))
        runs.append((outs, [p.detach().numpy().copy() for p in model.parameters()]))
        if compiled:
            assert fn.explain().compile_times == 2 and fn.explain().divergence_count == 1
            after = [n for both, n in ran if both]
            assert after and after == [0] * len(after), ran
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-5)
    for a, b in zip(runs[1][1], runs[0][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _branchy(x):
    y = x * 3
    print("y", y)  # a break: the function is segmented
    if y.sum().item() > 0:
        z = y * 2
    else:
        z = y - 1
    return (z * z).sum()


def test_a_branch_that_flips_on_a_read_keeps_both_paths_compiled(eager_ops):
    f = tg.compile(_branchy)
    for call in range(20):
        sign = 1 if call % 2 == 0 else -1
        v = sign * np.abs(RNG.standard_normal(4))
        x, ex = tg.tensor(v, requires_grad=True), tg.tensor(v, requires_grad=True)
        eager_ops[0] = 0
        got = f(x)
        ran = eager_ops[0]
        want = _branchy(ex)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
        got.backward()
        want.backward()
        np.testing.assert_allclose(x.grad.numpy(), ex.grad.numpy(), rtol=1e-12)
        if call >= 2:  # both paths traced: every call runs compiled
            assert ran == 0, f"call {call}: {ran} ops ran eagerly"
            assert got.grad_fn.name() == "CompiledFunctionBackward"
    report = f.explain()
    assert report.compile_times == 2, report
    assert report.divergence_count == 1
    assert report.segment_count == 4  # before the print, then its continuation until the
    # .item() (shared by both paths), then one per branch
