"""pytest's console text, read for ``analyze_results.py``, the documented script (a saved pytest
output of any verbosity, from a file or a pipe: the documented API's "Results analysis"). The suite's own
runs are read from their records (:mod:`interop.records`), never from their console text.

- :mod:`~interop.console.pytest_output`: pytest's console output -> :class:`PytestRun` (one
  :class:`TestResult` per test, pytest's totals, its skip lines, what says the run is incomplete)
- :mod:`~interop.console.rows`: those results as rows of the records' shape
  (:func:`rows_from_console`), handed to the report (:func:`interop.reporting.build_report`) as
  a :class:`~interop.reporting.report.TextRun` (:func:`text_run`) the way a run's records are
"""
from __future__ import annotations

from .pytest_output import PytestRun, TestResult, parse_pytest_output
from .rows import console_skip_lines, rows_from_console, text_run

__all__ = ["PytestRun", "TestResult", "parse_pytest_output", "rows_from_console", "console_skip_lines", "text_run"]
