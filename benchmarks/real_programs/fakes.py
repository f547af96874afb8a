"""Stand-ins for what the programs download or import from outside PyTorch.

The programs load MNIST through ``torchvision`` and log through ``torch.utils.tensorboard``;
neither package is installed here and the data cannot be downloaded. The runner puts these
small modules in their place, the same for PyTorch and for this library:

- ``torchvision.datasets.MNIST``: the bundled 8x8 handwritten digits
  (``tinygrad_edu/data/digits.npz``), each pixel repeated 3x3 and the 24x24 image padded to
  28x28 with zeros, as unsigned bytes 0..255, so a program that expects MNIST's shapes gets them
  and its model has real digits to learn. ``train=True`` gives the first ``MNIST_TRAIN``
  images, ``train=False`` the last ``MNIST_TEST``.
- ``torchvision.transforms``: ``Compose``, ``ToTensor`` (bytes to floats in [0, 1], channel
  first) and ``Normalize``, computed with numpy and handed to the bound library's ``tensor``.
- ``torchvision.utils.save_image``, ``SummaryWriter`` and ``matplotlib`` (the figures a
  program draws): do nothing, so the timings are of training, not of drawing.
"""

from __future__ import annotations

import os
import sys
import types

import numpy as np

MNIST_TRAIN = 600
MNIST_TEST = 200
LIB = None  # the library the program runs on (``torch`` or ``tinygrad_edu``), set by the child


def _digits_28() -> tuple[np.ndarray, np.ndarray]:
    path = os.path.join(os.path.dirname(__file__), "..", "..", "tinygrad_edu", "data",
                        "digits.npz")  # fmt: skip
    with np.load(path) as f:
        images, labels = f["images"], f["labels"]
    big = np.kron(images.astype(np.float64) * (255.0 / 16.0), np.ones((3, 3)))
    big = np.pad(big, ((0, 0), (2, 2), (2, 2)))
    return np.round(big).astype(np.uint8), labels.astype(np.int64)


class MNIST:
    def __init__(self, root=None, train=True, transform=None, target_transform=None,
                 download=False):  # fmt: skip
        images, labels = _digits_28()
        part = slice(0, MNIST_TRAIN) if train else slice(len(images) - MNIST_TEST, None)
        self.data, self.targets = images[part], labels[part]
        self.transform, self.target_transform = transform, target_transform

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        img, target = self.data[i], int(self.targets[i])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x


class ToTensor:
    def __call__(self, img):
        return LIB.tensor(np.asarray(img, dtype=np.float32)[None] / np.float32(255.0))


class Normalize:
    def __init__(self, mean, std):
        self.mean = np.asarray(mean, dtype=np.float32).reshape(-1, 1, 1)
        self.std = np.asarray(std, dtype=np.float32).reshape(-1, 1, 1)

    def __call__(self, t):
        return LIB.tensor((t.numpy() - self.mean) / self.std)


def save_image(*args, **kwargs):
    return None


class SummaryWriter:
    def __init__(self, *args, **kwargs):
        pass

    def add_scalar(self, *args, **kwargs):
        pass

    def flush(self):
        pass

    def close(self):
        pass


def _plot_function(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    return save_image


def install(lib_name: str) -> None:
    """Put the stand-ins in ``sys.modules`` for a program running on ``lib_name``."""
    tv = types.ModuleType("torchvision")
    tv.datasets = types.ModuleType("torchvision.datasets")
    tv.datasets.MNIST = MNIST
    tv.transforms = types.ModuleType("torchvision.transforms")
    tv.transforms.Compose, tv.transforms.ToTensor = Compose, ToTensor
    tv.transforms.Normalize = Normalize
    tv.utils = types.ModuleType("torchvision.utils")
    tv.utils.save_image = save_image
    for mod in (tv, tv.datasets, tv.transforms, tv.utils):
        sys.modules[mod.__name__] = mod
    mpl = types.ModuleType("matplotlib")
    mpl.use = save_image
    mpl.pyplot = types.ModuleType("matplotlib.pyplot")
    mpl.pyplot.__getattr__ = _plot_function
    sys.modules["matplotlib"], sys.modules["matplotlib.pyplot"] = mpl, mpl.pyplot
    tb = types.ModuleType(f"{lib_name}.utils.tensorboard")
    tb.SummaryWriter = SummaryWriter
    sys.modules[tb.__name__] = tb
