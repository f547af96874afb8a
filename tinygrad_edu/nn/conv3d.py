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

from ..eager.tensor import Tensor
from ..ops import ShapeError
from . import functional as F
from .more_layers import _ConvNd

__all__ = ["Conv3d"]


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
