"""Programs and Blocks (Fluid's names), the startup program, nested scopes, JSON round trips,
and the Fluid-style Executor."""

import gc
import json

import numpy as np
import pytest

from tinygrad_edu.symbolic import (
    Executor,
    Program,
    Scope,
    Variable,
    cond,
    create_parameter,
    default_main_program,
    default_startup_program,
    fluid,
    gradients,
    program_guard,
    while_loop,
)
from tinygrad_edu.symbolic.static.initializer import Constant, NumpyArrayInitializer, Uniform


def test_guard_records_nodes_and_restores_the_defaults():
    main, startup = Program(), Program()
    before_main, before_startup = default_main_program(), default_startup_program()
    with program_guard(main, startup) as p:
        assert p is main and default_main_program() is main
        assert default_startup_program() is startup
        x = Variable("x")
        y = (x * 2).exp()
    assert default_main_program() is before_main
    assert default_startup_program() is before_startup
    block = main.global_block()
    assert [n.op.name for n in block.ops] == ["mul", "exp"]
    assert block.vars["x"] is x and block.var("exp((x*2))") is y
    assert y not in default_main_program().global_block().nodes


def test_guard_restores_even_after_an_error_and_rejects_non_programs():
    before = default_main_program()
    with pytest.raises(RuntimeError), program_guard(Program()):
        raise RuntimeError("boom")
    assert default_main_program() is before
    with pytest.raises(TypeError, match="must be a Program"), program_guard("main"):
        pass


def test_repeated_names_get_unique_var_names_and_lookups_fall_back_to_the_parent():
    main = Program()
    with program_guard(main, Program()):
        a, b = Variable("x"), Variable("x")
        s = a + b
        out = cond(s.sum() > 0, lambda: s * 2, lambda: s * 3)
    assert set(main.global_block().vars) >= {"x", "x_1"}
    branch = main.block(1)
    assert branch.parent is main.global_block() and branch.parent_idx == 0
    assert branch.var("x") is a  # not in the branch: found in the parent block
    with pytest.raises(KeyError, match="no var named 'nope'"):
        branch.var("nope")
    assert "cond" in main.to_string() and out.name.startswith("cond")


def test_default_program_keeps_only_live_nodes():
    x = Variable("x")
    y = x * 3
    assert y in default_main_program().global_block().nodes
    del y
    gc.collect()
    names = [n.name for n in default_main_program().global_block().nodes]
    assert "(x*3)" not in names or names.count("(x*3)") < 2


def test_startup_program_runs_once_into_a_scope_and_main_reads_it():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        w = create_parameter((2, 3), name="w", default_initializer=Uniform(-1, 1, seed=3))
        b = create_parameter((3,), name="b", default_initializer=Constant(0.5))
        x = fluid.data("x", shape=(4, 2), dtype="float32")
        y = x @ w + b
    assert [p.name for p in main.all_parameters()] == ["w", "b"]
    scope = Scope()
    exe = fluid.Executor()
    assert exe.run(startup, scope=scope) == []
    expected = np.random.default_rng(3).uniform(-1, 1, (2, 3)).astype(np.float32)
    np.testing.assert_array_equal(scope["w"], expected)
    np.testing.assert_array_equal(scope["b"], np.full(3, 0.5, np.float32))
    xv = np.ones((4, 2), np.float32)
    (got,) = exe.run(main, feed={"x": xv}, fetch_list=[y], scope=scope)
    np.testing.assert_allclose(got, xv @ expected + 0.5, rtol=1e-6)


def test_main_program_without_startup_says_what_to_do():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        w = create_parameter((2,), name="w")
        y = w * 2
    with pytest.raises(ValueError, match="run the startup program first"):
        fluid.Executor().run(main, fetch_list=[y], scope=Scope())
    with pytest.raises(ValueError, match="persistable.*Scope"):
        Executor([y]).run({})


def test_scopes_nest_reads_fall_back_writes_stay_local():
    root = Scope()
    root.set_var("w", np.array([1.0, 2.0]))
    kid = root.new_scope()
    grandkid = kid.new_scope()
    assert root.kids == [kid] and grandkid.parent is kid
    np.testing.assert_array_equal(grandkid["w"], [1.0, 2.0])
    kid.set_var("w", np.array([5.0, 6.0]))
    np.testing.assert_array_equal(grandkid["w"], [5.0, 6.0])
    np.testing.assert_array_equal(root["w"], [1.0, 2.0])
    assert grandkid.find_scope("w") is kid and grandkid.local_var_names() == []
    grandkid.assign("w", np.array([7.0, 8.0]))  # updates write where the value lives
    np.testing.assert_array_equal(kid["w"], [7.0, 8.0])
    with pytest.raises(ValueError, match="keep the shape"):
        grandkid.assign("w", np.zeros(3))
    root.drop_kids()
    assert root.kids == []


def test_a_run_in_a_child_scope_updates_the_parents_parameters():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        w = create_parameter((2,), name="w", default_initializer=Constant(1.0))
        loss = (w * w).sum()
        fluid.optimizer.SGD(learning_rate=0.25).minimize(loss)
    root = Scope()
    exe = fluid.Executor()
    exe.run(startup, scope=root)
    exe.run(main, fetch_list=[loss], scope=root.new_scope())
    np.testing.assert_allclose(root["w"], [0.5, 0.5])  # w - 0.25 * 2w


def _linear_regression_programs(seed=0):
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = fluid.data("x", shape=(16, 3), dtype="float64")
        t = fluid.data("t", shape=(16, 1), dtype="float64")
        h = fluid.layers.fc(x, size=4, act="tanh", name="hidden")
        pred = fluid.layers.fc(h, size=1, name="out")
        loss = fluid.layers.mean(fluid.layers.square_error_cost(pred, t))
        loss.name = "loss"
        fluid.optimizer.Adam(learning_rate=0.05).minimize(loss)
    for p in main.all_parameters():  # deterministic initialisers for the comparison
        for u in startup.global_block().updates:
            if u.target.name == p.name and u.value.op.name == "uniform_random":
                u.value.attrs["seed"] = seed
    return main, startup


def _train(main, startup, steps=5):
    rng = np.random.default_rng(1)
    xs = rng.normal(size=(16, 3))
    ts = np.sin(xs.sum(1, keepdims=True))
    scope, exe = Scope(), fluid.Executor()
    exe.run(startup, scope=scope)
    losses = [exe.run(main, feed={"x": xs, "t": ts}, fetch_list=["loss"], scope=scope)[0]
              for _ in range(steps)]  # fmt: skip
    return np.array(losses), scope.state_dict()


def test_json_round_trip_runs_the_same():
    main, startup = _linear_regression_programs()
    losses, state = _train(main, startup)
    assert losses[-1] < losses[0]
    text_main, text_startup = main.to_json(), startup.to_json()
    json.loads(text_main)  # plain JSON
    assert "pickle" not in text_main
    main2, startup2 = Program.from_json(text_main), Program.from_json(text_startup)
    losses2, state2 = _train(main2, startup2)
    np.testing.assert_array_equal(losses2, losses)
    assert set(state2) == set(state) and "hidden.w.m" in state
    for k in state:
        np.testing.assert_array_equal(state2[k], state[k])
    assert main2.to_json() == text_main  # a fixed point


def test_json_round_trip_keeps_control_flow_and_its_gradients():
    main = Program()
    with program_guard(main, Program()):
        x = Variable("x", shape=(3,), dtype="float64")
        k = Variable("k", shape=(), dtype="float64")
        n, y = while_loop(lambda n, v: (v * v).sum() < k, lambda n, v: (n + 1, v * 1.5), (0, x))
        z = cond(n > 2, lambda: y.tanh().sum(), lambda: (y * y).sum())
        z.name = "z"
        (dx,) = gradients(z, [x])
        dx.name = "dx"
    main2 = Program.from_json(main.to_json())
    blk = main2.global_block()
    for kv in (10.0, 200.0):
        feed = {"x": np.array([0.5, -1.0, 2.0]), "k": np.array(kv)}
        want = fluid.Executor().run(main, feed=feed, fetch_list=["z", "dx"], scope=Scope())
        got = fluid.Executor().run(main2, feed=feed, fetch_list=["z", "dx"], scope=Scope())
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    assert len(main2.blocks) == len(main.blocks) >= 5
    assert blk.var("dx").is_gradient


def test_json_rejects_what_it_cannot_write():
    main = Program()
    with program_guard(main, Program()):
        y = Variable("x") * 2
    outside = Variable("w")
    with program_guard(main):
        Variable("x2") + outside  # uses a node built outside the program
    with pytest.raises(ValueError, match="built outside it"):
        main.to_json()
    with pytest.raises(ValueError, match="not a program written by to_json"):
        Program.from_json('{"format": "other"}')
    assert y is not None


def test_numpy_initializer_and_fluid_feed_errors():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        w = create_parameter((2,), name="w",
                             default_initializer=NumpyArrayInitializer([3.0, 4.0]))  # fmt: skip
        x = fluid.data("x", shape=(2,), dtype="float32")
        y = w * x
    scope = Scope()
    exe = fluid.Executor()
    exe.run(startup, scope=scope)
    np.testing.assert_array_equal(scope["w"], [3.0, 4.0])
    with pytest.raises(ValueError, match="'w' cannot be fed"):
        exe.run(main, feed={"w": np.ones(2)}, fetch_list=[y], scope=scope)
    with pytest.raises(KeyError, match="no var named 'nope'"):
        exe.run(main, feed={"nope": np.ones(2)}, fetch_list=[y], scope=scope)
    with pytest.raises(ValueError, match="exists already"), program_guard(main, startup):
        create_parameter((2,), name="w")


def test_json_keeps_every_kind_of_attribute():
    main = Program()
    with program_guard(main, Program()):
        x = Variable("x", shape=(4, 6), dtype="float32")
        parts = [
            x[1:3, ::2], x[None, ..., -1], x[np.array([3, 0, 3])], x.transpose(1, 0),
            x.reshape(-1, 3), x.astype("float64").sum(axis=(0, 1), keepdims=True),
            x.softmax(axis=0), (x @ x.T).amax(dim=-1), x * np.arange(6, dtype=np.float32),
        ]
        y = sum((p.sum() for p in parts[1:]), parts[0].sum())
        y.name = "y"
        (dx,) = gradients(y, [x])
        dx.name = "dx"
    loaded = Program.from_json(main.to_json())
    xv = np.random.default_rng(0).normal(size=(4, 6)).astype(np.float32)
    run = fluid.Executor().run
    want = run(main, feed={"x": xv}, fetch_list=["y", "dx"], scope=Scope())
    got = run(loaded, feed={"x": xv}, fetch_list=["y", "dx"], scope=Scope())
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


# -- tampered files and cycles: clear errors (#22) ------------------------------------------


def _small_program_json():
    main = Program()
    with program_guard(main, Program()):
        x = Variable("x", shape=(2, 3), dtype="float32")
        y = (x * 2).sum(axis=1)
        y.name = "y"
        z = cond(y.sum() > 0, lambda: y * 1.0, lambda: y * 0.5)
        z.name = "z"
    return json.loads(main.to_json())


def _node(data, op):
    return next(r for r in data["nodes"] if r["op"] == op)


@pytest.mark.parametrize(
    "tamper, match",
    [
        (lambda d: _node(d, "mul")["inputs"].__setitem__(0, "nobody"),
         r"node '.*' reads 'nobody', which no earlier node of the file defines"),
        (lambda d: _node(d, "mul").__setitem__("block", 7), r"names block 7, but the file has"),
        (lambda d: d["blocks"][1].__setitem__("parent_idx", 9),
         r"block 1 names parent block 9"),
        (lambda d: _node(d, "cond")["attrs"].__setitem__("true_block", {"__block__": 42}),
         r"names block 42"),
        (lambda d: _node(d, "placeholder").__setitem__("dtype", "floot32"),
         r"has dtype 'floot32', which is not a dtype name"),
        (lambda d: _node(d, "mul").__setitem__("shape", [3, 2]),
         r"records shape \(3, 2\), but its op gives \(2, 3\)"),
        (lambda d: _node(d, "sum").__setitem__("shape", [5]),
         r"records shape \(5,\), but its op gives \(2,\)"),
        (lambda d: _node(d, "placeholder").__setitem__("shape", "2x3"),
         r"has shape '2x3', which is not a list of sizes"),
        (lambda d: _node(d, "mul").pop("inputs"), r"lacks the field 'inputs'"),
        (lambda d: _node(d, "cond").pop("attrs"), r"lacks the field 'attrs'"),
    ],
)
def test_tampered_json_is_a_clear_error(tamper, match):
    data = _small_program_json()
    tamper(data)
    with pytest.raises(ValueError, match=match):
        Program.from_json(json.dumps(data))


def test_a_bogus_array_dtype_in_json_is_a_clear_error():
    main = Program()
    with program_guard(main, Program()):
        x = Variable("x", shape=(3,), dtype="float32")
        (x * np.arange(3, dtype=np.float32)).sum()
    data = json.loads(main.to_json())
    for rec in data["nodes"]:
        for v in rec["attrs"].values():
            if isinstance(v, dict) and "__array__" in v:
                v["dtype"] = "float33"
    with pytest.raises(ValueError, match=r"array attribute that is not an array of dtype "
                                         r"'float33'"):  # fmt: skip
        Program.from_json(json.dumps(data))


def test_a_cycle_is_named_and_never_written():
    main = Program()
    with program_guard(main, Program()):
        x = Variable("x")
        a = x * 2
        b = a + 1
        c = b.exp()
    a.inputs = (x, c)  # the CSE599W way of rewiring a graph: now a reads itself
    with pytest.raises(ValueError, match=r"cycle: \(x\*2\) -> exp\(.*\) -> \(\(x\*2\)\+1\) -> "
                                         r"\(x\*2\)"):  # fmt: skip
        Executor([c])
    with pytest.raises(ValueError, match="cycle"):
        main.to_json()
    a.inputs = (x, x)  # rewired forward, to a node made earlier: fine
    c.inputs = (x,)  # rewired to a node made *before*: still a valid file
    b.inputs = (c, x)  # b reads c, made after it: written after c
    loaded = Program.from_json(main.to_json())
    got = fluid.Executor().run(loaded, feed={"x": np.array([0.5])}, fetch_list=["((x*2)+1)"],
                               scope=Scope())  # fmt: skip
    np.testing.assert_allclose(got[0], np.exp(0.5) + 0.5)


def test_fluid_accepts_feeds_for_placeholders_a_fetch_does_not_need():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = fluid.data("x", shape=[None, 2], dtype="float32")
        label = fluid.data("label", shape=[None, 1], dtype="float32")
        y = (x * 2).sum()
        y.name = "y"
    scope, exe = Scope(), fluid.Executor()
    exe.run(startup, scope=scope)
    feed = {"x": np.ones((4, 2), np.float32), "label": np.zeros((4, 1), np.float32)}
    (got,) = exe.run(main, feed=feed, fetch_list=[y], scope=scope)  # label: not needed
    assert got == 16.0
    with pytest.raises(KeyError, match="no var named 'nope'"):
        exe.run(main, feed={**feed, "nope": 1.0}, fetch_list=[y], scope=scope)
    assert label is not None
