"""``tg.nn.parallel``: PyTorch's ``torch.nn.parallel.DataParallel``, as a pass-through.

PyTorch's ``DataParallel(model)`` splits each batch across the visible GPUs, runs a replica of
``model`` on each and gathers the outputs. Here there is one device per process, so the
wrapper just calls the wrapped module: programs written for several GPUs run unchanged, on
one device. As in PyTorch, the wrapped model is ``.module`` and the wrapper's ``state_dict``
keys carry the prefix ``module.`` (save ``model.module.state_dict()`` to drop it).

>>> import tinygrad_edu as tg
>>> from tinygrad_edu.nn.parallel import DataParallel
>>> dp = DataParallel(tg.nn.Linear(3, 2))
>>> dp(tg.ones(4, 3)).shape
(4, 2)
>>> sorted(dp.state_dict())
['module.bias', 'module.weight']
"""

from __future__ import annotations

from .module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Wraps ``module``; calling the wrapper calls ``module`` (one device: nothing to split).

    ``device_ids``, ``output_device`` and ``dim`` are PyTorch's (which GPUs, where the
    outputs are gathered, the batch dimension): kept as attributes, not used."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim: int = 0,
                  module_kwargs=None):  # fmt: skip
    """PyTorch's functional form of :class:`DataParallel`: ``module(*inputs, **module_kwargs)``
    (``inputs`` a tuple, or one input)."""
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    return module(*inputs, **(module_kwargs or {}))
