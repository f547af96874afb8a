r"""``conv3d``, with PyTorch's name and arguments: a composite of ops already in the library
(so its gradients come from it), one 2-D convolution per offset of the kernel along the depth
axis, the results added. Re-exported by :mod:`tinygrad_edu.nn.functional`; the helpers that
read a 5-D input as planes serve the 3-D pools too (:mod:`~tinygrad_edu.nn.functional_pooling`).

>>> import tinygrad_edu as tg
>>> import tinygrad_edu.nn.functional as F
>>> F.conv3d(tg.ones(1, 1, 3, 3, 3), tg.ones(1, 1, 2, 2, 2)).shape
(1, 1, 2, 2, 2)
"""

from __future__ import annotations

from ..eager.tensor import Tensor
from ..ops import ShapeError
from .arguments import _tensor, _tuple
from .functional_layers import conv2d, pad

__all__ = ["conv3d"]


def _batched5(name: str, x: Tensor) -> tuple[Tensor, bool]:
    """``x`` as (N, C, D, H, W) and whether a batch axis was added to a (C, D, H, W) input."""
    if x.dim() == 4:
        return x.unsqueeze(0), True
    if x.dim() != 5:
        raise ShapeError(f"{name}: expects an input (N, C, D, H, W) or (C, D, H, W), got "
                         f"shape {tuple(x.shape)}")  # fmt: skip
    return x, False


def _depth_slices(x: Tensor, k: int, s: int, d: int, od: int):
    """For each kernel offset ``i`` along depth, the input planes it meets in every output
    position: ``x[:, :, i*d :: s]`` (``od`` of them), laid out as a batch of images
    (N*od, C, H, W) for a 2-D op."""
    N, C, _, H, W = x.shape
    for i in range(k):
        start = i * d
        part = x[:, :, start:start + s * (od - 1) + 1:s]
        yield part.permute(0, 2, 1, 3, 4).reshape(N * od, C, H, W)


def _window_count(size: int, k: int, s: int, d: int) -> int:
    return (size - d * (k - 1) - 1) // s + 1


# -- conv3d ---------------------------------------------------------------------------------------
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    r"""3-D convolution of ``input`` (N, C, D, H, W) with ``weight`` (O, C/groups, kD, kH, kW),
    plus ``bias`` (O,):

    $$y_{n,o,z} = b_o + \sum_{i < k_D} \mathrm{conv2d}(x_{n,:,z s_D + i d_D}, w_{o,:,i})$$

    one ``conv2d`` per depth offset $i$ of the kernel, over all output depths at once, the
    results added. ``padding`` is an int, a triple, ``"valid"`` or ``"same"`` (stride 1).

    >>> import tinygrad_edu as tg
    >>> conv3d(tg.ones(1, 1, 2, 2, 2), tg.ones(1, 1, 2, 2, 2)).tolist()
    [[[[[8.0]]]]]
    """
    x, w = _tensor("conv3d", "input", input), _tensor("conv3d", "weight", weight)
    x, single = _batched5("conv3d", x)
    if w.dim() != 5:
        raise ShapeError(f"conv3d: weight must be (O, C/groups, kD, kH, kW), got shape "
                         f"{tuple(w.shape)}")  # fmt: skip
    s = _tuple("conv3d", "stride", stride, 3)
    d = _tuple("conv3d", "dilation", dilation, 3)
    if not isinstance(groups, int) or groups < 1:
        raise ValueError(f"conv3d: groups must be a positive int, got {groups!r}")
    N, C = x.shape[:2]
    O, Cg, kd, kh, kw = w.shape
    if C != Cg * groups or O % groups:
        raise ShapeError(f"conv3d: input {tuple(x.shape)} has {C} channels but the weight "
                         f"{tuple(w.shape)} with groups={groups} expects {Cg * groups}, and "
                         f"{O} output channels must divide into {groups} groups")  # fmt: skip
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise ValueError(f"conv3d: padding must be an int, a triple, 'valid' or 'same', got "
                             f"{padding!r}")  # fmt: skip
        if padding == "same" and s != (1, 1, 1):
            raise RuntimeError("conv3d: padding='same' is not supported for strided "
                               "convolutions; give the padding as numbers")  # fmt: skip
        if padding == "same":  # PyTorch puts an odd extra plane at the end
            total = [di * (ki - 1) for di, ki in zip(d, (kd, kh, kw))]
            widths = []
            for t in reversed(total):
                widths += [t // 2, t - t // 2]
            x = pad(x, tuple(widths))
        p = (0, 0, 0)
    else:
        p = _tuple("conv3d", "padding", padding, 3, minimum=0)
        if p[0]:
            x = pad(x, (0, 0, 0, 0, p[0], p[0]))
    D = x.shape[2]
    if d[0] * (kd - 1) + 1 > D:
        raise ShapeError(f"conv3d: the kernel depth {kd} (dilation {d[0]}) is bigger than the "
                         f"padded input depth {D} (input {tuple(input.shape)})")  # fmt: skip
    od = _window_count(D, kd, s[0], d[0])
    total = None
    for i, plane in enumerate(_depth_slices(x, kd, s[0], d[0], od)):
        y = conv2d(plane, w[:, :, i], None, s[1:], p[1:], d[1:], groups)
        total = y if total is None else total + y
    oh, ow = total.shape[-2:]
    out = total.reshape(N, od, O, oh, ow).permute(0, 2, 1, 3, 4)
    if bias is not None:
        b = _tensor("conv3d", "bias", bias)
        if tuple(b.shape) != (O,):
            raise ShapeError(f"conv3d: the bias has shape {tuple(b.shape)}, but the weight "
                             f"{tuple(w.shape)} makes {O} output channels")  # fmt: skip
        out = out + b.reshape(1, O, 1, 1, 1)
    return out.squeeze(0) if single else out
