"""``Parameter``: a tensor that is a model's weight (PyTorch's ``torch.nn.Parameter``).

>>> import tinygrad_edu as tg
>>> w = tg.nn.Parameter(tg.zeros(2))
>>> w.requires_grad, w.is_leaf
(True, True)
"""

from __future__ import annotations

from ..eager.tensor import Tensor

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A tensor that is a model's weight: a leaf with ``requires_grad=True`` by default.

    Args:
        data: an array, a tensor (its data is shared, not copied) or Python data (float32).
        requires_grad: whether optimizers should train it (default True).
        device: where to put it (default: where ``data`` is).
    """

    __slots__ = ()
    persistable = True  # Paddle's flag: a parameter is saved with its model

    def __init__(self, data, requires_grad: bool = True, dtype=None, device=None):
        if isinstance(data, Tensor):
            device = device if device is not None else data.device
            data = data._data
        super().__init__(data, requires_grad=requires_grad, dtype=dtype, device=device)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()
