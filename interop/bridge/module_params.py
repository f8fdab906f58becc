"""The parameters and buffers of an :class:`~interop.bridge.module.AidgeModule`, mirrored on
Aidge's Producers: :class:`_MirroredState` (one of the classes the module is made of: a mirror
sharing the Producer's memory on CPU, a copy kept in sync on CUDA, ``reload_weights``) and
:func:`_register` (a tensor registered under its dotted torch name)."""
from __future__ import annotations

import numpy as np
import torch

from .runner import read_tensor, write_tensor


class _MirroredState:
    """:class:`~interop.bridge.module.AidgeModule`'s mirrored parameters and buffers (a mixin: the
    module's state is the module's own)."""

    def _sync_to_aidge(self) -> None:
        """CUDA only: push mirrored tensors that torch code changed into Aidge's Producers."""
        for prod, tensor in self._copied_tensors.items():
            if self._copied_state[prod] != tensor._version:
                write_tensor(self._runner.producer_tensors[prod], tensor)
                self._copied_state[prod] = tensor._version

    def _sync_from_aidge(self) -> None:
        """CUDA only: refresh mirrored tensors from Aidge's Producers (after an Aidge update)."""
        with torch.no_grad():
            for prod, tensor in self._copied_tensors.items():
                tensor.copy_(read_tensor(self._runner.producer_tensors[prod]))
                self._copied_state[prod] = tensor._version

    def _mirror(self, producer_name: str | None, source: torch.Tensor) -> torch.Tensor | None:
        if producer_name is None:
            return None
        aidge_tensor = self._runner.producer_tensors[producer_name]
        if tuple(int(d) for d in aidge_tensor.dims) != tuple(source.shape):
            return None
        if aidge_tensor.backend == "cpu":
            view = np.asarray(aidge_tensor)
            return torch.from_numpy(view) if view.dtype == np.float32 else None  # shares memory
        # CUDA: Aidge exposes no device pointer; a copy kept in sync by _sync_to_aidge /
        # _sync_from_aidge (see forward and AidgeSGD.step)
        self._copied_state[producer_name] = None
        return read_tensor(aidge_tensor)

    def reload_weights(self, source) -> None:
        """Copy the current parameters and buffers of ``source`` (the torch model, or a state
        dict) into this module and Aidge's Producers. The AidgeModule holds its own copy of
        the weights, taken at ``wrap()``: changing the torch model afterwards
        (``model.weight.mul_(10)``, ``load_state_dict``, an optimiser step) does not reach
        Aidge until this is called. Shapes must match; names the graph does not use are
        copied into :attr:`unmapped_state` only. KeyError for a name this module lacks."""
        state = source.state_dict() if isinstance(source, torch.nn.Module) else dict(source)
        own = dict(self.named_parameters())
        own.update(self.named_buffers())
        unknown = sorted(set(state) - set(own))
        if unknown:
            raise KeyError(f"reload_weights: {unknown} are not parameters or buffers of this AidgeModule")
        for name, value in state.items():
            if tuple(value.shape) != tuple(own[name].shape):
                raise ValueError(f"reload_weights: {name!r} has shape {tuple(value.shape)}, this module's "
                                 f"{tuple(own[name].shape)}")
        tensors = self._runner.producer_tensors
        with self._runner.lock, torch.no_grad():
            for prod, name in self._exported.initializer_to_state.items():
                if name in state and prod in tensors:
                    write_tensor(tensors[prod], state[name])  # Aidge's own copy, whatever its dtype
            for name, value in state.items():
                own[name].copy_(value)  # the torch mirrors (shared memory on CPU: the same bytes)
            if self._copied_tensors:
                for prod, tensor in self._copied_tensors.items():
                    self._copied_state[prod] = tensor._version


def _register(root: torch.nn.Module, dotted: str, tensor: torch.Tensor, buffer: bool = False) -> None:
    """Register ``tensor`` at ``dotted`` (``block.0.conv.weight``), creating containers."""
    *path, leaf = dotted.split(".")
    module = root
    for part in path:
        child = module._modules.get(part)
        if child is None:
            child = torch.nn.Module()
            module._modules[part] = child
        module = child
    if buffer:
        module.register_buffer(leaf, tensor)
    else:
        module.register_parameter(leaf, tensor)
