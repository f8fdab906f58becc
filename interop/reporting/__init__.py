"""Results analysis: what ``analyze_results.py`` and ``nox -s report`` print.

- :mod:`~interop.reporting.categories`: the failure categories (emoji, kind, meaning) and
  :func:`categorize`, which tells a failure's category from its message
- :mod:`~interop.reporting.pytest_output`: pytest's console output -> :class:`PytestRun`
- :mod:`~interop.reporting.benchmarks`: ModelTester's benchmark JSONL -> :class:`BenchData`
- :mod:`~interop.reporting.asv_results`: asv's Aidge/torch ratios of one commit ->
  :class:`AsvRatios` (the report's figure for the cases asv benchmarked)
- :mod:`~interop.reporting.inputs`: :func:`read_text`, :class:`UnreadableInput`
- :mod:`~interop.reporting.report`: :func:`build_report` (a JSON-able dict) and
  :func:`format_report` (its text)
- :mod:`~interop.reporting.run`: ``python -m interop.reporting.run [pytest args]``, one
  findings run in a directory of its own (not imported here)
"""
from __future__ import annotations

from .asv_results import AsvRatios, load_asv_ratios
from .benchmarks import BenchData, parse_benchmarks
from .categories import CATEGORY_TABLE, KINDS, categorize, kind_of
from .inputs import UnreadableInput, read_text
from .pytest_output import PytestRun, TestResult, case_id, operator_of, parse_pytest_output
from .report import build_report, format_report

__all__ = [
    "CATEGORY_TABLE",
    "KINDS",
    "UnreadableInput",
    "TestResult",
    "PytestRun",
    "BenchData",
    "AsvRatios",
    "load_asv_ratios",
    "categorize",
    "kind_of",
    "case_id",
    "operator_of",
    "parse_pytest_output",
    "parse_benchmarks",
    "read_text",
    "build_report",
    "format_report",
]
