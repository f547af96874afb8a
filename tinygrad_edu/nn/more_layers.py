r"""The modules of the layer functions in ``ops/more_layers.py`` (and of ``F.pad``), with
PyTorch's names, arguments, parameter names and default initialisation: ``Conv1d``,
``ConvTranspose1d``/``ConvTranspose2d``, ``Unfold``/``Fold``, ``AdaptiveAvgPool1d``,
``AdaptiveMaxPool1d``/``AdaptiveMaxPool2d``, ``GroupNorm``, ``InstanceNorm1d``/``2d``,
``RMSNorm``, ``Dropout1d``/``Dropout2d``, ``Upsample`` and the padding modules.

>>> import tinygrad_edu as tg
>>> from tinygrad_edu import nn
>>> nn.ConvTranspose2d(4, 2, 3, stride=2)(tg.ones(1, 4, 5, 5)).shape
(1, 2, 11, 11)
>>> nn.ReflectionPad1d(2)(tg.tensor([[[1.0, 2.0, 3.0]]])).tolist()
[[[3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]]]
"""

from __future__ import annotations

from .. import backend
from ..eager.tensor import Tensor
from ..ops.conv import pair
from . import functional as F
from . import init
from .functional_extra import _tuple
from .module import Module, Parameter
from .normalization import _BatchNorm, _dtype

__all__ = [
    "Conv1d", "ConvTranspose1d", "ConvTranspose2d", "Unfold", "Fold", "AdaptiveAvgPool1d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
    "RMSNorm", "Dropout1d", "Dropout2d", "Upsample", "UpsamplingNearest2d",
    "UpsamplingBilinear2d", "ZeroPad1d", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d",
    "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d",
    "CircularPad1d", "CircularPad2d",
]  # fmt: skip


def _single(name, what, v, minimum=1):
    v = v[0] if isinstance(v, (tuple, list)) and len(v) == 1 else v
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise ValueError(f"{name}: {what} must be an int >= {minimum}, got {v!r}")
    return v


class _ConvNd(Module):
    """What the convolutions share: the checks, the parameters and PyTorch's initialisation
    (``kaiming_uniform_(w, a=sqrt(5))``: $U(\\pm 1/\\sqrt{\\mathrm{fan_{in}}})$, the bias
    too, with $\\mathrm{fan_{in}}$ = ``weight.shape[1]`` times the kernel's size)."""

    transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 groups, bias, device, dtype, output_padding=0):  # fmt: skip
        super().__init__()
        name, nd = type(self).__name__, self.nd
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels "
                             f"({out_channels}) must both be divisible by groups ({groups})")
        if nd == 1:
            def one(w, v, m=1):
                return (_single(name, w, v, m),)
        elif nd == 2:
            def one(w, v, m=1):
                return pair(name, w, v, minimum=m)
        else:
            def one(w, v, m=1):
                return _tuple(name, w, v, nd, m)
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride = one("kernel_size", kernel_size), one("stride", stride)
        self.dilation = one("dilation", dilation)
        self.padding = padding if isinstance(padding, str) else one("padding", padding, 0)
        self.output_padding = one("output_padding", output_padding, 0)
        xp = backend.get_namespace(device)
        dt = _dtype(xp, dtype)
        io = (in_channels, out_channels // groups) if self.transposed else (
            out_channels, in_channels // groups)  # fmt: skip
        self.weight = Parameter(xp.zeros((*io, *self.kernel_size), dtype=dt), device=device)
        self.bias = Parameter(xp.zeros((out_channels,), dtype=dt), device=device) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default initialisation (see the class docstring)."""
        fan_in = self.weight.shape[1]
        for k in self.kernel_size:
            fan_in *= k
        bound = init._default_bound(fan_in)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def _arg(self, v):
        return v[0] if self.nd == 1 and isinstance(v, tuple) else v

    def extra_repr(self) -> str:
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")  # fmt: skip
        if self.padding != (0,) * self.nd:
            text += f", padding={self.padding!r}"
        if self.transposed and self.output_padding != (0,) * self.nd:
            text += f", output_padding={self.output_padding}"
        if self.dilation != (1,) * self.nd:
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text


class Conv1d(_ConvNd):
    r"""$y = w \star x + b$ over (N, C_in, L) inputs, ``weight`` (out_channels,
    in_channels/groups, kernel_size); ``padding`` a number, ``"valid"`` or ``"same"``."""

    nd = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None):  # fmt: skip
        if padding_mode != "zeros":
            raise NotImplementedError("Conv1d: only padding_mode='zeros' is supported; pad with "
                                      "F.pad(x, (p, p), mode=...) first")  # fmt: skip
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, device, dtype)  # fmt: skip

    def forward(self, x: Tensor) -> Tensor:
        return F.conv1d(x, self.weight, self.bias, self._arg(self.stride),
                        self._arg(self.padding), self._arg(self.dilation), self.groups)


class _ConvTransposeNd(_ConvNd):
    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None):  # fmt: skip
        if padding_mode != "zeros":
            raise ValueError(f"{type(self).__name__}: only padding_mode='zeros' is supported "
                             f"(as in PyTorch), got {padding_mode!r}")  # fmt: skip
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, device, dtype, output_padding)  # fmt: skip

    def forward(self, x: Tensor, output_size=None) -> Tensor:
        op = self.output_padding
        if output_size is not None:  # PyTorch: the output_padding that reaches output_size
            want = tuple(output_size)[-self.nd:]
            op = tuple(w - ((n - 1) * s - 2 * p + d * (k - 1) + 1) for w, n, s, p, d, k in zip(
                want, x.shape[-self.nd:], self.stride, self.padding, self.dilation,
                self.kernel_size))  # fmt: skip
        fn = F.conv_transpose1d if self.nd == 1 else F.conv_transpose2d
        return fn(x, self.weight, self.bias, self._arg(self.stride), self._arg(self.padding),
                  self._arg(op), self.groups, self._arg(self.dilation))  # fmt: skip


class ConvTranspose1d(_ConvTransposeNd):
    """The transposed 1-D convolution; ``weight`` (in_channels, out_channels/groups, k)."""

    nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    """The transposed 2-D convolution ("deconvolution", the adjoint of ``Conv2d``);
    ``weight`` (in_channels, out_channels/groups, kH, kW)."""

    nd = 2


class _Call(Module):
    """A module that calls one function with the arguments it was made with."""

    def __init__(self, **kwargs):
        super().__init__()
        self._names = tuple(kwargs)
        for k, v in kwargs.items():
            setattr(self, k, v)

    def _arguments(self) -> dict:
        return {k: getattr(self, k) for k in self._names}  # read now: they may be changed

    def forward(self, x: Tensor) -> Tensor:
        return type(self).fn(x, **self._arguments())

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self._arguments().items())


class Unfold(_Call):
    """``F.unfold``: the sliding windows as columns (im2col)."""

    fn = staticmethod(F.unfold)

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__(kernel_size=kernel_size, dilation=dilation, padding=padding,
                         stride=stride)  # fmt: skip


class Fold(_Call):
    """``F.fold``: columns summed back into an image (col2im)."""

    fn = staticmethod(F.fold)

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__(output_size=output_size, kernel_size=kernel_size, dilation=dilation,
                         padding=padding, stride=stride)  # fmt: skip


class AdaptiveAvgPool1d(_Call):
    """``F.adaptive_avg_pool1d`` to ``output_size``."""

    fn = staticmethod(F.adaptive_avg_pool1d)

    def __init__(self, output_size):
        super().__init__(output_size=output_size)


class AdaptiveMaxPool1d(_Call):
    """``F.adaptive_max_pool1d`` to ``output_size``."""

    fn = staticmethod(F.adaptive_max_pool1d)

    def __init__(self, output_size, return_indices: bool = False):
        super().__init__(output_size=output_size, return_indices=return_indices)


class AdaptiveMaxPool2d(_Call):
    """``F.adaptive_max_pool2d`` to ``output_size``."""

    fn = staticmethod(F.adaptive_max_pool2d)

    def __init__(self, output_size, return_indices: bool = False):
        super().__init__(output_size=output_size, return_indices=return_indices)


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


class _DropoutChannels(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{type(self).__name__}: dropout probability has to be between 0 "
                             f"and 1, but got {p}")  # fmt: skip
        self.p, self.inplace = p, inplace

    def forward(self, x: Tensor) -> Tensor:
        return type(self).fn(x, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutChannels):
    """Zero whole channels of (N, C, L) in training (``F.dropout1d``)."""

    fn = staticmethod(F.dropout1d)


class Dropout2d(_DropoutChannels):
    """Zero whole channels of (N, C, H, W) in training (``F.dropout2d``)."""

    fn = staticmethod(F.dropout2d)


class Upsample(_Call):
    """``F.interpolate`` with the arguments given here (``mode="nearest"`` by default)."""

    fn = staticmethod(F.interpolate)

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                 recompute_scale_factor=None):  # fmt: skip
        super().__init__(size=size, scale_factor=scale_factor, mode=mode,
                         align_corners=align_corners,
                         recompute_scale_factor=recompute_scale_factor)  # fmt: skip


class UpsamplingNearest2d(Upsample):
    """``Upsample(mode="nearest")``."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(mode="bilinear", align_corners=True)``, as PyTorch's."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class _Pad(Module):
    """``F.pad(x, padding, mode, value)``: an int pads every side of the last ``nd`` axes."""

    mode, value = "constant", 0.0

    def __init__(self, padding):
        super().__init__()
        if isinstance(padding, int):
            padding = (padding,) * (2 * self.nd)
        padding = tuple(padding)
        if len(padding) != 2 * self.nd:
            raise ValueError(f"{type(self).__name__}: padding must be an int or {2 * self.nd} "
                             f"ints, got {padding!r}")  # fmt: skip
        self.padding = padding

    def forward(self, x: Tensor) -> Tensor:
        if self.mode == "constant":
            return F.pad(x, self.padding, value=self.value)
        return F.pad(x, self.padding, mode=self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}" + (f", value={self.value}" if self.mode == "constant" else "")


def _pad_class(name, nd, mode, doc):
    cls = type(name, (_Pad,), {"nd": nd, "mode": mode, "__doc__": doc})
    cls.__module__ = __name__
    return cls


ZeroPad1d = _pad_class("ZeroPad1d", 1, "constant", "Pad the last axis with zeros.")
ZeroPad2d = _pad_class("ZeroPad2d", 2, "constant", "Pad the last two axes with zeros.")
ReflectionPad1d = _pad_class("ReflectionPad1d", 1, "reflect", "Pad the last axis by reflection.")
ReflectionPad2d = _pad_class("ReflectionPad2d", 2, "reflect",
                             "Pad the last two axes by reflection.")
ReplicationPad1d = _pad_class("ReplicationPad1d", 1, "replicate",
                              "Pad the last axis with its edge values.")
ReplicationPad2d = _pad_class("ReplicationPad2d", 2, "replicate",
                              "Pad the last two axes with their edge values.")
CircularPad1d = _pad_class("CircularPad1d", 1, "circular", "Pad the last axis circularly.")
CircularPad2d = _pad_class("CircularPad2d", 2, "circular", "Pad the last two axes circularly.")


class _ConstantPad(_Pad):
    def __init__(self, padding, value: float):
        super().__init__(padding)
        self.value = value


class ConstantPad1d(_ConstantPad):
    """Pad the last axis with ``value``."""

    nd = 1


class ConstantPad2d(_ConstantPad):
    """Pad the last two axes with ``value``."""

    nd = 2


class _Pool1d(_Call):
    def __init__(self, kernel_size, stride=None, padding=0, **kw):
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding, **kw)


class MaxPool1d(_Pool1d):
    """``F.max_pool1d``: the maximum of each window along the last axis."""

    fn = staticmethod(F.max_pool1d)

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False):  # fmt: skip
        super().__init__(kernel_size, stride, padding, dilation=dilation,
                         return_indices=return_indices, ceil_mode=ceil_mode)  # fmt: skip


class AvgPool1d(_Pool1d):
    """``F.avg_pool1d``: the mean of each window along the last axis."""

    fn = staticmethod(F.avg_pool1d)

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True):  # fmt: skip
        super().__init__(kernel_size, stride, padding, ceil_mode=ceil_mode,
                         count_include_pad=count_include_pad)  # fmt: skip


class PixelShuffle(_Call):
    """``F.pixel_shuffle``: ``(*, C*r*r, H, W)`` -> ``(*, C, H*r, W*r)``."""

    fn = staticmethod(F.pixel_shuffle)

    def __init__(self, upscale_factor: int):
        super().__init__(upscale_factor=upscale_factor)


class PixelUnshuffle(_Call):
    """``F.pixel_unshuffle``: ``(*, C, H*r, W*r)`` -> ``(*, C*r*r, H, W)``."""

    fn = staticmethod(F.pixel_unshuffle)

    def __init__(self, downscale_factor: int):
        super().__init__(downscale_factor=downscale_factor)


class Dropout3d(_DropoutChannels):
    """Zero whole channels of (N, C, D, H, W) in training (``F.dropout3d``)."""

    fn = staticmethod(F.dropout3d)


__all__ += ["MaxPool1d", "AvgPool1d", "PixelShuffle", "PixelUnshuffle", "Dropout3d"]


class Softmin(Module):
    r"""$e^{-x_i}/\sum_j e^{-x_j}$ along ``dim`` (``F.softmin``)."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Softmax over the channels of (N, C, H, W) or (C, H, W) (axis -3)."""

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected an input (N, C, H, W) or (C, H, W), got "
                             f"shape {input.shape}")  # fmt: skip
        return F.softmax(input, -3)


__all__ += ["Softmin", "Softmax2d"]


class BatchNorm3d(_BatchNorm):
    r"""Batch normalisation of (N, C, D, H, W) volumes, per channel C (statistics over the
    batch and the voxels); see :class:`BatchNorm1d`."""

    _dims, _shape_text = (5,), "(N, C, D, H, W)"


__all__ += ["BatchNorm3d"]
