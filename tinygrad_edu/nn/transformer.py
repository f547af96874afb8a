r"""The decoder half of the Transformer and the whole model: ``nn.TransformerDecoderLayer``,
``nn.TransformerDecoder`` and ``nn.Transformer``, with PyTorch's signatures, parameter names
(so ``state_dict`` keys match PyTorch's) and answers. They are built from
:class:`~tinygrad_edu.nn.attention.MultiheadAttention`, ``Linear``, ``LayerNorm`` and
``Dropout``, so their gradients come from the op library.

A decoder layer has three blocks, each with dropout, a residual connection and a LayerNorm:
self-attention over the target (usually with a causal mask), attention from the target to
the encoder's output (the *memory*), and a two-layer feed-forward block.

>>> import tinygrad_edu as tg
>>> model = tg.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
...                           dim_feedforward=16, batch_first=True)
>>> src, tgt = tg.randn(2, 5, 8), tg.randn(2, 3, 8)
>>> mask = tg.nn.Transformer.generate_square_subsequent_mask(3)
>>> model(src, tgt, tgt_mask=mask).shape
(2, 3, 8)
"""

from __future__ import annotations

import copy

from ..eager.tensor import Tensor
from . import functional as F
from . import init
from .attention import (
    MultiheadAttention,
    TransformerEncoder,
    TransformerEncoderLayer,
    generate_square_subsequent_mask,
)
from .containers import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["TransformerDecoderLayer", "TransformerDecoder", "Transformer"]


def _activation(activation):
    if isinstance(activation, str):
        if activation not in ("relu", "gelu"):
            raise RuntimeError(f"activation should be relu/gelu, not {activation}")
        return F.relu if activation == "relu" else F.gelu
    return activation


class TransformerDecoderLayer(Module):
    r"""PyTorch's ``nn.TransformerDecoderLayer``: self-attention over ``tgt``, attention to
    ``memory``, and a feed-forward block; LayerNorm after each block (or before it with
    ``norm_first=True``)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None):  # fmt: skip
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)  # fmt: skip
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, **kw)  # fmt: skip
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = bool(norm_first)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]  # fmt: skip
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]  # fmt: skip
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask=None, memory_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:  # fmt: skip
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                   bool(tgt_is_causal))  # fmt: skip
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask,
                                    bool(memory_is_causal))  # fmt: skip
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask,
                                          bool(tgt_is_causal)))  # fmt: skip
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                           bool(memory_is_causal)))  # fmt: skip
        return self.norm3(x + self._ff_block(x))


class TransformerDecoder(Module):
    r"""``num_layers`` copies of a decoder layer (``layers.0``, ``layers.1``, ... as in
    PyTorch), each attending to the same ``memory``, then an optional final ``norm``."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm=None):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask=None, memory_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None,
                tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:  # fmt: skip
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=bool(tgt_is_causal),
                      memory_is_causal=memory_is_causal)  # fmt: skip
        return self.norm(x) if self.norm is not None else x


class Transformer(Module):
    r"""PyTorch's ``nn.Transformer``: an encoder (``self.encoder``, a
    :class:`~tinygrad_edu.nn.attention.TransformerEncoder` with a final LayerNorm) and a
    decoder (``self.decoder``, a :class:`TransformerDecoder` with one). ``forward(src, tgt)``
    encodes ``src`` into the memory and decodes ``tgt`` against it. Every weight matrix starts
    ``xavier_uniform_``, as PyTorch's ``_reset_parameters`` does.

    A subclass may use the encoder alone (PyTorch's word-language-model example replaces
    ``self.decoder`` by a ``Linear``)."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", custom_encoder=None,
                 custom_decoder=None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None,
                 dtype=None):  # fmt: skip
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, bias,
                                            **kw)  # fmt: skip
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, bias,
                                            **kw)  # fmt: skip
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, bool(batch_first)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)

    def forward(self, src: Tensor, tgt: Tensor, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal: bool = False) -> Tensor:  # fmt: skip
        batched = src.dim() == 3
        axis = 0 if self.batch_first else 1
        if batched and src.shape[axis] != tgt.shape[axis]:
            raise RuntimeError(f"the batch number of src and tgt must be equal (Transformer "
                               f"with batch_first={self.batch_first}: src {tuple(src.shape)}, "
                               f"tgt {tuple(tgt.shape)})")  # fmt: skip
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError(f"the feature number of src and tgt must be equal to d_model "
                               f"({self.d_model}); got src {tuple(src.shape)} and tgt "
                               f"{tuple(tgt.shape)}")  # fmt: skip
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)  # fmt: skip
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)  # fmt: skip

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """The causal float mask: 0 on and below the diagonal, ``-inf`` above (a position may
        attend to itself and to earlier ones only)."""
        return generate_square_subsequent_mask(sz, device=device, dtype=dtype)
