r"""``Conv3d``: a 3-D convolution layer (N, C, D, H, W), PyTorch's arguments, parameter names
and initialisation; it calls :func:`~tinygrad_edu.nn.functional.conv3d`.

>>> import tinygrad_edu as tg
>>> tg.manual_seed(0)
>>> conv = tg.nn.Conv3d(2, 4, 3, padding=1)
>>> conv
Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1))
>>> conv(tg.randn(1, 2, 5, 6, 7)).shape
(1, 4, 5, 6, 7)
"""

from __future__ import annotations

from .. import backend
from ..eager.tensor import Tensor
from ..ops import ShapeError
from . import functional as F
from . import init
from .functional_extra import _tuple
from .module import Module, Parameter

__all__ = ["Conv3d"]


class Conv3d(Module):
    r"""$y = w \star x + b$ over (N, C_in, D, H, W) inputs, with ``weight`` of shape
    (out_channels, in_channels / groups, kD, kH, kW) and ``bias`` of shape (out_channels,).
    Weights start as PyTorch's: $U(\pm 1/\sqrt{\mathrm{fan_{in}}})$ with
    $\mathrm{fan_{in}} = C_{in}/G \cdot k_D k_H k_W$, and so does the bias. ``padding`` may be a
    number, a triple, ``"valid"`` or ``"same"``; only ``padding_mode="zeros"``.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None):  # fmt: skip
        super().__init__()
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise ValueError(
                f"Conv3d: in_channels ({in_channels}) and out_channels ({out_channels}) must "
                f"both be divisible by groups ({groups})"
            )
        if padding_mode != "zeros":
            raise NotImplementedError(f"Conv3d: padding_mode={padding_mode!r} is not "
                                      "supported; only 'zeros'")  # fmt: skip
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _tuple("Conv3d", "kernel_size", kernel_size, 3)
        self.stride = _tuple("Conv3d", "stride", stride, 3)
        self.dilation = _tuple("Conv3d", "dilation", dilation, 3)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Conv3d: padding must be a number, a triple, 'same' or "
                                 f"'valid', got {padding!r}")  # fmt: skip
            if padding == "same" and self.stride != (1, 1, 1):
                raise ValueError("Conv3d: padding='same' is not supported for strided "
                                 "convolutions")  # fmt: skip
            self.padding = padding
        else:
            self.padding = _tuple("Conv3d", "padding", padding, 3, minimum=0)
        self.padding_mode = padding_mode
        xp = backend.get_namespace(device)
        dt = getattr(xp, dtype) if isinstance(dtype, str) else (dtype or backend.default_float(xp))
        shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = Parameter(xp.zeros(shape, dtype=dt), device=device)
        self.bias = Parameter(xp.zeros((out_channels,), dtype=dt), device=device) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default initialisation (see the class docstring)."""
        kd, kh, kw = self.kernel_size
        bound = init._default_bound(self.weight.shape[1] * kd * kh * kw)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim in (4, 5) and x.shape[-4] != self.in_channels:
            raise ShapeError(
                f"Conv3d({self.in_channels}, {self.out_channels}): input has shape {x.shape}, "
                f"but its channel axis (-4) must be in_channels={self.in_channels}"
            )
        return F.conv3d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)  # fmt: skip

    def extra_repr(self) -> str:
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")  # fmt: skip
        if self.padding != (0, 0, 0):
            text += f", padding={self.padding!r}" if isinstance(self.padding, str) else (
                f", padding={self.padding}")  # fmt: skip
        if self.dilation != (1, 1, 1):
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text
