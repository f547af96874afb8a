"""``tg.autograd.gradcheck``/``gradgradcheck`` against ``torch.autograd``'s: the same functions
pass and fail in both, a failure names the output and input and shows both Jacobians, and the
options PyTorch has that the engine cannot run are refused by name."""

import warnings

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
from tinygrad_edu.autograd import GradcheckError, gradcheck, gradgradcheck


def _arrays(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=s) for s in shapes]


def _tg(arrays, names=()):
    out = [tg.tensor(a, requires_grad=True) for a in arrays]
    for t, n in zip(out, names):
        t.name = n
    return out


def _torch(arrays):
    return [torch.tensor(a, requires_grad=True) for a in arrays]


def _scaled_mul(lib, scale):
    """a * b as a custom Function whose backward for ``a`` is off by ``scale`` (1.0: right)."""

    class ScaledMul(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad * b * scale, grad * a

    return ScaledMul.apply


def _detached_square(lib):
    """x * x whose first derivative is right and whose backward graph is wrong (a factor is
    detached): gradcheck passes, gradgradcheck fails."""

    class DetachedSquare(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, grad):
            (a,) = ctx.saved_tensors
            return grad * 2.0 * a.detach()

    return lambda x: DetachedSquare.apply(x) * x


FUNCTIONS = [  # (name, builder lib -> func, input shapes)
    ("matmul", lambda lib: lambda a, b: a @ b, [(3, 4), (4, 2)]),
    ("broadcast", lambda lib: lambda a, b: (a * b).exp().sum(), [(3, 1), (1, 4)]),
    ("log_softmax", lambda lib: lambda a: a.log_softmax(-1), [(2, 5)]),
    ("two outputs", lambda lib: lambda a, b: (a.tanh() * b, (a - b).sum()), [(2, 3), (2, 3)]),
    ("custom Function", lambda lib: _scaled_mul(lib, 1.0), [(2, 3), (2, 3)]),
]


@pytest.mark.parametrize("name, build, shapes", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
@pytest.mark.parametrize("fast_mode", [False, True])
def test_correct_functions_pass_in_both(name, build, shapes, fast_mode):
    arrays = _arrays(shapes)
    assert torch.autograd.gradcheck(build(torch), tuple(_torch(arrays)), fast_mode=fast_mode)
    assert gradcheck(build(tg), tuple(_tg(arrays)), fast_mode=fast_mode) is True
    assert torch.autograd.gradgradcheck(build(torch), tuple(_torch(arrays)), fast_mode=fast_mode)
    assert gradgradcheck(build(tg), tuple(_tg(arrays)), fast_mode=fast_mode) is True


def test_a_wrong_backward_fails_in_both_naming_the_input():
    arrays = _arrays([(2, 3), (2, 3)])
    with pytest.raises(RuntimeError, match="output 0 with respect to input 0"):
        torch.autograd.gradcheck(_scaled_mul(torch, 1.1), tuple(_torch(arrays)))
    with pytest.raises(GradcheckError) as info:
        gradcheck(_scaled_mul(tg, 1.1), tuple(_tg(arrays, ["W"])))
    e = info.value
    assert isinstance(e, RuntimeError)  # as PyTorch's
    assert (e.output_index, e.input_index, e.input_name) == (0, 0, "W")
    msg = str(e)
    assert "Jacobian mismatch for output 0 with respect to input 0 ('W')" in msg
    assert "numerical:" in msg and "analytical:" in msg
    # d(a*b)_j/da_k = b_k [j == k]: the worst element is the diagonal entry with the largest |b|
    b = arrays[1].reshape(-1)
    k = int(np.argmax(np.abs(b)))
    assert e.index == (k, k)
    assert e.numeric == pytest.approx(b[k], rel=1e-6)
    assert e.analytic == pytest.approx(1.1 * b[k], rel=1e-9)
    assert e.rel_error == pytest.approx(0.1, rel=1e-4)
    # the torch and tg Jacobians shown are the same numbers
    assert gradcheck(_scaled_mul(tg, 1.1), tuple(_tg(arrays)), raise_exception=False) is False
    assert not torch.autograd.gradcheck(_scaled_mul(torch, 1.1), tuple(_torch(arrays)),
                                        raise_exception=False)  # fmt: skip


def test_a_wrong_second_input_is_named_in_both():
    arrays = _arrays([(2,), (2,)], seed=1)

    def wrong_b(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a * b

            @staticmethod
            def backward(ctx, grad):
                a, b = ctx.saved_tensors
                return grad * b, grad * a * 2.0

        return F.apply

    with pytest.raises(RuntimeError, match="output 0 with respect to input 1"):
        torch.autograd.gradcheck(wrong_b(torch), tuple(_torch(arrays)))
    with pytest.raises(GradcheckError, match="output 0 with respect to input 1") as info:
        gradcheck(wrong_b(tg), tuple(_tg(arrays)))
    assert info.value.input_index == 1


@pytest.mark.parametrize("fast_mode", [False, True])
def test_a_wrong_second_derivative_fails_in_both(fast_mode):
    arrays = _arrays([(3,)], seed=2)
    assert torch.autograd.gradcheck(_detached_square(torch), tuple(_torch(arrays)))
    assert gradcheck(_detached_square(tg), tuple(_tg(arrays)))
    mismatch = "Jacobian mismatch for output 0 with respect to input 0"
    with pytest.raises(RuntimeError, match=mismatch):
        torch.autograd.gradgradcheck(_detached_square(torch), tuple(_torch(arrays)),
                                     fast_mode=fast_mode)  # fmt: skip
    with pytest.raises(GradcheckError, match=mismatch):
        gradgradcheck(_detached_square(tg), tuple(_tg(arrays)), fast_mode=fast_mode)
    assert gradgradcheck(_detached_square(tg), tuple(_tg(arrays)), raise_exception=False) is False


def test_the_jacobians_shown_are_torchs():
    # gradcheck's analytical Jacobian of a wrong backward is what torch's backward computes
    arrays = _arrays([(2, 2), (2, 2)], seed=3)
    with pytest.raises(GradcheckError) as info:
        gradcheck(_scaled_mul(tg, 1.5), tuple(_tg(arrays)))
    want = torch.autograd.functional.jacobian(lambda a: a * torch.tensor(arrays[1]),
                                              torch.tensor(arrays[0]))  # fmt: skip
    want = want.reshape(4, 4).T.numpy()  # PyTorch's layout: (input element, output element)
    assert info.value.numeric == pytest.approx(want[info.value.index], rel=1e-6)


def test_constants_and_unused_inputs():
    a, b = _tg(_arrays([(2, 2), (2, 2)]))
    c = tg.tensor(np.ones((2, 2)))  # no grad: passed through
    assert gradcheck(lambda x, y, k, s: x * k * s, (a, b, c, 2.0))  # b unused: zero Jacobian
    assert gradgradcheck(lambda x, y, k, s: x * k * s, (a, b, c, 2.0))  # linear: zero


def test_a_single_tensor_is_accepted_as_inputs():
    (a,) = _tg(_arrays([(3,)]))
    assert gradcheck(lambda t: t.sin(), a) and gradgradcheck(lambda t: t.sin(), a)


def test_float32_inputs_warn_and_convert():
    a = tg.tensor([0.5, 1.5], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert gradcheck(lambda x: x.exp(), (a,))
    assert any("float32" in str(w.message) and "float64" in str(w.message) for w in caught)


def test_check_grad_dtypes_passes_where_the_engine_casts_as_pytorch_does():
    # a backward that returns float32 for a float64 input: both engines cast the gradient to
    # the input's dtype before anyone sees it, so the dtype check passes in both
    def float32_grad(lib):
        class Float32Grad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2.0

            @staticmethod
            def backward(ctx, grad):
                return (grad * 2.0).float()

        return Float32Grad.apply

    arrays = _arrays([(2,)])
    assert torch.autograd.gradcheck(float32_grad(torch), tuple(_torch(arrays)), atol=1e-4,
                                    check_grad_dtypes=True)  # fmt: skip
    assert gradcheck(float32_grad(tg), tuple(_tg(arrays)), atol=1e-4, check_grad_dtypes=True)


def test_complex_inputs_are_refused_with_the_dtype_named():
    z = np.array([1.0 + 2.0j, -0.5j])
    assert torch.autograd.gradcheck(lambda t: t * t, (torch.tensor(z, requires_grad=True),))
    with pytest.raises(TypeError, match="input 0 is complex128.*real and imaginary parts"):
        gradcheck(lambda t: t * t, (tg.tensor(z),))


@pytest.mark.parametrize("option", ["check_batched_grad", "check_batched_forward_grad",
                                    "check_forward_ad", "masked"])  # fmt: skip
def test_options_the_engine_cannot_run_are_refused_by_name(option):
    (a,) = _tg(_arrays([(2,)]))
    assert gradcheck(lambda t: t.exp(), (a,), **{option: False if option != "masked" else None})
    with pytest.raises(NotImplementedError, match=option):
        gradcheck(lambda t: t.exp(), (a,), **{option: True})


def test_options_that_do_not_change_the_answer_are_accepted():
    (a,) = _tg(_arrays([(2,)]))
    assert gradcheck(lambda t: t.exp(), (a,), check_undefined_grad=False, nondet_tol=1e-12)
    assert gradgradcheck(lambda t: t.exp(), (a,), gen_non_contig_grad_outputs=True)
    with pytest.raises(NotImplementedError, match="check_fwd_over_rev"):
        gradgradcheck(lambda t: t.exp(), (a,), check_fwd_over_rev=True)
    with pytest.raises(ValueError, match="nothing to check"):
        gradcheck(lambda t: t.exp(), (a,), check_backward_ad=False)


def test_the_signatures_are_pytorchs():
    import inspect

    for ours, theirs in [(gradcheck, torch.autograd.gradcheck),
                         (gradgradcheck, torch.autograd.gradgradcheck)]:  # fmt: skip
        mine = inspect.signature(ours).parameters
        for name, p in inspect.signature(theirs).parameters.items():
            assert name in mine, f"{ours.__name__} lacks {name}"
            assert (mine[name].kind, mine[name].default) == (p.kind, p.default), name


def test_argument_errors():
    with pytest.raises(ValueError, match="requires_grad"):
        gradcheck(lambda x: x, (tg.tensor(np.ones(2)),))
    with pytest.raises(TypeError, match="must return a Tensor"):
        gradcheck(lambda x: 3.0, tuple(_tg(_arrays([(2,)]))))
