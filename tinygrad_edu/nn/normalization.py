r"""Normalisation layers, with PyTorch's arguments, state and modes: ``BatchNorm1d``/``2d``/``3d``,
``LayerNorm``, ``GroupNorm``, ``InstanceNorm1d``/``2d`` and ``RMSNorm``.

Batch norm behaves differently in the two modes, like Dropout: in ``train()`` mode it
normalises with the batch's statistics and updates its running averages (buffers
``running_mean``, ``running_var``, ``num_batches_tracked``, saved in ``state_dict``); in
``eval()`` mode it normalises with those running averages, so a prediction does not depend on
the rest of its batch.

>>> import tinygrad_edu as tg
>>> bn = tg.nn.BatchNorm2d(3)
>>> bn
BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)
>>> sorted(bn.state_dict())
['bias', 'num_batches_tracked', 'running_mean', 'running_var', 'weight']
>>> _ = bn(tg.randn(8, 3, 4, 4) * 2 + 5)  # training mode: the running mean moves towards 5
>>> bn.running_mean.numpy().round(1), int(bn.num_batches_tracked.item())
(array([0.5, 0.5, 0.5], dtype=float32), 1)
"""

from __future__ import annotations

from .. import backend
from ..eager.grad_mode import no_grad
from ..eager.tensor import Tensor
from ..ops import ShapeError
from . import functional as F
from .init import _dtype
from .module import Module, Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm",
           "InstanceNorm1d", "InstanceNorm2d", "RMSNorm"]


class _BatchNorm(Module):
    _dims: tuple[int, ...] = ()
    _shape_text = ""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None,
                 dtype=None):  # fmt: skip
        super().__init__()
        self.num_features, self.eps, self.momentum = int(num_features), float(eps), momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        xp = backend.get_namespace(device)
        dt = _dtype(xp, dtype)
        C = self.num_features
        if affine:
            self.weight = Parameter(xp.ones((C,), dtype=dt), device=device)
            self.bias = Parameter(xp.zeros((C,), dtype=dt), device=device)
        else:
            self.weight = self.bias = None
        if track_running_stats:
            self.register_buffer("running_mean", Tensor(xp.zeros((C,), dtype=dt), device=device))
            self.register_buffer("running_var", Tensor(xp.ones((C,), dtype=dt), device=device))
            self.register_buffer("num_batches_tracked",
                                 Tensor(xp.zeros((), dtype=xp.int64), device=device))  # fmt: skip
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def _upgrade_state_dict(self, state: dict, prefix: str) -> None:
        """A checkpoint without ``num_batches_tracked`` (saved before PyTorch added it) loads,
        even with ``strict=True``: the counter keeps its current value, as in PyTorch."""
        key = prefix + "num_batches_tracked"
        if self.track_running_stats and key not in state:
            nbt = self.num_batches_tracked
            state[key] = nbt if nbt is not None else Tensor(backend.get_namespace(None).zeros(
                (), dtype="int64"))  # fmt: skip

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches seen."""
        if self.track_running_stats:
            with no_grad():
                for t, v in ((self.running_mean, 0), (self.running_var, 1),
                             (self.num_batches_tracked, 0)):  # fmt: skip
                    t._data[...] = v
                    t._counter[0] += 1

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            with no_grad():
                self.weight._data[...] = 1
                self.bias._data[...] = 0

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim not in self._dims:
            raise ShapeError(
                f"{type(self).__name__}: expected a {self._shape_text} input, got shape {x.shape}"
            )
        if x.shape[1] != self.num_features:
            raise ShapeError(
                f"{type(self).__name__}({self.num_features}): input has shape {x.shape}, but "
                f"its channel axis (1) must be num_features={self.num_features}"
            )
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with no_grad():  # (an op in place: tg.compile records it)
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or self.running_mean is None
        keep = not self.training or self.track_running_stats
        return F.batch_norm(x, self.running_mean if keep else None,
                            self.running_var if keep else None, self.weight, self.bias,
                            use_batch, factor, self.eps)  # fmt: skip

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    r"""Batch normalisation of (N, C) or (N, C, L) inputs, per channel C:
    $y = \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}}\gamma + \beta$, with the batch's statistics
    in training (and an exponential moving average of them kept, ``momentum``), the running
    ones in ``eval()``."""

    _dims, _shape_text = (2, 3), "(N, C) or (N, C, L)"


class BatchNorm2d(_BatchNorm):
    r"""Batch normalisation of (N, C, H, W) images, per channel C (statistics over the batch
    and the pixels); see :class:`BatchNorm1d`."""

    _dims, _shape_text = (4,), "(N, C, H, W)"


class BatchNorm3d(_BatchNorm):
    r"""Batch normalisation of (N, C, D, H, W) volumes, per channel C (statistics over the
    batch and the voxels); see :class:`BatchNorm1d`."""

    _dims, _shape_text = (5,), "(N, C, D, H, W)"


class LayerNorm(Module):
    r"""Normalise each example over its last axes (``normalized_shape``), then scale and shift
    element-wise: $y = \frac{x - \mu}{\sqrt{\sigma^2+\epsilon}}\gamma + \beta$. The same in
    training and evaluation."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None):  # fmt: skip
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape = tuple(int(d) for d in shape)
        self.eps, self.elementwise_affine = float(eps), elementwise_affine
        xp = backend.get_namespace(device)
        dt = _dtype(xp, dtype)
        self.weight = self.bias = None
        if elementwise_affine:
            self.weight = Parameter(xp.ones(self.normalized_shape, dtype=dt), device=device)
            if bias:
                self.bias = Parameter(xp.zeros(self.normalized_shape, dtype=dt), device=device)

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")  # fmt: skip


class GroupNorm(Module):
    r"""Normalise each example's channels in ``num_groups`` groups, then the per-channel
    affine (``weight`` ones, ``bias`` zeros, shaped (num_channels,))."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device=None, dtype=None):  # fmt: skip
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("GroupNorm: num_channels must be divisible by num_groups "
                             f"({num_channels} by {num_groups})")  # fmt: skip
        self.num_groups, self.num_channels, self.eps, self.affine = (
            num_groups, num_channels, float(eps), affine)  # fmt: skip
        xp = backend.get_namespace(device)
        dt = _dtype(xp, dtype)
        self.weight = self.bias = None
        if affine:
            self.weight = Parameter(xp.ones((num_channels,), dtype=dt), device=device)
            self.bias = Parameter(xp.zeros((num_channels,), dtype=dt), device=device)

    def forward(self, x: Tensor) -> Tensor:
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class _InstanceNorm(Module):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None):  # fmt: skip
        super().__init__()
        if track_running_stats:
            raise NotImplementedError(f"{type(self).__name__}: track_running_stats=True is not "
                                      "supported; each instance is normalised with its own "
                                      "statistics (PyTorch's default)")  # fmt: skip
        self.num_features, self.eps, self.momentum, self.affine = (
            num_features, float(eps), momentum, affine)  # fmt: skip
        self.track_running_stats = False
        xp = backend.get_namespace(device)
        dt = _dtype(xp, dtype)
        self.weight = self.bias = None
        if affine:
            self.weight = Parameter(xp.ones((num_features,), dtype=dt), device=device)
            self.bias = Parameter(xp.zeros((num_features,), dtype=dt), device=device)

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim == self.nd + 1:  # one example (C, *spatial)
            return self.forward(x.unsqueeze(0)).squeeze(0)
        if x.ndim != self.nd + 2:
            raise ValueError(f"{type(self).__name__}: expected a {self.nd + 1}-D or "
                             f"{self.nd + 2}-D input, got shape {x.shape}")  # fmt: skip
        return F.instance_norm(x, weight=self.weight, bias=self.bias, eps=self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, " \
            f"affine={self.affine}, track_running_stats=False"  # fmt: skip


class InstanceNorm1d(_InstanceNorm):
    """Normalise each channel of each example (N, C, L) over L."""

    nd = 1


class InstanceNorm2d(_InstanceNorm):
    """Normalise each channel of each example (N, C, H, W) over its pixels."""

    nd = 2


class RMSNorm(Module):
    r"""$y = x / \sqrt{\mathrm{mean}(x^2) + \epsilon}\cdot w$ over the last axes
    (``normalized_shape``), ``weight`` ones; ``eps`` None is the dtype's machine epsilon."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine: bool = True,
                 device=None, dtype=None):  # fmt: skip
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape = tuple(int(d) for d in shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        xp = backend.get_namespace(device)
        self.weight = Parameter(xp.ones(self.normalized_shape, dtype=_dtype(xp, dtype)),
                                device=device) if elementwise_affine else None  # fmt: skip

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")  # fmt: skip
