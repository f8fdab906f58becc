"""Diagnostics: is a model's behaviour sound, and where do two models part?

- :mod:`.contract` / :mod:`.contract_checks`: the inference contract
  (:func:`check_inference_contract`, its report, and the individual checks);
- :mod:`.divergence` / :mod:`.divergence_report`: the first diverging layer,
  torch <-> torch or torch <-> Aidge (:func:`localize_divergence`, :func:`first_divergence_hint`),
  and the report that says it;
- :mod:`.invariance`: metamorphic assertions (batch, padding, mask, permutation);
- :mod:`.golden`: golden files of the pytest plugin's ``golden`` fixture;
- :mod:`.strategies`: hypothesis strategies for edge-case tensors;
- :mod:`.model_io`: how the diagnostics call a model and walk its inputs and outputs.

Every public name of these modules is available here, imported lazily: importing
``interop.diagnostics`` loads neither torch nor hypothesis, nor Aidge.
"""
from __future__ import annotations

from .._lazy import lazy_attributes

_MODULES = {
    "contract": ("ContractReport", "ContractViolation", "check_inference_contract"),
    "contract_checks": ("CHECKS", "CheckResult", "parity_devices"),
    "divergence": ("localize_divergence", "first_divergence_hint"),
    "divergence_report": ("LayerDivergence", "DivergenceReport", "DivergenceError", "hint_line"),
    "invariance": ("InvarianceError", "assert_batch_invariant", "assert_padding_invariant", "assert_mask_invariant",
                   "assert_permutation_invariant", "assert_permutation_equivariant", "assert_invariant",
                   "assert_equivariant"),
    "golden": ("GoldenFile", "GoldenMismatch", "GoldenMissing", "golden_path", "flatten_outputs",
               "FORMAT_VERSION"),
    "strategies": ("tensors", "edge_values", "shapes", "SUPPORTED_DTYPES"),
    "model_io": ("call_model", "map_tensors", "iter_tensors", "clone_tensors", "batch_size",
                 "slice_batch", "describe_inputs"),
}
#: public name -> the module of this package that defines it
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_attributes(__name__, _EXPORTS, _MODULES)
