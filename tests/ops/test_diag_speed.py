"""``diag``, ``diag_embed``, ``diagonal`` and their gradients against PyTorch, and their cost.

``diag_embed`` (and so ``diag`` of a vector, and the backward of ``diagonal``) once built a
(length, n * m) one-hot matrix and multiplied by it: O(n^3) time and memory for an n x n
result (``tg.diag`` of 2000 numbers needed ~64 GB). Now the diagonal is written (or read) by
one strided slice, O(n^2). The large cases below would run out of memory with the old kernel;
they check that the result is right, not a wall-clock time.
"""

from __future__ import annotations

import array_api_strict as xps
import numpy as np
import pytest
import torch

import tinygrad_edu as tg
from tinygrad_edu.ops import REGISTRY


def _check(ours_fn, torch_fn, array, seed=0):
    """Values and gradients (for a random output gradient) of ``ours_fn`` and ``torch_fn``."""
    x, xt = tg.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)
    y, yt = ours_fn(x), torch_fn(xt)
    assert tuple(y.shape) == tuple(yt.shape)
    np.testing.assert_array_equal(y.detach().numpy(), yt.detach().numpy())
    g = np.random.default_rng(seed).standard_normal(tuple(yt.shape))
    (gx,) = tg.grad(y, [x], grad_outputs=tg.tensor(g))
    (gxt,) = torch.autograd.grad(yt, [xt], torch.tensor(g))
    np.testing.assert_array_equal(gx.numpy(), gxt.numpy())


@pytest.mark.parametrize("n", [1, 2, 5, 8])
@pytest.mark.parametrize("k", [-3, -1, 0, 1, 2])
def test_diag_of_a_vector_matches_torch(n, k):
    v = np.random.default_rng(n).standard_normal(n)
    _check(lambda a: tg.diag(a, k), lambda a: torch.diag(a, k), v)


@pytest.mark.parametrize("shape", [(4, 4), (3, 6), (6, 3), (1, 5)])
@pytest.mark.parametrize("k", [-4, -1, 0, 2, 7])
def test_diag_of_a_matrix_matches_torch(shape, k):
    m = np.random.default_rng(sum(shape)).standard_normal(shape)
    _check(lambda a: tg.diag(a, k), lambda a: torch.diag(a, k), m)


@pytest.mark.parametrize("offset, dim1, dim2", [(0, -2, -1), (1, 0, 2), (-2, 2, 0),
                                                (3, 1, -1)])  # fmt: skip
def test_diag_embed_and_diagonal_match_torch(offset, dim1, dim2):
    x = np.random.default_rng(3).standard_normal((2, 3, 4))
    _check(lambda a: tg.diag_embed(a, offset, dim1, dim2),
           lambda a: torch.diag_embed(a, offset, dim1, dim2), x)  # fmt: skip
    _check(lambda a: a.diagonal(offset, dim1, dim2), lambda a: a.diagonal(offset, dim1, dim2), x)


def test_integer_and_bool_vectors_keep_their_dtype():
    for v in (np.arange(1, 5), np.array([True, False, True])):
        ours, theirs = tg.diag(tg.tensor(v), 1), torch.diag(torch.tensor(v), 1)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("offset, dim1, dim2", [(0, 0, 1), (2, 2, 0), (-1, 1, 2), (9, 0, 1)])
def test_strict_array_api_kernels_match_numpy(offset, dim1, dim2):
    """The strict namespace has no strides: ``diagonal`` reads a strided slice of the flat
    array instead of the view, ``diagonal_grad`` writes one (both O(size))."""
    x = np.random.default_rng(1).standard_normal((3, 5, 4))
    diag, back = REGISTRY["diagonal"], REGISTRY["diagonal_grad"]
    want = diag.forward(np, x, offset=offset, dim1=dim1, dim2=dim2)
    got = diag.forward(xps, xps.asarray(x), offset=offset, dim1=dim1, dim2=dim2)
    np.testing.assert_array_equal(np.asarray(got), want)
    g = np.random.default_rng(2).standard_normal(want.shape)
    want = back.forward(np, g, shape=x.shape, offset=offset, dim1=dim1, dim2=dim2)
    got = back.forward(xps, xps.asarray(g), shape=x.shape, offset=offset, dim1=dim1, dim2=dim2)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_diag_of_2000_numbers_is_a_2000_by_2000_matrix():
    """O(n^2): 32 MB for the result (the one-hot kernel needed 2000 x 4,000,000 numbers)."""
    v = np.random.default_rng(0).standard_normal(2000).astype(np.float32)
    x = tg.tensor(v, requires_grad=True)
    out = tg.diag(x, 1)
    assert tuple(out.shape) == (2001, 2001)
    np.testing.assert_array_equal(out.detach().numpy(), torch.diag(torch.tensor(v), 1).numpy())
    (out * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(2000, 2, np.float32))


def test_backward_of_the_diagonal_of_a_2000_by_2000_matrix():
    """``diag`` of a matrix: its backward writes the diagonal into zeros (``diagonal_grad``)."""
    m = np.random.default_rng(0).standard_normal((2000, 2000)).astype(np.float32)
    x = tg.tensor(m, requires_grad=True)
    d = tg.diag(x, -3)
    np.testing.assert_array_equal(d.detach().numpy(), np.diag(m, -3))
    (d * tg.arange(1997.0)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.diag(np.arange(1997.0, dtype=np.float32),
                                                          -3))  # fmt: skip
