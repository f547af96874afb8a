r"""``Conv2d``: a 2-D convolution layer (NCHW), PyTorch's arguments and initialisation.

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
from .loss_args import _same_dtype
from .module import Module, Parameter

__all__ = ["Conv2d"]

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
