"""How a failure becomes an expected-failure row: :func:`quote_of`, the Aidge operator, the phase,
the category, the quote without what changes from sample to sample, and the attribution of a
failed test's record. The tool that proposes the table's changes from a run, for every source,
grouping its failures into one row per reason, is :mod:`interop.reporting.triage_propose`
(``python -m interop.triage``), the one caller.

A record becomes a row only where its quote is found in its failure message, in a category the
table takes (an Aidge category, or an export error); otherwise :func:`quote_of` says why (a
string), and the proposal lists the failure with that reason, never silently dropped. Proposed
rows meet the table's own checks: the unit test that the categoriser gives each quote its row's
category, and the run-time guard.
"""
from __future__ import annotations

import re
from typing import Any

from ..cases.failure_table import EXPORT_CATEGORY  # the table's one category that is not Aidge's
from ..categories import kind_of
from ..import_gaps import onnx_ops_named
from .report import _finding, row_of  # the report's own reading of a failure: one place

__all__ = ["quote_of"]

# Aidge's missing-kernel error names the implementation by its mangled C++ type:
# ...for registrable object N5Aidge16OperatorImpl_cpuINS_12ReduceMin_OpE... -> ReduceMin
_REGISTRAR = re.compile(r'missing or invalid registrar key: "\[(?P<dtype>\w+)')
_REGISTRAR_OP = re.compile(r"OperatorImpl_\w+?INS_\d+(?P<op>\w+?)_Op")
_EMPTY_INPUT = re.compile(r"^input \d+ has shape \([^)]*\): (?=Aidge does not compute on empty tensors)")
_NEGATIVE_STEP = re.compile(r"(Step \(-\d+\) is negative, we must have End \()\d+\).*$")
#: the comparator's line of a mismatch: what the table quotes for a value category
_COMPARATOR = re.compile(r"Shapes do not match at [^:\n]+?(?=:)|Tensors are not close at [^!\n]+!")
_VALUE_CATEGORIES = ("outputs_differ", "output_shape_differs", "gradients_differ")
#: a node whose dims compile could not forward: the dims after the node's name change per case
_DIMS = re.compile(r"(Aidge cannot compute the output dims of node '[^']*').*$", re.S)
_CAPACITY = re.compile(r"(Number of elements to copy is above implementation current capacity) \(\d+B > \d+B\)")
_EXPORT_FAILED = re.compile(r"torch\.onnx\.export failed for \w+(?: \(\w+ route\)| on every route \([^)]*\))?: "
                            r"(?P<why>[^\n]+?)(?:\.\s|\.?$|\.\.\.)")


def quote_of(record: dict[str, Any], default_operator: str | None = None) -> tuple[str, str, str, str, str] | str:
    """``(Aidge operator, phase, category, quote, attribution)`` of a failed test's record, the
    way the table wants a row (the quote without what changes from sample to sample), or why
    it cannot become a row (a string)."""
    finding = _finding(row_of(record))
    category, phase, error = finding["category"], finding["phase"], (finding["error"] or "").strip()
    if kind_of(category) != "aidge" and category != EXPORT_CATEGORY:
        return f"category {category!r} is not a table category"
    operator = finding["aidge_operator"] or default_operator or record.get("operator") or "?"
    message = finding["message"]
    if category == EXPORT_CATEGORY:
        why = _EXPORT_FAILED.search(message)
        phase, error = "export", (why.group("why").strip() if why else error)
    if category in ("crash", "hang") and not error.startswith("crash: ") and f"crash: {error}" in message:
        error = f"crash: {error}"  # AidgeCrash's own words, as the table quotes them
    if category == "unsupported_operator":
        ops = sorted(set(onnx_ops_named(error)))
        # UnsupportedOperatorError lists its GenericOperator nodes in an order (and with node names)
        # that change from run to run (docs/aidge-notes.md): a row quotes one "(ONNX op X)",
        if ops:  # the alphabetically first ONNX op: in every run's list, whatever its order
            operator, error = ops[0], f"(ONNX op {ops[0]})"
    if category in _VALUE_CATEGORIES:
        line = _COMPARATOR.search(message)
        error = line.group(0) if line else error
    if not phase or not error:
        return f"no phase or quote found in the message ({category})"
    operator, error = _general(operator, error)
    if error not in message:
        return f"the quote {error!r} is not in the failure's message"
    # the report's attribution (attribution_of): never None for an Aidge or export category
    return operator, phase, category, error, finding["attribution"]


def _general(operator: str, error: str) -> tuple[str, str]:
    """(operator, quote) without what changes from sample to sample, so that one row covers
    every sample failing for one reason: a missing kernel is quoted up to its first input's
    dtype and filed under the Aidge operator its mangled type names; the shape of an empty
    input, the byte counts of a copy and the bounds of a negative-step slice are dropped."""
    registrar = _REGISTRAR.search(error)
    if registrar:
        named = _REGISTRAR_OP.search(error)
        return (named.group("op") if named else operator), registrar.group(0)
    error = _EMPTY_INPUT.sub("", error)
    error = _CAPACITY.sub(r"\1", error)
    error = _DIMS.sub(r"\1", error)
    error = _NEGATIVE_STEP.sub(r"\1", error)
    return operator, error
