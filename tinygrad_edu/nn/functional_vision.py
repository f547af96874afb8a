r"""``affine_grid`` and ``grid_sample`` (4-D), with PyTorch's names and arguments: sampling an
image at arbitrary points, the spatial-transformer pair, composed of ops already in the
library (so their gradients come from it). Re-exported by :mod:`tinygrad_edu.nn.functional`.

>>> import tinygrad_edu as tg
>>> import tinygrad_edu.nn.functional as F
>>> theta = tg.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
>>> F.affine_grid(theta, (1, 1, 2, 3), align_corners=False).shape
(1, 2, 3, 2)
"""

from __future__ import annotations

import warnings

import numpy as _np  # the base grid's coordinates (no math on tensors)

from ..eager.dispatch import FUNCTIONS
from ..eager.tensor import Tensor
from .arguments import _tensor

_stack = FUNCTIONS["stack"]

__all__ = ["affine_grid", "grid_sample"]


_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the old "
                  "behavior is desired. See the documentation of grid_sample for details.")


def _base_line(n: int, align_corners: bool):
    """The normalised coordinates of ``n`` pixel centres (``align_corners``: the corner
    pixels' centres at -1 and 1; else the image's edges at -1 and 1)."""
    if n <= 1:
        return _np.zeros(max(n, 0))
    line = _np.linspace(-1.0, 1.0, n)
    return line if align_corners else line * (n - 1) / n


def affine_grid(theta, size, align_corners=None) -> Tensor:
    r"""The sampling grid (N, H, W, 2) of the affine maps ``theta`` (N, 2, 3) for an output of
    ``size`` (N, C, H, W): each output pixel's normalised $(x, y)$ mapped by
    $\theta\,(x, y, 1)^\top$. Feed it to :func:`grid_sample`.

    >>> import tinygrad_edu as tg
    >>> eye = tg.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> affine_grid(eye, (1, 1, 1, 2), align_corners=True).tolist()
    [[[[-1.0, 0.0], [1.0, 0.0]]]]
    """
    t = _tensor("affine_grid", "theta", theta)
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if not t.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {t.dtype}")
    size = tuple(int(v) for v in size)
    if len(size) == 5:
        raise NotImplementedError("affine_grid: 3-D (volumetric) grids are not supported; "
                                  "size must be (N, C, H, W)")  # fmt: skip
    if len(size) != 4:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if t.dim() != 3 or tuple(t.shape[1:]) != (2, 3):
        raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                         f"{size}. Got {tuple(t.shape)}.")  # fmt: skip
    if t.shape[0] != size[0]:
        raise RuntimeError(f"affine_grid: theta holds {t.shape[0]} matrices but size asks for "
                           f"a batch of {size[0]} (size {size})")  # fmt: skip
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    N, _, H, W = size
    xs, ys = _base_line(W, align_corners), _base_line(H, align_corners)
    base = _np.stack([_np.broadcast_to(xs[None, :], (H, W)), _np.broadcast_to(ys[:, None], (H, W)),
                      _np.ones((H, W))], axis=-1).reshape(1, H * W, 3)  # fmt: skip
    base = Tensor(base.astype(str(t.dtype)), device=t.device)
    return (base @ t.transpose(1, 2)).reshape(N, H, W, 2)


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    r"""Sample ``input`` (N, C, H, W) at the points of ``grid`` (N, H_out, W_out, 2), given as
    normalised $(x, y)$ in $[-1, 1]$ ($x$ along the width): the output is (N, C, H_out,
    W_out). ``mode`` ``"bilinear"`` weighs the four neighbouring pixels (the gradient reaches
    the grid through the weights), ``"nearest"`` takes the closest one. ``padding_mode``
    ``"zeros"`` reads 0 outside the image, ``"border"`` the nearest edge pixel.

    >>> import tinygrad_edu as tg
    >>> img = tg.arange(4.0).reshape(1, 1, 2, 2)
    >>> grid_sample(img, tg.zeros(1, 1, 1, 2), align_corners=True).tolist()
    [[[[1.5]]]]
    """
    x, g = _tensor("grid_sample", "input", input), _tensor("grid_sample", "grid", grid)
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")  # fmt: skip
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")  # fmt: skip
    if mode == "bicubic" or padding_mode == "reflection":
        raise NotImplementedError("grid_sample: mode='bicubic' and padding_mode='reflection' "
                                  "are not supported; use 'bilinear'/'nearest' and "
                                  "'zeros'/'border'")  # fmt: skip
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if x.dim() == 5:
        raise NotImplementedError("grid_sample: 5-D (volumetric) input is not supported")
    if x.dim() != 4 or g.dim() != 4 or g.shape[-1] != 2 or g.shape[0] != x.shape[0]:
        raise RuntimeError(f"grid_sample: expects an input (N, C, H, W) and a grid (N, H_out, "
                           f"W_out, 2) with the same N, got {tuple(x.shape)} and "
                           f"{tuple(g.shape)}")  # fmt: skip
    N, C, H, W = x.shape
    _, Ho, Wo, _ = g.shape
    ix = _unnormalize(g[..., 0], W, align_corners)  # (N, Ho, Wo)
    iy = _unnormalize(g[..., 1], H, align_corners)
    if padding_mode == "border":
        ix, iy = ix.clamp(0, W - 1), iy.clamp(0, H - 1)
    flat = x.reshape(N, C, H * W)

    def read(cx: Tensor, cy: Tensor) -> Tensor:
        """The pixels at integer coordinates (as float tensors, no gradient), 0 outside."""
        inside = (cx >= 0) & (cx <= W - 1) & (cy >= 0) & (cy <= H - 1)
        at = (cy.clamp(0, H - 1) * W + cx.clamp(0, W - 1)).long().reshape(N, 1, Ho * Wo)
        vals = flat.gather(2, at.expand(N, C, Ho * Wo)).reshape(N, C, Ho, Wo)
        return vals * inside.unsqueeze(1).to(x.dtype)

    if mode == "nearest":
        rx, ry = ix.round(), iy.round()  # rounding has a zero derivative: so has the grid's,
        zero = (rx - rx.detach() + ry - ry.detach()).unsqueeze(1)  # which PyTorch returns
        return read(rx.detach(), ry.detach()) + zero
    x0, y0 = ix.detach().floor(), iy.detach().floor()
    wx1, wy1 = (ix - x0).unsqueeze(1), (iy - y0).unsqueeze(1)
    wx0, wy0 = 1 - wx1, 1 - wy1
    return (read(x0, y0) * wx0 * wy0 + read(x0 + 1, y0) * wx1 * wy0
            + read(x0, y0 + 1) * wx0 * wy1 + read(x0 + 1, y0 + 1) * wx1 * wy1)  # fmt: skip
