r"""Pooling layers, with PyTorch's arguments: ``MaxPool1d``/``2d``/``3d``,
``AvgPool1d``/``2d``/``3d``, the adaptive pools ``AdaptiveAvgPool1d``/``2d`` and
``AdaptiveMaxPool1d``/``2d``, and the unpooling layers ``MaxUnpool1d``, ``MaxUnpool2d``.

>>> import tinygrad_edu as tg
>>> pool = tg.nn.MaxPool2d(2)
>>> pool
MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
>>> pool(tg.randn(4, 16, 28, 28)).shape
(4, 16, 14, 14)
"""

from __future__ import annotations

from ..eager.tensor import Tensor
from . import functional as F
from .call import _Call
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
           "MaxUnpool1d", "MaxUnpool2d"]


class _MaxPoolNd(Module):
    """The max-pooling layers' shared body: the arguments kept, ``forward`` calls the
    subclass's ``F`` function (``_function``) with them."""

    _function = ""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):  # fmt: skip
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation, self.ceil_mode = padding, dilation, ceil_mode
        self.return_indices = return_indices

    def forward(self, x: Tensor) -> Tensor:
        return getattr(F, self._function)(x, self.kernel_size, self.stride, self.padding,
                                          self.dilation, self.ceil_mode,
                                          self.return_indices)  # fmt: skip

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")  # fmt: skip


class _AvgPoolNd(Module):
    """The average-pooling layers' shared body (see :class:`_MaxPoolNd`)."""

    _function = ""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):  # fmt: skip
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, x: Tensor) -> Tensor:
        return getattr(F, self._function)(x, self.kernel_size, self.stride, self.padding,
                                          self.ceil_mode, self.count_include_pad,
                                          self.divisor_override)  # fmt: skip

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool2d(_MaxPoolNd):
    """The maximum of each ``kernel_size`` window; ``stride`` defaults to ``kernel_size``."""

    _function = "max_pool2d"


class AvgPool2d(_AvgPoolNd):
    """The mean of each ``kernel_size`` window; ``stride`` defaults to ``kernel_size``."""

    _function = "avg_pool2d"


class AdaptiveAvgPool2d(Module):
    """Average-pool to a fixed ``output_size`` (whole windows only: see
    :func:`~tinygrad_edu.nn.functional.adaptive_avg_pool2d`)."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(x, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class MaxPool3d(_MaxPoolNd):
    """The maximum of each ``kernel_size`` window of (N, C, D, H, W); ``stride`` defaults to
    ``kernel_size`` (see :func:`~tinygrad_edu.nn.functional.max_pool3d`)."""

    _function = "max_pool3d"


class AvgPool3d(_AvgPoolNd):
    """The mean of each ``kernel_size`` window of (N, C, D, H, W); ``stride`` defaults to
    ``kernel_size`` (see :func:`~tinygrad_edu.nn.functional.avg_pool3d`)."""

    _function = "avg_pool3d"


class _MaxUnpool(Module):
    fn = None
    nd = 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()

        def tup(v):  # PyTorch keeps them as tuples: (2, 2) for MaxUnpool2d(2)
            return tuple(v) if isinstance(v, (tuple, list)) else (v,) * self.nd

        self.kernel_size = tup(kernel_size)
        self.stride = tup(stride if stride is not None else kernel_size)
        self.padding = tup(padding)

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        return type(self).fn(input, indices, self.kernel_size, self.stride, self.padding,
                             output_size)  # fmt: skip

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool2d(_MaxUnpool):
    """The inverse of ``MaxPool2d(return_indices=True)``: each value put back at its index,
    zeros elsewhere; ``output_size`` picks among the sizes the pooling could have come from."""

    fn = staticmethod(F.max_unpool2d)


class MaxUnpool1d(_MaxUnpool):
    """The inverse of ``MaxPool1d(return_indices=True)`` (see :class:`MaxUnpool2d`)."""

    fn, nd = staticmethod(F.max_unpool1d), 1


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
