"""``tinygrad_edu.utils.data`` against ``torch.utils.data``: the same datasets give the same
batches (values, dtypes, structure), the same lengths and the same errors; shuffling gives a
reproducible permutation per epoch; ``num_workers`` loads in-process."""

import collections

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import tinygrad_edu as tg
from tinygrad_edu.utils import data as ud


def _plain(batch):
    """A batch as nested Python/numpy, with dtype names, from either library."""
    if isinstance(batch, tg.Tensor | torch.Tensor):
        arr = batch.detach().numpy() if isinstance(batch, torch.Tensor) else batch.numpy()
        return ("T", str(arr.dtype), arr.tolist())
    if isinstance(batch, dict):
        return {k: _plain(v) for k, v in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return (type(batch).__name__, *(_plain(v) for v in batch))
    if isinstance(batch, list | tuple):
        return (type(batch).__name__, [_plain(v) for v in batch])
    return batch


def _both(make_dataset, **kw):
    """All batches of our DataLoader and of PyTorch's, on the same data."""
    ours = [_plain(b) for b in ud.DataLoader(make_dataset(tg), **kw)]
    theirs = [_plain(b) for b in tud.DataLoader(make_dataset(torch), **kw)]
    return ours, theirs


def _tensors(lib):
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    return (ud if lib is tg else tud).TensorDataset(lib.tensor(x), lib.tensor(np.arange(10)))


class Pairs:
    """A map-style dataset as tutorials write one: numpy features and an int label."""

    def __init__(self, lib):
        self.base = (ud if lib is tg else tud).Dataset

    def __len__(self):
        return 7

    def __getitem__(self, i):
        return np.full(3, i, dtype=np.float32), i % 3


class Dicts(Pairs):
    def __getitem__(self, i):
        return {"x": float(i), "label": i, "name": f"s{i}", "flag": i % 2 == 0}


Point = collections.namedtuple("Point", "x y")


class Named(Pairs):
    def __getitem__(self, i):
        return Point(np.float64(i), [i, i + 1])


@pytest.mark.parametrize("kw", [dict(), dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                dict(batch_size=4, num_workers=2), dict(batch_size=None)],
                         ids=str)  # fmt: skip
@pytest.mark.parametrize("make", [_tensors, Pairs, Dicts, Named], ids=lambda f: f.__name__)
def test_batches_equal_torchs(make, kw):
    ours, theirs = _both(make, **kw)
    assert ours == theirs
    assert len(ud.DataLoader(make(tg), **kw)) == len(tud.DataLoader(make(torch), **kw))


def test_loader_keeps_pytorchs_defaults_and_attributes():
    ds = _tensors(tg)
    loader = ud.DataLoader(ds)
    assert loader.dataset is ds and loader.batch_size == 1 and loader.drop_last is False
    assert isinstance(loader.sampler, ud.SequentialSampler)
    assert isinstance(loader.batch_sampler, ud.BatchSampler)
    assert loader.collate_fn is ud.default_collate and loader.num_workers == 0
    assert [int(yb) for _, yb in loader] == list(range(10))  # no shuffle unless asked


def test_shuffle_with_a_seeded_generator_is_a_reproducible_permutation():
    def epochs(seed):
        loader = ud.DataLoader(_tensors(tg), batch_size=4, shuffle=True,
                               generator=tg.Generator().manual_seed(seed))  # fmt: skip
        return [[i for _, yb in loader for i in yb.tolist()] for _ in range(3)]

    a = epochs(1)
    assert all(sorted(e) == list(range(10)) for e in a)
    assert a[0] != a[1] and a == epochs(1) and a != epochs(2)
    # without a generator, tg.manual_seed makes the order reproducible
    tg.manual_seed(5)
    first = [yb.tolist() for _, yb in ud.DataLoader(_tensors(tg), batch_size=10, shuffle=True)]
    tg.manual_seed(5)
    again = [yb.tolist() for _, yb in ud.DataLoader(_tensors(tg), batch_size=10, shuffle=True)]
    assert first == again and first[0] != list(range(10))


def test_shuffled_pairs_stay_together():
    for xb, yb in ud.DataLoader(_tensors(tg), batch_size=3, shuffle=True):
        np.testing.assert_array_equal(xb.numpy()[:, 0], 2 * yb.numpy())


class Stream(ud.IterableDataset):
    def __init__(self, n, sized=True):
        self.n, self.sized = n, sized

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        if not self.sized:
            raise TypeError("no length")
        return self.n


class TorchStream(tud.IterableDataset):
    __init__, __iter__, __len__ = Stream.__init__, Stream.__iter__, Stream.__len__


@pytest.mark.parametrize("kw", [dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                dict(batch_size=None), dict(batch_size=2, num_workers=2)],
                         ids=str)  # fmt: skip
def test_iterable_dataset_batches_in_order(kw):
    ours = [_plain(b) for b in ud.DataLoader(Stream(7), **kw)]
    theirs = [_plain(b) for b in tud.DataLoader(TorchStream(7), **{**kw, "num_workers": 0})]
    assert ours == theirs
    assert len(ud.DataLoader(Stream(7), **kw)) == len(theirs)


@pytest.mark.parametrize("kw,words", [
    (dict(shuffle=True), "expected unspecified shuffle option"),
    (dict(sampler=[0, 1]), "expected unspecified sampler option"),
])  # fmt: skip
def test_iterable_dataset_refuses_an_order(kw, words):
    with pytest.raises(ValueError, match=words):
        ud.DataLoader(Stream(3), **kw)
    with pytest.raises(ValueError, match=words):
        tud.DataLoader(TorchStream(3), **kw)


@pytest.mark.parametrize("kw,words", [
    (dict(sampler=[0, 1], shuffle=True), "mutually exclusive with shuffle"),
    (dict(batch_sampler=[[0, 1]], batch_size=2), "batch_sampler option is mutually exclusive"),
    (dict(batch_sampler=[[0, 1]], drop_last=True), "batch_sampler option is mutually exclusive"),
    (dict(batch_size=None, drop_last=True), "mutually exclusive with drop_last"),
    (dict(batch_size=0), "batch_size should be a positive integer"),
    (dict(num_workers=-1), "num_workers option should be non-negative"),
    (dict(prefetch_factor=2), "prefetch_factor"),
    (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
])  # fmt: skip
def test_bad_options_are_torchs_value_errors(kw, words):
    with pytest.raises(ValueError, match=words):
        ud.DataLoader(_tensors(tg), **kw)
    with pytest.raises(ValueError, match=words):
        tud.DataLoader(_tensors(torch), **kw)


def test_samplers_and_batch_sampler():
    ds = _tensors(tg)
    loader = ud.DataLoader(ds, batch_sampler=[[3, 1], [0]])
    assert [yb.tolist() for _, yb in loader] == [[3, 1], [0]]
    loader = ud.DataLoader(ds, batch_size=2, sampler=ud.SubsetRandomSampler([9, 8, 7]))
    got = [i for _, yb in loader for i in yb.tolist()]
    assert sorted(got) == [7, 8, 9] and len(loader) == 2
    w = ud.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], num_samples=50,
                                 generator=tg.Generator().manual_seed(0))  # fmt: skip
    drawn = list(w)
    assert len(drawn) == 50 and set(drawn) == {1, 3} and drawn.count(3) > drawn.count(1)
    r = ud.RandomSampler(range(4), num_samples=10)
    idx = list(r)
    assert len(idx) == 10 and sorted(idx[:4]) == [0, 1, 2, 3] and sorted(idx[4:8]) == [0, 1, 2, 3]
    assert len(list(ud.RandomSampler(range(4), replacement=True, num_samples=9))) == 9
    with pytest.raises(ValueError, match="num_samples"):
        ud.RandomSampler(range(4), num_samples=0)
    with pytest.raises(RuntimeError, match="without replacement"):
        ud.WeightedRandomSampler([1.0, 0.0], num_samples=2, replacement=False)


def test_default_collate_rules_equal_torchs():
    samples = [
        [(1, 2.5, "a"), (3, 4.5, "b")],
        [{"a": np.array([1, 2]), "b": [np.int32(1), True]}] * 2,
        [[1, 2], [3, 4]],
        [np.float32(1.5), np.float32(2)],
        [True, False],
    ]
    for batch in samples:
        ours = ud.default_collate(batch)
        theirs = tud.default_collate(batch)
        assert _plain(ours) == _plain(theirs), batch
    conv = [np.arange(3), (np.float64(1.0), "s"), {"k": np.ones(2)}]
    for data in conv:
        assert _plain(ud.default_convert(data)) == _plain(tud.default_convert(data))


def test_default_collate_errors():
    with pytest.raises(RuntimeError, match="equal size"):
        ud.default_collate([tg.zeros(2), tg.zeros(3)])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal"):
        ud.default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="batch must contain tensors"):
        ud.default_collate([object(), object()])


def test_tensor_dataset_fast_path_equals_stacking_and_keeps_the_graph():
    w = tg.randn(6, 2, requires_grad=True)
    ds = ud.TensorDataset(w * 2, tg.arange(6))

    class Slow(ud.TensorDataset):
        def __getitem__(self, i):  # an override: the general path
            return super().__getitem__(i)

    fast = list(ud.DataLoader(ds, batch_size=4))
    slow = list(ud.DataLoader(Slow(*ds.tensors), batch_size=4))
    for (a, b), (c, d) in zip(fast, slow):
        np.testing.assert_array_equal(a.detach().numpy(), c.detach().numpy())
        assert a.dtype == c.dtype and b.tolist() == d.tolist()
    fast[0][0].sum().backward()
    assert w.grad.numpy()[:4].tolist() == [[2.0, 2.0]] * 4 and w.grad.numpy()[4:].sum() == 0


def test_datasets_subset_concat_split():
    ds = _tensors(tg)
    with pytest.raises(ValueError, match="Size mismatch"):
        ud.TensorDataset(tg.zeros(3), tg.zeros(4))
    with pytest.raises(TypeError, match="argument 1 is a list"):
        ud.TensorDataset(tg.zeros(3), [1, 2, 3])
    sub = ud.Subset(ds, [4, 2])
    assert len(sub) == 2 and sub[1][1].item() == 2
    cat = ds + sub
    assert isinstance(cat, ud.ConcatDataset) and len(cat) == 12 and cat[11][1].item() == 2
    assert cat[-1][1].item() == 2
    with pytest.raises(IndexError):
        cat[12]
    for lengths in ([3, 7], [0.25, 0.25, 0.5], [0.3, 0.3, 0.4]):
        parts = ud.random_split(ds, lengths, generator=tg.Generator().manual_seed(0))
        ref = tud.random_split(_tensors(torch), lengths)
        assert [len(p) for p in parts] == [len(p) for p in ref]
        seen = sorted(i for p in parts for i in p.indices)
        assert seen == list(range(10))
    with pytest.raises(ValueError, match="Sum of input lengths"):
        ud.random_split(ds, [3, 3])
    stacked = ud.StackDataset(a=ds, b=sub + sub + sub + sub + sub)
    assert set(stacked[0]) == {"a", "b"}


def test_iterable_dataset_has_no_length_when_the_stream_has_none():
    loader = ud.DataLoader(Stream(5, sized=False), batch_size=2)
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3], [4]]
    with pytest.raises(TypeError):
        len(loader)


def test_datasets_and_dataloaders_tutorial_loop():
    """PyTorch's "Datasets & DataLoaders" tutorial, on a synthetic dataset in place of
    FashionMNIST, written with ``import tinygrad_edu as torch``."""
    import tinygrad_edu as torch_
    from tinygrad_edu.utils.data import DataLoader, Dataset

    class CustomImageDataset(Dataset):
        def __init__(self, n, transform=None, target_transform=None):
            rng = np.random.default_rng(0)
            self.images = rng.random((n, 1, 8, 8)).astype(np.float32)
            self.labels = rng.integers(0, 10, n)
            self.transform, self.target_transform = transform, target_transform

        def __len__(self):
            return len(self.labels)

        def __getitem__(self, idx):
            image, label = self.images[idx], int(self.labels[idx])
            if self.transform:
                image = self.transform(image)
            if self.target_transform:
                label = self.target_transform(label)
            return image, label

    def one_hot(y):
        out = torch_.zeros(10, dtype=torch_.float)
        out[y] = 1.0
        return out

    training_data = CustomImageDataset(100, transform=torch_.tensor, target_transform=one_hot)
    train_dataloader = DataLoader(training_data, batch_size=64, shuffle=True)
    train_features, train_labels = next(iter(train_dataloader))
    assert train_features.size() == (64, 1, 8, 8) and train_labels.shape == (64, 10)
    assert train_labels.sum().item() == 64
    img = train_features[0].squeeze()
    assert img.shape == (8, 8)
    assert sum(len(x) for x, _ in train_dataloader) == 100


def test_batching_attributes_are_fixed_after_construction_as_in_torch():
    for lib, mod in ((tg, ud), (torch, tud)):
        loader = mod.DataLoader(_tensors(lib), batch_size=2)
        with pytest.raises(ValueError, match="should not be set after"):
            loader.batch_size = 4
        loader.num_workers = 1  # others may change


def test_collate_stacks_plain_data_directly_and_records_when_grad_is_needed():
    plain = ud.default_collate([tg.ones(2, device="sim:1"), tg.zeros(2, device="sim:1")])
    assert plain.device == "sim:1" and plain.grad_fn is None and plain.tolist() == [[1, 1], [0, 0]]
    w = tg.ones(2, requires_grad=True)
    stacked = ud.default_collate([w * 2, w * 3])
    stacked.sum().backward()
    assert stacked.grad_fn is not None and w.grad.tolist() == [5.0, 5.0]
    with pytest.raises(RuntimeError):
        ud.default_collate([tg.ones(2), tg.ones(2, device="sim:1")])
