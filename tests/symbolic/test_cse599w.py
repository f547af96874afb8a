"""CSE599W assignment 1/2 style tests, run against ``cse599w`` (only the import differs from
the course's). Expected values are computed with numpy from the same inputs."""

import numpy as np
import pytest

from tinygrad_edu.symbolic import cse599w as ad


def test_identity():
    x2 = ad.Variable(name="x2")
    y = x2
    (grad_x2,) = ad.gradients(y, [x2])
    executor = ad.Executor([y, grad_x2])
    x2_val = 2 * np.ones(3)
    y_val, grad_x2_val = executor.run(feed_dict={x2: x2_val})
    assert isinstance(y, ad.Node)
    assert np.array_equal(y_val, x2_val)
    assert np.array_equal(grad_x2_val, np.ones_like(x2_val))


def test_add_by_const():
    x2 = ad.Variable(name="x2")
    y = 5 + x2
    assert y.const_attr == 5
    (grad_x2,) = ad.gradients(y, [x2])
    y_val, grad_x2_val = ad.Executor([y, grad_x2]).run(feed_dict={x2: 2 * np.ones(3)})
    assert np.array_equal(y_val, 2 * np.ones(3) + 5)
    assert np.array_equal(grad_x2_val, np.ones(3))


def test_mul_by_const():
    x2 = ad.Variable(name="x2")
    y = 5 * x2
    (grad_x2,) = ad.gradients(y, [x2])
    x2_val = 2 * np.ones(3)
    y_val, grad_x2_val = ad.Executor([y, grad_x2]).run(feed_dict={x2: x2_val})
    assert np.array_equal(y_val, x2_val * 5)
    assert np.array_equal(grad_x2_val, np.ones_like(x2_val) * 5)


def test_add_two_vars():
    x2, x3 = ad.Variable(name="x2"), ad.Variable(name="x3")
    y = x2 + x3
    grad_x2, grad_x3 = ad.gradients(y, [x2, x3])
    x2_val, x3_val = 2 * np.ones(3), 3 * np.ones(3)
    y_val, g2, g3 = ad.Executor([y, grad_x2, grad_x3]).run(feed_dict={x2: x2_val, x3: x3_val})
    assert np.array_equal(y_val, x2_val + x3_val)
    assert np.array_equal(g2, np.ones_like(x2_val))
    assert np.array_equal(g3, np.ones_like(x3_val))


def test_mul_two_vars():
    x2, x3 = ad.Variable(name="x2"), ad.Variable(name="x3")
    y = x2 * x3
    grad_x2, grad_x3 = ad.gradients(y, [x2, x3])
    x2_val, x3_val = 2 * np.ones(3), 3 * np.ones(3)
    y_val, g2, g3 = ad.Executor([y, grad_x2, grad_x3]).run(feed_dict={x2: x2_val, x3: x3_val})
    assert np.array_equal(y_val, x2_val * x3_val)
    assert np.array_equal(g2, x3_val)
    assert np.array_equal(g3, x2_val)


def test_add_mul_mix_1():
    x1, x2, x3 = (ad.Variable(name=f"x{i}") for i in (1, 2, 3))
    y = x1 + x2 * x3 * x1
    grads = ad.gradients(y, [x1, x2, x3])
    v1, v2, v3 = 1 * np.ones(3), 2 * np.ones(3), 3 * np.ones(3)
    y_val, g1, g2, g3 = ad.Executor([y, *grads]).run(feed_dict={x1: v1, x2: v2, x3: v3})
    assert np.array_equal(y_val, v1 + v2 * v3 * v1)
    assert np.array_equal(g1, np.ones_like(v1) + v2 * v3)
    assert np.array_equal(g2, v3 * v1)
    assert np.array_equal(g3, v2 * v1)


def test_add_mul_mix_2():
    x1, x2, x3, x4 = (ad.Variable(name=f"x{i}") for i in (1, 2, 3, 4))
    y = x1 + x2 * x3 * x4
    grads = ad.gradients(y, [x1, x2, x3, x4])
    vals = [k * np.ones(3) for k in (1, 2, 3, 4)]
    y_val, g1, g2, g3, g4 = ad.Executor([y, *grads]).run(
        feed_dict=dict(zip((x1, x2, x3, x4), vals))
    )
    v1, v2, v3, v4 = vals
    assert np.array_equal(y_val, v1 + v2 * v3 * v4)
    assert np.array_equal(g1, np.ones_like(v1))
    assert np.array_equal(g2, v3 * v4)
    assert np.array_equal(g3, v2 * v4)
    assert np.array_equal(g4, v2 * v3)


def test_add_mul_mix_3():
    x2, x3 = ad.Variable(name="x2"), ad.Variable(name="x3")
    z = x2 * x2 + x2 + x3 + 3
    y = z * z + x3
    grad_x2, grad_x3 = ad.gradients(y, [x2, x3])
    v2, v3 = 2 * np.ones(3), 3 * np.ones(3)
    y_val, g2, g3 = ad.Executor([y, grad_x2, grad_x3]).run(feed_dict={x2: v2, x3: v3})
    z_val = v2 * v2 + v2 + v3 + 3
    assert np.array_equal(y_val, z_val * z_val + v3)
    assert np.array_equal(g2, 2 * z_val * (2 * v2 + 1))
    assert np.array_equal(g3, 2 * z_val + 1)


def test_grad_of_grad():
    x2, x3 = ad.Variable(name="x2"), ad.Variable(name="x3")
    y = x2 * x2 + x2 * x3
    grad_x2, grad_x3 = ad.gradients(y, [x2, x3])
    grad_x2_x2, grad_x2_x3 = ad.gradients(grad_x2, [x2, x3])
    executor = ad.Executor([y, grad_x2, grad_x3, grad_x2_x2, grad_x2_x3])
    v2, v3 = 2 * np.ones(3), 3 * np.ones(3)
    y_val, g2, g3, g22, g23 = executor.run(feed_dict={x2: v2, x3: v3})
    assert np.array_equal(y_val, v2 * v2 + v2 * v3)
    assert np.array_equal(g2, 2 * v2 + v3)
    assert np.array_equal(g3, v2)
    assert np.array_equal(g22, 2 * np.ones_like(v2))
    assert np.array_equal(g23, np.ones_like(v2))


def test_matmul_two_vars():
    x2, x3 = ad.Variable(name="x2"), ad.Variable(name="x3")
    y = ad.matmul_op(x2, x3)
    grad_x2, grad_x3 = ad.gradients(y, [x2, x3])
    x2_val = np.array([[1, 2], [3, 4], [5, 6]])  # 3x2, integers as in the course
    x3_val = np.array([[7, 8, 9], [10, 11, 12]])  # 2x3
    y_val, g2, g3 = ad.Executor([y, grad_x2, grad_x3]).run(feed_dict={x2: x2_val, x3: x3_val})
    expected_y = np.matmul(x2_val, x3_val)
    assert np.array_equal(y_val, expected_y)
    assert np.array_equal(g2, np.matmul(np.ones_like(expected_y), np.transpose(x3_val)))
    assert np.array_equal(g3, np.matmul(np.transpose(x2_val), np.ones_like(expected_y)))


def test_matmul_transposed():
    a, b = ad.Variable(name="a"), ad.Variable(name="b")
    y = ad.matmul_op(a, b, trans_A=True, trans_B=True)
    ga, gb = ad.gradients(y, [a, b])
    rng = np.random.default_rng(0)
    av, bv = rng.standard_normal((4, 3)), rng.standard_normal((2, 4))
    y_val, ga_val, gb_val = ad.Executor([y, ga, gb]).run(feed_dict={a: av, b: bv})
    ones = np.ones((3, 2))
    assert np.sum(np.abs(y_val - av.T @ bv.T)) < 1e-10
    assert np.sum(np.abs(ga_val - (ones @ bv).T)) < 1e-10
    assert np.sum(np.abs(gb_val - (av @ ones).T)) < 1e-10


def test_exp_log_reduce_sum_sub_div():
    x1 = ad.Variable(name="x1")
    y = ad.reduce_sum(ad.log(x1) + ad.exp(x1) - 5 + (1 / x1) + (5 - x1) / 2)
    (g,) = ad.gradients(y, [x1])
    xv = np.array([0.5, 1.0, 2.5])
    y_val, g_val = ad.Executor([y, g]).run(feed_dict={x1: xv})
    want_y = np.sum(np.log(xv) + np.exp(xv) - 5 + 1 / xv + (5 - xv) / 2)
    want_g = 1 / xv + np.exp(xv) - 1 / xv**2 - 0.5
    assert np.abs(y_val - want_y) < 1e-10
    assert np.sum(np.abs(g_val - want_g)) < 1e-10


def test_op_objects_are_callable_and_map_onto_the_library():
    a, b = ad.Variable(name="a"), ad.Variable(name="b")
    assert ad.add_op(a, b).op.name == "add" and ad.mul_op(a, b).op.name == "mul"
    assert ad.add_byconst_op(a, 3).const_attr == 3 and ad.mul_byconst_op(a, 4).const_attr == 4
    assert ad.oneslike_op(a).op.name == "ones_like" and ad.zeroslike_op(a).op.name == "zeros_like"
    assert ad.relu_gradient_op(a, b).op.name == "relu_grad"
    order = ad.find_topo_sort([ad.sum_node_list([a, b, a * b])])
    assert order[0] is a and order[-1].op.name == "add" and b in order


def test_reducesumaxiszero_and_broadcastto():
    x2, x3 = ad.Variable(name="x2"), ad.Variable(name="x3")
    y = ad.reducesumaxiszero_op(ad.broadcastto_op(x2, x3) * x3)
    (g2,) = ad.gradients(y, [x2])
    v2 = np.array([1.0, 2.0, 3.0])
    v3 = np.arange(6.0).reshape(2, 3)
    y_val, g2_val = ad.Executor([y, g2]).run(feed_dict={x2: v2, x3: v3})
    assert np.array_equal(y_val, np.sum(np.broadcast_to(v2, v3.shape) * v3, axis=0))
    assert np.array_equal(g2_val, np.sum(v3, axis=0))


def test_relu_and_relu_gradient():
    x = ad.Variable(name="x")
    y = ad.relu_op(x)
    (g,) = ad.gradients(y, [x])
    xv = np.array([[-1.0, 2.0], [0.5, -3.0]], dtype=np.float32)
    y_val, g_val = ad.Executor([y, g]).run(feed_dict={x: xv})
    assert np.array_equal(y_val, np.maximum(xv, 0))
    assert np.array_equal(g_val, (xv > 0).astype(np.float32))
    assert g_val.dtype == np.float32


def test_softmax_and_softmax_cross_entropy():
    logits, labels = ad.Variable(name="logits"), ad.Variable(name="labels")
    loss = ad.softmaxcrossentropy_op(logits, labels)
    prob = ad.softmax_op(logits)
    (g,) = ad.gradients(loss, [logits])
    rng = np.random.default_rng(1)
    zv = rng.standard_normal((3, 4))
    yv = np.eye(4)[[0, 3, 1]]
    loss_val, prob_val, g_val = ad.Executor([loss, prob, g]).run(
        feed_dict={logits: zv, labels: yv}
    )
    e = np.exp(zv - zv.max(axis=1, keepdims=True))
    softmax = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(prob_val, softmax, rtol=1e-12)
    np.testing.assert_allclose(loss_val, np.mean(-np.sum(yv * np.log(softmax), axis=1)))
    np.testing.assert_allclose(g_val, (softmax - yv) / 3, rtol=1e-10, atol=1e-15)


def test_course_style_custom_op():
    class SquareOp(ad.Op):
        def compute(self, node, input_vals):
            return input_vals[0] * input_vals[0] * node.const_attr

        def gradient(self, node, output_grad):
            return [output_grad * node.inputs[0] * (2 * node.const_attr)]

    x = ad.Variable(name="x")
    y = SquareOp()(x, const_attr=3.0)
    (g,) = ad.gradients(y, [x])
    xv = np.array([1.0, -2.0])
    y_val, g_val = ad.Executor([y, g]).run(feed_dict={x: xv})
    assert np.array_equal(y_val, 3.0 * xv * xv) and np.array_equal(g_val, 6.0 * xv)


def test_softmax_func_is_the_courses_numpy_reference():
    # assignment 2's tests call softmax_func on arrays and compare a GPU softmax against it
    def course(y):  # the course's own definition
        b = y - np.max(y, axis=1, keepdims=True)
        e = np.exp(b)
        return e / np.sum(e, axis=1, keepdims=True)

    rng = np.random.default_rng(3)
    for y in (rng.standard_normal((5, 7)), 1000 * rng.standard_normal((3, 4)),
              rng.standard_normal((2, 3)).astype(np.float32)):  # fmt: skip
        got = ad.softmax_func(y)
        assert got.dtype == y.dtype
        np.testing.assert_allclose(got, course(y), rtol=1e-6 if y.dtype == np.float32 else 1e-12)
    with pytest.raises(TypeError, match=r"softmax_func: got the graph node 'x'.*softmax_op"):
        ad.softmax_func(ad.Variable(name="x"))


def test_const_attr_can_be_set_the_course_way():
    class AddByConstOp(ad.Op):  # as the course writes a new op
        def __call__(self, node_a, const_val):
            new_node = ad.Op.__call__(self)
            new_node.inputs = [node_a]
            new_node.const_attr = const_val  # was: AttributeError (a read-only property)
            new_node.name = f"({node_a.name}+{const_val!r})"
            return new_node

        def compute(self, node, input_vals):
            return input_vals[0] + node.const_attr

        def gradient(self, node, output_grad):
            return [output_grad]

    x2 = ad.Variable(name="x2")
    y = AddByConstOp()(x2, 5)
    assert y.const_attr == 5
    (g,) = ad.gradients(y, [x2])
    y_val, g_val = ad.Executor([y, g]).run(feed_dict={x2: 2 * np.ones(3)})
    np.testing.assert_array_equal(y_val, 7 * np.ones(3))
    np.testing.assert_array_equal(g_val, np.ones(3))
    z = x2 + 5  # a library node: its one constant input is replaced
    z.const_attr = 7
    assert z.const_attr == 7
    (z_val,) = ad.Executor([z]).run(feed_dict={x2: np.ones(2)})
    np.testing.assert_array_equal(z_val, [8.0, 8.0])
    with pytest.raises(AttributeError, match="no one constant to set"):
        (x2 * x2).const_attr = 3
