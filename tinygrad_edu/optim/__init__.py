"""Optimizers for the eager engine: ``SGD`` and ``Adam``, with PyTorch's update formulas.

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

from .adam import Adam
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam"]
