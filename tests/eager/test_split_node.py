"""split / chunk / unbind record one backward node with an output per piece, as PyTorch does
(tinygrad_edu/eager/split_node.py): names, output_nr, gradients (also where some pieces get
none) and double backward, each against PyTorch in float64."""

import numpy as np
import pytest
import torch

import tinygrad_edu as tg

RNG = np.random.default_rng(7)


def _pieces(lib, x, how):
    return {
        "chunk": lambda: x.chunk(4, -1),
        "chunk_uneven": lambda: x.chunk(3, 1),
        "split": lambda: x.split(2, dim=1),
        "split_sizes": lambda: lib.split(x, [3, 1, 4], 1),
        "unbind": lambda: x.unbind(0),
        "unbind_last": lambda: lib.unbind(x, -1),
    }[how]()


HOWS = ["chunk", "chunk_uneven", "split", "split_sizes", "unbind", "unbind_last"]


@pytest.mark.parametrize("how", HOWS)
def test_one_node_named_as_pytorch_with_an_output_per_piece(how):
    a = RNG.standard_normal((3, 8))
    theirs = _pieces(torch, torch.tensor(a, requires_grad=True) * 1, how)
    ours = _pieces(tg, tg.tensor(a, requires_grad=True) * 1, how)
    assert len(ours) == len(theirs)
    assert [p.grad_fn.name() for p in ours] == [p.grad_fn.name() for p in theirs]
    assert [p.output_nr for p in ours] == [p.output_nr for p in theirs] == list(range(len(ours)))
    assert all(p.grad_fn is ours[0].grad_fn for p in ours)
    assert ours[0].grad_fn.next_functions[0][0].name() == "MulBackward0"
    meta = ours[0].grad_fn._input_metadata
    assert [tuple(m.shape) for m in meta] == [tuple(p.shape) for p in theirs]


@pytest.mark.parametrize("how", HOWS)
def test_gradients_match_pytorch_when_some_pieces_get_none(how):
    a = RNG.standard_normal((3, 8))
    grads = []
    for lib in (torch, tg):
        x = lib.tensor(a, requires_grad=True)
        ps = _pieces(lib, x, how)
        # the first piece twice (its slot sums), the last through a product, the rest unused
        loss = (ps[0].sin().sum() * ps[-1]).sum() + ps[0].exp().sum()
        loss.backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-14)


def test_a_piece_of_a_piece_and_retain_grad():
    a = RNG.standard_normal((4, 6))
    out = {}
    for lib in (torch, tg):
        x = lib.tensor(a, requires_grad=True)
        p, q = x.chunk(2, 0)
        r, s = q.split([4, 2], 1)
        s.retain_grad()
        ((p * 2).sum() + (s**2).sum() + r.tanh().sum()).backward()
        out[lib.__name__] = (x.grad.numpy(), s.grad.numpy(), s.output_nr, r.grad_fn.name())
    (gx, gs, nr, name), (ox, os_, onr, oname) = out["torch"], out["tinygrad_edu"]
    np.testing.assert_allclose(ox, gx, rtol=1e-12)
    np.testing.assert_allclose(os_, gs, rtol=1e-12)
    assert (onr, oname) == (nr, name) == (1, "SplitWithSizesBackward0")


@pytest.mark.parametrize("how", ["chunk", "unbind"])
def test_double_backward_matches_pytorch(how):
    a = RNG.standard_normal((3, 8))
    second = []
    for lib in (torch, tg):
        x = lib.tensor(a, requires_grad=True)
        ps = _pieces(lib, x, how)
        (g,) = lib.autograd.grad((ps[0] ** 3).sum() + (ps[1] * ps[-1]).sum(), x,
                                 create_graph=True)  # fmt: skip
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        second.append(gg.numpy())
    np.testing.assert_allclose(second[1], second[0], rtol=1e-12, atol=1e-14)


def test_hooks_on_pieces_see_their_own_gradient():
    x = tg.tensor(np.arange(6.0), requires_grad=True)
    seen = {}
    a, b, c = x.chunk(3)
    for name, piece in (("a", a), ("c", c)):
        piece.register_hook(lambda g, name=name: seen.setdefault(name, g.numpy().copy()))
    (a * 2 + c * 3).sum().backward()
    np.testing.assert_array_equal(seen["a"], [2.0, 2.0])
    np.testing.assert_array_equal(seen["c"], [3.0, 3.0])
    np.testing.assert_array_equal(x.grad.numpy(), [2, 2, 0, 0, 3, 3])


def test_inplace_on_a_piece_is_refused_and_no_grad_pieces_record_nothing():
    x = tg.ones(4, requires_grad=True) * 1
    a, _ = x.split(2)
    with pytest.raises(RuntimeError, match=r"Output 0 of Split.*view"):
        a.mul_(2)
    with tg.no_grad():
        pieces = x.chunk(2)
    assert all(p.grad_fn is None and not p.requires_grad for p in pieces)
    leaf = tg.ones(4)
    assert all(p.grad_fn is None for p in leaf.unbind())


def test_the_tracer_still_sees_one_slice_per_piece():
    """tg.compile traces split as slices (the node above is the eager engine's); both give the
    same gradient."""
    a = RNG.standard_normal((2, 8))

    def f(x):
        i, f_, g, o = x.chunk(4, -1)
        return (i.sigmoid() * g.tanh() + f_ * o).sum()

    x1, x2 = tg.tensor(a, requires_grad=True), tg.tensor(a, requires_grad=True)
    f(x1).backward()
    tg.compile(f)(x2).backward()
    np.testing.assert_allclose(x2.grad.numpy(), x1.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_cube_is_pytorchs_to_the_bit(dtype):
    """``x ** 3`` is two products (PyTorch's CPU kernel), not numpy's much slower ``powf``."""
    a = RNG.standard_normal((5, 7)).astype(dtype)
    theirs = torch.tensor(a, requires_grad=True)
    ours = tg.tensor(a, requires_grad=True)
    t, o = theirs**3.0, ours**3.0
    np.testing.assert_array_equal(o.detach().numpy(), t.detach().numpy())
    assert o.dtype == ours.dtype
    t.sum().backward()
    o.sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-6)
    assert (tg.tensor([2, 3]) ** 3).tolist() == [8, 27]  # integers keep numpy's power
    assert (tg.tensor([2, 3]) ** 3.0).dtype == tg.float32  # as PyTorch: the default float
