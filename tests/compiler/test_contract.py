"""tg.compile's contract: a compiled call gives exactly what eager gives (values, gradients,
state and side effects) on every call, or runs that part eagerly. Each test is a program
that once gave a silent wrong answer or crashed from its second call on, run eagerly and
compiled for several calls with changing inputs and state (tests/compiler/differential.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F

from .differential import World, compare

CALLS = 6


def _x(k, shape=(4, 3), grad=False):
    return tg.tensor(np.random.default_rng(k).standard_normal(shape), requires_grad=grad)


def _y(k):
    return tg.tensor(np.random.default_rng(100 + k).integers(0, 2, 4))


def _agree(make, calls=CALLS):
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
