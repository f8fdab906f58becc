"""LogSoftmax: ``torch.log_softmax(x, dim)`` -> ONNX LogSoftmax -> Aidge LogSoftmax."""
from __future__ import annotations

import torch


class LogSoftmax(torch.nn.LogSoftmax):
    pass
