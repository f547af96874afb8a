r"""The convolution layers, with PyTorch's arguments, parameter names and initialisation:
``Conv1d``, ``Conv2d`` (NCHW), ``Conv3d``, ``ConvTranspose1d``/``ConvTranspose2d``, and
``Unfold``/``Fold`` (im2col and col2im, the convolution's sliding windows as columns).

>>> import tinygrad_edu as tg
>>> tg.manual_seed(0)
>>> conv = tg.nn.Conv2d(1, 16, 3, padding=1)
>>> conv
Conv2d(1, 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
>>> conv(tg.randn(64, 1, 28, 28)).shape
(64, 16, 28, 28)
"""

from __future__ import annotations

from .. import backend
from ..eager.tensor import Tensor
from ..ops import ShapeError
from ..ops.conv import pair
from . import functional as F
from . import init
from .arguments import _same_dtype
from .call import _Call
from .functional_conv import _tuple
from .init import _dtype
from .module import Module, Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "Unfold", "Fold"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class Conv2d(Module):
    r"""$y = w \star x + b$ over (N, C_in, H, W) inputs, with ``weight`` of shape
    (out_channels, in_channels / groups, kH, kW) and ``bias`` of shape (out_channels,).

    Weights start as PyTorch's: ``kaiming_uniform_(w, a=sqrt(5))``, i.e.
    $U(\pm 1/\sqrt{\mathrm{fan_{in}}})$ with $\mathrm{fan_{in}} = C_{in}/G \cdot k_H k_W$, and
    the bias $U(\pm 1/\sqrt{\mathrm{fan_{in}}})$. ``padding`` may be a number, a pair,
    ``"valid"`` or ``"same"``; ``padding_mode`` ``"zeros"`` (default), ``"reflect"``,
    ``"replicate"`` or ``"circular"``.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None):  # fmt: skip
        super().__init__()
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise ValueError(
                f"Conv2d: in_channels ({in_channels}) and out_channels ({out_channels}) must "
                f"both be divisible by groups ({groups})"
            )
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"Conv2d: padding_mode must be one of {_PADDING_MODES}, got {padding_mode!r}"
            )
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = pair("Conv2d", "kernel_size", kernel_size)
        self.stride = pair("Conv2d", "stride", stride)
        self.dilation = pair("Conv2d", "dilation", dilation)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Conv2d: padding must be a number, a pair, 'same' or 'valid', "
                                 f"got {padding!r}")  # fmt: skip
            if padding == "same" and self.stride != (1, 1):
                raise ValueError("Conv2d: padding='same' is not supported for strided "
                                 "convolutions")  # fmt: skip
            self.padding = padding
        else:
            self.padding = pair("Conv2d", "padding", padding, minimum=0)
        self.padding_mode = padding_mode
        xp = backend.get_namespace(device)
        dt = getattr(xp, dtype) if isinstance(dtype, str) else (dtype or backend.default_float(xp))
        shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = Parameter(xp.zeros(shape, dtype=dt), device=device)
        self.bias = Parameter(xp.zeros((out_channels,), dtype=dt), device=device) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default initialisation (see the class docstring)."""
        fan_in = self.weight.shape[1] * self.kernel_size[0] * self.kernel_size[1]
        bound = init._default_bound(fan_in)  # = kaiming_uniform_(w, a=sqrt(5))'s bound
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim in (3, 4) and x.shape[-3] != self.in_channels:
            raise ShapeError(
                f"{self._short()}: input has shape {x.shape}, but its channel axis (-3) must be "
                f"in_channels={self.in_channels}"
            )
        _same_dtype(self._short(), x, self.weight, self.bias, owner="model")
        if self.padding_mode != "zeros" and self.padding != (0, 0):
            ph, pw = (self.padding if not isinstance(self.padding, str) else
                      self._same_amounts())  # fmt: skip
            x = F.pad(x, (pw, pw, ph, ph), mode=self.padding_mode)
            return F.conv2d(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)  # fmt: skip

    def _same_amounts(self):
        if self.padding == "valid":
            return (0, 0)
        return tuple(d * (k - 1) // 2 for d, k in zip(self.dilation, self.kernel_size))

    def _short(self) -> str:
        return f"Conv2d({self.in_channels}, {self.out_channels})"

    def extra_repr(self) -> str:
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")  # fmt: skip
        if self.padding != (0, 0):
            text += f", padding={self.padding!r}" if isinstance(self.padding, str) else (
                f", padding={self.padding}")  # fmt: skip
        if self.dilation != (1, 1):
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode!r}"
        return text


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


class Conv3d(_ConvNd):
    r"""$y = w \star x + b$ over (N, C_in, D, H, W) inputs, with ``weight`` of shape
    (out_channels, in_channels / groups, kD, kH, kW) and ``bias`` of shape (out_channels,).
    Weights start as PyTorch's: $U(\pm 1/\sqrt{\mathrm{fan_{in}}})$ with
    $\mathrm{fan_{in}} = C_{in}/G \cdot k_D k_H k_W$, and so does the bias. ``padding`` may be a
    number, a triple, ``"valid"`` or ``"same"``; only ``padding_mode="zeros"``.
    """

    nd = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None):  # fmt: skip
        if padding_mode != "zeros":
            raise NotImplementedError(f"Conv3d: padding_mode={padding_mode!r} is not "
                                      "supported; only 'zeros'")  # fmt: skip
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, device, dtype)  # fmt: skip
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Conv3d: padding must be a number, a triple, 'same' or "
                                 f"'valid', got {padding!r}")  # fmt: skip
            if padding == "same" and self.stride != (1, 1, 1):
                raise ValueError("Conv3d: padding='same' is not supported for strided "
                                 "convolutions")  # fmt: skip
        self.padding_mode = padding_mode

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim in (4, 5) and x.shape[-4] != self.in_channels:
            raise ShapeError(
                f"Conv3d({self.in_channels}, {self.out_channels}): input has shape {x.shape}, "
                f"but its channel axis (-4) must be in_channels={self.in_channels}"
            )
        return F.conv3d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)  # fmt: skip


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
