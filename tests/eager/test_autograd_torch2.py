"""Autograd's extension points against PyTorch: custom Functions (the ``setup_context`` style,
keyword arguments to ``apply``, ``once_differentiable``, ``mark_non_differentiable``,
``set_materialize_grads``, ``needs_input_grad``), what a custom backward may return (extra
Nones, gradients the input broadcasts to), anomaly mode and its NaN check, double backward
through every ``matmul`` shape, inference tensors saved for backward, post-accumulate-grad
hooks, and ``numpy()`` on a tensor that requires grad.

Each test runs the same code on ``tinygrad_edu`` and on ``torch`` (float64) and compares the
values, the gradients and the errors.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import tinygrad_edu as tg

LIBS = (tg, torch)
pytestmark = [
    pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled"),
    pytest.mark.filterwarnings("ignore:Error detected in"),
    pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True"),
]


def arr(t):
    return None if t is None else np.asarray(t.detach())


def leaf(L, values):
    return L.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


def outcome(fn):
    """``("ok", value)`` or ``("error", exception type, message)`` of ``fn()``."""
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - compared against PyTorch's outcome
        return ("error", type(e), str(e))


def same(a, b):
    """Assert two results (nested lists/tuples of arrays, numbers, strings, None) are equal."""
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            same(x, y)
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True)
    else:
        assert a == b, (a, b)


def both(fn):
    """Run ``fn(L)`` on both libraries and check they agree; returns ours."""
    ours, theirs = fn(tg), fn(torch)
    same(ours, theirs)
    return ours


def both_raise(fn, error, match):
    """``fn(L)`` raises ``error`` matching ``match`` on both libraries; returns the messages."""
    messages = []
    for L in LIBS:
        with pytest.raises(error, match=match) as info:
            fn(L)
        messages.append(str(info.value))
    return messages


# -- 1. custom Functions -----------------------------------------------------------------------
def _mul_new_style(L):
    class Mul(L.autograd.Function):
        @staticmethod
        def forward(x, y):
            return x * y

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y, g * x

    return Mul


def test_setup_context_style_values_gradients_and_node_name():
    def run(L):
        x, y = leaf(L, [1.0, -2.0, 3.0]), leaf(L, [0.5, 4.0, -1.0])
        z = _mul_new_style(L).apply(x, y)
        (z * z).sum().backward()
        return arr(z), arr(x.grad), arr(y.grad), z.grad_fn.name()

    assert both(run)[3] == "MulBackward"


def test_setup_context_style_double_backward():
    def run(L):
        x, y = leaf(L, [1.0, -2.0]), leaf(L, [0.5, 4.0])
        z = _mul_new_style(L).apply(x, y)
        gx, gy = L.autograd.grad((z * z).sum(), (x, y), create_graph=True)
        return [arr(g) for g in (gx, gy, *L.autograd.grad((gx * gy).sum(), (x, y)))]

    both(run)


def test_setup_context_gets_bound_inputs_with_defaults():
    def run(L):
        seen = []

        class Scaled(L.autograd.Function):
            @staticmethod
            def forward(x, a=2.0, b=3.0):
                return x * a * b

            @staticmethod
            def setup_context(ctx, inputs, output):
                seen.append((len(inputs), ctx.needs_input_grad,
                             [i if isinstance(i, float) else arr(i) for i in inputs]))
                ctx.save_for_backward(inputs[0])
                ctx.a, ctx.b = inputs[1], inputs[2]

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                gb = g * x * ctx.a if ctx.needs_input_grad[2] else None
                return g * ctx.a * ctx.b, None, gb

        x, b = leaf(L, [1.0, 2.0]), leaf(L, [3.0, -1.0])
        z = Scaled.apply(x, b=b)
        z.sum().backward()
        k = Scaled.apply(x, 1.5)  # positional, default b filled in
        return seen, arr(z), arr(x.grad), arr(b.grad), arr(k)

    seen = both(run)[0]
    assert seen[0][0] == 3 and seen[0][1] == (True, False, True)


def test_setup_context_argument_errors():
    def forward_with_ctx(L):
        class K(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                return g * 2

        return K.apply(leaf(L, [1.0]))

    both_raise(forward_with_ctx, TypeError, "missing a required argument: 'x'")

    def unknown_keyword(L):
        return _mul_new_style(L).apply(leaf(L, [1.0]), y=leaf(L, [3.0]), z=leaf(L, [2.0]))

    both_raise(unknown_keyword, TypeError, "unexpected keyword argument 'z'")


def _old_style_abc(L):
    class K(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, a=1.0, b=2.0):
            ctx.save_for_backward(x, a, b)  # (called with tensors for a and b below)
            return x * a * b

        @staticmethod
        def backward(ctx, g):
            x, a, b = ctx.saved_tensors
            return g * a * b, g * x * b, g * x * a

    return K


def test_old_style_keywords_become_inputs_in_signature_order():
    def run(L):
        x, a, b = leaf(L, [1.0, 2.0]), leaf(L, [3.0, 4.0]), leaf(L, [-1.0, 0.5])
        z = _old_style_abc(L).apply(x, b=b, a=a)  # keyword order is not position order
        z.sum().backward()
        return arr(z), arr(x.grad), arr(a.grad), arr(b.grad)

    both(run)


def test_old_style_keyword_errors():
    K = {L: _old_style_abc(L) for L in LIBS}
    x = {L: leaf(L, [1.0]) for L in LIBS}
    both_raise(lambda L: K[L].apply(x[L], b=x[L]), TypeError,
               r"missing required argument: 'a' \(position 1\)")
    both_raise(lambda L: K[L].apply(x[L], 1.0, a=x[L]), TypeError,
               "multiple values for argument 'a'")
    both_raise(lambda L: K[L].apply(x[L], c=x[L]), TypeError, "unexpected keyword argument 'c'")

    def one_gradient_for_two_inputs(L):
        class Scale(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, scale=2.0):
                return x * scale

            @staticmethod
            def backward(ctx, g):
                return g * 2

        y = leaf(L, [1.0, 2.0])
        Scale.apply(y).sum().backward()  # no keyword: one input, one gradient
        assert np.array_equal(arr(y.grad), [2.0, 2.0])
        Scale.apply(y, scale=3.0).sum().backward()  # the keyword is a second input

    both_raise(one_gradient_for_two_inputs, RuntimeError,
               re.escape("function ScaleBackward returned an incorrect number of gradients "
                         "(expected 2, got 1)"))


def _cube_once(L, log):
    class Cube(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        @L.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            log.append((L.is_grad_enabled(), g.requires_grad))
            return g * 3 * x * x

    return Cube


def test_once_differentiable_first_order_and_grad_mode_inside():
    def run(L):
        log = []
        x = leaf(L, [1.0, -2.0, 0.5])
        y = _cube_once(L, log).apply(x)
        (y * y).sum().backward()
        (g,) = L.autograd.grad(_cube_once(L, log).apply(x).sum(), x, create_graph=True)
        return arr(y), arr(x.grad), arr(g), g.requires_grad, log

    both(run)


def test_once_differentiable_refuses_a_second_backward():
    def second(L):
        x = leaf(L, [1.0, 2.0])
        y = _cube_once(L, []).apply(x)
        (g,) = L.autograd.grad((y * y).sum(), x, create_graph=True)
        assert g.requires_grad and np.allclose(arr(g), 6 * np.array([1.0, 2.0]) ** 5)
        g.sum().backward()

    both_raise(second, RuntimeError,
               "trying to differentiate twice a function that was marked with "
               "@once_differentiable")

    def grad_of_gradient(L):  # the Error node leads nowhere: x was not used (both say so)
        x = leaf(L, [1.0, 2.0])
        y = _cube_once(L, []).apply(x)
        (g,) = L.autograd.grad((y * y).sum(), x, create_graph=True)
        L.autograd.grad(g.sum(), x)

    both_raise(grad_of_gradient, RuntimeError, "allow_unused=True")


def test_import_paths_of_function_helpers():
    from tinygrad_edu.autograd.function import Function, FunctionCtx, once_differentiable

    assert Function is tg.autograd.Function is tg.Function
    assert FunctionCtx is tg.autograd.FunctionCtx
    assert once_differentiable is tg.autograd.function.once_differentiable


def test_mark_non_differentiable_materialized_zero_gradient():
    def run(L):
        seen = []

        class Sort(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                v, i = x.sort()
                ctx.mark_non_differentiable(i)
                ctx.save_for_backward(i)
                return v, i

            @staticmethod
            def backward(ctx, gv, gi):
                seen.append(arr(gi))
                (i,) = ctx.saved_tensors
                r = L.zeros_like(gv)
                r[i] = gv
                return r

        x = leaf(L, [3.0, 1.0, 2.0])
        v, i = Sort.apply(x)
        (v * L.arange(3.0, dtype=L.float64)).sum().backward()
        return v.requires_grad, i.requires_grad, i.grad_fn is None, arr(x.grad), seen

    both(run)


def test_set_materialize_grads_false_passes_none():
    def run(L):
        seen = []

        class Two(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, a, b):
                seen.append((a is None, b is None))
                r = 0
                if a is not None:
                    r = r + 2 * a
                if b is not None:
                    r = r + 3 * b
                return r

        x = leaf(L, [3.0, 1.0])
        a, _ = Two.apply(x)
        a.sum().backward()
        return arr(x.grad), seen

    both(run)


def test_needs_input_grad():
    def run(L):
        seen = []

        class F(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, n):
                seen.append(ctx.needs_input_grad)
                return x * y * n

            @staticmethod
            def backward(ctx, g):
                return g, None, None

        F.apply(leaf(L, [1.0]), L.ones(1, dtype=L.float64), 3)
        return seen

    assert both(run) == [(True, False, False)]


# -- 2. what a custom backward may return ------------------------------------------------------
def _returns(L, make):
    class X(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return make(L, g)

    return X


def test_trailing_nones_are_dropped():
    def run(L):
        x, y = leaf(L, [1.0, 2.0]), leaf(L, [3.0, 4.0])
        _returns(L, lambda L, g: (g * 2, g * 3, None, None)).apply(x, y).sum().backward()
        return arr(x.grad), arr(y.grad)

    both(run)


@pytest.mark.parametrize("make, got", [
    (lambda L, g: (g, g, g), 3),
    (lambda L, g: (g, g, None, g), 4),
    (lambda L, g: g, 1),
    (lambda L, g: [g, g], 1),  # a list is one value, as in PyTorch
])  # fmt: skip
def test_wrong_number_of_gradients(make, got):
    def run(L):
        _returns(L, make).apply(leaf(L, [1.0, 2.0]), leaf(L, [3.0, 4.0])).sum().backward()

    both_raise(run, RuntimeError,
               re.escape(f"function XBackward returned an incorrect number of gradients "
                         f"(expected 2, got {got})"))


_BROADCAST = [
    ((2,), (3, 2)), ((2, 1), (2, 3)), ((), (3,)), ((1,), (3,)), ((2,), (4, 1, 2)),
    ((3,), (3, 2)), ((2,), (1,)), ((2,), ()), ((2, 3), (3,)),
]


@pytest.mark.parametrize("shape, grad_shape", _BROADCAST)
def test_gradient_the_input_broadcasts_to_is_summed_else_error(shape, grad_shape):
    def run(L):
        class B(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return L.arange(float(np.prod(grad_shape)), dtype=L.float64).reshape(grad_shape)

        x = L.ones(shape, dtype=L.float64, requires_grad=True)
        B.apply(x).sum().backward()
        return arr(x.grad)

    results = [outcome(lambda L=L: run(L)) for L in LIBS]
    assert results[0][0] == results[1][0], results
    if results[0][0] == "ok":
        same(results[0][1], results[1][1])
    else:
        assert results[0][1] is results[1][1] is RuntimeError
        assert results[1][2] in results[0][2], results  # PyTorch's message, then the fix
        assert "returned an invalid gradient at index 0" in results[0][2]


def test_broadcast_gradient_is_summed_under_create_graph_and_keeps_dtype():
    def run(L):
        class B(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x**3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return (g * x * x).expand(3, 2)  # three copies: summed to 3 g x^2

        x = leaf(L, [1.5, -2.0])
        (g,) = L.autograd.grad(B.apply(x).sum(), x, create_graph=True)
        (h,) = L.autograd.grad((g * g).sum(), x)

        class F32(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return L.ones(3, 2, dtype=L.float32)

        y = leaf(L, [1.0, 2.0])
        F32.apply(y).sum().backward()
        return arr(g), arr(h), arr(y.grad), str(y.grad.dtype).replace("torch.", "")

    both(run)


# -- 3. anomaly mode ---------------------------------------------------------------------------
def test_anomaly_switches_and_their_state():
    def run(L):
        states = []

        def state():
            states.append((L.is_anomaly_enabled(), L.is_anomaly_check_nan_enabled()))

        state()
        L.autograd.set_detect_anomaly(True)
        state()
        L.autograd.set_detect_anomaly(False)
        state()
        with L.autograd.set_detect_anomaly(True, check_nan=False):
            state()
        state()
        with L.autograd.detect_anomaly(check_nan=False):
            state()
            with L.autograd.detect_anomaly():
                state()
            state()
        state()
        L.set_anomaly_enabled(True, False)
        state()
        L.set_anomaly_enabled(False)
        state()
        return states

    both(run)


def test_anomaly_switch_errors():
    both_raise(lambda L: L.autograd.set_detect_anomaly(), TypeError, "mode")
    both_raise(lambda L: L.set_anomaly_enabled("yes"), TypeError, "must be bool, not str")
    both_raise(lambda L: L.autograd.set_detect_anomaly(True)(lambda: None), TypeError,
               "'set_detect_anomaly' object is not callable")
    for L in LIBS:
        L.autograd.set_detect_anomaly(False)
        assert not L.is_anomaly_enabled()


def _div_self(L):
    x = leaf(L, [0.0, 1.0])
    return x, (x / x).sum()  # DivBackward0's gradient for the divisor is -x/x^2: nan at 0


def test_anomaly_check_nan_false_lets_nan_through():
    def run(L):
        x, y = _div_self(L)
        with L.autograd.detect_anomaly(check_nan=False):
            y.backward()
        return arr(x.grad)

    grad = both(run)
    assert np.isnan(grad[0])


def test_anomaly_nan_error_names_the_node_and_output():
    def run(L):
        _, y = _div_self(L)
        with L.autograd.detect_anomaly():
            y.backward()

    both_raise(run, RuntimeError,
               re.escape("Function 'DivBackward0' returned nan values in its 1th output."))

    def custom(L):
        class N(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * float("nan")

        with L.autograd.detect_anomaly():
            N.apply(leaf(L, [1.0])).sum().backward()

    both_raise(custom, RuntimeError,
               re.escape("Function 'NBackward' returned nan values in its 0th output."))


def test_anomaly_nan_check_is_decided_at_the_backward_call():
    def built_inside_run_outside(L):
        with L.autograd.detect_anomaly():
            x, y = _div_self(L)
        y.backward()
        return arr(x.grad)

    both(built_inside_run_outside)

    def built_outside_run_inside(L):
        _, y = _div_self(L)
        with L.autograd.detect_anomaly():
            y.backward()

    both_raise(built_outside_run_inside, RuntimeError, "DivBackward0' returned nan values")

    def switched_on(L):
        _, y = _div_self(L)
        L.autograd.set_detect_anomaly(True)
        try:
            L.autograd.grad(y, y.grad_fn.next_functions[0][0].next_functions[0][0].variable)
        finally:
            L.autograd.set_detect_anomaly(False)

    both_raise(switched_on, RuntimeError, "returned nan values in its 1th output")


# -- 4. double backward through matrix products ------------------------------------------------
_MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)), ((5, 2, 3), (3,)),
    ((3,), (5, 3, 2)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
    ((1, 2, 3), (5, 3, 4)), ((4, 1, 2, 3), (5, 3, 4)),
]


@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("sa, sb", _MATMUL_SHAPES)
def test_matmul_double_backward_every_shape(sa, sb, needs):
    rng = np.random.default_rng(len(sa) * 10 + len(sb))
    a0, b0 = rng.standard_normal(sa), rng.standard_normal(sb)

    def run(L):
        a = L.tensor(a0, dtype=L.float64, requires_grad=needs[0])
        b = L.tensor(b0, dtype=L.float64, requires_grad=needs[1])
        wanted = [t for t in (a, b) if t.requires_grad]
        y = ((a @ b) ** 2).sum()
        grads = L.autograd.grad(y, wanted, create_graph=True)
        second = L.autograd.grad(sum((g * g).sum() for g in grads), wanted)
        return [arr(g) for g in (*grads, *second)]

    both(run)


@pytest.mark.parametrize("form", ["mv", "A@v", "v@A", "dot", "Tensor.mv", "Tensor.dot"])
@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
def test_matrix_vector_double_backward(form, needs):
    rng = np.random.default_rng(7)
    m0, v0, w0 = rng.standard_normal((2, 3)), rng.standard_normal(3), rng.standard_normal(3)

    def run(L):
        A = L.tensor(m0, dtype=L.float64, requires_grad=needs[0])
        v = L.tensor(v0, dtype=L.float64, requires_grad=needs[1])
        w = L.tensor(w0, dtype=L.float64, requires_grad=needs[0])
        first, second = {
            "mv": (A, v), "A@v": (A, v), "v@A": (v, A), "dot": (w, v),
            "Tensor.mv": (A, v), "Tensor.dot": (w, v),
        }[form]
        out = {
            "mv": lambda: L.mv(A, v), "A@v": lambda: A @ v, "v@A": lambda: v[:2] @ A,
            "dot": lambda: L.dot(w, v), "Tensor.mv": lambda: A.mv(v),
            "Tensor.dot": lambda: w.dot(v),
        }[form]()
        wanted = [t for t in (first, second) if t.requires_grad]
        grads = L.autograd.grad((out * out).sum(), wanted, create_graph=True)
        second_order = L.autograd.grad(sum((g**3).sum() for g in grads), wanted)
        return [arr(out)] + [arr(g) for g in (*grads, *second_order)]

    both(run)


# -- 5. inference tensors ----------------------------------------------------------------------
_INFERENCE_USES = {
    "mul": lambda L, w, x: (w * x).sum(),
    "add": lambda L, w, x: (w + x).sum(),
    "sub": lambda L, w, x: (x - w).sum(),
    "matmul": lambda L, w, x: w @ x,
    "view": lambda L, w, x: (w[:2] * x[:2]).sum(),
    "element": lambda L, w, x: (w * x[0]).sum(),
    "detach": lambda L, w, x: (w * x.detach()).sum(),
    "clone": lambda L, w, x: (w * x.clone()).sum(),
    "pow": lambda L, w, x: (w**x).sum(),
    "rpow": lambda L, w, x: (x**w).sum(),
    "exp then mul": lambda L, w, x: (w.exp() * x).sum(),
    "no grad involved": lambda L, w, x: (x * 2).exp().sum(),
}


@pytest.mark.parametrize("use", list(_INFERENCE_USES))
def test_inference_tensor_saved_for_backward(use):
    def run(L):
        w = L.nn.Parameter(L.tensor([1.0, 2.0, 3.0], dtype=L.float64))
        with L.inference_mode():
            x = L.tensor([0.5, -1.0, 2.0], dtype=L.float64)
        return _INFERENCE_USES[use](L, w, x)

    results = [outcome(lambda L=L: run(L)) for L in LIBS]
    assert results[0][0] == results[1][0], results
    if results[0][0] == "ok":
        same(arr(results[0][1]), arr(results[1][1]))
    else:
        assert results[0][1] is results[1][1] is RuntimeError
        assert "Inference tensors cannot be saved for backward" in results[0][2]


def test_inference_tensor_error_names_the_op_and_changes_nothing():
    w = tg.nn.Parameter(tg.tensor([1.0, 2.0, 3.0], dtype=tg.float64))
    with tg.inference_mode():
        x = tg.randn(3, dtype=tg.float64)
    with pytest.raises(RuntimeError, match=r"^mul: Inference tensors cannot be saved for "
                       r"backward\..*shape \(3,\).*clone"):
        w * x
    (w * x.clone()).sum().backward()  # the fix the message gives
    np.testing.assert_array_equal(w.grad.detach().numpy(), x.numpy())
    assert w._version == 0 and x._version == 0


def test_inference_mode_state_and_which_tensors_are_inference_tensors():
    def run(L):
        w = L.nn.Parameter(L.tensor([1.0, 2.0], dtype=L.float64))
        normal = L.tensor([3.0, 4.0], dtype=L.float64)
        states = [L.is_inference_mode_enabled()]
        with L.inference_mode():
            states.append(L.is_inference_mode_enabled())
            made = {"view of normal": normal[:1], "detach of normal": normal.detach(),
                    "new": L.ones(2, dtype=L.float64), "op": normal * 2, "clone": normal.clone()}
            with L.inference_mode(False):
                states.append((L.is_inference_mode_enabled(), L.is_grad_enabled()))
                made["inside mode=False"] = L.ones(2, dtype=L.float64)
            states.append(L.is_grad_enabled())
        states.append(L.is_inference_mode_enabled())
        saved = {}
        for name, t in made.items():  # an inference tensor cannot be saved by w[:n] * t
            r = outcome(lambda t=t: w[: t.shape[0]] * t)
            saved[name] = r[0]
        return states, saved

    both(run)


def test_inference_tensor_saved_by_a_custom_function():
    def run(L):
        class F(L.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(b)
                return a * b

            @staticmethod
            def backward(ctx, g):
                (b,) = ctx.saved_tensors
                return g * b, None

        w = L.nn.Parameter(L.ones(2, dtype=L.float64))
        with L.inference_mode():
            x = L.ones(2, dtype=L.float64)
        F.apply(w, x)

    both_raise(run, RuntimeError, "Inference tensors cannot be saved for backward")


# -- 6. post-accumulate-grad hooks -------------------------------------------------------------
def test_post_accumulate_grad_hooks():
    def run(L):
        log = []
        w = leaf(L, [1.0, 2.0])
        h1 = w.register_post_accumulate_grad_hook(
            lambda p: log.append(("h1", p is w, arr(p.grad).copy())))
        w.register_post_accumulate_grad_hook(lambda p: log.append(("h2", arr(p.grad).copy())))
        (w * w).sum().backward()
        (w * 3).sum().backward()
        h1.remove()
        h1.remove()  # a second remove does nothing
        (w * 3).sum().backward()
        L.autograd.grad((w * w).sum(), w)  # fills no .grad: no hook runs
        log.append("grad()")
        (w * w + w).sum().backward()  # used twice, accumulated once
        (w**3).sum().backward(inputs=[w])
        return log

    both(run)


def test_post_accumulate_grad_hook_order_and_optimizer_step():
    def run(L):
        log = []
        w = leaf(L, [1.0, 2.0])
        w.register_post_accumulate_grad_hook(lambda p: log.append(("post", arr(p.grad))))
        w.register_hook(lambda g: log.append(("pre", arr(g))) or g * 10)
        (w * w).sum().backward()

        v = leaf(L, [1.0, 2.0])

        def step(p):
            with L.no_grad():
                p.sub_(0.1 * p.grad)
            p.grad = None

        v.register_post_accumulate_grad_hook(step)
        for _ in range(2):
            (v * v).sum().backward()
        u = leaf(L, [1.0, 2.0])
        u.register_post_accumulate_grad_hook(lambda p: log.append(p.grad.requires_grad))
        L.autograd.backward((u**3).sum(), create_graph=True)
        return log, arr(v), v.grad is None

    both(run)


def test_post_accumulate_grad_hook_errors():
    both_raise(lambda L: (leaf(L, [1.0]) * 2).register_post_accumulate_grad_hook(print),
               RuntimeError, "post accumulate grad hooks cannot be registered on non-leaf")
    both_raise(lambda L: L.ones(2).register_post_accumulate_grad_hook(print),
               RuntimeError, "cannot register a hook on a tensor that doesn't require gradient")

    def returns_a_value(L):
        w = leaf(L, [1.0, 2.0])
        w.register_post_accumulate_grad_hook(lambda p: p.grad * 2)
        try:
            (w * w).sum().backward()
        finally:
            assert np.array_equal(arr(w.grad), [2.0, 4.0])  # accumulated before the hook

    both_raise(returns_a_value, RuntimeError,
               "Tensor post accumulate grad hooks should return None")
