"""Log: ``torch.log`` -> ONNX Log -> Aidge Ln (inputs mapped onto a positive range by the config)."""
from __future__ import annotations

import torch


class Log(torch.nn.Module):
    def forward(self, x):
        return torch.log(x)
