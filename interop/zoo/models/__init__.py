"""The reference networks of the model suite, declared once in :data:`MODEL_CASES`.

Each entry is a plain dict read by ``tests/test_models.py``, ``interop.cases.catalog`` (which expands each into its eval and train cases) and the asv
benchmarks:

- ``name``: the case name (test ids are ``<name>_eval`` and ``<name>_train``);
- ``model``: a zero-argument factory returning a fresh, deterministically initialised
  ``torch.nn.Module`` (in train mode, as torch constructs it);
- ``input_size``: the input shape, batch included;
- ``output_size``: the output shape;
- ``test_backward``: whether the ``_train`` configuration runs backward and SGD steps.

Construction is deterministic without touching the caller's random state: the factory
seeds torch inside :func:`torch.random.fork_rng`. BatchNorm layers get random affine
parameters and running statistics (as a trained network has) so that an eval-mode test does
not run them as the identity that a fresh ``BatchNorm`` (mean 0, variance 1, weight 1, bias 0)
computes.
"""
from __future__ import annotations

import functools
from typing import Callable

import torch
from torch import nn

from .anomaly_model import AnomalyAutoencoder
from .kws_model import KWSDSCNN
from .lenet_model import LeNet
from .mobilenet_model import MobileNetV1
from .perceptron_model import Perceptron
from .resnet_model import ResNet
from .transformer_model import TransformerBlock

__all__ = [
    "MODEL_CASES",
    "build_model",
    "model_case",
    "AnomalyAutoencoder",
    "KWSDSCNN",
    "LeNet",
    "MobileNetV1",
    "Perceptron",
    "ResNet",
    "TransformerBlock",
]

#: batch size of every model case (BatchNorm in training mode needs more than one sample)
BATCH = 4
SEED = 0

_BATCHNORM = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)


def build_model(cls: Callable[[], nn.Module], seed: int = SEED) -> nn.Module:
    """``cls()`` initialised from ``seed``; the global RNG state is left as it was."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = cls()
        with torch.no_grad():
            for module in model.modules():
                if isinstance(module, _BATCHNORM):
                    module.weight.uniform_(0.5, 1.5)
                    module.bias.uniform_(-0.5, 0.5)
                    module.running_mean.uniform_(-0.5, 0.5)
                    module.running_var.uniform_(0.5, 1.5)
    return model


def _case(name: str, cls: Callable[[], nn.Module], input_size: tuple[int, ...],
          output_size: tuple[int, ...], test_backward: bool = True) -> dict:
    return {
        "name": name,
        "model": functools.partial(build_model, cls),
        "input_size": input_size,
        "output_size": output_size,
        "test_backward": test_backward,
    }


MODEL_CASES: list[dict] = [
    _case("Perceptron", Perceptron, (BATCH, 16), (BATCH, 4)),
    _case("LeNet", LeNet, (BATCH, 1, 32, 32), (BATCH, 10)),
    _case("ResNet", ResNet, (BATCH, 3, 16, 16), (BATCH, 10)),
    _case("MobileNetV1", MobileNetV1, (BATCH, 3, 32, 32), (BATCH, 10)),
    _case("KWS", KWSDSCNN, (BATCH, 1, 49, 10), (BATCH, 12)),
    _case("Anomaly", AnomalyAutoencoder, (BATCH, 640), (BATCH, 640)),
    _case("Transformer", TransformerBlock, (BATCH, 8, 16), (BATCH, 8, 16)),
]


def model_case(name: str) -> dict:
    """The entry of :data:`MODEL_CASES` called ``name`` (KeyError lists the known names)."""
    for case in MODEL_CASES:
        if case["name"] == name:
            return case
    raise KeyError(f"no model case {name!r}; known: {[c['name'] for c in MODEL_CASES]}")
