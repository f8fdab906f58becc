"""ELU: ``torch.nn.ELU(alpha)`` -> ONNX Elu -> Aidge (no Elu importer in aidge_onnx 0.10.1)."""
from __future__ import annotations

import torch


class ELU(torch.nn.ELU):
    pass
