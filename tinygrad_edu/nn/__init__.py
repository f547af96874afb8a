"""Neural-network pieces on the eager engine: modules, layers, losses, saving and loading.

Layer 7 (``docs/concepts/layers.md``; ``tests/test_import_circles.py`` checks it): over the
eager engine; it may import ``eager``, ``ops``, ``linalg`` and ``backend``, never ``optim``,
``compiler``, ``viz``, ``symbolic`` or the package's ``__init__``.

>>> import tinygrad_edu as tg
>>> tg.manual_seed(0)
>>> model = tg.nn.Sequential(tg.nn.Linear(2, 4), tg.nn.Tanh(), tg.nn.Linear(4, 1))
>>> sum(p.numel() for p in model.parameters())
17
>>> sorted(model.state_dict())
['0.bias', '0.weight', '2.bias', '2.weight']
"""

from . import functional, init, utils
from .activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmax2d,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from .attention import MultiheadAttention, TransformerEncoder, TransformerEncoderLayer
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, Fold, Unfold
from .ctc import CTCLoss
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d
from .embedding import Embedding, EmbeddingBag
from .flatten import Flatten, Unflatten
from .linear import Bilinear, Identity, Linear
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CosineSimilarity,
    CrossEntropyLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MarginRankingLoss,
    MSELoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    NLLLoss,
    PairwiseDistance,
    PoissonNLLLoss,
    SmoothL1Loss,
    SoftMarginLoss,
    TripletMarginLoss,
)
from .module import Module, Parameter, load, save
from .normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    GroupNorm,
    InstanceNorm1d,
    InstanceNorm2d,
    LayerNorm,
    RMSNorm,
)
from .padding import (
    CircularPad1d,
    CircularPad2d,
    ConstantPad1d,
    ConstantPad2d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReplicationPad1d,
    ReplicationPad2d,
    ZeroPad1d,
    ZeroPad2d,
)
from .parallel import DataParallel
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from .transformer import Transformer, TransformerDecoder, TransformerDecoderLayer
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

# the names used by some courses for the same two functions
save_state_dict = save
load_state_dict_file = load

__all__ = [
    "DataParallel",
    "functional", "Module", "Parameter", "Linear", "ReLU", "Tanh", "Sigmoid", "Dropout",
    "Sequential", "Flatten", "Identity", "CrossEntropyLoss", "MSELoss", "save", "load",
    "save_state_dict", "load_state_dict_file",
    "init", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "BatchNorm1d", "BatchNorm2d",
    "LayerNorm", "Embedding", "ModuleList",
    "LeakyReLU", "GELU", "Softplus", "Softmax", "LogSoftmax", "NLLLoss", "L1Loss", "BCELoss",
    "BCEWithLogitsLoss", "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell",
    "MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder",
    "SiLU", "ELU", "SELU", "CELU", "Mish", "Hardtanh", "ReLU6", "Hardswish", "Hardsigmoid",
    "LogSigmoid", "Softsign", "Tanhshrink", "Hardshrink", "Softshrink", "Threshold", "GLU",
    "PReLU", "Unflatten", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "MarginRankingLoss",
    "HingeEmbeddingLoss", "SoftMarginLoss", "TripletMarginLoss", "CosineEmbeddingLoss",
    "MultiLabelSoftMarginLoss", "MultiMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss",
    "CosineSimilarity", "PairwiseDistance",
    "ModuleDict", "ParameterList", "ParameterDict", "utils",
    "Conv3d", "MaxPool3d", "AvgPool3d", "MaxUnpool1d", "MaxUnpool2d", "AlphaDropout",
    "EmbeddingBag", "Bilinear", "CTCLoss", "Transformer", "TransformerDecoder",
    "TransformerDecoderLayer",
]  # fmt: skip
__all__ += [
    "Conv1d", "ConvTranspose1d", "ConvTranspose2d", "Unfold", "Fold", "AdaptiveAvgPool1d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
    "RMSNorm", "Dropout1d", "Dropout2d", "Upsample", "UpsamplingNearest2d",
    "UpsamplingBilinear2d", "ZeroPad1d", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d",
    "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d",
    "CircularPad1d", "CircularPad2d", "MaxPool1d", "AvgPool1d", "PixelShuffle", "PixelUnshuffle",
    "Dropout3d", "Softmin", "Softmax2d", "BatchNorm3d",
]  # fmt: skip


def __getattr__(name):
    # ``torch.nn.modules.dropout.Dropout`` read as attributes, without an import of it first
    if name == "modules":
        import importlib

        return importlib.import_module(".modules", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
