"""The SGD step of each model :class:`~interop.equivalence.tester.ModelTester` compares: torch's
``torch.optim.SGD`` for a torch module, the attached Aidge optimiser for an AidgeModule."""
from __future__ import annotations

import torch


class _TorchSGD:
    def __init__(self, model, lr):
        params = [p for p in model.parameters() if p.requires_grad]
        self._opt = torch.optim.SGD(params, lr=lr) if params else None
        self._model = model

    def zero_grad(self, set_to_none=True):
        self._model.zero_grad(set_to_none=set_to_none)

    def step(self):
        if self._opt is not None:
            self._opt.step()


class _AidgeStepper:
    def __init__(self, module, lr):
        if module.optimizer is None:
            module.attach_optimizer(lr=lr)
        self._module = module

    def zero_grad(self, set_to_none=True):
        self._module.zero_grad(set_to_none=set_to_none)

    def step(self):
        self._module.optimizer_step()


def _stepper_for(model, lr):
    from ..bridge import AidgeModule

    if isinstance(model, AidgeModule):
        return _AidgeStepper(model, lr)
    return _TorchSGD(model, lr)
