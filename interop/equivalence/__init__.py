"""Deciding equivalence: the one comparator (:mod:`.compare`, :mod:`.outputs`), the
tolerance policy (:mod:`.tolerance`), :class:`~.tester.ModelTester` (forward, loss,
backward, SGD steps of two models side by side), running a check in an isolated child
process (:mod:`.isolation`) and timing helpers (:mod:`.timing`).

The comparator imports neither torch nor Aidge; the tester and the timing helpers import
torch when first used (``interop.equivalence.ModelTester`` is resolved lazily).
"""
from __future__ import annotations

from .._lazy import lazy_attributes
from ..oracle.compare import Mismatch, assert_tensors_close, compare_tensors, is_tensor_like, to_numpy
from ..oracle.outputs import assert_finite, assert_outputs_close, compare_outputs, max_errors
from ..oracle.tolerance import Tolerance, default_tolerances, tolerance_for

__all__ = ["Mismatch", "assert_tensors_close", "compare_tensors", "is_tensor_like", "to_numpy",
           "assert_finite", "assert_outputs_close", "compare_outputs", "max_errors",
           "Tolerance", "default_tolerances", "tolerance_for",
           "ModelTester", "EquivalenceError", "run_isolated", "verify", "Verdict"]

_LAZY = {"ModelTester": "tester", "EquivalenceError": "tester", "run_isolated": "isolation",
         "verify": "verdict", "Verdict": "verdict"}


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)
