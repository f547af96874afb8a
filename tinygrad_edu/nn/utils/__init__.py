"""PyTorch's ``torch.nn.utils``: gradient clipping and parameters as one vector.

Part of ``nn`` (layer 7 (``docs/concepts/layers.md``; ``tests/test_import_circles.py`` checks
it)): it may import ``eager`` and ``backend``.

>>> import tinygrad_edu as tg
>>> w = tg.nn.Parameter([3.0, 4.0])
>>> (w * w).sum().backward()             # gradient (6, 8): norm 10
>>> tg.nn.utils.clip_grad_norm_([w], max_norm=1.0)
tensor(10.)
>>> [round(g, 4) for g in w.grad.tolist()]
[0.6, 0.8]
"""

from .clip_grad import clip_grad_norm_, clip_grad_value_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "parameters_to_vector",
           "vector_to_parameters"]  # fmt: skip
