"""Indexing that records nothing (NOTE [Unrecorded indexing] in eager/dispatch.py): iterating
a tensor, ``data[i:i + n]`` with 0-d tensors, ``x[i]``, and ``int`` of a 0-d tensor as an
index, against PyTorch; and the short path against ``apply_op``'s, field by field."""

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
from tinygrad_edu.eager.dispatch import _GETITEM, apply_op, unrecorded_getitem


def both(values, **kw):
    return tg.tensor(np.array(values), **kw), torch.tensor(np.array(values), **kw)


def same(a, b):
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]


# -- values ----------------------------------------------------------------------------------
@pytest.mark.parametrize("values", [[3, 1, 4, 1, 5], [[1.5, 2.0], [3.0, -4.0], [0.0, 1.0]],
                                    np.arange(24).reshape(2, 3, 4)])  # fmt: skip
def test_iteration_gives_torchs_rows(values):
    x, t = both(values)
    rows, trows = list(x), list(t)
    assert len(rows) == len(trows)
    for r, tr in zip(rows, trows):
        same(r, tr)
        assert r.requires_grad is tr.requires_grad is False
        assert r.grad_fn is None and tr.grad_fn is None


def test_batch_sampler_pattern_matches_torch():
    data0 = np.random.default_rng(1).integers(0, 65, size=200).astype(np.int64)
    ix0 = np.array([0, 5, 190, 17, 17])
    (data, tdata), (ix, tix) = both(data0), both(ix0)
    x = tg.stack([data[i:i + 8] for i in ix])
    tx = torch.stack([tdata[i:i + 8] for i in tix])
    y = tg.stack([data[i + 1:i + 9] for i in ix])
    ty = torch.stack([tdata[i + 1:i + 9] for i in tix])
    same(x, tx)
    same(y, ty)


def test_index_forms_match_torch():
    x, t = both(np.arange(30.0).reshape(5, 6))
    i, ti = both(3)
    j, tj = both(-2)
    for index, tindex in [(i, ti), ((i, j), (ti, tj)), (slice(j, None), slice(tj, None)),
                          ((slice(None), i), (slice(None), ti)), ((None, 1), (None, 1)),
                          ((Ellipsis, 2), (Ellipsis, 2)), (slice(1, 4, 2), slice(1, 4, 2)),
                          (True, True), ((1, None, slice(2, 5)), (1, None, slice(2, 5)))]:
        same(x[index], t[tindex])


def test_int_of_0d_tensor_as_python_index():
    seq = [10, 20, 30, 40]
    for values in (2, -1, np.int32(1), np.uint8(3)):
        x, t = both(values)
        assert seq[x] == seq[t]
        assert x.__index__() == t.__index__() and type(x.__index__()) is int
    x, t = both([2])  # one element, not 0-d: still an index in both
    assert seq[x] == seq[t]


@pytest.mark.parametrize("values", [1.0, [1, 2]])
def test_int_of_non_index_tensor_refused_as_torch(values):
    x, t = both(values)
    with pytest.raises(TypeError):
        [1, 2, 3][t]
    with pytest.raises(TypeError, match="index"):
        [1, 2, 3][x]


def test_out_of_range_refused_as_torch():
    x, t = both([1, 2, 3])
    with pytest.raises(IndexError):
        t[5]
    with pytest.raises(IndexError, match="getitem"):
        x[5]
    with pytest.raises(IndexError):
        list(iter(t[5:]))[0]
    assert list(x[5:]) == [] and x[5:].shape == t[5:].shape
    with pytest.raises(TypeError):
        iter(torch.tensor(1))
    with pytest.raises(TypeError, match="0-d"):
        iter(tg.tensor(1))


# -- views and version counters --------------------------------------------------------------
def test_rows_are_views_sharing_the_version_counter():
    x, t = both([[1.0, 2.0], [3.0, 4.0]])
    rows, trows = list(x), list(t)
    x.add_(1)
    t.add_(1)
    for r, tr in zip(rows, trows):
        same(r, tr)
        assert r._version == tr._version == 1
    rows[1].mul_(10)  # through the view: the base changes, every view's counter moves
    trows[1].mul_(10)
    same(x, t)
    assert x._version == t._version == 2 and rows[0]._version == trows[0]._version == 2
    s, ts = x[0:1], t[0:1]
    s.zero_()
    ts.zero_()
    same(x, t)


def test_bool_index_copies_as_torch():
    x, t = both([1.0, 2.0])
    c, tc = x[True], t[True]
    same(c, tc)
    c.zero_()
    tc.zero_()
    same(x, t)


# -- with autograd ----------------------------------------------------------------------------
def test_rows_of_a_tensor_that_requires_grad_carry_its_gradient():
    w0 = np.arange(6.0).reshape(3, 2)
    x, t = both(w0, requires_grad=True)
    k = np.array([1.0, -2.0, 0.5])
    loss = sum(float(c) * (r * r).sum() for c, r in zip(k, x))
    tloss = sum(float(c) * (r * r).sum() for c, r in zip(k, t))
    loss.backward()
    tloss.backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=0, atol=0)
    i, ti = both(1)
    u, tu = x[i:i + 2], t[ti:ti + 2]
    assert u.requires_grad and tu.requires_grad and u.grad_fn.name() == tu.grad_fn.name()


def test_views_made_under_no_grad_refuse_in_place_as_torch():
    x, t = both([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    i, ti = both(0)
    with tg.no_grad():
        part, row = x[i:i + 1], x[1]
    with torch.no_grad():
        tpart, trow = t[ti:ti + 1], t[1]
    for v, tv in ((part, tpart), (row, trow)):
        same(v, tv)
        assert v._base is x and tv._base is t
        with pytest.raises(RuntimeError):
            tv.mul_(2)
        with pytest.raises(RuntimeError, match="no_grad"):
            v.mul_(2)
    with tg.no_grad():
        rows = list(x)
    assert all(r._base is x for r in rows)
    with pytest.raises(RuntimeError, match="no_grad"):
        rows[0].mul_(2)


# -- the short path equals apply_op's ---------------------------------------------------------
def _fields(t):
    steps = [(op.name, extra, attrs, shape) for op, extra, attrs, shape in t._view_steps]
    return (t._data.shape, t._data.dtype, t._data.tobytes(), t._device, t._grad_fn,
            t._requires_grad, t._output_nr, t._base, steps, t._view_version, t._view_no_grad,
            t._view_multi, t._data.base is not None)  # fmt: skip


@pytest.mark.parametrize("grad", [False, True])
def test_short_path_fields_equal_apply_ops(grad):
    base = tg.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    with tg.no_grad():
        view = base[1:]  # a view of a view, made under no_grad
    plain = tg.tensor(np.arange(12).reshape(3, 4))
    for src in (plain, plain[1:], view, plain.t()):
        for index in [(1, Ellipsis), slice(0, 2), (slice(None), 2), (None, 0), (Ellipsis,)]:
            with tg.set_grad_enabled(grad):
                short = unrecorded_getitem(src, index)
                full = apply_op(_GETITEM, src, index=index)
            assert short is not None
            assert _fields(short) == _fields(full)
            assert (short._counter is src._counter) == (full._counter is src._counter)
    with tg.set_grad_enabled(True):  # recorded, an integer array, a bool: apply_op's work
        assert unrecorded_getitem(base, (0, Ellipsis)) is None
        assert unrecorded_getitem(plain, np.array([0, 2])) is None
        assert unrecorded_getitem(plain, (True, Ellipsis)) is None
        assert unrecorded_getitem(plain, (7, Ellipsis)) is None  # apply_op explains it
