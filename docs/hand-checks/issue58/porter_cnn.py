import torch
from torch import nn


def make():
    torch.manual_seed(0)
    m = nn.Sequential(
        nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.SiLU(),
        nn.Conv2d(8, 16, 3), nn.BatchNorm2d(16), nn.SiLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10),
    )
    return m.train()
