"""A tensor's anatomy against PyTorch: strides, storage offsets, storages, views, version
counters and ``as_strided`` (forward and backward), over generated chains of view ops."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tinygrad_edu as tg

torch = pytest.importorskip("torch")


# -- chains of view ops, applied to a tinygrad_edu tensor and a torch tensor side by side ----
def _slice(data, shape):
    d = data.draw(st.integers(0, len(shape) - 1))
    n = shape[d]
    start = data.draw(st.integers(0, n - 1))
    stop = data.draw(st.integers(start + 1, n))
    step = data.draw(st.integers(1, 3))
    index = (slice(None),) * d + (slice(start, stop, step),)
    return f"[{index}]", lambda x: x[index]


def _transpose(data, shape):
    d0 = data.draw(st.integers(-len(shape), len(shape) - 1))
    d1 = data.draw(st.integers(-len(shape), len(shape) - 1))
    return f"transpose({d0}, {d1})", lambda x: x.transpose(d0, d1)


def _permute(data, shape):
    perm = data.draw(st.permutations(range(len(shape))))
    return f"permute({perm})", lambda x: x.permute(*perm)


def _expand(data, shape):
    ones = [i for i, n in enumerate(shape) if n == 1]
    if ones and data.draw(st.booleans()):
        size = list(shape)
        size[data.draw(st.sampled_from(ones))] = 3
    else:
        size = [2, *shape]  # a new leading dim
    return f"expand({size})", lambda x: x.expand(*size)


def _view(data, shape):
    return "view(-1)", lambda x: x.view(-1)


def _reshape(data, shape):
    d = data.draw(st.integers(0, len(shape) - 1))
    size = [*shape[:d], 1, shape[d], *shape[d + 1 :]]  # a size-1 dim inserted
    return f"reshape({size})", lambda x: x.reshape(size)


def _narrow(data, shape):
    d = data.draw(st.integers(0, len(shape) - 1))
    start = data.draw(st.integers(0, shape[d] - 1))
    length = data.draw(st.integers(1, shape[d] - start))
    return f"narrow({d}, {start}, {length})", lambda x: x.narrow(d, start, length)


def _select(data, shape):
    d = data.draw(st.integers(0, len(shape) - 1))
    i = data.draw(st.integers(-shape[d], shape[d] - 1))
    return f"select({d}, {i})", lambda x: x.select(d, i)


def _diagonal(data, shape):
    d0, d1 = data.draw(st.permutations(range(len(shape))))[:2]
    offset = data.draw(st.integers(-1, 1))
    return f"diagonal({offset}, {d0}, {d1})", lambda x: x.diagonal(offset, d0, d1)


def _unfold(data, shape):
    d = data.draw(st.integers(0, len(shape) - 1))
    size = data.draw(st.integers(1, shape[d]))
    step = data.draw(st.integers(1, 2))
    return f"unfold({d}, {size}, {step})", lambda x: x.unfold(d, size, step)


def _unsqueeze(data, shape):
    d = data.draw(st.integers(0, len(shape)))
    return f"unsqueeze({d})", lambda x: x.unsqueeze(d)


def _reshape_0d(data, shape):
    return "reshape(1)", lambda x: x.reshape(1)


def _ops_for(x):
    shape = x.shape
    ops = [_unsqueeze]
    if len(shape) and min(shape) > 0:
        ops += [_slice, _transpose, _permute, _expand, _narrow, _unfold]
        if len(shape) >= 2:  # (select of a vector: a 0-d copy here, a view in PyTorch)
            ops += [_select, _diagonal]
        if x.is_contiguous():
            ops += [_view, _reshape]
    return ops or [_reshape_0d]


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


def _chain(data):
    """A base tensor (and torch's), and up to four view ops applied one after another."""
    shape = data.draw(shapes)
    values = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    ours, theirs = [tg.tensor(values)], [torch.tensor(values)]
    steps = []
    for _ in range(data.draw(st.integers(1, 4))):
        if ours[-1].ndim > 5 or ours[-1].numel() == 0:
            break
        op = data.draw(st.sampled_from(_ops_for(theirs[-1])))
        text, f = op(data, tuple(theirs[-1].shape))
        steps.append(text)
        ours.append(f(ours[-1]))
        theirs.append(f(theirs[-1]))
    return ours, theirs, steps


def _expanded(steps) -> bool:
    return any(s.startswith("expand") for s in steps)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_views_report_pytorchs_strides_offsets_and_bases(data):
    ours, theirs, steps = _chain(data)
    for i, (a, t) in enumerate(zip(ours, theirs)):
        where = f"after {steps[:i]}"
        assert a.shape == tuple(t.shape), where
        assert a.stride() == t.stride(), where
        assert a.storage_offset() == t.storage_offset(), where
        assert a.is_contiguous() == t.is_contiguous(), where
        assert a._is_view() == t._is_view(), where
        # ``_base``: the same position in the chain (views of views point at the root)
        ours_base = next((j for j, b in enumerate(ours) if b is a._base), None)
        their_base = next((j for j, b in enumerate(theirs) if b is t._base), None)
        assert ours_base == their_base, where
        assert a.untyped_storage().data_ptr() == ours[0].untyped_storage().data_ptr(), where
        assert a.element_size() == t.element_size() and a.nbytes == t.nbytes, where
        assert a.itemsize == t.itemsize, where
        if a.numel():
            first = a.reshape(-1)[0].item() if a.ndim else a.item()
            assert first == a.storage_offset(), where  # the values are 0, 1, 2 ... in storage
            assert a.data_ptr() - ours[0].data_ptr() == a.storage_offset() * a.element_size()


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_an_inplace_change_through_a_view_bumps_the_shared_version(data):
    ours, theirs, steps = _chain(data)
    if _expanded(steps) or ours[-1].numel() == 0:
        return  # (writing into an expand's view is refused by both)
    ours[-1].add_(1)
    theirs[-1].add_(1)
    assert [a._version for a in ours] == [t._version for t in theirs], steps
    np.testing.assert_array_equal(ours[0].numpy(), theirs[0].numpy())


# -- as_strided --------------------------------------------------------------------------------
@st.composite
def windows(draw):
    """A storage of ``n`` elements, and a window on it that fits (strides may overlap)."""
    n = draw(st.integers(1, 12))
    ndim = draw(st.integers(0, 3))
    size = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    stride = tuple(draw(st.integers(0, 4)) for _ in range(ndim))
    reach = sum((a - 1) * s for a, s in zip(size, stride))
    n = max(n, reach + 1)
    offset = draw(st.integers(0, n - 1 - reach))
    return n, size, stride, offset


@settings(max_examples=80, deadline=None)
@given(windows(), st.sampled_from(["leaf", "view", "transposed", "expanded"]))
def test_as_strided_forward_and_backward_match_pytorch(window, source):
    n, size, stride, offset = window
    rng = np.random.default_rng(n * 31 + len(size))
    values = rng.standard_normal(n)
    a = tg.tensor(values, requires_grad=True)
    t = torch.tensor(values, requires_grad=True)

    def make(x, lib):  # the tensor as_strided is called on: its own window on the storage
        if source == "view":
            return x[1:] if n > 1 else x[:]
        if source == "transposed":
            return x.reshape(1, n).t()
        if source == "expanded":  # an overlapping input window: PyTorch divides by the count
            return x[:1].expand(3)
        return x * 1 if lib == "torch" else x * 1  # a non-leaf on its own storage

    xa, xt = make(a, "ours"), make(t, "torch")
    ya, yt = xa.as_strided(size, stride, offset), xt.as_strided(size, stride, offset)
    assert ya.shape == tuple(yt.shape) and ya.stride() == yt.stride()
    assert ya.storage_offset() == yt.storage_offset()
    np.testing.assert_array_equal(ya.detach().numpy(), yt.detach().numpy())
    if source != "leaf":
        assert ya._base is a and yt._base is t
    g = rng.standard_normal(ya.shape)
    (ga,) = tg.autograd.grad(ya, xa, tg.tensor(g))
    (gt,) = torch.autograd.grad(yt, xt, torch.tensor(g))
    np.testing.assert_allclose(ga.numpy(), gt.numpy(), rtol=1e-12, atol=1e-12)
    ya.backward(tg.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_as_strided_overlapping_windows_sum_their_gradients():
    x = tg.arange(5.0, dtype=tg.float64).requires_grad_()
    y = x.as_strided((4, 2), (1, 1))  # sliding pairs: 0 1, 1 2, 2 3, 3 4
    assert y.tolist() == [[0, 1], [1, 2], [2, 3], [3, 4]]
    y.sum().backward()
    assert x.grad.tolist() == [1, 2, 2, 2, 1]


def test_as_strided_double_backward_matches_pytorch():
    values = np.random.default_rng(0).standard_normal(6)
    v = np.random.default_rng(1).standard_normal(6)
    out = []
    for lib in (tg, torch):
        x = lib.tensor(values, requires_grad=True)
        y = (x.as_strided((3, 2), (1, 2), 1) ** 3).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad((g * lib.tensor(v)).sum(), x)
        out.append((g.detach().numpy(), gg.numpy()))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-12)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-12)


def test_as_strided_is_a_view_sharing_the_version_counter():
    b = tg.zeros(6)
    v = b.as_strided((2, 2), (3, 1), 1)
    assert v._is_view() and v._base is b
    v.add_(1)
    assert b._version == v._version == 1
    assert b.tolist() == [0, 1, 1, 0, 1, 1]


def test_as_strided_outside_the_storage_is_refused_with_the_numbers():
    with pytest.raises(RuntimeError):
        torch.zeros(4)[1:].as_strided((3,), (2,))  # PyTorch refuses it too
    x = tg.zeros(4)
    with pytest.raises(RuntimeError) as ours:
        x[1:].as_strided((3,), (2,))
    message = str(ours.value)
    for part in ("as_strided", "[3]", "[2]", "offset 1", "4 elements", "16 bytes"):
        assert part in message, message
    with pytest.raises(RuntimeError, match="non-negative"):
        x.as_strided((2,), (-1,), 3)
    with pytest.raises(RuntimeError, match="one stride per dim"):
        x.as_strided((2, 2), (1,))


# -- storages, pointers and the autograd fields -------------------------------------------------
def test_storage_is_shared_by_views_and_detach_not_by_copies():
    a = tg.arange(6.0)
    s = a.untyped_storage()
    assert s.nbytes() == s.size() == len(s) == 6 * 4 and s.element_size() == 1
    assert a[1:].untyped_storage().data_ptr() == s.data_ptr()
    assert a.detach().untyped_storage().data_ptr() == s.data_ptr()
    assert a.clone().untyped_storage().data_ptr() != s.data_ptr()
    assert a[2:].data_ptr() == a.data_ptr() + 2 * a.element_size()
    t = torch.arange(6.0)
    assert t.untyped_storage().nbytes() == s.nbytes()


def test_stride_of_one_dim_and_its_errors():
    x = tg.zeros(2, 3)
    assert x.stride(0) == 3 and x.stride(-1) == 1
    assert tg.tensor(1.0).stride() == () == torch.tensor(1.0).stride()
    with pytest.raises(IndexError, match="out of range"):
        x.stride(2)


def test_output_nr_of_a_function_with_two_outputs():
    class Two(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g0, g1):
            return 2 * g0 + 3 * g1

    x = tg.ones(2, requires_grad=True)
    a, b = Two.apply(x)
    assert (x.output_nr, a.output_nr, b.output_nr) == (0, 0, 1)
    assert (x * 2).output_nr == 0
    # split records one node with an output per piece, as PyTorch does
    assert [p.output_nr for p in (x * 1).split(1)] == [0, 1]


def test_version_is_shared_by_a_view_and_its_base_as_in_pytorch():
    a, t = tg.zeros(3, 4), torch.zeros(3, 4)
    va, vt = a[1], t[1]
    va.mul_(2)
    vt.mul_(2)
    a.add_(1)
    t.add_(1)
    assert (a._version, va._version) == (t._version, vt._version) == (2, 2)


def test_persistable_marks_parameters_and_saved_buffers():
    assert tg.nn.Parameter(tg.zeros(2)).persistable
    assert not tg.zeros(2).persistable
    lin = tg.nn.Linear(2, 3)
    assert all(p.persistable for p in lin.parameters())
    bn = tg.nn.BatchNorm1d(3)
    assert bn.running_mean.persistable
    m = tg.nn.Module()
    m.register_buffer("scratch", tg.zeros(2), persistent=False)
    assert not m.scratch.persistable
    t = tg.zeros(2)
    t.persistable = True
    assert t.persistable and t.stop_gradient


@pytest.mark.parametrize("shape", [(2, 0, 3), (0,), (0, 4), (3, 0), (0, 0, 2)])
def test_a_tensor_without_elements_reports_pytorchs_strides(shape):
    import torch

    assert tg.zeros(shape).stride() == torch.zeros(shape).stride()
    assert tg.zeros(shape).is_contiguous()
