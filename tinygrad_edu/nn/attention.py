r"""Attention, written with ordinary ops so that its graph can be drawn and its gradients come
from the op library: ``F.scaled_dot_product_attention``, ``nn.MultiheadAttention``,
``nn.TransformerEncoderLayer`` and ``nn.TransformerEncoder``, with PyTorch's signatures,
parameter names and answers.

$$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d}} + B\right)V$$

where the bias $B$ is $-\infty$ where a query may not look (a causal mask, a padding mask)
and 0 elsewhere. A query whose every key is masked gets zeros, as PyTorch's kernel gives
(a plain softmax would give NaN).

Mask conventions differ between PyTorch's two entry points, and this library follows both:
for ``scaled_dot_product_attention`` a **bool** ``attn_mask`` is ``True`` where attention is
**allowed**; for ``MultiheadAttention`` a bool ``attn_mask`` or ``key_padding_mask`` is
``True`` where attention is **not allowed**. Float masks (of the input's dtype) are added to
the scores in both. An integer 0/1 mask is an error in both, as in PyTorch, since the two
conventions would read it oppositely: convert it with ``.bool()`` (or ``.float()``).

>>> import tinygrad_edu as tg
>>> import tinygrad_edu.nn.functional as F
>>> q = k = v = tg.randn(2, 4, 5, 8)            # (batch, heads, time, head size)
>>> tuple(F.scaled_dot_product_attention(q, k, v, is_causal=True).shape)
(2, 4, 5, 8)
>>> mha = tg.nn.MultiheadAttention(embed_dim=8, num_heads=2, batch_first=True)
>>> [n for n, _ in mha.named_parameters()]
['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']
"""

from __future__ import annotations

import copy
import math

from .. import backend
from ..eager.factories import arange, zeros
from ..eager.tensor import Tensor
from . import functional as F
from . import init
from .containers import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module, Parameter
from .normalization import LayerNorm

__all__ = ["MultiheadAttention", "TransformerEncoderLayer",
           "TransformerEncoder", "generate_square_subsequent_mask"]  # fmt: skip


class MultiheadAttention(Module):
    r"""PyTorch's ``nn.MultiheadAttention``: the inputs projected by one packed
    ``in_proj_weight`` (``3 * embed_dim`` rows: query, key, value), split into ``num_heads``
    heads of ``embed_dim // num_heads``, attention per head, the heads joined and projected
    by ``out_proj``. Returns ``(attn_output, attn_weights)``; the weights are averaged over
    heads unless ``average_attn_weights=False``, and ``None`` when ``need_weights=False``."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim=None, vdim=None,
                 batch_first: bool = False, device=None, dtype=None):  # fmt: skip
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"MultiheadAttention: embed_dim and num_heads must be greater than "
                             f"0, got embed_dim={embed_dim} and num_heads={num_heads} instead")
        if embed_dim % num_heads:
            raise AssertionError(f"MultiheadAttention: embed_dim ({embed_dim}) must be divisible "
                                 f"by num_heads ({num_heads})")  # fmt: skip
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention: add_bias_kv and add_zero_attn are not "
                                      "supported; leave them False")  # fmt: skip
        self.embed_dim, self.num_heads = int(embed_dim), int(num_heads)
        self.kdim = embed_dim if kdim is None else int(kdim)
        self.vdim = embed_dim if vdim is None else int(vdim)
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.batch_first = float(dropout), bool(batch_first)
        self.head_dim = embed_dim // num_heads
        xp = backend.get_namespace(device)
        dt = getattr(xp, dtype) if isinstance(dtype, str) else (dtype or xp.float32)

        def param(*shape):
            return Parameter(xp.zeros(shape, dtype=dt), device=device)

        if self._qkv_same_embed_dim:
            self.in_proj_weight = param(3 * embed_dim, embed_dim)
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.q_proj_weight = param(embed_dim, embed_dim)
            self.k_proj_weight = param(embed_dim, self.kdim)
            self.v_proj_weight = param(embed_dim, self.vdim)
            self.in_proj_weight = None
        self.in_proj_bias = param(3 * embed_dim) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """PyTorch's: xavier_uniform_ projections, zero biases (out_proj's weight keeps
        Linear's default)."""
        for w in (self.in_proj_weight, self.q_proj_weight, self.k_proj_weight,
                  self.v_proj_weight):  # fmt: skip
            if w is not None:
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask=None,
                need_weights: bool = True, attn_mask=None, average_attn_weights: bool = True,
                is_causal: bool = False):  # fmt: skip
        if query.dim() not in (2, 3):
            raise AssertionError(f"MultiheadAttention: query should be unbatched 2D or batched "
                                 f"3D tensor but received {query.dim()}-D query tensor")
        batched = query.dim() == 3
        if self.batch_first and batched:  # the kernel works on (time, batch, features)
            same = query is key and key is value
            query = query.transpose(0, 1)
            key, value = (query, query) if same else (key.transpose(0, 1), value.transpose(0, 1))
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, None, None, False, self.dropout, self.out_proj.weight,
            self.out_proj.bias, training=self.training, key_padding_mask=key_padding_mask,
            need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )
        if self.batch_first and batched:
            out = out.transpose(0, 1)
        return out, weights

    def extra_repr(self) -> str:
        return ""


class TransformerEncoderLayer(Module):
    r"""PyTorch's ``nn.TransformerEncoderLayer``: self-attention and a two-layer feed-forward
    block, each with dropout, a residual connection and LayerNorm (after each block, or
    before it with ``norm_first=True``, the GPT-2 arrangement)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None):  # fmt: skip
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)  # fmt: skip
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = bool(norm_first)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            if activation not in ("relu", "gelu"):
                raise RuntimeError(f"activation should be relu/gelu, not {activation}")
            activation = F.relu if activation == "relu" else F.gelu
        self.activation = activation

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]  # fmt: skip
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src: Tensor, src_mask=None, src_key_padding_mask=None,
                is_causal: bool = False) -> Tensor:  # fmt: skip
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))


class TransformerEncoder(Module):
    r"""``num_layers`` copies of an encoder layer (``layers.0``, ``layers.1``, ... as in
    PyTorch), then an optional final ``norm``."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm=None,
                 enable_nested_tensor: bool = True, mask_check: bool = True):  # fmt: skip
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src: Tensor, mask=None, src_key_padding_mask=None,
                is_causal: bool | None = None) -> Tensor:  # fmt: skip
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=bool(is_causal))  # fmt: skip
        return self.norm(x) if self.norm is not None else x


def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
    """The causal float mask of ``nn.Transformer``: 0 on and below the diagonal, -inf above."""
    above = arange(sz, device=device).reshape(1, sz) > arange(sz, device=device).reshape(sz, 1)
    return zeros(sz, sz, device=device, dtype=dtype or "float32").masked_fill(above, -math.inf)
