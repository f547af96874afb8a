"""Factories and tensor basics as PyTorch teaching programs (the character-level language
model lectures) write them: ``generator=`` with a seeded ``tg.Generator`` on every random op
that takes one, the ``size=`` keyword of the factories, the legacy constructors
(``tg.FloatTensor`` ...), ``x.is_cuda``/``x.is_cpu`` and ``x.detach_()``.

Where both libraries should behave alike, a test runs the same code on each (the ``L``
fixture: ``tinygrad_edu``, then ``torch``), so PyTorch itself confirms the expected behaviour.
The random numbers themselves differ from PyTorch's (see ``tinygrad_edu/eager/random.py``):
the tests check reproducibility within one library, shapes and dtypes.
"""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_edu as tg

torch = pytest.importorskip("torch")


@pytest.fixture(params=["tinygrad_edu", "torch"])
def L(request):
    """The library under test: ours, then PyTorch running the very same test code."""
    return tg if request.param == "tinygrad_edu" else torch


def dtype_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def values(t):
    return np.asarray(t.tolist())


# -- generator= ------------------------------------------------------------------------------
# each draw: (name, function of (library, x, generator)); x is a fresh float tensor [0.2, 0.3,
# 0.5] (probabilities, means, weights) for every call
DRAWS = [
    ("randn", lambda L, x, g: L.randn(2, 3, generator=g)),
    ("rand", lambda L, x, g: L.rand(2, 3, generator=g)),
    ("randint", lambda L, x, g: L.randint(0, 10, (2, 3), generator=g)),
    ("randperm", lambda L, x, g: L.randperm(10, generator=g)),
    ("multinomial", lambda L, x, g: L.multinomial(x, 8, replacement=True, generator=g)),
    ("multinomial_method", lambda L, x, g: x.multinomial(2, generator=g)),
    ("multinomial_2d", lambda L, x, g: L.multinomial(L.stack([x, x]), 3, generator=g)),
    ("bernoulli", lambda L, x, g: L.bernoulli(x, generator=g)),
    ("bernoulli_method", lambda L, x, g: x.bernoulli(generator=g)),
    ("normal_tensor_mean", lambda L, x, g: L.normal(x, 0.5, generator=g)),
    ("poisson", lambda L, x, g: L.poisson(x * 10, generator=g)),
    ("normal_", lambda L, x, g: L.empty(4, 5).normal_(0.0, 0.02, generator=g)),
    ("uniform_", lambda L, x, g: L.empty(4, 5).uniform_(-1, 1, generator=g)),
    ("exponential_", lambda L, x, g: L.empty(4, 5).exponential_(2.0, generator=g)),
    ("random_", lambda L, x, g: L.empty(4, 5).random_(0, 100, generator=g)),
    ("random_high", lambda L, x, g: L.zeros(4, 5, dtype=L.int64).random_(7, generator=g)),
    ("bernoulli_", lambda L, x, g: L.empty(4, 5).bernoulli_(0.3, generator=g)),
    ("geometric_", lambda L, x, g: L.empty(4, 5).geometric_(0.3, generator=g)),
    ("log_normal_", lambda L, x, g: L.empty(4, 5).log_normal_(generator=g)),
    ("cauchy_", lambda L, x, g: L.empty(4, 5).cauchy_(generator=g)),
    ("randn_like", lambda L, x, g: L.randn_like(L.zeros(3, 4), generator=g)),
    ("rand_like", lambda L, x, g: L.rand_like(L.zeros(3, 4), generator=g)),
    ("randint_like", lambda L, x, g: L.randint_like(L.zeros(3, 4), 10, generator=g)),
]


def draw(L, fn, seed):
    g = L.Generator().manual_seed(seed)
    x = L.tensor([0.2, 0.3, 0.5])
    return fn(L, x, g)


@pytest.mark.parametrize("name, fn", DRAWS, ids=[d[0] for d in DRAWS])
def test_generator_gives_torchs_shape_and_dtype(L, name, fn):
    out = draw(L, fn, 2147483647)
    ref = draw(torch, fn, 2147483647)
    assert tuple(out.shape) == tuple(ref.shape)
    assert dtype_name(out.dtype) == dtype_name(ref.dtype)


@pytest.mark.parametrize("name, fn", DRAWS, ids=[d[0] for d in DRAWS])
def test_the_same_seed_draws_the_same_numbers(name, fn):
    a, b = draw(tg, fn, 2147483647), draw(tg, fn, 2147483647)
    np.testing.assert_array_equal(values(a), values(b))
    # another seed, or the default generator moved on, draws other numbers (some draws have
    # few outcomes: try a few seeds)
    assert any(not np.array_equal(values(a), values(draw(tg, fn, s))) for s in (1, 2, 3, 42))


def test_a_generator_is_a_stream_of_its_own():
    g = tg.Generator().manual_seed(2147483647)
    first = tg.multinomial(tg.tensor([0.1, 0.2, 0.7]), 20, replacement=True, generator=g)
    tg.manual_seed(0)
    tg.randn(100)  # the default generator moving on does not move g
    second = tg.multinomial(tg.tensor([0.1, 0.2, 0.7]), 20, replacement=True, generator=g)
    g2 = tg.Generator().manual_seed(2147483647)
    again = tg.multinomial(tg.tensor([0.1, 0.2, 0.7]), 40, replacement=True, generator=g2)
    np.testing.assert_array_equal(values(again), np.concatenate([values(first),
                                                                 values(second)]))  # fmt: skip


def test_the_lecture_sampling_loop_runs(L):
    # makemore part 1: sample names from a bigram table with a seeded generator
    g = L.Generator().manual_seed(2147483647)
    P = L.rand((27, 27), generator=g) + 0.1
    P = P / P.sum(1, keepdim=True)
    W = L.randn((27, 27), generator=g, requires_grad=True)
    names = []
    for _ in range(5):
        ix, out = 0, []
        while True:
            p = P[ix]
            ix = L.multinomial(p, num_samples=1, replacement=True, generator=g).item()
            out.append(ix)
            if ix == 0 or len(out) > 30:
                break
        names.append(out)
    assert len(names) == 5 and all(isinstance(i, int) for n in names for i in n)
    assert W.requires_grad and dtype_name(W.dtype) == "float32"
    perm = L.randperm(10, generator=g)
    assert sorted(perm.tolist()) == list(range(10))


def test_a_wrong_generator_is_refused_with_the_op_named():
    with pytest.raises(TypeError, match=r"randperm.*tinygrad_edu\.Generator.*torch"):
        tg.randperm(3, generator=torch.Generator())
    with pytest.raises(TypeError, match=r"randn.*tinygrad_edu\.Generator"):
        tg.randn(3, generator=42)


def test_multinomial_with_a_generator_reports_the_real_error():
    # the shape rule takes no generator: asking it to explain an error must not fail on that
    g = tg.Generator().manual_seed(0)
    with pytest.raises(TypeError) as info:
        tg.multinomial(tg.tensor([0.2, 0.8]), 1, generator="not a generator")
    assert "shape()" not in str(info.value) and "generator" in str(info.value)
    with pytest.raises(RuntimeError, match="non-negative"):
        tg.multinomial(tg.tensor([-1.0, 2.0]), 1, generator=g)


# -- size= ---------------------------------------------------------------------------------
@pytest.mark.parametrize("factory", ["empty", "zeros", "ones", "randn", "rand"])
def test_the_size_keyword(L, factory):
    fn = getattr(L, factory)
    for size in [(2, 3), [4], (), L.Size([1, 2])]:
        out = fn(size=size)
        assert tuple(out.shape) == tuple(size)
        assert dtype_name(out.dtype) == "float32"
    assert dtype_name(fn(size=(2,), dtype=L.float64).dtype) == "float64"
    with pytest.raises(TypeError, match="size"):
        fn(2, size=(2,))


@pytest.mark.parametrize("factory", ["empty", "zeros", "ones", "randn", "rand"])
def test_a_size_is_required(L, factory):
    """No size is an error (PyTorch's TypeError); ``()`` is the 0-d tensor."""
    fn = getattr(L, factory)
    with pytest.raises(TypeError):
        fn()
    with pytest.raises(TypeError):
        fn(dtype=L.float64)
    assert tuple(fn(()).shape) == () and tuple(fn(0).shape) == (0,)


@pytest.mark.parametrize("factory", ["empty", "zeros", "ones", "randn", "rand"])
def test_a_missing_size_names_the_op_and_the_fix(factory):
    with pytest.raises(TypeError, match=rf"^{factory}\(\) missing .*\"size\".*{factory}\(\(\)\)"):
        getattr(tg, factory)()


def test_randint_requires_a_size(L):
    for args in [(5,), (0, 5)]:
        with pytest.raises(TypeError):
            L.randint(*args)
    assert tuple(L.randint(5, ()).shape) == () and tuple(L.randint(0, 5, (2,)).shape) == (2,)
    assert tuple(L.randint(0, 5, size=(3,)).shape) == (3,)
    with pytest.raises(TypeError, match=r"randint\(\) missing the size"):
        tg.randint(5)


def test_a_negative_size_is_a_runtime_error(L):
    for factory in ("zeros", "ones", "empty", "rand", "randn"):
        with pytest.raises(RuntimeError):
            getattr(L, factory)(2, -1)
    with pytest.raises(RuntimeError, match=r"non-negative.*\(2, -1\)"):
        tg.zeros(2, -1)


def test_the_size_keyword_with_a_generator():
    a = tg.randn(size=(3,), generator=tg.Generator().manual_seed(5))
    b = tg.randn(3, generator=tg.Generator().manual_seed(5))
    np.testing.assert_array_equal(values(a), values(b))
    assert tg.zeros(size=(2, 3)).sum().item() == 0 and tg.ones(size=(2, 3)).sum().item() == 6


# -- legacy constructors -------------------------------------------------------------------
LEGACY = [("FloatTensor", "float32"), ("DoubleTensor", "float64"), ("LongTensor", "int64"),
          ("IntTensor", "int32"), ("ByteTensor", "uint8"), ("BoolTensor", "bool")]  # fmt: skip


@pytest.mark.parametrize("name, dtype", LEGACY, ids=[n for n, _ in LEGACY])
def test_legacy_constructors(L, name, dtype):
    cls = getattr(L, name)
    data = cls([1, 0, 1])
    assert dtype_name(data.dtype) == dtype and data.tolist() == cls([1, 0, 1]).tolist()
    assert isinstance(data, L.Tensor) and isinstance(data, cls)
    sized = cls(2, 3)
    assert tuple(sized.shape) == (2, 3) and dtype_name(sized.dtype) == dtype
    assert tuple(cls().shape) == (0,) and tuple(cls(L.Size([2, 2])).shape) == (2, 2)
    assert tuple(cls((2, 3)).shape) == (2,)  # a tuple is data, a Size is a shape
    assert tuple(cls([[1, 2], [3, 4]]).shape) == (2, 2)
    assert not issubclass(cls, L.Tensor)


def test_legacy_constructors_convert_and_check(L):
    assert L.FloatTensor([1, 2]).tolist() == [1.0, 2.0]
    assert L.LongTensor([1.7, -2.5]).tolist() == [1, -2]
    assert L.BoolTensor([1, 0]).tolist() == [True, False]
    assert L.FloatTensor(np.array([1, 2])).tolist() == [1.0, 2.0]
    assert isinstance(L.tensor([1.0]), L.FloatTensor)  # a dtype check, as in PyTorch
    assert not isinstance(L.tensor([1]), L.FloatTensor)
    assert isinstance(L.tensor([1]), L.LongTensor)
    assert not isinstance(np.zeros(2, np.float32), L.FloatTensor)
    assert L.tensor([1.5, 2.5]).type(L.LongTensor).tolist() == [1, 2]
    assert dtype_name(L.tensor([1.5]).type("torch.LongTensor").dtype) == "int64"
    with pytest.raises(TypeError, match="sequence"):
        L.FloatTensor(2.5)
    with pytest.raises(RuntimeError, match="negative"):
        L.FloatTensor(-1)
    with pytest.raises(TypeError):
        L.FloatTensor(L.tensor([1, 2]))  # another dtype: convert it first


def test_legacy_constructor_of_a_tensor_shares_memory():
    a = tg.tensor([1.0, 2.0])
    b = tg.FloatTensor(a)
    b[0] = 5.0
    assert a.tolist() == [5.0, 2.0]
    with pytest.raises(TypeError, match=r"FloatTensor.*int64.*\.float\(\)"):
        tg.FloatTensor(tg.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="CPU"):
        tg.FloatTensor(2, device="sim:0")
    assert repr(tg.FloatTensor) == "<class 'tinygrad_edu.FloatTensor'>"


# -- is_cuda, is_cpu, detach_ ----------------------------------------------------------------
def test_is_cuda_and_is_cpu(L):
    x = L.ones(2)
    assert x.is_cpu is True and x.is_cuda is False


def test_is_cuda_on_another_device():
    x = tg.ones(2, device="sim:0")
    assert x.is_cpu is False and x.is_cuda is False


def test_detach_in_place(L):
    x = L.ones(3, requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert y.grad_fn is None and not y.requires_grad and y.is_leaf
    (x * 3).sum().backward()  # x's graph still works
    assert x.grad.tolist() == [3.0, 3.0, 3.0]
    x.detach_()
    assert not x.requires_grad and x.is_leaf


def test_detach_in_place_of_a_retained_tensor(L):
    x = L.ones(3, requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = y * 3
    y.detach_()
    z.sum().backward()  # the graph recorded before detach_ still runs, and fills y.grad
    assert x.grad.tolist() == [6.0, 6.0, 6.0]
    assert y.grad.tolist() == [3.0, 3.0, 3.0]


def test_detach_in_place_of_a_view_is_refused(L):
    with pytest.raises(RuntimeError, match="view"):
        L.ones(3)[:1].detach_()
    x = L.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="detach()"):
        (x * 1).view(3).detach_()
