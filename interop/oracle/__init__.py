"""The oracle: the one answer to "does Aidge compute what torch computes, and if not, who is wrong?"

The bottom layer every verdict calls (``wrap``'s first-call check, ``verify``, ``ModelTester``,
the suites, asv's precheck, ``check``, the reproducers); none keeps its own copy:

- :mod:`.tolerance`: the dtype-aware tolerance table and :class:`Tolerance` (a case's looser
  tolerance, with its written reason);
- :mod:`.compare` and :mod:`.outputs`: the one comparator (values, shapes, NaN positions,
  integers exactly) for tensors and nested outputs;
- :mod:`.precision`: the float64 tie-break (a difference within torch float32's own error is
  rounding);
- :mod:`.onnxruntime`: the one onnxruntime runner (the third reference);
- :mod:`.attribution`: the one attribution rule (precision, export, aidge, unknown);
- :mod:`.divergence`: the one first-diverging-node finder (forward against onnxruntime's values
  of the same graph, backward against a float64 reference of each node alone).

Imports neither torch nor Aidge at import time; never prints.
"""
from __future__ import annotations

from .compare import Mismatch, assert_tensors_close, compare_tensors, is_tensor_like, mismatch_figures, to_numpy
from .outputs import assert_finite, assert_outputs_close, compare_outputs, max_errors
from .precision import float_error, within_float32_error
from .tolerance import Tolerance, default_tolerances, tolerance_for

__all__ = ["Mismatch", "assert_tensors_close", "compare_tensors", "is_tensor_like", "mismatch_figures", "to_numpy",
           "assert_finite", "assert_outputs_close", "compare_outputs", "max_errors", "float_error",
           "within_float32_error", "Tolerance", "default_tolerances", "tolerance_for"]
