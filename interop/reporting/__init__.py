"""Results analysis: categorise failures, read pytest's output and the benchmark JSONL, build
the report that ``analyze_results.py`` and ``python -m interop.reporting.run`` (``nox -s
report``) print."""
from __future__ import annotations

from .report import (CATEGORY_TABLE, KINDS, BenchData, PytestRun, TestResult, UnreadableInput, build_report,
                     case_id, categorize, format_report, kind_of, operator_of, parse_benchmarks,
                     parse_pytest_output, read_text)

__all__ = [
    "CATEGORY_TABLE",
    "KINDS",
    "UnreadableInput",
    "TestResult",
    "PytestRun",
    "BenchData",
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
