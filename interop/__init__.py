"""interop: does Eclipse Aidge compute what PyTorch computes, and how fast?

The package, by what it holds:

- :mod:`interop.bridge`: torch -> ONNX -> Aidge: :func:`wrap`, :class:`AidgeModule`, the
  tensor converters (:mod:`interop.bridge.tensors`), the Aidge runtime and the CUDA probe;
- :mod:`interop.equivalence`: deciding equivalence: the one comparator, the tolerance
  policy, :class:`ModelTester`, isolated runs, timing helpers;
- :mod:`interop.cases`: the case database: :class:`Case` / :class:`OperatorConfig` /
  :func:`build_cases`, the catalog, the expected-failure table, the generated operator
  suite (:func:`make_operator_fixture`);
- :mod:`interop.diagnostics`: first diverging layer, inference contract, invariances,
  golden files, hypothesis strategies;
- :mod:`interop.reporting`: categorising failures, the findings report, ``nox -s report``;
- :mod:`interop.zoo`: the torch modules under test (operators, reference networks);
- :mod:`interop.errors`: the exceptions (and the Aidge message patterns);
- :mod:`interop.tensor_converter`: the converters at their documented address;
- :mod:`interop.reading`, :mod:`interop.env`: the one reading policy for user files and the
  validation of the environment variables the suite reads.

The public names below are imported lazily, so ``import interop`` stays cheap and the
pytest plugin does not load torch or Aidge before the test session configures them.
"""
from __future__ import annotations

from ._lazy import lazy_attributes

__version__ = "0.1.0"

_EXPORTS = {
    # bridge
    "wrap": "bridge",
    "AidgeModule": "bridge",
    "AidgeSGD": "bridge",
    "ExportCppModule": "bridge",
    "torch_tensor_to_aidge": "bridge.tensors",
    "aidge_tensor_to_torch": "bridge.tensors",
    "convert_tensor": "bridge.tensors",
    # equivalence
    "ModelTester": "equivalence.tester",
    "EquivalenceError": "equivalence.tester",
    "assert_tensors_close": "oracle.compare",
    "compare_tensors": "oracle.compare",
    "Mismatch": "oracle.compare",
    "assert_outputs_close": "oracle.outputs",
    "assert_finite": "oracle.outputs",
    "compare_outputs": "oracle.outputs",
    "default_tolerances": "oracle.tolerance",
    "Tolerance": "oracle.tolerance",
    "run_isolated": "equivalence.isolation",
    "verify": "equivalence.verdict",
    "Verdict": "equivalence.verdict",
    # errors
    "InteropError": "errors",
    "AidgeError": "errors",
    "AidgeNotImplementedError": "errors",
    "UnsupportedOperatorError": "errors",
    "ExportError": "errors",
    "CudaUnavailableError": "errors",
    "BackwardNotApplicableError": "errors",
    "AidgeCrash": "errors",
    # diagnostics (inference-correctness toolkit)
    "check_inference_contract": "diagnostics",
    "ContractReport": "diagnostics",
    "ContractViolation": "diagnostics",
    "localize_divergence": "diagnostics",
    "first_divergence_hint": "diagnostics",
    "DivergenceReport": "diagnostics",
    "DivergenceError": "diagnostics",
    "assert_batch_invariant": "diagnostics",
    "assert_padding_invariant": "diagnostics",
    "assert_mask_invariant": "diagnostics",
    "assert_permutation_invariant": "diagnostics",
    "assert_permutation_equivariant": "diagnostics",
    "assert_invariant": "diagnostics",
    "assert_equivariant": "diagnostics",
    "InvarianceError": "diagnostics",
    # reporting (analyze_results.py)
    "categorize": "reporting",
    # the case database (tests/test_operators.py, benchmarks)
    "Case": "cases",
    "OperatorCase": "cases",
    "OperatorConfig": "cases",
    "build_cases": "cases",
    "ConfigError": "cases",
    "make_operator_fixture": "cases.suite",
}
_SUBMODULES = {"bridge", "equivalence", "cases", "diagnostics", "reporting", "zoo", "errors", "tensor_converter"}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_attributes(__name__, _EXPORTS, _SUBMODULES)

# The OpenMP default, only when the caller set no OMP_NUM_THREADS / OMP_WAIT_POLICY / GOMP_SPINCOUNT /
# OMP_DYNAMIC: dynamic teams around Aidge's calls only, and passive waiting if no OpenMP runtime is loaded yet
# (INTEROP_OPENMP_POLICY=keep: nothing): interop/threads_policy.py, docs/openmp-threads.md
from .threads_policy import apply_default as _apply_openmp_default  # noqa: E402

_apply_openmp_default()
