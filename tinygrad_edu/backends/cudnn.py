"""``tg.backends.cudnn``: PyTorch's ``torch.backends.cudnn`` switches, accepted and inert.

``import tinygrad_edu.backends.cudnn as cudnn`` then ``cudnn.benchmark = True``,
``cudnn.deterministic = True`` or ``cudnn.enabled = False`` runs as in PyTorch, and reading
them back gives what was set, but **they change nothing**: there is no cuDNN here (the
library's convolutions are its own, on numpy or CuPy), so nothing reads them. Results are
deterministic either way. :func:`is_available` follows the CuPy backend
(:func:`tinygrad_edu.cuda.is_available`); :func:`version` is None (no cuDNN library).

>>> import tinygrad_edu.backends.cudnn as cudnn
>>> cudnn.benchmark = True   # accepted, no effect
>>> cudnn.enabled
True
"""

from __future__ import annotations

from ..cuda import is_available

__all__ = ["is_available", "version", "enabled", "benchmark", "deterministic", "allow_tf32",
           "benchmark_limit"]  # fmt: skip

enabled = True  # PyTorch: use cuDNN at all
benchmark = False  # PyTorch: time the convolution algorithms, keep the fastest
deterministic = False  # PyTorch: only deterministic convolution algorithms
allow_tf32 = True  # PyTorch: TF32 inside cuDNN's convolutions on Ampere and later
benchmark_limit = 10  # PyTorch: how many algorithms benchmark mode tries


def version() -> None:
    """The cuDNN version: None, as PyTorch gives without cuDNN."""
    return None
