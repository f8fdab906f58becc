"""The tensor converters where the documented API puts them
(``aidge_interop_torch.tensor_converter``): :func:`torch_tensor_to_aidge` and
:func:`aidge_tensor_to_torch`. They live in :mod:`interop.bridge.tensors` (with
:func:`~interop.bridge.tensors.convert_tensor` and the dtype table); this module is their
documented address, kept so that code written from the documentation runs (issue 27: it had
disappeared in a rebuild). Importing it imports Aidge."""
from __future__ import annotations

from .bridge.tensors import aidge_tensor_to_torch, torch_tensor_to_aidge

__all__ = ["torch_tensor_to_aidge", "aidge_tensor_to_torch"]
