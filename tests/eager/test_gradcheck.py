"""Every op's derivative rule in the eager engine, against central differences in float64:
the plain backward (raw arrays) and ``create_graph=True`` (the same rule on tensors)."""

from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tinygrad_edu as tg
import tinygrad_edu.eager.functional as M
from tests.opinfo import OPS, SECOND_ORDER, case_by_name
from tinygrad_edu.finite_diff import compare_gradients, numeric_gradient, random_projection

CASES = [case for info in OPS.values() for case in info.gradients]  # the per-op table's


def _eager_value(build, arrays):
    with tg.no_grad():
        out = build(*[tg.tensor(a) for a in arrays])
    return out.numpy()


def eager_gradients(build, arrays, create_graph=False):
    xs = [tg.tensor(a, requires_grad=True) for a in arrays]
    y = build(*xs)
    proj = random_projection(y.shape)
    grads = tg.grad(y, xs, grad_outputs=tg.tensor(proj), create_graph=create_graph)
    return y, xs, grads, proj


def check_eager(build, arrays, create_graph=False):
    y, _, grads, proj = eager_gradients(build, arrays, create_graph)
    numeric = numeric_gradient(partial(lambda b, a: _eager_value(b, a), build), arrays,
                               projection=proj)  # fmt: skip
    assert all(g.dtype == np.float64 for g in grads)
    compare_gradients([g.detach().numpy() for g in grads], numeric)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_eager_gradients_match_central_differences(case, data):
    example = data.draw(case.inputs)
    check_eager(partial(case.build, M, **example.extra), example.arrays)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@settings(max_examples=3, deadline=None)
@given(data=st.data())
def test_create_graph_runs_the_same_rules_on_tensors(case, data):
    example = data.draw(case.inputs)
    check_eager(partial(case.build, M, **example.extra), example.arrays, create_graph=True)


@pytest.mark.parametrize("name", SECOND_ORDER)
@settings(max_examples=6, deadline=None)
@given(data=st.data())
def test_second_derivatives(name, data):
    """d/dx of <grad f(x), v> by the engine vs central differences of the first gradient."""
    case = case_by_name(name)
    example = data.draw(case.inputs)
    build = partial(case.build, M, **example.extra)
    arrays = example.arrays
    v = [random_projection(a.shape, seed=1) for a in arrays]

    def first(arrs):
        _, _, grads, _ = eager_gradients(build, arrs)
        return sum(float((g.numpy() * vi).sum()) for g, vi in zip(grads, v))

    y, xs, grads, _ = eager_gradients(build, arrays, create_graph=True)
    inner = sum((g * tg.tensor(vi)).sum() for g, vi in zip(grads, v) if g.requires_grad)
    if not isinstance(inner, tg.Tensor) or not inner.requires_grad:
        pytest.skip("the first derivative is constant here")  # e.g. a linear op
    second = tg.grad(inner, xs, allow_unused=True)
    analytic = [np.zeros_like(a) if g is None else g.numpy() for g, a in zip(second, arrays)]
    numeric = numeric_gradient(lambda arrs: first(arrs), arrays, eps=1e-5)
    compare_gradients(analytic, numeric, atol=1e-4, what="second derivative")


def test_stable_cross_entropy_at_large_logits():
    logits = tg.tensor(np.array([[1000.0, -1000.0, 0.0], [-1000.0, 1000.0, 999.0]]),
                       requires_grad=True)  # fmt: skip
    target = np.array([0, 2])
    loss = tg.nn.functional.cross_entropy(logits, target)
    loss.backward()
    z = logits.detach().numpy()
    m = z.max(axis=1, keepdims=True)
    logp = z - m - np.log(np.exp(z - m).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(loss.item(), -logp[[0, 1], target].mean())
    p = np.exp(logp)
    p[[0, 1], target] -= 1
    np.testing.assert_allclose(logits.grad.numpy(), p / 2, atol=1e-12)
    assert np.isfinite(logits.grad.numpy()).all()
