"""LeakyReLU: ``torch.nn.LeakyReLU`` -> ONNX LeakyRelu -> Aidge LeakyReLU."""
from __future__ import annotations

import torch


class LeakyReLU(torch.nn.LeakyReLU):
    pass
