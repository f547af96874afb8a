"""Fluid as Paddle 2.x static-mode users write it (#22): clone(for_test=True), append_backward,
layers on fluid.data with a None batch size, op descriptions, the symbolic layers, and
stop_gradient."""

import numpy as np
import pytest

from tinygrad_edu.symbolic import Executor, Variable, cond, fluid, gradients, stop_gradient

R = np.random.default_rng(0)
XS = R.normal(size=(16, 3)).astype(np.float32)
YS = (XS @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.25).astype(np.float32)


def _regression():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", shape=[None, 3], dtype="float32")
        y = fluid.data("y", shape=[None, 1], dtype="float32")
        h = fluid.layers.fc(x, size=4, act="tanh")
        pred = fluid.layers.fc(h, size=1)
        loss = fluid.layers.mean(fluid.layers.square_error_cost(pred, y))
        test_prog = main.clone(for_test=True)
        fluid.optimizer.SGD(learning_rate=0.1).minimize(loss)
    return main, startup, test_prog, loss


def test_clone_for_test_evaluates_without_training_while_main_trains():
    main, startup, test_prog, loss = _regression()
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    exe.run(startup, scope=scope)
    feed = {"x": XS, "y": YS}
    before = {k: v.copy() for k, v in scope.state_dict().items()}
    (l0,) = exe.run(test_prog, feed=feed, fetch_list=[loss], scope=scope)
    (l0_again,) = exe.run(test_prog, feed=feed, fetch_list=[loss.name], scope=scope)
    for k, v in scope.state_dict().items():  # evaluating changed no parameter
        np.testing.assert_array_equal(v, before[k])
    assert l0 == l0_again
    losses = [exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0] for _ in range(30)]
    assert losses[0] == l0 and losses[-1] < 0.5 * l0  # main trains
    (l1,) = exe.run(test_prog, feed=feed, fetch_list=[loss], scope=scope)
    np.testing.assert_allclose(l1, exe.run(test_prog, feed=feed, fetch_list=[loss],
                                           scope=scope)[0])  # fmt: skip
    assert l1 < l0
    assert not test_prog.global_block().updates and main.global_block().updates


def test_fc_on_data_with_a_none_batch_size():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", shape=[None, 3], dtype="float32")  # was: "not static"
        y = fluid.layers.fc(x, size=2)
        z = fluid.layers.fc(fluid.layers.relu(y), size=5, bias_attr=False)
    assert x.shape is None and x.partial_shape == (None, 3)
    assert z.partial_shape == (None, 5)
    exe, scope = fluid.Executor(), fluid.Scope()
    exe.run(startup, scope=scope)
    for batch in (1, 7):
        (out,) = exe.run(main, feed={"x": XS[:batch]}, fetch_list=[z], scope=scope)
        assert out.shape == (batch, 5)
    with fluid.program_guard(main, startup):
        seq = fluid.data("seq", shape=[None, 2, 3, 2], dtype="float32")
        flat = fluid.layers.fc(seq, size=4)  # the axes after the batch: 12 rows
        per_step = fluid.layers.fc(seq, size=4, num_flatten_dims=2)  # 6 rows, per step
    exe.run(startup, scope=scope)
    s = R.normal(size=(5, 2, 3, 2)).astype(np.float32)
    a, b = exe.run(main, feed={"x": XS[:5], "seq": s}, fetch_list=[flat, per_step], scope=scope)
    assert a.shape == (5, 4) and b.shape == (5, 2, 4)
    w = [k for k in scope.state_dict() if k.endswith(".w") and scope[k].shape == (6, 4)][0]
    np.testing.assert_allclose(b, s.reshape(5, 2, 6) @ scope[w] + scope[w[:-1] + "b"],
                               rtol=1e-5)  # fmt: skip
    with pytest.raises(ValueError, match=r"fc: the rank of 'v' is unknown.*shape=\[None, 3\]"):
        with fluid.program_guard(fluid.Program(), fluid.Program()):
            fluid.layers.fc(fluid.data("v"), size=2)


def test_append_backward_gives_named_gradients():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", shape=[None, 3], dtype="float64")
        pred = fluid.layers.fc(x, size=1, name="lin")
        loss = fluid.layers.reduce_sum(pred * pred)
        pairs = fluid.backward.append_backward(loss)
    assert [p.name for p, _ in pairs] == ["lin.w", "lin.b"]
    assert [g.name for _, g in pairs] == ["lin.w@GRAD", "lin.b@GRAD"]
    exe, scope = fluid.Executor(), fluid.Scope()
    exe.run(startup, scope=scope)
    xs = XS.astype(np.float64)
    gw, gb = exe.run(main, feed={"x": xs}, fetch_list=["lin.w@GRAD", "lin.b@GRAD"], scope=scope)
    w, b = scope["lin.w"], scope["lin.b"]
    p = xs @ w + b
    np.testing.assert_allclose(gw, 2 * xs.T @ p, rtol=1e-10)
    np.testing.assert_allclose(gb, 2 * p.sum(axis=0), rtol=1e-10)


def test_ops_describe_themselves_as_fluid_operators():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", shape=[None, 3], dtype="float32")
        fluid.layers.fc(x, size=2, act="relu", name="fc")
    ops = main.global_block().ops
    assert [op.type for op in ops] == ["matmul", "add", "relu"]
    mm = ops[0]
    assert mm.input_names == ["X", "Y"] and mm.output_names == ["Out"]
    assert mm.input("X") == ["x"] and mm.input("Y") == ["fc.w"]
    assert mm.output("Out") == [mm.name] and mm.input_arg_names == ["x", "fc.w"]
    with pytest.raises(ValueError, match="no input slot 'Z'"):
        mm.input("Z")


def test_cnn_layers_train_and_evaluate():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        img = fluid.data("img", shape=[None, 1, 6, 6], dtype="float32")
        ids = fluid.data("ids", shape=[None, 2], dtype="int64")
        label = fluid.data("label", shape=[None, 1], dtype="float32")
        h = fluid.layers.conv2d(img, num_filters=3, filter_size=3, padding=1, act="relu")
        h = fluid.layers.batch_norm(h)
        h = fluid.layers.pool2d(h, pool_size=2, pool_type="max", pool_stride=2)
        h = fluid.layers.pool2d(h, pool_type="avg", global_pooling=True)
        e = fluid.layers.embedding(ids, size=(10, 4))
        e = fluid.layers.layer_norm(fluid.layers.reshape(e, (-1, 8)))
        feats = fluid.layers.fc(h, size=4) + fluid.layers.fc(e, size=4)
        pred = fluid.layers.fc(fluid.layers.pad(feats, [0, 0, 1, 1]), size=1)
        loss = fluid.layers.mean(fluid.layers.square_error_cost(pred, label))
        test_prog = main.clone(for_test=True)
        fluid.optimizer.Adam(learning_rate=0.05).minimize(loss)
    exe, scope = fluid.Executor(), fluid.Scope()
    exe.run(startup, scope=scope)
    feed = {"img": R.normal(size=(8, 1, 6, 6)).astype(np.float32),
            "ids": R.integers(0, 10, (8, 2)), "label": R.normal(size=(8, 1)).astype(np.float32)}
    names = [n for n in scope.state_dict() if n.endswith(".mean")]
    assert names and not scope[names[0]].any()
    (l_test,) = exe.run(test_prog, feed=feed, fetch_list=[loss], scope=scope)
    assert not scope[names[0]].any()  # evaluation moved no statistic
    losses = [exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0] for _ in range(40)]
    assert losses[-1] < 0.5 * losses[0]
    assert scope[names[0]].any()  # training moved the batch_norm statistics
    (l_eval,) = exe.run(test_prog, feed=feed, fetch_list=[loss], scope=scope)
    assert np.isfinite(l_eval) and l_eval != l_test


def test_stop_gradient_op_and_attribute():
    x = Variable("x", dtype="float64")
    y = (stop_gradient(x * x) * x).sum()
    (g,) = gradients(y, [x])
    xs = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(Executor([g]).run({x: xs})[0], xs * xs)  # not 3 x^2
    h = x * x
    h.stop_gradient = True  # Fluid's spelling on a var
    (g2,) = gradients((h * x).sum(), [x])
    np.testing.assert_allclose(Executor([g2]).run({x: xs})[0], xs * xs)
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        v = fluid.data("v", shape=[3], dtype="float64")
        w = fluid.layers.stop_gradient(v * 2)
        w.name = "w"
    loaded = fluid.Program.from_json(main.to_json())
    (got,) = fluid.Executor().run(loaded, feed={"v": xs}, fetch_list=["w"], scope=fluid.Scope())
    np.testing.assert_array_equal(got, 2 * xs)


def test_scope_values_stay_writable_after_a_constant_initializer():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        init = fluid.initializer.NumpyArrayInitializer(np.array([3.0, 4.0], np.float32))
        fluid.create_parameter((2,), name="w", default_initializer=init)
    scope = fluid.Scope()
    fluid.Executor().run(startup, scope=scope)
    scope["w"][0] = 1.0  # the graph's constant is read-only; the scope holds its own copy
    np.testing.assert_array_equal(scope["w"], [1.0, 4.0])
    scope2 = fluid.Scope()
    fluid.Executor().run(startup, scope=scope2)
    np.testing.assert_array_equal(scope2["w"], [3.0, 4.0])


def test_a_clone_for_test_with_control_flow_runs_and_says_why_it_cannot_be_saved():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", shape=[None, 3], dtype="float32")
        h = fluid.layers.batch_norm(fluid.layers.fc(x, size=4))
        z = cond(h.sum() > 0, lambda: h.sum(), lambda: (h * h).sum())
        z.name = "z"
        test_prog = main.clone(for_test=True)
    exe, scope = fluid.Executor(), fluid.Scope()
    exe.run(startup, scope=scope)
    (got,) = exe.run(test_prog, feed={"x": XS}, fetch_list=["z"], scope=scope)
    w, b = scope["fc_0.w"], scope["fc_0.b"]
    hv = (XS @ w + b) / np.sqrt(1.0 + 1e-5)  # evaluation: moving mean 0, variance 1
    want = hv.sum() if hv.sum() > 0 else (hv * hv).sum()
    np.testing.assert_allclose(got, want, rtol=1e-4)
    with pytest.raises(ValueError, match=r"clone\(for_test=True\) whose evaluation graph"):
        test_prog.to_json()
    assert fluid.Program.from_json(main.to_json()) is not None
