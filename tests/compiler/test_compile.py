"""tg.compile: results identical to eager, guards that keep answers fresh, graph breaks,
autograd across the compiled boundary, whole training steps, and clear errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F
from tinygrad_edu.compiler import GraphBreak, OptimizedModule
from tinygrad_edu.compiler import compiled_callable as compile_api

RNG = np.random.default_rng(0)


def _leaf(shape, dtype="float64", grad=True):
    return tg.tensor(RNG.standard_normal(shape).astype(dtype), requires_grad=grad)


def _same(a, b, exact=True):
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, tg.Tensor):
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
        if exact:
            np.testing.assert_array_equal(a.numpy(), b.numpy())
        else:
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-7)
    elif isinstance(a, tuple | list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y, exact)
    else:
        assert a == b


def _tensors(out):
    return [o for o in (out if isinstance(out, tuple) else (out,)) if isinstance(o, tg.Tensor)]


FUNCTIONS = {
    "python numbers": lambda x, y: (x * 1.0001 + 0.5) * 0.9999 - y / 3,
    "reductions": lambda x, y: (x.sum(dim=1, keepdim=True) * y).mean() + x.max(),
    "matmul and tanh": lambda x, y: (x @ y.T).tanh().exp().sum(dim=0),
    "broadcast": lambda x, y: x * y[0] + x.pow(2).sqrt(),
    "several outputs": lambda x, y: (x.relu(), (x - y).abs().sum(), x.shape[0]),
    "softmax and losses": lambda x, y: (F.log_softmax(x, dim=1) * y.softmax(dim=1)).sum(),
    "views and cat": lambda x, y: tg.cat([x[:, :2], y.reshape(3, 4)[:, 1:3]], dim=1).T.sum(0),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_results_and_gradients_equal_eager(name, dtype):
    fn = FUNCTIONS[name]
    compiled = tg.compile(fn)
    for call in range(3):  # the first call traces, the later ones run the compiled program
        x, y = _leaf((3, 4), dtype), _leaf((3, 4), dtype)
        ex, ey = (tg.tensor(t.detach().numpy(), requires_grad=True) for t in (x, y))
        ours, theirs = compiled(x, y), fn(ex, ey)
        _same(ours, theirs, exact=False)
        outs, ref = _tensors(ours), _tensors(theirs)
        sum(o.sum() * (k + 1) for k, o in enumerate(outs)).backward()
        sum(o.sum() * (k + 1) for k, o in enumerate(ref)).backward()
        for a, b in ((x, ex), (y, ey)):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6, atol=1e-7)
            assert a.grad.dtype == b.grad.dtype
        if call:
            assert outs[0].grad_fn.name() == "CompiledFunctionBackward"
    assert compiled.explain().graph_break_count == 0
    assert len(compiled.programs) == 1  # one trace served all three calls


def test_compiled_outputs_take_part_in_the_eager_graph():
    w = _leaf((4, 3))
    f = tg.compile(lambda x: (x @ w).tanh())
    x = _leaf((2, 4))
    f(x)  # trace
    y = f(x)
    z = (y * 3 + x.sum()).sum()  # eager ops after the compiled node
    z.backward()
    ex, ew = (tg.tensor(t.detach().numpy(), requires_grad=True) for t in (x, w))
    ((ex @ ew).tanh() * 3 + ex.sum()).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), ew.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), ex.grad.numpy(), rtol=1e-12)
    assert y.grad_fn.name() == "CompiledFunctionBackward"
    assert {n.name() for n, _ in y.grad_fn.next_functions if n} == {"AccumulateGrad"}


# -- guards ----------------------------------------------------------------------------------
def test_a_data_dependent_branch_is_right_every_time_it_flips():
    def fn(x):
        if x.sum().item() > 0:
            return x * 2
        return x * -3

    f = tg.compile(fn)
    pos, neg = tg.tensor([1.0, 2.0]), tg.tensor([-1.0, -2.0])
    for v in [pos, neg, pos, neg, neg, pos]:
        np.testing.assert_array_equal(f(v).numpy(), fn(v).numpy())
    assert len(f.programs) == 2  # one per branch, each guarded by the branch's condition
    assert any("bool(" in g for g in f.explain().guards)


def test_a_branch_on_a_tensors_truth_is_guarded():
    def fn(x):
        return x.exp() if (x > 0).all() else x.abs()

    f = tg.compile(fn)
    for v in [tg.tensor([1.0, 2.0]), tg.tensor([-1.0, 2.0]), tg.tensor([3.0, 4.0])]:
        np.testing.assert_allclose(f(v).numpy(), fn(v).numpy())


@pytest.mark.parametrize("change", ["shape", "dtype", "requires_grad", "python value",
                                    "grad mode"])  # fmt: skip
def test_a_changed_input_traces_again(change):
    def fn(x, k):
        return x * k + 1

    f = tg.compile(fn)
    x, k = _leaf((3,)), 2
    f(x, k)
    if change == "shape":
        x = _leaf((4,))
    elif change == "dtype":
        x = _leaf((3,), "float32")
    elif change == "requires_grad":
        x = _leaf((3,), grad=False)
    elif change == "python value":
        k = 5
    if change == "grad mode":
        with tg.no_grad():
            out = f(x, k)
        assert out.grad_fn is None
    else:
        out = f(x, k)
    np.testing.assert_array_equal(out.detach().numpy(), (x.detach().numpy() * k + 1))
    assert out.dtype == x.dtype and out.requires_grad == (x.requires_grad and change != "grad mode")
    assert len(f.programs) == 2


def test_module_training_mode_is_guarded():
    class Net(tg.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = tg.nn.Linear(3, 2)

        def forward(self, x):
            y = self.lin(x)
            return y * 2 if self.training else y

    net = Net()
    f = tg.compile(net)
    x = tg.randn(4, 3)
    a = f(x).detach().numpy()
    net.eval()
    b = f(x).detach().numpy()
    np.testing.assert_allclose(a, 2 * b, rtol=1e-6)
    f.train()
    np.testing.assert_allclose(f(x).detach().numpy(), a, rtol=1e-6)


def test_parameters_are_fed_their_current_values():
    w = tg.tensor([1.0, 2.0])
    f = tg.compile(lambda x: x * w)
    x = tg.tensor([3.0, 3.0])
    f(x)
    with tg.no_grad():
        w.mul_(10)  # changed outside the compiled function
    np.testing.assert_array_equal(f(x).numpy(), [30.0, 60.0])


def test_an_input_changed_in_place_is_written_back_every_call():
    def fn(x):
        x.add_(1)
        return x * 2

    f = tg.compile(fn)
    x, ex = tg.tensor([1.0, 2.0]), tg.tensor([1.0, 2.0])
    for _ in range(3):
        np.testing.assert_array_equal(f(x).numpy(), fn(ex).numpy())
        np.testing.assert_array_equal(x.numpy(), ex.numpy())


def test_past_the_cache_bound_it_warns_and_runs_eagerly(monkeypatch):
    monkeypatch.setattr(compile_api, "cache_size_limit", 3)
    f = tg.compile(lambda x: x + 1)
    for n in range(3):
        f(tg.zeros(n + 1))
    with pytest.warns(UserWarning, match="cache_size_limit = 3"):
        out = f(tg.zeros(7))
    np.testing.assert_array_equal(out.numpy(), np.ones(7))
    assert len(f.programs) == 3


# -- graph breaks -------------------------------------------------------------------------------
def test_printing_a_tensor_breaks_the_graph_and_runs_eagerly(capsys):
    def fn(x):
        y = x * 2
        print("y is", y)
        return y + 1

    f = tg.compile(fn)
    x = tg.tensor([1.0, 2.0])
    for _ in range(2):
        np.testing.assert_array_equal(f(x).numpy(), [3.0, 5.0])
    assert capsys.readouterr().out.count("y is") == 2  # printed every call, as eager does
    report = f.explain()
    assert report.graph_break_count == 1
    reason, where = report.break_reasons[0]
    assert "printing" in reason and "test_compile.py" in where and 'print("y is", y)' in where
    assert "Break reasons" in str(report)


def test_fullgraph_makes_a_break_an_error_naming_the_line():
    def fn(x):
        y = x * 2
        return y.numpy().sum() + 1

    with pytest.raises(GraphBreak, match=r"fullgraph=True.*test_compile.py:\d+.*\.numpy\(\)"):
        tg.compile(fn, fullgraph=True)(tg.tensor([1.0]))


def test_a_package_built_on_the_library_is_user_code_named_from_its_package(tmp_path):
    # the course's lessons live outside tinygrad_edu/: the tracer needs no list of them, and
    # names a package's file from its top package folder on, the same on every machine
    import sys

    package = tmp_path / "course_pkg" / "lessons"
    package.mkdir(parents=True)
    (tmp_path / "course_pkg" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "lesson.py").write_text("def fn(x):\n    y = x * 2\n    return y.numpy().sum()\n")
    sys.path.insert(0, str(tmp_path))
    try:
        from course_pkg.lessons.lesson import fn
    finally:
        sys.path.remove(str(tmp_path))
    try:
        with pytest.raises(GraphBreak, match=r"at course_pkg/lessons/lesson\.py:3 \(return"):
            tg.compile(fn, fullgraph=True)(tg.tensor([1.0]))
    finally:
        for name in [m for m in sys.modules if m.split(".")[0] == "course_pkg"]:
            del sys.modules[name]


def test_random_numbers_break_the_graph_so_masks_stay_fresh():
    tg.manual_seed(0)
    drop = tg.nn.Dropout(0.5)
    f = tg.compile(drop)
    x = tg.ones(1000)
    a, b = f(x).numpy(), f(x).numpy()
    assert not np.array_equal(a, b), "the same dropout mask twice: it was frozen"
    assert "random" in f.explain().break_reasons[0][0]


def test_a_function_that_changes_its_list_argument_runs_eagerly():
    def fn(x, log):
        log.append(x.shape[0])
        return x + 1

    f = tg.compile(fn)
    log = []
    f(tg.zeros(2), log)
    f(tg.zeros(2), log)
    assert log == [2, 2]
    assert "changes a list" in f.explain().break_reasons[0][0]


# -- modules and training steps -----------------------------------------------------------------
def _mlp(seed=0):
    tg.manual_seed(seed)
    return tg.nn.Sequential(tg.nn.Linear(4, 8), tg.nn.Tanh(), tg.nn.Linear(8, 3))


def test_a_compiled_module_fills_the_parameters_grads_as_eager_does():
    model = _mlp()
    cm = tg.compile(model)
    assert isinstance(cm, OptimizedModule)
    assert [p for p in cm.parameters()] == [p for p in model.parameters()]
    x, y = tg.randn(5, 4), tg.tensor([0, 1, 2, 1, 0])
    for _ in range(2):
        model.zero_grad()
        F.cross_entropy(cm(x), y).backward()
        got = [p.grad.numpy().copy() for p in model.parameters()]
        model.zero_grad()
        F.cross_entropy(model(x), y).backward()
        for a, p in zip(got, model.parameters()):
            np.testing.assert_allclose(a, p.grad.numpy(), rtol=1e-6, atol=1e-7)


OPTIMIZERS = [("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}),
              ("SGD", {"lr": 0.1, "momentum": 0.5, "nesterov": True}),
              ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3}),
              ("Adam", {"lr": 0.01}), ("Adam", {"lr": 0.01, "weight_decay": 0.1})]  # fmt: skip


@pytest.mark.parametrize("name,kw", OPTIMIZERS)
def test_twenty_compiled_training_steps_equal_twenty_eager_steps(name, kw):
    x, y = tg.randn(6, 4), tg.tensor([0, 1, 2, 1, 0, 2])
    results = []
    for compiled in (False, True):
        model = _mlp()
        opt = getattr(tg.optim, name)(model.parameters(), **kw)

        def step(xb, yb, model=model, opt=opt):
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            return loss

        fn = tg.compile(step) if compiled else step
        losses = [fn(x, y).item() for _ in range(20)]
        if compiled:
            assert fn.explain().graph_break_count == 0
            # one program, also for a stateful optimizer: the trace's own step made the state
            # that every later call finds, and the program is built for it
            assert len(fn.programs) == 1 and fn.explain().compile_times == 1
        results.append(([p.detach().numpy().copy() for p in model.parameters()], losses,
                        [p.grad.numpy().copy() for p in model.parameters()]))  # fmt: skip
    (pe, le, ge), (pc, lc, gc) = results
    np.testing.assert_allclose(lc, le, rtol=1e-6)
    for a, b in zip(pc + gc, pe + ge):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,kw", [("Adam", {"lr": 0.01}), ("AdamW", {"lr": 0.01}),
                                     ("SGD", {"lr": 0.1, "momentum": 0.9})])  # fmt: skip
def test_an_optimizer_whose_state_is_cleared_traces_again(name, kw):
    # the program is built for the state the traced step leaves; an optimizer without state
    # (cleared, as a fresh one) must not run it (it would read moments that do not exist)
    x, y = tg.randn(6, 4), tg.tensor([0, 1, 2, 1, 0, 2])
    runs = []
    for compiled in (False, True):
        model = _mlp()
        opt = getattr(tg.optim, name)(model.parameters(), **kw)

        def step(xb, yb, model=model, opt=opt):
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            return loss

        fn = tg.compile(step) if compiled else step
        losses = [fn(x, y).item() for _ in range(3)]
        opt.state.clear()
        losses += [fn(x, y).item() for _ in range(3)]
        if compiled:
            assert len(fn.programs) == 2 and fn.explain().graph_break_count == 0
        runs.append((losses, [p.detach().numpy().copy() for p in model.parameters()]))
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-6)
    for a, b in zip(runs[1][1], runs[0][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_a_changed_learning_rate_reaches_the_compiled_step():
    model = _mlp()
    opt = tg.optim.SGD(model.parameters(), lr=0.1)

    @tg.compile
    def step(x, y):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()

    x, y = tg.randn(3, 4), tg.randn(3, 3)
    step(x, y)
    before = [p.detach().numpy().copy() for p in model.parameters()]
    grads = None
    opt.param_groups[0]["lr"] = 0.0  # a schedule that stops learning
    step(x, y)
    grads = [p.grad.numpy() for p in model.parameters()]
    assert any(np.abs(g).sum() > 0 for g in grads)
    for a, p in zip(before, model.parameters()):
        np.testing.assert_array_equal(a, p.detach().numpy())
    assert len(step.programs) == 1


def test_gradients_accumulate_across_compiled_calls_without_zero_grad():
    w = tg.nn.Parameter(tg.tensor([1.0, 2.0]))

    @tg.compile
    def f(x):
        (w * x).sum().backward()

    for _ in range(3):
        f(tg.tensor([1.0, 3.0]))
    np.testing.assert_array_equal(w.grad.numpy(), [3.0, 9.0])


# -- bad input ------------------------------------------------------------------------------------
def test_compiling_something_not_callable_is_a_type_error():
    with pytest.raises(TypeError, match="expected a function or a module, got int"):
        tg.compile(3)


def test_a_generator_argument_is_refused_with_the_fix():
    f = tg.compile(lambda xs: sum(xs))
    with pytest.raises(TypeError, match=r"generator.*list\(\.\.\.\)"):
        f(t for t in [tg.ones(1)])


def test_double_backward_through_a_compiled_call_says_so():
    f = tg.compile(lambda x: (x * x).sum())
    x = _leaf((3,))
    f(x)
    y = f(x)
    with pytest.raises(RuntimeError, match="create_graph=True.*not supported"):
        tg.grad(y, [x], create_graph=True)


def test_decorator_forms_and_disable():
    @tg.compile(fullgraph=True)
    def f(x):
        return x + 1

    assert f(tg.zeros(2)).numpy().tolist() == [1.0, 1.0]
    g = tg.compile(lambda x: x + 1, disable=True)
    g(tg.zeros(2))
    assert g.programs == []


def test_the_generated_source_is_readable_python():
    f = tg.compile(lambda x: (x * 2).tanh())
    f(_leaf((3,)))
    src = f.programs[0].source_code
    assert "def compiled(feed_dict):" in src and "xp.tanh(" in src and "# backward" in src
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compile(src.split("\n\n# backward")[0], "<test>", "exec")


def _sgd_step(model, opt, loss_fn=F.mse_loss, gate=None):
    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        if gate is None or loss.item() > gate:  # a guard on the loss's value
            opt.step()
        return loss

    return step


def test_the_sgd_update_lands_in_the_parameters_own_memory():
    model = _mlp()
    arrays = [p._data for p in model.parameters()]
    step = tg.compile(_sgd_step(model, tg.optim.SGD(model.parameters(), lr=0.1)))
    x, y = tg.randn(5, 4), tg.randn(5, 3)
    for _ in range(3):
        step(x, y)
    src = step.programs[0].source_code.split("# backward")[0]
    assert src.count("out=") == len(arrays)  # each w - lr * g written into w
    assert all(p._data is a for p, a in zip(model.parameters(), arrays))  # no new arrays


def test_a_guard_that_fails_finds_the_parameters_untouched():
    # the program runs whole before its guards are read: had it written the parameters in
    # place, a failed guard would leave them updated and the eager re-run would update again
    x = tg.randn(5, 4)
    ys = [tg.randn(5, 3) * s for s in (1.0, 1.0, 0.01, 0.01, 1.0, 0.01)]
    runs = []
    for compiled in (False, True):
        model = _mlp()
        step = _sgd_step(model, tg.optim.SGD(model.parameters(), lr=0.1), gate=0.5)
        step = tg.compile(step) if compiled else step
        losses = [step(x, y).item() for y in ys]
        if compiled:
            assert len(step.programs) == 2
            assert all("out=" not in p.source_code for p in step.programs)
        runs.append((losses, [p.detach().numpy().copy() for p in model.parameters()]))
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-6)
    for a, b in zip(runs[1][1], runs[0][1]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_a_captured_view_of_a_parameter_keeps_it_out_of_place():
    runs = []
    for compiled in (False, True):
        model = _mlp()
        row = model[0].weight.detach()[0]  # shares the weight's memory
        opt = tg.optim.SGD(model.parameters(), lr=0.1)

        def step(x, y, model=model, row=row, opt=opt):
            opt.zero_grad()
            loss = F.mse_loss(model(x), y) + (row * row).sum()
            loss.backward()
            opt.step()
            return loss

        step = tg.compile(step) if compiled else step
        x, y = tg.randn(5, 4), tg.randn(5, 3)
        losses = [step(x, y).item() for _ in range(4)]
        if compiled:
            src = step.programs[0].source_code.split("# backward")[0]
            assert src.count("out=") == len(list(model.parameters())) - 1  # all but the weight
        runs.append((losses, [p.detach().numpy().copy() for p in model.parameters()]))
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-6)
    for a, b in zip(runs[1][1], runs[0][1]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_a_captured_parameter_that_changed_shape_is_traced_again_untouched():
    x, y = tg.randn(5, 4), tg.randn(5, 3)
    runs = []
    for compiled in (False, True):
        model = _mlp()
        step = _sgd_step(model, tg.optim.SGD(model.parameters(), lr=0.1))
        step = tg.compile(step) if compiled else step
        losses = [step(x, y).item() for _ in range(2)]
        model[0].bias.data = np.full((1,), 0.5, np.float32)  # broadcasts as (8,) did
        losses += [step(x, y).item() for _ in range(2)]
        runs.append((losses, [p.detach().numpy().copy() for p in model.parameters()]))
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-6)
    for a, b in zip(runs[1][1], runs[0][1]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_old_grads_are_dropped_first_only_where_the_program_does_not_read_them():
    x, y = tg.randn(5, 4), tg.randn(5, 3)
    model = _mlp()
    step = tg.compile(_sgd_step(model, tg.optim.SGD(model.parameters(), lr=0.1)))
    step(x, y)
    old = [p.grad for p in model.parameters()]
    assert all(g is not None for g in old)
    step(x, y)
    # zero_grad came first: the program never reads the old .grad, and drops it before it runs
    assert {id(t) for t in step.programs[0].released} == {id(p) for p in model.parameters()}
    assert all(p.grad is not g for p, g in zip(model.parameters(), old))

    def accumulate(xb, yb):  # no zero_grad: the old .grad is read, so it stays
        F.mse_loss(model(xb), yb).backward()

    acc = tg.compile(accumulate)
    acc(x, y)
    before = [p.grad.numpy().copy() for p in model.parameters()]
    acc(x, y)
    assert acc.programs[0].released == []
    after = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    F.mse_loss(model(x), y).backward()
    for b, a, p in zip(before, after, model.parameters()):
        np.testing.assert_allclose(a, b + p.grad.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("make", [
    lambda y: tg.nonzero(y > 2).shape[0],
    lambda y: tg.masked_select(y, y > 2).sum(),
    lambda y: y.unique().shape[0],
])  # fmt: skip
def test_a_result_whose_shape_depends_on_the_values_is_never_stale(make):
    """nonzero, masked_select and unique size their result from the values: a program that
    kept the first call's shape would give a stale answer when the values change."""

    def f(x):
        y = (x * 2).exp()
        return y.sum() + make(y)

    compiled = tg.compile(f)
    inputs = [[0.1, 0.5, 1.0], [0.1, 0.5, 1.0], [0.5, 0.5, 1.0], [0.6, 0.7, 1.0], [0.1, 0.2, 0.3]]
    for values in inputs:
        x = tg.tensor(values)
        assert compiled(x).item() == pytest.approx(f(x).item(), rel=1e-6), values
    report = compiled.explain()
    assert report.graph_break_count >= 1
    assert any("depends on the input's values" in r for r, _ in report.break_reasons)


SCALE = 2.0


def _scaled(x):
    return (x * SCALE).sum()


class _Scaled(tg.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = tg.nn.Linear(2, 2)
        self.k = 1.0

    def forward(self, x):
        return self.lin(x) * self.k


def test_a_python_value_the_trace_baked_in_is_guarded(monkeypatch):
    """A global, a closure variable and a module attribute holding a number become constants
    of the program: changing one must trace again, not return the old constant's answer."""
    x = tg.tensor([1.0, 2.0])
    compiled = tg.compile(_scaled)
    assert compiled(x).item() == compiled(x).item() == 6.0
    monkeypatch.setitem(globals(), "SCALE", 3.0)
    assert compiled(x).item() == _scaled(x).item() == 9.0
    assert any("global SCALE == 3.0" in g for g in compiled.explain().guards)

    c = 2.0

    def inner(x):
        return x * c

    compiled = tg.compile(inner)
    assert compiled(x).tolist() == compiled(x).tolist() == [2.0, 4.0]
    c = 4.0
    assert compiled(x).tolist() == [4.0, 8.0]

    model = _Scaled()
    compiled = tg.compile(model)
    first = compiled(x).detach().numpy().copy()
    np.testing.assert_allclose(compiled(x).detach().numpy(), first)
    model.k = 5.0
    np.testing.assert_allclose(compiled(x).detach().numpy(), model(x).detach().numpy())
    np.testing.assert_allclose(compiled(x).detach().numpy(), 5 * first, rtol=1e-6)


WEIGHT = tg.ones(2)


def _weighted(x):
    return (x * WEIGHT).sum()


class _Held(tg.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = tg.nn.Parameter(tg.ones(2))
        self.plain = tg.ones(2)

    def forward(self, x):
        return (x * self.w * self.plain).sum()


def test_a_tensor_rebound_in_reach_is_guarded(monkeypatch):
    """A global tensor rebound, a parameter replaced, a tensor attribute replaced: the program
    captured the old tensor, so each must trace again (changing values in place, or .data =,
    keeps the same tensor and is read fresh without a new trace)."""
    x = tg.tensor([1.0, 2.0])
    compiled = tg.compile(_weighted)
    assert compiled(x).item() == compiled(x).item() == 3.0
    monkeypatch.setitem(globals(), "WEIGHT", tg.full((2,), 3.0))
    assert compiled(x).item() == 9.0
    model = _Held()
    compiled = tg.compile(model)
    assert compiled(x).item() == compiled(x).item() == 3.0
    model.w = tg.nn.Parameter(tg.full((2,), 2.0))
    assert compiled(x).item() == 6.0
    model.plain = tg.full((2,), 5.0)
    assert compiled(x).item() == 30.0
    traces = compiled.explain().compile_times
    model.w.data = tg.full((2,), 4.0)  # the same parameter, new memory: no new trace
    assert compiled(x).item() == 60.0 and compiled.explain().compile_times == traces


@pytest.mark.parametrize("take", [lambda y: y.detach(), lambda y: y.data])
def test_detach_and_data_inside_a_compiled_function_read_this_call(take):
    """x.detach() and x.data make a tensor on a traced value's array without an op: they are
    that value with no gradient through it, never the first call's array."""
    w = tg.tensor([1.0, 2.0], requires_grad=True)

    def f(x):
        y = x * w
        return (y * take(y)).sum() + take(x).sum()

    compiled = tg.compile(f)
    for values in ([1.0, 2.0], [1.0, 2.0], [5.0, 6.0], [-1.0, 0.5]):
        x = tg.tensor(values)
        w.grad = None
        out = compiled(x)
        out.backward()
        got = (out.item(), w.grad.tolist())
        w.grad = None
        ref = f(x)
        ref.backward()
        assert got == (ref.item(), w.grad.tolist()), values  # the gradient skips take(y)


def test_an_in_place_write_through_detach_runs_eagerly():
    def f(x):
        y = x * 2
        y.detach().mul_(3)  # changes y too: the graph cannot follow both
        return y.sum()

    compiled = tg.compile(f)
    for values in ([1.0, 2.0], [1.0, 2.0], [5.0, 6.0]):
        x = tg.tensor(values)
        assert compiled(x).item() == f(x).item()
    assert any("detach() or .data" in r for r in compiled.explain().eager_reasons)


def test_a_number_read_by_item_computes_as_a_number_with_no_gradient():
    """x.sum().item() used in tensor arithmetic: eager sees a Python number (no gradient
    through it); traced, it failed with a TypeError, and in the program it must not carry a
    gradient either."""

    def f(x):
        s = x.sum().item()
        return (x * s + x.max().item()).sum()

    compiled = tg.compile(f)
    for values in ([1.0, 2.0], [1.0, 2.0], [3.0, 1.0], [-2.0, 0.5]):
        x = tg.tensor(values, requires_grad=True)
        out = compiled(x)
        out.backward()
        ref_x = tg.tensor(values, requires_grad=True)
        ref = f(ref_x)
        ref.backward()
        assert out.item() == pytest.approx(ref.item()), values
        assert x.grad.tolist() == pytest.approx(ref_x.grad.tolist()), values
