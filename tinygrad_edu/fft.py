"""``torch.fft``: the parts that stay real.

Tensors here hold no complex dtype (numpy could, but no op has a complex derivative rule),
so the transforms whose results are complex (``fft``, ``ifft``, ``rfft``) and ``irfft``, whose
input is complex, are not here: each raises ``NotImplementedError`` naming numpy's function
(``np.fft.rfft(x.numpy())``; ``np.abs`` of it for a magnitude spectrum). What is here:

* ``fftfreq(n, d)`` and ``rfftfreq(n, d)``: the sample frequencies, as PyTorch computes them;
* ``fftshift`` and ``ifftshift``: the zero frequency moved to the centre and back (a ``roll``,
  so they work on any real tensor and have gradients).

>>> import tinygrad_edu as tg
>>> tg.fft.fftfreq(5)
tensor([ 0.0000,  0.2000,  0.4000, -0.4000, -0.2000])
>>> tg.fft.fftshift(tg.fft.fftfreq(4))
tensor([-0.5000, -0.2500,  0.0000,  0.2500])
"""

from __future__ import annotations

from .eager.dispatch import FUNCTIONS
from .eager.factories import arange

__all__ = ["fft", "ifft", "rfft", "irfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_roll = FUNCTIONS["roll"]


def _complex(name: str, numpy_call: str):
    def transform(input, *args, **kwargs):
        raise NotImplementedError(
            f"fft.{name}: its {'input' if name == 'irfft' else 'result'} is complex, and "
            f"tensors here hold no complex dtype; compute it with numpy: {numpy_call} "
            "(np.abs(np.fft.rfft(x.numpy())) for the magnitudes of a real signal). Here are "
            "fftfreq, rfftfreq, fftshift and ifftshift"
        )

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = f"Not here (complex numbers): use ``{numpy_call}``."
    return transform


fft = _complex("fft", "np.fft.fft(x.numpy())")
ifft = _complex("ifft", "np.fft.ifft(x.numpy())")
rfft = _complex("rfft", "np.fft.rfft(x.numpy())")
irfft = _complex("irfft", "np.fft.irfft(spectrum)")


def _count(name, n):
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise RuntimeError(f"fft.{name}: n must be a non-negative int, got {n!r}")
    return n


def _scaled(k, n, d):
    """``k * (1 / (n d))``, as PyTorch computes it; when ``n d`` is 0, ``k / 0`` (inf, and nan
    at 0: what the product with C's ``1 / 0.0`` gives, without numpy's warning)."""
    return k / 0.0 if n * d == 0 else k * (1.0 / (n * d))


def fftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """The frequencies of an ``n``-point transform with sample spacing ``d``: ``[0, 1, ...,
    (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``."""
    n = _count("fftfreq", n)
    k = arange(n, dtype=dtype, device=device)
    k = k.float() if not k.is_floating_point() else k
    if n:
        k = _roll(k - n // 2, -(n // 2)) if n > 1 else k
    return _scaled(k, n, d).requires_grad_(requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """The frequencies of ``rfft``'s ``n // 2 + 1`` outputs: ``[0, 1, ..., n // 2] /
    (d * n)``."""
    n = _count("rfftfreq", n)
    k = arange(n // 2 + 1, dtype=dtype, device=device)
    k = k.float() if not k.is_floating_point() else k
    return _scaled(k, n, d).requires_grad_(requires_grad)


def _dims(input, dim):
    if dim is None:
        return tuple(range(input.ndim))
    return (dim,) if isinstance(dim, int) else tuple(dim)


def fftshift(input, dim=None):
    """The zero frequency moved to the centre: each of ``dim`` (all by default) rolled by
    half its size."""
    dims = _dims(input, dim)
    if not dims:
        return input.clone()
    return _roll(input, tuple(input.shape[d] // 2 for d in dims), dims)


def ifftshift(input, dim=None):
    """The inverse of :func:`fftshift`: each of ``dim`` rolled back by half its size (rounded
    up)."""
    dims = _dims(input, dim)
    if not dims:
        return input.clone()
    return _roll(input, tuple(-(input.shape[d] // 2) for d in dims), dims)
