"""``tg.backends``: PyTorch's ``torch.backends`` flags and probes.

``backends.cuda.is_built()`` and ``backends.cudnn.is_available()`` follow the CuPy backend
(:func:`tinygrad_edu.cuda.is_available`); ``backends.mps`` (Apple GPUs) is never available.
The cuDNN and TF32 switches (``cudnn.benchmark``, ``cudnn.deterministic``,
``cuda.matmul.allow_tf32``) are accepted so that scripts setting them run; they change
nothing here (CuPy's matmul and the library's own convolutions do not read them).
``cudnn`` is a module, so that ``import tinygrad_edu.backends.cudnn as cudnn`` works as
``import torch.backends.cudnn as cudnn`` does (:mod:`tinygrad_edu.backends.cudnn`).

>>> import tinygrad_edu as tg
>>> tg.backends.mps.is_available()
False
>>> tg.backends.cudnn.benchmark = True   # accepted
"""

from __future__ import annotations

from types import SimpleNamespace

from .. import cuda as _cuda
from . import cudnn

__all__ = ["cuda", "cudnn", "mps", "mkldnn", "openmp", "set_float32_matmul_precision",
           "get_float32_matmul_precision"]  # fmt: skip

_matmul_precision = ["highest"]


def set_float32_matmul_precision(precision: str) -> None:
    """PyTorch's switch for TF32/bfloat16 matmuls ("highest", "high", "medium"): recorded and
    reported back, but float32 matmuls here always run in full float32."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid argument passed to set_float32_matmul_precision: "
                           f"{precision!r}; use 'highest', 'high' or 'medium'")  # fmt: skip
    _matmul_precision[0] = precision


def get_float32_matmul_precision() -> str:
    """What :func:`set_float32_matmul_precision` last set ("highest" at first)."""
    return _matmul_precision[0]


def _never() -> bool:
    return False


cuda = SimpleNamespace(
    is_built=_cuda.is_available,
    matmul=SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True),
    allow_tf32=False,
)
mps = SimpleNamespace(is_available=_never, is_built=_never)
mkldnn = SimpleNamespace(is_available=_never, enabled=False)
openmp = SimpleNamespace(is_available=_never)
