"""The bundled digits, the toy sets and the DataLoader."""

import os
import zipfile

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu.data import DataLoader, load_digits, make_moons, make_spirals
from tinygrad_edu.data.digits import DIGITS_PATH


def test_digits_file_is_bundled_and_pickle_free():
    assert os.path.getsize(DIGITS_PATH) < 100_000
    with zipfile.ZipFile(DIGITS_PATH) as z:
        assert sorted(z.namelist()) == ["images.npy", "labels.npy"]
    with np.load(DIGITS_PATH, allow_pickle=False) as f:
        assert f["images"].dtype == np.uint8 and f["images"].shape == (1797, 8, 8)
        assert f["labels"].dtype == np.int64


def test_load_digits_whole_set():
    X, y = load_digits()
    assert X.shape == (1797, 64) and X.dtype == np.float32 and y.dtype == np.int64
    assert X.min() == 0.0 and X.max() == 1.0
    assert np.bincount(y).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    raw, _ = load_digits(normalize=False)
    np.testing.assert_array_equal(raw / 16, X)
    assert raw.max() == 16 and np.all(raw == np.round(raw))


def test_split_is_stratified_disjoint_and_deterministic():
    X, y = load_digits()
    Xtr, ytr = load_digits("train", test_fraction=0.25, seed=3)
    Xte, yte = load_digits("test", test_fraction=0.25, seed=3)
    assert len(ytr) + len(yte) == len(y)
    counts, test_counts = np.bincount(y), np.bincount(yte)
    np.testing.assert_array_equal(test_counts, np.round(0.25 * counts).astype(int))
    # disjoint: together the rows are exactly the whole set (as a multiset of rows+labels)
    whole = np.column_stack([X, y])
    parts = np.concatenate([np.column_stack([Xtr, ytr]), np.column_stack([Xte, yte])])
    key = lambda a: a[np.lexsort(a.T[::-1])]  # noqa: E731
    np.testing.assert_array_equal(key(whole), key(parts))
    again, _ = load_digits("test", test_fraction=0.25, seed=3)
    np.testing.assert_array_equal(again, Xte)
    other, _ = load_digits("test", test_fraction=0.25, seed=4)
    assert not np.array_equal(other, Xte)


def test_load_digits_bad_arguments():
    with pytest.raises(ValueError, match="split"):
        load_digits("validation")
    with pytest.raises(ValueError, match="test_fraction"):
        load_digits("train", test_fraction=1.5)


@pytest.mark.parametrize("maker", [make_moons, make_spirals])
def test_toy_sets_are_deterministic(maker):
    X1, y1 = maker(101, noise=0.1, seed=5)
    X2, y2 = maker(101, noise=0.1, seed=5)
    X3, _ = maker(101, noise=0.1, seed=6)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.array_equal(X1, X3)
    assert X1.shape == (101, 2) and X1.dtype == np.float32 and y1.dtype == np.int64


def test_moons_geometry_without_noise():
    X, y = make_moons(200, noise=0.0, seed=0)
    top = X[y == 0]
    np.testing.assert_allclose(np.hypot(top[:, 0], top[:, 1]), 1.0, rtol=1e-6)
    bottom = X[y == 1]
    np.testing.assert_allclose(np.hypot(bottom[:, 0] - 1, bottom[:, 1] - 0.5), 1.0, rtol=1e-6)


def test_spirals_classes_and_radius():
    X, y = make_spirals(301, classes=4, noise=0.0, seed=0)
    assert np.bincount(y).tolist() == [76, 75, 75, 75]
    assert np.hypot(X[:, 0], X[:, 1]).max() == pytest.approx(1.0)


def test_dataloader_batches_and_len():
    X = np.arange(20, dtype=np.float32).reshape(10, 2)
    y = np.arange(10)
    dl = DataLoader(X, y, batch_size=4, shuffle=False)
    batches = list(dl)
    assert len(dl) == 3 and [len(b[1]) for b in batches] == [4, 4, 2]
    xb, yb = batches[0]
    assert isinstance(xb, tg.Tensor) and not xb.requires_grad and yb.dtype == np.int64
    np.testing.assert_array_equal(xb.numpy(), X[:4])
    dl = DataLoader(X, y, batch_size=4, drop_last=True)
    assert len(dl) == 2 and [len(b) for b, _ in dl] == [4, 4]


def test_dataloader_shuffles_each_epoch_deterministically():
    X = np.arange(50, dtype=np.float32)[:, None]
    y = np.arange(50)
    dl = DataLoader(X, y, batch_size=7, seed=1)
    e1 = np.concatenate([yb.numpy() for _, yb in dl])
    e2 = np.concatenate([yb.numpy() for _, yb in dl])
    assert sorted(e1.tolist()) == list(range(50)) and not np.array_equal(e1, e2)
    assert not np.array_equal(e1, y)
    fresh = DataLoader(X, y, batch_size=7, seed=1)
    np.testing.assert_array_equal(np.concatenate([yb.numpy() for _, yb in fresh]), e1)
    for xb, yb in DataLoader(X, y, batch_size=7, seed=1):  # pairs stay together
        np.testing.assert_array_equal(xb.numpy()[:, 0], yb.numpy())


def test_dataloader_arrays_and_x_only():
    X = np.ones((5, 3), np.float32)
    out = list(DataLoader(X, batch_size=2, as_tensors=False, shuffle=False))
    assert all(isinstance(b, np.ndarray) for b in out) and len(out) == 3
    with pytest.raises(ValueError, match="first"):
        DataLoader(X, np.arange(4))


@pytest.mark.gpu
@pytest.mark.skipif(not tg.backend.cuda_available(), reason="needs CuPy and a CUDA GPU")
def test_dataloader_on_cuda():
    X, y = load_digits("test")
    xb, yb = next(iter(DataLoader(X, y, batch_size=16, device="cuda")))
    assert xb.device == "cuda:0" and yb.device == "cuda:0" and xb.shape == (16, 64)
