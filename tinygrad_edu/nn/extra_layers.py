r"""``AlphaDropout``, ``EmbeddingBag`` and ``Bilinear``: PyTorch's layers, parameter names and
initialisation, calling the functions of the same name in :mod:`tinygrad_edu.nn.functional`.

>>> import tinygrad_edu as tg
>>> tg.manual_seed(0)
>>> bag = tg.nn.EmbeddingBag(10, 3, mode="sum")
>>> bag(tg.tensor([[1, 2], [4, 4]])).shape
(2, 3)
>>> tg.nn.Bilinear(2, 3, 4)(tg.randn(5, 2), tg.randn(5, 3)).shape
(5, 4)
"""

from __future__ import annotations

import math

from .. import backend
from ..eager.tensor import Tensor
from . import functional as F
from . import init
from .embedding import Embedding
from .module import Module, Parameter

__all__ = ["AlphaDropout", "EmbeddingBag", "Bilinear"]


def _dtype(xp, dtype):
    return getattr(xp, dtype) if isinstance(dtype, str) else (dtype or backend.default_float(xp))


class AlphaDropout(Module):
    """SELU's dropout in training (see :func:`~tinygrad_edu.nn.functional.alpha_dropout`:
    inputs of mean 0 and variance 1 keep them); the identity in ``eval()`` mode."""

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if isinstance(p, bool) or not 0.0 <= float(p) <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = float(p), bool(inplace)

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class EmbeddingBag(Module):
    r"""Sums, means or maxima of bags of rows of ``weight`` (num_embeddings, embedding_dim),
    initialised $\mathcal N(0, 1)$ as in PyTorch (the ``padding_idx`` row at zero). Call it
    with indices (B, L), or 1-D indices and ``offsets``; see
    :func:`~tinygrad_edu.nn.functional.embedding_bag`."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm=None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight=None, include_last_offset: bool = False,
                 padding_idx=None, device=None, dtype=None):  # fmt: skip
        super().__init__()
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError(f"EmbeddingBag: padding_idx {padding_idx} must be within "
                                     f"num_embeddings ({num_embeddings})")  # fmt: skip
            padding_idx %= num_embeddings
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: mode has to be one of sum, mean or max, got "
                             f"{mode!r}")  # fmt: skip
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, \
            scale_grad_by_freq
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset
        self.padding_idx = padding_idx
        if _weight is None:
            xp = backend.get_namespace(device)
            shape = (num_embeddings, embedding_dim)
            self.weight = Parameter(xp.zeros(shape, dtype=_dtype(xp, dtype)), device=device)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError(f"EmbeddingBag: _weight has shape "
                                     f"{tuple(_weight.shape)}, expected "
                                     f"{(num_embeddings, embedding_dim)}")  # fmt: skip
            self.weight = Parameter(_weight, device=device)

    # Embedding's start: N(0, 1), the padding row zero
    reset_parameters = Embedding.reset_parameters

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, max_norm=None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        mode: str = "mean", sparse: bool = False,
                        include_last_offset: bool = False, padding_idx=None):  # fmt: skip
        """An EmbeddingBag holding ``embeddings`` (2-D); ``freeze`` keeps them from training."""
        data = embeddings._data if isinstance(embeddings, Tensor) else embeddings
        rows, dim = data.shape
        bag = cls(rows, dim, max_norm, norm_type, scale_grad_by_freq, mode, sparse, data,
                  include_last_offset, padding_idx)  # fmt: skip
        bag.weight.requires_grad_(not freeze)
        return bag

    def forward(self, input: Tensor, offsets=None, per_sample_weights=None) -> Tensor:
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset,
                               self.padding_idx)  # fmt: skip

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        text += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        return text


class Bilinear(Module):
    r"""$y_k = x_1^\top W_k\, x_2 + b_k$, with ``weight`` (out_features, in1_features,
    in2_features) and ``bias`` (out_features,), both $U(\pm 1/\sqrt{\mathrm{in1\_features}})$
    at the start, as PyTorch's."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None):  # fmt: skip
        super().__init__()
        self.in1_features, self.in2_features = int(in1_features), int(in2_features)
        self.out_features = int(out_features)
        xp = backend.get_namespace(device)
        dt = _dtype(xp, dtype)
        shape = (out_features, in1_features, in2_features)
        self.weight = Parameter(xp.zeros(shape, dtype=dt), device=device)
        self.bias = Parameter(xp.zeros((out_features,), dtype=dt), device=device) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
