"""The MLPerf Tiny anomaly-detection dense autoencoder, on 640 inputs.

Input ``(N, 640)`` float32 (5 frames x 128 log-mel bins); output ``(N, 640)`` (the
reconstruction; the anomaly score is the reconstruction error).

Architecture: the DCASE 2020 Task 2 baseline used by the MLPerf Tiny "anomaly detection"
benchmark (ToyADMOS / MIMII, ``keras_model.py``): Dense(128) + BatchNorm + ReLU four times,
a Dense(8) + BatchNorm + ReLU bottleneck, Dense(128) + BatchNorm + ReLU four times and a
Dense(640) output layer. Full size (about 270k parameters).
Exports to ONNX ``Gemm``, ``BatchNormalization`` (on 2-D ``(N, C)`` tensors), ``Relu``.
"""
from __future__ import annotations

import torch
from torch import nn

INPUT_DIM = 640
HIDDEN = 128
BOTTLENECK = 8


def _dense_bn_relu(in_features: int, out_features: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(in_features, out_features), nn.BatchNorm1d(out_features), nn.ReLU())


class AnomalyAutoencoder(nn.Module):
    def __init__(self, input_dim: int = INPUT_DIM, hidden: int = HIDDEN, bottleneck: int = BOTTLENECK):
        super().__init__()
        self.encoder = nn.Sequential(
            _dense_bn_relu(input_dim, hidden),
            _dense_bn_relu(hidden, hidden),
            _dense_bn_relu(hidden, hidden),
            _dense_bn_relu(hidden, hidden),
            _dense_bn_relu(hidden, bottleneck),
        )
        self.decoder = nn.Sequential(
            _dense_bn_relu(bottleneck, hidden),
            _dense_bn_relu(hidden, hidden),
            _dense_bn_relu(hidden, hidden),
            _dense_bn_relu(hidden, hidden),
            nn.Linear(hidden, input_dim),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.encoder(x))
