r"""Data for the lessons: the 8x8 handwritten digits (shipped), toy 2-D sets, a ``DataLoader``.

Layer 7 (``docs/concepts/layers.md``; ``tests/test_import_circles.py`` checks it): it may
import ``eager``, ``utils`` and ``backend``, never ``nn``, ``optim`` or ``viz``.

``DataLoader(X, y)`` here is the lessons' short form of PyTorch's loader, which lives in
:mod:`tinygrad_edu.utils.data` (``Dataset``, ``TensorDataset``, ``DataLoader`` ...) and
which it uses.

**The digits.** ``digits.npz`` holds 1,797 grey-scale images of 8x8 pixels (values 0..16) with
their labels 0..9. It is the test set of the UCI "Optical Recognition of Handwritten Digits"
dataset (E. Alpaydin and C. Kaynak, 1998; https://doi.org/10.24432/C50P49), exactly as bundled
by scikit-learn's ``load_digits``, exported once and stored here compressed (about 45 kB), so
nothing is downloaded at run time. It is licensed CC BY 4.0.

>>> from tinygrad_edu.data import load_digits
>>> X, y = load_digits()
>>> X.shape, X.dtype, float(X.max()), y.shape, y.dtype
((1797, 64), dtype('float32'), 1.0, (1797,), dtype('int64'))
>>> Xtr, ytr = load_digits("train")
>>> Xte, yte = load_digits("test")
>>> len(Xtr), len(Xte)
(1438, 359)
"""

from .digits import load_digits
from .loader import DataLoader
from .synthetic import make_moons, make_spirals
from .text import load_shakespeare

__all__ = ["load_digits", "make_moons", "make_spirals", "DataLoader", "load_shakespeare"]
