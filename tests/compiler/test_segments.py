"""tg.compile across graph breaks: the ops before and after a value read (a print, .numpy(),
.item()) run as compiled segments, only the read runs eagerly, and every call's results and
gradients equal eager's, also when the data, the branch taken or the op sequence changes."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F

RNG = np.random.default_rng(1)


def _leaf(shape, grad=True):
    return tg.tensor(RNG.standard_normal(shape), requires_grad=grad)


def _copy(t):
    return tg.tensor(t.detach().numpy().copy(), requires_grad=t.requires_grad)


def _twenty_ops(x):
    for _ in range(10):
        x = x * 1.5 - 0.25
    print("halfway", x)
    for _ in range(10):
        x = (x * 0.5).tanh()
    return x


def test_only_the_break_runs_eagerly_on_later_calls(eager_ops, capsys):
    f = tg.compile(_twenty_ops)
    x = _leaf((3,))
    f(x)  # traces (eagerly, all forty ops)
    eager_ops[0] = 0
    out = f(x)
    assert eager_ops[0] == 0, f"{eager_ops[0]} ops ran eagerly on a segmented call"
    np.testing.assert_allclose(out.detach().numpy(), _twenty_ops(_copy(x)).detach().numpy())
    assert capsys.readouterr().out.count("halfway") == 3
    report = f.explain()
    assert report.segment_count == 2 and report.graph_break_count == 1
    assert out.grad_fn.name() == "CompiledFunctionBackward"


def test_results_and_gradients_equal_eager_as_the_data_changes(capsys):
    def fn(x, w):
        h = (x @ w).tanh()
        print(h)
        s = h.sum().item()  # a value read: Python uses the number
        return (h * h).mean(dim=0) * 2 + h.exp().sum(), s

    f = tg.compile(fn)
    w = _leaf((4, 3))
    for call in range(4):
        x = _leaf((5, 4))
        (a, sa), (b, sb) = f(x, w), fn(ex := _copy(x), ew := _copy(w))
        assert sa == sb and a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
        a.sum().backward()
        b.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), ex.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(w.grad.numpy(), ew.grad.numpy(), rtol=1e-12)
        w.grad = None
        if call:
            assert a.grad_fn.name() == "CompiledFunctionBackward"
    assert f.explain().compile_times == 1 and f.explain().segment_count >= 2


def test_gradients_equal_pytorch():
    torch = pytest.importorskip("torch")

    def fn(x):
        y = (x * x).sin()
        print(float(y.sum()))
        return (y * x).exp().sum()

    f = tg.compile(fn)
    for _ in range(3):
        v = RNG.standard_normal((4,))
        x, tx = tg.tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
        f(x).backward()
        ty = (tx * tx).sin()
        (ty * tx).exp().sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


class _Net(tg.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = tg.nn.Linear(4, 8), tg.nn.Linear(8, 3)
        self.a.weight.data = self.a.weight.data.astype("float64")
        self.a.bias.data = self.a.bias.data.astype("float64")
        self.b.weight.data = self.b.weight.data.astype("float64")
        self.b.bias.data = self.b.bias.data.astype("float64")

    def forward(self, x):
        h = self.a(x).tanh()
        print("hidden mean", h.mean().item())  # a break inside a module's forward
        return self.b(h)


def test_a_break_in_a_modules_forward_is_segmented_and_fills_the_grads(eager_ops):
    tg.manual_seed(0)
    net = _Net()
    cm = tg.compile(net)
    y = tg.tensor([0, 1, 2, 1, 0])
    for call in range(3):
        x = _leaf((5, 4), grad=False)
        net.zero_grad()
        eager_ops[0] = 0
        out = cm(x)
        ran = eager_ops[0]
        F.cross_entropy(out, y).backward()
        got = [p.grad.numpy().copy() for p in net.parameters()]
        net.zero_grad()
        ref = net(x)
        F.cross_entropy(ref, y).backward()
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
        for a, p in zip(got, net.parameters()):
            np.testing.assert_allclose(a, p.grad.numpy(), rtol=1e-10, atol=1e-12)
        if call:
            assert ran == 0 and out.grad_fn.name() == "CompiledFunctionBackward"
    assert cm.explain().segment_count == 2


def test_two_breaks_make_three_segments(eager_ops, capsys):
    def fn(x):
        a = x.exp()
        print("a", a)
        b = a * x
        print("b", b.detach().numpy())
        return b.sum() + a.sum()

    f = tg.compile(fn)
    for _ in range(3):
        x = _leaf((3,))
        eager_ops[0] = 0
        got = f(x)
        compiled_ran = eager_ops[0]
        np.testing.assert_allclose(got.detach().numpy(), fn(_copy(x)).detach().numpy(), rtol=1e-12)
    assert compiled_ran == 0
    report = f.explain()
    assert (report.graph_break_count, report.segment_count) == (2, 3)
    where = [w for _, w in report.break_reasons]
    assert 'print("a", a)' in where[0] and 'print("b", b.detach().numpy())' in where[1]
    assert "printing" in report.break_reasons[0][0] and ".numpy()" in report.break_reasons[1][0]


def test_the_eager_part_changes_a_tensor_the_next_segment_reads():
    state = tg.tensor([1.0, 2.0, 3.0])

    def fn(x):
        y = x * 2
        state.data[...] = y.numpy() + 1  # the break: the eager part writes the state
        fresh = tg.tensor(y.numpy() ** 2)  # and makes a new tensor from the values read
        return y + state + fresh

    f = tg.compile(fn)
    for _ in range(4):
        v = RNG.standard_normal(3)
        got = f(tg.tensor(v))
        np.testing.assert_allclose(got.numpy(), 2 * v + (2 * v + 1) + (2 * v) ** 2, rtol=1e-6)
    assert f.explain().compile_times == 1


def test_a_branch_on_a_value_read_flips_between_calls(capsys):
    def fn(x):
        y = x * 3
        print("y", y)
        if y.sum().item() > 0:  # the value read decides the ops after it
            return (y + 1).exp()
        return y.abs() * -2

    f = tg.compile(fn)
    for sign in [1, -1, -1, 1, 1, -1, 1]:
        x = tg.tensor(sign * np.abs(RNG.standard_normal(3)), requires_grad=True)
        ex = _copy(x)
        got, want = f(x), fn(ex)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
        got.sum().backward()
        want.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), ex.grad.numpy(), rtol=1e-12)


def test_ops_after_the_break_that_differ_between_calls_never_give_a_stale_answer(eager_ops):
    def fn(x):
        y = x * 2
        n = int(y.sum().item())  # a break: Python takes the number
        for _ in range(abs(n) % 4):  # a different op sequence after it, call by call
            y = y + 1
        return y * 3

    f = tg.compile(fn)
    # n = 3, 3, 7, 21, 3, 0: the loop runs 3, 3, 3, 1, 3, 0 times
    seen, traces, divergences = set(), [], []
    for scale in [1.0, 1.0, 2.5, 7.0, 1.0, 0.1] * 2:
        v = np.array([scale, scale / 2])
        path = abs(int(3 * scale)) % 4
        eager_ops[0] = 0
        got = f(tg.tensor(v))
        ran = eager_ops[0]
        np.testing.assert_allclose(got.numpy(), fn(tg.tensor(v)).numpy(), rtol=1e-6)
        report = f.explain()
        traces.append(report.compile_times)
        divergences.append(report.divergence_count)
        if path in seen:  # a path run before: compiled, no eager op
            assert ran == 0, f"scale {scale}: {ran} ops ran eagerly"
        seen.add(path)
    # the first call traced; the calls that took a new path (7.0: one loop, 0.1: none) left
    # the log, ran eagerly from there while traced, and added their path
    assert traces == [1, 1, 1, 2, 2, 3] + [3] * 6
    assert divergences == [0, 0, 0, 1, 1, 2] + [2] * 6


def test_a_break_inside_a_loop(eager_ops, capsys):
    def fn(x):
        for i in range(3):
            x = x * 2 + i
            print("step", i, x)
        return x.sum()

    f = tg.compile(fn)
    for _ in range(3):
        x = _leaf((2,))
        eager_ops[0] = 0
        got = f(x)
        compiled_ran = eager_ops[0]
        np.testing.assert_allclose(got.detach().numpy(), fn(_copy(x)).detach().numpy(), rtol=1e-12)
    assert compiled_ran == 0
    assert f.explain().segment_count == 4 and f.explain().graph_break_count == 3
    out = capsys.readouterr().out
    assert out.count("step 2") == 6


def test_a_value_kept_outside_the_function_gets_its_value():
    kept = []

    def fn(x):
        y = x + 1
        kept.append(y * 10)  # never read inside: no segment computes it for the caller
        print(y)
        return y

    f = tg.compile(fn)
    for v in (1.0, 2.0, 3.0):
        f(tg.tensor([v]))
    assert [k.numpy().tolist() for k in kept] == [[20.0], [30.0], [40.0]]


def test_a_training_step_that_prints_its_loss_equals_eager(capsys):
    x, y = tg.randn(6, 4), tg.tensor([0, 1, 2, 1, 0, 2])
    runs = []
    for compiled in (False, True):
        tg.manual_seed(0)
        model = tg.nn.Sequential(tg.nn.Linear(4, 8), tg.nn.Tanh(), tg.nn.Linear(8, 3))
        opt = tg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step(xb, yb, model=model, opt=opt):
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            print("loss", loss)
            loss.backward()
            opt.step()
            return loss

        fn = tg.compile(step) if compiled else step
        losses = [fn(x, y).item() for _ in range(20)]
        if compiled:  # segmented: forward, the print, then backward and the update
            assert not fn.explain().eager_reasons and fn.explain().segment_count == 2
        runs.append((losses, [p.detach().numpy().copy() for p in model.parameters()]))
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-6)
    for a, b in zip(runs[1][1], runs[0][1]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
