"""PyTorch names added from existing ops: take_along_dim, tensordot, broadcast_shapes,
logspace, tril_indices/triu_indices, hsplit/vsplit/dsplit, split_with_sizes, sum_to_size,
index_fill/index_fill_ and the in-place view methods squeeze_/unsqueeze_/t_/transpose_,
each against PyTorch: values, shapes, dtypes, gradients, and an error that names the op."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tinygrad_edu as tg

RNG = np.random.default_rng(0)


def pair(*shape, requires_grad=True, dtype="float64"):
    a = RNG.standard_normal(shape).astype(dtype)
    return (tg.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))  # fmt: skip


def idx(a):
    a = np.asarray(a, dtype=np.int64)
    return tg.tensor(a), torch.tensor(a)


def same(x, y, rtol=1e-10, atol=1e-12):
    if isinstance(y, tuple | list):
        assert isinstance(x, tuple | list) and len(x) == len(y)
        for a, b in zip(x, y):
            same(a, b, rtol, atol)
        return
    assert tuple(x.shape) == tuple(y.shape)
    assert str(x.dtype).removeprefix("torch.") == str(y.dtype).removeprefix("torch.")
    np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=rtol, atol=atol)


def grads_match(out_tg, out_torch, leaves_tg, leaves_torch):
    """Backward of a weighted sum through both; the leaves' gradients agree."""
    outs_tg = out_tg if isinstance(out_tg, tuple | list) else (out_tg,)
    outs_torch = out_torch if isinstance(out_torch, tuple | list) else (out_torch,)
    loss_tg, loss_torch = 0, 0
    for a, b in zip(outs_tg, outs_torch):
        w = RNG.standard_normal(tuple(b.shape))
        loss_tg = loss_tg + (a * tg.tensor(w)).sum()
        loss_torch = loss_torch + (b * torch.tensor(w)).sum()
    loss_tg.backward()
    loss_torch.backward()
    for a, b in zip(leaves_tg, leaves_torch):
        same(a.grad, b.grad)


# -- take_along_dim ------------------------------------------------------------------------------
@pytest.mark.parametrize("xshape, ishape, dim", [
    ((3, 4), (3, 2), 1), ((3, 4), (2, 4), 0), ((3, 4), (1, 5), 1), ((2, 1, 4), (2, 3, 2), -1),
    ((3, 4), (5,), None), ((2, 3), (2, 0), 1),
])  # fmt: skip
@pytest.mark.parametrize("form", ["function", "method"])
def test_take_along_dim(xshape, ishape, dim, form):
    x, xt = pair(*xshape)
    n = xshape[dim] if dim is not None else int(np.prod(xshape))
    i, it = idx(RNG.integers(0, n, ishape))
    if form == "function":
        out, ref = tg.take_along_dim(x, i, dim), torch.take_along_dim(xt, it, dim)
    else:
        out, ref = x.take_along_dim(i, dim), xt.take_along_dim(it, dim)
    same(out, ref)
    grads_match(out, ref, [x], [xt])


def test_take_along_dim_errors():
    x = tg.zeros(2, 3)
    with pytest.raises(RuntimeError, match="take_along_dim"):
        tg.take_along_dim(x, tg.tensor([0]), 1)  # dims differ
    with pytest.raises(TypeError, match="take_along_dim"):
        tg.take_along_dim(x, tg.tensor([[0]], dtype=tg.int32), 1)


# -- tensordot -----------------------------------------------------------------------------------
@pytest.mark.parametrize("ashape, bshape, dims", [
    ((3, 4, 5), (4, 5, 2), 2), ((3, 4), (4, 2), 1), ((2, 3), (4,), 0),
    ((3, 4, 5), (5, 3, 2), ([0, 2], [1, 0])), ((3, 4), (2, 4), ([1], [1])),
    ((3, 4), (4,), ([1], [0])),
    ((2, 3), (2, 3), ([-1, 0], [-1, 0])),
])  # fmt: skip
def test_tensordot(ashape, bshape, dims):
    a, at = pair(*ashape)
    b, bt = pair(*bshape)
    out, ref = tg.tensordot(a, b, dims=dims), torch.tensordot(at, bt, dims=dims)
    same(out, ref)
    grads_match(out, ref, [a, b], [at, bt])


def test_tensordot_float32_and_errors():
    a, at = pair(3, 4, dtype="float32")
    b, bt = pair(4, 2, dtype="float32")
    same(tg.tensordot(a, b, 1), torch.tensordot(at, bt, 1), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="tensordot"):
        tg.tensordot(tg.zeros(2, 3), tg.zeros(2, 3), dims=([1], [0]))
    with pytest.raises(RuntimeError, match="tensordot"):
        tg.tensordot(tg.zeros(2, 3), tg.zeros(3), dims=3)
    with pytest.raises(TypeError, match="tensordot"):
        tg.tensordot(tg.zeros(2, 3), tg.zeros(3), dims=(1, 0))
    with pytest.raises(TypeError):
        torch.tensordot(torch.zeros(2, 3), torch.zeros(3), dims=(1, 0))


# -- broadcast_shapes ----------------------------------------------------------------------------
@pytest.mark.parametrize("shapes", [((2, 1), (3,)), (2, (3, 1)), ((1,), (4, 1, 1), (5, 1)), (),
                                    ((0, 1), (3,)), ((2, 3),)])  # fmt: skip
def test_broadcast_shapes(shapes):
    out, ref = tg.broadcast_shapes(*shapes), torch.broadcast_shapes(*shapes)
    assert tuple(out) == tuple(ref)
    assert isinstance(out, tg.Size)


def test_broadcast_shapes_error():
    with pytest.raises(RuntimeError, match="broadcast_shapes"):
        tg.broadcast_shapes((2,), (3,))
    with pytest.raises(RuntimeError):
        torch.broadcast_shapes((2,), (3,))


# -- logspace, tril_indices, triu_indices --------------------------------------------------------
@pytest.mark.parametrize("args, kw", [
    ((0, 2, 3), {}), ((0, 1, 5), {"base": 2}), ((-1.5, 2.5, 7), {}), ((0, 3, 1), {}),
    ((0, 3, 0), {}), ((1, 0, 4), {"base": 3.0}), ((0, 2, 3), {"dtype": "float64"}),
    ((0, 2, 3), {"dtype": "int64"}), ((0, 1, 3), {"dtype": "int64"}),
])  # fmt: skip
def test_logspace(args, kw):
    dt = kw.pop("dtype", None)
    out = tg.logspace(*args, dtype=dt and getattr(tg, dt), **kw)
    ref = torch.logspace(*args, dtype=dt and getattr(torch, dt), **kw)
    same(out, ref, rtol=1e-6, atol=1e-6)


def test_logspace_requires_grad_and_errors():
    out = tg.logspace(0, 1, 3, requires_grad=True)
    assert out.requires_grad and out.is_leaf
    with pytest.raises(ValueError, match="logspace"):
        tg.logspace(0, 1, -1)


@pytest.mark.parametrize("args", [(3, 3), (3, 4, 1), (4, 3, -1), (0, 3), (3, 3, 5), (3, 3, -5),
                                  (1, 1)])  # fmt: skip
@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
def test_triangle_indices(name, args):
    same(getattr(tg, name)(*args), getattr(torch, name)(*args))
    same(getattr(tg, name)(*args, dtype=tg.int32), getattr(torch, name)(*args, dtype=torch.int32))


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
def test_triangle_indices_error(name):
    with pytest.raises(ValueError, match=name):
        getattr(tg, name)(-1, 3)


# -- hsplit, vsplit, dsplit, split_with_sizes ----------------------------------------------------
@pytest.mark.parametrize("name, shape, arg", [
    ("hsplit", (6,), 3), ("hsplit", (2, 6), 2), ("hsplit", (2, 6), [1, 4]),
    ("hsplit", (2, 6, 3), 3),
    ("hsplit", (5,), [2, 9]), ("vsplit", (4, 3), 2), ("vsplit", (4, 3), [3]),
    ("dsplit", (2, 3, 4), 2), ("dsplit", (2, 3, 4), [1, 1, 3]), ("hsplit", (2, 6), (3,)),
])  # fmt: skip
@pytest.mark.parametrize("form", ["function", "method"])
def test_hvdsplit(name, shape, arg, form):
    x, xt = pair(*shape)
    if form == "function":
        out, ref = getattr(tg, name)(x, arg), getattr(torch, name)(xt, arg)
    else:
        out, ref = getattr(x, name)(arg), getattr(xt, name)(arg)
    assert isinstance(out, tuple)
    same(out, ref)
    grads_match(out, ref, [x], [xt])


@pytest.mark.parametrize("name, shape, arg", [("hsplit", (2, 5), 2), ("hsplit", (), 1),
                                              ("vsplit", (4,), 2), ("dsplit", (2, 4), 2),
                                              ("vsplit", (4, 3), 0)])  # fmt: skip
def test_hvdsplit_errors(name, shape, arg):
    with pytest.raises(RuntimeError):
        getattr(torch, name)(torch.zeros(shape), arg)
    with pytest.raises(RuntimeError, match=name):
        getattr(tg, name)(tg.zeros(shape), arg)


@pytest.mark.parametrize("shape, sizes, dim", [((5, 2), [2, 3], 0), ((2, 5), [1, 0, 4], 1),
                                               ((2, 5), (5,), -1), ((3,), [3], 0)])  # fmt: skip
def test_split_with_sizes(shape, sizes, dim):
    x, xt = pair(*shape)
    same(tg.split_with_sizes(x, sizes, dim), torch.split_with_sizes(xt, sizes, dim))
    out, ref = x.split_with_sizes(sizes, dim=dim), xt.split_with_sizes(sizes, dim=dim)
    same(out, ref)
    grads_match(out, ref, [x], [xt])


def test_split_with_sizes_error():
    with pytest.raises(RuntimeError, match="split_with_sizes"):
        tg.zeros(5).split_with_sizes([1, 2])
    with pytest.raises(RuntimeError, match="split_with_sizes"):
        tg.zeros(3).split_with_sizes([4, -1])


# -- sum_to_size ---------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, size", [((2, 3), (1, 3)), ((2, 3), (3,)), ((2, 3), (2, 1)),
                                         ((2, 3), (2, 3)), ((4, 2, 3), (1,)), ((2, 3), ())])
@pytest.mark.parametrize("spread", [False, True])
def test_sum_to_size(shape, size, spread):
    x, xt = pair(*shape)
    if spread and not size:  # no size at all: an error in both
        with pytest.raises(TypeError):
            xt.sum_to_size()
        with pytest.raises(TypeError, match="sum_to_size"):
            x.sum_to_size()
        return
    out = x.sum_to_size(*size) if spread else x.sum_to_size(size)
    ref = xt.sum_to_size(*size) if spread else xt.sum_to_size(size)
    same(out, ref)
    grads_match(out, ref, [x], [xt])


def test_sum_to_size_int_and_error():
    a = np.arange(6).reshape(2, 3)
    same(tg.tensor(a).sum_to_size(3), torch.tensor(a).sum_to_size(3))
    with pytest.raises(RuntimeError, match="sum_to_size"):
        tg.zeros(2, 3).sum_to_size(4)


# -- index_fill ----------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, dim, index, value", [
    ((2, 3), 1, [0, 2], -1.5), ((2, 3), 0, [1], 2.0), ((2, 3), -1, [-1, 0, 0], 0.5),
    ((4,), 0, [], 3.0), ((2, 3, 4), 1, 2, 7.0), ((), 0, [0], 1.0),
])  # fmt: skip
def test_index_fill(shape, dim, index, value):
    x, xt = pair(*shape)
    i, it = idx(index)
    out, ref = x.index_fill(dim, i, value), xt.index_fill(dim, it, value)
    same(out, ref)
    same(tg.index_fill(x, dim, i, value), torch.index_fill(xt, dim, it, value))
    grads_match(out, ref, [x], [xt])


def test_index_fill_tensor_value_grad_and_dtypes():
    x, xt = pair(2, 3)
    v, vt = tg.tensor(5.0, requires_grad=True, dtype=tg.float64), torch.tensor(
        5.0, requires_grad=True, dtype=torch.float64)
    i, it = idx([0, 2])
    out, ref = x.index_fill(1, i, v), xt.index_fill(1, it, vt)
    same(out, ref)
    grads_match(out, ref, [x, v], [xt, vt])
    a = np.arange(6).reshape(2, 3)
    same(tg.tensor(a).index_fill(1, i, 9), torch.tensor(a).index_fill(1, it, 9))
    same(tg.tensor(a).index_fill(1, i, 2.7), torch.tensor(a).index_fill(1, it, 2.7))


def test_index_fill_in_place():
    a = RNG.standard_normal((3, 4))
    x, xt = tg.tensor(a), torch.tensor(a)
    i, it = idx([1, 3])
    assert x.index_fill_(1, i, -2.0) is x
    xt.index_fill_(1, it, -2.0)
    same(x, xt)
    # on a non-leaf that requires grad: recorded, the gradient flows around the filled entries
    w, wt = pair(3, 4)
    y, yt = w * 2, wt * 2
    y.index_fill_(0, idx([0])[0], 1.0)
    yt.index_fill_(0, idx([0])[1], 1.0)
    same(y, yt)
    grads_match(y, yt, [w], [wt])
    leaf = tg.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="index_fill"):
        leaf.index_fill_(0, idx([0])[0], 1.0)


def test_index_fill_errors():
    x = tg.zeros(2, 3)
    with pytest.raises(IndexError, match="index_fill"):
        x.index_fill(1, tg.tensor([3]), 0.0)
    with pytest.raises(IndexError, match="index_fill"):
        x.index_fill(1, tg.tensor([1], dtype=tg.int32), 0.0)
    with pytest.raises(RuntimeError, match="index_fill"):
        x.index_fill(1, tg.tensor([1]), tg.zeros(2))


# -- squeeze_, unsqueeze_, t_, transpose_ --------------------------------------------------------
_INPLACE_VIEWS = [
    ("squeeze_", (2, 1, 3), ()), ("squeeze_", (2, 1, 3), (1,)), ("squeeze_", (2, 1, 3), (0,)),
    ("squeeze_", (1, 2, 1), ((0, 2),)), ("unsqueeze_", (2, 3), (0,)), ("unsqueeze_", (2, 3), (-1,)),
    ("t_", (2, 3), ()), ("t_", (4,), ()), ("transpose_", (2, 3, 4), (0, 2)),
    ("transpose_", (2, 3), (-1, -2)),
]  # fmt: skip


@pytest.mark.parametrize("name, shape, args", _INPLACE_VIEWS)
def test_inplace_view_methods(name, shape, args):
    a = RNG.standard_normal(shape)
    x, xt = tg.tensor(a), torch.tensor(a)
    assert getattr(x, name)(*args) is x
    getattr(xt, name)(*args)
    same(x, xt)
    # a non-leaf: the shape changes in place, the history follows, gradients agree
    w, wt = pair(*shape)
    y, yt = w * 3, wt * 3
    assert getattr(y, name)(*args) is y
    getattr(yt, name)(*args)
    same(y, yt)
    assert y.grad_fn is not None and not y.is_leaf
    grads_match(y, yt, [w], [wt])


def test_inplace_view_of_a_view_shares_memory():
    a = np.arange(12.0).reshape(3, 4)
    x, xt = tg.tensor(a), torch.tensor(a)
    v, vt = x[1:], xt[1:]
    v.t_()
    vt.t_()
    same(v, vt)
    v[0, 0] = 100.0
    vt[0, 0] = 100.0
    same(x, xt)  # the view still writes into its base
    # through a non-leaf view: the gradient reaches the base's leaf
    w, wt = pair(3, 4)
    y, yt = w * 1, wt * 1
    s, st = y[1:], yt[1:]
    s.transpose_(0, 1)
    st.transpose_(0, 1)
    grads_match(s, st, [w], [wt])


@pytest.mark.parametrize("name, args", [("squeeze_", ()), ("unsqueeze_", (0,)), ("t_", ()),
                                        ("transpose_", (0, 1))])  # fmt: skip
def test_inplace_view_errors(name, args):
    leaf = tg.zeros(2, 1, requires_grad=True)
    with pytest.raises(RuntimeError, match=name):
        getattr(leaf, name)(*args)
    assert leaf.shape == (2, 1)
    bad = {"squeeze_": (5,), "unsqueeze_": (5,), "t_": (), "transpose_": (0, 5)}[name]
    x = tg.zeros(2, 3, 4)
    with pytest.raises(RuntimeError if name == "t_" else IndexError, match=name[:-1]):
        getattr(x, name)(*bad)  # a dim out of range (t_: more than 2 dims) names the op
    assert x.shape == (2, 3, 4)


def test_inplace_view_bumps_the_version():
    w = tg.ones(2, 1, requires_grad=True)
    y = w * 2
    z = y * y  # saves y
    y.squeeze_()
    with pytest.raises(RuntimeError):
        z.sum().backward()
