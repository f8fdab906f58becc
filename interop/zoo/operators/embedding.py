"""Embedding: ``x + torch.nn.Embedding(num_embeddings, dim)(indices)`` with constant indices
-> ONNX Gather on the (trained) embedding table + Add -> Aidge Gather + Add. The data input
is added so the graph has one; the embedding table is the parameter under training."""
from __future__ import annotations

import torch


class Embedding(torch.nn.Module):
    def __init__(self, num_embeddings: int, embedding_dim: int, indices):
        super().__init__()
        self.embedding = torch.nn.Embedding(num_embeddings, embedding_dim)
        self.register_buffer("indices", torch.tensor(list(indices), dtype=torch.int64))

    def forward(self, x):
        return x + self.embedding(self.indices)
