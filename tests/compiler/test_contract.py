"""tg.compile's contract: a compiled call gives exactly what eager gives (values, gradients,
state and side effects) on every call, or runs that part eagerly. Each test is a program
that once gave a silent wrong answer or crashed from its second call on, run eagerly and
compiled for several calls with changing inputs and state (tests/compiler/differential.py)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F

from .differential import World, compare, history

CALLS = 6


@pytest.fixture(autouse=True)
def _float64_models():
    """The data below is float64 (numpy's default); the models are made in float64 too, as
    PyTorch needs one dtype for a layer's input and weights."""
    before = tg.get_default_dtype()
    tg.set_default_dtype(tg.float64)
    yield
    tg.set_default_dtype(before)


def _x(k, shape=(4, 3), grad=False):
    return tg.tensor(np.random.default_rng(k).standard_normal(shape), requires_grad=grad)


def _y(k):
    return tg.tensor(np.random.default_rng(100 + k).integers(0, 2, 4))


def _agree(make, calls=CALLS, errors=False):
    if not errors:  # two runs that both raise agree, and test nothing: eager must run
        failed = [e for e in history(make, calls) if e[0] != "returned"]
        assert not failed, f"eager itself failed: {failed}"
    difference = compare(make, calls)
    assert difference is None, difference


def _training(extra, opt_kind="sgd"):
    """A training step with ``extra(model, opt)`` run after ``opt.step()``; its state: the
    parameters, their .grad, the learning rate and what ``extra`` returns."""

    def make():
        tg.manual_seed(0)
        model = tg.nn.Linear(3, 2)
        opt = (tg.optim.SGD(model.parameters(), lr=0.5, momentum=0.9) if opt_kind == "sgd"
               else tg.optim.Adam(model.parameters(), lr=0.1))  # fmt: skip
        hook = extra(model, opt)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y) * 10
            loss.backward()
            if hook.get("before_step"):
                hook["before_step"]()
            opt.step()
            if hook.get("after_step"):
                hook["after_step"]()
            return loss

        def state():
            return [model.weight, model.weight.grad, model.bias, opt.param_groups[0]["lr"],
                    hook.get("state", lambda: None)()]  # fmt: skip

        return World(step, lambda k: (_x(k), _y(k)), state, backward=False)

    return make


def test_a_scheduler_step_inside_a_compiled_step_runs_every_call():
    def extra(model, opt):
        sched = tg.optim.lr_scheduler.StepLR(opt, 1, gamma=0.1)
        return {"after_step": sched.step, "state": lambda: sched.last_epoch}

    _agree(_training(extra))
    _agree(_training(extra, "adam"))


def test_a_scheduler_step_is_captured_and_run_after_the_program_every_call():
    """After ``opt.step()``, ``sched.step()`` only sets the learning rate: it is part of the
    program (run after it each call), not a graph break; before ``opt.step()`` (the program
    reads the rate when the call starts) it makes the function run its Python every call."""
    for where in ("after_step", "before_step"):

        def extra(model, opt, where=where):
            sched = tg.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
            return {where: lambda: sched.step(), "state": lambda: sched.last_epoch}

        _agree(_training(extra))
        world = _training(extra)()
        compiled = tg.compile(world.fn)
        for k in range(3):
            compiled(*world.args(k))
        reasons = [r for r, _ in compiled.explain().break_reasons]
        assert (reasons == []) == (where == "after_step"), reasons


@pytest.mark.parametrize("kind", ["adam_coupled", "adam_decoupled", "adamw"])
def test_weight_decay_coupled_or_decoupled_compiles_as_eager_steps(kind):
    def make():
        tg.manual_seed(0)
        model = tg.nn.Linear(3, 2)
        if kind == "adamw":
            opt = tg.optim.AdamW(model.parameters(), lr=0.1, weight_decay=0.5)
        else:
            opt = tg.optim.Adam(model.parameters(), lr=0.1, weight_decay=0.5,
                                decoupled_weight_decay=kind == "adam_decoupled")  # fmt: skip

        def step(x, y):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()

        return World(step, lambda k: (_x(k), _y(k)), lambda: [model.weight, model.bias],
                     backward=False)  # fmt: skip

    _agree(make)


def test_a_learning_rate_set_by_hand_inside_the_step_is_read_where_eager_reads_it():
    def extra(model, opt):
        def decay():
            for g in opt.param_groups:
                g["lr"] *= 0.5

        return {"after_step": decay}

    _agree(_training(extra))
    _agree(_training(extra, "adam"))


def test_clip_grad_norm_inside_a_compiled_step_is_applied_every_call():
    def extra(model, opt):
        return {"before_step": lambda: tg.nn.utils.clip_grad_norm_(model.parameters(), 0.1)}

    _agree(_training(extra))

    def value(model, opt):
        return {"before_step": lambda: tg.nn.utils.clip_grad_value_(model.parameters(), 0.01)}

    _agree(_training(value))


@pytest.mark.parametrize("momentum", [0.1, None])
def test_batchnorm_statistics_are_updated_on_every_compiled_call(momentum):
    def make():
        tg.manual_seed(0)
        bn = tg.nn.BatchNorm1d(3, momentum=momentum)

        def fn(x):
            if x.shape[0] == 5:  # the last calls evaluate with the statistics
                bn.eval()
            return bn(x)

        def args(k):
            return (_x(k, (5 if k >= 4 else 4, 3), grad=True),)

        def state():
            return [bn.running_mean, bn.running_var, bn.num_batches_tracked]

        return World(fn, args, state)

    _agree(make)


def test_batchnorm_compiled_as_a_module_counts_its_batches():
    tg.manual_seed(0)
    bn = tg.nn.BatchNorm1d(3)
    compiled = tg.compile(bn)
    for k in range(3):
        compiled(_x(k))
    assert int(bn.num_batches_tracked.item()) == 3


def test_an_in_place_write_into_an_intermediate_keeps_its_gradient():
    for write in (lambda y, x: y.__setitem__(0, 5.0), lambda y, x: y.mul_(x),
                  lambda y, x: y.add_(1).exp_(), lambda y, x: y[1:].mul_(3)):  # fmt: skip

        def fn(x, write=write):
            y = x * 2
            write(y, x)
            return (y * x).sum()

        _agree(lambda fn=fn: World(fn, lambda k: (_x(k, (3,), grad=True),)))


def test_a_result_made_under_no_grad_has_no_gradient():
    def fn(x):
        with tg.no_grad():
            y = x * 2
        return y, y * x

    _agree(lambda: World(fn, lambda k: (_x(k, grad=True),)))
    compiled = tg.compile(fn)
    for k in range(3):
        y, z = compiled(_x(k, grad=True))
        assert not y.requires_grad and y.grad_fn is None and z.requires_grad


def test_python_side_effects_happen_on_every_call():
    def make():
        calls = [0]
        seen = []

        def fn(x):
            calls[0] += 1
            seen.append(x.shape[0])
            return x * calls[0]

        return World(fn, lambda k: (_x(k),), lambda: (list(calls), list(seen)))

    _agree(make)

    def make_counter():
        class Counting(tg.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = tg.nn.Linear(3, 3)
                self.count = 0

            def forward(self, x):
                self.count += 1
                return self.lin(x).tanh()

        tg.manual_seed(0)
        m = Counting()
        return World(m, lambda k: (_x(k),), lambda: m.count)

    _agree(make_counter)


def test_a_print_inside_a_compiled_function_prints_every_call(capsys):
    def fn(x):
        print("step")
        return x * 2

    compiled = tg.compile(fn)
    for k in range(3):
        compiled(_x(k))
    assert capsys.readouterr().out == "step\n" * 3
    assert any("print()" in r for r, _ in compiled.explain().break_reasons)


def test_an_index_given_as_a_0d_int_tensor_is_read_every_call():
    def fn(x, i):
        return x[i] * 2

    def make():
        xs = tg.tensor(np.arange(40.0), requires_grad=True)
        return World(fn, lambda k: (xs, tg.tensor([0, 30, 10, 30, 5, 0][k])))

    _agree(make)


K = {"v": 1.0}


def test_a_dict_item_or_list_element_changed_between_calls_is_guarded():
    def make_dict():
        def fn(x):
            return x * K["v"]

        def args(k):
            K["v"] = float(k % 3 + 1)
            return (_x(k),)

        return World(fn, args)

    _agree(make_dict)

    def make_list():
        held = [1.0]

        def fn(x):
            return x * held[0]

        def args(k):
            held[0] = float(k % 2 + 1)
            return (_x(k),)

        return World(fn, args)

    _agree(make_list)


def test_a_replaced_submodule_is_guarded():
    def make():
        tg.manual_seed(0)
        model = tg.nn.Sequential(tg.nn.Linear(3, 3), tg.nn.Tanh())

        def args(k):
            if k == 2:
                model[1] = tg.nn.ReLU()
            if k == 4:
                setattr(model, "1", tg.nn.Sigmoid())
            return (_x(k),)

        return World(model, args)

    _agree(make)


def test_a_value_read_through_numpy_and_made_a_tensor_again_is_fresh():
    def fn(x):
        y = x * 2
        return x + tg.tensor(y.detach().numpy()) + y.detach().sum().item()

    _agree(lambda: World(fn, lambda k: (_x(k, grad=True),)))


def test_a_returned_item_is_a_python_number_on_every_call():
    def fn(x):
        return x.sum().item()

    compiled = tg.compile(fn)
    values = [compiled(_x(k)) for k in range(3)]
    assert [type(v) for v in values] == [float] * 3
    assert json.loads(json.dumps(values)) == [fn(_x(k)) for k in range(3)]


def test_dtype_conversions_and_the_accuracy_idiom_compile():
    def fn(x, y):
        acc = (x.argmax(1) == y).float().mean()
        return acc + x.double().sum() + x.long().sum() + x.half().float().sum() + x.to(
            tg.float32).sum() + x.type(tg.float64).sum()  # fmt: skip

    _agree(lambda: World(fn, lambda k: (_x(k), _y(k))))


def test_returning_a_tensor_and_a_number_then_backward():
    def fn(x):
        return x * 2, x.sum().item()

    _agree(lambda: World(fn, lambda k: (_x(k, grad=True),)))


def test_backward_twice_with_retain_graph_accumulates_and_without_says_so():
    compiled = tg.compile(lambda x: (x * x).sum())
    for k in range(3):
        x = _x(k, grad=True)
        y = compiled(x)
        y.backward(retain_graph=True)
        y.backward()
        np.testing.assert_allclose(x.grad.numpy(), 4 * x.detach().numpy())
    y = compiled(_x(0, grad=True))
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_the_first_call_already_runs_the_compiled_program():
    compiled = tg.compile(lambda x: (x * x).sum())
    x = _x(0, grad=True)
    y = compiled(x)
    assert y.grad_fn.name() == "CompiledFunctionBackward"
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())


def test_the_python_state_a_trace_changes_is_named_by_explain():
    calls = [0]

    def fn(x):
        calls[0] += 1
        return x * 2

    compiled = tg.compile(fn)
    compiled(_x(0))
    reasons = [r for r, _ in compiled.explain().break_reasons]
    assert any("closure variable calls" in r for r in reasons), reasons
    with pytest.raises(tg.compiler.GraphBreak, match="print"):
        tg.compile(lambda x: print(x.shape) or x, fullgraph=True)(_x(0))


# -- hostile programs: Python state, aliasing and mutations the trace must not bake in -------
HOSTILE = {}


def _case(make):
    HOSTILE[make.__name__] = make
    return make


def X(k, shape=(4, 3), g=False):  # noqa: N802
    return _x(k, shape, g)


@_case
def global_tensor_inplace():
    W = tg.ones(3)

    def fn(x):
        return x * W

    def args(k):
        with tg.no_grad():
            W.add_(1)
        return (X(k),)

    return World(fn, args)


@_case
def closure_list_of_tensors_replaced():
    ws = [tg.ones(3)]

    def fn(x):
        return x * ws[0]

    def args(k):
        ws[0] = tg.full((3,), float(k))
        return (X(k),)

    return World(fn, args)


@_case
def module_cfg_dict():
    class M(tg.nn.Module):
        def __init__(s):
            super().__init__()
            s.lin = tg.nn.Linear(3, 3)
            s.cfg = {"scale": 1.0}

        def forward(s, x):
            return s.lin(x) * s.cfg["scale"]

    tg.manual_seed(0)
    m = M()

    def args(k):
        m.cfg["scale"] = float(k % 3)
        return (X(k),)

    return World(m, args)


G = [2.0]


def helper(x):
    return x * G[0]


@_case
def helper_reads_global():
    def fn(x):
        return helper(x) + 1

    def args(k):
        G[0] = float(k)
        return (X(k),)

    return World(fn, args)


@_case
def class_attribute():
    class M(tg.nn.Module):
        scale = 1.0

        def __init__(s):
            super().__init__()
            s.lin = tg.nn.Linear(3, 3)

        def forward(s, x):
            return s.lin(x) * type(s).scale

    tg.manual_seed(0)
    m = M()

    def args(k):
        M.scale = float(k)
        return (X(k),)

    return World(m, args)


@_case
def iterator_in_closure():
    data = iter([X(k) for k in range(10)])

    def fn(x):
        return x + next(data)

    return World(fn, lambda k: (X(k + 50),))


@_case
def python_random_inside():
    random.seed(0)

    def fn(x):
        return x * random.random()

    def args(k):
        random.seed(k)
        return (X(k),)

    return World(fn, args)


@_case
def numpy_random_inside():
    def fn(x):
        return x + tg.tensor(np.random.rand(4, 3))

    def args(k):
        np.random.seed(k)
        return (X(k),)

    return World(fn, args)


@_case
def tensor_from_python_list_closure():
    vals = [1.0, 2.0, 3.0]

    def fn(x):
        return x * tg.tensor(vals)

    def args(k):
        vals[1] = float(k)
        return (X(k),)

    return World(fn, args)


@_case
def attribute_of_trainer_object():
    class Trainer:
        pass

    tr = Trainer()
    tr.scale = 1.0
    tg.manual_seed(0)
    tr.model = tg.nn.Linear(3, 3)

    def fn(x):
        return tr.model(x) * tr.scale

    def args(k):
        tr.scale = float(k)
        return (X(k),)

    return World(fn, args)


@_case
def method_of_trainer():
    class Trainer:
        def __init__(s):
            tg.manual_seed(0)
            s.model = tg.nn.Linear(3, 2)
            s.opt = tg.optim.SGD(s.model.parameters(), lr=0.1)
            s.steps = 0

        def step(s, x, y):
            s.opt.zero_grad()
            loss = F.cross_entropy(s.model(x), y)
            loss.backward()
            s.opt.step()
            s.steps += 1
            return loss.detach()

    tr = Trainer()
    return World(
        tr.step,
        lambda k: (X(k), tg.tensor([0, 1, 1, 0])),
        lambda: [tr.model.weight, tr.steps],
        backward=False,
    )


@_case
def grad_accumulation_outside():
    tg.manual_seed(0)
    m = tg.nn.Linear(3, 2)
    opt = tg.optim.SGD(m.parameters(), lr=0.1)

    def fn(x, y):
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        tg.nn.utils.clip_grad_norm_(m.parameters(), 0.5)
        return loss.detach()

    def args(k):
        if k % 2 == 0:
            opt.step()
            opt.zero_grad()
        return X(k), tg.tensor([0, 1, 1, 0])

    return World(fn, args, lambda: [m.weight, m.weight.grad], backward=False)


@_case
def autograd_backward_function():
    tg.manual_seed(0)
    m = tg.nn.Linear(3, 2)

    def fn(x):
        loss = m(x).sum()
        tg.autograd.backward(loss)
        return loss.detach()

    return World(fn, lambda k: (X(k),), lambda: [m.weight.grad], backward=False)


@_case
def grad_set_by_hand():
    tg.manual_seed(0)
    m = tg.nn.Linear(3, 2)

    def fn(x):
        out = m(x).sum()
        m.weight.grad = tg.ones_like(m.weight) * out.detach()
        return out

    return World(fn, lambda k: (X(k),), lambda: [m.weight.grad])


@_case
def dropout_eval_train_flip():
    tg.manual_seed(0)
    m = tg.nn.Sequential(tg.nn.Linear(3, 3), tg.nn.Dropout(0.5))

    def args(k):
        tg.manual_seed(k)
        m.train(k % 2 == 0)
        return (X(k),)

    return World(m, args)


@_case
def buffer_registered_later():
    tg.manual_seed(0)
    m = tg.nn.Linear(3, 3)

    def fn(x):
        return m(x) * (m.extra if hasattr(m, "extra") else 1.0)

    def args(k):
        if k == 2:
            m.register_buffer("extra", tg.full((3,), 2.0))
        return (X(k),)

    return World(fn, args)


@_case
def mutate_argument_list_items():
    def fn(xs):
        return xs[0] * xs[1]

    return World(fn, lambda k: ([X(k), X(k + 1)],))


@_case
def kwargs_change():
    def fn(x, scale=1.0):
        return x * scale

    def args(k):
        return (X(k),)

    return World(lambda x: fn(x, scale=2.0), args)


@_case
def inplace_on_argument():
    def fn(x):
        x.mul_(2)
        return x.sum()

    return World(fn, lambda k: (X(k),), backward=False)


@_case
def requires_grad_toggle_inside():
    tg.manual_seed(0)
    m = tg.nn.Linear(3, 3)

    def fn(x):
        m.weight.requires_grad_(False)
        y = m(x)
        m.weight.requires_grad_(True)
        return y

    return World(fn, lambda k: (X(k),))


@_case
def set_attribute_tensor_inside():
    tg.manual_seed(0)
    m = tg.nn.Linear(3, 3)

    def fn(x):
        y = m(x)
        m.last = y.detach()
        return y

    return World(fn, lambda k: (X(k),), lambda: m.last)


@_case
def eval_inside_function():
    tg.manual_seed(0)
    m = tg.nn.Sequential(tg.nn.Linear(3, 3), tg.nn.BatchNorm1d(3))

    def fn(x):
        m.train()
        y = m(x)
        m.eval()
        return y + m(x)

    return World(fn, lambda k: (X(k),), lambda: [m[1].running_mean, m[1].num_batches_tracked])


@_case
def inplace_on_a_new_argument_each_call():
    seen = []

    def fn(x):
        x.mul_(2)
        return x.sum()

    def args(k):
        seen[:] = [X(k)]
        return (seen[0],)

    return World(fn, args, lambda: seen[0], backward=False)


@_case
def training_step_whose_input_requires_grad():
    tg.manual_seed(0)
    m = tg.nn.Linear(3, 2)
    opt = tg.optim.SGD(m.parameters(), lr=0.1)
    seen = []

    def fn(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    def args(k):
        seen[:] = [X(k, g=True)]
        return seen[0], tg.tensor([0, 1, 1, 0])

    return World(fn, args, lambda: [m.weight, seen[0].grad], backward=False)


step = 0  # a global named as the attribute the function calls (opt.step): not read by it


def test_a_global_named_as_an_attribute_is_not_a_guard():
    tg.manual_seed(0)
    m = tg.nn.Linear(3, 2)
    opt = tg.optim.SGD(m.parameters(), lr=0.1)

    def fn(x, y):
        opt.zero_grad()
        F.cross_entropy(m(x), y).backward()
        opt.step()

    compiled = tg.compile(fn)
    global step
    for step in range(5):  # noqa: B007
        compiled(_x(step), _y(step))
    report = compiled.explain()
    assert report.compile_times == 1
    assert not any("global step" in g for g in report.guards)


BIG = np.ones(1000)
SMALL = np.ones(3)


@_case
def numpy_arrays_in_reach_changed_in_place():
    def fn(x):
        return (x * BIG[:3] * SMALL).sum() + tg.tensor(BIG).sum()

    def args(k):
        BIG[:] = float(k % 3)
        SMALL[1] = float(k)
        return (X(k, (3,), True),)

    return World(fn, args)


@_case
def makemore_step_with_embedding_rows_and_a_manual_update():
    """The lecture's character MLP step: ``C[Xb]`` rows by an index tensor argument, the
    ``.grad`` cleared by hand, ``p.data += -lr * p.grad``."""
    g = tg.Generator().manual_seed(1)
    ps = [tg.randn(s, generator=g) for s in ((27, 10), (30, 64), (64,), (64, 27), (27,))]
    for p in ps:
        p.requires_grad = True
    C, W1, b1, W2, b2 = ps

    def fn(xb, yb, lr):
        h = tg.tanh(C[xb].view(-1, 30) @ W1 + b1)
        loss = F.cross_entropy(h @ W2 + b2, yb)
        for p in ps:
            p.grad = None
        loss.backward()
        for p in ps:
            p.data += -lr * p.grad
        return loss

    def args(k):
        r = np.random.default_rng(k)
        return tg.tensor(r.integers(0, 27, (8, 3))), tg.tensor(r.integers(0, 27, 8)), (
            0.1 if k < 3 else 0.01)  # fmt: skip

    return World(fn, args, lambda: [p.detach() for p in ps] + [p.grad for p in ps],
                 backward=False)  # fmt: skip


@_case
def a_parameter_used_after_its_data_was_written():
    tg.manual_seed(0)
    w = tg.randn(3, requires_grad=True)

    def fn(x):
        w.data += 0.5
        return (w * x).sum()

    return World(fn, lambda k: (X(k, (3,), True),), lambda: w.detach(), leaves=[w])


@_case
def rows_of_a_table_by_an_index_argument_negative_ones_included():
    tg.manual_seed(0)
    table = tg.randn(6, 3, requires_grad=True)

    def fn(ix):
        return (table[ix] * 2).tanh()

    idx = ([0, 5, -1], [-6, 2, 2], [3, -2, 1], [1, 1, 1], [5, 0, -3], [2, 4, 0])
    return World(fn, lambda k: (tg.tensor(idx[k]),), lambda: table.grad, leaves=[table])


@_case
def in_place_view_methods_on_a_square_matrix():
    """``x.t_()``, ``x.unsqueeze_(0)``: the tensor itself becomes the view (a square matrix,
    so a stale untransposed value would have the same shape)."""

    def fn(y):
        x = y * 2
        x.t_()
        z = x @ tg.tensor([[1.0], [0.0]])
        z.unsqueeze_(0)
        return z * tg.tensor([[[1.0], [3.0]]])

    return World(fn, lambda k: (X(k, (2, 2), True),))


@_case
def in_place_view_method_after_a_value_read():
    def fn(y):
        x = y * 2
        scale = 2.0 if x.sum().item() > 0 else 3.0
        x.t_()
        return x @ tg.tensor([[1.0], [0.0]]) * scale

    return World(fn, lambda k: (X(k, (2, 2), True),))


@_case
def detach_in_place_inside_the_function():
    def fn(x):
        y = x * 2
        y.detach_()
        z = (y * x).sum()
        return z + (x * 3).sum() * (1.0 if z.item() > -1e9 else 2.0)

    def plain(x):
        y = x * 2
        y.detach_()
        return (y * x).sum()

    return World(lambda x: (fn(x), plain(x)), lambda k: (X(k, (3,), True),))


# (last: every case above is registered by now)
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_programs_agree_with_eager(name):
    _agree(HOSTILE[name])
