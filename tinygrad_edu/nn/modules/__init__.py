"""``torch.nn.modules``' paths: ``tg.nn``'s layer classes under PyTorch's module names.

Programs (and libraries written for PyTorch) import layers by their defining module:
``from torch.nn.modules.loss import _Loss``, ``torch.nn.modules.linear.Linear``,
``torch.nn.modules.conv.Conv2d``. The submodules here (``module``, ``linear``, ``conv``,
``activation``, ``loss``, ``batchnorm``, ``dropout``, ``container``, ``sparse``, ``rnn``,
``pooling``, ``normalization``) re-export the same classes as ``tg.nn`` (no copies:
``tinygrad_edu.nn.modules.linear.Linear is tg.nn.Linear``), each the names PyTorch's module of
that name has and this library implements. This package also has the other layers PyTorch's
``torch.nn.modules`` lists (Flatten, the paddings, Upsample ...).

>>> from tinygrad_edu.nn.modules.linear import Linear
>>> import tinygrad_edu as tg
>>> Linear is tg.nn.Linear
True
"""

from __future__ import annotations

from .. import (
    CircularPad1d,
    CircularPad2d,
    ConstantPad1d,
    ConstantPad2d,
    CosineSimilarity,
    Flatten,
    Fold,
    InstanceNorm1d,
    InstanceNorm2d,
    PairwiseDistance,
    PixelShuffle,
    PixelUnshuffle,
    ReflectionPad1d,
    ReflectionPad2d,
    ReplicationPad1d,
    ReplicationPad2d,
    TransformerEncoder,
    TransformerEncoderLayer,
    Unflatten,
    Unfold,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
    ZeroPad1d,
    ZeroPad2d,
)
from . import (
    activation,
    batchnorm,
    container,
    conv,
    dropout,
    linear,
    loss,
    module,
    normalization,
    pooling,
    rnn,
    sparse,
)
from .activation import *  # noqa: F403
from .batchnorm import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .dropout import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .module import *  # noqa: F403
from .normalization import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403

__all__ = [
    *module.__all__,
    *linear.__all__,
    *conv.__all__,
    *activation.__all__,
    *loss.__all__,
    *batchnorm.__all__,
    *dropout.__all__,
    *container.__all__,
    *sparse.__all__,
    *rnn.__all__,
    *pooling.__all__,
    *normalization.__all__,
    "Flatten",
    "Unflatten",
    "CircularPad1d",
    "CircularPad2d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ZeroPad1d",
    "ZeroPad2d",
    "PixelShuffle",
    "PixelUnshuffle",
    "Upsample",
    "UpsamplingNearest2d",
    "UpsamplingBilinear2d",
    "TransformerEncoder",
    "TransformerEncoderLayer",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "PairwiseDistance",
    "CosineSimilarity",
    "Fold",
    "Unfold",
]
