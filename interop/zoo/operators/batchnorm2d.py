"""BatchNorm2D: ``torch.nn.BatchNorm2d`` (eval or train mode) -> ONNX BatchNormalization ->
Aidge BatchNorm2D. Running statistics, weight and bias start away from their defaults
(mean 0, var 1, weight 1, bias 0), which would hide mistakes."""
from __future__ import annotations

import torch

from ._specs import channels


class BatchNorm2D(torch.nn.BatchNorm2d):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, training: bool = False):
        super().__init__(num_features, eps=eps, momentum=momentum)
        with torch.no_grad():
            self.running_mean.uniform_(-0.5, 0.5)
            self.running_var.uniform_(0.5, 1.5)
            self.weight.uniform_(0.5, 1.5)
            self.bias.uniform_(-0.5, 0.5)
        self.train(training)


def specs_to_kwargs(specs: list[dict]) -> dict:
    return channels(specs, min_rank=4)
