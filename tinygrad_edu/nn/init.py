r"""Weight initialisations with PyTorch's names and formulas (``torch.nn.init``).

Each function fills a tensor **in place** (outside autograd, as PyTorch does under
``no_grad``) from the library's seeded generator (``tg.manual_seed``) and returns it. For a
weight of shape $(O, I, k_1, \ldots)$, $\mathrm{fan_{in}} = I\prod k$ and
$\mathrm{fan_{out}} = O\prod k$.

* ``xavier_uniform_``: $U(-a, a)$, $a = g\sqrt{6/(\mathrm{fan_{in}}+\mathrm{fan_{out}})}$
  (Glorot & Bengio, 2010): keeps the variance of activations and gradients alike.
* ``kaiming_uniform_``: $U(-b, b)$, $b = g\sqrt{3/\mathrm{fan}}$ (He et al., 2015), with the
  gain $g$ of the nonlinearity ($\sqrt 2$ for ReLU).

``nn.Linear`` and ``nn.Conv2d`` start as PyTorch's do: ``kaiming_uniform_(w, a=sqrt(5))``,
which is $U(\pm 1/\sqrt{\mathrm{fan_{in}}})$, and the bias $U(\pm 1/\sqrt{\mathrm{fan_{in}}})$.

>>> import tinygrad_edu as tg
>>> from tinygrad_edu.nn import init
>>> tg.manual_seed(0)
>>> w = init.kaiming_uniform_(tg.zeros(256, 128), nonlinearity="relu")
>>> bound = init.calculate_gain("relu") * (3 / 128) ** 0.5  # fan_in = 128
>>> bool(abs(w.numpy()).max() <= bound), round(float(w.numpy().std() / bound), 1)
(True, 0.6)
"""

from __future__ import annotations

import math

import numpy as _np  # random draws on the CPU (the seeded generator), then copied to the device

from .. import backend
from ..eager.factories import generator
from ..eager.tensor import Tensor

__all__ = [
    "calculate_gain", "uniform_", "normal_", "constant_", "ones_", "zeros_", "eye_",
    "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "trunc_normal_",
    "orthogonal_",
]  # fmt: skip


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's table): 1 for linear layers and
    sigmoid, 5/3 for tanh, $\\sqrt 2$ for ReLU, $\\sqrt{2/(1+a^2)}$ for leaky ReLU (slope
    ``param``, default 0.01), 3/4 for SELU.

    >>> round(calculate_gain("leaky_relu", 0.2), 4)
    1.3868
    """
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")  # fmt: skip
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, int | float):
            raise ValueError(f"calculate_gain: negative_slope {slope!r} is not a number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(
        f"calculate_gain: unsupported nonlinearity {nonlinearity!r}; use one of linear, conv2d, "
        "sigmoid, tanh, relu, leaky_relu, selu"
    )


def _fans(t: Tensor, name: str) -> tuple[int, int]:
    if t.ndim < 2:
        raise ValueError(
            f"{name}: fan in and fan out cannot be computed for a tensor with fewer than 2 "
            f"dimensions (shape {t.shape}); use uniform_ or normal_ for biases"
        )
    receptive = math.prod(t.shape[2:])
    return t.shape[1] * receptive, t.shape[0] * receptive


def _fan(t, mode, name):
    fan_in, fan_out = _fans(t, name)
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"{name}: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    return fan_in if mode == "fan_in" else fan_out


def _fill(t: Tensor, values) -> Tensor:
    """Write ``values`` (numpy) into ``t`` in place, outside autograd; bump its version."""
    if not isinstance(t, Tensor):
        raise TypeError(f"init: expected a tensor, got {type(t).__name__}")
    arr = _np.asarray(values).astype(_np.dtype(t.dtype), copy=False)
    t._data[...] = backend.to_device(arr, t._device)
    t._counter[0] += 1
    return t


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Fill with $U(a, b)$."""
    return _fill(tensor, generator().uniform(a, b, tensor.shape))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Fill with $\\mathcal N(\\mathrm{mean}, \\mathrm{std}^2)$."""
    return _fill(tensor, generator().normal(mean, std, tensor.shape))


def trunc_normal_(tensor: Tensor, mean=0.0, std=1.0, a=-2.0, b=2.0) -> Tensor:
    """Fill with a normal distribution truncated to $[a, b]$ (redrawing values outside)."""
    rng = generator()
    out = rng.normal(mean, std, tensor.shape)
    bad = (out < a) | (out > b)
    while bad.any():
        out[bad] = rng.normal(mean, std, int(bad.sum()))
        bad = (out < a) | (out > b)
    return _fill(tensor, out)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    return _fill(tensor, _np.full(tensor.shape, val))


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix."""
    if tensor.ndim != 2:
        raise ValueError(f"eye_: needs a 2-D tensor, got shape {tensor.shape}")
    return _fill(tensor, _np.eye(*tensor.shape))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot uniform: $U(\\pm g\\sqrt{6/(\\mathrm{fan_{in}}+\\mathrm{fan_{out}})})$."""
    fan_in, fan_out = _fans(tensor, "xavier_uniform_")
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot normal: $\\mathcal N(0, g^2\\cdot 2/(\\mathrm{fan_{in}}+\\mathrm{fan_{out}}))$."""
    fan_in, fan_out = _fans(tensor, "xavier_normal_")
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu") -> Tensor:  # fmt: skip
    """He uniform: $U(\\pm g\\sqrt{3/\\mathrm{fan}})$, $g$ = ``calculate_gain(nonlinearity, a)``."""
    fan = _fan(tensor, mode, "kaiming_uniform_")
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / fan) if fan else 0.0
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu") -> Tensor:  # fmt: skip
    """He normal: $\\mathcal N(0, g^2/\\mathrm{fan})$."""
    fan = _fan(tensor, mode, "kaiming_normal_")
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan) if fan else 0.0
    return normal_(tensor, 0.0, std)


def orthogonal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """A (semi-)orthogonal matrix (from the QR decomposition of a Gaussian one), times
    ``gain``; axes after the first are flattened."""
    if tensor.ndim < 2:
        raise ValueError(f"orthogonal_: needs at least 2 dimensions, got shape {tensor.shape}")
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = generator().normal(0.0, 1.0, (rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = _np.linalg.qr(flat)
    q = q * _np.sign(_np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, (gain * q).reshape(tensor.shape))


def _dtype(xp, dtype):
    """The dtype of a new layer's parameters: ``dtype`` (a dtype or its name), else the
    backend's default float."""
    return getattr(xp, dtype) if isinstance(dtype, str) else (dtype or backend.default_float(xp))


def _default_bound(fan_in: int) -> float:
    """$1/\\sqrt{\\mathrm{fan_{in}}}$: the bound of PyTorch's default weight and bias
    initialisation for ``Linear`` and ``Conv2d`` (``kaiming_uniform_(w, a=sqrt(5))``)."""
    return 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
