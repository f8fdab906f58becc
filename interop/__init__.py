"""interop: does Eclipse Aidge compute what PyTorch computes, and how fast?

Public API (imported lazily, so ``import interop`` stays cheap and the pytest plugin does
not load torch or Aidge before the test session configures them):

- bridge: :func:`wrap`, :class:`AidgeModule`
- comparator: :func:`assert_tensors_close`, :func:`assert_outputs_close`,
  :func:`assert_finite`, :func:`compare_tensors`, :func:`compare_outputs`,
  :func:`default_tolerances`
- tester: :class:`ModelTester`
- tensors: module :mod:`interop.tensor_converter` (``torch_tensor_to_aidge``,
  ``aidge_tensor_to_torch``, ``convert_tensor``)
- results analysis: :func:`categorize`; package :mod:`interop.reporting` (the report of
  ``analyze_results.py`` and ``nox -s report``)
"""
from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "wrap": "bridge",
    "AidgeModule": "bridge",
    "AidgeSGD": "bridge",
    "ModelTester": "tester",
    "EquivalenceError": "tester",
    "assert_tensors_close": "compare",
    "assert_outputs_close": "compare",
    "assert_finite": "compare",
    "compare_tensors": "compare",
    "compare_outputs": "compare",
    "default_tolerances": "compare",
    "Mismatch": "compare",
    "torch_tensor_to_aidge": "tensor_converter",
    "aidge_tensor_to_torch": "tensor_converter",
    "convert_tensor": "tensor_converter",
    "InteropError": "errors",
    "AidgeError": "errors",
    "AidgeNotImplementedError": "errors",
    "UnsupportedOperatorError": "errors",
    "ExportError": "errors",
    "CudaUnavailableError": "errors",
    # inference-correctness toolkit
    "check_inference_contract": "contract",
    "ContractReport": "contract",
    "ContractViolation": "contract",
    "localize_divergence": "divergence",
    "first_divergence_hint": "divergence",
    "DivergenceReport": "divergence",
    "DivergenceError": "divergence",
    "assert_batch_invariant": "invariance",
    "assert_padding_invariant": "invariance",
    "assert_mask_invariant": "invariance",
    "assert_permutation_invariant": "invariance",
    "assert_permutation_equivariant": "invariance",
    "assert_invariant": "invariance",
    "assert_equivariant": "invariance",
    "InvarianceError": "invariance",
    # results analysis (analyze_results.py)
    "categorize": "reporting.categories",
    # operator cases (tests/test_operators.py, benchmarks)
    "OperatorCase": "cases",
    "OperatorConfig": "cases",
    "build_cases": "cases",
    "ConfigError": "cases",
    "make_operator_fixture": "operator_suite",
    "run_isolated": "isolation",
    "AidgeCrash": "errors",
}
_SUBMODULES = {"bridge", "compare", "tester", "tensor_converter", "errors", "timing", "onnx_export",
               "aidge_runtime"}
_SUBMODULES |= {"contract", "divergence", "invariance", "golden", "strategies", "model_io"}
_SUBMODULES |= {"reporting"}
_SUBMODULES |= {"cases", "catalog", "operator_suite", "isolation"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'interop' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS) | _SUBMODULES)
