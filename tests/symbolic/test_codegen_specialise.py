"""compile() of a graph whose Variables have no declared shape or dtype: specialised on each
call's feed (NOTE [Specialising on the first feed] in symbolic/static/codegen.py), guarded on
the feed's type, shape and dtype, and always the interpreter's values and dtypes."""

import numpy as np
import pytest

from tinygrad_edu.ops import ShapeError
from tinygrad_edu.symbolic import Executor, Variable, compile, cond, gradients, matmul
from tinygrad_edu.symbolic.static import codegen


def _chain(x, n=30):
    for i in range(n):
        x = x * 1.01 if i % 3 == 0 else (x + 0.01 if i % 3 == 1 else x.tanh())
    return x


def _same_as_interpreter(fn, outs, feed):
    got = fn(feed)
    want = Executor(outs).run(feed)  # a fresh interpreter: nothing cached between calls
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        assert np.shape(g) == np.shape(w)
        np.testing.assert_array_equal(g, w)
    return got


def test_the_first_feed_gives_direct_numpy_code():
    x = Variable("x")
    y = _chain(x)
    outs = [y, *gradients(y.sum(), [x])]
    fn = compile(outs)
    assert "_mul_" in fn.source and fn.specialisations == {}  # generic: a wrapper per op
    _same_as_interpreter(fn, outs, {x: np.array([0.1, -0.2, 0.3, -0.4])})
    ((key, special),) = fn.specialisations.items()
    assert key == ((np.ndarray, (4,), np.dtype("float64")),)
    assert "v2 = x * 1.01" in special.source and "xp.tanh(" in special.source
    assert "_mul_" not in special.source and "_sum_to_" not in special.source


def test_a_new_shape_or_dtype_fails_the_guard_and_gets_its_own_code():
    x, w = Variable("x"), Variable("w")
    y = (matmul(x, w) * 2.0 + 1).tanh()
    outs = [y, *gradients(y.sum(), [x, w])]
    fn = compile(outs)
    rng = np.random.default_rng(0)
    feeds = [
        {x: rng.normal(size=(3, 4)), w: rng.normal(size=(4, 2))},
        {x: rng.normal(size=(5, 4)), w: rng.normal(size=(4, 3))},  # new shapes
        {x: rng.normal(size=(3, 4)).astype(np.float32),
         w: rng.normal(size=(4, 2)).astype(np.float32)},  # new dtypes
        {x: rng.normal(size=(3, 4)).astype(np.float32), w: rng.normal(size=(4, 2))},  # mixed
    ]  # fmt: skip
    for feed in feeds:
        _same_as_interpreter(fn, outs, feed)
    assert len(fn.specialisations) == 4
    assert all(s is not None for s in fn.specialisations.values())
    # back to the first signature, with other values: no value of an earlier call is kept
    again = {x: rng.normal(size=(3, 4)), w: rng.normal(size=(4, 2))}
    first = fn(feeds[0])[0]
    second = _same_as_interpreter(fn, outs, again)[0]
    assert not np.allclose(first, second) and len(fn.specialisations) == 4


def test_integers_keep_the_interpreters_dtypes():
    x = Variable("x")
    outs = [(x * 3 + 1) * 2, x * 0.5, (x + 1).sum()]
    fn = compile(outs)
    for value in (np.arange(6).reshape(2, 3), np.arange(6, dtype=np.int32), np.ones(4, bool)):
        _same_as_interpreter(fn, outs, {x: value})
    assert len(fn.specialisations) == 3


def test_a_declared_dtype_converts_the_feed_as_the_interpreter_does():
    x = Variable("x", dtype="float32")  # no shape: specialised on it
    outs = [(x * 1.5).exp()]
    fn = compile(outs)
    got = _same_as_interpreter(fn, outs, {x: np.array([0.25, 0.5])})  # a float64 feed
    assert got[0].dtype == np.float32 and len(fn.specialisations) == 1


def test_a_shape_the_rules_reject_raises_the_interpreters_error():
    x = Variable("x")
    w = Variable("w", shape=(4, 2), dtype="float64")
    fn = compile([matmul(x, w).tanh()])
    with pytest.raises(ShapeError, match="matmul"):
        fn({x: np.ones((3, 5)), w: np.ones((4, 2))})
    assert list(fn.specialisations.values()) == [None]  # remembered: the generic code runs
    np.testing.assert_array_equal(fn({x: np.ones((3, 4)), w: np.ones((4, 2))})[0],
                                  np.tanh(np.full((3, 2), 4.0)))  # fmt: skip


def test_feeds_that_are_not_arrays_and_too_many_signatures_run_the_generic_code():
    x = Variable("x")
    outs = [x.tanh() * 2.0]
    fn = compile(outs)
    _same_as_interpreter(fn, outs, {x: [0.5, 1.5]})  # a list: no shape to key on
    assert fn.specialisations == {}
    for n in range(1, codegen.SPECIALISATIONS + 3):
        _same_as_interpreter(fn, outs, {x: np.linspace(-1.0, 1.0, n)})
    assert len(fn.specialisations) == codegen.SPECIALISATIONS


def test_a_graph_with_control_flow_is_not_specialised():
    x = Variable("x")
    y = cond(x.sum() > 0, lambda: x * 2.0, lambda: x - 1.0)
    fn = compile([y])
    for value in (np.array([1.0, 2.0]), np.array([-3.0, 1.0, 0.5])):
        _same_as_interpreter(fn, [y], {x: value})
    assert fn.specialisations == {}


def test_a_missing_feed_is_the_generic_codes_error():
    x, z = Variable("x"), Variable("z")
    fn = compile([x * z])
    with pytest.raises(ValueError, match="'z' was not fed"):
        fn({x: np.ones(3)})
