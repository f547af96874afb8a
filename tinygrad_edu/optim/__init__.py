"""Optimizers for the eager engine, with PyTorch's names, defaults and update formulas:
``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``, ``Adadelta``, ``Adamax``, ``NAdam``,
``RAdam``, ``LBFGS``, and the learning-rate schedules in
:mod:`~tinygrad_edu.optim.lr_scheduler`.

Layer 7 (``docs/concepts/layers.md``; ``tests/test_import_circles.py`` checks it): it may
import ``eager`` and ``backend``, never ``nn`` (an optimizer takes parameters, not modules),
``compiler`` or ``viz``.

>>> import tinygrad_edu as tg
>>> tg.manual_seed(0)
>>> model = tg.nn.Linear(3, 1)
>>> opt = tg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
>>> x, y = tg.randn(8, 3), tg.randn(8, 1)
>>> losses = []
>>> for _ in range(20):
...     opt.zero_grad()
...     loss = tg.nn.functional.mse_loss(model(x), y)
...     loss.backward()
...     opt.step()
...     losses.append(loss.item())
>>> losses[-1] < losses[0]
True
"""

from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax",
           "NAdam", "RAdam", "LBFGS", "lr_scheduler"]  # fmt: skip
