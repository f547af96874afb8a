r"""``Embedding``: a lookup table of vectors, one row per token id, and ``EmbeddingBag``: the
sums, means or maxima of bags of its rows (PyTorch's arguments).

>>> import tinygrad_edu as tg
>>> tg.manual_seed(0)
>>> emb = tg.nn.Embedding(10, 3, padding_idx=0)
>>> emb
Embedding(10, 3, padding_idx=0)
>>> out = emb(tg.tensor([[1, 0, 4]], dtype="int64"))
>>> out.shape, out[0, 1].tolist()  # the padding row starts at zero
((1, 3, 3), [0.0, 0.0, 0.0])
"""

from __future__ import annotations

from .. import backend
from ..eager.grad_mode import no_grad
from ..eager.tensor import Tensor
from . import functional as F
from . import init
from .init import _dtype
from .module import Module, Parameter

__all__ = ["Embedding", "EmbeddingBag"]


class Embedding(Module):
    r"""Rows of ``weight`` (num_embeddings, embedding_dim), initialised $\mathcal N(0, 1)$ as in
    PyTorch (the ``padding_idx`` row, when given, starts at zero and gets no gradient).

    Call it with integer indices of any shape $S$; the result has shape
    $S + (\text{embedding\_dim},)$.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False, _weight=None,
                 _freeze: bool = False, device=None, dtype=None):  # fmt: skip
        super().__init__()
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(
                    f"Embedding: padding_idx {padding_idx} must be within num_embeddings "
                    f"({num_embeddings})"
                )
            padding_idx %= num_embeddings
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            xp = backend.get_namespace(device)
            dt = getattr(xp, dtype) if isinstance(dtype, str) else dtype
            dt = dt or backend.default_float(xp)
            w = Parameter(xp.zeros((num_embeddings, embedding_dim), dtype=dt), device=device)
            self.weight = w
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(
                    f"Embedding: _weight has shape {tuple(_weight.shape)}, expected "
                    f"{(num_embeddings, embedding_dim)}"
                )
            self.weight = Parameter(_weight, requires_grad=not _freeze, device=device)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight._data[self.padding_idx] = 0

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):  # fmt: skip
        """An Embedding holding ``embeddings`` (2-D); ``freeze`` keeps them from training."""
        data = embeddings._data if isinstance(embeddings, Tensor) else embeddings
        rows, dim = data.shape
        return cls(rows, dim, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=data, _freeze=freeze)  # fmt: skip

    def forward(self, indices) -> Tensor:
        return F.embedding(indices, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)  # fmt: skip

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        return text


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
